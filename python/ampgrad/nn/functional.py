"""ampgrad.nn.functional: torch.nn.functional's signatures. Activations, linear, softmax, convolutions
and pooling are C++ ops (the functions here parse arguments); normalisations and losses are composed
here from differentiable ops, each starting with the autocast hook of its op row (csrc/ops/op_list.def)."""
import builtins
import collections.abc
import functools
import math
import numbers
import warnings

import numpy as np

from .. import _C, _argparse
from .._signatures import SIGS as _SIGS
# Private aliases: importing the plain names would add public names (rand, arange, ...) to nn.functional.
from .._creation import arange as _arange, rand as _rand, _cpp_type_name, _dtype_name
from .._dtype_info import finfo as _finfo
from .._op_gate import engine_op
from .._functions import broadcast_tensors as _broadcast_tensors
from ..autograd import no_grad as _no_grad
from . import _reduction as _Reduction



# ---------------------------------------------------------------- activations
def linear(input, weight, bias=None):
    return _C._linear(input, weight, bias)


def _inplace(input, out, inplace):
    # In-place variants of composed activations: computed out of place, then written back.
    return input.copy_(out) if inplace else out


def relu(input, inplace=False):
    return input.relu_() if inplace else _C.relu(input)


def relu_(input):
    return input.relu_()


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def gelu(input, approximate="none"):
    return _C._gelu(input, approximate)


def silu(input, inplace=False):
    return input.silu_() if inplace else _C.silu(input)


def sigmoid(input):
    return input.sigmoid()  # torch's body: a non-Tensor raises its AttributeError


def tanh(input):
    return input.tanh()


def softplus(input, beta=1.0, threshold=20.0):
    return _C._softplus(input, float(beta), float(threshold))


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _C._leaky_relu_(input, float(negative_slope)) if inplace else _C._leaky_relu(input, float(negative_slope))


def leaky_relu_(input, negative_slope=0.01):
    return _C._leaky_relu_(input, float(negative_slope))


def elu(input, alpha=1.0, inplace=False):
    return _C._elu_(input, float(alpha), 1.0, 1.0) if inplace else _C._elu(input, float(alpha), 1.0, 1.0)


def elu_(input, alpha=1.0, scale=1.0, input_scale=1.0):
    # torch's F.elu_ is aten's elu_ (the SELU-style scale / input_scale included)
    return _C._elu_(input, float(alpha), float(scale), float(input_scale))


def celu(input, alpha=1.0, inplace=False):
    return _C._celu_(input, float(alpha)) if inplace else _C._celu(input, float(alpha))


def celu_(input, alpha=1.0):
    return _C._celu_(input, float(alpha))


def selu(input, inplace=False):
    return _C._selu_(input) if inplace else _C._selu(input)


def selu_(input):
    return _C._selu_(input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _hardtanh(input, min_val, max_val, inplace)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    # torch's F.hardtanh_ is aten's op: no min_val <= max_val check (the clamp gives max_val everywhere)
    return _hardtanh(input, min_val, max_val, True)


def _hardtanh(input, min_val, max_val, inplace):
    out = input.clamp(min_val, max_val)
    if not input.is_floating_point() and input.dtype != _C.bool:
        out = out.to(input.dtype)  # torch's hardtanh keeps an integer input's dtype (float bounds truncate)
    return _inplace(input, out, inplace)


def hardsigmoid(input, inplace=False):
    return _C._hardsigmoid_(input) if inplace else _C._hardsigmoid(input)


def hardswish(input, inplace=False):
    return _C._hardswish_(input) if inplace else _C._hardswish(input)


def mish(input, inplace=False):
    return _C._mish_(input) if inplace else _C._mish(input)


def logsigmoid(input):
    return _C._log_sigmoid(input)


def softsign(input):
    return input / (input.abs() + 1)


def tanhshrink(input):
    return input - input.tanh()   # torch's body: a non-Tensor input is its AttributeError


def _raise_parse_error(name, args, kwargs=None, sig=None):
    """Raises the error torch's parser raises for its C++-bound op `name` (SIGS["fn"]'s signatures, or sig in SIGS'
    format) called with these arguments, if any: for a composition's up-front check of an argument that its body
    would accept but torch's parser does not."""
    err = (_argparse.parse_error("fn", name, args, kwargs or {}) if sig is None
           else _argparse.sig_parse_error(name, sig, args, kwargs))
    if err is not None:
        raise err


def _torch_call(name, sig, f, *args, **kwargs):
    """f(*args, **kwargs) where torch's Python body calls its C++-bound op `name` (signature sig, SIGS' format) with
    those arguments: on failure, the error torch's parser raises for them, if any."""
    try:
        return f(*args, **kwargs)
    except Exception:
        err = _argparse.sig_parse_error(name, sig, args, kwargs)
        if err is None:
            raise
    raise err


def glu(input, dim=-1):
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    return _torch_call("glu", ("Tensor input, int dim=",), _glu, input, dim)


def _glu(input, dim):
    if input.size(dim) % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim % input.dim()} is size {input.size(dim)}")
    if not input.is_floating_point():
        raise NotImplementedError(f"\"glu_cpu\" not implemented for '{_dtype_name(input.dtype)}'")
    a, b = input.chunk(2, dim)
    return a * _C.sigmoid(b)


@engine_op("prelu")
def prelu(input, weight):
    if weight.numel() != 1:
        channels = input.shape[1] if input.dim() >= 2 else input.shape[0] if input.dim() == 1 else 1
        if input.dim() == 0 or weight.numel() != channels:
            raise RuntimeError("Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{weight.numel()} and channel size = {channels}.")
        if input.dim() >= 2:
            weight = weight.reshape([channels] + [1] * (input.dim() - 2))
    elif input.dim() == 0:
        weight = weight.reshape(())  # a 0-d input keeps its shape (torch)
    return _C.where(input > 0, input, weight * input)


def _softmax_dim(name, ndim, stacklevel):
    # torch's _get_softmax_dim: the deprecation warning first (a non-int _stacklevel is Python's TypeError there)
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an "
                  "argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


# torch's bodies call the Tensor method: a non-Tensor input is its AttributeError, a bad dim / dtype the method's
# TypeError
def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    return input.softmax(dim) if dtype is None else input.softmax(dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    return input.log_softmax(dim) if dtype is None else input.log_softmax(dim, dtype=dtype)


@engine_op("softmin")
def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel)
    # torch negates in the input's dtype, then converts
    return (-input).softmax(dim) if dtype is None else (-input).softmax(dim, dtype=dtype)


