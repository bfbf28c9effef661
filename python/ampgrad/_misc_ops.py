"""torch functions that torch itself composes of other ops (issue 13): the *_window factories, combinations,
gradient, quantile / nanquantile, mode, unique / unique_consecutive, resize_, as_strided_copy/_scatter.
Each is a composition of ampgrad's engine ops (so gradients and double backward follow from those), with
torch's argument checks and messages. install() sets only names nothing else defines."""
import builtins
import itertools
import math
import numbers

import numpy as np

from . import _C, _argparse
from ._C import Tensor
from ._creation import _check_layout
from ._creation import tensor as _tensor, empty as _empty, zeros as _zeros, arange as _arange
from . import _functions as _fn
from . import _sorting as _srt
from . import return_types as _return_types
from . import linalg as _linalg
from .nn import functional as _F

_mode_t = getattr(_return_types, "mode", None) or _return_types._rt("mode")  # torch.return_types.mode

_bool = builtins.bool
_int = builtins.int
_float = builtins.float


def _type_name(v):
    if v is None:
        return "NoneType"
    if isinstance(v, Tensor):
        return "Tensor"
    return type(v).__name__


def _check_int_arg(fn, name, pos, v):
    if isinstance(v, _bool) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be int, not {_type_name(v)}")
    if not -2 ** 63 <= v < 2 ** 63:
        raise ValueError("Overflow when unpacking long long")


def _bad_combination(fn, *args, **kwargs):
    got = ", ".join([_type_name(a) for a in args] + [f"{k}={_type_name(v)}" for k, v in kwargs.items()])
    return TypeError(f"{fn}() received an invalid combination of arguments - got ({got})")


def _is_int(v):
    return isinstance(v, numbers.Integral) and not isinstance(v, _bool)


def _is_dtype(v):
    return v is None or isinstance(v, _C.dtype)


def _int_list(fn, name, pos, v):
    if isinstance(v, Tensor) or not isinstance(v, (list, tuple)) or not all(_is_int(e) for e in v):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be tuple of ints, not {_type_name(v)}")
    for e in v:
        if not -2 ** 63 <= e < 2 ** 63:
            raise ValueError("Overflow when unpacking long long")


def _check_bool_arg(fn, name, pos, v):
    if not isinstance(v, _bool):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be bool, not {_type_name(v)}")


def _check_float_arg(fn, name, pos, v):
    if isinstance(v, _bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be float, not {_type_name(v)}")


# ------------------------------------------------------------------------------------------ windows
def _window(name, window_length, periodic, dtype, device, requires_grad, fn):
    """ATen's window factories: checks, the 0 / 1 lengths, periodic = one longer window without its last
    point. fn(n, N) computes the window in float64 over n = 0..N-1; the result is rounded once to dtype."""
    if not _is_dtype(dtype) or not isinstance(requires_grad, _bool):
        raise _bad_combination(name, window_length, dtype=dtype)
    _check_int_arg(name, "window_length", 1, window_length)
    _check_bool_arg(name, "periodic", 2, periodic)
    if dtype is None:
        dtype = _C.get_default_dtype()
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    if window_length == 0:
        return _empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    if window_length == 1:
        return _tensor([1.0], dtype=dtype, device=device, requires_grad=requires_grad)
    N = window_length + 1 if periodic else window_length
    if N > 2 ** 34:  # far beyond memory: torch's allocator refuses it
        raise RuntimeError(f"DefaultCPUAllocator: can't allocate memory: you tried to allocate "
                           f"{window_length * dtype.itemsize} "
                           "bytes.")
    with np.errstate(all="ignore"):
        w = fn(np.arange(N, dtype=np.float64), N)[:window_length]
    out = _tensor(np.ascontiguousarray(w), dtype=_C.float64).to(dtype)
    if device is not None:
        out = out.to(device)
    return out.requires_grad_(requires_grad)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   pin_memory=False, requires_grad=False):
    if layout is not None:
        _check_layout(layout)
    _check_float_arg("hamming_window", "alpha", 3, alpha)
    _check_float_arg("hamming_window", "beta", 4, beta)
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, N: np.cos(n * (2 * math.pi / (N - 1))) * -beta + alpha)


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                requires_grad=False):
    if layout is not None:
        _check_layout(layout)
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, N: np.cos(n * (2 * math.pi / (N - 1))) * -0.5 + 0.5)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    if layout is not None:
        _check_layout(layout)
    def f(n, N):
        x = n * (math.pi / (N - 1))
        return 0.08 * np.cos(4 * x) - 0.5 * np.cos(2 * x) + 0.42
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad, f)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    if layout is not None:
        _check_layout(layout)
    def f(n, N):
        x = n * (2.0 / (N - 1))
        half = ((N - 1) >> 1) + 1
        x[half:] = 2 - x[half:]
        return x
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad, f)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  pin_memory=False, requires_grad=False):
    if layout is not None:
        _check_layout(layout)
    _check_float_arg("kaiser_window", "beta", 3, beta)

    # torch computes in the window's dtype: a beta beyond float32's range is inf there (inf * 0 = nan)
    with np.errstate(all="ignore"):
        b32 = _float(np.float32(beta))
    b32 = beta if (dtype or _C.get_default_dtype()) == _C.float64 else b32

    def f(n, N, beta=b32):
        a = (N - 1) / 2.0
        r = np.sqrt(np.maximum(1 - ((n - a) / a) ** 2, 0.0))
        return np.i0(beta * r) / np.i0(beta)
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, f)


