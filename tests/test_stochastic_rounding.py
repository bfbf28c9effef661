"""bf16 stochastic rounding in SGD / Adam / AdamW (issue 18 point 4): the rounding itself is
unbiased and exact on representable values, and pure-bf16 training with it reaches the loss of
fp32-master-weight training where round-to-nearest stalls (deterministic: seeded)."""
import numpy as np
import pytest

import ampgrad as ag
from ampgrad.optim._stochastic_rounding import stochastic_round_


def test_rounding_is_unbiased_and_brackets():
    ag.manual_seed(0)
    x = ag.full((200000,), 1.0 + 2.0**-9)  # a quarter of the way from 1 to the next bf16 (1 + 2^-7)
    out = ag.empty(200000, dtype=ag.bfloat16)
    stochastic_round_(out, x)
    v = out.float().numpy()
    assert set(np.unique(v)) == {1.0, 1.0 + 2.0**-7}
    # P(round up) = 1/4: 200000 draws, std of the fraction ~ 0.001
    assert abs((v > 1).mean() - 0.25) < 0.01
    assert abs(v.mean() - (1.0 + 2.0**-9)) < 2e-5
    neg = ag.empty(200000, dtype=ag.bfloat16)
    stochastic_round_(neg, -x)
    assert abs(neg.float().numpy().mean() + (1.0 + 2.0**-9)) < 2e-5


def test_representable_values_unchanged_and_specials():
    ag.manual_seed(1)
    x = ag.tensor([0.0, -0.0, 1.0, -3.5, 2.0**-130, 3.0e38, float("inf"), -float("inf")]).bfloat16().float()
    out = ag.empty(8, dtype=ag.bfloat16)
    for _ in range(20):
        stochastic_round_(out, x)
        np.testing.assert_array_equal(out.float().numpy(), x.numpy())
    nan = ag.empty(1, dtype=ag.bfloat16)
    stochastic_round_(nan, ag.tensor([float("nan")]))
    assert np.isnan(nan.float().item())
    with pytest.raises(TypeError, match="bfloat16 destination and a float32 source"):
        stochastic_round_(ag.empty(2), ag.empty(2))


def _problem(seed=0, n=64, d=16):
    rng = np.random.default_rng(seed)
    # weights in [1, 4): half a bf16 ulp there is 2^-8..2^-7, above every update below
    w_true = (2.0 + 0.4 * rng.standard_normal((d, 1))).clip(1.1, 3.9).astype(np.float32)
    x = rng.standard_normal((n, d)).astype(np.float32)
    y = x @ w_true
    w0 = (w_true + 0.3 * rng.choice([-1.0, 1.0], (d, 1))).astype(np.float32)
    return ag.tensor(x), ag.tensor(y), w0


def _train(kind, opt_name, steps, lr, seed=0):
    """kind: 'fp32' (fp32 weights: the master-weight reference), 'rtn' (pure bf16, round to nearest),
    'sr' (pure bf16, stochastic rounding). Forward in bf16 for the bf16 runs."""
    ag.manual_seed(seed)
    x, y, w0 = _problem()
    dtype = ag.float32 if kind == "fp32" else ag.bfloat16
    w = ag.tensor(w0).to(dtype).requires_grad_()
    kw = {"stochastic_rounding": True} if kind == "sr" else {}
    opt = {"sgd": lambda: ag.optim.SGD([w], lr=lr, momentum=0.9, **kw),
           "adam": lambda: ag.optim.Adam([w], lr=lr, **kw),
           "adamw": lambda: ag.optim.AdamW([w], lr=lr, weight_decay=0.0, **kw)}[opt_name]()
    xs, ys = x.to(dtype), y.to(dtype)
    for _ in range(steps):
        opt.zero_grad()
        loss = ((xs @ w).float() - ys.float()).pow(2).mean()
        loss.backward()
        opt.step()
    with ag.no_grad():
        return ((x @ w.float()) - y).pow(2).mean().item()


@pytest.mark.parametrize("opt_name,lr,steps", [("sgd", 2e-4, 600), ("adam", 1e-3, 600), ("adamw", 1e-3, 600)])
def test_pure_bf16_with_sr_reaches_fp32_master_loss(opt_name, lr, steps):
    """Updates are far below half a bf16 ulp of the weights (~0.008-0.016 at |w| in [1, 4]): with
    round-to-nearest they vanish and the loss stalls near its start; with stochastic rounding the loss
    reaches the fp32 run's within the stated tolerance: loss_sr <= 1.5 * loss_fp32 + 0.02 (bf16
    weights cannot resolve the optimum more finely than ~1e-2 anyway)."""
    start = _train("fp32", opt_name, 0, lr)
    fp32 = _train("fp32", opt_name, steps, lr)
    rtn = _train("rtn", opt_name, steps, lr)
    sr = _train("sr", opt_name, steps, lr)
    assert fp32 < 0.2 * start, (start, fp32)            # the problem is learnable at this lr
    assert rtn > 0.5 * start, (start, rtn)              # round-to-nearest stalls
    assert sr <= 1.5 * fp32 + 0.02, (start, fp32, sr)   # stochastic rounding keeps up


def test_sr_only_touches_bf16_params_and_state_is_fp32():
    ag.manual_seed(0)
    a = ag.randn(4, 4).bfloat16().requires_grad_()
    b = ag.randn(4).requires_grad_()
    b_ref = b.detach().clone().requires_grad_()
    opt = ag.optim.Adam([a, b], lr=0.1, stochastic_rounding=True)
    opt_ref = ag.optim.Adam([b_ref], lr=0.1)
    for _ in range(3):
        for o in (opt, opt_ref):
            o.zero_grad()
        ((a.float().sum() + b.sum()) ** 2).backward()
        (b_ref.sum() ** 2 + 2 * b_ref.sum() * a.detach().float().sum()).backward()
        opt.step()
        opt_ref.step()
    assert a.dtype == ag.bfloat16
    assert opt.state[a]["exp_avg"].dtype == ag.float32
    assert opt.state[b]["exp_avg"].dtype == ag.float32
    assert "stochastic_rounding" not in ag.optim.Adam([b], lr=0.1).param_groups[0]  # default: torch's keys
    assert opt.param_groups[0]["stochastic_rounding"] is True


def test_sr_step_skipped_by_found_inf():
    ag.manual_seed(0)
    w = ag.randn(8).bfloat16().requires_grad_()
    w0 = w.detach().clone()
    opt = ag.optim.SGD([w], lr=0.1, stochastic_rounding=True)
    w.grad = ag.ones(8, dtype=ag.bfloat16)
    opt.step(grad_scale=ag.tensor(1.0), found_inf=ag.tensor(1.0))
    assert ag.equal(w.detach(), w0)
    opt.step()
    assert not ag.equal(w.detach(), w0)
