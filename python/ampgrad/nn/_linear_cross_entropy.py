"""F.linear_cross_entropy (torch 2.13): cross_entropy(linear(input, linear_weight, linear_bias), target) with
torch's shape checks, K-dimensional weights, and the chunked path selected by LinearCrossEntropyOptions.

The chunked path processes batch_chunk_size rows at a time (same chunk sizes as torch's _adjust) and
never holds the full (N, C) logits: for the scalar reductions the forward computes the loss and the
gradients of input / linear_weight / linear_bias chunk by chunk (softmax - one_hot, in float32 for low
precision inputs), and the backward scales them by grad_output (torch's design; like torch's chunked op it
has no double backward). reduction='none' keeps the reference graph per chunk."""
import dataclasses
import math
import warnings

from .. import _C
from .._creation import zeros as _zeros
from ..autograd import Function as _Function
from ..autograd.grad_mode import is_grad_enabled as _is_grad_enabled

_AUTO_DEFAULTS = {("cpu", "bfloat16"): ("accurate", "aspect_ratio"), ("cpu", "float16"): ("accurate", "aspect_ratio"),
                  ("cuda", "bfloat16"): ("compact", "aspect_ratio:2"), ("cuda", "float16"): ("compact", "aspect_ratio:2")}
_AUTO_FALLBACK = ("compact", "aspect_ratio:2")


def _dname(dt):
    return str(dt).split(".")[-1]


@dataclasses.dataclass(frozen=True)
class LinearCrossEntropyOptions:
    """Options of F.linear_cross_entropy's chunked path (torch.nn.LinearCrossEntropyOptions)."""
    allow_retain_graph: bool = False
    batch_chunk_size: object = None
    chunking_method: object = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None

    def __post_init__(self):
        if self.acc_policy not in {"auto", "accurate", "balanced", "compact"}:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = str(self.chunking_method).partition(":")
            if not sep:
                factor = "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        if not (self.batch_chunk_size is None or (isinstance(self.batch_chunk_size, int)
                                                  and not isinstance(self.batch_chunk_size, bool)
                                                  and self.batch_chunk_size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {self.batch_chunk_size!r}")
        if self.acc_dtype is not None and _dname(self.acc_dtype) not in ("float16", "bfloat16", "float32", "float64"):
            raise ValueError(f"acc_dtype must be one of {{None, torch.float16, torch.bfloat16, torch.float32, "
                             f"torch.float64}}, got {self.acc_dtype!r}. Pass acc_dtype=None to let the op pick "
                             "automatically.")