# ------------------------------------------------------------------------------------- combinations
def combinations(input, r=2, with_replacement=False):
    """The length-r combinations of a 1-d tensor's elements, as rows (itertools order), by index_select + stack."""
    _check_int_arg("combinations", "r", 2, r)
    _check_bool_arg("combinations", "with_replacement", 3, with_replacement)
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return _empty((0,), dtype=input.dtype, device=input.device)
    n = input.shape[0]
    gen = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = np.array(list(gen(range(n), r)), dtype=np.int64).reshape(-1, r)
    cols = [_C.index_select(input, 0, _tensor(np.ascontiguousarray(idx[:, j]), device=input.device))
            for j in range(r)]
    return _C.stack(cols, 1)


# ----------------------------------------------------------------------------------------- gradient
def _dim_list(dim, ndim, fn="gradient"):
    if dim is None:
        return list(range(ndim))
    dims = [dim] if isinstance(dim, numbers.Integral) else list(dim)
    out = []
    for d in dims:
        if d < -max(ndim, 1) or d >= max(ndim, 1):
            lo, hi = -max(ndim, 1), max(ndim, 1) - 1
            raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {d})")
        d = d % max(ndim, 1)
        if d in out:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        out.append(d)
    return out


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Second-order accurate central differences in the interior and first or second order one-sided
    differences at the edges (numpy.gradient's formulas), for uniform or coordinate spacing."""
    ok_spacing = spacing is None or isinstance(spacing, (numbers.Real, Tensor)) and not isinstance(spacing, _bool) or (
        isinstance(spacing, (list, tuple)) and all(isinstance(v, (numbers.Real, Tensor)) for v in spacing))
    ok_dim = dim is None or _is_int(dim) or (isinstance(dim, (list, tuple)) and all(_is_int(v) for v in dim))
    if not (ok_spacing and ok_dim and _is_int(edge_order)):
        raise _bad_combination("gradient", input, spacing=spacing, dim=dim, edge_order=edge_order)
    # aten's pre_check_gradient order: uint8, the spacing list's length, edge_order, then the dims
    if input.dtype == _C.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    if dim is None and isinstance(spacing, (list, tuple)) and len(spacing) != input.dim():
        raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal to "
                           f"'self.dim() = {input.dim()}', since dim argument was not given, but got a list of length "
                           f"{len(spacing)}")
    n_dims = None if dim is None else (1 if _is_int(dim) else len(dim))
    if n_dims is not None and isinstance(spacing, (list, tuple)) and len(spacing) != n_dims:
        raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                           f"arguments to have the same length, but got a spacing argument of length "
                           f"{len(spacing)} and a dim argument of length {n_dims}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = _dim_list(dim, input.dim())
    if spacing is None:
        spacing = 1
    if isinstance(spacing, Tensor) and spacing.dim() == 0:
        spacing = spacing.item()
    if isinstance(spacing, (list, tuple)):
        spacings = list(spacing)
        for h in spacings:
            if isinstance(h, Tensor) and h.dim() > 1:
                raise RuntimeError("torch.gradient expected each element of spacing to have one dimension, but got an "
                                   f"element with {h.dim()} dimensions!")
        for h in spacings:
            if isinstance(h, Tensor) and h.dim() == 1 and h.numel() < 2:
                # coordinates: aten selects the first of their differences (an empty diff)
                raise IndexError("select(): index 0 out of range for tensor of size [0] at dimension 0")
    else:
        spacings = [spacing] * len(dims)
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    x = input if input.dtype.is_floating_point else input.to(_C.get_default_dtype())
    return tuple(_gradient_1d(x, d, h, edge_order) for d, h in zip(dims, spacings))


