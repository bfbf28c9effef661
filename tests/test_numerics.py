"""Numerical edge cases outside the op database, each against torch: the GradScaler kernels over
random sequences and at non-finite values of every kind and layout, gradient accumulation into
.grad in every grad mode, and the engine summing gradients that meet at special values."""
import numpy as np
import pytest

import ampgrad as ag

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")

INF, NAN = float("inf"), float("nan")


def _np(t):
    return np.asarray(t.detach().float().numpy(), dtype=np.float64)


@pytest.mark.parametrize("seed", range(4))
def test_update_scale_random_sequences_match_torch(seed):
    """torch._amp_update_scale_ over random clean/inf sequences: the growth tracker restarts after
    a skipped step, the scale grows after exactly `interval` clean steps, backs off on inf."""
    rng = np.random.RandomState(seed)
    interval = int(rng.randint(1, 5))
    sa, ta = ag.tensor(1024.0), ag.tensor(0, dtype=ag.int32)
    st, tt = torch.tensor(1024.0), torch.tensor(0, dtype=torch.int32)
    for step in range(40):
        bad = float(rng.rand() < 0.3)
        ag._C._amp_update_scale_(sa, ta, ag.tensor(bad), 2.0, 0.5, interval)
        torch._amp_update_scale_(st, tt, torch.tensor(bad), 2.0, 0.5, interval)
        assert (sa.item(), ta.item()) == (st.item(), tt.item()), f"step {step} (interval {interval}, inf={bad})"


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("bad", [None, INF, -INF, NAN])
@pytest.mark.parametrize("layout", ["contig", "strided"])
def test_unscale_finds_every_non_finite(dtype, bad, layout):
    """torch._amp_foreach_non_finite_check_and_unscale_: inf, -inf and nan each set found_inf, in
    contiguous and strided grads of every float dtype, wherever they sit; values as torch's."""
    for pos in (0, 5, 63):
        data = np.random.RandomState(pos).uniform(-4, 4, size=(64, 2))
        if bad is not None:
            data[pos, 0] = bad
        res = []
        for m in (ag, torch):
            g = m.tensor(data, dtype=m.float64).to(getattr(m, dtype))
            g = g.contiguous() if layout == "contig" else g.t().contiguous().t()
            g = g[:, 0] if layout == "strided" else g.reshape(-1)[::1]
            found = m.zeros(())
            fn = ag._C._amp_foreach_non_finite_check_and_unscale_ if m is ag else torch._amp_foreach_non_finite_check_and_unscale_
            fn([g], found, m.tensor(0.25))
            res.append((found.item(), _np(g)))
        assert res[0][0] == res[1][0], f"found_inf {res[0][0]} != torch's {res[1][0]} (bad={bad} at {pos})"
        np.testing.assert_array_equal(res[0][1], res[1][1])


def _grads_accumulated(m, mode):
    x = m.tensor([0.0, -0.0, 1.5, -2.0, 3.0], dtype=m.float64, requires_grad=True)
    outs = []
    for k in range(3):
        y = (x * x * (k + 1)).sum() + (x.abs() * (k - 1)).sum()
        if mode == "create_graph":
            y.backward(create_graph=True)
        elif mode == "retain":
            y.backward(retain_graph=True)
            y.backward()
        else:
            y.backward()
        outs.append(x.grad.detach().clone())
    if mode == "create_graph":  # the accumulated .grad is itself differentiable
        (gx,) = m.autograd.grad(x.grad.sum(), [x])
        outs.append(gx)
    return outs


@pytest.mark.parametrize("mode", ["plain", "retain", "create_graph"])
def test_grad_accumulates_into_dot_grad(mode):
    """.grad accumulates across backward calls (also under create_graph, where the sum is built out
    of place, and twice through a retained graph), including at 0 and -0.0 (abs)."""
    for k, (a, t) in enumerate(zip(_grads_accumulated(ag, mode), _grads_accumulated(torch, mode))):
        np.testing.assert_array_equal(a.numpy(), t.numpy(), err_msg=f"{mode}: after backward {k}")
        assert list(np.signbit(a.numpy())) == list(np.signbit(t.numpy())), f"{mode}: sign of zero, step {k}"


