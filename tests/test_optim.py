"""optim against torch: SGD/Adam/AdamW trajectories and state over several steps from identical
weights and data, the state_dict format and round trip, param groups, zero_grad, closures, the
grad_scale / found_inf arguments of the C++ steps, argument errors, and lr scheduler sequences."""
import warnings

import numpy as np
import pytest

import ampgrad
import ampgrad.nn as nn

torch = pytest.importorskip("torch")


def _model(L, dtype=None):
    L.manual_seed(1)
    m = L.nn.Sequential(L.nn.Linear(4, 8), L.nn.Tanh(), L.nn.Linear(8, 3))
    return m.to(dtype) if dtype is not None else m


def _data(steps=8, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((16, 4)).astype(np.float32), rng.integers(0, 3, 16)) for _ in range(steps)]


def _train(L, opt_name, kw, steps=8, dtype=None, groups=None):
    m = _model(L, dtype)
    params = m.parameters() if groups is None else groups(m)
    opt = getattr(L.optim, opt_name)(params, **kw)
    for x, y in _data(steps):
        x = L.tensor(x)
        if dtype is not None:
            x = x.to(dtype)
        opt.zero_grad()
        loss = L.nn.functional.cross_entropy(m(x), L.tensor(y))
        loss.backward()
        opt.step()
    return m, opt


CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.5, maximize=True)),
    ("Adam", dict()),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.95), eps=1e-6)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
    ("Adam", dict(lr=0.01, maximize=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.05, decoupled_weight_decay=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.3, amsgrad=True, maximize=True)),
]


@pytest.mark.parametrize("name,kw", CONFIGS, ids=[f"{c[0]}-{i}" for i, c in enumerate(CONFIGS)])
def test_trajectory_matches_torch(name, kw):
    ma, oa = _train(ampgrad, name, kw)
    mt, ot = _train(torch, name, kw)
    for (n, pa), (_, pt) in zip(ma.named_parameters(), mt.named_parameters()):
        np.testing.assert_allclose(pa.detach().numpy(), pt.detach().numpy(), rtol=1e-5, atol=1e-7, err_msg=n)
    sa, st = oa.state_dict(), ot.state_dict()
    assert sa["param_groups"] == st["param_groups"]
    assert sa["state"].keys() == st["state"].keys()
    for i in st["state"]:
        assert sa["state"][i].keys() == st["state"][i].keys()
        for k, vt in st["state"][i].items():
            va = sa["state"][i][k]
            assert va.dtype == getattr(ampgrad, str(vt.dtype).split(".")[-1]) and va.shape == vt.shape
            np.testing.assert_allclose(va.numpy(), vt.numpy(), rtol=1e-5, atol=1e-7, err_msg=f"{i}.{k}")


def test_float64_and_param_groups():
    def groups(m):
        return [{"params": m[0].parameters(), "lr": 0.02}, {"params": m[2].parameters(), "momentum": 0.5}]
    ma, oa = _train(ampgrad, "SGD", dict(lr=0.1, momentum=0.9), dtype=ampgrad.float64, groups=groups)
    mt, ot = _train(torch, "SGD", dict(lr=0.1, momentum=0.9), dtype=torch.float64, groups=groups)
    for pa, pt in zip(ma.parameters(), mt.parameters()):
        assert pa.dtype == ampgrad.float64
        np.testing.assert_allclose(pa.detach().numpy(), pt.detach().numpy(), rtol=1e-12)
    assert oa.state_dict()["param_groups"] == ot.state_dict()["param_groups"]
    assert repr(oa) == repr(ot)


def test_state_dict_round_trip_resumes_identically():
    data = _data(6)

    def run(L, split):
        m = _model(L)
        opt = L.optim.Adam(m.parameters(), lr=0.01, amsgrad=True)
        for i, (x, y) in enumerate(data):
            if i == split:
                sd = {k: v for k, v in opt.state_dict().items()}
                opt = L.optim.Adam(m.parameters(), lr=0.5)  # fresh optimizer, other hyper-parameters
                opt.load_state_dict(sd)
            opt.zero_grad()
            L.nn.functional.cross_entropy(m(L.tensor(x)), L.tensor(y)).backward()
            opt.step()
        return m, opt

    m1, o1 = run(ampgrad, None)
    m2, o2 = run(ampgrad, 3)
    for a, b in zip(m1.parameters(), m2.parameters()):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    assert o2.param_groups[0]["lr"] == 0.01
    assert o2.state_dict()["param_groups"] == o1.state_dict()["param_groups"]
    assert float(o2.state_dict()["state"][0]["step"]) == 6.0
    with pytest.raises(ValueError, match="different number of parameter groups"):
        o2.load_state_dict({"state": {}, "param_groups": []})
    bad = o1.state_dict()
    bad["param_groups"][0]["params"] = bad["param_groups"][0]["params"][:1]
    with pytest.raises(ValueError, match="doesn't match the size"):
        o2.load_state_dict(bad)


