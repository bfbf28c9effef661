"""Forward-mode AD (autograd.forward_ad): every differentiable op of tests/op_db.py in float64 with
random tangents, against central finite differences along the tangent and against torch's forward
AD; the dual-level API and its errors against torch; custom Function.jvp; in-place ops and views;
functional.jacobian / hessian with the forward-mode strategy; gradcheck(check_forward_ad=True)."""
import copy

import numpy as np
import pytest

import ampgrad
import ampgrad.autograd.forward_ad as fwAD
from op_db import OPS, rng_for
from test_ops import _on_device, assert_same, builtin_exc, flat_outputs, instantiate, op_params, realize, torch_lacks

# op_db's "m.nn.functional.softmax(x)" warns about its implicit dim, as torch's does
pytestmark = pytest.mark.filterwarnings("ignore:Implicit dimension choice:UserWarning")

EPS = 1e-6


# ---------------------------------------------------------------- every op vs finite differences / torch
def _tangents(op, si, leaves):
    rng = rng_for(op.name, si, "tangent")
    return [rng.uniform(-1, 1, size=tuple(leaf.shape)) for leaf in leaves]


def _swap(args, mapping):
    """args with each leaf (by identity) replaced by mapping[id(leaf)]."""
    def one(a):
        return mapping.get(id(a), a)
    return [[one(x) for x in a] if isinstance(a, list) else one(a) for a in args]


def _run_forward_ad(m, fw, op, sample, realized, tangents, device="cpu"):
    """(primal outputs, their tangents or None) with the differentiable inputs made dual."""
    args, leaves = instantiate(m, realized, requires_grad=True, device=device)
    if not leaves:
        return None
    with fw.dual_level():
        duals = {id(leaf): fw.make_dual(leaf.detach(), m.tensor(t, dtype=leaf.dtype).to(device)) for leaf, t in zip(leaves, tangents)}
        outs = flat_outputs(op.call(m, m is not ampgrad, *_swap(args, duals), **copy.deepcopy(sample.kwargs)))
        res = [fw.unpack_dual(o) for o in outs]
        return [r.primal.detach() for r in res], [None if r.tangent is None else r.tangent.detach().clone() for r in res]


def _directional_fd(op, sample, realized, base, tangents):
    """(f(x + eps t) - f(x - eps t)) / (2 eps) for every float output."""
    def at(sgn):
        arrays = {k: b + sgn * EPS * t for k, (b, t) in enumerate(zip(base, tangents))}
        args, _ = instantiate(ampgrad, realized, requires_grad=True, override=arrays)
        with ampgrad.no_grad():
            return flat_outputs(op.call(ampgrad, False, *args, **copy.deepcopy(sample.kwargs)))
    plus, minus = at(1), at(-1)
    return [(p.detach().numpy().astype(np.float64) - q.detach().numpy().astype(np.float64)) / (2 * EPS)
            if p.dtype.is_floating_point else None for p, q in zip(plus, minus)]


def _samples(op):
    for si, sample in enumerate(op.samples):
        if sample.grad and not sample.special:  # (special points: reverse mode only, test_ops.test_grad)
            yield si, sample, realize(op, si, sample, "float64")


FWD_OPS = [op for op in OPS if op.grad and "float64" in op.dtypes]


# In-place ops too (their backward check skips finite differences); logical_not_ / bitwise_not_ keep
# the old tangent as in torch (not differentiable), so finite differences say nothing about them.
FD_OPS = [op for op in FWD_OPS if op.fd or (op.name.startswith("inplace.") and "not_" not in op.name)]


@pytest.mark.parametrize("op,device", op_params(FD_OPS, "fwad", devices=("cpu",)))
def test_forward_ad_finite_differences(op, device):
    checked = 0
    for si, sample, realized in _samples(op):
        _, leaves = instantiate(ampgrad, realized, requires_grad=True)
        if not leaves:
            continue
        tangents = _tangents(op, si, leaves)
        base = [np.array(leaf.detach().numpy()) for leaf in leaves]
        try:
            num = _directional_fd(op, sample, realized, base, tangents)
        except Exception as e:  # an input the op refuses: it must refuse it with dual inputs too
            with pytest.raises(type(e)):
                _run_forward_ad(ampgrad, fwAD, op, sample, realized, tangents)
            continue
        primals, jvps = _run_forward_ad(ampgrad, fwAD, op, sample, realized, tangents)
        for k, (p, t, n) in enumerate(zip(primals, jvps, num)):
            what = f"{op.name} [{sample.desc or si}] output {k}"
            if n is None:
                assert t is None, f"{what}: a non-float output has a tangent"
                continue
            got = np.zeros(tuple(p.shape)) if t is None else t.numpy()
            assert got.shape == n.shape, f"{what}: tangent shape {got.shape} != {n.shape}"
            ok = np.isfinite(n)  # outside the domain (log of a negative 0-dim sample) there is no derivative
            np.testing.assert_allclose(got[ok], n[ok], atol=1e-5, rtol=1e-4, err_msg=f"{what}: forward AD vs finite differences")
            checked += 1
    assert checked or not any(True for _ in _samples(op)), f"{op.name}: no output checked"


