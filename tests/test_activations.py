"""The parametrized activations of torch.nn.functional as engine ops (elu, celu, selu, leaky_relu,
hardsigmoid, hardswish, mish, logsigmoid): values at every piece boundary and special point,
gradients and second derivatives, in-place forms, node names and errors, all against torch."""
import math

import numpy as np
import pytest

import ampgrad
import ampgrad.nn.functional as AF

torch = pytest.importorskip("torch")
import torch.nn.functional as TF  # noqa: E402

# every piece boundary (0, +-3), around them, wide values, the limits, nan
POINTS = [0.0, -0.0, 1e-30, -1e-30, 1e-6, -1e-6, 0.5, -0.5, 1.0, -1.0, 2.999, -2.999, 3.0, -3.0, 3.001, -3.001,
          5.0, -5.0, 15.0, -15.0, 19.9, 20.1, 50.0, -50.0, 90.0, -90.0, 1e4, -1e4, math.inf, -math.inf, math.nan]

CASES = [
    ("elu", {}), ("elu", {"alpha": 0.5}), ("elu", {"alpha": -2.0}), ("celu", {}), ("celu", {"alpha": 2.5}),
    ("selu", {}), ("leaky_relu", {}), ("leaky_relu", {"negative_slope": 0.2}), ("leaky_relu", {"negative_slope": -1.5}),
    ("hardsigmoid", {}), ("hardswish", {}), ("mish", {}), ("logsigmoid", {}),
]
NODE = {"elu": "EluBackward0", "celu": "CeluBackward0", "selu": "EluBackward0", "leaky_relu": "LeakyReluBackward0",
        "hardsigmoid": "HardsigmoidBackward0", "hardswish": "HardswishBackward0", "mish": "MishBackward0",
        "logsigmoid": "LogSigmoidBackward0"}
TDT = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16}


def _ag(x, dtype, requires_grad=False):
    t = ampgrad.tensor(np.asarray(x, dtype=np.float64)).to(getattr(ampgrad, dtype))
    return t.requires_grad_() if requires_grad else t


def _np(t):
    if not hasattr(t, "detach"):
        return np.asarray(t)
    t = t.detach()
    return (t.float() if "bfloat16" in str(t.dtype) else t).numpy()


