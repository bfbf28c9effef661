"""torch-level fronts of the linalg decompositions (torch.det, torch.inverse, torch.svd, ...) and their
Tensor methods, plus cov / corrcoef / kron / block_diag composed from ampgrad ops."""
import builtins
import functools
import math
import warnings

from . import _C
from . import linalg as _la
from . import return_types as _rt
from ._creation import zeros
from ._C import Tensor, cat, promote_types
from .autograd.function import Function

__all__ = ["det", "logdet", "slogdet", "inverse", "cholesky", "cholesky_inverse", "cholesky_solve", "triangular_solve",
           "lu_unpack", "matrix_power", "matrix_exp", "pinverse", "svd", "qr", "cov", "corrcoef", "kron", "block_diag"]


def det(input):
    return _la.det(input)


def logdet(input):
    if isinstance(input, _C.Tensor) and input.dtype in (_C.float16, _C.bfloat16):
        raise RuntimeError(f"logdet: Low precision dtypes not supported. Got {_C._scalar_type_name(input.dtype)}")
    sign, lad = _la.slogdet(input)
    return _C.where(sign < 0, math.nan, lad)


def slogdet(input):
    return _rt.slogdet(*_C._linalg_slogdet(_la._square(input, "linalg.slogdet")))


def inverse(input):
    return _la.inv(input)


def cholesky(input, upper=False):
    if isinstance(input, Tensor) and input.numel() == 0:
        # aten's cholesky returns empty_like(input) for an empty input before any check
        return input.clone()   # (no elements: keeps the autograd history only)
    try:
        return _C._linalg_cholesky_ex(_la._square(input, "cholesky"), bool(upper), True, True)[0]
    except RuntimeError as e:
        # torch.cholesky dispatches on the dtype (linalg.cholesky's own check names the dtype instead)
        if not str(e).startswith("cholesky: Expected a floating point") or input.numel() == 0:
            raise
        err = NotImplementedError(f"\"cholesky_cpu\" not implemented for '{_la._c10(input.dtype)}'")
    raise err


def cholesky_inverse(input, upper=False):
    if isinstance(input, Tensor) and input.dim() < 2:
        raise RuntimeError("cholesky_inverse: The input tensor A must have at least 2 dimensions.")
    _la._square(input, "cholesky_inverse")
    if isinstance(input, Tensor) and input.dtype not in (_C.float32, _C.float64):
        raise NotImplementedError(f"\"cholesky_inverse_out_cpu\" not implemented for '{_la._c10(input.dtype)}'")
    return _C._cholesky_inverse(input, bool(upper))


def cholesky_solve(input, input2, upper=False):
    # torch's order: the dims, linearSolveCheckInputs (dtype, sizes), then the dtype dispatch
    B, L = input, input2
    if B.dim() < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {B.dim()} dimensions instead")
    if L.dim() < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {L.dim()} dimensions instead")
    if B.dtype != L.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {_la._c10(B.dtype)} and A of type {_la._c10(L.dtype)} instead.")
    if L.shape[-1] != L.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are {L.shape[-2]} by {L.shape[-1]} matrices")
    if L.shape[-1] != B.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is {L.shape[-1]} by "
                           f"{L.shape[-1]} but each b matrix is {B.shape[-2]} by {B.shape[-1]}")
    if B.dtype not in (_C.float32, _C.float64):
        raise NotImplementedError(f"\"cholesky_solve_cpu\" not implemented for '{_la._c10(B.dtype)}'")
    return CholeskySolve.apply(B, L, bool(upper))


def _cholesky_solve_fwd(B, L, upper):
    if upper:
        y = _la.solve_triangular(L.mT, B, upper=False)
        return _la.solve_triangular(L, y, upper=True)
    y = _la.solve_triangular(L, B, upper=False)
    return _la.solve_triangular(L.mT, y, upper=True)


class CholeskySolve(Function):
    """X = (L L^T)^-1 B from the factor L. The gradient is torch's (cholesky_solve_backward): it treats L as
    the dense factor of A = L L^T, so the other triangle gets a gradient too, as in torch."""

    @staticmethod
    def forward(ctx, B, L, upper):
        X = _cholesky_solve_fwd(B, L, upper)
        ctx.save_for_backward(L, X)
        ctx.upper = upper
        ctx.shapes = (tuple(B.shape), tuple(L.shape))
        return X

    @staticmethod
    def backward(ctx, gX):
        L, X = ctx.saved_tensors
        gB = CholeskySolve.apply(gX, L, ctx.upper)
        C = gB @ X.mT
        C = C + C.mT
        gL = -(L @ C) if ctx.upper else -(C @ L)
        return gB.sum_to_size(ctx.shapes[0]), gL.sum_to_size(ctx.shapes[1]), None


