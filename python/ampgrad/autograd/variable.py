"""The deprecated Variable API: Variable(t) returns a Tensor, and every Tensor is a Variable."""
import warnings

from .. import _C
from .._creation import empty
from ._backward import _queue_callback

__all__ = ["Variable", "variable"]


class VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, _C.Tensor)


class _ImperativeEngine:
    """Variable._execution_engine: queue_callback(fn) runs fn once the running backward pass has finished."""

    @staticmethod
    def queue_callback(callback):
        _queue_callback(callback)


class Variable(metaclass=VariableMeta):
    """Variable(data=None, requires_grad=False): a Tensor sharing data's storage, detached from its
    graph (torch's legacy constructor)."""
    _execution_engine = _ImperativeEngine()

    def __new__(cls, data=None, requires_grad=False, volatile=False, _grad_fn=None, name=None):
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          stacklevel=2)
        if data is None:
            out = empty(0)
        elif isinstance(data, _C.Tensor):
            out = data.detach()
        else:
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if requires_grad:
            if not out.is_floating_point():
                raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
            out.requires_grad_(True)
        return out


def variable(*args, **kwargs):
    raise RuntimeError("torch.autograd.variable(...) is deprecated, use torch.tensor(...) instead")