@pytest.mark.parametrize("op,device", op_params(FWD_OPS, "fwad"))
def test_forward_ad_vs_torch(op, device):
    torch = pytest.importorskip("torch")
    import torch.autograd.forward_ad as tfw
    for si, sample, realized in _samples(op):
        _, leaves = instantiate(ampgrad, realized, requires_grad=True)
        if not leaves:
            continue
        tangents = _tangents(op, si, leaves)
        run_ag = lambda: _on_device(lambda: _run_forward_ad(ampgrad, fwAD, op, sample, realized, tangents, device), device)  # noqa: E731
        try:
            th = _run_forward_ad(torch, tfw, op, sample, realized, tangents)
        except Exception as e:
            if torch_lacks(e):  # torch has no forward AD formula for it (finite differences check it)
                continue
            with pytest.raises(builtin_exc(e)):  # e.g. an in-place op torch refuses: ampgrad must refuse as well
                run_ag()
            continue
        ag = run_ag()
        what = f"{op.name} [{sample.desc or si}]"
        assert len(ag[0]) == len(th[0]), f"{what}: {len(ag[0])} outputs, torch gives {len(th[0])}"
        for k, ((pa, ta), (pt, tt)) in enumerate(zip(zip(*ag), zip(*th))):
            if tt is None and ta is None:
                continue
            # a missing tangent is a zero one (torch materializes zeros for some ops)
            tt = torch.zeros_like(pt) if tt is None else tt
            ta = ampgrad.zeros(*pa.shape, dtype=pa.dtype, device=device) if ta is None else ta
            assert_same(ta, tt, lambda dt: (1e-7, 1e-6), f"{what} {device} tangent {k}", torch, device=device)


# ---------------------------------------------------------------- the dual-level API and its errors
def _torch():
    try:
        import torch
        return torch
    except ImportError:
        return None


def _dbl(m, *data):
    return m.tensor(list(data), dtype=m.float64)


def _fw(m):
    return m.autograd.forward_ad


def _err(m, call):
    """(exception type, message) of call(m), or None when it succeeds; leaves no level open."""
    try:
        call(m)
    except Exception as e:  # noqa: BLE001
        return type(e), str(e).replace("torch.", "").replace("ampgrad.", "")
    finally:
        while _fw(m)._C._current_dual_level() >= 0 if m is ampgrad else m.autograd.forward_ad._current_level >= 0:
            _fw(m).exit_dual_level()
    return None


def _in_level(body):
    def call(m):
        with _fw(m).dual_level():
            body(m)
    return call


_ERRORS = [
    ("make_dual without a level", lambda m: _fw(m).make_dual(_dbl(m, 1, 2), _dbl(m, 1, 2)), RuntimeError,
     "Trying to create a dual Tensor for forward AD but no level exists, make sure to enter_dual_level() first."),
    ("tangent of another size", _in_level(lambda m: _fw(m).make_dual(_dbl(m, 1, 2), _dbl(m, 1, 2, 3))), RuntimeError,
     "Trying to set a forward gradient that has a different size than that of the original Tensor, this is not "
     "supported. Tensor is of size [2] while the given forward gradient is of size [3]."),
    ("integer primal", _in_level(lambda m: _fw(m).make_dual(m.tensor([1, 2]), _dbl(m, 1, 2))), ValueError,
     "Expected primal to be floating point or complex, but got: int64"),
    ("integer tangent", _in_level(lambda m: _fw(m).make_dual(_dbl(m, 1, 2), m.tensor([1, 2]))), ValueError,
     "Expected tangent to be floating point or complex, but got: int64"),
    ("dual of a dual", _in_level(lambda m: _fw(m).make_dual(_fw(m).make_dual(_dbl(m, 1), _dbl(m, 1)), _dbl(m, 1))),
     RuntimeError, "Making a dual Tensor based on a Tensor that already has a forward gradient at the same level 0 is "
     "not supported."),
    ("nested levels", _in_level(lambda m: _fw(m).enter_dual_level()), RuntimeError,
     "Nested forward mode AD is not supported at the moment"),
    ("exiting a level that is not the latest", _in_level(lambda m: _fw(m).exit_dual_level(level=5)), RuntimeError,
     "Trying to exit a forward AD level that was not the last one that was created. This is not supported."),
    ("exiting level 0 when none is open", lambda m: _fw(m).exit_dual_level(level=0), RuntimeError,
     "Trying to exit a forward AD level that was not the last one that was created. This is not supported."),
    ("exiting when no level is open", lambda m: _fw(m).exit_dual_level(), RuntimeError,
     "Dual level must be a positive number."),
    ("make_dual at a wrong level", _in_level(lambda m: _fw(m).make_dual(_dbl(m, 1), _dbl(m, 1), level=3)),
     RuntimeError, "Invalid level given to _make_dual"),
    ("unpack_dual at a wrong level", _in_level(lambda m: _fw(m).unpack_dual(_fw(m).make_dual(_dbl(m, 1), _dbl(m, 1)), level=3)), RuntimeError,
     "Invalid level given to _fw_primal"),
]