def _triangular_solve_checks(b, A):
    """aten's triangular_solve: its dimension checks, linearSolveCheckInputs, the batch broadcast, then the CPU
    kernel's dtype dispatch (float32/float64/complex only: NotImplementedError), in that order."""
    for name, t in (("b", b), ("A", A)):
        if t.dim() < 2:
            raise RuntimeError(f"torch.triangular_solve: Expected {name} to have at least 2 dimensions, but it has {t.dim()} "
                               "dimensions instead")
    if b.dtype != A.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {_la._c10(b.dtype)} and A of "
                           f"type {_la._c10(A.dtype)} instead.")
    n = A.shape[-1]
    if A.shape[-2] != n:
        raise RuntimeError(f"A must be batches of square matrices, but they are {A.shape[-2]} by {n} matrices")
    if b.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for triangular_solve: each A matrix is {n} by {n} but each b "
                           f"matrix is {b.shape[-2]} by {b.shape[-1]}")
    _C.broadcast_shapes_(list(b.shape[:-2]), list(A.shape[:-2]))
    if b.dtype not in (_C.float32, _C.float64) and not b.is_complex():
        raise NotImplementedError(f'"triangular_solve_cpu" not implemented for \'{_la._c10(b.dtype)}\'')


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):
    if isinstance(b, Tensor) and isinstance(A, Tensor):
        _triangular_solve_checks(b, A)
    M = A.mT if transpose else A
    x = _la.solve_triangular(M, b, upper=bool(upper) != bool(transpose), unitriangular=bool(unitriangular))
    # the cloned coefficient is A broadcast to the batch shape, as aten's
    batch = _C.broadcast_shapes_(list(b.shape[:-2]), list(A.shape[:-2]))
    return _rt.triangular_solve(x, A.expand(batch + list(A.shape[-2:])).clone())


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    for pos, (name, v) in enumerate((("unpack_data", unpack_data), ("unpack_pivots", unpack_pivots)), 3):
        if not isinstance(v, bool):
            raise TypeError(f"lu_unpack(): argument '{name}' (position {pos}) must be bool, not {type(v).__name__}")
    if isinstance(LU_data, Tensor) and LU_data.requires_grad and _C.is_grad_enabled():
        LU_data.size(-1), LU_data.size(-2)   # torch's autograd kernel reads both sizes before the op's checks
    if not unpack_pivots and isinstance(LU_data, Tensor) and isinstance(LU_pivots, Tensor) and LU_data.dim() >= 2:
        # torch reads LU_pivots only to unpack them: any Tensor will do
        k = builtins.min(LU_data.shape[-2], LU_data.shape[-1])
        LU_pivots = zeros(list(LU_data.shape[:-2]) + [k], dtype=_C.int32) + 1
    return _rt.lu_unpack(*_C._lu_unpack(LU_data, LU_pivots, bool(unpack_data), bool(unpack_pivots)))


def matrix_power(input, n):
    return _la.matrix_power(input, n)


def matrix_exp(input):
    return _la.matrix_exp(input)


def pinverse(input, rcond=1e-15):
    return _la.pinv(input, rtol=rcond)


def svd(input, some=True, compute_uv=True):
    if not compute_uv:
        m, n = input.shape[-2], input.shape[-1]
        b = list(input.shape[:-2])
        S = _la.svdvals(input)
        return _rt.svd(zeros(b + [m, m], dtype=input.dtype), S, zeros(b + [n, n], dtype=input.dtype))
    U, S, Vh = _la.svd(input, full_matrices=not some)
    return _rt.svd(U, S, Vh.mT)


def qr(input, some=True):
    return _rt.qr(*_C._linalg_qr(input, "reduced" if some else "complete"))