@pytest.mark.parametrize("vals", [[0.0, -0.0, 1.0], [INF, 1.0, -INF], [NAN, 2.0, 0.0]])
def test_engine_sums_paths_at_special_values(vals):
    """A tensor used by several ops gets the sum of their gradients, with torch's nan/inf/sign."""
    res = []
    for m in (ag, torch):
        x = m.tensor(vals, dtype=m.float64, requires_grad=True)
        y = x.exp() * 2 + x.relu() + x.abs() + (x * 3).clamp(-1, 1) + x.sigmoid()
        (g,) = m.autograd.grad(y.sum(), [x])
        res.append(g.numpy())
    np.testing.assert_array_equal(res[0], res[1])
    ok = ~np.isnan(res[1])  # the sign of a nan means nothing
    assert list(np.signbit(res[0][ok])) == list(np.signbit(res[1][ok]))


@pytest.mark.parametrize("opt", ["SGD", "Adam"])
@pytest.mark.parametrize("bad", [INF, NAN])
def test_grad_scaler_with_fused_optimizers_matches_torch(opt, bad):
    """GradScaler driving optimizers that take grad_scale/found_inf (ampgrad's SGD and Adam) against
    torch.amp.GradScaler with torch's optimizers: inf or nan grads injected at some steps; the
    parameters, the scale and the growth tracker agree after every step, and steps with a
    non-finite gradient are skipped."""
    rng = np.random.RandomState(3)
    w0, x = rng.uniform(-1, 1, (4, 3)).astype(np.float32), rng.uniform(-1, 1, (5, 4)).astype(np.float32)
    inject = {1, 2, 5}
    runs = []
    for m in (ag, torch):
        w = m.tensor(w0.copy(), requires_grad=True)
        o = getattr(m.optim, opt)([w], lr=0.05, **({"momentum": 0.9} if opt == "SGD" else {}))
        sc = m.amp.GradScaler("cpu", init_scale=2.0 ** 8, growth_factor=2.0, backoff_factor=0.25, growth_interval=2)
        trace = []
        for i in range(8):
            o.zero_grad()
            sc.scale(((m.tensor(x) @ w) ** 2).mean()).backward()
            if i in inject:
                with m.no_grad():
                    w.grad[1, 2] = bad
            sc.step(o)
            sc.update()
            trace.append((sc.get_scale(), sc._get_growth_tracker(), w.detach().numpy().copy()))
        runs.append(trace)
    for i, (a, t) in enumerate(zip(*runs)):
        assert a[:2] == t[:2], f"step {i}: (scale, tracker) {a[:2]} != torch's {t[:2]}"
        np.testing.assert_allclose(a[2], t[2], rtol=1e-5, atol=1e-6, err_msg=f"step {i}")


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
@pytest.mark.parametrize("w", [0.3, 0.7, -0.2])
def test_lerp_python_weight_low_precision_rounds_once(dt, w):
    # torch keeps a Python-number weight in float32 (opmath) for bf16/fp16 ends and rounds the result once
    rng = np.random.default_rng(5)
    a, b = (torch.tensor(rng.standard_normal(2000) * 4, dtype=getattr(torch, dt)) for _ in range(2))
    ref = torch.lerp(a.double(), b.double(), w)
    err_t = (torch.lerp(a, b, w).double() - ref).abs().max().item()
    mine = ag.lerp(ag.tensor(a.double().numpy()).to(getattr(ag, dt)), ag.tensor(b.double().numpy()).to(getattr(ag, dt)), w)
    assert mine.dtype == getattr(ag, dt)
    err_a = np.abs(mine.double().numpy() - ref.numpy()).max()
    assert err_a <= err_t * 1.0001, (err_a, err_t)
    x = ag.randn(3, requires_grad=True)
    assert ag.lerp(x, x * 2, w).grad_fn.name() == "LerpBackward0"
    assert ag.lerp(x, x * 2, ag.tensor(w)).grad_fn.name() == "LerpBackward1"


@pytest.mark.parametrize("lo,hi", [(-2**63, 2**63 - 1), (2**62, 2**62 + 10), (-2**60, 2**61), (2**53 + 1, 2**53 + 3), (-5, 5)])
def test_randint_bounds_beyond_2_53_are_exact_and_match_torch(lo, hi):
    # Note [Integer bounds of randint]: the full int64 range once crashed (SIGFPE) and 2**62 + 10 drew
    # from an empty range; the values must be torch's CPU stream, inside [lo, hi)
    ag.manual_seed(11)
    torch.manual_seed(11)
    a = ag.randint(lo, hi, (64,)).tolist()
    assert a == torch.randint(lo, hi, (64,)).tolist()
    assert all(lo <= v < hi for v in a)
