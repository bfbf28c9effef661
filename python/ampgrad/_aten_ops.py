"""torch's low-level functions that return what the fused nn kernels compute on the side (issue 13):
native_layer_norm / native_group_norm / native_batch_norm / _native_batch_norm_legit /
_batch_norm_with_update (the output and the saved statistics), _softmax_backward_data, _chunk_cat,
_unsafe_masked_index(_put_accumulate), native_dropout_backward, nonzero_static and histogram.

The normalized output is the fused engine op (its NativeLayerNormBackward0 / NativeGroupNormBackward0
/ NativeBatchNormBackward0 node); the statistics torch returns next to it are computed by engine
reductions in the statistics dtype (float32 for fp16 / bf16 inputs): differentiable for group norm,
not for layer / batch norm, as torch's. Dtypes follow torch's CPU rule: the statistics keep the input's dtype unless the
parameters' dtype differs from it (mixed types), then they are float32. install() sets only names
nothing else defines."""
import builtins
import math

from ._C import Tensor
from . import _C
from . import return_types as _return_types
from ._creation import empty as _empty, zeros as _zeros, full as _full, ones as _ones, linspace as _linspace
from ._creation import _cpp_type_name, _dtype_name
from ._scan_index import searchsorted as _searchsorted
from .autograd import Function as _Function
from .nn import functional as _F

_int = builtins.int


def _stat_dtype(x):
    return _C.float32 if x.dtype in (_C.bfloat16, _C.float16) else x.dtype


def _out_dtype(x, *params):
    mixed = any(p is not None and p.dtype != x.dtype for p in params)
    return _stat_dtype(x) if mixed else x.dtype


def _mean_rstd(x, dims, eps):
    """Biased mean and 1 / sqrt(var + eps) over dims (keepdim), in the statistics dtype."""
    xs = x.to(_stat_dtype(x))
    mean = xs.mean(dims, keepdim=True)
    d = xs - mean
    rstd = ((d * d).mean(dims, keepdim=True) + eps).rsqrt()
    return mean, rstd


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    ns = [_int(s) for s in normalized_shape]
    out = _F.layer_norm(input, ns, weight, bias, eps)
    axis = input.dim() - len(ns)
    odt = _out_dtype(input, weight, bias)
    if input.numel() == 0:
        stat = list(input.shape[:axis]) + [1] * len(ns)
        return out, _empty(stat, dtype=odt), _empty(stat, dtype=odt)
    mean, rstd = _mean_rstd(input.detach(), list(range(axis, input.dim())), eps)  # not differentiable, as torch's
    return out, mean.to(odt), rstd.to(odt)


def _dense_in_order(t, order):
    """t's elements lie densely with dims in `order` (outermost first), size-1 dims ignored."""
    expected = 1
    for d in reversed(order):
        if t.shape[d] != 1 and t.stride(d) != expected:
            return False
        expected *= t.shape[d]
    return True


