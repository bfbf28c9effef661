"""assert_close as torch.testing's (torch/testing/_comparison.py, BSD-3-Clause, PyTorch contributors):
the same pairs (None, bool, number, tensor-like), the same default tolerances per dtype and the same
messages, character for character. ampgrad has no complex, quantized, sparse or meta tensors, so
those branches are gone."""
from __future__ import annotations

import cmath
import collections.abc
import contextlib
import warnings
from collections.abc import Callable, Collection, Sequence
from typing import Any, NoReturn

import numpy as np

from .. import _C
from .._C import Tensor
from .._creation import as_tensor, tensor as _tensor

__all__ = ["assert_close", "assert_allclose"]



class ErrorMeta(Exception):
    """Internal testing exception that carries error metadata."""

    def __init__(self, type: type[Exception], msg: str, *, id: tuple[Any, ...] = ()) -> None:
        super().__init__("Internal error of ampgrad.testing: raise ErrorMeta.to_error() for user-facing errors.")
        self.type = type
        self.msg = msg
        self.id = id

    def to_error(self, msg: str | Callable[[str], str] | None = None) -> Exception:
        if not isinstance(msg, str):
            generated_msg = self.msg
            if self.id:
                generated_msg += f"\n\nThe failure occurred for item {''.join(str([item]) for item in self.id)}"
            msg = msg(generated_msg) if callable(msg) else generated_msg
        return self.type(msg)


# {dtype: (rtol, atol)}, torch's table
_DTYPE_PRECISIONS = {
    _C.float16: (0.001, 1e-5),
    _C.bfloat16: (0.016, 1e-5),
    _C.float32: (1.3e-6, 1e-5),
    _C.float64: (1e-7, 1e-7),
}


def default_tolerances(*inputs: Tensor | _C.dtype,
                       dtype_precisions: dict[_C.dtype, tuple[float, float]] | None = None) -> tuple[float, float]:
    """The loosest (rtol, atol) of the inputs' dtypes (torch.testing's table; 0 for other dtypes)."""
    dtypes = []
    for input in inputs:
        if isinstance(input, Tensor):
            dtypes.append(input.dtype)
        elif isinstance(input, _C.dtype):
            dtypes.append(input)
        else:
            raise TypeError(f"Expected a torch.Tensor or a torch.dtype, but got {type(input)} instead.")
    dtype_precisions = dtype_precisions or _DTYPE_PRECISIONS
    rtols, atols = zip(*[dtype_precisions.get(dtype, (0.0, 0.0)) for dtype in dtypes])
    return max(rtols), max(atols)


def get_tolerances(*inputs: Tensor | _C.dtype, rtol: float | None, atol: float | None,
                   id: tuple[Any, ...] = ()) -> tuple[float, float]:
    if (rtol is None) ^ (atol is None):
        raise ErrorMeta(ValueError, f"Both 'rtol' and 'atol' must be either specified or omitted, "
                                    f"but got no {'rtol' if rtol is None else 'atol'}.", id=id)
    elif rtol is not None and atol is not None:
        return rtol, atol
    return default_tolerances(*inputs)


def _make_mismatch_msg(*, default_identifier: str, identifier: str | Callable[[str], str] | None = None,
                       extra: str | None = None, abs_diff: float, abs_diff_idx: int | tuple[int, ...] | None = None,
                       atol: float, rel_diff: float, rel_diff_idx: int | tuple[int, ...] | None = None,
                       rtol: float) -> str:
    equality = rtol == 0 and atol == 0

    def make_diff_msg(*, type: str, diff: float, idx: int | tuple[int, ...] | None, tol: float) -> str:
        if idx is None:
            msg = f"{type.title()} difference: {diff}"
        else:
            msg = f"Greatest {type} difference: {diff} at index {idx}"
        if not equality:
            msg += f" (up to {tol} allowed)"
        return msg + "\n"

    if identifier is None:
        identifier = default_identifier
    elif callable(identifier):
        identifier = identifier(default_identifier)
    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    msg += make_diff_msg(type="absolute", diff=abs_diff, idx=abs_diff_idx, tol=atol)
    msg += make_diff_msg(type="relative", diff=rel_diff, idx=rel_diff_idx, tol=rtol)
    return msg.strip()


