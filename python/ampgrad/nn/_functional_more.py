"""nn.functional additions (re-exported by nn.functional): multi_head_attention_forward and its mask helpers,
instance_norm, local_response_norm, embedding_bag, gaussian_nll_loss, multilabel_soft_margin_loss,
triplet_margin_with_distance_loss, gumbel_softmax, feature_alpha_dropout. Thin compositions of engine ops
(the attention itself runs on the engine's scaled_dot_product_attention / bmm / softmax ops)."""
import math
import sys
import warnings

from .. import _C, _argparse
from .._signatures import SIGS as _SIGS
from .._creation import zeros as _zeros, zeros_like as _zeros_like
from . import _reduction as _Reduction
from types import SimpleNamespace as _NS

from .. import _creation
from .._dtype_info import finfo as _finfo
from ..autograd import no_grad as _no_grad

# the ampgrad-level names used here, from the layers below (tests/test_import_layers.py)
_ag = _NS(tensor=_creation.tensor, zeros=_creation.zeros, ones_like=_creation.ones_like, empty_like=_creation.empty_like,
          zeros_like=_creation.zeros_like, randn=_creation.randn, eye=_creation.eye, stack=_C.stack, cat=_C.cat,
          int64=_C.int64, finfo=_finfo)

__all__ = ["multi_head_attention_forward", "_canonical_mask", "_none_or_dtype", "_mha_shape_check",
           "_in_projection_packed", "_in_projection"]


def _F():
    # nn.functional re-exports this module's names (its last import), so it is looked up, not imported
    return sys.modules[__package__ + ".functional"]


