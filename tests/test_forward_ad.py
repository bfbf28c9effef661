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
