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