@engine_op("scaled_dot_product_attention")
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """softmax(q k^T * scale + mask) v: the fused kernel where torch's CPU takes its flash path (4-d
    inputs, no dropout; ops/attention.cpp), torch's reference math otherwise (masks: bool = keep,
    float = added)."""
    try:
        fused = _C._sdpa_flash(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
        if fused is not None:
            return fused
        if query.dtype in (_C.float16, _C.bfloat16) and key.dtype == query.dtype and value.dtype == query.dtype:
            # torch's math path keeps float16 / bfloat16 attention in float32 (dropout mask included) and
            # rounds the result once.
            out = _sdpa_math(query.float(), key.float(), value.float(), attn_mask, dropout_p, is_causal, scale,
                             enable_gqa)
            return out.to(query.dtype)
        return _sdpa_math(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
    except Exception:
        # torch's validate_sdpa_input: same dtype, same device (the engine's checks), then at least 2 dims each
        qkv = (query, key, value)
        if (all(isinstance(t, _C.Tensor) for t in qkv) and query.dtype == key.dtype == value.dtype
                and query.device == key.device == value.device and builtins.min(t.dim() for t in qkv) < 2):
            raise RuntimeError("Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                               f"{query.dim()} key.dim: {key.dim()} and value.dim: {value.dim()} instead.") from None
        raise


def _sdpa_math(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    """torch's _scaled_dot_product_attention_math, in the inputs' dtype."""
    L, S = query.size(-2), key.size(-2)
    scale_factor = 1 / math.sqrt(query.size(-1)) if scale is None else scale
    if enable_gqa and query.dim() >= 3 and key.size(-3) != query.size(-3):
        # Each key/value head serves query.size(-3) // key.size(-3) query heads (repeat_interleave).
        rep = query.size(-3) // key.size(-3)

        def interleave(t):
            shape = list(t.shape)
            t = t.unsqueeze(-3).expand(shape[:-2] + [rep] + shape[-2:])
            return t.reshape(shape[:-3] + [shape[-3] * rep] + shape[-2:])
        key, value = interleave(key), interleave(value)
    w = _C.matmul(query, key.transpose(-2, -1)) * scale_factor
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                               "is_causal=True")
        keep = _C._full([L, S], True, _C.bool, query.device).tril()
        w = w.masked_fill(keep.logical_not(), float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == _C.bool:
            w = _C.where(attn_mask, w, float("-inf"))
        else:
            w = w + attn_mask
    w = _C._softmax(w, -1, None)
    if dropout_p > 0.0:
        if dropout_p > 1.0:  # aten's dropout check (a RuntimeError; F.dropout's own is a ValueError)
            raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {float(dropout_p):g}")
        w = dropout(w, dropout_p, True)
    return _C.matmul(w, value)


# ---------------------------------------------------------------- dropout
def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p != p:  # NaN passes the comparisons above; torch's native dropout raises RuntimeError for it
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout_mask(input, shape, p):
    # Keep where U[0,1) >= p, scaled by 1 / (1 - p) (p == 1 zeroes all). The masks follow torch's
    # distribution, not its draws: torch's CPU bernoulli_ uses a vectorised sampler of its own.
    if input.is_floating_point() and input.device.type == "cpu":  # one kernel: the mask drawn and scaled in the input's dtype
        return _C._dropout_mask(list(shape), input.dtype, input.device, p)
    keep = _rand(*shape, dtype=input.dtype if input.is_floating_point() else None, device=input.device) >= p
    scale = 0.0 if p == 1.0 else 1.0 / (1.0 - p)
    return keep.to(input.dtype) * scale


_DROPOUT_SIG = ("Tensor input, float p, bool train",)   # _VF.dropout / feature_dropout / alpha_dropout (and _)


def _native_dropout(op, input, p, training, inplace):
    """The checks of torch's _VF.<op>(input, p, train) (op_ in place) that torch's Python body ends in: its parser
    takes only a bool train; aten scales its mask (div_ by 1 - p) in the input's dtype, which an integer input
    cannot hold."""
    if not _argparse._is_bool(training):
        _raise_parse_error(op + "_" * builtins.bool(inplace), (input, p, training), sig=_DROPOUT_SIG)
    if (training and 0.0 < p < 1.0 and isinstance(input, _C.Tensor) and not input.is_floating_point()
            and not input.is_complex() and input.numel()):
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_C._scalar_type_name(input.dtype)}")


def dropout(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    _native_dropout("dropout", input, p, training, inplace)
    if not training or p == 0.0:
        return input
    if input.is_floating_point() and input.device.type == "cpu":  # input * mask in one pass (ops/nn_misc.cpp)
        return _inplace(input, _C._dropout(input, p), inplace)
    out = input * _dropout_mask(input, input.shape, p)
    if not input.is_floating_point():
        out = out.to(input.dtype)  # torch keeps the input's dtype
    return _inplace(input, out, inplace)


def _feature_dropout(input, p, training, inplace, batched_dim, name):
    _check_p(p)
    if input.dim() not in (batched_dim - 1, batched_dim):
        raise RuntimeError(f"{name}: Expected {batched_dim - 1}D or {batched_dim}D input, but received a "
                           f"{input.dim()}D input.")
    _native_dropout("feature_dropout", input, p, training, inplace)
    if not training or p == 0.0:
        return input
    # One draw per (sample, channel), broadcast over the spatial dims.
    keep_dims = 2 if input.dim() == batched_dim else 1
    shape = list(input.shape[:keep_dims]) + [1] * (input.dim() - keep_dims)
    out = input * _dropout_mask(input, shape, p)
    if not input.is_floating_point():
        out = out.to(input.dtype)  # torch keeps the input's dtype
    return _inplace(input, out, inplace)


def dropout1d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout(input, p, training, inplace, 3, "dropout1d")


def dropout2d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    d = input.dim()
    if d not in (3, 4):
        warnings.warn(f"dropout2d: Received a {d}-D input to dropout2d, which is deprecated and will result in an error "
                      "in a future release. To retain the behavior and silence this warning, please use dropout instead. "
                      "Note that dropout2d exists to provide channel-wise dropout on inputs with 2 spatial dimensions, a "
                      "channel dimension, and an optional batch dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if d == 3:  # torch: a 3-D input is (N, C, L) here, as dropout1d (pytorch/pytorch#77081)
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior is "
                      "desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior will "
                      "change in a future release to interpret the input as one without a batch dimension, i.e. shape "
                      "(C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using dropout1d "
                      "instead.", stacklevel=2)
    _native_dropout("feature_dropout", input, p, training, inplace)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if d < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    out = input * _dropout_mask(input, list(input.shape[:2]) + [1] * (d - 2), p)
    if not input.is_floating_point():
        out = out.to(input.dtype)
    return _inplace(input, out, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    if input.dim() not in (4, 5):
        warnings.warn(f"dropout3d: Received a {input.dim()}-D input to dropout3d, which is deprecated and will result in an "
                      "error in a future release. To retain the behavior and silence this warning, please use dropout "
                      "instead. Note that dropout3d exists to provide channel-wise dropout on inputs with 3 spatial "
                      "dimensions, a channel dimension, and an optional batch dimension (i.e. 4D or 5D inputs).", stacklevel=2)
    _native_dropout("feature_dropout", input, p, training, inplace)
    if not training or p == 0.0:
        return input
    batched = input.dim() == 5
    x = input if batched else input.unsqueeze(0)
    shape = list(x.shape[:2]) + [1] * (x.dim() - 2)  # one draw per (sample, channel)
    out = x * _dropout_mask(x, shape, p)
    if not batched:
        out = out.squeeze(0)
    if not input.is_floating_point():
        out = out.to(input.dtype)
    return _inplace(input, out, inplace)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """torch's alpha_dropout: kept values scaled and shifted so that a SELU input keeps its mean and
    variance (the keep mask from dropout's kernel)."""
    _check_p(p)
    if not isinstance(training, builtins.bool):
        raise TypeError(f"alpha_dropout(): argument 'train' (position 3) must be bool, not {type(training).__name__}")
    if p == 0.0 or not training or input.numel() == 0:
        return input
    if p == 1.0:
        return _inplace(input, input * _C._full([], 0.0, input.dtype, input.device), inplace)
    alpha = 1.7580993408473766
    a = 1.0 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
    keep = (_dropout_mask(input, input.shape, p) != 0).to(input.dtype)
    b = (keep - 1) * (alpha * a) + alpha * a * p
    return _inplace(input, input * (keep * a) + b, inplace)


# ---------------------------------------------------------------- convolutions
def _tuple(x, n, name, op):
    if isinstance(x, numbers.Integral):
        return (int(x),) * n
    x = tuple(int(v) for v in x)
    if len(x) == 1:
        return x * n
    if len(x) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} values to match the "
                           f"convolution dimensions, but got {name}={list(x)}")
    return x


def _on(idx, device):
    return idx if device.type == "cpu" else idx.to(device)


def _check_conv_dtypes(input, weight, bias):
    if input.dtype != weight.dtype:
        raise RuntimeError(f"Input type ({input.dtype}) and weight type ({weight.dtype}) should be the same")
    if bias is not None and bias.dtype != input.dtype:
        raise RuntimeError(f"Input type ({input.dtype}) and bias type ({bias.dtype}) should be the same")


def _conv_prepare(input, weight, nd, name, transposed=False):
    if weight.dim() != nd + 2:
        raise RuntimeError(f"weight should have {nd + 2} dimensions for {name}, but got weight of size "
                           f"{list(weight.shape)}")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got input "
                           f"of size: {list(input.shape)}")
    batched = input.dim() == nd + 2
    return (input if batched else input.unsqueeze(0)), batched


def _conv_padding(padding, nd, stride, dilation, kernel):
    """Per-dim (before, after) pads; 'same' puts the odd extra pad after, as torch does."""
    if isinstance(padding, str):
        if padding == "valid":
            return [(0, 0)] * nd
        if padding == "same":
            if builtins.any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            out = []
            for d, k in zip(dilation, kernel):
                total = d * (k - 1)
                out.append((total // 2, total - total // 2))
            return out
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    p = _tuple(padding, nd, "padding", "conv")
    if builtins.any(v < 0 for v in p):
        raise RuntimeError("negative padding is not supported")
    return [(v, v) for v in p]


def _convnd(input, weight, bias, stride, padding, dilation, groups, nd, name):
    """conv1d/2d/3d: argument parsing, then the engine op convolution (csrc/ops/conv.cpp)."""
    x, batched = _conv_prepare(input, weight, nd, name)
    _check_conv_dtypes(x, weight, bias)
    stride = _tuple(stride, nd, "stride", name)
    dilation = _tuple(dilation, nd, "dilation", name)
    if builtins.any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    pads = _conv_padding(padding, nd, stride, dilation, weight.shape[2:])
    if builtins.any(a != b for a, b in pads):
        # 'same' with an odd total: the extra zero goes after, padded explicitly (as torch's _convolution_mode)
        extra = []
        for a, b in reversed(pads):
            extra += [0, b - a]
        x = pad(x, extra)
    out = _C._convolution(x, weight, bias, list(stride), [a for a, _ in pads], list(dilation), False, [0] * nd, groups)
    return out if batched else out.squeeze(0)


@engine_op("conv1d")
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


@engine_op("conv2d")
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


@engine_op("conv3d")
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def _conv_transposend(input, weight, bias, stride, padding, output_padding, groups, dilation, nd, name):
    x, batched = _conv_prepare(input, weight, nd, name, transposed=True)
    _check_conv_dtypes(x, weight, bias)
    stride = _tuple(stride, nd, "stride", name)
    dilation = _tuple(dilation, nd, "dilation", name)
    padding = _tuple(padding, nd, "padding", name)
    output_padding = _tuple(output_padding, nd, "output_padding", name)
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    for op, s, d in zip(output_padding, stride, dilation):
        if op >= s and op >= d:
            if nd == 2:
                raise RuntimeError("output padding must be smaller than either stride or dilation, but got "
                                   f"output_padding_height: {output_padding[0]} output_padding_width: "
                                   f"{output_padding[1]} stride_height: {stride[0]} stride_width: {stride[1]} "
                                   f"dilation_height: {dilation[0]} dilation_width: {dilation[1]}")
            raise RuntimeError("output padding must be smaller than either stride or dilation, but got "
                               f"output_padding: {op} stride: {s} dilation: {d}")
    out = _C._convolution(x, weight, bias, list(stride), list(padding), list(dilation), True, list(output_padding), groups)
    return out if batched else out.squeeze(0)


@engine_op("conv_transpose1d")
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transposend(input, weight, bias, stride, padding, output_padding, groups, dilation, 1,
                             "conv_transpose1d")


@engine_op("conv_transpose2d")
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transposend(input, weight, bias, stride, padding, output_padding, groups, dilation, 2,
                             "conv_transpose2d")


@engine_op("conv_transpose3d")
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transposend(input, weight, bias, stride, padding, output_padding, groups, dilation, 3,
                             "conv_transpose3d")


# ---------------------------------------------------------------- pooling (engine ops: csrc/ops/pool.cpp)
_TORCH_TYPE_NAMES = {"ampgrad.int64": "Long", "ampgrad.int32": "Int", "ampgrad.int16": "Short", "ampgrad.int8": "Char",
                     "ampgrad.uint8": "Byte", "ampgrad.bool": "Bool"}


def _pool_arg(x, nd, name, fn, default=None):
    if x is None:
        return default
    if isinstance(x, numbers.Integral):
        return (int(x),) * nd
    x = tuple(int(v) for v in x)
    if len(x) == 1:
        return x * nd
    if len(x) != nd:
        raise RuntimeError(f"{fn}: {name} must either be a single int, or a tuple of {nd} ints")
    return x


def _check_input(input, fn):
    if not isinstance(input, _C.Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")


def _pool_args(nd, fn, kernel_size, stride, padding, dilation=1):
    k = _pool_arg(kernel_size, nd, "kernel_size", fn)
    s = _pool_arg(stride, nd, "stride", fn, k) if not (isinstance(stride, (tuple, list)) and len(stride) == 0) else k
    return k, s, _pool_arg(padding, nd, "padding", fn), _pool_arg(dilation, nd, "dilation", fn)


def _unsqueeze_1d(input, fn):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"{fn}() Expected 2D or 3D input tensor, but got {list(input.shape)}")
    return input.unsqueeze(-2)


def _max_pool(nd, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, fn):
    try:
        return _max_pool_body(nd, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, fn)
    except Exception:
        # torch parses the arguments of torch.max_pool<N>d / max_pool<N>d_with_indices before anything runs (its
        # F.max_pool3d_with_indices reads input.is_cuda first)
        if nd == 3 and return_indices and not isinstance(input, _C.Tensor):
            err = AttributeError(f"'{type(input).__name__}' object has no attribute 'is_cuda'")
        else:
            err = _argparse.sig_parse_error(fn + "_with_indices" * builtins.bool(return_indices), _SIGS["fn"][fn],
                                        (input, kernel_size, [] if stride is None else stride, padding, dilation,
                                         ceil_mode))
        if err is None:
            raise
    raise err


def _max_pool_body(nd, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, fn):
    _check_input(input, fn)
    k, s, p, d = _pool_args(nd, fn, kernel_size, stride, padding, dilation)
    if nd == 1:
        if not input.dtype.is_floating_point and not return_indices:  # (torch's max_pool1d kernel is float only)
            raise NotImplementedError(f'"max_pool1d_impl" not implemented for \'{_TORCH_TYPE_NAMES.get(str(input.dtype), input.dtype)}\'')
        if p[0] > k[0] // 2:
            raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got padding={p[0]} "
                               f"and kernel_size={k[0]}")
        out, idx = _C._max_pool(_unsqueeze_1d(input, "max_pool1d"), [1, k[0]], [1, s[0]], [0, p[0]], [1, d[0]],
                                builtins.bool(ceil_mode))
        out, idx = out.squeeze(-2), idx.squeeze(-2)
    else:
        out, idx = _C._max_pool(input, list(k), list(s), list(p), list(d), builtins.bool(ceil_mode))
    return (out, idx) if return_indices else out


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _max_pool(1, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, "max_pool1d")


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, "max_pool2d")


@engine_op("max_pool3d")
def _max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode):
    return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode, False, "max_pool3d")


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    if return_indices:  # (torch's max_pool3d_with_indices has no autocast policy)
        return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode, True, "max_pool3d")
    return _max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode)