def make_scalar_mismatch_msg(actual: bool | int | float | complex, expected: bool | int | float | complex, *,
                             rtol: float, atol: float, identifier: str | Callable[[str], str] | None = None) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _make_mismatch_msg(default_identifier="Scalars", identifier=identifier,
                              extra=f"Expected {expected} but got {actual}.", abs_diff=abs_diff, atol=atol,
                              rel_diff=rel_diff, rtol=rtol)


def make_tensor_mismatch_msg(actual: Tensor, expected: Tensor, matches: Tensor, *, rtol: float, atol: float,
                             identifier: str | Callable[[str], str] | None = None) -> str:
    def unravel_flat_index(flat_index: int) -> tuple[int, ...]:
        if not matches.shape:
            return ()
        inverse_index = []
        for size in matches.shape[::-1]:
            div, mod = divmod(flat_index, size)
            flat_index = div
            inverse_index.append(mod)
        return tuple(inverse_index[::-1])

    number_of_elements = matches.numel()
    total_mismatches = number_of_elements - int(matches.sum())
    extra = (f"Mismatched elements: {total_mismatches} / {number_of_elements} "
             f"({total_mismatches / number_of_elements:.1%})")
    actual_flat = actual.flatten()
    expected_flat = expected.flatten()
    matches_flat = matches.flatten()
    if not actual.dtype.is_floating_point:
        actual_flat = actual_flat.to(_C.int64)
        expected_flat = expected_flat.to(_C.int64)
    abs_diff = (actual_flat - expected_flat).abs()
    abs_diff[matches_flat] = 0  # only mismatches count for the greatest difference
    max_abs_diff, max_abs_diff_flat_idx = abs_diff.max(0)
    rel_diff = abs_diff / expected_flat.abs()
    rel_diff[matches_flat] = 0
    max_rel_diff, max_rel_diff_flat_idx = rel_diff.max(0)
    return _make_mismatch_msg(default_identifier="Tensor-likes", identifier=identifier, extra=extra,
                              abs_diff=max_abs_diff.item(), abs_diff_idx=unravel_flat_index(int(max_abs_diff_flat_idx)),
                              atol=atol, rel_diff=max_rel_diff.item(),
                              rel_diff_idx=unravel_flat_index(int(max_rel_diff_flat_idx)), rtol=rtol)


class UnsupportedInputs(Exception):
    """Raised while constructing a Pair that does not handle the inputs: the next pair type is tried."""


class Pair:
    """A pair of inputs to compare; compare() raises ErrorMeta on a mismatch (torch.testing's Pair)."""

    def __init__(self, actual: Any, expected: Any, *, id: tuple[Any, ...] = (), **unknown_parameters: Any) -> None:
        self.actual = actual
        self.expected = expected
        self.id = id
        self._unknown_parameters = unknown_parameters

    @staticmethod
    def _inputs_not_supported() -> NoReturn:
        raise UnsupportedInputs

    @staticmethod
    def _check_inputs_isinstance(*inputs: Any, cls: type | tuple[type, ...]) -> None:
        if not all(isinstance(input, cls) for input in inputs):
            Pair._inputs_not_supported()

    def _fail(self, type: type[Exception], msg: str, *, id: tuple[Any, ...] = ()) -> NoReturn:
        raise ErrorMeta(type, msg, id=self.id if not id and hasattr(self, "id") else id)

    def compare(self) -> None:
        raise NotImplementedError

    def extra_repr(self) -> Sequence[str | tuple[str, Any]]:
        return []

    def __repr__(self) -> str:
        head = f"{type(self).__name__}("
        body = [f"    {name}={value!s}," for name, value in [
            ("id", self.id), ("actual", self.actual), ("expected", self.expected),
            *[(extra, getattr(self, extra)) if isinstance(extra, str) else extra for extra in self.extra_repr()]]]
        return "\n".join((head, *body, ")"))


