"""torch.distributions.utils: probability/logit conversions, lazy_property, broadcast_all (torch's definitions)."""
from functools import update_wrapper
from numbers import Number

from .. import _C
from .._C import Tensor
from .._creation import tensor as _tensor, arange as _arange, empty as _empty
from .._dtype_info import finfo as _finfo
from .._functions import broadcast_tensors as _broadcast_tensors
from .._tensor import Size as _Size
from ..autograd import enable_grad
from ..nn import functional as _F

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs", "probs_to_logits",
           "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060  # Euler Mascheroni Constant


def broadcast_all(*values):
    """Broadcasts tensors and numbers together; numbers become tensors of the first tensor's dtype and
    device (of the default dtype when all are numbers)."""
    if not all(isinstance(v, (Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, Tensor) for v in values):
        options = dict(dtype=_C.get_default_dtype())
        for value in values:
            if isinstance(value, Tensor):
                options = dict(dtype=value.dtype, device=value.device)
                break
        values = [v if isinstance(v, Tensor) else _tensor(v, **options) for v in values]
    return _broadcast_tensors(*values)


def clamp_probs(probs):
    """Clamps probabilities to [eps, 1 - eps], eps the dtype's machine epsilon."""
    eps = _finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """log of the clamped probabilities (log-odds when is_binary)."""
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return _C.log(ps_clamped) - _C.log1p(-ps_clamped)
    return _C.log(ps_clamped)


def logits_to_probs(logits, is_binary=False):
    """sigmoid of log-odds when is_binary, else softmax over the last dimension."""
    if is_binary:
        return _C.sigmoid(logits)
    return _F.softmax(logits, dim=-1)


class lazy_property:
    """A non-data descriptor computing the value on first access (with grad enabled) and storing it on
    the instance under the wrapped method's name."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """lazy_property seen on the class: also a property (for docs and introspection)."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def _standard_normal(shape, dtype, device):
    return _empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value, dim):
    """Sums out the `dim` rightmost dimensions of `value`."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def tril_matrix_to_vec(mat, diag=0):
    """The lower triangle (below diagonal `diag`) of the last two dims, flattened row by row."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    arange = _arange(n, device=mat.device)
    tril_mask = arange < arange.view(-1, 1) + (diag + 1)
    return mat[..., tril_mask]


def vec_to_tril_matrix(vec, diag=0):
    """Inverse of tril_matrix_to_vec."""
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    eps = _finfo(vec.dtype).eps
    if round(n) - n > eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(vec.shape[:-1] + _Size((n, n)))
    arange = _arange(n, device=vec.device)
    tril_mask = arange < arange.view(-1, 1) + (diag + 1)
    mat[..., tril_mask] = vec
    return mat