# torch's *_with_indices take return_indices too (and ignore it): always (values, indices)
def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    _check_input(input, "avg_pool1d")
    k, s, p, _ = _pool_args(1, "avg_pool1d", kernel_size, stride, padding)
    out = _C._avg_pool(_unsqueeze_1d(input, "avg_pool1d"), [1, k[0]], [1, s[0]], [0, p[0]], builtins.bool(ceil_mode),
                       builtins.bool(count_include_pad), None)
    return out.squeeze(-2)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None):
    _check_input(input, "avg_pool2d")
    k, s, p, _ = _pool_args(2, "avg_pool2d", kernel_size, stride, padding)
    if input.dim() < 3 and divisor_override != 0 and builtins.all(-2 ** 31 <= v < 2 ** 31 for v in k + s + p):
        input.size(-3)  # torch's avg_pool2d reads the plane count (after its int casts) before its dim check
    return _C._avg_pool(input, list(k), list(s), list(p), builtins.bool(ceil_mode), builtins.bool(count_include_pad),
                        divisor_override)


@engine_op("avg_pool3d")
def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None):
    _check_input(input, "avg_pool3d")
    k, s, p, _ = _pool_args(3, "avg_pool3d", kernel_size, stride, padding)
    return _C._avg_pool(input, list(k), list(s), list(p), builtins.bool(ceil_mode), builtins.bool(count_include_pad),
                        divisor_override)


def _adaptive_size(output_size, input, nd, fn):
    defaults = input.size()  # (first, as torch's _list_with_default: a non-tensor input is an AttributeError)
    if isinstance(output_size, numbers.Integral):
        if not -2 ** 63 <= output_size < 2 ** 63:  # (torch's parser takes the one int)
            raise ValueError("Overflow when unpacking long long")
        return [int(output_size)] * nd
    sizes = list(output_size)
    if nd > 1 and len(defaults) <= len(sizes):
        raise ValueError(f"Input dimension should be at least {len(sizes) + 1}")
    if len(sizes) != nd:
        raise RuntimeError(f"{fn}: output_size must be {nd}")
    return [defaults[i - nd] if v is None else int(v) for i, v in enumerate(sizes)]


def _mean_path_dtype(input, sizes):
    """aten's adaptive_avg_pool with an output of ones is input.mean(...): an integer input gets mean's error."""
    if isinstance(input, _C.Tensor) and not input.is_floating_point() and all(s == 1 for s in sizes):
        input.mean()   # raises mean()'s "could not infer output dtype"


def adaptive_avg_pool1d(input, output_size):
    (o,) = _adaptive_size(output_size, input, 1, "adaptive_avg_pool1d")
    _mean_path_dtype(input, (1, o))
    return _C._adaptive_avg_pool(_unsqueeze_1d(input, "adaptive_avg_pool1d"), [1, o]).squeeze(-2)


def adaptive_avg_pool2d(input, output_size):
    size = _adaptive_size(output_size, input, 2, "adaptive_avg_pool2d")
    _mean_path_dtype(input, size)
    return _torch_call("adaptive_avg_pool2d", ("Tensor input, int[2] output_size",), _C._adaptive_avg_pool, input, size)