class ObjectPair(Pair):
    """Any inputs, compared with ==; the fallback."""

    def compare(self) -> None:
        try:
            equal = self.actual == self.expected
        except Exception as error:
            raise ErrorMeta(ValueError, f"{self.actual} == {self.expected} failed with:\n{error}.", id=self.id) from error
        if not equal:
            self._fail(AssertionError, f"{self.actual} != {self.expected}")


class NonePair(Pair):
    def __init__(self, actual: Any, expected: Any, **other_parameters: Any) -> None:
        if not (actual is None or expected is None):
            self._inputs_not_supported()
        super().__init__(actual, expected, **other_parameters)

    def compare(self) -> None:
        if not (self.actual is None and self.expected is None):
            self._fail(AssertionError, f"None mismatch: {self.actual} is not {self.expected}")


class BooleanPair(Pair):
    """bool and numpy.bool_ inputs."""

    def __init__(self, actual: Any, expected: Any, *, id: tuple[Any, ...] = (), **other_parameters: Any) -> None:
        actual, expected = self._process_inputs(actual, expected, id=id)
        super().__init__(actual, expected, **other_parameters)

    @property
    def _supported_types(self) -> tuple[type, ...]:
        return (bool, np.bool_)

    def _process_inputs(self, actual: Any, expected: Any, *, id: tuple[Any, ...]) -> tuple[bool, bool]:
        self._check_inputs_isinstance(actual, expected, cls=self._supported_types)
        return self._to_bool(actual, id=id), self._to_bool(expected, id=id)

    def _to_bool(self, bool_like: Any, *, id: tuple[Any, ...]) -> bool:
        if isinstance(bool_like, bool):
            return bool_like
        if isinstance(bool_like, np.bool_):
            return bool_like.item()
        raise ErrorMeta(TypeError, f"Unknown boolean type {type(bool_like)}.", id=id)

    def compare(self) -> None:
        if self.actual is not self.expected:
            self._fail(AssertionError, f"Booleans mismatch: {self.actual} is not {self.expected}")


class NumberPair(Pair):
    """int, float, complex and numpy.number inputs; int compares as int64, float as float64."""

    _TYPE_TO_DTYPE = {int: _C.int64, float: _C.float64, complex: _C.float64}
    _NUMBER_TYPES = tuple(_TYPE_TO_DTYPE.keys())

    def __init__(self, actual: Any, expected: Any, *, id: tuple[Any, ...] = (), rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_dtype: bool = False,
                 **other_parameters: Any) -> None:
        actual, expected = self._process_inputs(actual, expected, id=id)
        super().__init__(actual, expected, id=id, **other_parameters)
        self.rtol, self.atol = get_tolerances(*[self._TYPE_TO_DTYPE[type(input)] for input in (actual, expected)],
                                              rtol=rtol, atol=atol, id=id)
        self.equal_nan = equal_nan
        self.check_dtype = check_dtype

    @property
    def _supported_types(self) -> tuple[type, ...]:
        return (*self._NUMBER_TYPES, np.number)

    def _process_inputs(self, actual: Any, expected: Any, *, id: tuple[Any, ...]) -> tuple[Any, Any]:
        self._check_inputs_isinstance(actual, expected, cls=self._supported_types)
        return self._to_number(actual, id=id), self._to_number(expected, id=id)

    def _to_number(self, number_like: Any, *, id: tuple[Any, ...]) -> int | float | complex:
        if isinstance(number_like, np.number):
            return number_like.item()
        if isinstance(number_like, self._NUMBER_TYPES):
            return number_like
        raise ErrorMeta(TypeError, f"Unknown number type {type(number_like)}.", id=id)

    def compare(self) -> None:
        if self.check_dtype and type(self.actual) is not type(self.expected):
            self._fail(AssertionError, f"The (d)types do not match: {type(self.actual)} != {type(self.expected)}.")
        if self.actual == self.expected:
            return
        if self.equal_nan and cmath.isnan(self.actual) and cmath.isnan(self.expected):
            return
        abs_diff = abs(self.actual - self.expected)
        tolerance = self.atol + self.rtol * abs(self.expected)
        if cmath.isfinite(abs_diff) and abs_diff <= tolerance:
            return
        self._fail(AssertionError, make_scalar_mismatch_msg(self.actual, self.expected, rtol=self.rtol, atol=self.atol))

    def extra_repr(self) -> Sequence[str]:
        return ("rtol", "atol", "equal_nan", "check_dtype")


