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
from test_ops import _xfail, assert_same, flat_outputs, instantiate, realize

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


def _run_forward_ad(m, fw, op, sample, realized, tangents):
    """(primal outputs, their tangents or None) with the differentiable inputs made dual."""
    args, leaves = instantiate(m, realized, requires_grad=True)
    if not leaves:
        return None
    with fw.dual_level():
        duals = {id(leaf): fw.make_dual(leaf.detach(), m.tensor(t, dtype=leaf.dtype)) for leaf, t in zip(leaves, tangents)}
        outs = flat_outputs(op.call(m, m is not ampgrad, *_swap(args, duals), **copy.deepcopy(sample.kwargs)))
        res = [fw.unpack_dual(o) for o in outs]
        return [r.primal.detach() for r in res], [None if r.tangent is None else r.tangent.detach().clone() for r in res]


def _directional_fd(op, sample, realized, base, tangents):
    """(f(x + eps t) - f(x - eps t)) / (2 eps) for every float output."""
    def at(sgn):
        arrays = {k: b + sgn * EPS * t for k, (b, t) in enumerate(zip(base, tangents))}
        args, _ = instantiate(ampgrad, realized, requires_grad=True, override=arrays)
        args = _swap(args, {})
        with ampgrad.no_grad():
            return flat_outputs(op.call(ampgrad, False, *[a.detach() if isinstance(a, ampgrad.Tensor) else a for a in args],
                                        **copy.deepcopy(sample.kwargs)))
    plus, minus = at(1), at(-1)
    return [(p.numpy().astype(np.float64) - q.numpy().astype(np.float64)) / (2 * EPS)
            if p.dtype.is_floating_point else None for p, q in zip(plus, minus)]


def _samples(op):
    for si, sample in enumerate(op.samples):
        if sample.grad:
            yield si, sample, realize(op, si, sample, "float64")


FWD_OPS = [op for op in OPS if op.grad and "float64" in op.dtypes]


@pytest.mark.parametrize("op", [pytest.param(op, id=op.name) for op in FWD_OPS if op.fd])
def test_forward_ad_finite_differences(op):
    _xfail(op, "fd")
    checked = 0
    for si, sample, realized in _samples(op):
        _, leaves = instantiate(ampgrad, realized, requires_grad=True)
        if not leaves:
            continue
        tangents = _tangents(op, si, leaves)
        primals, jvps = _run_forward_ad(ampgrad, fwAD, op, sample, realized, tangents)
        base = [np.array(leaf.detach().numpy()) for leaf in leaves]
        num = _directional_fd(op, sample, realized, base, tangents)
        for k, (p, t, n) in enumerate(zip(primals, jvps, num)):
            what = f"{op.name} [{sample.desc or si}] output {k}"
            if n is None:
                assert t is None, f"{what}: a non-float output has a tangent"
                continue
            got = np.zeros(tuple(p.shape)) if t is None else t.numpy()
            assert got.shape == n.shape, f"{what}: tangent shape {got.shape} != {n.shape}"
            np.testing.assert_allclose(got, n, atol=1e-5, rtol=1e-4, err_msg=f"{what}: forward AD vs finite differences")
            checked += 1
    assert checked or not any(True for _ in _samples(op)), f"{op.name}: no output checked"


@pytest.mark.parametrize("op", [pytest.param(op, id=op.name) for op in FWD_OPS])
def test_forward_ad_vs_torch(op):
    torch = pytest.importorskip("torch")
    import torch.autograd.forward_ad as tfw
    for si, sample, realized in _samples(op):
        _, leaves = instantiate(ampgrad, realized, requires_grad=True)
        if not leaves:
            continue
        tangents = _tangents(op, si, leaves)
        try:
            th = _run_forward_ad(torch, tfw, op, sample, realized, tangents)
        except NotImplementedError:  # torch has no forward AD formula for it: nothing to compare
            continue
        except Exception as e:  # e.g. an in-place op torch refuses: ampgrad must refuse as well
            from test_ops import builtin_exc
            with pytest.raises(builtin_exc(e)):
                _run_forward_ad(ampgrad, fwAD, op, sample, realized, tangents)
            continue
        ag = _run_forward_ad(ampgrad, fwAD, op, sample, realized, tangents)
        what = f"{op.name} [{sample.desc or si}]"
        assert len(ag[0]) == len(th[0]), f"{what}: {len(ag[0])} outputs, torch gives {len(th[0])}"
        for k, ((pa, ta), (pt, tt)) in enumerate(zip(zip(*ag), zip(*th))):
            if tt is None and ta is None:
                continue
            # a missing tangent is a zero one (torch materializes zeros for some ops)
            tt = torch.zeros_like(pt) if tt is None else tt
            ta = ampgrad.zeros(*pa.shape, dtype=pa.dtype) if ta is None else ta
            assert_same(ta, tt, lambda dt: (1e-7, 1e-6), f"{what} tangent {k}", torch)


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