@engine_op("adaptive_avg_pool3d")
def adaptive_avg_pool3d(input, output_size):
    size = _adaptive_size(output_size, input, 3, "adaptive_avg_pool3d")
    _mean_path_dtype(input, size)
    return _torch_call("adaptive_avg_pool3d", ("Tensor input, int[3] output_size",), _C._adaptive_avg_pool, input, size)


def _adaptive_max(nd, input, output_size, return_indices, fn):
    size = _adaptive_size(output_size, input, nd, fn)
    if nd == 1:
        out, idx = _C._adaptive_max_pool(_unsqueeze_1d(input, fn), [1] + size)
        out, idx = out.squeeze(-2), idx.squeeze(-2)
    else:
        out, idx = _C._adaptive_max_pool(input, size)
    return (out, idx) if return_indices else out


def adaptive_max_pool1d(input, output_size, return_indices=False):
    return _adaptive_max(1, input, output_size, return_indices, "adaptive_max_pool1d")


def adaptive_max_pool2d(input, output_size, return_indices=False):
    return _adaptive_max(2, input, output_size, return_indices, "adaptive_max_pool2d")


@engine_op("adaptive_max_pool3d")
def adaptive_max_pool3d(input, output_size, return_indices=False):
    return _adaptive_max(3, input, output_size, return_indices, "adaptive_max_pool3d")


# ---------------------------------------------------------------- sampling
def _reflect(x, twice_low, twice_high):
    """torch's reflect_coordinates: folds x into [low, high] by reflecting at the borders."""
    if twice_low == twice_high:
        return x.new_zeros(()).expand_as(x)
    lo, span = twice_low / 2, (twice_high - twice_low) / 2
    x = (x - lo).abs()
    extra = x.fmod(span)
    flips = (x / span).floor()
    return _C.where(flips.remainder(2) == 0, extra + lo, span - extra + lo)


def _grid_coord(g, size, padding_mode, align_corners):
    x = (g + 1) / 2 * (size - 1) if align_corners else ((g + 1) * size - 1) / 2
    if padding_mode == "reflection":
        x = _reflect(x, 0, 2 * (size - 1)) if align_corners else _reflect(x, -1, 2 * size - 1)
    if padding_mode in ("border", "reflection"):
        x = x.clamp(0, size - 1)
    return x


@engine_op("grid_sample")
def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    # torch's order: mode and padding_mode (ValueError), then torch.grid_sampler's parser (TypeError)
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but "
                         f"got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    for pos, (name, t) in enumerate((("input", input), ("grid", grid)), 1):
        if not isinstance(t, _C.Tensor):
            raise TypeError(f"grid_sampler(): argument '{name}' (position {pos}) must be Tensor, not {type(t).__name__}")
    if align_corners is None:
        align_corners = False
    if input.dim() == 5:
        return _grid_sample_3d(input, grid, mode, padding_mode, align_corners)
    if input.dim() != 4 or grid.dim() != 4 or grid.shape[0] != input.shape[0] or grid.shape[3] != 2:
        raise RuntimeError(f"grid_sampler(): expected 4D input and grid with same number of dimensions, batch size and "
                           f"a last grid dimension of 2, but got input with sizes {list(input.shape)} and grid with "
                           f"sizes {list(grid.shape)}")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have same dtype, but input has "
                           f"{input.dtype} and grid has {grid.dtype}")
    N, C, H, W = input.shape
    Ho, Wo = grid.shape[1], grid.shape[2]
    flat = input.reshape(N, C, H * W)

    def tap(xi, yi):  # input values at integer coordinates; zero outside
        valid = ((xi >= 0) & (xi <= W - 1) & (yi >= 0) & (yi <= H - 1)).to(input.dtype)
        # integer coordinates (exact in the input's dtype) become int64 before the flat index: a bf16 / fp16
        # product y * W + x is not exact past 256 / 2048
        yl, xl = yi.clamp(0, H - 1).to(_C.int64), xi.clamp(0, W - 1).to(_C.int64)
        idx = (yl * W + xl).reshape(N, 1, Ho * Wo)
        vals = flat.gather(2, idx.expand(N, C, Ho * Wo)).reshape(N, C, Ho, Wo)
        return vals * valid.unsqueeze(1)

    if mode == "bicubic":
        # torch's bicubic: unnormalized coordinates, 4x4 taps each mapped by the padding mode, A = -0.75
        ix = (grid[..., 0] + 1) / 2 * (W - 1) if align_corners else ((grid[..., 0] + 1) * W - 1) / 2
        iy = (grid[..., 1] + 1) / 2 * (H - 1) if align_corners else ((grid[..., 1] + 1) * H - 1) / 2
        x0, y0 = ix.floor().detach(), iy.floor().detach()
        wx, wy = _cubic_weights(ix - x0), _cubic_weights(iy - y0)

        def coord(v, size):
            if padding_mode == "zeros":
                return v
            return _grid_coord_pad(v, size, padding_mode, align_corners).detach()
        out = None
        for j in range(4):
            yj = coord(y0 - 1 + j, H)
            row = None
            for i in range(4):
                term = tap(coord(x0 - 1 + i, W), yj) * wx[i].unsqueeze(1)
                row = term if row is None else row + term
            term = row * wy[j].unsqueeze(1)
            out = term if out is None else out + term
        return out
    ix = _grid_coord(grid[..., 0], W, padding_mode, align_corners)
    iy = _grid_coord(grid[..., 1], H, padding_mode, align_corners)
    if mode == "nearest":
        # torch's nearest mode gives the grid a zero gradient (not none): link it with an exact zero.
        none = grid.new_zeros(()).expand_as(grid)
        return tap(ix.round().detach(), iy.round().detach()) + _C.where(none.bool(), grid, none).sum()
    x0, y0 = ix.floor().detach(), iy.floor().detach()
    if input.dtype in (_C.float16, _C.bfloat16):
        # torch's float16 / bfloat16 kernel (the scalar fallback) rounds each corner's weight once,
        # nw = (x_e - x) * (y_s - y), and accumulates the four products in that order.
        x1, y1 = x0 + 1, y0 + 1
        ex, wx, sy, ny = (x1 - ix).unsqueeze(1), (ix - x0).unsqueeze(1), (y1 - iy).unsqueeze(1), (iy - y0).unsqueeze(1)
        return (tap(x0, y0) * (ex * sy) + tap(x1, y0) * (wx * sy) + tap(x0, y1) * (ex * ny)
                + tap(x1, y1) * (wx * ny))
    wx1, wy1 = (ix - x0).unsqueeze(1), (iy - y0).unsqueeze(1)
    wx0, wy0 = 1 - wx1, 1 - wy1
    return (tap(x0, y0) * wx0 * wy0 + tap(x0 + 1, y0) * wx1 * wy0 + tap(x0, y0 + 1) * wx0 * wy1
            + tap(x0 + 1, y0 + 1) * wx1 * wy1)


def _grid_coord_pad(x, size, padding_mode, align_corners):
    """torch's compute_coordinates on already unnormalized coordinates (border / reflection)."""
    if padding_mode == "reflection":
        x = _reflect(x, 0, 2 * (size - 1)) if align_corners else _reflect(x, -1, 2 * size - 1)
    return x.clamp(0, size - 1)


def _cubic_weights(t):
    """torch's get_cubic_upsample_coefficients (A = -0.75) for t in [0, 1)."""
    A = -0.75

    def c1(x):
        return ((A + 2) * x - (A + 3)) * x * x + 1

    def c2(x):
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A
    return [c2(t + 1), c1(t), c1(1 - t), c2(2 - t)]


