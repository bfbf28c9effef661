"""torch-level names of nn ops (torch.conv2d, torch.layer_norm, torch.dropout, ...), with the
signatures those names have in torch; the implementations live in nn.functional."""
from . import _C
from .nn import functional as F
from ._op_gate import engine_op
from .nn.functional import (conv1d, conv2d, conv_transpose1d, conv_transpose2d, prelu, bilinear, cosine_similarity,
                            pairwise_distance, pdist, selu, celu, selu_, celu_, relu_)

__all__ = ["conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "prelu", "bilinear", "cosine_similarity",
           "pairwise_distance", "pdist", "selu", "celu", "selu_", "celu_", "relu_", "dropout", "layer_norm", "group_norm", "embedding"]


def dropout(input, p, train):
    # torch.dropout (aten's check, RuntimeError; F.dropout's own check raises ValueError)
    if isinstance(p, (int, float)) and not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {float(p):g}")
    return F.dropout(input, p, train)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    # aten's group_norm reads input.size(0) and input.size(1) before its checks: IndexError below 2 dims
    if isinstance(input, _C.Tensor) and input.dim() < 2:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions" if input.dim() == 0 else
                         "Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    if isinstance(num_groups, int) and num_groups <= 0:   # aten's check_group_norm_inputs (F.group_norm divides first)
        raise RuntimeError(f"Expected num groups to be greater than 0, got {num_groups}")
    return F.group_norm(input, num_groups, weight, bias, eps)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    # torch.embedding takes (weight, indices); aten checks no padding_idx range: one that names no row (-1, the
    # default, or any out of [0, num_embeddings)) pads nothing
    if isinstance(weight, _C.Tensor) and weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    if isinstance(weight, _C.Tensor) and isinstance(padding_idx, int) and not 0 <= padding_idx < weight.size(0):
        padding_idx = None
    return F.embedding(indices, weight, padding_idx, None, 2.0, scale_grad_by_freq, sparse)


# ---- torch.* spellings of nn ops that ampgrad had only under nn.functional (issue 13): torch's
# native signatures (reduction as an int: 0 none, 1 mean, 2 sum; dropout's `train` positional).
_REDUCTION = {0: "none", 1: "mean", 2: "sum"}


def _red(reduction):
    """aten's apply_loss_reduction: 1 is a mean, 2 a sum, any other int no reduction. A non-int is refused (a
    RuntimeError here, which the op's parser wrapper replaces with torch's TypeError)."""
    if isinstance(reduction, bool) or not isinstance(reduction, (int, _C.Tensor)):
        raise RuntimeError(f"{reduction!r} is not a valid value for reduction")
    return _REDUCTION.get(int(reduction), "none")


