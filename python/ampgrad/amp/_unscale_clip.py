"""The two-pass unscale + gradient-norm clipping behind GradScaler.unscale_and_clip_ (amptools);
also importable as ampgrad.nn.utils.clip_grad.unscale_and_clip_grad_norm_."""
from .. import _C
from .._C import Tensor
from .._linalg_extra import vector_norm
from ..autograd import no_grad

__all__ = ["unscale_and_clip_grad_norm_"]


def unscale_and_clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, inv_scale=None,
                                found_inf=None):
    """GradScaler.unscale_ + clip_grad_norm_ in two passes over the gradients (ampgrad; Apex's and
    Megatron's fused unscale + clip): pass 1 reads every gradient once for its norm (accumulated in
    float32, of the still-scaled values; a non-finite norm is the non-finite check), pass 2 multiplies each gradient
    once by inv_scale * clip_coef. torch's unscale_ then clip_grad_norm_ makes three (unscale: read +
    write, norm: read, clip: read + write). Returns the total norm of the unscaled gradients. When
    `found_inf` is given it is set to 1 if a gradient held inf/NaN (no host sync).
    Note: a norm of the scaled gradients that overflows float32 (|g| * scale beyond ~1e19) counts as
    non-finite, where torch's unscale_ would not; the step is then skipped and the scale backs off."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    norm_type = float(norm_type)
    if len(grads) == 0:
        return _C._full([], 0.0, _C.get_default_dtype(), _C.device("cpu"))
    with no_grad():
        dev = grads[0].device
        # pass 1. float16 norms would overflow on scaled gradients: computed in float32 (a cast copy);
        # bfloat16 has float32's range and its kernel accumulates in float32 already.
        norms = [vector_norm(g, norm_type, dtype=_C.float32) if g.dtype == _C.float16 else
                 vector_norm(g, norm_type).float() for g in grads]
        total = vector_norm(_C.stack([n.to(dev) for n in norms]), norm_type)
        if inv_scale is not None:
            total = total * inv_scale.to(dev)
        if found_inf is not None:
            found_inf.add_((~total.isfinite()).to(found_inf.dtype).to(found_inf.device))
        if error_if_nonfinite and bool(total.isnan() | total.isinf()):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so "
                               "it cannot be clipped. To disable this error and scale the gradients by the non-finite "
                               "norm anyway, set `error_if_nonfinite=False`")
        coef = (float(max_norm) / (total + 1e-6)).clamp(max=1.0)
        factor = coef if inv_scale is None else coef * inv_scale.to(dev)
        groups = {}
        for g in grads:
            groups.setdefault((str(g.device), g.dtype), []).append(g)
        for (d, _), gs in groups.items():  # pass 2: one multiply per gradient
            dummy = _C._full([], 0.0, _C.float32, gs[0].device)
            _C._amp_foreach_non_finite_check_and_unscale_(gs, dummy, factor.to(gs[0].device).float())
    return total
