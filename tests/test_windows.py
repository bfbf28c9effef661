"""ampgrad.signal.windows and the torch.*_window factories against torch: values for lengths 0..9 (sym and
periodic), parameters, dtypes, requires_grad, and torch's exception types and messages."""
import math

import numpy as np
import pytest

import ampgrad as ag

torch = pytest.importorskip("torch")

W = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming", "hamming",
     "hann", "kaiser", "nuttall"]
EXTRA = {"general_cosine": {"a": [0.46, 0.23, 0.31]}}


def _np(x):
    return x.detach().to(ag.float64).numpy() if isinstance(x, ag.Tensor) else x.detach().double().numpy()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", W)
def test_windows_match_torch(name, dtype):
    kw = dict(EXTRA.get(name, {}))
    for M in range(0, 10):
        for sym in (True, False):
            t = getattr(torch.signal.windows, name)(M, sym=sym, dtype=getattr(torch, dtype), **kw)
            a = getattr(ag.signal.windows, name)(M, sym=sym, dtype=getattr(ag, dtype), **kw)
            assert str(a.dtype).split(".")[-1] == dtype and tuple(a.shape) == (M,)
            tol = 1e-13 if dtype == "float64" else 2e-6
            np.testing.assert_allclose(_np(a), _np(t), rtol=tol, atol=tol, err_msg=f"{name} M={M} sym={sym}")


@pytest.mark.parametrize("name,kw", [("exponential", {"tau": 0.3}), ("exponential", {"center": 1.5, "sym": False}),
                                     ("gaussian", {"std": 3.7}), ("kaiser", {"beta": 0.0}), ("kaiser", {"beta": 5.5}),
                                     ("general_hamming", {"alpha": 0.7}), ("general_cosine", {"a": (1.0,)})])
def test_window_parameters(name, kw):
    for M in (1, 2, 7, 16):
        t = getattr(torch.signal.windows, name)(M, dtype=torch.float64, **kw)
        a = getattr(ag.signal.windows, name)(M, dtype=ag.float64, **kw)
        np.testing.assert_allclose(_np(a), _np(t), rtol=1e-13, atol=1e-14)


def test_default_dtype_and_requires_grad():
    a = ag.signal.windows.hann(6)
    assert a.dtype == ag.float32
    prev = ag.get_default_dtype()
    ag.set_default_dtype(ag.float64)
    try:
        assert ag.signal.windows.kaiser(4).dtype == ag.float64
    finally:
        ag.set_default_dtype(prev)
    for name in W:
        kw = dict(EXTRA.get(name, {}))
        t = getattr(torch.signal.windows, name)(5, requires_grad=True, **kw)
        a = getattr(ag.signal.windows, name)(5, requires_grad=True, **kw)
        assert a.requires_grad == t.requires_grad


@pytest.mark.parametrize("name", W)
def test_window_errors(name):
    kw = dict(EXTRA.get(name, {}))
    cases = [((-1,), {"dtype": "float32"}), ((3,), {"dtype": "int64"}), ((3,), {"dtype": "bfloat16"})]
    if name == "exponential":
        cases += [((3,), {"tau": -1.0}), ((3,), {"center": 1.0, "sym": True})]
    if name == "gaussian":
        cases += [((3,), {"std": -1.0}), ((3,), {"std": 0.0})]
    if name == "kaiser":
        cases += [((3,), {"beta": -1.0})]
    if name == "general_cosine":
        cases += [((3,), {"a": None}), ((3,), {"a": []})]
    for args, extra in cases:
        k = {**kw, **extra}
        tk = {n: getattr(torch, v) if n == "dtype" else v for n, v in k.items()}
        ak = {n: getattr(ag, v) if n == "dtype" else v for n, v in k.items()}
        with pytest.raises(Exception) as te:
            getattr(torch.signal.windows, name)(*args, **tk)
        with pytest.raises(te.type) as ae:
            getattr(ag.signal.windows, name)(*args, **ak)
        assert str(ae.value).replace("ampgrad.", "torch.") == str(te.value)


F = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("name", F)
def test_torch_window_factories(name, dtype):
    for L in range(0, 12):
        for periodic in (True, False):
            t = getattr(torch, name)(L, periodic, dtype=getattr(torch, dtype))
            a = getattr(ag, name)(L, periodic, dtype=getattr(ag, dtype))
            assert str(a.dtype).split(".")[-1] == dtype and tuple(a.shape) == (L,)
            # torch rounds bfloat16 intermediates; ampgrad computes in float64 and rounds once
            tol = {"float64": 1e-13, "float32": 2e-6, "bfloat16": 1.6e-2}[dtype]
            np.testing.assert_allclose(_np(a), _np(t), rtol=tol, atol=tol, err_msg=f"{name} L={L} {periodic}")
    assert getattr(ag, name)(5).dtype == ag.float32


def test_window_factory_parameters_and_grad():
    for args in [(7, True, 0.6, 0.3), (7, False, 0.5), (8, False, 0.54, 0.46)]:
        np.testing.assert_allclose(_np(ag.hamming_window(*args)), _np(torch.hamming_window(*args)), rtol=2e-6,
                                   atol=2e-6)
    for args in [(7, True, 3.5), (8, False, 0.0), (6, False, -1.0), (9, True)]:
        np.testing.assert_allclose(_np(ag.kaiser_window(*args, dtype=ag.float64)),
                                   _np(torch.kaiser_window(*args, dtype=torch.float64)), rtol=1e-12, atol=1e-14)
    a = ag.hann_window(5, requires_grad=True)
    assert a.requires_grad and a.is_leaf


@pytest.mark.parametrize("name", F)
def test_window_factory_errors(name):
    for args, kw in [((-1,), {}), ((5,), {"dtype": "int64"}), ((5.0,), {}), ((True,), {}), ((5, 1), {}),
                     (("5",), {})]:
        tk = {n: getattr(torch, v) for n, v in kw.items()}
        ak = {n: getattr(ag, v) for n, v in kw.items()}
        with pytest.raises(Exception) as te:
            getattr(torch, name)(*args, **tk)
        with pytest.raises(te.type):
            getattr(ag, name)(*args, **ak)