def _sl(x, d, start, stop):
    return x.narrow(d, start, stop - start)


def _gradient_1d(f, d, h, edge_order):
    n = f.shape[d]
    if isinstance(h, Tensor) and h.dim() > 0 and h.numel() == n:
        c = h.to(_C.promote_types(f.dtype, h.dtype) if h.dtype.is_floating_point else f.dtype)
        f = f.to(_C.promote_types(f.dtype, c.dtype))
        shape = [1] * f.dim()
        shape[d] = -1
        dx = (c[1:] - c[:-1])
        parts = []
        if n > 2:
            a1, a2 = dx[:-1].reshape(shape), dx[1:].reshape(shape)
            interior = (-a2 / (a1 * (a1 + a2))) * _sl(f, d, 0, n - 2) + ((a2 - a1) / (a1 * a2)) * _sl(f, d, 1, n - 1) \
                + (a1 / (a2 * (a1 + a2))) * _sl(f, d, 2, n)
        if edge_order == 1:
            first = (_sl(f, d, 1, 2) - _sl(f, d, 0, 1)) / dx[0]
            last = (_sl(f, d, n - 1, n) - _sl(f, d, n - 2, n - 1)) / dx[-1]
        else:
            d1, d2 = dx[0], dx[1]
            first = (-(2 * d1 + d2) / (d1 * (d1 + d2))) * _sl(f, d, 0, 1) + ((d1 + d2) / (d1 * d2)) * _sl(f, d, 1, 2) \
                + (-d1 / (d2 * (d1 + d2))) * _sl(f, d, 2, 3)
            d1, d2 = dx[-2], dx[-1]
            last = (d2 / (d1 * (d1 + d2))) * _sl(f, d, n - 3, n - 2) + (-(d2 + d1) / (d1 * d2)) * _sl(f, d, n - 2, n - 1) \
                + ((2 * d2 + d1) / (d2 * (d1 + d2))) * _sl(f, d, n - 1, n)
        parts = [first] + ([interior] if n > 2 else []) + [last]
        return _C.cat(parts, d)
    if isinstance(h, Tensor):
        h = h.item() if h.numel() == 1 else 1
    if edge_order == 1:
        first = (_sl(f, d, 1, 2) - _sl(f, d, 0, 1)) / h
        last = (_sl(f, d, n - 1, n) - _sl(f, d, n - 2, n - 1)) / h
    else:
        first = (-1.5 * _sl(f, d, 0, 1) + 2.0 * _sl(f, d, 1, 2) - 0.5 * _sl(f, d, 2, 3)) / h
        last = (0.5 * _sl(f, d, n - 3, n - 2) - 2.0 * _sl(f, d, n - 2, n - 1) + 1.5 * _sl(f, d, n - 1, n)) / h
    parts = [first]
    if n > 2:
        parts.append((_sl(f, d, 2, n) - _sl(f, d, 0, n - 2)) / (2.0 * h))
    parts.append(last)
    return _C.cat(parts, d)


