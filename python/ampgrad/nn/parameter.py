"""nn.Parameter (a Tensor subclass that modules register as a parameter) and nn.Buffer."""
from .. import _C
from .._C import Tensor


class Parameter(Tensor):
    """A Tensor that is a module parameter. Parameter(data) aliases data's storage (no copy), has no
    history, and requires grad by default."""

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            data = _C._empty([0], _C.get_default_dtype(), _C.device("cpu"))
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): argument 'data' must be Tensor, not {type(data).__name__}")
        Tensor.__init__(self, data, requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + Tensor.__repr__(self)

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (self.detach().clone(), self.requires_grad))


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)


class _BufferMeta(type):
    # isinstance(t, Buffer) is True for tensors made by Buffer(...), as in torch.
    def __instancecheck__(cls, instance):
        if cls is Buffer:
            return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)
        return super().__instancecheck__(instance)


class Buffer(metaclass=_BufferMeta):
    """Marks a tensor as a buffer: assigning Buffer(t) to a module attribute registers it."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = _C._empty([0], _C.get_default_dtype(), _C.device("cpu"))
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t


# ---------------------------------------------------------------- uninitialized parameters (lazy modules)
class UninitializedTensorMixin:
    """A placeholder of unknown shape: materialize(shape) allocates it (the object keeps its identity) and turns
    it into cls_to_become."""

    def materialize(self, shape, device=None, dtype=None):
        if device is None:
            device = self.data.device
        if dtype is None:
            dtype = self.data.dtype
        self.data = _C._empty([int(s) for s in shape], dtype, _C.device(device) if isinstance(device, str) else device)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. This error usually happens "
                           "in `load_state_dict` when trying to load an uninitialized parameter into an initialized one. "
                           "Call `forward` to initialize the parameters before accessing their attributes.")

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call `forward` to initialize "
                           "the parameters before calling `module.share_memory()`.")

    def __repr__(self):
        return f"<{self.__class__.__name__}>"

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))


def is_lazy(param):
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter whose shape is set on the first forward of a lazy module."""

    cls_to_become = Parameter

    def __init__(self, requires_grad=True, device=None, dtype=None):
        data = _C._empty([0], dtype or _C.get_default_dtype(),
                         _C.device(device) if isinstance(device, str) else (device or _C.device("cpu")))
        Parameter.__init__(self, data, requires_grad)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, self.data.device, self.data.dtype)
        memo[id(self)] = result
        return result


class _MaterializedBuffer(Tensor):
    """A materialized UninitializedBuffer (the lazy module swaps in a plain tensor alias right after)."""


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is set on the first forward of a lazy module."""

    cls_to_become = _MaterializedBuffer

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        data = _C._empty([0], dtype or _C.get_default_dtype(),
                         _C.device(device) if isinstance(device, str) else (device or _C.device("cpu")))
        Tensor.__init__(self, data, requires_grad)
        self.persistent = persistent
        self._is_buffer = True
