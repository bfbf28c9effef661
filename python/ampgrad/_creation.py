"""Creation and random functions: tensor(), as_tensor(), full / zeros / ones / empty and their
*_like forms, arange, linspace, eye, the seeds and the random factories.

A leaf of the package's import layering (tests/test_import_layers.py): it imports only _C, so every
other module can import it at module level. At call time these functions use Tensor methods that
ampgrad._tensor installs (tolist, all); the package imports _tensor before any of them can run."""
import builtins
import functools
import inspect
import math
import numbers
import random as _random

import numpy as np

from ._dtype_info import _check_layout
from . import _C
from . import _argparse
from ._out import warn_resized

Tensor = _C.Tensor

_NP_TO_DT = {np.dtype(np.bool_): _C.bool, np.dtype(np.uint8): _C.uint8, np.dtype(np.int8): _C.int8,
             np.dtype(np.int16): _C.int16, np.dtype(np.int32): _C.int32, np.dtype(np.int64): _C.int64,
             np.dtype(np.float16): _C.float16, np.dtype(np.float32): _C.float32, np.dtype(np.float64): _C.float64,
             np.dtype(np.uint16): _C.uint16, np.dtype(np.uint32): _C.uint32, np.dtype(np.uint64): _C.uint64}


def _contig(a):
    # np.ascontiguousarray would turn a 0-d array into 1-d.
    return np.asarray(a, order="C")


def _device(device):
    if device is None:
        return _C.device("cpu")
    if isinstance(device, _C.device):
        return device
    if isinstance(device, numbers.Integral):
        return _C.device("cuda", device)
    return _C.device(device)


def _check_device(dev):
    if dev.type == "cuda" and not _C._cuda_is_available():
        raise AssertionError("Torch not compiled with CUDA enabled")
    return dev


def _size(size):
    if len(size) == 1 and not isinstance(size[0], numbers.Integral):
        size = size[0]
        if isinstance(size, Tensor):
            size = size.tolist()
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = s.item()
        if not isinstance(s, numbers.Integral) or isinstance(s, builtins.bool):
            raise TypeError(f"expected a sequence of integers or a single integer, got '{s!r}'")
        out.append(int(s))
    return out


def _finish(t, requires_grad):
    if requires_grad:
        if not t.is_floating_point():
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t.requires_grad_(True)
    return t


# Note [out= of factories]: torch.zeros(..., out=t) and friends write into `out` (its dtype and device
# when none is given; a given dtype must equal out's), resizing it when the shape differs (with torch's
# warning for a non-empty out), and return it. out= with a tensor that requires grad is refused.
def _dtype_name(dt):
    """c10's name of a dtype ("Float", "Long"), as torch's messages print it."""
    return _C._scalar_type_name(dt) if isinstance(dt, _C.dtype) else str(dt)


def _cpp_type_name(dt):
    """The C++ type name torch's caffe2::TypeMeta prints for a dtype ("got input1: c10::BFloat16")."""
    return _C._cpp_type_name(dt) if isinstance(dt, _C.dtype) else str(dt)