@pytest.mark.parametrize("name,call,exc,msg", _ERRORS, ids=[e[0] for e in _ERRORS])
def test_api_errors(name, call, exc, msg):
    got = _err(ampgrad, call)
    assert got == (exc, msg), f"{name}: {got}"
    torch = _torch()
    if torch is not None:
        t_exc, t_msg = _err(torch, call)
        assert issubclass(t_exc, exc) and t_msg == msg, f"{name}: torch says {t_exc.__name__}: {t_msg}"


def test_no_level_left_open_after_errors():
    with fwAD.dual_level() as level:
        assert level == 0
    assert fwAD.enter_dual_level() == 0
    fwAD.exit_dual_level(level=0)
    x = _dbl(ampgrad, 1, 2)
    assert fwAD.unpack_dual(x) == (x, None) and fwAD.unpack_dual(3) == (3, None)


def test_make_and_unpack_dual():
    x, t = _dbl(ampgrad, 1, 2, 3), _dbl(ampgrad, 4, 5, 6)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        u = fwAD.unpack_dual(d)
        assert isinstance(u, fwAD.UnpackedDualTensor) and u._fields == ("primal", "tangent")
        assert u.tangent is t  # the tangent given, not a copy
        assert u.primal.data_ptr() == x.data_ptr() and u.primal._base is x and d._base is x
        assert fwAD.unpack_dual(u.primal).tangent is None and fwAD.unpack_dual(x).tangent is None
        assert fwAD.unpack_dual(d.detach()).tangent is None
        y = d * 2
        np.testing.assert_array_equal(fwAD.unpack_dual(y).tangent.numpy(), [8, 10, 12])
        assert fwAD.unpack_dual(d > 2).tangent is None and fwAD.unpack_dual(d.argmax()).tangent is None
        assert "tangent=tensor([ 8., 10., 12.]" in repr(y)
    # exiting the level drops every tangent made under it
    assert fwAD.unpack_dual(y).tangent is None and fwAD.unpack_dual(d).tangent is None
    with fwAD.dual_level():
        assert fwAD.unpack_dual(y).tangent is None and fwAD.unpack_dual(d).tangent is None
        assert "tangent" not in repr(y)


def test_tangent_layout_and_dtype():
    with fwAD.dual_level():
        # a tangent laid out unlike the primal is copied into the primal's layout (torch does the same)
        t = ampgrad.randn(3, 2, dtype=ampgrad.float64).t()
        d = fwAD.make_dual(ampgrad.randn(2, 3, dtype=ampgrad.float64), t)
        tan = fwAD.unpack_dual(d).tangent
        assert tan.stride() == (3, 1) and tan is not t
        np.testing.assert_array_equal(tan.numpy(), t.numpy())
        # the output tangent's dtype follows the output
        d = fwAD.make_dual(ampgrad.ones(3, dtype=ampgrad.float64), ampgrad.ones(3, dtype=ampgrad.float64))
        assert fwAD.unpack_dual(d.float() * 2).tangent.dtype == ampgrad.float32
        assert fwAD.unpack_dual(d + ampgrad.ones(3)).tangent.dtype == ampgrad.float64


