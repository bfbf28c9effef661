"""ampgrad.special: torch.special's functions over ampgrad's engine ops (csrc/ops/special.cpp and the
existing elementwise, softmax and reduction ops)."""
from .. import _C
from .._functions import softmax as _softmax, log_softmax as _log_softmax
from .._special_ops import polygamma as _polygamma, mvlgamma as _mvlgamma

__all__ = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
           "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma", "entr", "erf",
           "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln",
           "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e", "laguerre_polynomial_l",
           "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "modified_bessel_i0",
           "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri",
           "polygamma", "psi", "round", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0", "xlog1py", "xlogy", "zeta"]

airy_ai = _C._special_airy_ai
bessel_j0 = _C._special_bessel_j0
bessel_j1 = _C._special_bessel_j1
bessel_y0 = _C._special_bessel_y0
bessel_y1 = _C._special_bessel_y1
modified_bessel_i0 = _C._special_modified_bessel_i0
modified_bessel_i1 = _C._special_modified_bessel_i1
modified_bessel_k0 = _C._special_modified_bessel_k0
modified_bessel_k1 = _C._special_modified_bessel_k1
scaled_modified_bessel_k0 = _C._special_scaled_modified_bessel_k0
scaled_modified_bessel_k1 = _C._special_scaled_modified_bessel_k1
spherical_bessel_j0 = _C._special_spherical_bessel_j0
digamma = psi = _C.digamma
gammaln = _C.lgamma
entr = _C._special_entr
erf, erfc, erfinv = _C.erf, _C.erfc, _C.erfinv
erfcx = _C._special_erfcx
exp2, expm1, log1p, sinc = _C.exp2, _C.expm1, _C.log1p, _C.sinc
expit = _C.sigmoid
gammainc, gammaincc = _C.igamma, _C.igammac
i0 = _C.i0
i0e, i1, i1e = _C._special_i0e, _C._special_i1, _C._special_i1e
ndtr, ndtri, log_ndtr = _C._special_ndtr, _C._special_ndtri, _C._special_log_ndtr
xlog1py = _C._special_xlog1py
xlogy = _C.xlogy
zeta = _C._special_zeta
multigammaln = _mvlgamma
polygamma = _polygamma


def logit(input, eps=None):
    return _C.logit(input, eps)


def round(input, *, decimals=0):
    return _C.round(input, decimals=decimals)


def softmax(input, dim, *, dtype=None):
    return _softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    return _log_softmax(input, dim, dtype=dtype)


def logsumexp(input, dim, keepdim=False):
    return input.logsumexp(dim, keepdim=keepdim)


def _poly(kind, name):
    def fn(input, n):
        return _C._special_orthogonal_polynomial(kind, input, n)
    fn.__name__ = fn.__qualname__ = name
    return fn


chebyshev_polynomial_t = _poly(0, "chebyshev_polynomial_t")
chebyshev_polynomial_u = _poly(1, "chebyshev_polynomial_u")
chebyshev_polynomial_v = _poly(2, "chebyshev_polynomial_v")
chebyshev_polynomial_w = _poly(3, "chebyshev_polynomial_w")
hermite_polynomial_h = _poly(4, "hermite_polynomial_h")
hermite_polynomial_he = _poly(5, "hermite_polynomial_he")
laguerre_polynomial_l = _poly(6, "laguerre_polynomial_l")
legendre_polynomial_p = _poly(7, "legendre_polynomial_p")
shifted_chebyshev_polynomial_t = _poly(8, "shifted_chebyshev_polynomial_t")
shifted_chebyshev_polynomial_u = _poly(9, "shifted_chebyshev_polynomial_u")
shifted_chebyshev_polynomial_v = _poly(10, "shifted_chebyshev_polynomial_v")
shifted_chebyshev_polynomial_w = _poly(11, "shifted_chebyshev_polynomial_w")
