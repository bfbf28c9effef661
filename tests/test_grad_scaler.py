"""GradScaler on CPU: the unscale/update ops, torch's state machine and errors, the scaled-vs-control
harness with injected infs, state_dict and pickling."""
import math
import pickle

import numpy as np
import pytest

import ampgrad as ag


class PlainSGD:
    """A third-party style optimizer (no grad_scale/found_inf support): exercises the fallback path."""

    def __init__(self, params, lr):
        self.param_groups = [{"params": list(params), "lr": lr}]
        self.steps = 0

    def step(self):
        self.steps += 1
        with ag.no_grad():
            for g in self.param_groups:
                for p in g["params"]:
                    if p.grad is not None:
                        p -= g["lr"] * p.grad

    def zero_grad(self):
        for g in self.param_groups:
            for p in g["params"]:
                p.grad = None


def test_unscale_op_finds_inf_and_scales():
    g1 = ag.tensor([2.0, 4.0])
    g2 = ag.tensor([8.0, float("inf")])
    found = ag.zeros(())
    ag._C._amp_foreach_non_finite_check_and_unscale_([g1], found, ag.tensor(0.5))
    assert found.item() == 0.0 and g1.tolist() == [1.0, 2.0]
    ag._C._amp_foreach_non_finite_check_and_unscale_([g1, g2], found, ag.tensor(0.5))
    assert found.item() == 1.0 and g1.tolist() == [0.5, 1.0] and g2.tolist()[0] == 4.0
    nan = ag.tensor([float("nan")])
    found2 = ag.zeros(())
    ag._C._amp_foreach_non_finite_check_and_unscale_([nan], found2, ag.tensor(1.0))
    assert found2.item() == 1.0


def test_unscale_op_keeps_float64_precision():
    """fp64 grads are unscaled in fp64 (torch's opmath), not through fp32."""
    g = ag.tensor([1.0 + 2.0**-40, 3.0], dtype=ag.float64)
    found = ag.zeros(())
    ag._C._amp_foreach_non_finite_check_and_unscale_([g], found, ag.tensor(0.5))
    assert g.tolist() == [(1.0 + 2.0**-40) / 2, 1.5] and found.item() == 0.0


def test_update_scale_op_rule():
    scale, tracker = ag.tensor(4.0), ag.tensor(0, dtype=ag.int32)
    clean, inf = ag.zeros(()), ag.ones(())
    ag._C._amp_update_scale_(scale, tracker, clean, 2.0, 0.5, 3)
    ag._C._amp_update_scale_(scale, tracker, clean, 2.0, 0.5, 3)
    assert scale.item() == 4.0 and tracker.item() == 2
    ag._C._amp_update_scale_(scale, tracker, clean, 2.0, 0.5, 3)
    assert scale.item() == 8.0 and tracker.item() == 0
    ag._C._amp_update_scale_(scale, tracker, inf, 2.0, 0.5, 3)
    assert scale.item() == 4.0 and tracker.item() == 0
    big = ag.tensor(3e38)
    t2 = ag.tensor(0, dtype=ag.int32)
    ag._C._amp_update_scale_(big, t2, clean, 2.0, 0.5, 1)
    assert big.item() == pytest.approx(3e38, rel=1e-6)  # growth to inf is refused


def _model(seed=0):
    rng = np.random.default_rng(seed)
    w = ag.tensor(rng.standard_normal((4, 3)).astype(np.float32), requires_grad=True)
    b = ag.tensor(rng.standard_normal(3).astype(np.float32), requires_grad=True)
    return [w, b]


def _loss(params, x):
    w, b = params
    return ((x @ w + b) ** 2).mean()


@pytest.mark.parametrize("inject", [[], [1], [1, 4], [0, 1, 2]])
def test_scaled_run_matches_unscaled_control(inject):
    """PyTorch's harness: infs injected at known iterations; the scaled run skips exactly those
    steps, ends with the control's parameters and a scale of init * growth^k * backoff^m."""
    init, growth, backoff, interval, iters = 2.0**10, 2.0, 0.5, 2, 7
    ctrl, scaled = _model(), _model()
    opt_c, opt_s = PlainSGD(ctrl, 0.1), PlainSGD(scaled, 0.1)
    scaler = ag.amp.GradScaler("cpu", init_scale=init, growth_factor=growth, backoff_factor=backoff,
                               growth_interval=interval)
    x = ag.tensor(np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32))
    for i in range(iters):
        opt_c.zero_grad()
        _loss(ctrl, x).backward()
        if i not in inject:
            opt_c.step()
        opt_s.zero_grad()
        scaler.scale(_loss(scaled, x)).backward()
        if i in inject:
            with ag.no_grad():
                scaled[0].grad[0, 0] = float("inf")
        scaler.step(opt_s)
        scaler.update()
    for a, b in zip(ctrl, scaled):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-7)
    # Expected scale by replaying the rule.
    s, t = init, 0
    for i in range(iters):
        if i in inject:
            s, t = s * backoff, 0
        else:
            t += 1
            if t == interval:
                s, t = s * growth, 0
    assert scaler.get_scale() == s
    assert opt_s.steps == iters - len(inject)