def _chunk_size(options, num_batches, in_features, num_classes, dtype, device_type):
    """(batch_chunk_size, acc dtype name) as torch's LinearCrossEntropyOptions._adjust resolves them."""
    acc_policy, method = options.acc_policy, options.chunking_method
    bcs = options.batch_chunk_size
    if method == "auto" and bcs is not None:
        method = None
    if acc_policy == "auto" or method == "auto":
        ap, cm = _AUTO_DEFAULTS.get((device_type, _dname(dtype)), _AUTO_FALLBACK)
        if method == "auto":
            method = cm
    size = num_batches if bcs is None else min(bcs, num_batches)
    if method is not None:
        factor = int(method.split(":", 1)[1]) if ":" in method else 1
        inc = -(-num_classes // in_features)
        target = -(-num_batches // inc)
        size = min((1 << (target - 1).bit_length()) // factor, num_batches)
        if bcs is not None and bcs != size:
            raise ValueError(f"batch_chunk_size (={bcs}) and chunking_method ('{method}') give different chunk sizes "
                             f"({bcs} vs {size}); pass only one.")
    acc = options.acc_dtype
    if acc is None:
        acc = "float32" if (options.acc_policy == "auto" and _dname(dtype) in ("float16", "bfloat16")) else _dname(dtype)
    return max(1, size), _dname(acc)


def _chunk_grads(x, w, b, t, weight, ignore_index, acc):
    """Loss terms and d(loss)/d(logits) of one chunk, computed in the accumulation dtype without a graph."""
    xa, wa = x.to(acc), w.to(acc)
    logits = _C._linear(xa, wa, None if b is None else b.to(acc))
    lse = logits.logsumexp(1)
    valid = t != ignore_index
    tc = _C.where(valid, t, _zeros((), dtype=t.dtype))
    picked = logits.gather(1, tc.unsqueeze(1)).squeeze(1)
    wt = valid.to(acc) if weight is None else _C.where(valid, weight.to(acc).index_select(0, tc),
                                                       _zeros((), dtype=acc))
    loss = (lse - picked) * wt
    p = (logits - lse.unsqueeze(1)).exp()
    g = p.scatter_add(1, tc.unsqueeze(1), -picked.new_ones(tuple(picked.shape)).unsqueeze(1)) * wt.unsqueeze(1)
    return loss, wt, g, xa, wa


class _linear_cross_entropy_batch_chunked_default(_Function):
    """Scalar-reduction chunked linear + cross entropy: gradients precomputed chunk by chunk in forward."""

    @staticmethod
    def forward(ctx, input, linear_weight, linear_bias, target, weight, reduction, ignore_index, chunk, acc,
                retain, need_x, need_w, need_b):
        N = input.shape[0]
        total = _zeros((), dtype=acc)
        wsum = _zeros((), dtype=acc)
        gx = [] if need_x else None
        gw = _zeros(tuple(linear_weight.shape), dtype=acc) if need_w else None
        gb = _zeros(tuple(linear_bias.shape), dtype=acc) if need_b else None
        for s in range(0, N, chunk):
            e = min(s + chunk, N)
            loss, wt, g, xa, wa = _chunk_grads(input[s:e], linear_weight, linear_bias, target[s:e], weight,
                                               ignore_index, acc)
            total = total + loss.sum()
            wsum = wsum + wt.sum()
            if need_x:
                gx.append(g.matmul(wa))
            if need_w:
                gw = gw + g.t().matmul(xa)
            if need_b:
                gb = gb + g.sum(0)
        scale = 1.0 / wsum if reduction == "mean" else wsum.new_ones(())
        out = total * scale
        ctx.grads = (None if gx is None else (_C.cat(gx, 0) if gx else _zeros(tuple(input.shape), dtype=acc)), gw, gb)
        ctx.scale = scale
        ctx.retain = retain
        ctx.dtypes = (input.dtype, linear_weight.dtype, None if linear_bias is None else linear_bias.dtype)
        return out.to(input.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.grads is None:
            raise RuntimeError("linear_cross_entropy chunked backward called twice; retain_graph=True / double "
                               "backward are not supported.")
        s = grad_output.to(ctx.scale.dtype) * ctx.scale
        res = [None if gr is None else (gr * s).to(dt) for gr, dt in zip(ctx.grads, ctx.dtypes)]
        if not ctx.retain:
            ctx.grads = None
        return (res[0], res[1], res[2]) + (None,) * 10


def _chunked(input, linear_weight, target, linear_bias, weight, reduction, ignore_index, options, cross_entropy,
             linear):
    has_batches = input.dim() == 2
    if not has_batches:
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    N, in_features = input.shape
    chunk, acc_name = _chunk_size(options, N, in_features, linear_weight.shape[0], input.dtype, input.device.type)
    acc = getattr(_C, acc_name)
    if reduction == "none":
        outs = []
        for s in range(0, max(N, 1), chunk):
            xs = input[s:s + chunk]
            logits = linear(xs.to(acc), linear_weight.to(acc), None if linear_bias is None else linear_bias.to(acc))
            outs.append(cross_entropy(logits, target[s:s + chunk], weight=None if weight is None else weight.to(acc),
                                      reduction="none", ignore_index=ignore_index).to(input.dtype))
        result = _C.cat(outs, 0) if len(outs) > 1 else outs[0]
    else:
        ge = _is_grad_enabled()
        result = _linear_cross_entropy_batch_chunked_default.apply(
            input, linear_weight, linear_bias, target, weight, reduction, ignore_index, chunk, acc,
            bool(getattr(options, "allow_retain_graph", False)), input.requires_grad and ge,
            linear_weight.requires_grad and ge, linear_bias is not None and linear_bias.requires_grad and ge)
    return result if has_batches else result.squeeze(0)


def linear_cross_entropy_impl(cross_entropy, linear, input, linear_weight, target, linear_bias=None, weight=None,
                              reduction="mean", ignore_index=None, label_smoothing=0.0, options=None):
    """F.linear_cross_entropy given F's cross_entropy and linear (functional.py's wrapper passes them)."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    num_batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), "
                           f"got {input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got {tuple(linear_bias.shape)}")
    if out_features and not num_batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires"
                           f" batched input, (N, {in_features}), got unbatched input with shape {tuple(input.shape)}")
    logits_shape = (*num_batches, num_classes, *out_features)
    probabilities = tuple(target.shape) == logits_shape
    if probabilities and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = ignore_index if ignore_index is not None else -100
    chunkable = (reduction in ("mean", "sum", "none") and label_smoothing == 0.0 and target.dtype == _C.int64
                 and not out_features)
    if options is not None and not chunkable:
        warnings.warn("linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
                      "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, out_features == (). Got "
                      f"reduction={reduction!r}, label_smoothing={label_smoothing}, target.dtype={target.dtype}, "
                      f"out_features={out_features}, tracing=False, linear_bias.shape="
                      f"{tuple(linear_bias.shape) if linear_bias is not None else None}.", stacklevel=2)
    if options is not None and chunkable:
        return _chunked(input, linear_weight, target, linear_bias, weight, reduction, ignore_index, options,
                        cross_entropy, linear)
    if out_features:
        linear_weight = linear_weight.reshape((math.prod(out_features, start=num_classes), in_features))
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(math.prod(out_features, start=num_classes))
    # A 1-d input goes through linear as one row: ampgrad's 1-d linear rounds the product and the bias sum
    # separately in low precision, the 2-d one (torch's addmm) once.
    logits = linear(input if input.dim() == 2 else input.unsqueeze(0), linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction, ignore_index=ignore_index,
                         label_smoothing=label_smoothing)