def _suggested_contiguous(t):
    """X.is_contiguous(X.suggest_memory_format()) on CPU: a 4-d (5-d) tensor may be channels-last dense."""
    if t.is_contiguous():
        return True
    if t.dim() in (4, 5):
        return _dense_in_order(t, [0] + list(range(2, t.dim())) + [1])
    return False


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    # aten's check_group_norm_inputs, then the CPU kernel's contiguity check, before the computation
    if isinstance(group, int) and group <= 0:
        raise RuntimeError(f"Expected num groups to be greater than 0, got {group}")
    if isinstance(input, Tensor) and not _suggested_contiguous(input):
        raise RuntimeError("Expected X.is_contiguous(memory_format) to be true, but got false.  (Could this error "
                           "message be improved?  If so, please report an enhancement request to PyTorch.)")
    out = _F.group_norm(input, _int(group), weight, bias, eps)
    odt = _out_dtype(input, weight, bias)
    if input.numel() == 0:
        return out, _empty([N, group], dtype=odt), _empty([N, group], dtype=odt)
    mean, rstd = _mean_rstd(input.reshape(N, group, (C // group) * HxW), [2], eps)
    return out, mean.reshape(N, group).to(odt), rstd.reshape(N, group).to(odt)


def _batch_stats(input, training, eps, odt):
    if not training:
        return _empty([0], dtype=odt), _empty([0], dtype=odt)
    dims = [0] + list(range(2, input.dim()))
    mean, rstd = _mean_rstd(input.detach(), dims, eps)  # not differentiable, as torch's
    return mean.reshape(-1).to(odt), rstd.reshape(-1).to(odt)


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    odt = _out_dtype(input, weight, bias, running_mean, running_var)
    mean, invstd = _batch_stats(input, training, eps, odt)  # before the running statistics move
    out = _F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    return out, mean, invstd


def _native_batch_norm_legit(input, weight, bias, *args):
    """(input, weight, bias, running_mean, running_var, training, momentum, eps) or, without running
    statistics, (input, weight, bias, training, momentum, eps)."""
    if len(args) == 5:
        rm, rv, training, momentum, eps = args
    elif len(args) == 3:
        rm = rv = None
        training, momentum, eps = args
    else:
        raise TypeError(f"_native_batch_norm_legit() takes 6 or 8 positional arguments but {len(args) + 3} were given")
    return native_batch_norm(input, weight, bias, rm, rv, training, momentum, eps)


def _batch_norm_with_update(input, weight, bias, running_mean, running_var, momentum, eps):
    out, mean, invstd = native_batch_norm(input, weight, bias, running_mean, running_var, True, momentum, eps)
    return out, mean, invstd, _empty([0], dtype=_C.uint8)


def _softmax_backward_data(grad_output, output, dim, input_dtype):
    """The gradient of softmax's input from its output y: y * (g - sum(g * y, dim))."""
    g = grad_output.float() if grad_output.dtype in (_C.bfloat16, _C.float16) else grad_output
    y = output.to(g.dtype)
    gi = y * (g - (g * y).sum(dim, keepdim=True))
    return gi.to(input_dtype)


def native_dropout_backward(grad_output, mask, scale):
    return grad_output * (mask.to(grad_output.dtype) * scale)


def _index_list(input, indices, fn):
    """indices clamped to [-size, size - 1] (the entries where the mask is False may be out of range)."""
    out = []
    for i, idx in enumerate(indices):
        if idx is None:
            out.append(None)
            continue
        if idx.dtype not in (_C.int64, _C.int32):
            raise RuntimeError(f"{fn} found unexpected index type {idx.dtype}")
        n = input.shape[i]
        out.append(idx.clamp(-n, n - 1).to(_C.int64) if n > 0 else idx.to(_C.int64))
    return out


def _as_key(lst):
    return tuple(slice(None) if i is None else i for i in lst)


def _unsafe_masked_index(input, mask, indices, fill):
    """where(mask, input[indices], fill) where indices may be out of range where mask is False."""
    if input.numel() == 0:
        sizes = [1 if (i < len(indices) and indices[i] is not None and s == 0) else s for i, s in enumerate(input.shape)]
        base = _full(sizes, fill, dtype=input.dtype)
        return base[_as_key(_index_list(base, indices, "_unsafe_masked_index"))]
    got = input[_as_key(_index_list(input, indices, "_unsafe_masked_index"))]
    return got.masked_fill(mask.logical_not(), fill)


def _unsafe_masked_index_put_accumulate(input, mask, indices, values):
    masked = values.masked_fill(mask.logical_not(), 0)
    # the engine's index_put: its None entries are full slices (torch's Python index_put refuses them)
    return _C._index_put(input, _index_list(input, indices, "_unsafe_masked_index_put_accumulate"), masked, True)


def _chunk_cat(tensors, dim, num_chunks, *, out=None):
    """Each tensor padded along dim to a multiple of num_chunks, viewed as [..., num_chunks, -1] and
    concatenated along dim + 1 (torch's decomposition)."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("_chunk_cat expects a non-empty input tensor list")
    if num_chunks < 1:
        raise RuntimeError("_chunk_cat expects positive num_chunks")
    nd = tensors[0].dim()
    d = dim + nd if dim < 0 else dim
    if not 0 <= d < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})")
    parts = []
    for t in tensors:
        n = t.shape[d]
        padded = (n + num_chunks - 1) // num_chunks * num_chunks
        if padded != n:
            t = _F.pad(t, [0, 0] * (t.dim() - d - 1) + [0, padded - n])
        inner = 1
        for s in t.shape[d:]:
            inner *= s
        parts.append(t.reshape(list(t.shape[:d]) + [num_chunks, inner // num_chunks]))
    r = _C.cat(parts, d + 1)
    if out is not None:
        out.resize_(r.shape).copy_(r)
        return out
    return r


def nonzero_static(input, *, size, fill_value=-1):
    """nonzero(input) cut or padded with fill_value to `size` rows."""
    for name, v in (("size", size), ("fill_value", fill_value)):   # the parser's types, then its unpacking
        if not isinstance(v, _int) or isinstance(v, bool):
            raise TypeError(f"nonzero_static(): argument '{name}' must be int, not {type(v).__name__}")
    for v in (size, fill_value):
        if not -2 ** 63 <= v < 2 ** 63:
            raise ValueError("Overflow when unpacking long long")
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, but got {size}")
    nz = input.nonzero()
    n = nz.shape[0]
    if n >= size:
        return nz[:size].contiguous()
    pad = _full([size - n, input.dim()], fill_value, dtype=_C.int64)
    return _C.cat([nz, pad], 0)


def _g(v):
    return format(v, "g")  # C++ stream formatting of a double, as torch's messages print it


def histogram(input, bins=100, *, range=None, weight=None, density=False, out=None):
    """(hist, bin_edges) as torch.histogram: bins are [e_i, e_i+1), the last one closed; values
    outside the edges are not counted. torch's checks, in torch's order."""
    pre = "torch.histogramdd"
    if isinstance(bins, Tensor):
        if bins.dim() != 1:
            raise RuntimeError(f"{pre}: bins tensor should have one dimension, but got {bins.dim()} dimensions in the bins tensor for dimension 0")
        if bins.dtype != input.dtype:
            raise RuntimeError(f"{pre}: input tensor and bins tensors should have the same dtype, but got input with dtype "
                               f"{_cpp_type_name(input.dtype)} and bins for dimension 0 with dtype {_cpp_type_name(bins.dtype)}")
        if bins.numel() < 2:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins.numel() - 1} for dimension 0")
    elif bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if weight is not None:
        if tuple(weight.shape) != tuple(input.shape):
            raise RuntimeError(f"{pre}: if weight tensor is provided it should have the same shape as the input tensor excluding its "
                               f"innermost dimension, but got input with shape {list(input.shape) + [1]} and weight with shape {list(weight.shape)}")
        if weight.dtype != input.dtype:
            raise RuntimeError(f"{pre}: if weight tensor is provided, input tensor and weight tensor should have the same dtype, "
                               f"but got input({_cpp_type_name(input.dtype)}), and weight({_cpp_type_name(weight.dtype)})")
    if not isinstance(bins, Tensor):
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
        elif input.numel() == 0:
            lo, hi = 0.0, 1.0  # torch's edges for no data
        else:
            lo, hi = float(input.min()), float(input.max())  # NaN in the data: a NaN range, refused below
        if not (abs(lo) != float("inf") and abs(hi) != float("inf") and lo == lo and hi == hi):
            raise RuntimeError(f"{pre}: dimension 0's range [{_g(lo)}, {_g(hi)}] is not finite")
        if lo > hi:
            raise RuntimeError(f"{pre}: min should not exceed max, but got min {_g(lo)} max {_g(hi)} for dimension 0")
    if not input.is_floating_point():
        kernel = "histogram_cpu" if isinstance(bins, Tensor) else "histogramdd"  # torch's two kernels' names
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype_name(input.dtype)}'")
    if isinstance(bins, Tensor):
        edges = bins
    else:
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = _linspace(lo, hi, bins + 1, dtype=input.dtype)
    nb = edges.numel() - 1
    x = input.detach().reshape(-1)
    w = weight.detach().reshape(-1) if weight is not None else None
    if nb <= 0:
        hist = _zeros([0], dtype=input.dtype)
    else:
        e = edges.detach().contiguous()
        ok = (x >= e[0]) & (x <= e[-1])
        pos = (_searchsorted(e, x.contiguous(), right=True) - 1).clamp(0, nb - 1)  # the last edge is in the last bin
        pos = pos[ok]
        vals = w[ok] if w is not None else _ones(tuple(pos.shape), dtype=input.dtype)
        hist = _zeros([nb], dtype=input.dtype).index_add(0, pos, vals)
        if density:
            hist = hist / (hist.sum() * (e[1:] - e[:-1]))
    if out is not None:
        out[0].resize_(hist.shape).copy_(hist)
        out[1].resize_(edges.shape).copy_(edges)
        return _return_types.histogram(out[0], out[1])
    return _return_types.histogram(hist, edges)


def _scatter_to_input(grad_output, input_shape, indices):
    lead = list(input_shape[:-2])
    hw = input_shape[-2] * input_shape[-1]
    g = grad_output.reshape(lead + [grad_output.numel() // max(1, math.prod(lead)) if grad_output.numel() else 0])
    idx = indices.reshape(lead + [g.shape[-1]])
    return _zeros(lead + [hw], dtype=grad_output.dtype).scatter_add(-1, idx, g).reshape(list(input_shape))


def max_pool2d_with_indices_backward(grad_output, input, kernel_size, stride, padding, dilation, ceil_mode, indices):
    """The gradient of max_pool2d's input: grad_output added at the saved flat (h * W + w) indices. Its
    output requires grad when input does, as torch's (the gradient to input is zero)."""
    class MaxPool2DWithIndicesBackward(_Function):
        @staticmethod
        def forward(ctx, g, x):
            ctx.save_for_backward(indices)
            ctx.gshape = list(g.shape)
            return _scatter_to_input(g, list(x.shape), indices)

        @staticmethod
        def backward(ctx, gg):
            (idx,) = ctx.saved_tensors
            lead = list(gg.shape[:-2])
            flat = gg.reshape(lead + [gg.shape[-2] * gg.shape[-1]])
            return flat.gather(-1, idx.reshape(lead + [-1]) if idx.numel() else idx.reshape(lead + [0])).reshape(ctx.gshape), None

    return MaxPool2DWithIndicesBackward.apply(grad_output, input)


_FUNCTIONS = ["native_layer_norm", "native_group_norm", "native_batch_norm", "_native_batch_norm_legit",
              "_softmax_backward_data", "_unsafe_masked_index", "_unsafe_masked_index_put_accumulate", "_chunk_cat",
              "nonzero_static", "histogram"]
# torch has these only as torch.ops.aten.<name> (ampgrad.ops.aten.<name>)
ATEN_ONLY = {"_batch_norm_with_update": _batch_norm_with_update, "native_dropout_backward": native_dropout_backward,
             "max_pool2d_with_indices_backward": max_pool2d_with_indices_backward}
_METHODS = ["nonzero_static", "histogram"]


def install(namespace):
    """Define the names nothing else defines, as ampgrad.<name> and (where torch has one) Tensor.<name>."""
    g = globals()
    for name in _FUNCTIONS:
        namespace.setdefault(name, g[name])
    for name in _METHODS:
        if not hasattr(Tensor, name):
            setattr(Tensor, name, g[name])