def _grid_sample_3d(input, grid, mode, padding_mode, align_corners):
    if mode == "bicubic":
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if grid.dim() != 5 or grid.shape[-1] != 3:
        raise RuntimeError(f"grid_sampler(): expected grid to have size 3 in last dimension, but got grid with sizes {list(grid.shape)}")
    if grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with sizes "
                           f"{list(input.shape)} and grid with sizes {list(grid.shape)}")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have same dtype, but input has "
                           f"{input.dtype} and grid has {grid.dtype}")
    N, C, D, H, W = input.shape
    Do, Ho, Wo = grid.shape[1], grid.shape[2], grid.shape[3]
    L = Do * Ho * Wo
    flat = input.reshape(N, C, D * H * W)
    ix = _grid_coord(grid[..., 0], W, padding_mode, align_corners)
    iy = _grid_coord(grid[..., 1], H, padding_mode, align_corners)
    iz = _grid_coord(grid[..., 2], D, padding_mode, align_corners)

    def tap(xi, yi, zi):
        valid = ((xi >= 0) & (xi <= W - 1) & (yi >= 0) & (yi <= H - 1) & (zi >= 0) & (zi <= D - 1)).to(input.dtype)
        zl, yl, xl = zi.clamp(0, D - 1).to(_C.int64), yi.clamp(0, H - 1).to(_C.int64), xi.clamp(0, W - 1).to(_C.int64)
        idx = ((zl * H + yl) * W + xl).reshape(N, 1, L)  # int64: exact (see the 2-d tap)
        vals = flat.gather(2, idx.expand(N, C, L)).reshape(N, C, Do, Ho, Wo)
        return vals * valid.unsqueeze(1)

    if mode == "nearest":
        none = grid.new_zeros(()).expand_as(grid)
        return tap(ix.round().detach(), iy.round().detach(), iz.round().detach()) + _C.where(none.bool(), grid, none).sum()
    x0, y0, z0 = ix.floor().detach(), iy.floor().detach(), iz.floor().detach()
    wx1, wy1, wz1 = (ix - x0).unsqueeze(1), (iy - y0).unsqueeze(1), (iz - z0).unsqueeze(1)
    wx0, wy0, wz0 = 1 - wx1, 1 - wy1, 1 - wz1
    out = None
    for dz, wz in ((0, wz0), (1, wz1)):
        for dy, wy in ((0, wy0), (1, wy1)):
            for dx, wx in ((0, wx0), (1, wx1)):
                term = tap(x0 + dx, y0 + dy, z0 + dz) * (wx * wy * wz)
                out = term if out is None else out + term
    return out