def test_inplace_ops_and_views():
    x, t = _dbl(ampgrad, 1, 2, 3), _dbl(ampgrad, 1, 1, 1)
    with fwAD.dual_level():
        d = fwAD.make_dual(x.clone(), t.clone())
        d.mul_(3).add_(d)  # tangent: 3t, then doubled
        np.testing.assert_array_equal(fwAD.unpack_dual(d).tangent.numpy(), [6, 6, 6])
        d.sin_()
        np.testing.assert_allclose(fwAD.unpack_dual(d).tangent.numpy(), 6 * np.cos(3 * x.numpy() * 2))
        # a view of a dual tensor carries the viewed tangent; writing through the view updates the base's
        b = fwAD.make_dual(ampgrad.zeros(2, 3, dtype=ampgrad.float64), ampgrad.ones(2, 3, dtype=ampgrad.float64))
        v = b[1]
        np.testing.assert_array_equal(fwAD.unpack_dual(v).tangent.numpy(), [1, 1, 1])
        v.mul_(5)
        np.testing.assert_array_equal(fwAD.unpack_dual(b).tangent.numpy(), [[1, 1, 1], [5, 5, 5]])
        # a plain base gets a tangent when a view of it is written with a dual value
        base = ampgrad.zeros(2, 3, dtype=ampgrad.float64)
        base[0].copy_(fwAD.make_dual(x, t * 2))
        np.testing.assert_array_equal(fwAD.unpack_dual(base).tangent.numpy(), [[2, 2, 2], [0, 0, 0]])
        # overwritten by values without a tangent: zero tangent
        c = fwAD.make_dual(x.clone(), t.clone())
        c.copy_(x)
        np.testing.assert_array_equal(fwAD.unpack_dual(c).tangent.numpy(), [0, 0, 0])
        f = fwAD.make_dual(x.clone(), t.clone())
        f.fill_(1)
        np.testing.assert_array_equal(fwAD.unpack_dual(f).tangent.numpy(), [0, 0, 0])
        # a plain tensor written with a dual one gets its tangent
        p = ampgrad.zeros(3, dtype=ampgrad.float64)
        p += fwAD.make_dual(x, t * 4)
        np.testing.assert_array_equal(fwAD.unpack_dual(p).tangent.numpy(), [4, 4, 4])


def test_inplace_and_views_match_torch():
    torch = pytest.importorskip("torch")

    def run(m):
        fw = _fw(m)
        with fw.dual_level():
            b = fw.make_dual(m.tensor([[1.0, 2, 3], [4, 5, 6]], dtype=m.float64), m.ones(2, 3, dtype=m.float64))
            v = b.t()[1:]
            v.mul_(b.t()[:2].sin())
            w = b.reshape(-1)[::2]
            w.exp_()
            b[:, 0].clamp_(2, 4.5)
            out = (b.sum(0) * b[1]).cumsum(0)
            return fw.unpack_dual(b).tangent.numpy().copy(), fw.unpack_dual(out).tangent.numpy().copy()

    for a, t in zip(run(ampgrad), run(torch)):
        np.testing.assert_allclose(a, t, rtol=1e-12, atol=1e-12)


def test_reverse_over_forward_and_forward_over_reverse():
    x0 = np.array([0.5, -1.0, 2.0])
    v0 = np.array([1.0, 2.0, -1.0])
    x = ampgrad.tensor(x0, dtype=ampgrad.float64, requires_grad=True)
    with fwAD.dual_level():
        # the tangent is differentiable: d/dx <grad of sum(x^3), v> by reverse mode over forward mode
        d = fwAD.make_dual(x, ampgrad.tensor(v0, dtype=ampgrad.float64))
        jvp = fwAD.unpack_dual((d ** 3).sum()).tangent  # 3 x^2 . v
        np.testing.assert_allclose(jvp.item(), (3 * x0 ** 2 * v0).sum())
        (g,) = ampgrad.autograd.grad(jvp, x)
        np.testing.assert_allclose(g.numpy(), 6 * x0 * v0)
        # forward over reverse: the gradient's tangent is the Hessian-vector product
        y = ampgrad.tensor(x0, dtype=ampgrad.float64, requires_grad=True)
        dy = fwAD.make_dual(y, ampgrad.tensor(v0, dtype=ampgrad.float64))
        (gy,) = ampgrad.autograd.grad((dy.exp() * dy.sin()).sum(), dy, create_graph=True)
        hvp = fwAD.unpack_dual(gy).tangent
        np.testing.assert_allclose(hvp.detach().numpy(), 2 * np.exp(x0) * np.cos(x0) * v0, rtol=1e-12)


# ---------------------------------------------------------------- custom Function.jvp
def _mul_function(m, with_jvp=True):
    class Mul(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, scale):
            ctx.save_for_backward(x, y)
            ctx.save_for_forward(x, y)
            ctx.scale = scale
            return x * y * scale

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * y * ctx.scale, g * x * ctx.scale, None

        if with_jvp:
            @staticmethod
            def jvp(ctx, tx, ty, tscale):
                assert tscale is None
                x, y = ctx.saved_tensors
                return (tx * y + x * ty) * ctx.scale
    return Mul


