"""torch's legacy tensor constructors: ampgrad.Tensor(...) with data or sizes, and the typed classes
FloatTensor, LongTensor, ... (callable like Tensor with a fixed dtype; isinstance checks dtype and
device, as torch's). Tensor(...) reaches _new through the engine's Tensor.__init__ overload
(csrc/bindings/nn.cpp). Sizes give a zero-filled tensor (torch's is uninitialized memory)."""
import builtins

from . import _C
from ._C import Tensor
from ._creation import tensor
from ._tensor import Size

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor", "ShortTensor",
           "IntTensor", "LongTensor", "BoolTensor"]


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, builtins.bool) or (isinstance(v, Tensor) and v.dim() == 0 and not v.dtype.is_floating_point and v.dtype != _C.bool)


def _sizes(sizes, dtype, device):
    for i, s in enumerate(sizes):
        if not _is_int(s):
            raise TypeError(f"new(): argument 'size' failed to unpack the object at pos {i + 1} with error "
                            f"\"type must be tuple of ints,but got {type(s).__name__}\"")
    sizes = [int(s) for s in sizes]
    for s in sizes:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {sizes}")
    return _C._full(sizes, 0, dtype, _C.device(device) if device is not None else _C.device("cpu"))


def _new(dtype, args, kwargs):
    """The legacy constructor: dtype None means the default dtype (ampgrad.Tensor)."""
    kwargs = dict(kwargs)
    device = kwargs.pop("device", None)
    size = kwargs.pop("size", None)
    if kwargs:
        raise TypeError(f"new() received an invalid combination of arguments - got unexpected keyword argument "
                        f"'{next(iter(kwargs))}'")
    want = dtype if dtype is not None else _C.get_default_dtype()
    if size is not None:
        if args:
            raise TypeError("new() received an invalid combination of arguments - got both size and positional arguments")
        return _sizes(tuple(size), want, device)
    if not args:
        return _sizes((0,), want, device)
    if len(args) == 1:
        a = args[0]
        if isinstance(a, Tensor):
            if dtype is not None and a.dtype != dtype:
                raise TypeError(f"expected {dtype} (got {a.dtype})")
            return a.detach()
        if isinstance(a, Size):
            return _sizes(tuple(a), want, device)
        if _is_int(a):
            return _sizes((a,), want, device)
        if isinstance(a, (float, builtins.bool, complex)):
            raise TypeError(f"new(): data must be a sequence (got {type(a).__name__})")
        return tensor(a, dtype=want, device=device)
    return _sizes(args, want, device)


class _TensorType(type):
    def __call__(cls, *args, **kwargs):
        return _new(cls.dtype, args, kwargs)

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype and obj.device.type == "cpu"

    def __repr__(cls):
        return f"<class 'ampgrad.{cls.__name__}'>"


def _typed(name, dtype):
    return _TensorType(name, (), {"dtype": dtype, "is_cuda": False, "__module__": "ampgrad"})


FloatTensor = _typed("FloatTensor", _C.float32)
DoubleTensor = _typed("DoubleTensor", _C.float64)
HalfTensor = _typed("HalfTensor", _C.float16)
BFloat16Tensor = _typed("BFloat16Tensor", _C.bfloat16)
ByteTensor = _typed("ByteTensor", _C.uint8)
CharTensor = _typed("CharTensor", _C.int8)
ShortTensor = _typed("ShortTensor", _C.int16)
IntTensor = _typed("IntTensor", _C.int32)
LongTensor = _typed("LongTensor", _C.int64)
BoolTensor = _typed("BoolTensor", _C.bool)