# ---------------------------------------------------------------- normalisation
def _shape_list(normalized_shape):
    if isinstance(normalized_shape, numbers.Integral):
        return [int(normalized_shape)]
    return [int(s) for s in normalized_shape]


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    return _C._layer_norm(input, _shape_list(normalized_shape), weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    shape = _shape_list(normalized_shape)
    if shape:   # aten::rms_norm's checks after the empty-shape one (the kernel's): the weight's shape, then the rank
        if weight is not None and list(weight.shape) != shape:
            raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
                               f"{list(weight.shape)} and normalized_shape = {shape}")
        if input.dim() < len(shape):
            raise ValueError(f"Input tensor must have at least {len(shape)} dimensions, but got {input.dim()}")
    return _C._rms_norm(input, shape, weight, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    # torch's Python body, in its order: the rank check, then the batch-size check of the grouped shape (num_groups
    # 0: ZeroDivisionError; a Tensor num_groups flows through as a Tensor), then torch.group_norm's parser
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    size = input.size()
    _verify_batch_size([size[0] * size[1] // num_groups, num_groups] + list(size[2:]))
    if not _argparse._is_int(num_groups):   # a 1-element Tensor, say: the binding would take its __index__
        _raise_parse_error("group_norm", (input, num_groups, weight, bias, eps, False))
    return _torch_call("group_norm", _SIGS["fn"]["group_norm"], _C._group_norm, input, num_groups, weight, bias, eps)


_verify_batch_size = _argparse.verify_batch_size


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    if training:
        _verify_batch_size(input.size())
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    elif eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    return _batch_norm_aten(input, running_mean, running_var, weight, bias, training, momentum, eps)


def _batch_norm_aten(input, running_mean, running_var, weight, bias, training, momentum, eps):
    """aten's batch_norm (torch.batch_norm): no batch-size or eps checks, those are F.batch_norm's Python body's."""
    if isinstance(input, _C.Tensor) and input.numel() == 0:
        # torch: an empty input is cloned (CloneBackward0), the statistics untouched, and the affine
        # parameters' first elements applied, so that the output's graph reaches them
        out = input.clone()
        if weight is not None:
            out = out * weight[0]
        if bias is not None:
            out = out + bias[0]
        return out
    return _C._batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


@engine_op("normalize")
def normalize(input, p=2.0, dim=1, eps=1e-12):
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return input / denom


# ---------------------------------------------------------------- embedding, one_hot, pad
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.size(0) + padding_idx
    # torch's body: embedding_renorm_(weight, input, max_norm, norm_type) under max_norm, then
    # torch.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse); their parsers' errors on failure
    if max_norm is not None:
        input = input.contiguous()
        try:
            if input.dtype not in (_C.int64, _C.int32):
                raise RuntimeError("Expected tensor for argument #2 'indices' to have one of the following scalar "
                                   f"types: Long, Int; but got {input.type()} instead (while checking arguments for "
                                   "embedding_renorm_)")
            flat = input.reshape(-1)
            if flat.numel() and (builtins.bool((flat < 0).any()) or builtins.bool((flat >= weight.size(0)).any())):
                raise IndexError("index out of range in self")
            _embedding_renorm_(weight, flat, max_norm, norm_type)
        except Exception:
            err = _argparse.sig_parse_error("embedding_renorm_", _EMBEDDING_RENORM_SIG, (weight, input, max_norm, norm_type))
            if err is None:
                raise
            raise err from None
    return _torch_call("embedding", _SIGS["fn"]["embedding"], _embedding, weight, input,
                       -1 if padding_idx is None else padding_idx, scale_grad_by_freq, sparse)


_EMBEDDING_RENORM_SIG = ("Tensor input, Tensor indices, float max_norm, float norm_type",)


def _embedding(weight, input, padding_idx, scale_grad_by_freq, sparse):
    if weight.dim() != 2:  # (torch's first check)
        raise RuntimeError("'weight' must be 2-D")
    if input.dtype not in (_C.int64, _C.int32):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {input.type()} instead (while checking arguments for embedding)")
    if sparse:
        flat = input.reshape(-1)  # (torch's forward checks the indices first)
        if flat.numel() and (builtins.bool((flat < 0).any()) or builtins.bool((flat >= weight.size(0)).any())):
            raise IndexError("index out of range in self")
        raise NotImplementedError("ampgrad has no sparse tensors: embedding(sparse=True) is not supported")
    # EmbeddingBackward0: the padding row gets no gradient, scale_grad_by_freq divides each row's
    # gradient by its index's count (ops/nn_misc.cpp).
    if weight.device.type == "cpu":
        return _C._embedding(weight, input, padding_idx, builtins.bool(scale_grad_by_freq))
    flat = input.reshape(-1)  # other devices: composed (no fused kernel there yet)
    if flat.numel() and (builtins.bool((flat < 0).any()) or builtins.bool((flat >= weight.size(0)).any())):
        raise IndexError("index out of range in self")
    out = weight.index_select(0, flat)
    if scale_grad_by_freq and out.requires_grad:
        counts = weight.new_zeros(weight.size(0)).index_add(0, flat, weight.new_ones(flat.numel()))
        f = counts.index_select(0, flat).unsqueeze(1)
        out = out / f + (out - out / f).detach()
    if padding_idx >= 0 and out.requires_grad:  # (-1: no padding index, as torch.embedding's)
        out = _C.where((flat == padding_idx).unsqueeze(1), out.detach(), out)
    return out.reshape(list(input.shape) + [weight.size(1)])


def _embedding_renorm_(weight, indices, max_norm, norm_type):
    with _no_grad():
        rows = _C.from_numpy(np.unique(indices.numpy()).astype(np.int64))
        sel = weight.index_select(0, rows)
        norms = sel.norm(norm_type, 1, keepdim=True)
        scale = _C.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).to(weight.dtype)
        weight.index_copy_(0, rows, sel * scale)


def one_hot(tensor, num_classes=-1):
    if tensor.dtype != _C.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() and builtins.bool((tensor < 0).any()):
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        if tensor.numel() == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor.max().item()) + 1
    elif tensor.numel() and builtins.bool((tensor >= num_classes).any()):
        raise RuntimeError("Class values must be smaller than num_classes.")
    return (tensor.unsqueeze(-1) == _arange(num_classes, device=tensor.device)).long()


# ---------------------------------------------------------------- losses
_REDUCTIONS = ("none", "mean", "sum")   # by _Reduction.get_enum's value


def _legacy(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        return _Reduction.legacy_get_string(size_average, reduce)
    return reduction


def _reduce(loss, reduction):
    _Reduction.get_enum(reduction)
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.mean()


def _warn_size(input, target):
    if target.shape != input.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", stacklevel=4)  # caller -> gate -> loss -> here


def _check_weight(input, target, weight):
    # torch's weighted l1_loss / mse_loss bodies: broadcast_tensors, then weight.size() (a non-Tensor weight: its
    # AttributeError), before the errors are computed
    _broadcast_tensors(input, target)
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")


def _weighted(errors, weight, input, reduction):
    errors = errors * weight
    if reduction == "none":
        return errors
    if reduction == "sum":
        return errors.sum()
    if reduction == "mean":
        return errors.sum() / weight.sum()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


@engine_op("mse_loss")
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    _warn_size(input, target)
    reduction = _legacy(size_average, reduce, reduction)
    if weight is not None:  # torch composes the weighted form too
        _check_weight(input, target, weight)
        d = input - target
        return _weighted(d * d, weight, input, reduction)
    if input.device.type != "cpu":  # no fused kernel there yet
        d = input - target
        return _reduce(d * d, reduction)
    return _C._fused_loss(0, input, target, None, None, _Reduction.get_enum(reduction), 0.0)


@engine_op("l1_loss")
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    _warn_size(input, target)
    reduction = _legacy(size_average, reduce, reduction)
    if weight is not None:
        _check_weight(input, target, weight)
        return _weighted((input - target).abs(), weight, input, reduction)
    return _reduce((input - target).abs(), reduction)


@engine_op("smooth_l1_loss")
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    _warn_size(input, target)
    reduction = _legacy(size_average, reduce, reduction)
    try:   # torch's body: broadcast_tensors, then get_enum(reduction), then aten's beta check
        _Reduction.get_enum(reduction)
    except ValueError:
        _broadcast_tensors(input, target)
        raise
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0.0:  # torch's l1_loss
        return _reduce((input - target).abs(), reduction)
    if input.device.type != "cpu":  # no fused kernel there yet
        z = (input - target).abs()
        return _reduce(_C.where(z < beta, z * z * (0.5 / beta), z - 0.5 * beta), reduction)
    return _C._fused_loss(1, input, target, None, None, _Reduction.get_enum(reduction), float(beta))


@engine_op("huber_loss")
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    _warn_size(input, target)
    if delta <= 0:
        raise RuntimeError(f"huber_loss does not support non-positive values for delta.")
    if weight is None and input.device.type == "cpu":
        return _C._fused_loss(2, input, target, None, None, _Reduction.get_enum(reduction), float(delta))
    z = (input - target).abs()
    loss = _C.where(z < delta, z * z * 0.5, (z - 0.5 * delta) * delta)
    if input.is_floating_point():
        loss = loss.to(input.dtype)  # torch's huber_loss returns the input's dtype
    if weight is not None:
        if weight.shape != input.shape:
            raise ValueError("Weights and input must have the same size.")
        loss = loss * weight
        if reduction not in ("none", "sum", "mean"):
            raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")
    return _reduce(loss, reduction)


def _xlogy(x, y):
    safe = _C.where(x == 0, 1.0, y)
    return _C.where(x == 0, 0.0, x * safe.log())


@engine_op("kl_div")
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    if size_average is not None or reduce is not None:
        enum = _Reduction.legacy_get_enum(size_average, reduce)
    else:
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                          "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                          "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                          stacklevel=3)  # the caller of the gated kl_div
        enum = _Reduction.get_enum("sum" if reduction == "batchmean" else reduction)
    # then torch.kl_div: its parser, then aten's checks
    if not _argparse._is_bool(log_target):   # `if log_target` below would take a 0-d Tensor
        _raise_parse_error("kl_div", (input, target, enum), {"log_target": log_target})
    reduced = _torch_call("kl_div", _SIGS["fn"]["kl_div"], _kl_div, input, target, enum, log_target=log_target)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.size()[0]
    return reduced


def _kl_div(input, target, reduction=1, log_target=False):
    """aten::kl_div (reduction: the enum)."""
    if input.is_complex() or target.is_complex():
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if not (input.is_floating_point() and target.is_floating_point()):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = _xlogy(target, target) - target * input
    return _reduce(loss, _REDUCTIONS[reduction])


@engine_op("binary_cross_entropy")
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy(size_average, reduce, reduction)
    _Reduction.get_enum(reduction)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}) "
                         "is deprecated. Please ensure they have the same size.")
    if weight is not None:
        weight.size()   # torch's body broadcasts weight.size() first (a non-Tensor: AttributeError)
    if target.dtype != input.dtype:
        raise RuntimeError(f"Found dtype {_C._scalar_type_name(target.dtype)} but expected "
                           f"{_C._scalar_type_name(input.dtype)}")
    if not input.is_floating_point():   # aten's dtype dispatch comes before its kernel's range checks
        raise NotImplementedError(f"\"binary_cross_entropy\" not implemented for '{_C._scalar_type_name(input.dtype)}'")
    if input.numel() and builtins.bool(((input < 0) | (input > 1)).any()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if target.numel() and not builtins.bool(((target >= 0) & (target <= 1)).all()):  # NaN is out of range too
        raise RuntimeError("all elements of target should be between 0 and 1")
    # torch clamps each log at -100 so that 0 and 1 inputs give a finite loss (ops/nn_misc.cpp).
    if input.device.type == "cpu":
        return _C._fused_loss(3, input, target, weight, None, _Reduction.get_enum(reduction), 0.0)
    loss = (target - 1) * (1 - input).log().clamp_min(-100) - target * input.log().clamp_min(-100)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@engine_op("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    reduction = _legacy(size_average, reduce, reduction)
    _Reduction.get_enum(reduction)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    # (1 - t) x - (1 + (pos_weight - 1) t) log_sigmoid(x), times weight, in one kernel (ops/nn_misc.cpp);
    # torch's result takes the target's dtype (fp32 input, fp16 target: fp16).
    if input.device.type == "cpu" and all(w is None or w.dtype == input.dtype for w in (target, weight, pos_weight)):
        return _C._fused_loss(4, input, target, weight, pos_weight, _Reduction.get_enum(reduction), 0.0)
    # Mixed dtypes: torch rounds log_sigmoid to the input's dtype before promoting; so does this
    # (and devices without the fused kernel).
    log_sig = logsigmoid(input)
    if pos_weight is not None:
        log_sig = log_sig * ((pos_weight - 1) * target + 1)
    loss = (1 - target) * input - log_sig
    if target.is_floating_point():
        loss = loss.to(target.dtype)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _check_target(input, target):
    """torch's nll_loss_nd / nll_loss checks; the target to use (a 1D input's one-element 1D target: its element)."""
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    if input.dim() != 1 and (target.dim() == 0 or input.size(0) != target.size(0)):
        raise ValueError(f"Expected input batch_size ({input.size(0)}) to match target batch_size "
                         f"({target.size(0) if target.dim() else 0}).")
    if target.dtype not in (_C.int64, _C.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_C._scalar_type_name(target.dtype)}")
    if input.dim() == 1:
        if target.dim() > 1:
            raise RuntimeError(f"0D or 1D target tensor expected, multi-target not supported")
        if target.dim() == 1:
            if target.size(0) != 1:
                raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {target.size(0)}")
            target = target.reshape(())
        return target
    want = [input.size(0)] + list(input.shape[2:])
    if list(target.shape) != want:
        raise RuntimeError(f"Expected target size {want}, got {list(target.shape)}")
    return target


def _nll(logp, target, weight, ignore_index, reduction):
    """nll_loss on log-probabilities logp [N, C, *] (or [C]) and class indices target."""
    target = _check_target(logp, target)
    cdim = 0 if logp.dim() == 1 else 1
    C = logp.shape[cdim]
    if weight is not None:
        if weight.dim() != 1 or weight.numel() != C:
            raise RuntimeError(f"weight tensor should be defined either for all {C} classes or no classes but got weight "
                               f"tensor of shape: {list(weight.shape)}")
    if not logp.is_floating_point():  # the kernel's dtype dispatch, before its weight dtype check
        frame = "nll_loss_out_frame" if logp.dim() <= 2 else "nll_loss2d_forward_out_frame"
        raise NotImplementedError(f"\"{frame}\" not implemented for '{_C._scalar_type_name(logp.dtype)}'")
    if weight is not None:
        if weight.dtype != logp.dtype:
            raise RuntimeError(f"expected scalar type {_C._scalar_type_name(logp.dtype)} but found "
                               f"{_C._scalar_type_name(weight.dtype)}")
    _Reduction.get_enum(reduction)
    return _C._nll_loss(logp, target, weight, reduction, ignore_index)


def _type_name(dtype):
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16"}.get(
        str(dtype).split(".")[-1], str(dtype).split(".")[-1])


@engine_op("nll_loss")
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    reduction = _legacy(size_average, reduce, reduction)
    return _nll(input, target, weight, ignore_index, reduction)


@engine_op("cross_entropy")
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    reduction = _legacy(size_average, reduce, reduction)
    _Reduction.get_enum(reduction)
    # aten's order: a probabilities target's checks, a smoothing above 1 (class indices: before log_softmax,
    # probabilities: after); a smoothing that is not above 0 (NaN too) smooths nothing
    probs = input.shape == target.shape
    if probs:
        if not target.is_floating_point():
            raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                               f"{_C._scalar_type_name(target.dtype)}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
    elif label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing:g}")
    cdim = 0 if input.dim() == 1 else 1
    C = input.shape[cdim] if input.dim() else 1
    logp = _C._log_softmax(input, cdim, None)
    wshape = [1] * input.dim()
    if input.dim():
        wshape[cdim] = C
    if probs:
        # Class probabilities.
        if label_smoothing > 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing:g}")
        if weight is not None and (weight.dim() != 1 or weight.numel() != C):
            raise RuntimeError(f"weight tensor should be defined either for all {C} classes or no classes but got "
                               f"weight tensor of shape: {list(weight.shape)}")
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / C
        prod = logp * target
        if weight is not None:
            prod = prod * weight.reshape(wshape)
        if reduction == "none":
            return -prod.sum(cdim)
        if reduction == "sum":
            return -prod.sum()
        return -prod.sum() / (input.numel() / C) if input.numel() else -prod.sum() * float("nan")
    nll = _nll(logp, target, weight, ignore_index, reduction)
    if not label_smoothing > 0:
        return nll
    ignore = target == ignore_index
    smooth = -(logp * weight.reshape(wshape)).sum(cdim) if weight is not None else -logp.sum(cdim)
    smooth = smooth.masked_fill(ignore, 0.0)
    if reduction == "mean":
        if weight is not None:
            smooth = smooth.sum() / weight.index_select(0, target.masked_select(~ignore).reshape(-1)).sum()
        else:
            smooth = smooth.sum() / (~ignore).sum()
    elif reduction == "sum":
        smooth = smooth.sum()
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / C)