def _outable(fn):
    takes = inspect.signature(fn).parameters

    @functools.wraps(fn)
    def wrapper(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        if not isinstance(out, Tensor):
            raise TypeError(f"{fn.__name__}(): argument 'out' must be Tensor, not {type(out).__name__}")
        if out.requires_grad and _C.is_grad_enabled():
            raise RuntimeError(f"aten::{fn.__name__}(): functions with out=... arguments don't support automatic "
                               "differentiation, but one of the arguments requires grad.")
        if "dtype" in takes:
            if kwargs.get("dtype") is not None and kwargs["dtype"] != out.dtype:
                raise RuntimeError(f"dtype {_dtype_name(kwargs['dtype'])} does not match dtype of out parameter "
                                   f"({_dtype_name(out.dtype)})")
            kwargs["dtype"] = out.dtype
        if "device" in takes and kwargs.get("device") is None:
            kwargs["device"] = out.device
        t = fn(*args, **kwargs)
        if tuple(out.shape) != tuple(t.shape):
            if out.numel():
                warn_resized(out.shape, t.shape, stacklevel=2)
            out.data = t.to(out.dtype)
        else:
            out.copy_(t)  # (out does not require grad here, or grad mode is off)
        return out
    return wrapper



# ---- tensor(), as_tensor(), from data
def _is_sequence(x):
    """torch's PySequence_Check on data: lists and tuples, and any other object whose type indexes and
    has a length (collections.deque, range, user sequences), but not str/bytes, dicts or mappings."""
    if isinstance(x, (list, tuple)):
        return True
    if isinstance(x, (str, bytes, dict, Tensor, np.ndarray)):
        return False
    tp = type(x)
    return hasattr(tp, "__getitem__") and hasattr(tp, "__len__") and not hasattr(tp, "keys")


def _infer_dtype(data):
    """torch's inference for Python data: the promotion of every leaf's type, where a Python float
    is the default dtype, an int int64, a bool bool, and a tensor or NumPy scalar its own dtype."""
    out = None
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, Tensor):
            t = x.dtype
        elif isinstance(x, (builtins.bool, np.bool_)):
            t = _C.bool
        elif isinstance(x, np.generic):
            t = _NP_TO_DT.get(np.dtype(type(x)), _C.float64)
        elif isinstance(x, numbers.Integral):
            t = _C.int64
        elif isinstance(x, numbers.Real):
            t = _C.get_default_dtype()
        elif isinstance(x, numbers.Complex):
            raise TypeError("ampgrad does not support complex numbers")
        elif isinstance(x, str):
            if x is data:
                raise TypeError("new(): invalid data type 'str'")
            raise ValueError("too many dimensions 'str'")
        elif isinstance(x, np.ndarray):
            t = _NP_TO_DT.get(x.dtype, _C.float64)
        elif _is_sequence(x):
            stack.extend(x)
            continue
        else:
            raise RuntimeError(f"Could not infer dtype of {type(x).__name__}")
        out = t if out is None else _C.promote_types(out, t)
    return out or _C.get_default_dtype()


def _check_store(data, dtype):
    """torch's tensor(data, dtype=...) path, which infers nothing: the shape from the chain of first elements,
    then every element stored as dtype's C type: a sequence of another length is a ValueError, a leaf where a
    sequence should be a TypeError "not a sequence", and a leaf that is not a number (None, an object) the
    conversion's TypeError. Data holding tensors or arrays, or strs in the first chain, is left to the caller."""
    sizes = []
    x = data
    while _is_sequence(x):
        sizes.append(len(x))
        if not len(x):
            break
        x = x[0]
    if isinstance(x, (str, Tensor, np.ndarray)) or 0 in sizes:
        return   # (torch stores nothing into an empty tensor: no element is looked at)
    integral = not (dtype.is_floating_point or dtype.is_complex)

    def walk(x, dim):
        if isinstance(x, (Tensor, np.ndarray)):
            return
        if dim < len(sizes):
            if not _is_sequence(x):
                raise TypeError("not a sequence")
            if len(x) != sizes[dim]:
                raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} (got {len(x)})")
            for e in x:
                walk(e, dim + 1)
        elif not isinstance(x, (numbers.Number, np.generic)):
            if integral:
                raise TypeError(f"'{type(x).__name__}' object cannot be interpreted as an integer")
            raise TypeError(f"must be real number, not {type(x).__name__}")

    walk(data, 0)


def _to_nested(data):
    if isinstance(data, Tensor):
        return data.tolist()
    if _is_sequence(data):
        return [_to_nested(x) for x in data]
    return data


def _check_ragged(data, dim=0):
    """Raises torch's error for the first ragged level of nested sequences."""
    if not isinstance(data, (list, tuple)) or not data or not isinstance(data[0], (list, tuple)):
        return
    n = len(data[0])
    for x in data:
        if not isinstance(x, (list, tuple)) or len(x) != n:
            got = len(x) if isinstance(x, (list, tuple)) else 0
            raise ValueError(f"expected sequence of length {n} at dim {dim + 1} (got {got})")
    for x in data:
        _check_ragged(x, dim + 1)
