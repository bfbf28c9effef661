"""torch's `out=` keyword for the functions ampgrad binds or composes without one (Note [out= overloads] in
csrc/bindings/ops.cpp). `_out_ops.OUT_OPS` lists, per namespace, the functions whose torch binding takes
out=. install() gives each that lacks it one: a pybind11 function gets an extra overload (calls without
out= resolve as before, at no cost), a Python function a thin wrapper.

write(fn, out, args, kwargs) runs fn without out= and writes the result into out as torch does:
- an op that records autograd history, or an out that requires grad, refuses out= ("functions with out=...
  arguments don't support automatic differentiation"), as torch's autograd kernels do;
- the result must be castable to out's dtype (torch.can_cast: no float -> integer, no complex -> real,
  nothing -> bool but bool), else torch's "result type Float can't be cast to the desired output type Long";
- out must be on the result's device;
- out of another shape is resized, with torch's deprecation warning when it had elements;
- ops with several results take a tuple of tensors and return the same named tuple type holding them.
The result is computed before out is touched, so out may alias an input (torch.mul(a, b, out=a)), and a
failed call leaves out as it was."""
import collections
import functools
import inspect
import re
import warnings

from . import _C
from . import return_types
from ._out_ops import OUT_OPS

def warn_resized(old_shape, shape, stacklevel):
    """torch's deprecation warning for an out= tensor with elements that is resized (also the factories')."""
    warnings.warn(
        f"An output with one or more elements was resized since it had shape {list(old_shape)}, which does "
        f"not match the required output shape {list(shape)}. This behavior is deprecated, and in a future "
        "PyTorch release outputs will not be resized unless they have zero elements. You can explicitly "
        "reuse an out tensor t by resizing it, inplace, to zero elements with t.resize_(0).",
        UserWarning, stacklevel=stacklevel + 1)


def _write_one(name, out, value):
    if not isinstance(out, _C.Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if not isinstance(value, _C.Tensor):
        raise TypeError(f"{name}(): out= is not supported for a result of type {type(value).__name__}")
    if value.requires_grad:
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    if out.device != value.device:
        raise RuntimeError(f"Expected out tensor to have device {value.device}, but got {out.device} instead")
    if not _C.can_cast(value.dtype, out.dtype):
        raise RuntimeError(f"result type {_C._scalar_type_name(value.dtype)} can't be cast to the desired output "
                           f"type {_C._scalar_type_name(out.dtype)}")
    if out.requires_grad and _C.is_grad_enabled():
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    shape = tuple(value.shape)
    if tuple(out.shape) != shape:
        if out.numel() != 0:
            warn_resized(out.shape, shape, stacklevel=4)
        out.resize_(shape)
    out.copy_(value)
    return out


def write(fn, out, args, kwargs):
    name = getattr(fn, "__name__", "op")
    value = fn(*args, **kwargs)
    if out is None:
        return value
    if isinstance(value, tuple):
        if not isinstance(out, (tuple, list)) or not all(isinstance(o, _C.Tensor) for o in out):
            raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not {type(out).__name__}")
        if len(out) != len(value):
            raise TypeError(f"{name}(): argument 'out' must be tuple of {len(value)} Tensors, got {len(out)}")
        for v in value:  # check all before writing any
            if isinstance(v, _C.Tensor) and v.requires_grad:
                raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                                   "differentiation, but one of the arguments requires grad.")
        for o, v in zip(out, value):
            _write_one(name, o, v)
        return _out_type(value)(*out) if hasattr(value, "_fields") else type(value)(out)
    if isinstance(out, (tuple, list)):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    return _write_one(name, out, value)


def _out_type(value):
    """torch.return_types.<name>_out: the named tuple an out= call returns (fields as <name>'s)."""
    name = type(value).__name__ + "_out"
    t = getattr(return_types, name, None)
    if t is None:
        t = collections.namedtuple(name, value._fields)
        t.__module__ = "ampgrad.return_types"
        setattr(return_types, name, t)
    return t


def _takes_out(fn):
    if getattr(fn, "__ampgrad_out__", False):
        return True
    if isinstance(fn, type):
        return True  # a class: left alone
    if type(fn).__name__ == "builtin_function_or_method":
        return bool(re.search(r"\bout\b", fn.__doc__ or ""))
    try:
        return "out" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return True


def _wrap(fn):
    @functools.wraps(fn)
    def with_out(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        return write(fn, out, args, kwargs)
    with_out.__ampgrad_out__ = True
    return with_out


def install(namespaces):
    """namespaces: {key of OUT_OPS: module}. Returns the names given out= (for the tests)."""
    done = []
    for key, mod in namespaces.items():
        for name in OUT_OPS.get(key, ()):
            fn = getattr(mod, name, None)
            if fn is None or not callable(fn) or _takes_out(fn):
                continue
            if type(fn).__name__ == "builtin_function_or_method":
                try:
                    _C._add_out_overload(fn, write)
                except TypeError:  # a builtin that is not a pybind11 function
                    setattr(mod, name, _wrap(fn))
            else:
                setattr(mod, name, _wrap(fn))
            done.append(f"{key}.{name}")
    return done
