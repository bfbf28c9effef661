"""ampgrad.linalg: torch.linalg. The decompositions and solvers are engine ops (csrc/ops/linalg_decomp.cpp,
Eigen kernels in kernels/cpu/linalg_decomp.cpp) with torch's backward formulas; the norms, products and
the functions built from them (pinv's users, matrix_rank, cond, tensorinv, ...) are thin compositions."""
import builtins
import math
import numbers

from .. import _C
from .. import return_types as _rt
from .._creation import eye as _eye, ones as _ones, empty as _empty
from .._linalg_extra import vector_norm, matrix_norm, linalg_norm as norm, multi_dot, vecdot, linalg_cross as cross

__all__ = ["vector_norm", "matrix_norm", "norm", "multi_dot", "vecdot", "cross", "LinAlgError", "inv", "inv_ex", "det",
           "slogdet", "solve", "solve_ex", "cholesky", "cholesky_ex", "solve_triangular", "qr", "eigh", "eigvalsh", "svd",
           "svdvals", "lstsq", "lu_factor", "lu_factor_ex", "lu", "lu_solve", "pinv", "matrix_rank", "matrix_power",
           "matrix_exp", "cond", "tensorinv", "tensorsolve", "vander", "diagonal", "matmul"]

# torch.linalg.LinAlgError: raised for singular / non-positive-definite inputs (a RuntimeError).
LinAlgError = _C._LinAlgError
LinAlgError.__module__ = "ampgrad.linalg"


def _bool(v):
    return bool(v)


_C10_NAMES = {"float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double", "int64": "Long",
              "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def _c10(dtype):
    return _C10_NAMES.get(str(dtype).split(".")[-1], str(dtype))


def _square(A, name):
    """torch checks squareness before the dtype."""
    if isinstance(A, _C.Tensor) and A.dim() >= 2 and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {A.shape[-2]} by {A.shape[-1]} matrices")
    return A


def inv(A):
    return _C._linalg_inv_ex(_square(A, "linalg.inv"), True)[0]


def inv_ex(A, *, check_errors=False):
    return _rt.linalg_inv_ex(*_C._linalg_inv_ex(_square(A, "linalg.inv_ex"), _bool(check_errors)))


def det(A):
    return _C._linalg_det(_square(A, "linalg.det"))


def slogdet(A):
    return _rt.linalg_slogdet(*_C._linalg_slogdet(_square(A, "linalg.slogdet")))


def solve(A, B, *, left=True):
    return _C._linalg_solve_ex(A, B, _bool(left), True)[0]


def solve_ex(A, B, *, left=True, check_errors=False):
    return _rt.linalg_solve_ex(*_C._linalg_solve_ex(A, B, _bool(left), _bool(check_errors)))


def cholesky(A, *, upper=False):
    return _C._linalg_cholesky_ex(_square(A, "linalg.cholesky"), _bool(upper), True, False)[0]


def cholesky_ex(A, *, upper=False, check_errors=False):
    return _rt.linalg_cholesky_ex(*_C._linalg_cholesky_ex(_square(A, "linalg.cholesky"), _bool(upper), _bool(check_errors), False))


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    return _C._linalg_solve_triangular(A, B, _bool(upper), _bool(left), _bool(unitriangular))


def qr(A, mode="reduced"):
    return _rt.linalg_qr(*_C._linalg_qr(A, mode))


def eigh(A, UPLO="L"):
    return _rt.linalg_eigh(*_C._linalg_eigh(_square(A, "linalg.eigh"), UPLO, True))


def eigvalsh(A, UPLO="L"):
    return _C._linalg_eigh(_square(A, "linalg.eigh"), UPLO, False)[0]


def svd(A, full_matrices=True, *, driver=None):
    return _rt.linalg_svd(*_C._linalg_svd(A, _bool(full_matrices), True))


def svdvals(A, *, driver=None):
    return _C._linalg_svd(A, False, False)[1]


def lu_factor(A, *, pivot=True):
    LU, piv, _ = _C._linalg_lu_factor_ex(A, _bool(pivot), True)
    return _rt.linalg_lu_factor(LU, piv)


def lu_factor_ex(A, *, pivot=True, check_errors=False):
    return _rt.linalg_lu_factor_ex(*_C._linalg_lu_factor_ex(A, _bool(pivot), _bool(check_errors)))


def lu(A, *, pivot=True):
    return _rt.linalg_lu(*_C._linalg_lu(A, _bool(pivot)))


def lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    if isinstance(LU, _C.Tensor) and isinstance(B, _C.Tensor) and LU.dtype != B.dtype:   # aten's first check
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type "
                           f"{_c10(LU.dtype)} and B of type {_c10(B.dtype)} instead")
    if isinstance(pivots, _C.Tensor) and pivots.dtype != _C.int32:   # aten's second, before the dtype dispatch
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32")
    return _C._linalg_lu_solve(LU, pivots, B, _bool(left), _bool(adjoint))