# Note [Checked stores]: tensor(data, dtype=<an integer dtype>) stores each number as torch's
# checked_convert does: a float must lie in [lowest, max], an int too, except that an int may wrap into an
# unsigned dtype down to -max (two's complement); int64 takes any int64, uint64 takes ints in [0, 2**64) only
# (OverflowError) and no floats (TypeError).
_CHECKED_INTS = ("uint8", "int8", "int16", "int32", "int64", "uint16", "uint32")


def _leaves(data):
    if _is_sequence(data):
        for x in data:
            yield from _leaves(x)
    else:
        yield data


def _check_int_store(nested, arr, dtype):
    name = str(dtype).split(".")[-1]
    if name == "uint64":
        for x in _leaves(nested):
            if isinstance(x, (builtins.float, np.floating)):
                raise TypeError("an integer is required")
            if isinstance(x, (builtins.int, np.integer)) and not isinstance(x, builtins.bool):
                if x < 0:
                    raise OverflowError("can't convert negative int to unsigned")
                if x >= 2 ** 64:
                    raise OverflowError("int too big to convert")
        return np.array(nested, dtype=np.uint64)
    if name not in _CHECKED_INTS or arr.size == 0 or arr.dtype.kind not in "iuf":
        return arr
    info = np.iinfo(name)
    lo, hi = int(info.min), int(info.max)
    int_lo = -hi if lo == 0 else lo  # an int wraps into an unsigned dtype down to -max
    if arr.dtype.kind == "f":
        if ((arr >= lo) & (arr <= hi)).all():
            return arr
    elif name == "int64" or ((arr >= int_lo) & (arr <= hi)).all():
        return arr
    for x in _leaves(nested):  # a float array may mix ints and floats: each leaf by its own type
        if isinstance(x, (builtins.float, np.floating)):
            bad = not lo <= x <= hi
        else:
            bad = isinstance(x, (builtins.int, np.integer)) and not int_lo <= x <= hi
        if bad:
            raise RuntimeError(f"value cannot be converted to type {name} without overflow")
    return arr


def _has_big_int(data):
    """Whether nested sequences hold a Python int outside int64."""
    if _is_sequence(data):
        return builtins.any(_has_big_int(x) for x in data)
    return type(data) is int and not -2 ** 63 <= data < 2 ** 63


def _contiguous(arr):
    # not np.ascontiguousarray: it turns a 0-d array into shape (1,)
    return arr if arr.flags.c_contiguous else np.array(arr, order="C")


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False) -> "_C.Tensor":
    """Copies `data` (nested sequences, NumPy arrays, numbers, tensors) into a new tensor."""
    dev = _check_device(_device(device))
    if isinstance(data, Tensor):
        t = data.detach().clone()
    elif isinstance(data, np.ndarray) or (hasattr(data, "__array__") and not isinstance(data, (list, tuple))):
        arr = np.array(data, copy=True)
        if arr.dtype not in _NP_TO_DT:
            if arr.dtype.kind not in "biuf":
                raise TypeError(f"can't convert np.ndarray of type numpy.{arr.dtype}. The only supported types are: "
                                "float64, float32, float16, int64, int32, int16, int8, uint64, "
                                "uint32, uint16, uint8, and bool.")
            arr = arr.astype(np.int64 if arr.dtype.kind in "iu" else np.float64)
        t = _C.from_numpy(_contiguous(arr))
    else:
        if dtype is not None:
            _check_store(data, dtype)
        inferred = _infer_dtype(data)
        nested = _to_nested(data)
        try:
            arr = np.array(nested)
        except ValueError:
            _check_ragged(nested)
            raise
        if dtype == _C.uint64:  # Note [Checked stores]: its own unpacking (OverflowError, TypeError)
            arr = _check_int_store(nested, arr, dtype)
        elif (arr.dtype == object or arr.dtype == np.uint64) and _has_big_int(nested):
            # a Python int beyond int64: NumPy made uint64 (which would wrap) or objects
            if not (dtype if dtype is not None else inferred).is_floating_point:
                raise ValueError("Overflow when unpacking long long")
            arr = np.array(nested, dtype=np.float64)
        if dtype is not None and not dtype.is_floating_point and dtype not in (_C.bool, _C.uint64) and \
                arr.dtype != object:
            arr = _check_int_store(nested, arr, dtype)
        if arr.dtype == object:
            _check_ragged(nested)
            raise ValueError("expected sequence of equal-length sequences (ragged nested sequence)")
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
        if arr.dtype != np.uint64:
            arr = arr.astype(np.float64 if arr.dtype.kind == "f" else np.int64 if arr.dtype.kind in "iu" else np.bool_)
        # straight to the requested dtype: going through the inferred one first would round
        # tensor(0.3, dtype=float64) to float32
        t = _C.from_numpy(_contiguous(arr)).to(dtype if dtype is not None else inferred)
    if dtype is not None:
        t = t.to(dtype)
    return _finish(_C._to(t, dev, None, False), requires_grad)


