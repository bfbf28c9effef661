"""GradScaler extensions (issue 18 points 2-3): default behaviour step by step against
torch.amp.GradScaler, min_scale / max_scale, hysteresis, per-loss scales, stats(), state dicts
(torch's load), and the two-pass unscale + clip against torch's unscale_ + clip_grad_norm_."""
import pickle
import warnings

import numpy as np
import pytest

import ampgrad as ag

torch = pytest.importorskip("torch")


def _pair(seed=0, n=6, bf16=False):
    """An ampgrad and a torch Linear-MLP with equal float32 weights."""
    rng = np.random.default_rng(seed)
    ws = [rng.standard_normal((n, n)).astype(np.float32) * 0.5 for _ in range(2)]
    a = [ag.tensor(w, requires_grad=True) for w in ws]
    t = [torch.tensor(w, requires_grad=True) for w in ws]
    x = rng.standard_normal((4, n)).astype(np.float32)
    return a, t, ag.tensor(x), torch.tensor(x)


def _loss(lib, ws, x):
    return (((x @ ws[0]).tanh() @ ws[1]) ** 2).mean()


@pytest.mark.parametrize("seed", range(3))
def test_default_matches_torch_step_by_step(seed):
    rng = np.random.default_rng(seed)
    a, t, xa, xt = _pair(seed)
    sa = ag.amp.GradScaler("cpu", init_scale=2.0**8, growth_interval=3)
    st = torch.amp.GradScaler("cpu", init_scale=2.0**8, growth_interval=3)
    oa, ot = ag.optim.SGD(a, lr=0.05), torch.optim.SGD(t, lr=0.05)
    for step in range(14):
        bad = rng.random() < 0.3
        for s, o, ws, x, lib in ((sa, oa, a, xa, ag), (st, ot, t, xt, torch)):
            o.zero_grad()
            s.scale(_loss(lib, ws, x)).backward()
            if bad:
                with lib.no_grad():
                    ws[1].grad[0, 0] = float("inf")
            s.step(o)
            s.update()
        assert sa.get_scale() == st.get_scale(), f"step {step}"
        assert sa._get_growth_tracker() == st._get_growth_tracker(), f"step {step}"
        for p, q in zip(a, t):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=2e-5, atol=1e-6)
    assert sa.state_dict() == st.state_dict()
    stats = sa.stats()
    assert stats["steps"] == 14
    assert stats["skipped_steps"] == sum(1 for _, _, skipped in stats["scale_history"] if skipped)
    assert stats["scale_history"][-1][1] == st.get_scale()


def test_loads_torch_state_dict_and_keeps_its_keys():
    st = torch.amp.GradScaler("cpu", init_scale=1024.0, growth_factor=3.0, backoff_factor=0.25, growth_interval=7)
    t = torch.ones(2, requires_grad=True)
    st.scale(t.sum())  # lazily creates the scale
    sd = st.state_dict()
    sa = ag.amp.GradScaler("cpu")
    sa.load_state_dict(sd)
    assert sa.state_dict() == sd
    # with extensions on, torch's keys are unchanged and the extra ones round-trip
    sx = ag.amp.GradScaler("cpu", min_scale=1.0, max_scale=2.0**20, hysteresis=3)
    sx.load_state_dict(sd)
    out = sx.state_dict()
    assert {k: out[k] for k in sd} == sd
    assert (out["min_scale"], out["max_scale"], out["hysteresis"]) == (1.0, 2.0**20, 3)
    sy = ag.amp.GradScaler("cpu", hysteresis=2)
    sy.load_state_dict(out)
    assert sy.state_dict() == out
    # torch loads ampgrad's default state dict
    st2 = torch.amp.GradScaler("cpu")
    st2.load_state_dict(ag.amp.GradScaler("cpu", init_scale=8.0).state_dict())
    assert st2.get_scale() == 8.0


def _step(scaler, opt, ws, x, bad):
    opt.zero_grad()
    scaler.scale(_loss(ag, ws, x)).backward()
    if bad:
        with ag.no_grad():
            ws[0].grad[0, 0] = float("nan")
    scaler.step(opt)
    scaler.update()