def test_zero_grad_closure_and_add_param_group():
    w = nn.Parameter(ampgrad.tensor([1.0, 2.0]))
    opt = ampgrad.optim.SGD([w], lr=0.5)
    calls = []

    def closure():
        calls.append(1)
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert calls == [1] and float(loss) == 5.0
    np.testing.assert_allclose(w.detach().numpy(), [0.0, 0.0])
    opt.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(w.grad.numpy(), [0.0, 0.0])
    opt.zero_grad()
    assert w.grad is None
    opt.step()  # no grads: nothing happens
    v = nn.Parameter(ampgrad.ones(1))
    opt.add_param_group({"params": v, "lr": 0.1})
    assert opt.param_groups[1]["lr"] == 0.1 and opt.param_groups[1]["momentum"] == 0
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [w]})
    with pytest.raises(TypeError):
        opt.add_param_group({"params": {w}})
    named = ampgrad.optim.Adam(nn.Linear(2, 2).named_parameters())
    assert named.param_groups[0]["param_names"] == ["weight", "bias"]
    assert named.state_dict()["param_groups"][0]["param_names"] == ["weight", "bias"]


def test_step_hooks():
    w = nn.Parameter(ampgrad.ones(1))
    opt = ampgrad.optim.SGD([w], lr=1.0)
    seen = []
    h1 = opt.register_step_pre_hook(lambda o, a, k: seen.append("pre"))
    opt.register_step_post_hook(lambda o, a, k: seen.append("post"))
    w.grad = ampgrad.ones(1)
    opt.step()
    h1.remove()
    opt.step()
    assert seen == ["pre", "post", "post"]


