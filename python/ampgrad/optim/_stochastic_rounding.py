"""bf16 stochastic rounding for pure-bfloat16 training (ampgrad; the `stochastic_rounding=True`
option of SGD / Adam / AdamW). A bfloat16 parameter is updated in float32 by the same fused step as
a float32 one, then rounded to bfloat16 up or down at random with probability proportional to the
distance (E[round(x)] = x), so updates smaller than half a bf16 ulp still move the weight on
average instead of vanishing as with round-to-nearest (Gupta et al. 2015; Zamirai et al. 2020,
"Revisiting BFloat16 Training"). The optimizer state of those parameters is kept in float32.
"""
from .. import _C
from .._creation import randint
from ..autograd import no_grad

__all__ = ["stochastic_round_"]


def stochastic_round_(dst, src, generator=None):
    """dst (bfloat16) <- src (float32) rounded stochastically, in place. A random 16-bit integer is added
    to the low half of the float32 bit pattern, which is then cut off: the magnitude rounds away from
    zero with probability (dropped bits) / 2**16, and the result is exactly representable in bf16.
    Values already representable in bfloat16 are unchanged."""
    if dst.dtype != _C.bfloat16 or src.dtype != _C.float32:
        raise TypeError(f"stochastic_round_: expected a bfloat16 destination and a float32 source, got {dst.dtype} "
                        f"and {src.dtype}")
    with no_grad():
        bits = src.contiguous().view(_C.int32)
        noise = randint(0, 1 << 16, tuple(src.shape), dtype=_C.int32, device=src.device, generator=generator)
        rounded = ((bits + noise) & -(1 << 16)).view(_C.float32)
        dst.copy_(rounded)
    return dst


def split_sr(group, params):
    """(params updated as usual, bfloat16 params to update in float32 + stochastic rounding)."""
    if not group.get("stochastic_rounding", False):
        return params, []
    sr = [p for p in params if p.dtype == _C.bfloat16]
    return [p for p in params if p.dtype != _C.bfloat16], sr


def fp32_copies(params):
    """float32 working copies of bf16 params and their grads."""
    return [p.detach().float() for p in params], [p.grad.detach().float() for p in params]


def write_back(params, p32, g32, grads_written):
    for p, q in zip(params, p32):
        stochastic_round_(p.detach(), q)
    if grads_written:  # the fused step unscaled the grads in place: as for float32 params
        for p, g in zip(params, g32):
            p.grad.copy_(g)