def matrix_exp(A):
    return _C._linalg_matrix_exp(A)


def _tol(v, name):
    if v is None:
        return None
    if isinstance(v, _C.Tensor):
        if v.numel() != 1:
            raise NotImplementedError(f"linalg.{name}: tensor tolerances with more than one element are not supported")
        return float(v.item())
    return float(v)


def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None):
    if rcond is not None:  # torch's legacy overload pinv(A, rcond, hermitian)
        rtol = rcond
    if isinstance(A, _C.Tensor) and (A.dim() < 2 or A.dtype not in (_C.float32, _C.float64)):
        raise RuntimeError(f"linalg.pinv({_c10(A.dtype)}{{{list(A.shape)}}}): expected a tensor with 2 or more dimensions of "
                           "float, double, cfloat or cdouble types")
    return _C._linalg_pinv(A, _tol(atol, "pinv"), _tol(rtol, "pinv"), _bool(hermitian))


def _eps(dtype):
    return 2.220446049250313e-16 if dtype == _C.float64 else 1.1920928955078125e-07


def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None):
    if tol is not None:  # torch's legacy overload: an absolute tolerance
        atol, rtol = tol, 0.0
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    m, n = A.shape[-2], A.shape[-1]
    S = eigvalsh(A.detach()).abs() if hermitian else svdvals(A.detach())
    atol_v = _tol(atol, "matrix_rank")
    rtol_v = _tol(rtol, "matrix_rank")
    if rtol_v is None:
        rtol_v = 0.0 if (atol_v is not None and atol_v > 0) else _eps(A.dtype) * builtins.max(m, n)
    atol_v = 0.0 if atol_v is None else atol_v
    if S.shape[-1] == 0:
        return (S.sum(-1) * 0).to(_C.int64)
    smax = S.amax(-1, keepdim=True)
    thr = (smax * rtol_v).clamp(min=atol_v)
    return (S > thr).sum(-1)


def matrix_power(A, n):
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError("linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{A.shape[-2] if A.dim() >= 2 else A.shape[-1]} by {A.shape[-1]} matrices"
                           if A.dim() >= 2 else "linalg.matrix_power: The input tensor A must have at least 2 dimensions.")
    if not isinstance(n, numbers.Integral) or isinstance(n, bool):
        raise TypeError(f"matrix_power(): argument 'n' must be int, not {type(n).__name__}")
    n = int(n)
    if n == 0:
        # torch: A.clone().copy_(I): the result is on the graph (CopyBackwards) with a zero gradient
        return A.clone().copy_(_eye(A.shape[-1], dtype=A.dtype, device=A.device).expand(A.shape))
    if n < 0:
        A = inv(A)
        n = -n
    if n == 1:
        return A.clone()
    if n == 2:
        return A @ A
    if n == 3:
        return (A @ A) @ A
    # binary powering, as torch's linalg_matrix_power
    z = None
    result = None
    while n > 0:
        z = A if z is None else z @ z
        if n % 2 == 1:
            result = z if result is None else result @ z
        n //= 2
    return result


