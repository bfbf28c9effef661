"""torch.signal.windows over ampgrad's creation and elementwise ops, as torch composes them (a linspace of
the window's argument, then exp / cos / i0), so values, dtypes, errors and requires_grad match torch's."""
import math
from collections.abc import Iterable

from ... import _C
from ..._creation import _check_layout
from ..._creation import linspace as _linspace, empty as _empty, ones as _ones, tensor as _tensor, arange as _arange

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming", "hamming",
           "hann", "kaiser", "nuttall"]


def _checks(name, M, dtype, layout):
    if layout is not None:
        _check_layout(layout)
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not None and str(layout) not in ("torch.strided", "strided"):
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (_C.float32, _C.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")


def _dtype(dtype):
    return _C.get_default_dtype() if dtype is None else dtype


def _trivial(M, dtype, device, requires_grad, ones_at_1=True):
    """The window of length 0 (empty) or, where the window is 1 there, 1 (ones); else None."""
    if M == 0:
        return _empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    if M == 1 and ones_at_1:
        return _ones((1,), dtype=dtype, device=device, requires_grad=requires_grad)
    return None


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    if layout is not None:
        _check_layout(layout)
    dtype = _dtype(dtype)
    _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _trivial(M, dtype, device, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    c = 1 / tau
    k = _linspace(-center * c, (-center + (M - 1)) * c, M, dtype=dtype, device=device, requires_grad=requires_grad)
    return _C.exp(-_C.abs(k))


def cosine(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    if layout is not None:
        _check_layout(layout)
    dtype = _dtype(dtype)
    _checks("cosine", M, dtype, layout)
    if M == 0:
        return _trivial(M, dtype, device, requires_grad)
    c = math.pi / (M + 1 if not sym and M > 1 else M)
    k = _linspace(0.5 * c, (0.5 + (M - 1)) * c, M, dtype=dtype, device=device, requires_grad=requires_grad)
    return _C.sin(k)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    if layout is not None:
        _check_layout(layout)
    dtype = _dtype(dtype)
    _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _trivial(M, dtype, device, requires_grad)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    c = 1 / (std * math.sqrt(2))
    k = _linspace(start * c, (start + (M - 1)) * c, M, dtype=dtype, device=device, requires_grad=requires_grad)
    return _C.exp(-(k ** 2))


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    if layout is not None:
        _check_layout(layout)
    dtype = _dtype(dtype)
    _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    t = _trivial(M, dtype, device, requires_grad)
    if t is not None:
        return t
    b = _tensor(beta, dtype=dtype, device=device)
    start = -b
    c = 2.0 * b / (M if not sym else M - 1)
    end = _C.minimum(b, start + (M - 1) * c)
    k = _linspace(start, end, M, dtype=dtype, device=device, requires_grad=requires_grad)
    return _C.i0(_C.sqrt(b * b - _C.pow(k, 2))) / _C.i0(b)


def hamming(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    if layout is not None:
        _check_layout(layout)
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    if layout is not None:
        _check_layout(layout)
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    if layout is not None:
        _check_layout(layout)
    dtype = _dtype(dtype)
    _checks("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    if layout is not None:
        _check_layout(layout)
    dtype = _dtype(dtype)
    _checks("bartlett", M, dtype, layout)
    t = _trivial(M, dtype, device, requires_grad)
    if t is not None:
        return t
    c = 2 / (M if not sym else M - 1)
    k = _linspace(-1, -1 + (M - 1) * c, M, dtype=dtype, device=device, requires_grad=requires_grad)
    return 1 - _C.abs(k)


def general_cosine(M, *, a, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    if layout is not None:
        _check_layout(layout)
    dtype = _dtype(dtype)
    _checks("general_cosine", M, dtype, layout)
    t = _trivial(M, dtype, device, requires_grad)
    if t is not None:
        return t
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    c = 2 * math.pi / (M if not sym else M - 1)
    k = _linspace(0, (M - 1) * c, M, dtype=dtype, device=device, requires_grad=requires_grad)
    a_i = _tensor([(-1) ** i * w for i, w in enumerate(a)], dtype=dtype, device=device, requires_grad=requires_grad)
    i = _arange(a_i.shape[0], dtype=a_i.dtype, device=device, requires_grad=a_i.requires_grad)
    return (a_i.unsqueeze(-1) * _C.cos(i.unsqueeze(-1) * k)).sum(0)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    if layout is not None:
        _check_layout(layout)
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    if layout is not None:
        _check_layout(layout)
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)