def as_tensor(data, dtype=None, device=None) -> "_C.Tensor":
    """Shares memory with `data` when possible (a tensor or a NumPy array of a matching dtype)."""
    if isinstance(data, Tensor):
        return data.to(device=_device(device) if device is not None else data.device, dtype=dtype or data.dtype)
    if isinstance(data, np.ndarray) and data.dtype in _NP_TO_DT and (device is None or _device(device).type == "cpu"):
        t = _C.from_numpy(data)
        return t if dtype is None else t.to(dtype)
    return tensor(data, dtype=dtype, device=device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None) -> "_C.Tensor":
    """torch.asarray: obj itself (a tensor) or its memory (a NumPy array) where dtype and device allow and copy is
    not True; copy=False refuses to copy (ValueError). requires_grad=None leaves the result's flag as it is."""
    for name, v, ok, want in (("dtype", dtype, dtype is None or isinstance(dtype, _C.dtype), "torch.dtype"),
                              ("device", device, device is None or isinstance(device, (str, _C.device)) or
                               isinstance(device, numbers.Integral) and not isinstance(device, builtins.bool),
                               "torch.device"),
                              ("copy", copy, copy is None or isinstance(copy, builtins.bool), "bool"),
                              ("requires_grad", requires_grad, requires_grad is None or
                               isinstance(requires_grad, builtins.bool), "bool")):
        if not ok:
            raise TypeError(f"asarray(): argument '{name}' must be {want}, not {type(v).__name__}")
    dev = None if device is None else _device(device)
    src = obj if isinstance(obj, Tensor) else (obj if isinstance(obj, np.ndarray) and obj.dtype in _NP_TO_DT
                                               else None)
    if src is not None:
        src_dtype = src.dtype if isinstance(src, Tensor) else _NP_TO_DT[src.dtype]
        src_dev = src.device if isinstance(src, Tensor) else _device("cpu")
        if copy is False and dtype is not None and dtype != src_dtype:
            raise ValueError(f"can't alias tensor with dtype '{_C._scalar_type_name(src_dtype)}' into dtype "
                             f"'{_C._scalar_type_name(dtype)}'.")
        if copy is False and dev is not None and dev != src_dev:
            raise ValueError(f"can't alias tensor from device '{src_dev}' to '{dev}'.")
        t = as_tensor(obj, dtype=dtype, device=dev) if not copy else \
            tensor(obj.detach() if isinstance(obj, Tensor) else obj, dtype=dtype, device=dev)
    else:
        if copy is False:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        t = tensor(obj, dtype=dtype, device=dev)
    if requires_grad is not None:
        t.requires_grad_(requires_grad)
    return t


def scalar_tensor(s, dtype=None, device=None, requires_grad=False):
    return full((), s, dtype=dtype or _C.get_default_dtype(), device=device, requires_grad=requires_grad)


# ---- factories
def _fill_dtype(value, dtype):
    if dtype is not None:
        return dtype
    if isinstance(value, (builtins.bool, np.bool_)):
        return _C.bool
    if isinstance(value, numbers.Integral):
        return _C.int64
    return _C.get_default_dtype()