# ---------------------------------------------------------------- AMP arguments
@pytest.mark.parametrize("name,kw", [("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict(lr=0.01)),
                                     ("AdamW", dict(lr=0.01, amsgrad=True))])
def test_grad_scale_and_found_inf(name, kw):
    assert getattr(ampgrad.optim, name)._step_supports_amp_scaling
    ref, _ = _train(ampgrad, name, kw, steps=3)
    m = _model(ampgrad)
    opt = getattr(ampgrad.optim, name)(m.parameters(), **kw)
    scale = ampgrad.tensor([1024.0])
    for i, (x, y) in enumerate(_data(3)):
        opt.zero_grad()
        loss = ampgrad.nn.functional.cross_entropy(m(ampgrad.tensor(x)), ampgrad.tensor(y))
        (loss * 1024.0).backward()
        scaled = [p.grad.clone() for p in m.parameters()]
        before = [p.detach().clone() for p in m.parameters()]
        # a step with found_inf set changes nothing: params, state, step counts, grads
        state_before = {(j, k): v.clone() for j, s in enumerate(opt.state.values()) for k, v in s.items()}
        opt.step(grad_scale=scale, found_inf=ampgrad.tensor([1.0]))
        for p, b, g in zip(m.parameters(), before, scaled):
            np.testing.assert_array_equal(p.detach().numpy(), b.numpy())
            np.testing.assert_array_equal(p.grad.numpy(), g.numpy())
        after = {(j, k): v for j, s in enumerate(opt.state.values()) for k, v in s.items()}
        for k in state_before:
            np.testing.assert_array_equal(after[k].numpy(), state_before[k].numpy())
        opt.step(grad_scale=scale, found_inf=ampgrad.tensor([0.0]))
        for p, g in zip(m.parameters(), scaled):  # unscaled grads written back
            np.testing.assert_allclose(p.grad.numpy(), g.numpy() / 1024.0, rtol=1e-6)
    for pa, pr in zip(m.parameters(), ref.parameters()):
        np.testing.assert_allclose(pa.detach().numpy(), pr.detach().numpy(), rtol=1e-5, atol=1e-7)
    # the attribute convention of torch's GradScaler works too
    opt.grad_scale, opt.found_inf = None, ampgrad.tensor([1.0])
    before = [p.detach().clone() for p in m.parameters()]
    opt.step()
    for p, b in zip(m.parameters(), before):
        np.testing.assert_array_equal(p.detach().numpy(), b.numpy())


def test_c_steps_reject_bad_arguments():
    p = nn.Parameter(ampgrad.ones(3))
    with pytest.raises(RuntimeError, match="shape"):
        ampgrad._C._sgd_step([p], [ampgrad.ones(2)], None, 0.1, 0.0, 0.0, False, 0.0, False)
    with pytest.raises(RuntimeError, match="dtype"):
        ampgrad._C._sgd_step([p], [ampgrad.ones(3, dtype=ampgrad.float64)], None, 0.1, 0.0, 0.0, False, 0.0, False)
    with pytest.raises(RuntimeError, match="1-element float32"):
        ampgrad._C._sgd_step([p], [ampgrad.ones(3)], None, 0.1, 0.0, 0.0, False, 0.0, False, None, ampgrad.ones(2))
    with pytest.raises(RuntimeError, match="equal length"):
        ampgrad._C._adam_step([p], [], [], [], None, [], 0.1, 0.9, 0.99, 1e-8, 0.0, False, False, False)
    z = ampgrad.zeros(3)
    for bad_step in (ampgrad.zeros(2), ampgrad.zeros((), dtype=ampgrad.float64)):
        with pytest.raises(RuntimeError, match="state step must be a 1-element float32"):
            ampgrad._C._adam_step([p], [z], [z], [z], None, [bad_step], 0.1, 0.9, 0.99, 1e-8, 0.0, False, False, False)
    with pytest.raises(TypeError):
        ampgrad._C._sgd_step([ampgrad.ones(3, dtype=ampgrad.int64)], [ampgrad.ones(3, dtype=ampgrad.int64)], None, 0.1, 0.0,
                             0.0, False, 0.0, False)


def test_non_contiguous_params_and_versions():
    base = ampgrad.randn(4, 3)
    w = nn.Parameter(base.t())  # a transposed (non-contiguous) parameter
    wt = torch.nn.Parameter(torch.tensor(base.numpy()).t())
    g = np.random.default_rng(3).standard_normal((3, 4)).astype(np.float32)
    w.grad, wt.grad = ampgrad.tensor(g), torch.tensor(g)
    oa, ot = ampgrad.optim.Adam([w], lr=0.1), torch.optim.Adam([wt], lr=0.1)
    v0 = w._version
    for _ in range(3):
        oa.step()
        ot.step()
    np.testing.assert_allclose(w.detach().numpy(), wt.detach().numpy(), rtol=1e-6)
    assert w._version > v0  # in-place updates bump the version counter


def test_optimizer_errors_match_torch():
    cases = [
        lambda L, ps: L.optim.SGD(ps, lr=-0.1),
        lambda L, ps: L.optim.SGD(ps, lr=0.1, momentum=-1),
        lambda L, ps: L.optim.SGD(ps, lr=0.1, weight_decay=-1),
        lambda L, ps: L.optim.SGD(ps, lr=0.1, nesterov=True),
        lambda L, ps: L.optim.SGD([], lr=0.1),
        lambda L, ps: L.optim.SGD(L.ones(2), lr=0.1),
        lambda L, ps: L.optim.SGD([L.ones(2, requires_grad=True) * 2], lr=0.1),
        lambda L, ps: L.optim.SGD([1.0], lr=0.1),
        lambda L, ps: L.optim.Adam(ps, lr=-1),
        lambda L, ps: L.optim.Adam(ps, eps=-1),
        lambda L, ps: L.optim.Adam(ps, betas=(1.0, 0.9)),
        lambda L, ps: L.optim.Adam(ps, betas=(0.9, -0.1)),
        lambda L, ps: L.optim.AdamW(ps, weight_decay=-1),
        lambda L, ps: L.optim.SGD(ps, lr=0.1).add_param_group([1]),
        lambda L, ps: L.optim.lr_scheduler.StepLR(object(), 2),
        lambda L, ps: L.optim.lr_scheduler.StepLR(L.optim.SGD(ps, lr=0.1), 2, last_epoch=3),
        lambda L, ps: L.optim.lr_scheduler.LambdaLR(L.optim.SGD(ps, lr=0.1), [lambda e: 1, lambda e: 2]),
    ]
    for i, case in enumerate(cases):
        with pytest.raises(Exception) as te:
            case(torch, list(torch.nn.Linear(2, 2).parameters()))
        with pytest.raises(Exception) as ae:
            case(ampgrad, list(nn.Linear(2, 2).parameters()))
        assert type(ae.value) is type(te.value), f"case {i}: torch {te.value!r}, ampgrad {ae.value!r}"


# ---------------------------------------------------------------- lr schedulers
SCHEDULERS = [
    ("StepLR", lambda S, o: S.StepLR(o, step_size=3, gamma=0.5)),
    ("MultiStepLR", lambda S, o: S.MultiStepLR(o, milestones=[2, 5, 5, 9], gamma=0.3)),
    ("ExponentialLR", lambda S, o: S.ExponentialLR(o, gamma=0.9)),
    ("LambdaLR", lambda S, o: S.LambdaLR(o, lambda e: 1.0 / (e + 1))),
    ("LambdaLR-list", lambda S, o: S.LambdaLR(o, [lambda e: 0.95 ** e, lambda e: 1 + e])),
    ("MultiplicativeLR", lambda S, o: S.MultiplicativeLR(o, lambda e: 0.9)),
    ("CosineAnnealingLR", lambda S, o: S.CosineAnnealingLR(o, T_max=5, eta_min=0.01)),
    ("LinearLR", lambda S, o: S.LinearLR(o, start_factor=0.2, total_iters=4)),
    ("ConstantLR", lambda S, o: S.ConstantLR(o, factor=0.5, total_iters=3)),
]


def _opt_for_sched(L):
    m = L.nn.Linear(2, 2)
    return L.optim.SGD([{"params": [m.weight]}, {"params": [m.bias], "lr": 0.5}], lr=0.1, momentum=0.9)


@pytest.mark.parametrize("name,make", SCHEDULERS, ids=[s[0] for s in SCHEDULERS])
def test_scheduler_sequence_matches_torch(name, make):
    seqs = {}
    for L in (torch, ampgrad):
        opt = _opt_for_sched(L)
        sched = make(L.optim.lr_scheduler, opt)
        seq = [sched.get_last_lr()]
        for _ in range(20):
            opt.step()
            sched.step()
            seq.append(sched.get_last_lr())
            assert [g["lr"] for g in opt.param_groups] == seq[-1]
        seqs[L.__name__] = (seq, sched.state_dict())
    np.testing.assert_allclose(np.array(seqs["ampgrad"][0]), np.array(seqs["torch"][0]), rtol=1e-12, atol=1e-15)
    sa, st = seqs["ampgrad"][1], seqs["torch"][1]
    assert sa.keys() == st.keys()
    assert sa["last_epoch"] == st["last_epoch"] and sa["_step_count"] == st["_step_count"]


def test_scheduler_state_dict_resume_and_closed_form():
    opt = _opt_for_sched(ampgrad)
    sched = ampgrad.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=6)
    for _ in range(4):
        opt.step()
        sched.step()
    sd = sched.state_dict()
    opt2 = _opt_for_sched(ampgrad)
    opt2.load_state_dict(opt.state_dict())
    sched2 = ampgrad.optim.lr_scheduler.CosineAnnealingLR(opt2, T_max=6, last_epoch=3)
    sched2.load_state_dict(sd)
    for _ in range(3):
        opt.step(), sched.step()
        opt2.step(), sched2.step()
        assert sched.get_last_lr() == sched2.get_last_lr()
    topt = _opt_for_sched(torch)
    tsched = torch.optim.lr_scheduler.StepLR(topt, 2)
    asched = ampgrad.optim.lr_scheduler.StepLR(_opt_for_sched(ampgrad), 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        topt.step()
        asched.optimizer.step()
        tsched.step(5)
        asched.step(5)
    assert asched.get_last_lr() == tsched.get_last_lr()


def test_scheduler_warns_when_stepped_before_optimizer():
    opt = _opt_for_sched(ampgrad)
    sched = ampgrad.optim.lr_scheduler.StepLR(opt, 2)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        sched.step()
    with pytest.warns(UserWarning, match="get_last_lr"):
        sched.get_lr()
