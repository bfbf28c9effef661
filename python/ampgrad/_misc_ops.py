"""torch functions that torch itself composes of other ops (issue 13): the *_window factories, combinations,
gradient, quantile / nanquantile, mode, unique / unique_consecutive, resize_, as_strided_copy/_scatter.
Each is a composition of ampgrad's engine ops (so gradients and double backward follow from those), with
torch's argument checks and messages. install() sets only names nothing else defines."""
import builtins
import itertools
import math
import numbers

import numpy as np

from . import _C
from ._C import Tensor
from ._creation import tensor as _tensor, empty as _empty, zeros as _zeros, arange as _arange
from . import _functions as _fn
from . import _sorting as _srt

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
    w = fn(np.arange(N, dtype=np.float64), N)[:window_length]
    out = _tensor(np.ascontiguousarray(w), dtype=_C.float64).to(dtype)
    if device is not None:
        out = out.to(device)
    return out.requires_grad_(requires_grad)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   pin_memory=False, requires_grad=False):
    _check_float_arg("hamming_window", "alpha", 3, alpha)
    _check_float_arg("hamming_window", "beta", 4, beta)
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, N: alpha - beta * np.cos(n * (2 * math.pi / (N - 1))))


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                requires_grad=False):
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, N: 0.5 - 0.5 * np.cos(n * (2 * math.pi / (N - 1))))


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    def f(n, N):
        x = n * (math.pi / (N - 1))
        return 0.08 * np.cos(4 * x) - 0.5 * np.cos(2 * x) + 0.42
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad, f)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    def f(n, N):
        x = n * (2.0 / (N - 1))
        half = ((N - 1) >> 1) + 1
        x[half:] = 2 - x[half:]
        return x
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad, f)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  pin_memory=False, requires_grad=False):
    _check_float_arg("kaiser_window", "beta", 3, beta)

    def f(n, N):
        a = (N - 1) / 2.0
        r = np.sqrt(np.maximum(1 - ((n - a) / a) ** 2, 0.0))
        return np.i0(beta * r) / np.i0(beta)
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, f)


_FUNCTIONS = ["hamming_window", "hann_window", "blackman_window", "bartlett_window", "kaiser_window"]
_METHODS = []


def install(namespace):
    """Define the names nothing else defines, as ampgrad.<name> and (where torch has one) Tensor.<name>."""
    g = globals()
    for name in _FUNCTIONS:
        namespace.setdefault(name, g[name])
    for name in _METHODS:
        if not hasattr(Tensor, name):
            setattr(Tensor, name, g[name])