def test_function_jvp():
    x0, y0, t0 = [0.5, -1.0, 2.0], [1.5, 2.0, -0.5], [1.0, 2.0, 3.0]
    results = []
    for m in filter(None, (ampgrad, _torch())):
        Mul = _mul_function(m)
        fw = _fw(m)
        with fw.dual_level():
            x, y = fw.make_dual(_dbl(m, *x0), _dbl(m, *t0)), _dbl(m, *y0)
            out = Mul.apply(x, y, 3.0)
            tan = fw.unpack_dual(out).tangent
            results.append(tan.detach().numpy().copy())
            # the forward sees primals only; inputs without a tangent give jvp zeros
            ctx_probe = []

            class Probe(m.autograd.Function):
                @staticmethod
                def forward(ctx, a, b):
                    ctx_probe.append(_fw(m).unpack_dual(a).tangent)
                    return a + b

                @staticmethod
                def backward(ctx, g):
                    return g, g

                @staticmethod
                def jvp(ctx, ta, tb):
                    ctx_probe.extend([ta.detach().numpy().copy(), tb.detach().numpy().copy()])
                    return ta + tb

            Probe.apply(x, y)
            assert ctx_probe[0] is None
            np.testing.assert_array_equal(ctx_probe[1], t0)
            np.testing.assert_array_equal(ctx_probe[2], [0, 0, 0])
            # no input carries a tangent: jvp is not called, the output has none
            assert fw.unpack_dual(Probe.apply(y, y)).tangent is None and len(ctx_probe) == 4
    np.testing.assert_allclose(results[0], np.array(t0) * np.array(y0) * 3)
    for r in results[1:]:
        np.testing.assert_allclose(results[0], r)


def test_function_without_jvp_raises():
    errs = []
    for m in filter(None, (ampgrad, _torch())):
        Mul = _mul_function(m, with_jvp=False)
        fw = _fw(m)
        with fw.dual_level():
            x = fw.make_dual(_dbl(m, 1, 2), _dbl(m, 1, 1))
            with pytest.raises(NotImplementedError) as e:
                Mul.apply(x, _dbl(m, 1, 2), 2.0)
            errs.append(str(e.value))
            assert fw.unpack_dual(Mul.apply(_dbl(m, 1, 2), _dbl(m, 1, 2), 2.0)).tangent is None
    assert errs[0] == ("You must implement the jvp function for custom autograd.Function to use it with forward mode AD.")
    assert len(set(errs)) == 1