# ------------------------------------------------------------------------------- quantile, nanquantile
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name, input, q, dim, keepdim, interpolation, ignore_nan):
    if not (isinstance(q, (Tensor, numbers.Real)) and (dim is None or _is_int(dim)) and isinstance(keepdim, _bool)
            and isinstance(interpolation, str)):
        raise _bad_combination(name, input, q, dim=dim, keepdim=keepdim, interpolation=interpolation)
    if dim is not None and not -2 ** 63 <= dim < 2 ** 63:
        raise ValueError("Overflow when unpacking long long")
    if not isinstance(interpolation, str) or interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")
    if input.dtype not in (_C.float32, _C.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if isinstance(q, Tensor):
        if q.dim() > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q.dtype != input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        if q.numel() and not _bool(((q >= 0) & (q <= 1)).all()):
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
        qt = q
    else:
        if not 0 <= q <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
        qt = _tensor(_float(q), dtype=input.dtype, device=input.device)
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if dim is None:
        srt = _srt.sort(input.reshape(-1))[0]
        red_shape = [1] * input.dim() if keepdim else []
    else:
        d = _dim_list(dim, input.dim())[0]
        x = input.unsqueeze(-1) if input.dim() == 0 else input
        srt = _srt.sort(x.movedim(d, -1))[0]
        red_shape = list(input.shape)
        if input.dim():
            if keepdim:
                red_shape[d] = 1
            else:
                del red_shape[d]
    n = srt.shape[-1]
    q1 = qt.reshape(-1)  # (Q,)
    nan = srt.isnan()
    if ignore_nan:
        valid = (~nan).sum(-1, keepdim=True)
        ranks = q1 * (valid - 1).to(input.dtype)
        ranks = _C.where(ranks < 0, _zeros((), dtype=input.dtype), ranks)
    else:
        ranks = q1 * _float(n - 1) + _zeros(tuple(srt.shape[:-1]) + (1,), dtype=input.dtype)
        ranks = _C.where(nan.any(-1, keepdim=True), _tensor(_float(n - 1), dtype=input.dtype), ranks)
    if interpolation == "lower":
        ranks = ranks.floor()
    elif interpolation == "higher":
        ranks = ranks.ceil()
    elif interpolation == "nearest":
        ranks = ranks.round()
    below = ranks.to(_C.int64)
    out = srt.gather(-1, below)
    if interpolation in ("linear", "midpoint"):
        w = ranks - below.to(ranks.dtype) if interpolation == "linear" else _fn.full_like(ranks, 0.5)
        above = srt.gather(-1, ranks.ceil().to(_C.int64))
        out = _C.lerp(out, above, w)
    # out: (*rest, Q) -> (Q, *red_shape) or red_shape for a scalar q
    if qt.dim() == 0:
        return out.reshape(red_shape)
    return out.movedim(-1, 0).reshape([q1.shape[0]] + red_shape)


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


# --------------------------------------------------------------------------------------------- mode
def _named(t, name):
    """t with its grad_fn (made by this composition) named as torch's single op's node."""
    if t.requires_grad and t.grad_fn is not None:
        _C._set_grad_fn_name(t, name)
    return t


def mode(input, dim=-1, keepdim=False):
    """The most frequent value along dim (ties: the smallest value; NaNs are all distinct) and the index of
    its last occurrence, as torch's CPU kernel; the values are a gather of input (gradient to that index)."""
    _check_int_arg("mode", "dim", 2, dim)
    _check_bool_arg("mode", "keepdim", 3, keepdim)
    nd = input.dim()
    d = _dim_list(dim, nd)[0]
    if nd == 0:
        idx = _zeros((), dtype=_C.int64, device=input.device)
        return _mode_t(_named(input.clone(), "ModeBackward0"), idx)
    n = input.shape[d]
    if n == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    x = input.movedim(d, -1)
    rest = tuple(x.shape[:-1])
    if input.numel() == 0:  # the other dims are empty: values keep the graph (torch's do)
        values = input.narrow(d, 0, 1).clone()
        idx = _zeros(tuple(values.shape), dtype=_C.int64, device=input.device)
        if not keepdim:
            values, idx = values.squeeze(d), idx.squeeze(d)
        return _mode_t(_named(values, "ModeBackward0"), idx)
    x2 = x.reshape(-1, n)
    key = x2.to(_C.uint8) if input.dtype == _C.bool else x2.detach()
    s, perm = _srt.sort(key, -1, stable=True)
    new = _C.cat([_fn.ones_like(s[:, :1]).to(_C.bool), s[:, 1:] != s[:, :-1]], 1)
    gid = new.to(_C.int64).cumsum(1) - 1
    counts = _zeros(tuple(s.shape), dtype=_C.int64, device=input.device).scatter_add(1, gid, _fn.ones_like(gid))
    best = counts.argmax(1, keepdim=True)  # first maximum: the smallest value among the most frequent
    in_best = gid == best
    idx = _C.where(in_best, perm, _fn.full_like(perm, -1)).amax(1, keepdim=True)
    values = x2.gather(1, idx)
    values, idx = values.reshape(rest), idx.reshape(rest)
    if keepdim:
        values, idx = values.unsqueeze(d), idx.unsqueeze(d)
    return _mode_t(_named(values, "ModeBackward0"), idx)


# ----------------------------------------------------------------------------- unique, unique_consecutive
def _group_outputs(vals, new, n, perm, inv_shape, return_inverse, return_counts, device):
    """Common tail of unique / unique_consecutive: first-of-group mask -> (output, inverse, counts)."""
    gid = new.to(_C.int64).cumsum(0) - 1
    inverse = None
    if return_inverse:
        inverse = gid if perm is None else _zeros((n,), dtype=_C.int64, device=device).scatter(0, perm, gid)
        inverse = inverse.reshape(inv_shape)
    counts = None
    if return_counts:
        starts = _fn.nonzero(new).reshape(-1)
        counts = _C.cat([starts, _tensor([n], dtype=_C.int64, device=device)])
        counts = counts[1:] - counts[:-1]
    return gid, inverse, counts


def _pack(output, inverse, counts, return_inverse, return_counts):
    if not return_inverse and not return_counts:
        return output
    res = [output]
    if return_inverse:
        res.append(inverse)
    if return_counts:
        res.append(counts)
    return tuple(res)


def _lex_sort_rows(rows):
    """Stable lexicographic order of the rows of a 2-d tensor (radix sort: one stable sort per column)."""
    n, m = rows.shape
    perm = _arange(n, device=rows.device)
    key_rows = rows.to(_C.uint8) if rows.dtype == _C.bool else rows
    for j in range(m - 1, -1, -1):
        col = key_rows[:, j].index_select(0, perm)
        _, p = _srt.sort(col, stable=True)
        perm = perm.index_select(0, p)
    return perm


def _unique_dim(input, dim, consecutive, return_inverse, return_counts):
    nd = input.dim()
    d = _dim_list(dim, nd)[0]
    if nd == 0:
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got {dim})")
    if input.numel() == 0:
        if sum(1 for s_ in input.shape if s_ == 0) > 1:
            raise RuntimeError("Number of zero sized dimensions is more than one, so unique cannot be applied ")
        if input.shape[d] != 0:
            raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
    n = input.shape[d]
    moved = input.movedim(d, 0)
    if n == 0:
        inv = _empty((0,), dtype=_C.int64, device=input.device)
        return _pack(input.clone(), inv, inv.clone(), return_inverse, return_counts)
    rows = moved.reshape(n, -1)
    perm = None if consecutive else _lex_sort_rows(rows)
    srows = rows if perm is None else rows.index_select(0, perm)
    diff = (srows[1:] != srows[:-1])
    diff = diff.any(1) if diff.shape[1] else _zeros((n - 1,), dtype=_C.bool, device=input.device)
    new = _C.cat([_tensor([True], device=input.device), diff])
    _, inverse, counts = _group_outputs(None, new, n, perm, (n,), return_inverse, return_counts, input.device)
    first = _fn.nonzero(new).reshape(-1)
    src = moved if perm is None else moved.index_select(0, perm)
    output = src.index_select(0, first).movedim(0, d)
    return _pack(output, inverse, counts, return_inverse, return_counts)