@_outable
def full(size, fill_value, *, dtype=None, device=None, requires_grad=False, out=None, layout=None, pin_memory=False) -> "_C.Tensor":
    if layout is not None:
        _check_layout(layout)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    t = _C._full(_size((size,) if isinstance(size, numbers.Integral) else (size,)), fill_value,
                 _fill_dtype(fill_value, dtype), _check_device(_device(device)))
    return _finish(t, requires_grad)


def _size_kw(name, shape, size):
    """torch's factories take the size positionally (varargs or one sequence) or as the keyword `size`."""
    if size is None:
        return shape
    if shape:
        raise TypeError(f"{name}() got multiple values for argument 'size'")
    return (size,)


@_outable
def zeros(*shape, size=None, dtype=None, device=None, requires_grad=False, out=None, layout=None, pin_memory=False) -> "_C.Tensor":
    if layout is not None:
        _check_layout(layout)
    size = _size_kw("zeros", shape, size)
    return _finish(_C._full(_size(size), 0, dtype or _C.get_default_dtype(), _check_device(_device(device))), requires_grad)


@_outable
def ones(*shape, size=None, dtype=None, device=None, requires_grad=False, out=None, layout=None, pin_memory=False) -> "_C.Tensor":
    if layout is not None:
        _check_layout(layout)
    size = _size_kw("ones", shape, size)
    return _finish(_C._full(_size(size), 1, dtype or _C.get_default_dtype(), _check_device(_device(device))), requires_grad)


@_outable
def empty(*shape, size=None, dtype=None, device=None, requires_grad=False, out=None, layout=None, pin_memory=False, memory_format=None) -> "_C.Tensor":
    if layout is not None:
        _check_layout(layout)
    size = _size_kw("empty", shape, size)
    return _finish(_C._empty(_size(size), dtype or _C.get_default_dtype(), _check_device(_device(device))), requires_grad)


def _check_tensor_arg(name, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")


def _like(fn):
    def like(input, *, dtype=None, device=None, requires_grad=False, layout=None, memory_format=None):
        if layout is not None:
            _check_layout(layout)
        _check_tensor_arg(like.__name__, input)
        return fn(*input.shape, dtype=dtype or input.dtype, device=device or input.device, requires_grad=requires_grad)
    like.__name__ = fn.__name__ + "_like"
    return like


zeros_like = _like(zeros)
ones_like = _like(ones)
empty_like = _like(empty)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None, memory_format=None) -> "_C.Tensor":
    if layout is not None:
        _check_layout(layout)
    _check_tensor_arg("full_like", input)
    return full(input.shape, fill_value, dtype=dtype or input.dtype, device=device or input.device, requires_grad=requires_grad)


@_outable
def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False, out=None, layout=None) -> "_C.Tensor":
    if layout is not None:
        _check_layout(layout)
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    for v in vals:  # torch converts integer bounds to int64 first
        if isinstance(v, numbers.Integral) and not isinstance(v, builtins.bool) and not -2**63 <= v < 2**63:
            if not -2**64 < v < 2**64:
                raise OverflowError("int too big to convert")
            raise RuntimeError("value cannot be converted to type int64_t without overflow")
    if dtype is None:
        dtype = _C.get_default_dtype() if builtins.any(isinstance(v, builtins.float) for v in vals) else _C.int64
    if dtype == _C.bool:   # torch's kernel dispatches on the dtype before its step check
        raise NotImplementedError('"arange_cpu" not implemented for \'Bool\'')
    if vals[2] == 0:
        raise RuntimeError("step must be nonzero")
    t = _C._arange(builtins.float(vals[0]), builtins.float(vals[1]), builtins.float(vals[2]), dtype, _check_device(_device(device)))
    return _finish(t, requires_grad)