def test_min_scale_clamps_and_warns():
    a, _, xa, _ = _pair()
    s = ag.amp.GradScaler("cpu", init_scale=4.0, min_scale=1.0)
    o = ag.optim.SGD(a, lr=0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _step(s, o, a, xa, True)  # 4 -> 2: in range, no warning
    assert s.get_scale() == 2.0
    _step(s, o, a, xa, True)
    assert s.get_scale() == 1.0
    with pytest.warns(RuntimeWarning, match="outside \\[1, inf\\]; clamped to min_scale=1"):
        _step(s, o, a, xa, True)
    assert s.get_scale() == 1.0
    assert s.stats()["skipped_steps"] == 3


def test_max_scale_clamps_growth():
    a, _, xa, _ = _pair()
    s = ag.amp.GradScaler("cpu", init_scale=2.0**14, growth_interval=1, max_scale=2.0**15)
    o = ag.optim.SGD(a, lr=0.01)
    _step(s, o, a, xa, False)
    assert s.get_scale() == 2.0**15
    with pytest.warns(RuntimeWarning, match="clamped to max_scale"):
        _step(s, o, a, xa, False)
    assert s.get_scale() == 2.0**15


def test_hysteresis_backs_off_after_n_consecutive_overflows():
    a, _, xa, _ = _pair()
    s = ag.amp.GradScaler("cpu", init_scale=64.0, hysteresis=3, growth_interval=100)
    o = ag.optim.SGD(a, lr=0.01)
    w0 = a[0].detach().clone()
    seq = [True, True, False, True, True, True, True, False, True]
    scales = []
    for bad in seq:
        _step(s, o, a, xa, bad)
        scales.append(s.get_scale())
    # two overflows tolerated, a clean step re-arms, then the third consecutive overflow backs off and
    # every further consecutive one too; a clean step re-arms again.
    assert scales == [64.0, 64.0, 64.0, 64.0, 64.0, 32.0, 16.0, 16.0, 16.0]
    st = s.stats()
    assert st["skipped_steps"] == 7 and st["steps"] == 9
    assert not ag.equal(a[0].detach(), w0)  # the clean steps did update
    # state dict and pickle keep the hysteresis counter
    s2 = ag.amp.GradScaler("cpu", hysteresis=3)
    s2.load_state_dict(s.state_dict())
    s3 = pickle.loads(pickle.dumps(s))
    for other in (s2, s3):
        o2 = ag.optim.SGD(a, lr=0.01)
        _step(other, o2, a, xa, True)  # the previous overflow used one of the three units
        assert other.get_scale() == 16.0
        _step(other, o2, a, xa, True)
        assert other.get_scale() == 8.0
        _step(other, o2, a, xa, True)
        assert other.get_scale() == 4.0


def test_default_hysteresis_is_torch_rule():
    a, t, xa, xt = _pair()
    sa = ag.amp.GradScaler("cpu", init_scale=64.0, hysteresis=1, min_scale=None)
    o = ag.optim.SGD(a, lr=0.01)
    _step(sa, o, a, xa, True)
    assert sa.get_scale() == 32.0
    assert "hysteresis" not in sa.state_dict()


def test_per_loss_scales():
    """Two losses, each with its own scale: only the overflowing loss's scale backs off, the step is
    skipped when any overflowed, and otherwise the gradients equal those of loss0 + loss1 unscaled."""
    a, _, xa, _ = _pair(3)
    ref = [w.detach().clone().requires_grad_() for w in a]
    s = ag.amp.GradScaler("cpu", init_scale=2.0**10, growth_interval=2)
    o = ag.optim.SGD(a, lr=0.1)
    o_ref = ag.optim.SGD(ref, lr=0.1)
    l1_scale = ag.tensor(3.0)
    for step, bad in enumerate([False, True, False, False, False]):
        o.zero_grad()
        s.scale(_loss(ag, a, xa), loss_id=0).backward()
        s.unscale_(o, loss_id=0)
        s.scale(_loss(ag, a, xa * l1_scale), loss_id=1).backward()
        if bad:
            with ag.no_grad():
                a[1].grad[0, 0] = float("inf")
        s.unscale_(o, loss_id=1)
        s.step(o)
        s.update()
        if not bad:
            o_ref.zero_grad()
            (_loss(ag, ref, xa) + _loss(ag, ref, xa * l1_scale)).backward()
            o_ref.step()
        for p, q in zip(a, ref):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-6)
    st = s.stats()
    # loss 0: 5 clean steps at interval 2 -> grows twice; loss 1: clean, inf (backoff), 3 clean -> grows once
    assert st["loss_scales"][0] == 2.0**12
    assert st["loss_scales"][1] == 2.0**10
    assert st["skipped_steps"] == 1
    assert [v for _, v in st["loss_scale_history"][1]] == [2.0**10, 2.0**9, 2.0**9, 2.0**10, 2.0**10]
    sd = s.state_dict()
    assert sd["loss_scales"] == {1: (2.0**10, 1)}
    s2 = ag.amp.GradScaler("cpu")
    s2.load_state_dict(sd)
    assert s2.state_dict() == sd


