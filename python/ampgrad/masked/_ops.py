"""torch.masked's reductions and normalizations on strided tensors: the masked-out elements are replaced
by the reduction's identity (torch.where, so they get a zero gradient) and the plain engine op runs on
the result. Semantics, dtypes and errors follow torch/masked/_ops.py (mask broadcast to the input,
identity per reduction, nan for all-masked mean/var/std/median, `dtype=` casts the result)."""
import math

from .. import _C
from .._creation import tensor as _tensor, ones as _ones
from .._dtype_info import iinfo as _iinfo
from .._functions import (sum as _sum, amax as _amax, amin as _amin, argmax as _argmax, argmin as _argmin,
                          logsumexp as _logsumexp, cumsum as _cumsum, cumprod as _cumprod, where as _where,
                          broadcast_to as _broadcast_to)
from .._sorting import nanmedian as _nanmedian
from ..nn import functional as _F
from ..linalg import vector_norm as _vector_norm

__all__ = ["amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "log_softmax", "logaddexp", "logsumexp", "mean",
           "median", "norm", "normalize", "prod", "softmax", "softmin", "std", "sum", "var"]

_SMALL_INTS = (_C.uint8, _C.bool, _C.int8, _C.int16, _C.int32)  # sum/prod promote these to int64


def _is_signed_or_uint8(dt):
    return dt != _C.bool and not dt.is_floating_point


def _reduction_identity(op_name, input, *args):
    """The identity of a reduction as a 0-d tensor of input's dtype, or None where it is undefined."""
    dt = input.dtype
    if op_name in ("sum", "cumsum"):
        return _tensor(0, dtype=dt)
    if op_name in ("prod", "cumprod"):
        return _tensor(1, dtype=dt)
    if op_name in ("amax", "argmax", "logaddexp", "logsumexp"):
        if dt.is_floating_point:
            return _tensor(-math.inf, dtype=dt)
        if _is_signed_or_uint8(dt):
            return _tensor(_iinfo(dt).min, dtype=dt)
    elif op_name in ("amin", "argmin"):
        if dt.is_floating_point:
            return _tensor(math.inf, dtype=dt)
        if _is_signed_or_uint8(dt):
            return _tensor(_iinfo(dt).max, dtype=dt)
    elif op_name == "mean":
        return None
    elif op_name == "norm":
        ord = args[0] if args else 2
        if ord == -math.inf:
            if not dt.is_floating_point:
                raise AssertionError(f"input must be floating point, got {dt}")
            return _tensor(math.inf, dtype=dt)
        return _tensor(0, dtype=dt)
    elif op_name == "median":
        return _tensor(math.nan, dtype=dt if dt.is_floating_point else _C.float32)
    elif op_name in ("var", "std"):
        return None
    raise NotImplementedError(f"identity of {op_name} on {dt} input")


def _canonical_dim(dim, ndim):
    """dim as a sorted tuple of non-negative dims (None and () mean all dims)."""
    if dim == () or dim is None:
        return tuple(range(ndim))
    ndim = max(ndim, 1)
    dims = []
    for d in ((dim,) if isinstance(dim, int) else dim):
        if d in dims:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if d >= ndim or d < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {d})")
        dims.append(d % ndim)
    return tuple(sorted(dims))


def _input_mask(input, *args, **kwargs):
    """The mask as a bool tensor of input's shape (broadcast; never more dims than input)."""
    mask = kwargs.get("mask")
    if mask is None:
        raise ValueError("_input_mask requires explicit mask")
    if tuple(mask.shape) != tuple(input.shape):
        if mask.dim() > input.dim():
            raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality higher than of the "
                             "input)")
        mask = _broadcast_to(mask.clone(), tuple(input.shape))
    return mask.to(dtype=_C.bool)


def _any(input, dim, keepdim):
    r = input
    for d in reversed(dim):
        r = r.any(dim=d, keepdim=keepdim)
    return r