def range(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """Deprecated torch.range: like arange but includes `end`. torch's checks in its order: the parser (`end` is
    required; Scalars beyond int64 / uint64), the dtype (no bool), the bounds converted to the dtype's accumulate
    type (int64 for integers: truncated, refused when not finite), a nonzero step, finite bounds, the step's sign."""
    if end is None or builtins.any(isinstance(v, numbers.Integral) and not isinstance(v, builtins.bool)
                                   and not -2 ** 63 <= v < 2 ** 64 for v in (start, end, step)):
        err = _argparse.parse_error("fn", "range", (start, end, step) if end is not None else (start,),
                                    {} if dtype is None else {"dtype": dtype})
        if err is not None:
            raise err
    dt = dtype or _C.get_default_dtype()
    if dt == _C.bool:
        raise NotImplementedError('"range_cpu" not implemented for \'Bool\'')
    if not dt.is_floating_point:
        vals = [builtins.float(v) for v in (start, end, step)]
        if not builtins.all(math.isfinite(v) for v in vals):
            raise RuntimeError("value cannot be converted to type int64_t without overflow")
        start, end, step = (int(v) for v in vals)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {builtins.float(start):g} -> {builtins.float(end):g}")
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = int(math.floor((end - start) / step)) + 1
    t = arange(0, builtins.max(n, 0), dtype=_C.float64, device=device) * step + start
    return _finish(t.to(dtype or _C.get_default_dtype()), requires_grad)


@_outable
def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False, out=None, layout=None) -> "_C.Tensor":
    if layout is not None:
        _check_layout(layout)
    if not isinstance(steps, numbers.Integral):
        raise TypeError("linspace(): argument 'steps' must be int")
    t = _C._linspace(builtins.float(start), builtins.float(end), int(steps), dtype or _C.get_default_dtype(), _check_device(_device(device)))
    return _finish(t, requires_grad)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    t = _C.pow(base, linspace(start, end, steps, dtype=_C.float64, device=device)).to(dtype or _C.get_default_dtype())
    return _finish(t, requires_grad)


@_outable
def eye(n, m=None, *, dtype=None, device=None, requires_grad=False, out=None, layout=None) -> "_C.Tensor":
    if layout is not None:
        _check_layout(layout)
    t = _C._eye(int(n), int(n if m is None else m), dtype or _C.get_default_dtype(), _check_device(_device(device)))
    return _finish(t, requires_grad)


# ---- random
def _normalize_seed(seed):
    seed = int(seed)
    if seed < -0x8000_0000_0000_0000 or seed > 0xFFFF_FFFF_FFFF_FFFF:
        raise ValueError(f"Overflow when unpacking long long, seed value {seed} is out of range")
    if seed < 0:
        seed = 0xFFFF_FFFF_FFFF_FFFF + seed + 1
    return seed


class Generator:
    """A CPU random generator (torch.Generator): its own mt19937 stream, torch's numbers for the same
    seed, its state in torch's 5056-byte layout (get_state / set_state exchange states with torch).
    Passed as `generator=` to a random function, it is the calling thread's generator for that call
    (Note [Generator objects]). A CUDA generator is a handle on that device's stream."""

    def __init__(self, device="cpu"):
        self.device = _device(device)
        self._impl = _C._CpuGenerator() if self.device.type == "cpu" else None

    @classmethod
    def _default_cpu(cls):
        g = cls.__new__(cls)
        g.device = _device("cpu")
        g._impl = _C._cpu_default_generator()
        return g

    def manual_seed(self, seed):
        seed = _normalize_seed(seed)
        if self._impl is None:
            _C._cuda_manual_seed_all(seed)
        else:
            self._impl.manual_seed(seed)
        return self

    def initial_seed(self):
        return _C.initial_seed() if self._impl is None else self._impl.initial_seed()

    def seed(self):
        s = _random.getrandbits(63)
        self.manual_seed(s)
        return s

    def get_state(self):
        if self._impl is None:
            raise NotImplementedError("Generator.get_state: use ampgrad.cuda.get_rng_state for CUDA")
        return _C.from_numpy(np.frombuffer(self._impl.get_state(), dtype=np.uint8).copy())

    def set_state(self, new_state):
        if not isinstance(new_state, Tensor) or new_state.dtype != _C.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        if self._impl is None:
            raise NotImplementedError("Generator.set_state: use ampgrad.cuda.set_rng_state for CUDA")
        self._impl.set_state(new_state.contiguous().numpy().tobytes())
        return self

    def __getstate__(self):
        return {"device": str(self.device), "state": None if self._impl is None else self._impl.get_state()}

    def __setstate__(self, st):
        self.__init__(st["device"])
        if st["state"] is not None:
            self._impl.set_state(st["state"])

    def __repr__(self):
        return f"<ampgrad._C.Generator object at {hex(id(self))}>"


