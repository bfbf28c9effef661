"""The AMP example patterns (torch's AMP examples page) as tests, on CPU: autocast bf16 with ampgrad's
nn/optim and GradScaler("cpu"), each checked against an fp32 reference run."""
import copy
import math

import numpy as np
import pytest

import ampgrad as torch
from ampgrad import nn


def _data(n=4, batch=8, seed=0):
    rng = np.random.default_rng(seed)
    return [(torch.tensor(rng.standard_normal((batch, 16)).astype(np.float32)),
             torch.tensor(rng.integers(0, 4, batch))) for _ in range(n)]


def _model(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))


def _params(m):
    return [p.detach().clone() for p in m.parameters()]


def test_typical_loop_dtypes_and_skip_on_inf():
    model = _model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**8, growth_interval=3)
    loss_fn = nn.CrossEntropyLoss()
    for i, (x, y) in enumerate(_data(6)):
        opt.zero_grad()
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
            out = model(x)
            loss = loss_fn(out, y)
        assert out.dtype == torch.bfloat16        # last layer is linear: lower precision
        assert loss.dtype == torch.float32        # cross_entropy is in the fp32 list
        scaler.scale(loss).backward()
        for p in model.parameters():
            assert p.dtype == torch.float32 and p.grad.dtype == torch.float32
        before = _params(model)
        scale_before = scaler.get_scale()
        if i == 4:
            with torch.no_grad():
                model[0].weight.grad[0, 0] = float("inf")
        scaler.step(opt)
        scaler.update()
        if i == 4:
            assert all(torch.equal(a, b) for a, b in zip(before, _params(model)))
            assert scaler.get_scale() == scale_before * 0.5
    assert scaler.get_scale() == 2.0**8 * 2 * 0.5  # grew after 3 clean steps, backed off once


def test_clipping_after_unscale_matches_fp32_reference_grads():
    model = _model()
    ref = copy.deepcopy(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**10)
    x, y = _data(1)[0]
    loss_fn = nn.CrossEntropyLoss()
    scaler.scale(loss_fn(model(x), y)).backward()
    scaler.unscale_(opt)
    loss_fn(ref(x), y).backward()
    for p, q in zip(model.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-7)
    total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.1)
    assert total.item() > 0
    scaler.step(opt)
    scaler.update()


def test_gradient_accumulation_matches_mean_loss_reference():
    iters = 3
    model = _model()
    ref = copy.deepcopy(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**8)
    loss_fn = nn.CrossEntropyLoss()
    data = _data(iters)
    for i, (x, y) in enumerate(data):
        loss = loss_fn(model(x), y) / iters
        scaler.scale(loss).backward()
        assert scaler.get_scale() == 2.0**8  # unchanged between updates
        if (i + 1) % iters == 0:
            scaler.unscale_(opt)
            grads = [p.grad.clone() for p in model.parameters()]
            scaler.step(opt)
            scaler.update()
            opt.zero_grad()
    total = sum(loss_fn(ref(x), y) for x, y in data) / iters
    total.backward()
    for g, q in zip(grads, ref.parameters()):
        np.testing.assert_allclose(g.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_gradient_penalty_scaled_matches_plain():
    loss_fn = nn.CrossEntropyLoss()
    x, y = _data(1)[0]

    def run(scaled):
        model = _model()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        params = list(model.parameters())
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        if not scaled:
            grads = torch.autograd.grad(loss, params, create_graph=True)
            loss = loss + torch.sqrt(sum(g.pow(2).sum() for g in grads))
            loss.backward()
            opt.step()
        else:
            scaler = torch.amp.GradScaler("cpu", init_scale=2.0**8)
            scaled_grads = torch.autograd.grad(scaler.scale(loss), params, create_graph=True)
            inv = 1.0 / scaler.get_scale()
            grads = [g * inv for g in scaled_grads]
            loss = loss + torch.sqrt(sum(g.pow(2).sum() for g in grads))
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        return _params(model)

    for a, b in zip(run(False), run(True)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


def test_cpu_bf16_training_and_inference():
    model = _model()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    loss_fn = nn.CrossEntropyLoss()
    first = last = None
    data = _data(4)
    for epoch in range(15):
        for x, y in data:
            opt.zero_grad()
            with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
                out = model(x)
                loss = loss_fn(out, y)
            assert out.dtype == torch.bfloat16
            loss.backward()
            opt.step()
            first = loss.item() if first is None else first
            last = loss.item()
    assert last < first * 0.5
    assert all(p.dtype == torch.float32 for p in model.parameters())
    model.eval()
    with torch.no_grad(), torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        out = model(data[0][0])
    assert out.dtype == torch.bfloat16 and not out.requires_grad


def test_nested_disabled_region_and_mixed_dtype_mm_error():
    a, b = torch.rand(8, 8), torch.rand(8, 8)
    with torch.autocast(device_type="cpu"):
        e = torch.mm(a, b)
        with torch.autocast(device_type="cpu", enabled=False):
            f = torch.mm(a, e.float())
        g = torch.mm(b, f)
    assert (e.dtype, f.dtype, g.dtype) == (torch.bfloat16, torch.float32, torch.bfloat16)
    with pytest.raises(RuntimeError, match="same dtype"):
        torch.mm(a, e)


def test_fused_optimizer_step_needs_no_host_sync_and_skips_on_device():
    """ampgrad's optimizers take grad_scale/found_inf: GradScaler.step hands them over and the
    update (or the skip) happens in the C++ step, with no .item() on found_inf."""
    model = _model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    assert getattr(opt, "_step_supports_amp_scaling", False)
    scaler = torch.amp.GradScaler("cpu", init_scale=4.0)
    calls = {"n": 0}
    orig = scaler._maybe_opt_step

    def spy(*a, **k):  # the sync path must not be taken
        calls["n"] += 1
        return orig(*a, **k)

    scaler._maybe_opt_step = spy
    x, y = _data(1)[0]
    scaler.scale(nn.CrossEntropyLoss()(model(x), y)).backward()
    with torch.no_grad():
        model[2].bias.grad[0] = float("nan")
    before = _params(model)
    scaler.step(opt)
    scaler.update()
    assert calls["n"] == 0
    assert all(torch.equal(a, b) for a, b in zip(before, _params(model)))
    assert scaler.get_scale() == 2.0