def _output_mask(op, input, *args, **kwargs):
    """The mask of a masked operation's output (reductions: any over the reduced dims)."""
    name = getattr(op, "__name__", None)
    if not callable(op):
        raise ValueError(f"_output_mask expected masked operation (got {type(op).__name__} object)")
    if name in ("sum", "prod", "amax", "amin", "argmax", "argmin", "mean", "median", "norm", "var", "std",
                "logsumexp"):
        if name == "norm" and args:
            args = args[1:]
        dim = args[0] if args else kwargs.get("dim")
        outmask = _input_mask(input, *args, **kwargs)
        return _any(outmask, _canonical_dim(dim, input.dim()), bool(kwargs.get("keepdim", False)))
    if name in ("softmax", "log_softmax", "softmin", "normalize", "cumsum", "cumprod"):
        return _input_mask(input, *args, **kwargs)
    raise ValueError(f"_output_mask expected masked operation (got callable {op.__module__}.{name})")


def _combine_input_and_mask(op_name, input, mask, *args):
    if mask is None:
        return input
    fill = _reduction_identity(op_name, input, *args)
    return _where(_input_mask(input, mask=mask), input, fill)


def _sum_dtype(input, dtype):
    if dtype is None:
        dtype = _C.int64 if input.dtype in _SMALL_INTS else input.dtype
    return dtype


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = _sum_dtype(input, dtype)
    dim_ = _canonical_dim(dim, input.dim())
    return _sum(_combine_input_and_mask("sum", input, mask), dim_, bool(keepdim), dtype=dtype)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = _sum_dtype(input, dtype)
    dim_ = _canonical_dim(dim, input.dim())
    result = _combine_input_and_mask("prod", input, mask).to(dtype=dtype)
    for d in reversed(dim_):
        result = result.prod(dim=d, keepdim=bool(keepdim))
    return result


def cumsum(input, dim, *, dtype=None, mask=None):
    if dtype is None:
        dtype = input.dtype
    dim_ = _canonical_dim(dim, input.dim())[0]
    return _cumsum(_combine_input_and_mask("sum", input, mask), dim_, dtype=dtype).to(dtype=dtype)


def cumprod(input, dim, *, dtype=None, mask=None):
    if dtype is None:
        dtype = input.dtype
    dim_ = _canonical_dim(dim, input.dim())[0]
    return _cumprod(_combine_input_and_mask("prod", input, mask), dim_, dtype=dtype).to(dtype=dtype)


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    if dtype is None:
        dtype = input.dtype
    mask_input = _combine_input_and_mask("amax", input, mask)
    dim_ = _canonical_dim(dim, mask_input.dim())
    return _amax(mask_input, dim_, bool(keepdim)).to(dtype=dtype)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    if dtype is None:
        dtype = input.dtype
    mask_input = _combine_input_and_mask("amin", input, mask)
    dim_ = _canonical_dim(dim, mask_input.dim())
    return _amin(mask_input, dim_, bool(keepdim)).to(dtype=dtype)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    if dtype is None:
        dtype = input.dtype
    return _argmax(_combine_input_and_mask("argmax", input, mask), dim, bool(keepdim)).to(dtype=dtype)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    if dtype is None:
        dtype = input.dtype
    return _argmin(_combine_input_and_mask("argmin", input, mask), dim, bool(keepdim)).to(dtype=dtype)


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    source = "Optional"
    if dtype is None:
        dtype = input.dtype
        source = "Input"
    if not dtype.is_floating_point:
        raise ValueError(f"mean(): Could not infer output dtype. {source} dtype must be either a floating point or "
                         f"complex dtype. Got: {dtype}")
    if mask is None:
        count = sum(_ones(tuple(input.shape), dtype=_C.int64), dim, keepdim=keepdim)
        total = sum(input, dim, keepdim=keepdim, dtype=dtype)
    else:
        inmask = _input_mask(input, mask=mask)
        count = inmask.sum(dim=dim, keepdim=bool(keepdim))
        total = sum(input, dim, keepdim=keepdim, dtype=dtype, mask=inmask)
    return total / count


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    if dtype is None:
        dtype = input.dtype
    dim_ = _canonical_dim(dim, input.dim())[0]
    is_float = input.dtype.is_floating_point
    if not is_float:
        input = input.to(dtype=_C.float32)
    output = _nanmedian(_combine_input_and_mask("median", input, mask), dim_, keepdim).values
    if is_float:
        return output
    if not bool(_C.isnan(output).any()):
        return output.to(dtype=dtype)
    raise ValueError("masked median expects no fully masked out rows if dtype is not floating point")


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    if dtype is None:
        dtype = input.dtype
    dim_ = _canonical_dim(dim, input.dim())
    return _logsumexp(_combine_input_and_mask("logsumexp", input, mask), dim_, keepdim=keepdim).to(dtype=dtype)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    if dtype is None:
        dtype = input.dtype
    a = _combine_input_and_mask("logaddexp", input, input_mask)
    b = _combine_input_and_mask("logaddexp", other, other_mask)
    return _C.logaddexp(a, b).to(dtype=dtype)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    if dtype is None:
        dtype = input.dtype
    mask_input = _combine_input_and_mask("norm", input, mask, ord)
    dim_ = _canonical_dim(dim, input.dim())
    return _vector_norm(mask_input, ord, dim_, bool(keepdim), dtype=dtype)