# ---------------------------------------------------------------- multi-head attention
def _in_projection_packed(q, k, v, w, b=None):
    linear = _F().linear
    E = q.size(-1)
    if k is v:
        if q is k:
            proj = linear(q, w, b)
            proj = proj.unflatten(-1, (3, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([E, E * 2])
        if b is None:
            b_q = b_kv = None
        else:
            b_q, b_kv = b.split([E, E * 2])
        q_proj = linear(q, w_q, b_q)
        kv_proj = linear(k, w_kv, b_kv)
        kv_proj = kv_proj.unflatten(-1, (2, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
        return q_proj, kv_proj[0], kv_proj[1]
    w_q, w_k, w_v = w.chunk(3)
    if b is None:
        b_q = b_k = b_v = None
    else:
        b_q, b_k, b_v = b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    linear = _F().linear
    Eq, Ek, Ev = q.size(-1), k.size(-1), v.size(-1)
    for w, shape, name in ((w_q, (Eq, Eq), "query"), (w_k, (Eq, Ek), "key"), (w_v, (Eq, Ev), "value")):
        if tuple(w.shape) != shape:
            raise AssertionError(f"expecting {name} weights shape of {shape}, but got {w.shape}")
    for b, name in ((b_q, "query"), (b_k, "key"), (b_v, "value")):
        if b is not None and tuple(b.shape) != (Eq,):
            raise AssertionError(f"expecting {name} bias shape of {(Eq,)}, but got {b.shape}")
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be 3-D"
                                 f" but found {key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D"
                                 f" but found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D"
                                 f" but found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be 2-D"
                                 f" but found {key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D"
                                 f" but found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D"
                                     f" but found {attn_mask.dim()}-D tensor instead")
            if attn_mask.dim() == 3:
                expected_shape = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != expected_shape:
                    raise AssertionError(f"Expected `attn_mask` shape to be {expected_shape} but got {attn_mask.shape}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query tensor")


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask (True = masked out) as a float mask of target_type (-inf where masked); float masks unchanged."""
    if mask is not None:
        is_float = mask.is_floating_point()
        if mask.dtype != _C.bool and not is_float:
            raise AssertionError(f"only bool and floating types of {mask_name} are supported")
        if check_other and other_type is not None and mask.dtype != other_type:
            warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both "
                          "instead.", stacklevel=3)
        if not is_float:
            mask = _zeros_like(mask, dtype=target_type).masked_fill_(mask, float("-inf"))
    return mask


def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, _C.Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _pad_last(t):
    # torch's pad(t, (0, 1)): one zero column appended on the last dim.
    return _C.cat([t, _zeros(list(t.shape[:-1]) + [1], dtype=t.dtype, device=t.device)], -1)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """torch.nn.functional.multi_head_attention_forward (sequence-first (L, N, E) or unbatched (L, E))."""
    F = _F()
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask",
                                       query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module method "
                           "`generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the causal mask is applied by scaled_dot_product_attention itself
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's {value.shape[:2]}")
    elif tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")

    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        for w, n in ((q_proj_weight, "q"), (k_proj_weight, "k"), (v_proj_weight, "v")):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {n}_proj_weight is None")
        b_q = b_k = b_v = None
        if in_proj_bias is not None:
            b_q, b_k, b_v = in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, b_q, b_k, b_v)

    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = _C.cat([k, bias_k.repeat(1, bsz, 1)])
        v = _C.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)
    else:
        if bias_k is not None:
            raise AssertionError("bias_k is set but bias_v is None")
        if bias_v is not None:
            raise AssertionError("bias_v is set but bias_k is None")

    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.view(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        if static_k.size(0) != bsz * num_heads:
            raise AssertionError(f"expecting static_k.size(0) of {bsz * num_heads}, but got {static_k.size(0)}")
        if static_k.size(2) != head_dim:
            raise AssertionError(f"expecting static_k.size(2) of {head_dim}, but got {static_k.size(2)}")
        k = static_k
    if static_v is None:
        v = v.view(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        if static_v.size(0) != bsz * num_heads:
            raise AssertionError(f"expecting static_v.size(0) of {bsz * num_heads}, but got {static_v.size(0)}")
        if static_v.size(2) != head_dim:
            raise AssertionError(f"expecting static_v.size(2) of {head_dim}, but got {static_v.size(2)}")
        v = static_v

    if add_zero_attn:
        zero_attn_shape = [bsz * num_heads, 1, head_dim]
        k = _C.cat([k, _zeros(zero_attn_shape, dtype=k.dtype, device=k.device)], 1)
        v = _C.cat([v, _zeros(zero_attn_shape, dtype=v.dtype, device=v.device)], 1)
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)

    src_len = k.size(1)
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got {key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        key_padding_mask = (key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
                            .reshape(bsz * num_heads, 1, src_len))
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask

    if not training:
        dropout_p = 0.0

    if need_weights:
        _B, _Nt, E = q.shape
        q_scaled = q * math.sqrt(1.0 / float(E))
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        if attn_mask is not None:
            w = _C.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            w = _C.bmm(q_scaled, k.transpose(-2, -1))
        w = F.softmax(w, dim=-1)
        if dropout_p > 0.0:
            w = F.dropout(w, p=dropout_p)
        attn_output = _C.bmm(w, v)
        attn_output = attn_output.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        attn_output = F.linear(attn_output, out_proj_weight, out_proj_bias)
        attn_output = attn_output.view(tgt_len, bsz, attn_output.size(1))
        w = w.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            w = w.mean(dim=1)
        if not is_batched:
            attn_output = attn_output.squeeze(1)
            w = w.squeeze(0)
        return attn_output, w

    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    attn_output = F.scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    attn_output = attn_output.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    attn_output = F.linear(attn_output, out_proj_weight, out_proj_bias)
    attn_output = attn_output.view(tgt_len, bsz, attn_output.size(1))
    if not is_batched:
        attn_output = attn_output.squeeze(1)
    return attn_output, None


# ---------------------------------------------------------------- activations (engine ops: ops/activation_more.cpp)
__all__ += ["hardshrink", "softshrink", "threshold", "threshold_", "rrelu", "rrelu_", "feature_alpha_dropout",
            "instance_norm", "local_response_norm", "embedding_bag", "gaussian_nll_loss", "multilabel_soft_margin_loss",
            "triplet_margin_with_distance_loss", "gumbel_softmax"]


_TORCH_TYPE_NAMES = {"uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long", "bool": "Bool"}
_INT_RANGE = {"uint8": (-255, 255, "uint8_t"),   # c10's overflow check lets an unsigned type wrap a negative int
               "int8": (-128, 127, "int8_t"), "int16": (-32768, 32767, "int16_t"),
              "int32": (-2 ** 31, 2 ** 31 - 1, "int32_t"), "int64": (-2 ** 63, 2 ** 63 - 1, "int64_t")}


def _number(x, fn, arg, pos, input=None):
    """A Python number argument (torch's Scalar): Tensor / other types rejected, ints outside int64 / uint64
    overflow, and for an integer input the value must fit its dtype."""
    import numbers
    if isinstance(x, _C.Tensor) and x.dim() == 0 and not x.requires_grad:
        x = x.item()   # the parser takes a 0-d Tensor without grad for a Scalar
    if isinstance(x, _C.Tensor) or not isinstance(x, numbers.Number):
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be Number, not {type(x).__name__}")
    if isinstance(x, int) and not isinstance(x, bool):
        if x < -2 ** 63:
            raise OverflowError("can't convert negative int to unsigned")
        if x >= 2 ** 64:
            raise OverflowError("int too big to convert")
    if input is not None:
        _fits(x, input)
    return float(x)


_FLOAT_MAX = 3.4028234663852886e38


_FLOAT_RANGE = {"float32": (_FLOAT_MAX, "float"), "float16": (65504.0, "c10::Half"),
                "bfloat16": (3.3895313892515355e38, "c10::BFloat16")}


def _fits(x, input, opmath=False):
    """The conversion of Scalar x to the input's dtype (after the parser has taken every argument): an integer
    dtype's range; a reduced float dtype's (float's with opmath: the kernel computes in float), where a finite x
    beyond it overflows."""
    if isinstance(x, _C.Tensor):
        x = x.item()
    if not input.is_floating_point() and input.dtype != _C.bool:
        lo, hi, cname = _INT_RANGE.get(str(input.dtype).split(".")[-1], (None, None, None))
        if lo is not None and isinstance(x, float) and lo < 0 and input.dtype == _C.uint8:
            lo = 0   # (a negative float does not wrap)
        if lo is not None and isinstance(x, (int, float)) and not (lo <= x <= hi):  # (NaN too)
            raise RuntimeError(f"value cannot be converted to type {cname} without overflow")
    elif input.dtype in (_C.float32, _C.float16, _C.bfloat16) and isinstance(x, (int, float)) and math.isfinite(x):
        hi, cname = _FLOAT_RANGE["float32" if opmath else str(input.dtype).split(".")[-1]]
        if abs(x) > hi:
            raise RuntimeError(f"value cannot be converted to type {cname} without overflow")


def _threshold_args(input, threshold, value, fn):
    # the parser checks the arguments' types in order before either Scalar is converted to the input's dtype
    if not isinstance(input, _C.Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    th, v = _number(threshold, fn, "threshold", 2), _number(value, fn, "value", 3)
    # the exact Scalars (an int near int64's bounds is no float); the threshold is compared in the op math
    _fits(threshold, input, opmath=True)
    _fits(value, input)
    return th, v


def hardshrink(input, lambd=0.5):
    return _C._hardshrink(input, _number(lambd, "hardshrink", "lambd", 2))


def softshrink(input, lambd=0.5):
    return _C._softshrink(input, _number(lambd, "softshrink", "lambd", 2))


def _int64_threshold(input, threshold, value):
    """The kernel takes its Scalars as doubles: an int64 input with an int Scalar beyond 2**53 is composed exactly
    instead (both Scalars converted to int64 first, as aten's kernel does); None otherwise."""
    if input.dtype != _C.int64:
        return None
    raw = [a.item() if isinstance(a, _C.Tensor) else a for a in (threshold, value)]
    if not any(isinstance(a, int) and abs(a) > 2 ** 53 for a in raw):
        return None
    th, v = (_C._full([], int(a), _C.int64, input.device) for a in raw)
    return _C.where(input > th, input, v)


def threshold(input, threshold, value, inplace=False):
    if inplace:
        return threshold_(input, threshold, value)
    args = _threshold_args(input, threshold, value, "threshold")
    exact = _int64_threshold(input, threshold, value)
    return exact if exact is not None else _C._threshold(input, *args)


def threshold_(input, threshold, value):
    args = _threshold_args(input, threshold, value, "threshold_")
    exact = _int64_threshold(input, threshold, value)
    if exact is not None:
        return _C._threshold_(input, *args) if input.numel() == 0 else input.copy_(exact)
    return _C._threshold_(input, *args)


def _rrelu_args(lower, upper):
    lower = _number(lower, "rrelu", "lower", 2)
    upper = _number(upper, "rrelu", "upper", 3)
    if not math.isfinite(lower):
        raise RuntimeError(f"rrelu: lower bound must be finite, got {_fmt(lower)}")
    if not math.isfinite(upper):
        raise RuntimeError(f"rrelu: upper bound must be finite, got {_fmt(upper)}")
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    return lower, upper


def _fmt(v):
    return "nan" if v != v else ("inf" if v > 0 else "-inf")


def _rrelu_dtype(input, training):
    if training and input.dtype == _C.float16:  # torch's CPU rrelu_with_noise has no Half kernel
        raise NotImplementedError("\"rrelu_with_noise_out_cpu\" not implemented for 'Half'")


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    if inplace:
        return rrelu_(input, lower, upper, training)
    lower, upper = _rrelu_args(lower, upper)
    _rrelu_dtype(input, training)
    if inplace:
        return _C._rrelu_(input, lower, upper, bool(training))
    return _C._rrelu(input, lower, upper, bool(training))


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    # in place: the written-to tensor's overlap and its dtype are checked before the bounds (torch's order)
    if input.numel() > 1 and any(st == 0 and sz > 1 for st, sz in zip(input.stride(), input.shape)):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a single "
                           "memory location. Please clone() the tensor before performing the operation.")
    lo, up = _number(lower, "rrelu_", "lower", 2), _number(upper, "rrelu_", "upper", 3)
    if not lo <= up:   # (NaN too)
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not input.is_floating_point():
        raise NotImplementedError(f"\"{'rrelu_with_noise_out_cpu' if training else 'leaky_relu_cpu'}\" not implemented "
                                  f"for '{_TORCH_TYPE_NAMES.get(str(input.dtype).split('.')[-1])}'")
    # aten's rrelu_ has no finiteness check (that is F.rrelu's): evaluation is a leaky_relu with the mean slope,
    # training draws the slopes with uniform_(lower, upper), which checks the bounds in the input's dtype
    _rrelu_dtype(input, training)
    if training:
        _fits(lo, input, opmath=True)
        _fits(up, input, opmath=True)
        if not up - lo <= _FINFO_MAX.get(str(input.dtype).split(".")[-1], _FLOAT_MAX):
            raise RuntimeError("Expected to - from <= std::numeric_limits<T>::max() to be true, but got false.  (Could "
                               "this error message be improved?  If so, please report an enhancement request to "
                               "PyTorch.)")
    else:
        _fits((lo + up) / 2, input, opmath=True)   # leaky_relu's negative_slope
    return _C._rrelu_(input, lo, up, bool(training))


_FINFO_MAX = {"float64": 1.7976931348623157e308, "float32": _FLOAT_MAX, "float16": 65504.0,
              "bfloat16": 3.3895313892515355e38}


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """torch's feature_alpha_dropout: alpha dropout with one draw per (sample, channel)."""
    F = _F()
    F._check_p(p)
    if p == 0.0 or not training or input.numel() == 0:
        return input
    if p == 1.0:
        return F._inplace(input, input * _C._full([], 0.0, input.dtype, input.device), inplace)
    if input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    alpha = 1.7580993408473766
    a = 1.0 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
    shape = list(input.shape[:2]) + [1] * (input.dim() - 2)
    keep = (F._dropout_mask(input, shape, p) != 0).to(input.dtype)
    b = (keep - 1) * (alpha * a) + alpha * a * p
    return F._inplace(input, input * (keep * a) + b, inplace)


# ---------------------------------------------------------------- normalisation
def _verify_spatial_size(size):
    n = 1
    for s in size[2:]:
        n *= s
    if n == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {size}")


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    if use_input_stats:
        _verify_spatial_size(input.size())
    # then torch.instance_norm: its parser's errors come before aten's checks
    return _F()._torch_call("instance_norm", _SIGS["fn"]["instance_norm"], _instance_norm, input, weight, bias,
                            running_mean, running_var, use_input_stats, momentum, eps, False)


def _instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    """torch.instance_norm: the engine's batch_norm over (1, N*C, *) with weight, bias and running stats repeated
    per sample; the running stats are the mean over the samples of the per-instance updates."""
    if not (_argparse._is_bool(use_input_stats) and _argparse._is_bool(cudnn_enabled)):
        # the parser's TypeError (a 0-d Tensor would pass the `if use_input_stats` below)
        args = (input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled)
        err = _argparse.parse_error("fn", "instance_norm", args, {})
        if err is not None:
            raise err
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    N, C = input.size(0), input.size(1)   # aten's sym_size: a 0-d / 1-d input's IndexError
    x = input.reshape([1, N * C] + list(input.shape[2:]))
    w = weight.repeat(N) if weight is not None else None
    b = bias.repeat(N) if bias is not None else None
    rm = running_mean.repeat(N) if running_mean is not None else None
    rv = running_var.repeat(N) if running_var is not None else None
    out = _C._batch_norm(x, rm, rv, w, b, bool(use_input_stats), float(momentum), float(eps))
    if use_input_stats:
        with _no_grad():
            if running_mean is not None:
                running_mean.copy_(rm.view(N, C).mean(0))
            if running_var is not None:
                running_var.copy_(rv.view(N, C).mean(0))
    return out.view(input.shape)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    F = _F()
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = input.mul(input)
    if dim == 3:
        div = div.unsqueeze(1)
        div = F.pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = F.avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.size()
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = F.pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = F.avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1)
        div = div.view(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div


# ---------------------------------------------------------------- embedding_bag
def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """torch.nn.functional.embedding_bag composed of the engine's index ops: the rows of `weight` gathered
    (index_select), weighted, then summed per bag (index_add), averaged or maxed."""
    F = _F()
    if weight.dtype == _C.int64 and input.is_floating_point():
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, input, "
                      "...)` is deprecated, and should now be `embedding_bag(input, weight, ...)`.", stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and tuple(input.size()) != tuple(per_sample_weights.size()):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it must "
                         f"have the same shape as the input ({input.shape})")
    if not weight.dim() == 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed "
                             f"length sequences. However, found offsets of type {type(offsets)}")
        B, L = input.shape
        # torch's body builds these offsets with arange(0, numel, L, dtype=input.dtype): its errors (a bool input, an
        # empty L) come before the mode check
        _creation.arange(0, input.numel(), L, dtype=input.dtype, device=input.device)
        offsets_l = [i * L for i in range(B)]
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        offsets_l = [int(o) for o in offsets.tolist()]
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    if input.dtype not in (_C.int64, _C.int32):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {F._type_name(input.dtype)} instead (while checking arguments for "
                           "embedding_bag)")
    if max_norm is not None:
        F._embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only supported "
                                  f"for mode='sum' (got mode='{mode}'). Please open a feature request on GitHub.")
    n = input.numel()
    num_weights = weight.size(0)
    if padding_idx is not None:
        if padding_idx < 0:
            if padding_idx < -num_weights:
                raise AssertionError("padding_idx must be within the number of embeddings")  # torch: TORCH_CHECK
            padding_idx += num_weights
        elif padding_idx >= num_weights:
            raise RuntimeError("padding_idx must be within the number of embeddings, -" + str(num_weights) + " through "
                               + str(num_weights - 1) + ", but got " + str(padding_idx))
    if offsets_l and offsets_l[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {offsets_l[0]}")
    if offsets_l and offsets_l[-1] > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length ({n}), but got offsets[-1] of "
                           f"{offsets_l[-1]}")
    if include_last_offset:
        bounds = offsets_l
        B = len(offsets_l) - 1
    else:
        bounds = offsets_l + [n]
        B = len(offsets_l)
    if B < 0:
        B = 0
    idx_list = [int(i) for i in input.tolist()]
    for i in idx_list:
        if i < 0 or i >= num_weights:
            raise IndexError("index out of range in self")
    bag_of = [0] * n
    for bag in range(B):
        for j in range(bounds[bag], min(bounds[bag + 1], n)):
            bag_of[j] = bag
    keep = [padding_idx is None or i != padding_idx for i in idx_list]
    # positions past the last bag (include_last_offset with a short last offset) belong to no bag
    in_bag = [False] * n
    for bag in range(B):
        for j in range(bounds[bag], min(bounds[bag + 1], n)):
            in_bag[j] = True
    sel = [j for j in range(n) if keep[j] and in_bag[j]]
    D = weight.size(1)
    out_shape = [B, D]
    if not sel:
        return weight.new_zeros(*out_shape)
    sel_t = _ag.tensor(sel, dtype=_ag.int64, device=weight.device)
    rows = weight.index_select(0, input.reshape(-1).to(_ag.int64).index_select(0, sel_t))
    bags = _ag.tensor([bag_of[j] for j in sel], dtype=_ag.int64, device=weight.device)
    low = weight.dtype in (_C.bfloat16, _C.float16) and mode in ("sum", "mean")
    if low:  # torch accumulates a half / bfloat16 bag in float32 and rounds once
        rows = rows.to(_C.float32)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1).index_select(0, sel_t).unsqueeze(1).to(rows.dtype)
    if mode in ("sum", "mean"):
        out = _ag.zeros(out_shape, dtype=rows.dtype, device=rows.device).index_add(0, bags, rows)
        if mode == "mean":
            counts = [0] * B
            for j in sel:
                counts[bag_of[j]] += 1
            denom = _ag.tensor([float(max(c, 1)) for c in counts], dtype=rows.dtype, device=rows.device)
            out = out / denom.unsqueeze(1)
        return out.to(weight.dtype) if low else out
    # max: per bag, the elementwise max over its rows (an empty bag gives zeros)
    pieces = []
    start = 0
    bag_list = [bag_of[j] for j in sel]
    zero_row = None
    for bag in range(B):
        end = start
        while end < len(bag_list) and bag_list[end] == bag:
            end += 1
        if end > start:
            pieces.append(rows[start:end].amax(0))
        else:
            if zero_row is None:
                zero_row = _ag.zeros(D, dtype=rows.dtype, device=rows.device)
            pieces.append(zero_row)
        start = end
    return _ag.stack(pieces) if pieces else _ag.zeros(out_shape, dtype=rows.dtype, device=rows.device)


# ---------------------------------------------------------------- losses
def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * _ag.ones_like(input)
    elif not isinstance(var, _C.Tensor):
        raise TypeError(f"any() received an invalid combination of arguments - got ({type(var).__name__}), but "
                        "expected one of:\n * (Tensor input, *, Tensor out = None)")
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.size()) != tuple(input.size()):
        if tuple(input.size()[:-1]) == tuple(var.size()):
            var = var.unsqueeze(-1)
        elif input.ndim == var.ndim and sum(y for x, y in zip(input.size(), var.size()) if x != y) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with _no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    F = _F()
    if size_average is not None or reduce is not None:
        reduction = _Reduction.legacy_get_string(size_average, reduce)
    if not input.is_floating_point():
        raise NotImplementedError(f"\"log_sigmoid_cpu\" not implemented for '{_TORCH_TYPE_NAMES.get(str(input.dtype).split('.')[-1], F._type_name(input.dtype))}'")
    loss = -(target * F.logsigmoid(input) + (1 - target) * F.logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    C = input.size(class_dim)
    loss = loss.sum(dim=class_dim) / C
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(reduction + " is not valid")


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    F = _F()
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a_dim, p_dim, n_dim = anchor.ndim, positive.ndim, negative.ndim
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a_dim}D, positive {p_dim}D, and negative {n_dim}D inputs")
    if distance_function is None:
        distance_function = F.pairwise_distance
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_neg = _C.minimum(dist_neg, distance_function(positive, negative))
    loss = (margin + dist_pos - dist_neg).clamp_min(0)
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.mean()
    return loss


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -_ag.empty_like(logits).exponential_().log()
    gumbels = (logits + gumbels) / tau
    y_soft = gumbels.softmax(dim)
    if hard:
        index = y_soft.max(dim, keepdim=True)[1]
        y_hard = _ag.zeros_like(logits).scatter_(dim, index, 1.0)
        return y_hard - y_soft.detach() + y_soft
    return y_soft