def test_unscale_then_clip_does_not_divide_twice():
    params = _model()
    opt = PlainSGD(params, 0.1)
    scaler = ag.amp.GradScaler("cpu", init_scale=8.0)
    x = ag.ones(2, 4)
    scaler.scale(_loss(params, x)).backward()
    scaler.unscale_(opt)
    g_after = params[0].grad.clone()
    ref = _model()
    _loss(ref, x).backward()
    np.testing.assert_allclose(g_after.numpy(), ref[0].grad.numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called on this optimizer since the last update\\(\\)."):
        scaler.unscale_(opt)
    scaler.step(opt)
    np.testing.assert_allclose(params[0].grad.numpy(), g_after.numpy())
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called since the last update\\(\\)."):
        scaler.step(opt)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) is being called after step\\(\\)."):
        scaler.unscale_(opt)
    scaler.update()


def test_two_optimizers_one_skips():
    m0, m1 = _model(0), _model(1)
    o0, o1 = PlainSGD(m0, 0.1), PlainSGD(m1, 0.1)
    scaler = ag.amp.GradScaler("cpu", init_scale=4.0)
    x = ag.ones(2, 4)
    loss0, loss1 = _loss(m0, x), _loss(m1, x)
    scaler.scale(loss0).backward(retain_graph=True)
    scaler.scale(loss1).backward()
    with ag.no_grad():
        m1[1].grad[0] = float("nan")
    before0 = m0[0].detach().clone()
    before1 = m1[0].detach().clone()
    scaler.step(o0)
    scaler.step(o1)
    scaler.update()
    assert not ag.equal(m0[0].detach(), before0)
    assert ag.equal(m1[0].detach(), before1)
    assert scaler.get_scale() == 2.0
    with pytest.raises(RuntimeError, match="retain_graph"):
        loss0.backward()
        loss0.backward()


def test_errors_and_disabled_behaviour():
    params = _model()
    opt = PlainSGD(params, 0.1)
    scaler = ag.amp.GradScaler("cpu")
    with pytest.raises(AssertionError, match="did not use scaler.scale"):
        scaler.step(opt)
    scaler.scale(_loss(params, ag.ones(1, 4))).backward()
    with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
        scaler.step(opt, closure=lambda: 0)
    half = [ag.ones(2, dtype=ag.float16, requires_grad=True)]
    (half[0].float().sum() * 2).backward()
    with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients."):
        scaler.unscale_(PlainSGD(half, 0.1))
    with pytest.raises(AssertionError, match="growth factor"):
        ag.amp.GradScaler("cpu", growth_factor=1.0)
    off = ag.amp.GradScaler("cpu", enabled=False)
    loss = _loss(params, ag.ones(1, 4))
    assert off.scale(loss) is loss and off.get_scale() == 1.0 and off.state_dict() == {}
    if not ag.cuda.is_available():
        with pytest.warns(UserWarning, match="CUDA is not available.  Disabling."):
            s = ag.amp.GradScaler()
        assert not s.is_enabled()
        with pytest.warns(FutureWarning):
            ag.cuda.amp.GradScaler()
    with pytest.raises(ValueError, match="outputs must be a Tensor"):
        ag.amp.GradScaler("cpu").scale([1.0])


def test_scale_nested_outputs_and_state_dict_roundtrip():
    scaler = ag.amp.GradScaler("cpu", init_scale=4.0, growth_interval=5)
    a, b = ag.ones(2), ag.ones(3)
    out = scaler.scale([a, (b, b)])
    assert out[0].tolist() == [4.0, 4.0] and isinstance(out[1], tuple) and out[1][1].tolist() == [4.0] * 3
    sd = scaler.state_dict()
    assert sd == {"scale": 4.0, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 5, "_growth_tracker": 0}
    other = ag.amp.GradScaler("cpu")
    other.load_state_dict(sd)
    assert other.get_scale() == 4.0 and other.get_growth_interval() == 5
    with pytest.raises(RuntimeError, match="source state dict is empty"):
        other.load_state_dict({})


def test_pickle_between_iterations():
    params = _model()
    opt = PlainSGD(params, 0.1)
    scaler = ag.amp.GradScaler("cpu", init_scale=16.0)
    scaler.scale(_loss(params, ag.ones(1, 4))).backward()
    scaler.unscale_(opt)
    with pytest.raises(AssertionError, match="pickled at the beginning of an iteration"):
        pickle.dumps(scaler)
    scaler.step(opt)
    scaler.update()
    s2 = pickle.loads(pickle.dumps(scaler))
    assert s2.get_scale() == scaler.get_scale()
    assert s2.state_dict() == scaler.state_dict()