def _unique_args(fn, flags, dim):
    for k, v in flags.items():
        if not isinstance(v, _bool):
            raise TypeError(f"{fn}(): argument '{k}' must be bool, not {_type_name(v)}")
    if dim is not None:
        _check_int_arg("unique_dim" if fn != "unique_consecutive" else fn, "dim", 2, dim)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """Sorted unique values (torch's CPU kernels sort for sorted=False too); NaNs are all distinct."""
    _unique_args("unique_dim" if dim is not None else "_unique2",
                 {"sorted": sorted, "return_inverse": return_inverse, "return_counts": return_counts}, dim)
    if dim is not None:
        return _unique_dim(input, dim, False, return_inverse, return_counts)
    flat = input.reshape(-1)
    n = flat.shape[0]
    key = flat.to(_C.uint8) if input.dtype == _C.bool else flat
    _, perm = _srt.sort(key, stable=True)
    vals = flat.index_select(0, perm)
    if n == 0:
        inv = _empty(tuple(input.shape), dtype=_C.int64, device=input.device)
        return _pack(vals, inv, _empty((0,), dtype=_C.int64, device=input.device), return_inverse, return_counts)
    new = _C.cat([_tensor([True], device=input.device), vals[1:] != vals[:-1]])
    _, inverse, counts = _group_outputs(vals, new, n, perm, tuple(input.shape), return_inverse, return_counts,
                                        input.device)
    return _pack(_C.masked_select(vals, new), inverse, counts, return_inverse, return_counts)