# ---------------------------------------------------------------- functional API, forward-mode strategy
def test_jacobian_forward_mode():
    AF = ampgrad.autograd.functional
    x0 = np.array([[0.5, -1.0, 2.0], [1.0, 0.25, -0.75]])
    y0 = np.array([1.5, 2.0, -0.5])

    def f(m):
        return lambda x, y: ((x * y).exp(), (x.sin() @ y).sum(), x.argmax())

    x, y = ampgrad.tensor(x0, dtype=ampgrad.float64), ampgrad.tensor(y0, dtype=ampgrad.float64)
    fwd = AF.jacobian(f(ampgrad), (x, y), strategy="forward-mode", vectorize=True)
    rev = AF.jacobian(f(ampgrad), (x, y))
    assert isinstance(fwd, list) and len(fwd) == 3 and all(len(r) == 2 for r in fwd)
    for i in range(2):
        for j in range(2):
            assert tuple(fwd[i][j].shape) == tuple(rev[i][j].shape)
            np.testing.assert_allclose(fwd[i][j].numpy(), rev[i][j].numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(fwd[2][0].numpy(), np.zeros((2, 3)))  # integer output: zero Jacobian
    single = AF.jacobian(lambda x: x ** 2, x, strategy="forward-mode", vectorize=True)
    np.testing.assert_allclose(single.numpy(), np.diagflat(2 * x0).reshape(2, 3, 2, 3))
    torch = _torch()
    if torch is not None:
        tf = torch.autograd.functional.jacobian(f(torch), (torch.tensor(x0), torch.tensor(y0)), strategy="forward-mode",
                                                vectorize=True)
        for i in range(3):
            for j in range(2):
                np.testing.assert_allclose(fwd[i][j].numpy(), tf[i][j].numpy(), rtol=1e-12, atol=1e-12)


def test_hessian_forward_over_reverse():
    AF = ampgrad.autograd.functional
    x0 = np.array([0.5, -1.0, 2.0])

    def f(x):
        return (x.exp() * x.sin()).sum() + (x.softmax(0) * x).sum()

    x = ampgrad.tensor(x0, dtype=ampgrad.float64)
    fwd = AF.hessian(f, x, outer_jacobian_strategy="forward-mode", vectorize=True)
    rev = AF.hessian(f, x)
    np.testing.assert_allclose(fwd.detach().numpy(), rev.detach().numpy(), rtol=1e-10, atol=1e-12)
    torch = _torch()
    if torch is not None:
        th = torch.autograd.functional.hessian(f, torch.tensor(x0), outer_jacobian_strategy="forward-mode", vectorize=True)
        np.testing.assert_allclose(fwd.detach().numpy(), th.detach().numpy(), rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- gradcheck(check_forward_ad=True)
def test_gradcheck_forward_ad():
    gc = ampgrad.autograd.gradcheck
    x = ampgrad.tensor([0.5, -1.0, 2.0], dtype=ampgrad.float64, requires_grad=True)
    y = ampgrad.tensor([[1.5], [2.0]], dtype=ampgrad.float64, requires_grad=True)
    assert gc(lambda a, b: (a * b).tanh().cumsum(1), (x, y), check_forward_ad=True)
    assert gc(lambda a, b: (a * b).sum(), (x, y), check_forward_ad=True, check_backward_ad=False)
    assert ampgrad.autograd.gradgradcheck(lambda a: (a ** 3).sin(), (x,), check_fwd_over_rev=True)

    class WrongJvp(ampgrad.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

        @staticmethod
        def jvp(ctx, t):
            return t * 3

    assert gc(WrongJvp.apply, (x,))  # reverse mode alone is right
    with pytest.raises(ampgrad.autograd.GradcheckError, match="Jacobian computed with forward mode mismatch for output 0 "
                                                               "with respect to input 0"):
        gc(WrongJvp.apply, (x,), check_forward_ad=True)
    assert not gc(WrongJvp.apply, (x,), check_forward_ad=True, raise_exception=False)


# ---------------------------------------------------------------- nn.functional (composed of ampgrad ops)
def _nn_cases():
    F = "m.nn.functional"
    lbl = lambda m: m.tensor([1, 0, 2, 1])  # noqa: E731
    return [
        ("layer_norm", lambda m, x, w, b: eval(F, {"m": m}).layer_norm(x, (5,), w, b), [(4, 5), (5,), (5,)]),
        ("rms_norm", lambda m, x, w: eval(F, {"m": m}).rms_norm(x, (5,), w), [(4, 5), (5,)]),
        ("group_norm", lambda m, x, w, b: eval(F, {"m": m}).group_norm(x, 2, w, b), [(2, 4, 3), (4,), (4,)]),
        ("conv2d", lambda m, x, w, b: eval(F, {"m": m}).conv2d(x, w, b, stride=2, padding=1), [(1, 2, 5, 5), (3, 2, 3, 3), (3,)]),
        ("conv1d groups", lambda m, x, w: eval(F, {"m": m}).conv1d(x, w, groups=2, dilation=2), [(2, 4, 7), (2, 2, 2)]),
        ("conv_transpose2d", lambda m, x, w: eval(F, {"m": m}).conv_transpose2d(x, w, stride=2), [(1, 2, 3, 3), (2, 3, 2, 2)]),
        ("cross_entropy", lambda m, x: eval(F, {"m": m}).cross_entropy(x, lbl(m), label_smoothing=0.1), [(4, 3)]),
        ("nll_loss", lambda m, x: eval(F, {"m": m}).nll_loss(x.log_softmax(1), lbl(m), reduction="sum"), [(4, 3)]),
        ("mse_loss", lambda m, x, y: eval(F, {"m": m}).mse_loss(x, y), [(3, 4), (3, 4)]),
        ("smooth_l1_loss", lambda m, x, y: eval(F, {"m": m}).smooth_l1_loss(x, y, beta=0.5), [(3, 4), (3, 4)]),
        ("bce_with_logits", lambda m, x, y: eval(F, {"m": m}).binary_cross_entropy_with_logits(x, y.sigmoid()), [(3, 4), (3, 4)]),
        ("kl_div", lambda m, x, y: eval(F, {"m": m}).kl_div(x.log_softmax(1), y.softmax(1), reduction="batchmean"), [(3, 4), (3, 4)]),
        ("sdpa", lambda m, q, k, v: eval(F, {"m": m}).scaled_dot_product_attention(q, k, v, is_causal=True),
         [(2, 3, 4), (2, 3, 4), (2, 3, 4)]),
        ("embedding", lambda m, w: eval(F, {"m": m}).embedding(m.tensor([[0, 2], [3, 0]]), w), [(4, 3)]),
        ("pad reflect", lambda m, x: eval(F, {"m": m}).pad(x, (1, 2), mode="reflect"), [(2, 3, 4)]),
        ("activations", lambda m, x: (eval(F, {"m": m}).elu(x) + eval(F, {"m": m}).mish(x) + eval(F, {"m": m}).hardswish(x)
                                      + eval(F, {"m": m}).logsigmoid(x) + eval(F, {"m": m}).gelu(x, approximate="tanh")),
         [(3, 4)]),
        ("normalize + cosine_similarity", lambda m, x, y: eval(F, {"m": m}).normalize(x) + eval(F, {"m": m}).cosine_similarity(x, y).unsqueeze(1),
         [(3, 4), (3, 4)]),
        ("einsum + cdist", lambda m, x, y: m.einsum("ij,kj->ik", x, y) + m.cdist(x, y), [(3, 4), (2, 4)]),
    ]


@pytest.mark.parametrize("name,fn,shapes", _nn_cases(), ids=[c[0] for c in _nn_cases()])
def test_nn_functional_forward_ad(name, fn, shapes):
    rng = rng_for("nn", name)
    xs = [rng.uniform(-1.5, 1.5, size=s) for s in shapes]
    ts = [rng.uniform(-1, 1, size=s) for s in shapes]

    def run(m, arrays):
        return fn(m, *[m.tensor(a, dtype=m.float64) for a in arrays])

    with fwAD.dual_level():
        out = fn(ampgrad, *[fwAD.make_dual(ampgrad.tensor(x, dtype=ampgrad.float64), ampgrad.tensor(t, dtype=ampgrad.float64))
                           for x, t in zip(xs, ts)])
        tangent = fwAD.unpack_dual(out).tangent.detach().numpy().copy()
    num = (run(ampgrad, [x + EPS * t for x, t in zip(xs, ts)]).numpy()
           - run(ampgrad, [x - EPS * t for x, t in zip(xs, ts)]).numpy()) / (2 * EPS)
    np.testing.assert_allclose(tangent, num, atol=1e-5, rtol=1e-4)
    torch = _torch()
    if torch is not None:
        import torch.autograd.forward_ad as tfw
        with tfw.dual_level():
            try:
                tout = fn(torch, *[tfw.make_dual(torch.tensor(x), torch.tensor(t)) for x, t in zip(xs, ts)])
            except NotImplementedError:  # torch has no forward AD for it (cdist): finite differences only
                return
            np.testing.assert_allclose(tangent, tfw.unpack_dual(tout).tangent.numpy(), atol=1e-10, rtol=1e-8)


def test_grad_modes():
    outs = []
    for m in filter(None, (ampgrad, _torch())):
        fw = _fw(m)
        with fw.dual_level():
            d = fw.make_dual(_dbl(m, 1, 2), _dbl(m, 3, 4))
            with m.no_grad():  # no_grad leaves forward AD on
                outs.append(fw.unpack_dual(d * 2).tangent.numpy().copy())
            with m.inference_mode():  # inference mode turns it off, make_dual included
                assert fw.unpack_dual(d * 2).tangent is None
                assert fw.unpack_dual(fw.make_dual(_dbl(m, 1), _dbl(m, 1))).tangent is None
    for o in outs:
        np.testing.assert_array_equal(o, [6, 8])


def test_function_jvp_count_error():
    msgs = []
    for m in filter(None, (ampgrad, _torch())):
        class Twice(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

            @staticmethod
            def jvp(ctx, t):
                return t * 2, t

        fw = _fw(m)
        with fw.dual_level():
            with pytest.raises(RuntimeError) as e:
                Twice.apply(fw.make_dual(_dbl(m, 1), _dbl(m, 1)))
            msgs.append(str(e.value))
    assert msgs[0] == "Function's jvp returned an invalid number of forward gradients (expected 1 but got 2)"
    assert len(set(msgs)) == 1


def test_inplace_function_and_differentiable_tangents():
    class Scale_(ampgrad.autograd.Function):  # in place: jvp updates the tangent in place (torch's contract)
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

        @staticmethod
        def jvp(ctx, t):
            return t.mul_(2)

    with fwAD.dual_level():
        x = fwAD.make_dual(_dbl(ampgrad, 1, 2), _dbl(ampgrad, 1, 3))
        y = x.clone()
        z = Scale_.apply(y)
        assert z is y
        np.testing.assert_array_equal(fwAD.unpack_dual(y).tangent.numpy(), [2, 6])
        np.testing.assert_array_equal(fwAD.unpack_dual(x).tangent.numpy(), [1, 3])
        # primal and tangent that require grad: the tangent is differentiable in both (torch's numbers)
        a = ampgrad.tensor([1.0, 2.0], dtype=ampgrad.float64, requires_grad=True)
        ta = ampgrad.tensor([0.5, 1.0], dtype=ampgrad.float64, requires_grad=True)
        out = (fwAD.make_dual(a, ta) ** 2).sum()
        tan = fwAD.unpack_dual(out).tangent
        assert tan.item() == 5.0
        ga, gt = ampgrad.autograd.grad(tan, (a, ta))
        np.testing.assert_array_equal(ga.numpy(), [1, 2])
        np.testing.assert_array_equal(gt.numpy(), [2, 4])
        out.backward()
        np.testing.assert_array_equal(a.grad.numpy(), [2, 4])


def test_many_levels_and_tangents():
    # each level's tangents go when it exits, however many were made
    x = ampgrad.ones(4, dtype=ampgrad.float64)
    kept = []
    for k in range(3):
        with fwAD.dual_level():
            d = fwAD.make_dual(x, ampgrad.full((4,), float(k), dtype=ampgrad.float64))
            for _ in range(1500):
                d = d * 1.0
            kept.append(d)
            assert fwAD.unpack_dual(d).tangent[0].item() == k
    assert all(fwAD.unpack_dual(t).tangent is None for t in kept)


# ---------------------------------------------------------------- random chains (views, in-place writes through views)
@pytest.mark.parametrize("kind,seed", [(k, s) for k in ("unary", "binary") for s in range(0, 400, 100)])
def test_random_op_chains_forward_ad(kind, seed):
    """The op chains of test_ops with dual inputs: tangents (also of in-place writes through views
    and advanced indexing) agree with torch's forward AD; a chain torch refuses is refused too."""
    import random
    torch = pytest.importorskip("torch")
    from test_ops import _chain_ops, _chain_ops2, builtin_exc
    ops = _chain_ops() if kind == "unary" else _chain_ops2()
    compared = 0
    for trial in range(seed, seed + 100):
        rng = random.Random(trial)
        shape = [rng.randint(1, 4) for _ in range(rng.randint(0, 3))]
        seq = [rng.randrange(len(ops)) for _ in range(rng.randint(1, 6))]
        data = np.random.RandomState(trial).uniform(-1, 1, size=shape)
        tdata = np.random.RandomState(trial + 1).uniform(-1, 1, size=shape)
        res = []
        for m in (torch, ampgrad):
            fw = _fw(m)
            try:
                with fw.dual_level():
                    z = fw.make_dual(m.tensor(data, dtype=m.float64), m.tensor(tdata, dtype=m.float64))
                    y = fw.make_dual(m.tensor(0.7, dtype=m.float64), m.tensor(-1.3, dtype=m.float64))
                    for k in seq:
                        z = ops[k](m, z) if kind == "unary" else ops[k](m, z, y)
                    p, t = fw.unpack_dual(z)
                    res.append((p.detach().clone(), None if t is None else t.detach().clone()))
            except Exception as e:  # noqa: BLE001
                res.append(e)
        what = f"{kind} chain {trial}: shape {shape}, ops {seq}"
        if isinstance(res[0], Exception) or isinstance(res[1], Exception):
            assert isinstance(res[1], builtin_exc(res[0])), f"{what}: torch {res[0]!r}, ampgrad {res[1]!r}"
            continue
        (tp, tt), (ap, at) = res
        tol = lambda dt: (1e-6, 1e-5)  # noqa: E731  (one step rounds through float32)
        assert_same(ap, tp, tol, what, torch)
        tt = torch.zeros_like(tp) if tt is None else tt
        at = ampgrad.zeros(*ap.shape, dtype=ap.dtype) if at is None else at
        assert_same(at, tt, tol, what + " tangent", torch)
        compared += 1
    assert compared > 50


def test_views_made_before_the_base_got_a_tangent():
    results = []
    for m in filter(None, (ampgrad, _torch())):
        fw = _fw(m)
        with fw.dual_level():
            base = m.zeros(2, 3, dtype=m.float64)
            row, col = base[1], base[:, 2]
            base.copy_(fw.make_dual(m.ones(2, 3, dtype=m.float64), m.arange(6, dtype=m.float64).reshape(2, 3)))
            seen = [fw.unpack_dual(row).tangent.numpy().copy(), fw.unpack_dual(col * 2).tangent.numpy().copy()]
            row.mul_(3)  # writes through to the base's tangent and so to the other view's
            seen += [fw.unpack_dual(base).tangent.numpy().copy(), fw.unpack_dual(col).tangent.numpy().copy()]
            results.append(seen)
    np.testing.assert_array_equal(results[0][0], [3, 4, 5])
    np.testing.assert_array_equal(results[0][1], [4, 10])
    np.testing.assert_array_equal(results[0][2], [[0, 1, 2], [9, 12, 15]])
    np.testing.assert_array_equal(results[0][3], [2, 15])
    for r in results[1:]:
        for a, b in zip(results[0], r):
            np.testing.assert_array_equal(a, b)