class TensorLikePair(Pair):
    """Tensors and anything as_tensor accepts (NumPy arrays, nested lists), of directly related types."""

    def __init__(self, actual: Any, expected: Any, *, id: tuple[Any, ...] = (), allow_subclasses: bool = True,
                 rtol: float | None = None, atol: float | None = None, equal_nan: bool = False,
                 check_device: bool = True, check_dtype: bool = True, check_layout: bool = True,
                 check_stride: bool = False, **other_parameters: Any):
        actual, expected = self._process_inputs(actual, expected, id=id, allow_subclasses=allow_subclasses)
        super().__init__(actual, expected, id=id, **other_parameters)
        self.rtol, self.atol = get_tolerances(actual, expected, rtol=rtol, atol=atol, id=self.id)
        self.equal_nan = equal_nan
        self.check_device = check_device
        self.check_dtype = check_dtype
        self.check_layout = check_layout
        self.check_stride = check_stride

    def _process_inputs(self, actual: Any, expected: Any, *, id: tuple[Any, ...],
                        allow_subclasses: bool) -> tuple[Tensor, Tensor]:
        directly_related = isinstance(actual, type(expected)) or isinstance(expected, type(actual))
        if not directly_related:
            self._inputs_not_supported()
        if not allow_subclasses and type(actual) is not type(expected):
            self._inputs_not_supported()
        return self._to_tensor(actual), self._to_tensor(expected)

    def _to_tensor(self, tensor_like: Any) -> Tensor:
        if isinstance(tensor_like, Tensor):
            return tensor_like
        try:
            return as_tensor(tensor_like)
        except Exception:
            self._inputs_not_supported()

    def compare(self) -> None:
        actual, expected = self.actual, self.expected
        self._compare_attributes(actual, expected)
        actual, expected = self._equalize_attributes(actual, expected)
        self._compare_values(actual, expected)

    def _compare_attributes(self, actual: Tensor, expected: Tensor) -> None:
        def raise_mismatch_error(attribute_name: str, actual_value: Any, expected_value: Any) -> NoReturn:
            self._fail(AssertionError,
                       f"The values for attribute '{attribute_name}' do not match: {actual_value} != {expected_value}.")

        if actual.shape != expected.shape:
            raise_mismatch_error("shape", actual.shape, expected.shape)
        if self.check_stride and actual.stride() != expected.stride():
            raise_mismatch_error("stride()", actual.stride(), expected.stride())
        if self.check_device and actual.device != expected.device:
            raise_mismatch_error("device", actual.device, expected.device)
        if self.check_dtype and actual.dtype != expected.dtype:
            raise_mismatch_error("dtype", actual.dtype, expected.dtype)

    def _equalize_attributes(self, actual: Tensor, expected: Tensor) -> tuple[Tensor, Tensor]:
        if actual.device != expected.device:
            actual = actual.cpu()
            expected = expected.cpu()
        if actual.dtype != expected.dtype:
            dtype = _C.promote_types(actual.dtype, expected.dtype)
            actual = actual.to(dtype)
            expected = expected.to(dtype)
        return actual, expected

    def _compare_values(self, actual: Tensor, expected: Tensor) -> None:
        self._compare_regular_values_close(actual, expected, rtol=self.rtol, atol=self.atol, equal_nan=self.equal_nan)

    def _compare_regular_values_close(self, actual: Tensor, expected: Tensor, *, rtol: float, atol: float,
                                      equal_nan: bool, identifier: str | Callable[[str], str] | None = None) -> None:
        actual, expected = actual.detach(), expected.detach()
        matches = actual.isclose(expected, rtol=rtol, atol=atol, equal_nan=equal_nan)
        if bool(matches.all()):
            return
        if actual.shape == ():
            msg = make_scalar_mismatch_msg(actual.item(), expected.item(), rtol=rtol, atol=atol, identifier=identifier)
        else:
            msg = make_tensor_mismatch_msg(actual, expected, matches, rtol=rtol, atol=atol, identifier=identifier)
        self._fail(AssertionError, msg)

    def extra_repr(self) -> Sequence[str]:
        return ("rtol", "atol", "equal_nan", "check_device", "check_dtype", "check_layout", "check_stride")


