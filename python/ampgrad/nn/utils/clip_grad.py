"""Gradient clipping (torch.nn.utils.clip_grad): in place on .grad, under no_grad."""
import warnings

from ... import _C
from ..._C import Tensor
from ...autograd import no_grad
from ...linalg import vector_norm
from ...amp._unscale_clip import unscale_and_clip_grad_norm_  # noqa: F401  (amptools)

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]


def _tensor_list(tensors):
    if isinstance(tensors, Tensor):
        return [tensors]
    return list(tensors)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of the per-tensor norms (= the norm of all elements as one vector)."""
    tensors = _tensor_list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return _C._full([], 0.0, _C.get_default_dtype(), _C.device("cpu"))
    with no_grad():
        norms = [vector_norm(g, norm_type) for g in tensors]
        first_device = tensors[0].device
        total_norm = vector_norm(_C.stack([n.to(first_device) for n in norms]), norm_type)
    if error_if_nonfinite and bool(total_norm.isnan() | total_norm.isinf()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it "
                           "cannot be clipped. To disable this error and scale the gradients by the non-finite norm "
                           "anyway, set `error_if_nonfinite=False`")
    return total_norm


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scales the grads by min(1, max_norm / (total_norm + 1e-6)) (no host sync: the factor is a tensor)."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    if len(grads) == 0:
        return
    with no_grad():
        clip_coef = float(max_norm) / (total_norm + 1e-6)
        clip_coef_clamped = clip_coef.clamp(max=1.0)
        for g in grads:
            g.mul_(clip_coef_clamped.to(g.device).to(g.dtype))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Clips the gradient norm of `parameters` in place; returns the total norm before clipping."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        parameters = list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamps every gradient element into [-clip_value, clip_value] in place."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    clip_value = float(clip_value)
    with no_grad():
        for p in parameters:
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)

