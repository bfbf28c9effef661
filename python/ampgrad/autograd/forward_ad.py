"""ampgrad.autograd.forward_ad: forward-mode AD with dual tensors (mirrors torch.autograd.forward_ad).
One dual level at a time; tangents made under a level are cleared when it exits."""
from collections import namedtuple

from .. import _C
from .grad_mode import _DecoratorContextManager

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual", "dual_level"]


def enter_dual_level():
    """Enters a new forward grad level; returns its index. Nesting is not supported."""
    return _C._enter_dual_level()


def exit_dual_level(*, level=None):
    """Exits the latest forward grad level: every tangent made under it is dropped."""
    current = _C._current_dual_level()
    if level is None:
        level = current
    if level != current:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. This is not "
                           "supported.")
    _C._exit_dual_level(level=level)


def _check_float(t, what):
    if not t.is_floating_point():
        raise ValueError(f"Expected {what} to be floating point or complex, but got: {t.dtype}")


def make_dual(tensor, tangent, *, level=None):
    """A view of `tensor` whose forward gradient is `tangent` (same size, floating point)."""
    if level is None:
        level = _C._current_dual_level()
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    _check_float(tensor, "primal")
    _check_float(tangent, "tangent")
    return _C._make_dual(tensor, tangent, level=level)


UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = ("Namedtuple returned by unpack_dual(): the primal (a view of the dual tensor) and its "
                              "tangent (None when it has none).")


def unpack_dual(tensor, *, level=None):
    """UnpackedDualTensor(primal, tangent): primal is a view of `tensor`; tangent is None when absent."""
    if level is None:
        level = _C._current_dual_level()
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    primal, tangent = _C._unpack_dual(tensor, level=level)
    return UnpackedDualTensor(primal, tangent)


class dual_level(_DecoratorContextManager):
    """Context manager for forward AD: every forward AD computation happens inside it."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, exc_type, exc_value, traceback):
        exit_dual_level()