def originate_pairs(actual: Any, expected: Any, *, pair_types: Sequence[type[Pair]],
                    sequence_types: tuple[type, ...] = (collections.abc.Sequence,),
                    mapping_types: tuple[type, ...] = (collections.abc.Mapping,), id: tuple[Any, ...] = (),
                    **options: Any) -> list[Pair]:
    """Pairs from the inputs, recursing through (nested) sequences and mappings."""
    # str is excluded: "a"[0][0]... would recurse forever
    if (isinstance(actual, sequence_types) and not isinstance(actual, str)
            and isinstance(expected, sequence_types) and not isinstance(expected, str)):
        actual_len = len(actual)  # type: ignore[arg-type]
        expected_len = len(expected)  # type: ignore[arg-type]
        if actual_len != expected_len:
            raise ErrorMeta(AssertionError, f"The length of the sequences mismatch: {actual_len} != {expected_len}",
                            id=id)
        pairs = []
        for idx in range(actual_len):
            pairs.extend(originate_pairs(actual[idx], expected[idx], pair_types=pair_types,  # type: ignore[index]
                                         sequence_types=sequence_types, mapping_types=mapping_types,
                                         id=(*id, idx), **options))
        return pairs
    elif isinstance(actual, mapping_types) and isinstance(expected, mapping_types):
        actual_keys = set(actual.keys())  # type: ignore[attr-defined]
        expected_keys = set(expected.keys())  # type: ignore[attr-defined]
        if actual_keys != expected_keys:
            missing_keys = expected_keys - actual_keys
            additional_keys = actual_keys - expected_keys
            raise ErrorMeta(AssertionError, (f"The keys of the mappings do not match:\n"
                                             f"Missing keys in the actual mapping: {sorted(missing_keys)}\n"
                                             f"Additional keys in the actual mapping: {sorted(additional_keys)}"),
                            id=id)
        keys: Collection = actual_keys
        with contextlib.suppress(Exception):  # deterministic order when the keys sort
            keys = sorted(keys)
        pairs = []
        for key in keys:
            pairs.extend(originate_pairs(actual[key], expected[key], pair_types=pair_types,  # type: ignore[index]
                                         sequence_types=sequence_types, mapping_types=mapping_types,
                                         id=(*id, key), **options))
        return pairs
    for pair_type in pair_types:
        try:
            return [pair_type(actual, expected, id=id, **options)]
        except UnsupportedInputs:
            continue
        except ErrorMeta:
            raise
        except Exception as error:
            raise RuntimeError(
                f"Originating a {pair_type.__name__}() at item {''.join(str([item]) for item in id)} with\n\n"
                f"{type(actual).__name__}(): {actual}\n\n"
                f"and\n\n"
                f"{type(expected).__name__}(): {expected}\n\n"
                f"resulted in the unexpected exception above.") from error
    raise ErrorMeta(TypeError, f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}.",
                    id=id)