def unique_consecutive(input, *args, **kwargs):
    """torch.unique_consecutive, including its positional-argument quirk: torch picks which outputs to return
    from the 3rd positional argument (return_inverse's selector) and the 2nd (return_counts'), swapped relative
    to the signature, while the values are computed as passed (torch/functional.py's boolean_dispatch)."""
    names = ("return_inverse", "return_counts", "dim")
    if len(args) > 3:
        raise TypeError(f"unique_consecutive() takes from 1 to 4 positional arguments but {len(args) + 1} were given")
    bound = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names or k in bound:
            raise TypeError(f"unique_consecutive() got an unexpected keyword argument '{k}'")
        bound[k] = v
    sel_inv = args[1] if len(args) > 1 else kwargs.get("return_inverse", False)
    sel_cnt = args[0] if len(args) > 0 else kwargs.get("return_counts", False)
    res = _unique_consecutive(input, bound.get("return_inverse", False), bound.get("return_counts", False),
                              bound.get("dim"))
    if not isinstance(sel_inv, _bool) or not isinstance(sel_cnt, _bool):
        return res
    full = res if isinstance(res, tuple) else (res,)
    out = full[0]
    inv = full[1] if bound.get("return_inverse", False) and len(full) > 1 else None
    cnt = full[-1] if bound.get("return_counts", False) and len(full) > 1 else None
    if (sel_inv and inv is None) or (sel_cnt and cnt is None):  # the quirk asks for an output not requested:
        if bound.get("dim") is None:  # torch's flat kernel leaves it empty, its dim kernel computes it
            inv = _empty((0,), dtype=_C.int64, device=input.device) if inv is None else inv
            cnt = _empty((0,), dtype=_C.int64, device=input.device) if cnt is None else cnt
        else:
            full3 = _unique_consecutive(input, True, True, bound.get("dim"))
            inv = full3[1] if inv is None else inv
            cnt = full3[2] if cnt is None else cnt
    return _pack(out, inv, cnt, sel_inv, sel_cnt)


