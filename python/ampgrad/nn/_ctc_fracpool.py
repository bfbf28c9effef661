"""torch.ctc_loss / F.ctc_loss and F.fractional_max_pool2d / 3d over the engine ops _C._ctc_loss_nll and
_C._fractional_max_pool (csrc/ops/ctc_fracpool.cpp). The argument handling is torch's (aten's ctc_loss:
unbatched inputs, the reductions, zero_infinity; F.fractional_max_pool*: output_ratio, the random samples
drawn with torch.rand in the input's dtype, so a seeded run draws torch's windows). torch's CPU autocast
runs all three in float32: the engine calls go through the autocast gate."""
import math
import operator

from .. import _C
from .._creation import rand as _rand, tensor as _tensor
from .._op_gate import engine_op

_MEAN, _SUM = 1, 2


def _lengths(v, name):
    """torch's IntArrayRef / Tensor overloads: a tuple or list of ints, or an integral tensor."""
    if isinstance(v, _C.Tensor):
        if v.dtype.is_floating_point or v.dtype == _C.bool:
            raise RuntimeError(f"{name} must be integral")
        return [int(x) for x in v.reshape(-1).tolist()]
    if isinstance(v, (tuple, list)):
        out = []
        for x in v:
            if isinstance(x, _C.Tensor) and x.numel() == 1 and not x.dtype.is_floating_point:
                x = x.item()
            try:
                out.append(operator.index(x))
            except TypeError:
                raise TypeError(f"ctc_loss(): argument '{name}' must be tuple of ints, but found element of type "
                                f"{type(x).__name__}") from None
        return out
    raise TypeError(f"ctc_loss() received an invalid combination of arguments - got {name} of type "
                    f"{type(v).__name__}, but expected a tuple of ints or a Tensor")


def _check_overload(input_lengths, target_lengths):
    """torch has an int-list overload and a Tensor overload: mixing the two kinds matches neither."""
    if isinstance(input_lengths, _C.Tensor) != isinstance(target_lengths, _C.Tensor):
        raise TypeError("ctc_loss() received an invalid combination of arguments - got (Tensor, Tensor, "
                        f"{type(input_lengths).__name__}, {type(target_lengths).__name__}), but expected one of: "
                        "(Tensor log_probs, Tensor targets, tuple of ints input_lengths, tuple of ints target_lengths, "
                        "...) or (Tensor log_probs, Tensor targets, Tensor input_lengths, Tensor target_lengths, ...)")


@engine_op("ctc_loss")
def _ctc_loss_gated(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity):
    _check_overload(input_lengths, target_lengths)
    batched = log_probs.dim() == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    tg = targets if batched else targets.unsqueeze(0)
    il, tl = _lengths(input_lengths, "input_lengths"), _lengths(target_lengths, "target_lengths")
    nll = _C._ctc_loss_nll(lp, tg, il, tl, int(blank), bool(zero_infinity))
    if zero_infinity:
        nll = _C.where(nll == math.inf, nll.new_zeros(()), nll)
    if not batched:
        nll = nll.squeeze(0)
    if reduction == _MEAN:
        div = _tensor(tl, dtype=nll.dtype, device=nll.device).clamp_min(1)
        if not batched:
            div = div.squeeze(0)
        return (nll / div).mean()
    if reduction == _SUM:
        return nll.sum()
    return nll


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=_MEAN, zero_infinity=False):
    """torch.ctc_loss (reduction as torch's enum: 0 none, 1 mean, 2 sum). torch's Python binding reads its
    documented default reduction=Mean as 'none'; ampgrad keeps the documented default."""
    return _ctc_loss_gated(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity)


def _tuple(v, n, what):
    if isinstance(v, (tuple, list)):
        v = tuple(int(x) for x in v)
        return v if len(v) != 1 else v * n
    return (int(v),) * n


@engine_op("fractional_max_pool2d")
def _frac2d(input, kernel_size, output_size, samples):
    return _C._fractional_max_pool(input, list(_tuple(kernel_size, 2, "kernel_size")),
                                   list(_tuple(output_size, 2, "output_size")), samples, 2)


@engine_op("fractional_max_pool3d")
def _frac3d(input, kernel_size, output_size, samples):
    return _C._fractional_max_pool(input, list(_tuple(kernel_size, 3, "kernel_size")),
                                   list(_tuple(output_size, 3, "output_size")), samples, 3)


def _fractional(nd, input, kernel_size, output_size, output_ratio, _random_samples):
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if len(output_ratio) > nd:  # torch calls len() here: a float ratio raises TypeError as in torch
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = tuple(output_ratio) if len(output_ratio) != 1 else tuple(output_ratio) * nd
        ratio = ratio if len(ratio) == nd else ratio + (ratio[-1],) * (nd - len(ratio))
        output_size = [int(input.size(-nd + i) * ratio[i]) for i in range(nd)]
    if _random_samples is None:
        n_batch = 1 if input.dim() == nd + 1 else input.size(0)
        _random_samples = _rand(n_batch, input.size(-nd - 1), nd, dtype=input.dtype, device=input.device)
    return (_frac2d if nd == 2 else _frac3d)(input, kernel_size, output_size, _random_samples)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    return _fractional(2, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    return _fractional(3, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    r = _fractional(2, input, kernel_size, output_size, output_ratio, _random_samples)
    return r if return_indices else r[0]


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    r = _fractional(3, input, kernel_size, output_size, output_ratio, _random_samples)
    return r if return_indices else r[0]