def _close(a, b, rtol, atol):
    np.testing.assert_allclose(_np(a).astype(np.float64), _np(b).astype(np.float64), rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("name,kw", CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_values_at_special_points(name, kw, dtype):
    x = POINTS + list(np.linspace(-6, 6, 97))
    tx = torch.tensor(x, dtype=torch.float64).to(TF_dtype := TDT[dtype])
    ref = getattr(TF, name)(tx, **kw)
    out = getattr(AF, name)(_ag(x, dtype), **kw)
    assert str(out.dtype).split(".")[-1] == str(ref.dtype).split(".")[-1]
    # relative near zero: a wrong constant or a lost term in the tiny-value branch fails
    tol = {"float32": (2e-6, 1e-37), "float64": (1e-13, 1e-300), "bfloat16": (8e-3, 1e-30)}[dtype]
    _close(out, ref.float() if TF_dtype == torch.bfloat16 else ref, *tol)


@pytest.mark.parametrize("name,kw", CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_gradients_and_second_derivatives(name, kw):
    # finite points, away from the kinks (where one-sided derivatives differ) but on both sides of them
    x = [v for v in POINTS if math.isfinite(v) and abs(abs(v) - 3.0) > 1e-4] + list(np.linspace(-6, 6, 37) + 1e-3)
    tx = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    ty = getattr(TF, name)(tx, **kw)
    assert ty.grad_fn.name() == NODE[name]
    gout = torch.linspace(-1.5, 2.0, len(x), dtype=torch.float64)
    (tg,) = torch.autograd.grad(ty, tx, gout, create_graph=True)
    if name == "hardsigmoid":  # torch: "derivative for aten::hardsigmoid_backward is not implemented"
        tgg = None
    else:
        (tgg,) = torch.autograd.grad(tg, tx, torch.ones_like(tg), allow_unused=True)

    ax = _ag(x, "float64", True)
    ay = getattr(AF, name)(ax, **kw)
    assert ay.grad_fn.name() == NODE[name]
    (ag,) = ampgrad.autograd.grad(ay, ax, ampgrad.tensor(gout.numpy()), create_graph=True)
    # torch's hardsigmoid_backward multiplies by 1/6 rounded to float32 even in float64 (a torch bug);
    # ampgrad uses the exact 1/6
    _close(ag, tg, 1e-7 if name == "hardsigmoid" else 1e-12, 1e-300)
    (agg,) = ampgrad.autograd.grad(ag, ax, ampgrad.ones_like(ag), allow_unused=True)
    if tgg is None or agg is None:  # piecewise-linear: no second derivative anywhere
        assert tgg is None or not tgg.any()
        assert agg is None or not _np(agg).any()
    elif name == "mish":
        # torch's second derivative of mish is nan at x = 1e4 (exp overflow in its softplus double
        # backward); the limit there is 0, which ampgrad gives
        big = np.abs(np.asarray(x)) > 1e3
        assert np.isnan(_np(tgg)[big]).any() and not np.isnan(_np(agg)[big]).any()
        assert (_np(agg)[big] == 0).all()
        _close(_np(agg)[~big], _np(tgg)[~big], 1e-11, 1e-300)
    else:
        _close(agg, tgg, 1e-11, 1e-300)
    if name == "hardsigmoid":  # ampgrad: the backward op's backward is hardsigmoid_backward itself
        ago = ampgrad.tensor(gout.numpy()).requires_grad_()
        (ag2,) = ampgrad.autograd.grad(getattr(AF, name)(ax, **kw), ax, ago, create_graph=True)
        (aggo,) = ampgrad.autograd.grad(ag2, ago, ampgrad.ones_like(ag2))
        inside = np.abs(np.asarray(x)) < 3
        np.testing.assert_array_equal(_np(aggo), np.where(inside, 1.0 / 6.0, 0.0))
        return
    # the grad of the grad output (the backward op's own backward)
    tgo = gout.clone().requires_grad_()
    (tg2,) = torch.autograd.grad(getattr(TF, name)(tx, **kw), tx, tgo, create_graph=True)
    (tggo,) = torch.autograd.grad(tg2, tgo, torch.linspace(0.5, 1, len(x), dtype=torch.float64))
    ago = ampgrad.tensor(gout.numpy()).requires_grad_()
    (ag2,) = ampgrad.autograd.grad(getattr(AF, name)(ax, **kw), ax, ago, create_graph=True)
    (aggo,) = ampgrad.autograd.grad(ag2, ago, ampgrad.tensor(np.linspace(0.5, 1, len(x))))
    _close(aggo, tggo, 1e-7 if name == "hardsigmoid" else 1e-12, 1e-300)


@pytest.mark.parametrize("name,kw", CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_gradient_float32_and_bf16_inputs(name, kw):
    x = np.linspace(-7, 7, 301)
    # mish' = tanh(sp) + x sigmoid (1 - tanh(sp)^2) cancels near x = -1.2 (two terms of 0.26 give 0.005)
    f32 = (3e-5, 1e-30) if name == "mish" else (3e-6, 1e-30)
    for dtype, tol in (("float32", f32), ("bfloat16", (1e-2, 1e-3))):
        tx = torch.tensor(x).to(TDT[dtype]).requires_grad_()
        getattr(TF, name)(tx, **kw).backward(torch.ones_like(tx))
        ax = _ag(x, dtype, True)
        getattr(AF, name)(ax, **kw).backward(ampgrad.ones_like(ax))
        assert ax.grad.dtype == getattr(ampgrad, dtype)
        _close(ax.grad, tx.grad.float(), *tol)


def test_forward_ad_matches_backward():
    x = np.linspace(-5, 5, 23)
    t = np.linspace(1, 2, 23)
    for name, kw in CASES:
        with ampgrad.autograd.forward_ad.dual_level():
            d = ampgrad.autograd.forward_ad.make_dual(_ag(x, "float64"), ampgrad.tensor(t))
            tang = ampgrad.autograd.forward_ad.unpack_dual(getattr(AF, name)(d, **kw)).tangent
        tx = torch.tensor(x, requires_grad=True)
        (g,) = torch.autograd.grad(getattr(TF, name)(tx, **kw), tx, torch.tensor(t))
        _close(tang, g, 1e-7 if name == "hardsigmoid" else 1e-12, 1e-300)  # torch's float32 1/6, see above


@pytest.mark.parametrize("name,kw", [c for c in CASES if c[0] != "logsigmoid"],
                         ids=[f"{n}-{k}" for n, k in CASES if n != "logsigmoid"])
def test_inplace_forms(name, kw):
    x = np.linspace(-5, 5, 24).reshape(4, 6)
    ref = getattr(TF, name)(torch.tensor(x), **kw)
    # no grad: written into the same storage, non-contiguous view included
    a = _ag(x, "float64")
    view = a.t()
    out = getattr(AF, name)(view, inplace=True, **kw)
    assert out is view
    _close(a, ref, 1e-14, 0)
    # with grad: values and gradient as the out-of-place form; a leaf is refused as torch does
    leaf = _ag(x, "float64", True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        getattr(AF, name)(leaf, inplace=True, **kw)
    y = leaf * 1.0
    getattr(AF, name)(y, inplace=True, **kw).sum().backward()
    tleaf = torch.tensor(x, requires_grad=True)
    getattr(TF, name)(tleaf, **kw).sum().backward()
    _close(leaf.grad, tleaf.grad, 1e-7 if name == "hardsigmoid" else 1e-13, 1e-300)
    if name == "hardsigmoid":  # exactly 1/6 inside (-3, 3)
        inside = np.abs(x) < 3
        assert (_np(leaf.grad)[inside] == 1.0 / 6.0).all()


def test_underscore_and_torch_level_names():
    x = np.linspace(-3, 3, 7)
    for fn, kw in ((AF.elu_, {}), (AF.celu_, {"alpha": 2.0}), (AF.selu_, {}), (AF.leaky_relu_, {"negative_slope": 0.3})):
        a = _ag(x, "float64")
        fn(a, **kw)
        t = torch.tensor(x)
        getattr(TF, fn.__name__)(t, **kw)
        _close(a, t, 1e-14, 0)
    for name in ("selu", "celu", "relu_", "selu_", "celu_"):
        a, t = _ag(x, "float64"), torch.tensor(x)
        _close(getattr(ampgrad, name)(a), getattr(torch, name)(t), 1e-14, 0)


@pytest.mark.parametrize("name", sorted({n for n, _ in CASES}))
def test_errors_match_torch(name):
    for bad in (torch.arange(3), torch.tensor([True, False])):
        with pytest.raises(NotImplementedError) as te:
            getattr(TF, name)(bad)
        with pytest.raises(NotImplementedError) as ae:
            getattr(AF, name)(ampgrad.tensor(bad.numpy()))
        assert str(ae.value) == str(te.value)


def test_celu_alpha_zero():
    with pytest.raises(RuntimeError, match="alpha cannot be 0 for CELU"):
        TF.celu(torch.ones(2), alpha=0.0)
    a = _ag([1.0, -1.0], "float32")
    with pytest.raises(RuntimeError, match="alpha cannot be 0 for CELU"):
        AF.celu(a, alpha=0.0)
    with pytest.raises(RuntimeError, match="alpha cannot be 0 for CELU"):
        AF.celu(a, alpha=0.0, inplace=True)
    assert _np(a).tolist() == [1.0, -1.0]


def test_autocast_keeps_input_dtype():
    x = np.linspace(-4, 4, 16).reshape(4, 4)
    for name, kw in CASES:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            t32 = getattr(TF, name)(torch.tensor(x, dtype=torch.float32), **kw)
            t16 = getattr(TF, name)(torch.tensor(x, dtype=torch.bfloat16), **kw)
        with ampgrad.autocast("cpu", dtype=ampgrad.bfloat16):
            a32 = getattr(AF, name)(_ag(x, "float32"), **kw)
            a16 = getattr(AF, name)(_ag(x, "bfloat16"), **kw)
        assert str(a32.dtype).split(".")[-1] == str(t32.dtype).split(".")[-1]
        assert str(a16.dtype).split(".")[-1] == str(t16.dtype).split(".")[-1]


def test_modules_use_the_ops():
    x = np.linspace(-4, 4, 12).reshape(3, 4)
    for mod, kw in (("ELU", {"alpha": 0.7}), ("CELU", {"alpha": 1.3}), ("SELU", {}), ("LeakyReLU", {"negative_slope": 0.1}),
                    ("Hardsigmoid", {}), ("Hardswish", {}), ("Mish", {}), ("LogSigmoid", {})):
        a = _ag(x, "float64", True)
        y = getattr(ampgrad.nn, mod)(**kw)(a)
        t = torch.tensor(x, requires_grad=True)
        ty = getattr(torch.nn, mod)(**kw)(t)
        _close(y, ty, 1e-14, 0)
        assert y.grad_fn.name() == ty.grad_fn.name()