# ---------------------------------------------------------------- distances
@engine_op("cosine_similarity")
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    x1, x2 = _broadcast_tensors(x1, x2)
    n1 = x1.norm(2, dim, keepdim=True)
    n2 = x2.norm(2, dim, keepdim=True)
    # torch clamps the norms at eps outside autograd: the value changes, the gradient does not.
    n1 = n1 + (n1.clamp_min(eps) - n1).detach()
    n2 = n2 + (n2.clamp_min(eps) - n2).detach()
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    output_dim = builtins.max(x1.dim(), x2.dim())
    innermost = output_dim - 1
    return (x1 - x2 + eps).norm(p, innermost if output_dim else None, keepdim)


# ---------------------------------------------------------------- margin and ranking losses
# Formulas as ATen's (aten/src/ATen/native/Loss.cpp), composed from differentiable ops.
@engine_op("hinge_embedding_loss")
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy(size_average, reduce, reduction)
    zeros = input.new_zeros(())
    # aten's `margin - self` is empty_like(self).fill_(margin).sub_(self): computed in the input's dtype
    # (an integer input wraps as torch's does; a bool input raises torch's bool-subtraction error)
    margin_clamp = (input.new_full(tuple(input.shape), margin) - input).clamp_min(0)
    output = _C.where(target != 1, margin_clamp, zeros) + _C.where(target != -1, input, zeros)
    return _reduce(output, reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    reduction = _REDUCTIONS[_Reduction.get_enum(_legacy(size_average, reduce, reduction))]
    if not (input1.dim() == input2.dim() == target.dim()):
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} ")
    return _torch_call("margin_ranking_loss", _SIGS["fn"]["margin_ranking_loss"], _margin_ranking_loss, input1, input2,
                       target, margin, _Reduction.get_enum(reduction))


@engine_op("margin_ranking_loss")
def _margin_ranking_loss(input1, input2, target, margin, reduction):
    """aten::margin_ranking_loss: broadcasts its operands (the dimension check is F's). margin is a C++ double: it
    promotes integer operands to the default dtype."""
    return _reduce((-target * (input1 - input2) + float(margin)).clamp_min(0), _REDUCTIONS[reduction])


_SOFT_MARGIN_SIG = ("Tensor input, Tensor target, int reduction=",)   # torch._C._nn.soft_margin_loss


@engine_op("soft_margin_loss")
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    args = (input, target, _Reduction.get_enum(_legacy(size_average, reduce, reduction)))
    if not (isinstance(input, _C.Tensor) and isinstance(target, _C.Tensor)):   # a number would broadcast below
        _raise_parse_error("soft_margin_loss", args, sig=_SOFT_MARGIN_SIG)
    return _torch_call("soft_margin_loss", _SOFT_MARGIN_SIG, _soft_margin_loss, *args)


def _soft_margin_loss(input, target, reduction):
    """aten's soft_margin_loss: neg(input).mul_(target).exp_().log1p_(), in place as aten's, so a target that
    broadcasts beyond the input's shape, or an integer input, fails as torch's."""
    return _reduce((-input).mul_(target).exp_().log1p_(), _REDUCTIONS[reduction])


@engine_op("cosine_embedding_loss")
def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    return _torch_call("cosine_embedding_loss", _SIGS["fn"]["cosine_embedding_loss"], _cosine_embedding_loss, input1,
                       input2, target, margin, _Reduction.get_enum(_legacy(size_average, reduce, reduction)))


def _cosine_embedding_loss(input1, input2, target, margin, reduction):
    """aten::cosine_embedding_loss (reduction: the enum)."""
    reduction = _REDUCTIONS[reduction]
    if input1.dim() != input2.dim() or input1.dim() not in (1, 2) or target.dim() != input1.dim() - 1:
        raise RuntimeError(f"cosine_embedding_loss: expected 1D or 2D inputs of equal dimension and a target with one "
                           f"dimension less, but got input1 {input1.dim()}D, input2 {input2.dim()}D, target "
                           f"{target.dim()}D")
    d = target.dim()
    eps = 1e-12
    prod_sum = (input1 * input2).sum(d)
    denom = (((input1 * input1).sum(d) + eps) * ((input2 * input2).sum(d) + eps)).sqrt()
    cos = prod_sum / denom
    zeros = cos.new_zeros(())
    output = _C.where(target == 1, 1 - cos, zeros) + _C.where(target == -1, (cos - margin).clamp_min(0), zeros)
    return _reduce(output, reduction)


@engine_op("poisson_nll_loss")
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    reduction = _legacy(size_average, reduce, reduction)
    if reduction != "none" and reduction != "mean" and reduction != "sum":
        # torch's body's own check ('elementwise_mean' too; a non-str reduction: the concatenation's TypeError)
        raise ValueError(reduction + " is not a valid value for reduction")
    enum = _Reduction.get_enum(reduction)
    if not (_argparse._is_bool(log_input) and _argparse._is_bool(full)):
        # torch.poisson_nll_loss's parser takes only bools there (a 0-d Tensor would pass `if log_input` below)
        _raise_parse_error("poisson_nll_loss", (input, target, log_input, full, eps, enum))
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, reduction)


@engine_op("triplet_margin_loss")
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    # torch's Python body: the reduction, then the margin, then torch.triplet_margin_loss (its parser first)
    enum = _Reduction.get_enum(_legacy(size_average, reduce, reduction))
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    args = (anchor, positive, negative, margin, p, eps, swap, enum)
    if not _argparse._is_bool(swap):   # `if swap` below would take a 0-d Tensor
        _raise_parse_error("triplet_margin_loss", args)
    return _torch_call("triplet_margin_loss", _SIGS["fn"]["triplet_margin_loss"], _triplet_margin_loss, *args)