def cov(input, *, correction=1, fweights=None, aweights=None):
    # Follows ATen's Correlation.cpp: its check order and its one-observation corner case.
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with {input.dim()} dimensions")
    if input.dtype == _C.bool:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x_in = input.view(1, -1) if input.dim() < 2 else input
    n_obs = x_in.shape[1]
    if fweights is not None:
        wt = fweights
        if wt.dim() > 1:
            raise RuntimeError(f"cov(): expected fweights to have one or fewer dimensions but got fweights with {wt.dim()} dimensions")
        if wt.is_floating_point() or wt.is_complex() or wt.dtype == _C.bool:
            raise RuntimeError(f"cov(): expected fweights to have integral dtype but got fweights with {_la._c10(wt.dtype)} dtype")
        if wt.numel() != n_obs:
            raise RuntimeError("cov(): expected fweights to have the same numel as there are observations in the input but got "
                               f"{wt.numel()} != {n_obs}")
        if n_obs and bool((wt < 0).any().item()):
            raise RuntimeError("cov(): fweights cannot be negative")
    if aweights is not None:
        wt = aweights
        if wt.dim() > 1:
            raise RuntimeError(f"cov(): expected aweights to have one or fewer dimensions but got aweights with {wt.dim()} dimensions")
        if not wt.is_floating_point():
            raise RuntimeError(f"cov(): expected aweights to have floating point dtype but got aweights with {_la._c10(wt.dtype)} dtype")
        if wt.numel() != n_obs:
            raise RuntimeError("cov(): expected aweights to have the same numel as there are observations in the input but got "
                               f"{wt.numel()} != {n_obs}")
        if n_obs and bool((wt < 0).any().item()):
            raise RuntimeError("cov(): aweights cannot be negative")
    w = fweights
    if aweights is not None:
        w = aweights if w is None else w * aweights
    if w is not None and not bool(w.sum().ne(0).item()):
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    # ATen's arithmetic promotes the input with floating weights (an integer input alone: the default float)
    dt = x_in.dtype if x_in.is_floating_point() or x_in.is_complex() else None
    if w is not None and (w.is_floating_point() or w.is_complex()):
        dt = w.dtype if dt is None else promote_types(dt, w.dtype)
    x = x_in.to(dt or _C.float32)
    if w is None:
        avg = x.mean(1)
        w_sum = float(n_obs)
        norm = w_sum - correction
    else:
        w = w.to(x.dtype)
        avg = (x * w).sum(1) / w.sum()
        w_sum = w.sum()
        if correction == 0:
            norm = w_sum
        elif aweights is None:
            norm = w_sum - correction
        elif fweights is None and n_obs == 1 and correction == 1:
            norm = 0.0
        else:
            norm = w_sum - correction * (w * aweights).sum() / w_sum
    if bool(norm <= 0) if not isinstance(norm, Tensor) else bool((norm <= 0).item()):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of observations.")
        norm = 0.0
    if n_obs == 1 and (fweights is None) != (aweights is None):
        # ATen's result here is that of a zeroed input (it zeroes the caller's tensor in place instead of
        # subtracting the weighted mean: a torch bug, which modifies the input). Same result, input untouched.
        xm = x.new_zeros(x.shape)
    else:
        xm = x - avg.unsqueeze(1)
    xw = xm if w is None else xm * w
    c = (xm @ xw.mT) / norm
    return c.squeeze()


def corrcoef(input):
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = c.diagonal()
    std = d.sqrt()
    c = c / std.unsqueeze(1)
    c = c / std.unsqueeze(0)
    return c.clamp(-1, 1)


def kron(input, other):
    nd = builtins.max(input.dim(), other.dim())
    a_s = [1] * (nd - input.dim()) + list(input.shape)
    b_s = [1] * (nd - other.dim()) + list(other.shape)
    a_v, b_v, out_s = [], [], []
    for x, y in zip(a_s, b_s):
        a_v += [x, 1]
        b_v += [1, y]
        out_s.append(x * y)
    return (input.reshape(a_v) * other.reshape(b_v)).reshape(out_s)


def block_diag(*tensors):
    mats = []
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {'torch.dtype' if isinstance(t, _C.dtype) else type(t).__name__}")
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has {t.dim()} dimensions")
        mats.append(t.reshape(1, 1) if t.dim() == 0 else t.unsqueeze(0) if t.dim() == 1 else t)
    if not mats:
        return zeros((1, 0))   # torch.block_diag() is [1, 0]
    dt = functools.reduce(promote_types, [m.dtype for m in mats])
    ncols = builtins.sum(m.shape[1] for m in mats)
    rows, c0 = [], 0
    for m in mats:
        r, c = m.shape
        parts = []
        if c0:
            parts.append(zeros((r, c0), dtype=dt, device=m.device))
        parts.append(m.to(dt))
        if ncols - c0 - c:
            parts.append(zeros((r, ncols - c0 - c), dtype=dt, device=m.device))
        rows.append(cat(parts, 1) if len(parts) > 1 else parts[0])
        c0 += c
    return cat(rows, 0)


def _method(fn):
    return lambda self, *a, **k: fn(self, *a, **k)


for _name in ("det", "logdet", "slogdet", "inverse", "cholesky", "cholesky_inverse", "cholesky_solve", "triangular_solve",
              "matrix_power", "matrix_exp", "pinverse", "svd", "qr", "kron"):
    if not hasattr(Tensor, _name):
        setattr(Tensor, _name, _method(globals()[_name]))
for _name in ("cov", "corrcoef"):
    if not hasattr(Tensor, _name):
        setattr(Tensor, _name, (lambda f: lambda self, **k: f(self, **k))(globals()[_name]))