def _std_var(input, dim, unbiased, *, correction_opt, keepdim, dtype, mask, take_sqrt):
    if unbiased is not None and correction_opt is not None:
        raise AssertionError("Only one of unbiased and correction may be given")
    correction = 1.0
    if unbiased is not None:
        correction = 1.0 if unbiased else 0.0
    if correction_opt is not None:
        correction = float(correction_opt)
    if dtype is None:
        dtype = input.dtype
        if not dtype.is_floating_point:
            dtype = _C.float32
    compute_dtype = dtype if dtype.is_floating_point else _C.float32
    if mask is None:
        count = sum(_ones(tuple(input.shape), dtype=_C.int64), dim, keepdim=True)
        sample_total = sum(input, dim, keepdim=True, dtype=dtype)
        inmask = None
    else:
        inmask = _input_mask(input, mask=mask)
        count = inmask.sum(dim=dim, keepdim=True)
        sample_total = sum(input, dim, keepdim=True, dtype=dtype, mask=inmask)
    x = _C.subtract(input, _C.divide(sample_total, count))
    total = sum(x * x, dim, keepdim=keepdim, dtype=compute_dtype, mask=inmask)
    if not keepdim:
        count = count.reshape(tuple(total.shape))
    if correction != 0:
        count = count.to(compute_dtype)
        count = _C.subtract(count, correction)
        count = _C.maximum(count, count.new_zeros([]))
    output = _C.divide(total, count).to(dtype=dtype)
    if take_sqrt:
        output = _C.sqrt(output)
    return output


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    return _std_var(input, dim, unbiased, correction_opt=correction, keepdim=keepdim, dtype=dtype, mask=mask,
                    take_sqrt=False)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    return _std_var(input, dim, unbiased, correction_opt=correction, keepdim=keepdim, dtype=dtype, mask=mask,
                    take_sqrt=True)


def softmax(input, dim, *, dtype=None, mask=None):
    if dtype is None:
        dtype = input.dtype
    dim_ = _canonical_dim(dim, input.dim())[0]
    return _F.softmax(_combine_input_and_mask("amax", input, mask), dim_, dtype=dtype)


def log_softmax(input, dim, *, dtype=None, mask=None):
    if dtype is None:
        dtype = input.dtype
    dim_ = _canonical_dim(dim, input.dim())[0]
    return _F.log_softmax(_combine_input_and_mask("amax", input, mask), dim_, dtype=dtype)


def softmin(input, dim, *, dtype=None, mask=None):
    if dtype is None:
        dtype = input.dtype
    dim_ = _canonical_dim(dim, input.dim())[0]
    return _F.softmin(_combine_input_and_mask("amin", input, mask), dim_, dtype=dtype)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    if dtype is None:
        dtype = input.dtype
    mask_input = _combine_input_and_mask("sum", input, mask)
    nrm_ = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    denom = _C.maximum(nrm_, nrm_.new_full([], eps))
    return _C.divide(mask_input, denom)


# torch's functions carry their own names (_output_mask dispatches on op.__name__)
for _f in (sum, prod, cumsum, cumprod, amax, amin, argmax, argmin, mean, median, logsumexp, logaddexp, norm, var, std,
           softmax, log_softmax, softmin, normalize):
    _f.__module__ = "ampgrad.masked"
del _f