def cond(A, p=None):
    if A.dim() < 2:
        raise RuntimeError("linalg.cond: The input tensor A must have at least 2 dimensions.")
    if p is None or p in (2, -2):
        s = svdvals(A)
        if s.shape[-1] == 0:  # torch: 0 for empty matrices
            return s.sum(-1)
        if p == -2:
            return s[..., -1] / s[..., 0]
        return s[..., 0] / s[..., -1]
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.cond(ord={p}): A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


def _prod(xs):
    r = 1
    for x in xs:
        r *= int(x)
    return r


def tensorinv(A, ind=2):
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = list(A.shape)
    rows, cols = _prod(shape[:ind]), _prod(shape[ind:])
    if rows != cols:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind]), "
                           f"but got {cols} != {rows}")
    return inv(A.reshape(rows, cols)).reshape(shape[ind:] + shape[:ind])


def tensorsolve(A, B, dims=None):
    if dims is not None:
        nd = A.dim()
        dims = [d % nd for d in dims]
        keep = [d for d in builtins.range(nd) if d not in dims]
        A = A.permute(keep + dims)
    res_shape = list(A.shape[B.dim():])
    n = _prod(res_shape)
    if _prod(B.shape) != _prod(A.shape[:B.dim()]) or _prod(A.shape) != n * _prod(B.shape):
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]), "
                           f"but got {n} != {_prod(A.shape[:B.dim()])}")
    return solve(A.reshape(-1, n), B.reshape(-1)).reshape(res_shape)


def vander(x, *, N=None):
    if x.dtype == _C.bool:
        raise RuntimeError("linalg.vander supports floating point, complex, and integer tensors, but got Bool")
    if x.dim() == 0:  # torch: a 0-d x is a vector of one
        x = x.unsqueeze(-1)
    n = x.shape[-1] if N is None else int(N)
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    one = _ones(list(x.shape) + [1], dtype=x.dtype, device=x.device)
    powers = x.unsqueeze(-1).expand(list(x.shape) + [n - 1]).cumprod(-1)
    return _C.cat([one, powers], -1)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return A.diagonal(offset, dim1, dim2)


def matmul(input, other):
    return input @ other


def lstsq(A, B, rcond=None, *, driver=None):
    if driver is not None and driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    drv = driver or "gelsy"
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    vec = B.dim() == A.dim() - 1
    Bm = B.unsqueeze(-1) if vec else B
    if Bm.shape[-2] != A.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    if A.dtype != B.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got "
                           f"input's dtype {_dtname(A.dtype)} and other's dtype {_dtname(B.dtype)}")
    m, n = A.shape[-2], A.shape[-1]
    eps = _eps(A.dtype)
    rc = eps * builtins.max(m, n) if rcond is None or rcond < 0 else float(rcond)
    X = _C._linalg_pinv(A, None, rc, False) @ Bm
    Ad = A.detach()
    batch = list(A.shape[:-2])
    S = svdvals(Ad) if drv in ("gelsd", "gelss") else None
    if drv == "gels":
        rank = _empty([0], dtype=_C.int64, device=A.device)
    else:
        rank = matrix_rank(Ad, atol=0.0, rtol=rc) if m and n else (Ad.sum((-2, -1)) * 0).to(_C.int64)
    sv = S if S is not None else _empty([0], dtype=A.dtype, device=A.device)
    # empty residuals stay on the graph as torch's (an empty slice of the solution)
    residuals = X.reshape(-1)[:0]
    if m > n and drv != "gelsy":
        full_rank = drv == "gels" or bool((rank == n).all().item())
        if full_rank:
            r = A @ X - Bm
            residuals = (r * r).sum(-2)
            if vec:
                residuals = residuals.squeeze(-1)
    if vec:
        X = X.squeeze(-1)
    return _rt.linalg_lstsq(X, residuals, rank, sv)


def _dtname(dt):
    return str(dt).split(".")[-1].capitalize()