def not_close_error_metas(actual: Any, expected: Any, *, pair_types: Sequence[type[Pair]] = (ObjectPair,),
                          sequence_types: tuple[type, ...] = (collections.abc.Sequence,),
                          mapping_types: tuple[type, ...] = (collections.abc.Mapping,),
                          **options: Any) -> list[ErrorMeta]:
    __tracebackhide__ = True
    try:
        pairs = originate_pairs(actual, expected, pair_types=pair_types, sequence_types=sequence_types,
                                mapping_types=mapping_types, **options)
    except ErrorMeta as error_meta:
        raise error_meta.to_error() from None
    error_metas: list[ErrorMeta] = []
    for pair in pairs:
        try:
            pair.compare()
        except ErrorMeta as error_meta:
            error_metas.append(error_meta)
        except Exception as error:
            raise RuntimeError(f"Comparing\n\n{pair}\n\nresulted in the unexpected exception above.") from error
    return error_metas


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_device: bool = True,
                 check_dtype: bool = True, check_layout: bool = True, check_stride: bool = False,
                 msg: str | Callable[[str], str] | None = None) -> None:
    r"""Asserts that ``actual`` and ``expected`` are close, as torch.testing.assert_close.

    Tensors (or anything ``as_tensor`` accepts, such as NumPy arrays) are close when they have the same
    shape, device (``check_device``), dtype (``check_dtype``) and stride (``check_stride``, off by default)
    and ``|actual - expected| <= atol + rtol * |expected|`` elementwise; ``inf`` only matches itself and
    ``nan`` matches ``nan`` only with ``equal_nan=True``. Python and NumPy scalars, ``None``, booleans and
    (nested) sequences and mappings of all these are compared item by item.

    Default ``(rtol, atol)`` by dtype (the looser of the two inputs'): float16 ``(1e-3, 1e-5)``,
    bfloat16 ``(1.6e-2, 1e-5)``, float32 ``(1.3e-6, 1e-5)``, float64 ``(1e-7, 1e-7)``, other ``(0, 0)``.
    Give both ``rtol`` and ``atol`` or neither.

    Raises:
        AssertionError: on a mismatch, with torch's report (mismatched elements, the greatest absolute and
            relative differences and their indices); ``msg`` replaces it (a callable receives it).
        ValueError: if only one of ``rtol`` and ``atol`` is given.
        TypeError: if no comparison handles the inputs' types.

    Example::

        >>> ampgrad.testing.assert_close(ampgrad.tensor([1.0, 2.0]), ampgrad.tensor([1.0, 2.0 + 1e-7]))
    """
    __tracebackhide__ = True
    error_metas = not_close_error_metas(actual, expected, pair_types=(NonePair, BooleanPair, NumberPair, TensorLikePair),
                                        allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
                                        check_device=check_device, check_dtype=check_dtype, check_layout=check_layout,
                                        check_stride=check_stride, msg=msg)
    if error_metas:
        raise error_metas[0].to_error(msg)


def assert_allclose(actual: Any, expected: Any, rtol: float | None = None, atol: float | None = None,
                    equal_nan: bool = True, msg: str = "") -> None:
    """Deprecated (as in torch since 1.12): use assert_close."""
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future release. "
                  "Please use `torch.testing.assert_close()` instead. "
                  "You can find detailed upgrade instructions in https://github.com/pytorch/pytorch/issues/61844.",
                  FutureWarning, stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = _tensor(actual)
    if not isinstance(expected, Tensor):
        expected = _tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = default_tolerances(actual, expected, dtype_precisions={
            _C.float16: (1e-3, 1e-3), _C.float32: (1e-4, 1e-5), _C.float64: (1e-5, 1e-8)})
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True, check_dtype=False,
                 check_stride=False, msg=msg or None)