# The torch.* spellings of these losses reduce nothing by default: their schema says `int reduction=Mean`, but
# torch's Python binding parses that default as 0 (torch.kl_div(a, b) is elementwise, as F.kl_div(..., 'none')).
def kl_div(input, target, reduction=0, *, log_target=False):
    # torch.kl_div's 'mean' is the mean over all elements, without F.kl_div's 'batchmean' warning
    loss = F.kl_div(input, target, reduction="none", log_target=log_target)
    red = _red(reduction)
    return loss if red == "none" else loss.sum() if red == "sum" else loss.mean()


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    red = _red(reduction)   # aten's enum: 1 mean, 2 sum, any other int none
    return F._margin_ranking_loss(input1, input2, target, margin, 2 if red == "sum" else 1 if red == "mean" else 0)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    red = _red(reduction)
    def fits(w):   # w broadcasts into input's shape
        return w is None or (isinstance(w, _C.Tensor) and w.dim() <= input.dim() and all(
            a in (1, b) for a, b in zip(reversed(w.shape), reversed(input.shape))))

    if (isinstance(input, _C.Tensor) and isinstance(target, _C.Tensor) and input.is_floating_point()
            and target.dtype == input.dtype and target.shape == input.shape and fits(weight) and fits(pos_weight)):
        return F.binary_cross_entropy_with_logits(input, target, weight, reduction=red, pos_weight=pos_weight)
    # aten's composition (no size check of its own, unlike F's): log_sigmoid(input) first (its dtype check), then
    # in-place arithmetic, which broadcasts into the shape (and casts into the dtype) of the tensor written to
    log_sig = F.logsigmoid(input)
    if pos_weight is not None:
        loss = (1 - target).mul_(input).sub_(log_sig.mul_((pos_weight - 1).mul(target).add_(1)))
    else:
        loss = (1 - target).mul_(input).sub_(log_sig)
    if weight is not None:
        loss.mul_(weight)
    return loss if red == "none" else loss.sum() if red == "sum" else loss.mean()


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    return F.hinge_embedding_loss(input, target, margin=margin, reduction=_red(reduction))


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    return F.cosine_embedding_loss(input1, input2, target, margin=margin, reduction=_red(reduction))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    return F.poisson_nll_loss(input, target, log_input=log_input, full=full, eps=eps, reduction=_red(reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, reduction=0):
    return F.triplet_margin_loss(anchor, positive, negative, margin=margin, p=p, eps=eps, swap=swap,
                                 reduction=_red(reduction))


def selu(input):
    return F.selu(input)


def celu(input, alpha=1.0):
    return F.celu(input, alpha)


def _aten_dropout_p(p):
    # aten's dropout ops check p first, with RuntimeError (F.*'s Python check is a ValueError)
    if isinstance(p, (int, float)) and not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")


def alpha_dropout(input, p, train):
    _aten_dropout_p(p)
    return F.alpha_dropout(input, p, train)


def feature_dropout(input, p, train):
    """One Bernoulli draw per (sample, channel), shared over the remaining dims."""
    _aten_dropout_p(p)
    if input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if not train or p == 0:
        return input
    mask = F.dropout(input.new_ones(list(input.shape[:2]) + [1] * (input.dim() - 2)), p, True)
    return input * mask


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    return F._batch_norm_aten(input, running_mean, running_var, weight, bias, training, momentum, eps)


def vdot(input, other):
    """torch.vdot for real tensors: the dot product of two 1-D tensors (conjugation is a no-op)."""
    if input.dim() != 1 or other.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.dim()}D and {other.dim()}D tensors")
    return _C.dot(input, other)


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """torch.convolution: the N-d (transposed) convolution behind F.conv*d (1-, 2- or 3-d by weight.dim())."""
    nd = weight.dim() - 2
    if nd not in (1, 2, 3):
        raise RuntimeError(f"Expected 3D, 4D or 5D weight for convolution, but got weight of size {list(weight.shape)}")
    if transposed:
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[nd - 1]
        return fn(input, weight, bias, stride, padding, output_padding, groups, dilation)
    fn = (F.conv1d, F.conv2d, F.conv3d)[nd - 1]
    return fn(input, weight, bias, stride, padding, dilation, groups)


def conv_tbc(input, weight, bias, pad=0):
    """torch.conv_tbc: 1-d convolution of a (time, batch, channel) input with a (kernel, in, out) weight."""
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    out = F.conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, 1, pad)
    return out.permute(2, 0, 1)


def constant_pad_nd(input, pad, value=0):
    return F.pad(input, list(pad), "constant", value)


def adaptive_max_pool1d(input, output_size):
    # torch.adaptive_max_pool1d is aten's op: it returns (values, indices), unlike F.adaptive_max_pool1d
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


@engine_op("_native_multi_head_attention")
def _native_multi_head_attention(query, key, value, embed_dim, num_head, qkv_weight, qkv_bias, proj_weight, proj_bias,
                                 mask=None, need_weights=True, average_attn_weights=True, mask_type=None):
    """torch._native_multi_head_attention: batch-first (B, L, E) attention with packed in-projection; mask_type
    1 is a key padding mask [B, S], otherwise an attention mask. Returns (output, weights), the weights
    averaged over heads when average_attn_weights, None when not need_weights (as torch's)."""
    if not (tuple(query.shape) == tuple(key.shape) == tuple(value.shape)):
        raise RuntimeError("expected `query`/`key`/`value` shapes to match")
    kpm, am = (mask, None) if mask_type == 1 else (None, mask)
    out, w = F.multi_head_attention_forward(query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1),
                                            embed_dim, num_head, qkv_weight, qkv_bias, None, None, False, 0.0,
                                            proj_weight, proj_bias, training=False, key_padding_mask=kpm,
                                            need_weights=need_weights, attn_mask=am,
                                            average_attn_weights=average_attn_weights)
    return out.transpose(0, 1), (w if need_weights else None)