class _use_generator:
    """`generator` is the calling thread's CPU generator inside the block (None: no change)."""
    __slots__ = ("g", "prev")

    def __init__(self, generator, fn="random"):
        if generator is not None and not isinstance(generator, Generator):
            raise TypeError(f"{fn}(): argument 'generator' must be torch.Generator, not {type(generator).__name__}")
        self.g = generator if generator is not None and generator._impl is not None else None

    def __enter__(self):
        if self.g is not None:
            self.prev = self.g._impl._push()
        return self

    def __exit__(self, *exc):
        if self.g is not None:
            _C._cpu_generator_pop(self.prev)
        return False


default_generator = Generator._default_cpu()


def manual_seed(seed):
    """Seeds the CPU generator (and CUDA's, when present); returns the default generator."""
    seed = _normalize_seed(seed)
    _C.manual_seed_cpu(seed)
    if _C._cuda_is_available():  # ampgrad.cuda.manual_seed_all(seed); seed is already in [0, 2**64)
        _C._cuda_manual_seed_all(seed)
    return default_generator


def seed():
    s = _random.getrandbits(63)
    manual_seed(s)
    return s


initial_seed = _C.initial_seed


def get_rng_state():
    """The default CPU generator's state (torch's 5056-byte ByteTensor)."""
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


@_outable
def rand(*shape, size=None, generator=None, dtype=None, device=None, requires_grad=False, out=None, layout=None, pin_memory=False) -> "_C.Tensor":
    if layout is not None:
        _check_layout(layout)
    size = _size_kw("rand", shape, size)
    t = empty(*size, dtype=dtype, device=device)
    with _use_generator(generator, "rand"):
        t.uniform_(0, 1)
    return _finish(t, requires_grad)


@_outable
def randn(*shape, size=None, generator=None, dtype=None, device=None, requires_grad=False, out=None, layout=None, pin_memory=False) -> "_C.Tensor":
    if layout is not None:
        _check_layout(layout)
    size = _size_kw("randn", shape, size)
    t = empty(*size, dtype=dtype, device=device)
    with _use_generator(generator, "randn"):
        t.normal_(0, 1)
    return _finish(t, requires_grad)


def rand_like(input, *, dtype=None, device=None, requires_grad=False, layout=None, memory_format=None) -> "_C.Tensor":
    if layout is not None:
        _check_layout(layout)
    _check_tensor_arg("rand_like", input)
    return rand(*input.shape, dtype=dtype or input.dtype, device=device or input.device, requires_grad=requires_grad)


def randn_like(input, *, dtype=None, device=None, requires_grad=False, layout=None, memory_format=None) -> "_C.Tensor":
    if layout is not None:
        _check_layout(layout)
    _check_tensor_arg("randn_like", input)
    return randn(*input.shape, dtype=dtype or input.dtype, device=device or input.device, requires_grad=requires_grad)


@_outable
def randint(*args, size=None, generator=None, dtype=None, device=None, requires_grad=False, out=None, layout=None) -> "_C.Tensor":
    if layout is not None:
        _check_layout(layout)
    args = list(args)
    # a trailing tuple or list (an ampgrad.Size is a tuple) is the size
    if size is None and args and isinstance(args[-1], (tuple, list)):
        size = args.pop()
    if len(args) == 1:
        low, high = 0, args[0]
    elif len(args) == 2:
        low, high = args
    else:
        raise TypeError("randint() received an invalid combination of arguments")
    if size is None:
        raise TypeError("randint() missing required argument 'size'")
    with _use_generator(generator, "randint"):
        t = _C._randint(int(low), int(high), _size((size,)), dtype or _C.int64, _check_device(_device(device)))
    return _finish(t, requires_grad)


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False):
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input.shape), dtype=dtype or input.dtype, device=device or input.device,
                   requires_grad=requires_grad)