def _unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    _unique_args("unique_consecutive", {"return_inverse": return_inverse, "return_counts": return_counts}, dim)
    if dim is not None:
        return _unique_dim(input, dim, True, return_inverse, return_counts)
    flat = input.reshape(-1)
    n = flat.shape[0]
    if n == 0:
        inv = _empty(tuple(input.shape), dtype=_C.int64, device=input.device)
        return _pack(flat.clone(), inv, _empty((0,), dtype=_C.int64, device=input.device), return_inverse,
                     return_counts)
    new = _C.cat([_tensor([True], device=input.device), flat[1:] != flat[:-1]])
    _, inverse, counts = _group_outputs(flat, new, n, None, tuple(input.shape), return_inverse, return_counts,
                                        input.device)
    return _pack(_C.masked_select(flat, new), inverse, counts, return_inverse, return_counts)


def _t_unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
    return unique(self, sorted, return_inverse, return_counts, dim)


def _t_unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    return _unique_consecutive(self, return_inverse, return_counts, dim)


# -------------------------------------------------------------------------------- resize_, as_strided_*
def _sizes_arg(sizes):
    if len(sizes) == 1 and isinstance(sizes[0], (list, tuple)) or (len(sizes) == 1 and hasattr(sizes[0], "__len__")
                                                                   and not isinstance(sizes[0], Tensor)):
        sizes = tuple(sizes[0])
    for v in sizes:
        _check_int_arg("resize_", "size", 1, v)
    if any(v < 0 for v in sizes):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(sizes)}: {list(sizes)}")
    return tuple(_int(v) for v in sizes)


def resize_(self, *sizes, memory_format=None):
    """Reshapes self in place to sizes, keeping its leading elements (row-major); new elements are zero
    (torch leaves them uninitialized)."""
    sizes = _sizes_arg(sizes)
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    n = math.prod(sizes)
    if tuple(self.shape) == sizes:
        return self
    flat = self.detach().reshape(-1)
    if n <= flat.shape[0]:
        new = flat[:n].clone()
    else:
        new = _C.cat([flat, _zeros((n - flat.shape[0],), dtype=self.dtype, device=self.device)])
    self.data = new.reshape(sizes)
    return self


def resize_as_(self, the_template, memory_format=None):
    if not isinstance(the_template, Tensor):
        raise TypeError(f"resize_as_(): argument 'the_template' (position 1) must be Tensor, not "
                        f"{_type_name(the_template)}")
    return resize_(self, tuple(the_template.shape))


def _as_strided_args(fn, size, stride, storage_offset):
    _int_list(fn, "size", 2, size)
    _int_list(fn, "stride", 3, stride)
    if storage_offset is not None:
        _check_int_arg(fn, "storage_offset", 4, storage_offset)
        if storage_offset < 0:
            raise RuntimeError(f"Tensor: invalid storage offset {storage_offset}")


