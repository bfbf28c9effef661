"""make_tensor as torch.testing's (torch/testing/_creation.py, BSD-3-Clause, PyTorch contributors): the
same default ranges per dtype, clamping to the dtype's finite range and errors. ampgrad has no complex,
float8 or uint16/32/64 dtypes."""
from __future__ import annotations

import collections.abc
import functools
import math
import warnings
from typing import cast

from .. import _C
from .._C import Tensor
from .._creation import empty, randint
from .._dtype_info import finfo, iinfo

__all__ = ["make_tensor"]

_INTEGRAL_TYPES = [_C.uint8, _C.int8, _C.int16, _C.int32, _C.int64]
_FLOATING_TYPES = [_C.float16, _C.bfloat16, _C.float32, _C.float64]
_BOOLEAN_OR_INTEGRAL_TYPES = [_C.bool, *_INTEGRAL_TYPES]


def _uniform_random_(t: Tensor, low: float, high: float) -> Tensor:
    # uniform_ needs high - low <= the dtype's max: scale the range before and after
    if high - low >= finfo(t.dtype).max:
        return t.uniform_(low / 2, high / 2).mul_(2)
    return t.uniform_(low, high)


def make_tensor(*shape: int | collections.abc.Sequence[int], dtype: _C.dtype, device: str | _C.device,
                low: float | None = None, high: float | None = None, requires_grad: bool = False,
                noncontiguous: bool = False, exclude_zero: bool = False, memory_format=None) -> Tensor:
    r"""A tensor of the given shape, dtype and device filled with values drawn uniformly from ``[low, high)``,
    as torch.testing.make_tensor. Defaults: bool ``[0, 2)``, uint8 ``[0, 10)``, signed integers ``[-9, 10)``,
    floating ``[-9, 9)``; a bound outside the dtype's finite range is clamped to it. ``noncontiguous=True``
    returns a strided view (when there are 2+ elements); ``exclude_zero=True`` replaces zeros by 1 (integers)
    or the dtype's ``tiny``.

    Raises:
        ValueError: ``requires_grad=True`` for a bool or integer dtype; ``low >= high``; a NaN bound;
            both ``noncontiguous`` and ``memory_format``.
        TypeError: a dtype make_tensor does not support.
    """

    def modify_low_high(low: float | None, high: float | None, *, lowest_inclusive: float, highest_exclusive: float,
                        default_low: float, default_high: float) -> tuple[float, float]:
        def clamp(a: float, lo: float, hi: float) -> float:
            return min(max(a, lo), hi)

        low = low if low is not None else default_low
        high = high if high is not None else default_high
        if any(isinstance(value, float) and math.isnan(value) for value in [low, high]):
            raise ValueError(f"`low` and `high` cannot be NaN, but got {low=} and {high=}")
        elif low == high and dtype in _FLOATING_TYPES:
            warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or complex types "
                          "is deprecated since 2.1 and will be removed in 2.3. "
                          "Use `torch.full(...)` instead.", FutureWarning, stacklevel=3)
        elif low >= high:
            raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
        elif high < lowest_inclusive or low >= highest_exclusive:
            raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), "
                             f"but {dtype} only supports [{lowest_inclusive}, {highest_exclusive})")
        low = clamp(low, lowest_inclusive, highest_exclusive)
        high = clamp(high, lowest_inclusive, highest_exclusive)
        if dtype in _BOOLEAN_OR_INTEGRAL_TYPES:
            # low is ceiled to stay inside the interval; randint's high is exclusive, so it is ceiled too
            return math.ceil(low), math.ceil(high)
        return low, high

    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]  # type: ignore[assignment]
    shape = cast(tuple[int, ...], tuple(shape))

    if noncontiguous and memory_format is not None:
        raise ValueError(f"The parameters `noncontiguous` and `memory_format` are mutually exclusive, "
                         f"but got {noncontiguous=} and {memory_format=}")
    if requires_grad and dtype in _BOOLEAN_OR_INTEGRAL_TYPES:
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral dtypes, but got {dtype=}")

    noncontiguous = noncontiguous and functools.reduce(lambda x, y: x * y, shape, 1) > 1
    if noncontiguous:
        # double the last dim, so that the non-contiguous view holds non-identical values
        shape = cast(tuple[int, ...], (*shape[:-1], 2 * shape[-1]))

    if dtype is _C.bool:
        lo, hi = modify_low_high(low, high, lowest_inclusive=0, highest_exclusive=2, default_low=0, default_high=2)
        result = randint(int(lo), int(hi), shape, device=device, dtype=dtype)
    elif dtype in _BOOLEAN_OR_INTEGRAL_TYPES:
        lo, hi = modify_low_high(low, high, lowest_inclusive=iinfo(dtype).min,
                                 # randint cannot sample int64's max (its bound converts to int64)
                                 highest_exclusive=iinfo(dtype).max + (1 if dtype is not _C.int64 else 0),
                                 default_low=-9, default_high=10)
        result = randint(int(lo), int(hi), shape, device=device, dtype=dtype)
    elif dtype in _FLOATING_TYPES:
        lo, hi = modify_low_high(low, high, lowest_inclusive=finfo(dtype).min, highest_exclusive=finfo(dtype).max,
                                 default_low=-9, default_high=9)
        result = empty(shape, device=device, dtype=dtype)
        _uniform_random_(result, lo, hi)
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by torch.testing.make_tensor()."
                        " To request support, file an issue at: https://github.com/pytorch/pytorch/issues")

    if noncontiguous:
        result = result[..., 1::2]  # offset by 1 to also catch offsetting issues
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if dtype in _BOOLEAN_OR_INTEGRAL_TYPES else finfo(dtype).tiny
    if dtype in _FLOATING_TYPES:
        result.requires_grad = requires_grad
    return result