@_outable
def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False, out=None, layout=None) -> "_C.Tensor":
    if layout is not None:
        _check_layout(layout)
    if _argparse._is_bool(n):   # the parser's int: no bool
        err = _argparse.parse_error("fn", "randperm", (n,), {})
        if err is not None:
            raise err
    with _use_generator(generator, "randperm"):
        return _finish(_C._randperm(int(n), dtype or _C.int64, _check_device(_device(device))), requires_grad)


@_outable
def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None, device=None, requires_grad=False):
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        ref = mean if isinstance(mean, Tensor) else std
        shape = _C.broadcast_shapes_(tuple(mean.shape) if isinstance(mean, Tensor) else (),
                                     tuple(std.shape) if isinstance(std, Tensor) else ())
        if isinstance(std, Tensor):
            if std.numel() and not builtins.bool((std >= 0).all()):
                raise RuntimeError("normal expects all elements of std >= 0.0")
        elif not std >= 0.0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
        z = randn(*shape, dtype=ref.dtype, device=ref.device, generator=generator)
        m = mean.detach() if isinstance(mean, Tensor) else mean
        s = std.detach() if isinstance(std, Tensor) else std
        out = z * s + m
        if _C.is_grad_enabled():
            # torch's NormalBackward: the sample keeps the history of mean and std, with zero gradients
            for t in (mean, std):
                if isinstance(t, Tensor) and t.requires_grad:
                    out = _C.where(out.new_ones(out.shape, dtype=_C.bool), out, t)
        return out
    if size is None:
        raise TypeError("normal() missing required argument 'size'")
    if not isinstance(size, (tuple, list)):
        err = _argparse.parse_error("fn", "normal", (mean, std, size), {})   # size is a tuple of ints, never an int
        if err is not None:
            raise err
    t = empty(*_size((size,)), dtype=dtype, device=device)
    with _use_generator(generator, "normal"):
        t.normal_(mean, std)
    return _finish(t, requires_grad)


def _check_bernoulli_p(p):
    if isinstance(p, Tensor):
        if p.numel() and not builtins.bool(((p >= 0) & (p <= 1)).all()):
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    elif not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")


# torch.bernoulli's Python bindings: aten's bernoulli.Tensor (a Tensor p) is not among them; the parser takes a
# 0-d Tensor without grad for the float p.
_BERNOULLI_SIG = ('Tensor input, *, Any generator=', 'Tensor input, float p, *, Any generator=')


def bernoulli(input, p=None, *, generator=None):
    if isinstance(p, Tensor):
        if p.dim() != 0 or p.requires_grad:
            raise _argparse.sig_parse_error("bernoulli", _BERNOULLI_SIG, (input, p), {"generator": generator})
        p = p.item()
    if isinstance(input, Tensor) and input.numel():
        # the kernel's dtype dispatch comes before its range check
        if p is None and not input.is_floating_point():
            raise NotImplementedError(f'"bernoulli_tensor_cpu_p_" not implemented for \'{_dtype_name(input.dtype)}\'')
    _check_bernoulli_p(input if p is None else p)
    prob = input if p is None else p
    wide = not isinstance(prob, Tensor) or prob.dtype == _C.float64  # Note [Bernoulli draws]
    u = rand(*input.shape, dtype=_C.float64 if wide else _C.float32, device=input.device, generator=generator)
    out = (u < (input if p is None else p)).to(input.dtype)
    if p is None and input.requires_grad and _C.is_grad_enabled():
        out = out + input * 0  # torch's BernoulliBackward0: the sample is differentiable with a zero gradient
        _C._set_grad_fn_name(out, "BernoulliBackward0")
    return out


@_outable
def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    with _use_generator(generator, "multinomial"):
        return input.multinomial(num_samples, replacement)