def _triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction):
    """aten::triplet_margin_loss (reduction: the enum)."""
    a, pd, n = anchor.dim(), positive.dim(), negative.dim()
    if not (a == pd == n):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a}D, positive {pd}D, and negative {n}D inputs")
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = _C.minimum(dist_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce((float(margin) + dist_pos - dist_neg).clamp_min(0), _REDUCTIONS[reduction])   # aten's double


@engine_op("multi_margin_loss")
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy(size_average, reduce, reduction)
    _Reduction.get_enum(reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    if input.dim() > 2 or target.dim() > 1 or target.numel() != (input.shape[0] if input.dim() == 2 else 1):
        raise RuntimeError(f"inconsistent target size, expected {input.shape[0] if input.dim() == 2 else 1} but got "
                           f"{list(target.shape)}")
    x = input if input.dim() == 2 else input.reshape(1, -1)  # a 0-d input is one sample of one class
    t = target.reshape(-1, 1)
    C = x.shape[1]
    if bool(((t < 0) | (t >= C)).any()):
        raise RuntimeError("target out of range")
    z = (margin - x.gather(1, t) + x).clamp_min(0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight.index_select(0, t.reshape(-1)).unsqueeze(1)
    z = z.masked_fill(one_hot(t.reshape(-1), C).bool(), 0)
    loss = z.sum(1) / C
    if input.dim() < 2:
        loss = loss.squeeze(0)
    return _reduce(loss, reduction)


@engine_op("multilabel_margin_loss")
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy(size_average, reduce, reduction)
    _Reduction.get_enum(reduction)
    if input.dim() > 2 or tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}")
    x = input if input.dim() == 2 else input.reshape(1, -1)  # a 0-d input is one sample of one class
    N, C = x.shape
    tgt = target.reshape(N, C).cpu().numpy()
    if ((tgt < -1) | (tgt >= C)).any():
        raise RuntimeError("argument #2 'target' is out of range")
    if not input.is_floating_point():   # aten's dtype dispatch comes after its shape and target checks
        raise NotImplementedError(f"\"multilabel_margin_loss_forward_out_frame\" not implemented for "
                                  f"'{_C._scalar_type_name(input.dtype)}'")
    valid = np.cumprod(tgt != -1, axis=1).astype(bool)  # the targets are the slots before the first -1
    count = np.zeros((N, C))  # count[i, j]: how many valid slots name class j
    is_target = np.zeros((N, C), dtype=bool)
    for i in builtins.range(N):
        np.add.at(count[i], tgt[i][valid[i]], 1)
        is_target[i, tgt[i][valid[i]]] = True
    w = count[:, :, None] * (~is_target)[:, None, :]
    wt = _on(_C.from_numpy(w.astype(np.float32)), x.device).to(x.dtype)
    hinge = (1 - x.unsqueeze(2) + x.unsqueeze(1)).clamp_min(0)  # [i, j, k]: 1 - (x_j - x_k)
    loss = (hinge * wt).sum((1, 2)) / C
    if input.dim() < 2:
        loss = loss.squeeze(0)
    return _reduce(loss, reduction)


@engine_op("pdist")
def pdist(input, p=2):
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    n = input.shape[0]
    i, j = np.triu_indices(n, 1)
    a = input.index_select(0, _on(_C.from_numpy(i.astype(np.int64)), input.device))
    b = input.index_select(0, _on(_C.from_numpy(j.astype(np.int64)), input.device))
    d = _vector_norm(a - b, p, 1)
    if float(p) == 0 and input.requires_grad and _C.is_grad_enabled():
        # torch's PdistBackward0 for p=0: the output keeps its history, with a zero gradient
        d = _C.where(d.new_ones(d.shape, dtype=_C.bool), d, (a - b).sum(1))
    if d.grad_fn is not None:
        _C._set_grad_fn_name(d, "PdistBackward0")  # torch's single node for pdist
    return d


def _vector_norm(x, p, dim, keepdim=False):
    p = float(p)
    if p == math.inf:
        return x.abs().amax(dim, keepdim)
    if p == -math.inf:
        return x.abs().amin(dim, keepdim)
    if p == 0:
        return (x != 0).to(x.dtype).sum(dim, keepdim)
    return x.norm(p, dim, keepdim)


@engine_op("bilinear")
def bilinear(input1, input2, weight, bias=None):
    # aten::bilinear's checks, in its order: the dtypes, the ranks, the batch sizes, then the sizes it reads from
    # weight / bias with size(d) (a weight of fewer than 3 dims: size()'s IndexError)
    tensors = [("input1", input1), ("input2", input2), ("weight", weight)] + ([("bias", bias)] if bias is not None else [])
    if len({t.dtype for _, t in tensors}) > 1:
        got = ", ".join(f"{n}: {_cpp_type_name(t.dtype)}" for n, t in tensors)
        raise RuntimeError(f"All tensors must have the same dtype, got {got}")
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    for i in range(input1.dim() - 1):
        if input1.size(i) != input2.size(i):
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got {input1.size(i)} and "
                               f"{input2.size(i)}")
    if input1.size(-1) != weight.size(1):
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.size(-1)} but expected "
                           f"{weight.size(1)}")
    if input2.size(-1) != weight.size(2):
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.size(-1)} but expected "
                           f"{weight.size(2)}")
    if bias is not None and bias.size(0) != weight.size(0):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.size(0)} but expected "
                           f"{weight.size(0)}")
    if weight.dim() != 3:   # torch's _trilinear of the unsqueezed inputs and weight
        raise RuntimeError("number of dimensions must match")
    O, I1, I2 = weight.shape
    lead = list(input1.shape[:-1])
    x1 = input1.reshape(-1, I1)
    x2 = input2.reshape(-1, I2)
    # y[n, o] = sum_ij x1[n, i] W[o, i, j] x2[n, j]
    t = _C.matmul(x1, weight.permute(1, 0, 2).reshape(I1, O * I2)).reshape(-1, O, I2)
    y = _C.matmul(t, x2.unsqueeze(2)).squeeze(2)
    if bias is not None:
        y = y + bias
    return y.reshape(lead + [O])


# ---------------------------------------------------------------- spatial ops (nn/_spatial.py; engine ops of csrc/ops/spatial.cpp)
from ._spatial import (pad, interpolate, upsample, upsample_nearest, upsample_bilinear, pixel_shuffle,  # noqa: E402
                       pixel_unshuffle, channel_shuffle, native_channel_shuffle, unfold, fold, max_unpool1d, max_unpool2d,
                       max_unpool3d, affine_grid)


# ---------------------------------------------------------------- lp_pool (torch's composition of avg_pool)
def _lp_finish(out, n, norm_type):
    return (_C.sign(out) * relu(_C.abs(out))).mul(n).pow(1.0 / norm_type)


def _ntuple(x, n):
    """torch's _pair / _triple (nn.modules.utils): any iterable as a tuple, else n copies."""
    return tuple(x) if isinstance(x, collections.abc.Iterable) else (x,) * n


def _lp_pool(nd, input, norm_type, kernel_size, stride, ceil_mode, k):
    """torch's lp_pool<nd>d body after its kernel_size unpacking (k: the window's sizes, None for lp_pool1d's
    kernel_size): max_pool<nd>d of |input| for an infinite norm_type, else the avg_pool<nd>d of input ** norm_type
    scaled back by the window's size, with torch's parser errors for the avg_pool call's arguments."""
    if isinstance(norm_type, (int, float)) and math.isinf(norm_type):
        mp = (max_pool1d, max_pool2d, max_pool3d)[nd - 1]
        return mp(input.abs(), kernel_size, stride, 0, 1, ceil_mode) if norm_type > 0 else \
            -mp(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    x = input.pow(norm_type)
    if stride is not None:
        args, kwargs = (x, kernel_size, stride, 0, ceil_mode), {}
    else:
        args, kwargs = (x, kernel_size), {"padding": 0, "ceil_mode": ceil_mode}
    out = _torch_call(f"avg_pool{nd}d", _SIGS["F"][f"avg_pool{nd}d"], (avg_pool1d, avg_pool2d, avg_pool3d)[nd - 1],
                      *args, **kwargs)
    if k is None:
        n = kernel_size if isinstance(kernel_size, numbers.Integral) else kernel_size[0]
    else:
        n = math.prod(k)
    return _lp_finish(out, n, norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode, None)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    kw, kh = _ntuple(kernel_size, 2)
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode, (kw, kh))


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    kd, kw, kh = _ntuple(kernel_size, 3)
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode, (kd, kw, kh))

# ---------------------------------------------------------------- nn additions (nn/_functional_more.py)
from ._functional_more import *  # noqa: E402,F401,F403
from ._functional_more import _canonical_mask, _none_or_dtype, _mha_shape_check, _in_projection_packed, _in_projection  # noqa: E402,F401

# ---------------------------------------------------------------- linear_cross_entropy (nn/_linear_cross_entropy.py)
from ._linear_cross_entropy import linear_cross_entropy_impl as _lce_impl  # noqa: E402


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean",
                         ignore_index=None, label_smoothing=0.0, options=None):
    return _lce_impl(cross_entropy, linear, input, linear_weight, target, linear_bias, weight, reduction, ignore_index,
                     label_smoothing, options)

# ---------------------------------------------------------------- CTC loss, fractional max pooling (nn/_ctc_fracpool.py)
from ._ctc_fracpool import (fractional_max_pool2d, fractional_max_pool3d,  # noqa: E402,F401
                            fractional_max_pool2d_with_indices, fractional_max_pool3d_with_indices)
from ._ctc_fracpool import ctc_loss as _ctc_loss_enum  # noqa: E402


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    return _ctc_loss_enum(log_probs, targets, input_lengths, target_lengths, blank, _Reduction.get_enum(reduction),
                          zero_infinity)


# torch's TypeError for wrong-typed arguments (ampgrad/_argparse.py), installed here, as this module finishes, so
# that every later reference (a module's default `activation=F.relu`, a pickled model) is the wrapped function
from .. import _argparse  # noqa: E402
_argparse.install(globals(), "F")