def install_missing(namespace):
    """Set these spellings in the ampgrad namespace where no other definition (an engine op) exists."""
    for name in ("kl_div", "margin_ranking_loss", "binary_cross_entropy_with_logits", "hinge_embedding_loss",
                 "cosine_embedding_loss", "poisson_nll_loss", "triplet_margin_loss", "selu", "celu",
                 "alpha_dropout", "feature_dropout", "batch_norm", "vdot", "convolution", "conv_tbc", "constant_pad_nd",
                 "adaptive_max_pool1d", "_native_multi_head_attention"):
        namespace.setdefault(name, globals()[name])
    for name in ("conv3d", "conv_transpose3d", "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d",
                 "adaptive_avg_pool1d"):
        if hasattr(F, name):
            namespace.setdefault(name, getattr(F, name))


# ---- torch._C._nn: aten's nn ops under their native signatures, as torch's binding exposes them
# (scripts and torch's own test lists, e.g. autocast_test_lists, call them). Their losses' `reduction`
# defaults to 0 (none), as torch's binding parses it; padding and pooling take aten's arguments.
def _nn_namespace():
    import types
    m = types.ModuleType("ampgrad._C._nn", "aten's nn ops (torch._C._nn) under their native signatures")

    def loss(fn):  # aten's (input, target, reduction) losses
        def f(input, target, reduction=0):
            return fn(input, target, reduction=_red(reduction))
        f.__name__ = fn.__name__
        return f

    m.l1_loss = loss(F.l1_loss)
    m.mse_loss = loss(F.mse_loss)
    m.soft_margin_loss = loss(F.soft_margin_loss)
    m.multilabel_margin_loss = loss(F.multilabel_margin_loss)

    def smooth_l1_loss(input, target, reduction=0, beta=1.0):
        return F.smooth_l1_loss(input, target, reduction=_red(reduction), beta=beta)

    def huber_loss(input, target, reduction=0, delta=1.0):
        return F.huber_loss(input, target, reduction=_red(reduction), delta=delta)

    def binary_cross_entropy(input, target, weight=None, reduction=0):
        return F.binary_cross_entropy(input, target, weight, reduction=_red(reduction))

    def nll_loss(input, target, weight=None, reduction=0, ignore_index=-100):
        return F.nll_loss(input, target, weight, ignore_index=ignore_index, reduction=_red(reduction))

    def multi_margin_loss(input, target, p=1, margin=1, weight=None, reduction=0):
        return F.multi_margin_loss(input, target, p, margin, weight, reduction=_red(reduction))

    def avg_pool3d(input, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
                   divisor_override=None):
        return F.avg_pool3d(input, kernel_size, stride if stride not in ((), []) else None, padding, ceil_mode,
                            count_include_pad, divisor_override)

    def pad_fn(mode, nd):
        def f(input, padding):
            if len(padding) != 2 * nd:
                raise RuntimeError(f"padding size is expected to be {2 * nd}, but got: {len(padding)}")
            return F.pad(input, list(padding), mode)
        return f

    for name, fn in (("smooth_l1_loss", smooth_l1_loss), ("huber_loss", huber_loss),
                     ("binary_cross_entropy", binary_cross_entropy), ("nll_loss", nll_loss), ("nll_loss2d", nll_loss),
                     ("multi_margin_loss", multi_margin_loss), ("avg_pool3d", avg_pool3d), ("linear", F.linear)):
        setattr(m, name, fn)
    for nd in (1, 2, 3):
        setattr(m, f"reflection_pad{nd}d", pad_fn("reflect", nd))
        setattr(m, f"replication_pad{nd}d", pad_fn("replicate", nd))
    return m


_C._nn = _nn_namespace()