def as_strided_copy(input, size, stride, storage_offset=None):
    _as_strided_args("as_strided_copy", size, stride, storage_offset)
    return _C.as_strided(input, size, stride, storage_offset).clone()


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of input with src written into its as_strided(size, stride, storage_offset) view."""
    if not isinstance(src, Tensor):
        raise TypeError(f"as_strided_scatter(): argument 'src' (position 2) must be Tensor, not {_type_name(src)}")
    _as_strided_args("as_strided_scatter", size, stride, storage_offset)
    out = input.clone()
    view = _C.as_strided(out, size, stride, storage_offset)
    if tuple(view.shape) != tuple(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(view.shape)}")
    view.copy_(src)
    return _named(out, "AsStridedScatterBackward0")


# ---------------------------------------------------------------- torch.lu / torch.lu_solve (deprecated
# spellings of linalg.lu_factor_ex / linalg.lu_solve that scripts still call)

def lu(A, pivot=True, get_infos=False, out=None):
    """torch.lu: (LU, pivots), or (LU, pivots, infos) with get_infos; linalg.lu_factor_ex underneath."""
    # torch's body calls torch._lu_with_info(A, pivot=pivot, check_errors=not get_infos): its parser's errors first
    err = _argparse.sig_parse_error("_lu_with_info", ("Tensor input, bool pivot=, bool check_errors=",), (A,),
                                    {"pivot": pivot, "check_errors": not get_infos})
    if err is not None:
        raise err
    if isinstance(A, Tensor) and A.dim() >= 2 and A.numel() == 0:  # torch returns empty factors for any dtype
        batch = tuple(A.shape[:-2])
        from_ex = (A.clone(), _zeros(batch + (min(A.shape[-2], A.shape[-1]),), dtype=_C.int32),
                   _zeros(batch, dtype=_C.int32))
    else:
        from_ex = _linalg.lu_factor_ex(A, pivot=pivot)
    res = (from_ex[0], from_ex[1], from_ex[2]) if get_infos else (from_ex[0], from_ex[1])
    if out is not None:
        for o, r in zip(out, res):
            o.resize_(r.shape).copy_(r)
        return tuple(out)
    return res


def lu_solve(b, LU_data, LU_pivots, *, out=None):
    """torch.lu_solve(b, LU_data, LU_pivots) = linalg.lu_solve(LU_data, LU_pivots, b)."""
    r = _linalg.lu_solve(LU_data, LU_pivots, b)
    if out is not None:
        out.resize_(r.shape).copy_(r)
        return out
    return r


# ---------------------------------------------------------------- torch.grid_sampler_2d / 3d (aten's spellings of
# F.grid_sample with the mode and padding as enum ints)
_GRID_MODES = ("bilinear", "nearest", "bicubic")
_GRID_PADS = ("zeros", "border", "reflection")


def _grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    if not 0 <= interpolation_mode < len(_GRID_MODES):
        raise RuntimeError(f"grid_sampler(): invalid interpolation_mode {interpolation_mode}")
    if not 0 <= padding_mode < len(_GRID_PADS):
        raise RuntimeError(f"grid_sampler(): invalid padding_mode {padding_mode}")
    return _F.grid_sample(input, grid, _GRID_MODES[interpolation_mode], _GRID_PADS[padding_mode], align_corners)


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    return _grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    return _grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    return _grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


_FUNCTIONS = ["grid_sampler", "grid_sampler_2d", "grid_sampler_3d", "lu", "lu_solve", "hamming_window", "hann_window", "blackman_window", "bartlett_window", "kaiser_window", "combinations",
              "gradient", "quantile", "nanquantile", "mode", "unique", "unique_consecutive", "as_strided_copy",
              "as_strided_scatter", "resize_as_"]
_METHODS = ["lu", "lu_solve", "quantile", "nanquantile", "mode", "resize_", "resize_as_"]


def install(namespace):
    """Define the names nothing else defines, as ampgrad.<name> and (where torch has one) Tensor.<name>."""
    g = globals()
    for name in _FUNCTIONS:
        namespace.setdefault(name, g[name])
    for name in _METHODS:
        if not hasattr(Tensor, name):
            setattr(Tensor, name, g[name])
    if not hasattr(_return_types, "mode"):
        _return_types.mode = _mode_t
    if not hasattr(Tensor, "unique"):
        Tensor.unique = _t_unique
    if not hasattr(Tensor, "unique_consecutive"):
        Tensor.unique_consecutive = _t_unique_consecutive
    if not hasattr(Tensor, "as_strided_scatter"):
        Tensor.as_strided_scatter = as_strided_scatter