def test_per_loss_errors():
    a, _, xa, _ = _pair()
    s = ag.amp.GradScaler("cpu")
    o = ag.optim.SGD(a, lr=0.1)
    s.scale(_loss(ag, a, xa), loss_id=0).backward()
    s.scale(_loss(ag, a, xa), loss_id=1).backward()
    with pytest.raises(RuntimeError, match="loss_id=0 was scaled but not unscaled"):
        s.step(o)
    with pytest.raises(ValueError, match="loss_id must be an int >= 0"):
        s.scale(_loss(ag, a, xa), loss_id=-1)
    with pytest.raises(RuntimeError, match="without scale\\(loss, loss_id=5\\)"):
        s.unscale_(o, loss_id=5)
    with pytest.raises(ValueError, match="hysteresis must be an int >= 1"):
        ag.amp.GradScaler("cpu", hysteresis=0)
    with pytest.raises(ValueError, match="min_scale must be > 0"):
        ag.amp.GradScaler("cpu", min_scale=0.0)
    with pytest.raises(ValueError, match="max_scale"):
        ag.amp.GradScaler("cpu", min_scale=4.0, max_scale=2.0)
    with pytest.raises(TypeError):
        torch.amp.GradScaler("cpu", hysteresis=2)  # torch has no such argument: ours is opt-in


@pytest.mark.parametrize("max_norm", [0.05, 1e3])
@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
@pytest.mark.parametrize("bad", [False, True])
def test_unscale_and_clip_matches_torch(max_norm, norm_type, bad):
    a, t, xa, xt = _pair(5)
    sa = ag.amp.GradScaler("cpu", init_scale=2.0**12)
    st = torch.amp.GradScaler("cpu", init_scale=2.0**12)
    oa, ot = ag.optim.SGD(a, lr=0.1), torch.optim.SGD(t, lr=0.1)
    sa.scale(_loss(ag, a, xa)).backward()
    st.scale(_loss(torch, t, xt)).backward()
    if bad:
        with ag.no_grad():
            a[1].grad[1, 2] = float("inf")
        with torch.no_grad():
            t[1].grad[1, 2] = float("inf")
    na = sa.unscale_and_clip_(oa, max_norm, norm_type=norm_type)
    st.unscale_(ot)
    nt = torch.nn.utils.clip_grad_norm_(t, max_norm, norm_type=norm_type)
    if bad:
        assert not np.isfinite(na.item()) and not np.isfinite(nt.item())
    else:
        np.testing.assert_allclose(na.item(), nt.item(), rtol=1e-5)
        for p, q in zip(a, t):
            # atol relative to the gradient's scale: an entry that cancels to ~1e-4 of its terms differs by the
            # last bits of the float32 terms (tanh, matmul summation order) between libraries and CPU modules
            g = q.grad.numpy()
            np.testing.assert_allclose(p.grad.numpy(), g, rtol=1e-5, atol=1e-6 * np.abs(g).max())
    w_before = [p.detach().clone() for p in a]
    sa.step(oa)
    st.step(ot)
    sa.update()
    st.update()
    assert sa.get_scale() == st.get_scale()
    for p, q, w in zip(a, t, w_before):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-7)
        if bad:
            assert ag.equal(p.detach(), w)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) is being called after step\\(\\)"):
        sa.scale(_loss(ag, a, xa)).backward()
        sa.step(oa)
        sa.unscale_and_clip_(oa, 1.0)


def test_unscale_and_clip_bf16_grads_and_disabled():
    from ampgrad.nn.utils.clip_grad import unscale_and_clip_grad_norm_
    rng = np.random.default_rng(0)
    g = rng.standard_normal((64, 33)).astype(np.float32) * 1000
    p = ag.zeros(64, 33, dtype=ag.bfloat16, requires_grad=True)
    p.grad = ag.tensor(g).bfloat16()
    q = torch.zeros(64, 33, dtype=torch.bfloat16, requires_grad=True)
    q.grad = torch.tensor(g).bfloat16()
    inv = ag.tensor(1 / 256.0)
    found = ag.zeros(())
    n = unscale_and_clip_grad_norm_([p], 1.0, inv_scale=inv, found_inf=found)
    q.grad.mul_(1 / 256.0)
    nt = torch.nn.utils.clip_grad_norm_([q], 1.0)
    # torch's bf16 norm is rounded to bf16; ours stays float32
    np.testing.assert_allclose(n.item(), nt.float().item(), rtol=1e-2)
    np.testing.assert_allclose(p.grad.float().numpy(), q.grad.float().numpy(), rtol=2e-2, atol=1e-4)
    assert found.item() == 0.0
    s = ag.amp.GradScaler("cpu", enabled=False)
    o = ag.optim.SGD([p], lr=0.1)
    assert s.unscale_and_clip_(o, 1e9).item() > 0
