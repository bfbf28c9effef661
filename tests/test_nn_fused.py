"""The fused nn ops (ops/attention.cpp, ops/nn_misc.cpp) beyond the op database: backward node names
as torch's, bf16 accuracy against float64 compared with torch's own error, dropout's masks
(distribution, scaling, reproducibility under manual_seed), embedding's backward rules, errors."""
import math

import numpy as np
import pytest

import ampgrad

torch = pytest.importorskip("torch")


def both(arr, dtype="float32", grad=True):
    a = ampgrad.tensor(arr).to(getattr(ampgrad, dtype))
    t = torch.tensor(arr).to(getattr(torch, dtype))
    if grad:
        a.requires_grad_(True)
        t.requires_grad_(True)
    return a, t


def np_of(x):
    if isinstance(x, torch.Tensor):
        return x.detach().double().numpy()
    return x.detach().to(ampgrad.float64).numpy()


# ---------------------------------------------------------------- attention
@pytest.mark.parametrize("kw,shapes", [
    ({"is_causal": True}, ((2, 3, 8, 4),) * 3),
    ({}, ((2, 3, 8, 4),) * 3),
    ({"enable_gqa": True}, ((1, 4, 5, 4), (1, 2, 6, 4), (1, 2, 6, 4))),
])
def test_sdpa_node_name(kw, shapes):
    rng = np.random.RandomState(0)
    args = [both(rng.randn(*s).astype(np.float32)) for s in shapes]
    ya = ampgrad.nn.functional.scaled_dot_product_attention(*[a for a, _ in args], **kw)
    yt = torch.nn.functional.scaled_dot_product_attention(*[t for _, t in args], **kw)
    assert ya.grad_fn.name() == yt.grad_fn.name()
    np.testing.assert_allclose(np_of(ya), np_of(yt), rtol=1e-5, atol=1e-5)


def _sdpa_ref64(q, k, v, causal):
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    return s


@pytest.mark.parametrize("causal", [True, False])
def test_sdpa_bf16_error_vs_torch(causal):
    """bf16 forward and gradients against a float64 reference: ampgrad's error is no worse than torch's."""
    rng = np.random.RandomState(1)
    B, H, L, E = 2, 2, 128, 64
    arrs = [rng.randn(B, H, L, E).astype(np.float32) for _ in range(3)]
    gout = rng.randn(B, H, L, E).astype(np.float32)
    results = {}
    for lib in ("ag", "torch", "ref"):
        m = ampgrad if lib == "ag" else torch
        dt = m.float64 if lib == "ref" else m.bfloat16
        xs = [m.tensor(a).to(dt).requires_grad_(True) for a in arrs]
        if lib == "ref":  # the bf16-rounded inputs in float64, through torch's math path
            xs = [m.tensor(a).to(torch.bfloat16).to(torch.float64).requires_grad_(True) for a in arrs]
        y = m.nn.functional.scaled_dot_product_attention(*xs, is_causal=causal)
        g = m.tensor(gout).to(y.dtype)
        y.backward(g)
        results[lib] = [np_of(y)] + [np_of(x.grad) for x in xs]
    for i, name in enumerate(["out", "dq", "dk", "dv"]):
        ref = results["ref"][i]
        scale = np.abs(ref).max()
        e_ag = np.abs(results["ag"][i] - ref).max() / scale
        e_t = np.abs(results["torch"][i] - ref).max() / scale
        assert e_ag <= 1.25 * e_t + 1e-3, f"{name}: ampgrad error {e_ag:.4g} vs torch {e_t:.4g}"


def test_sdpa_double_backward_matches_composed():
    """torch's fused CPU backward has no derivative; ampgrad's records differentiable ops under
    create_graph: its double backward equals the one of the math composition."""
    rng = np.random.RandomState(2)
    q, k, v = (rng.randn(1, 2, 5, 3) for _ in range(3))
    outs = []
    for fused in (True, False):
        xs = [ampgrad.tensor(a).requires_grad_(True) for a in (q, k, v)]
        if fused:
            y = ampgrad.nn.functional.scaled_dot_product_attention(*xs, is_causal=True)
        else:  # torch's math reference, 3-d (ampgrad composes it)
            y = ampgrad.nn.functional.scaled_dot_product_attention(*[x.reshape(2, 5, 3) for x in xs], is_causal=True)
            y = y.reshape(1, 2, 5, 3)
        gs = ampgrad.autograd.grad((y * y).sum(), xs, create_graph=True)
        outs.append([np_of(g) for g in ampgrad.autograd.grad(sum((g * g).sum() for g in gs), xs)])
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


def test_sdpa_errors():
    q = ampgrad.randn(1, 1, 3, 4)
    with pytest.raises(RuntimeError, match="Expected query, key, and value to have the same dtype, but got query.dtype: float "
                                           "key.dtype: double and value.dtype: float instead."):
        ampgrad.nn.functional.scaled_dot_product_attention(q, q.double(), q)
    with pytest.raises(RuntimeError, match="Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                                           "attn_mask.dtype: long int and  query.dtype: float instead."):
        ampgrad.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=ampgrad.ones(3, 3, dtype=ampgrad.int64))


def test_sdpa_fully_masked_rows_are_zero():
    rng = np.random.RandomState(3)
    a, t = both(rng.randn(1, 1, 3, 4).astype(np.float32))
    mask = np.array([[False, False, False], [True, False, False], [True, True, True]])
    ya = ampgrad.nn.functional.scaled_dot_product_attention(a, a, a, attn_mask=ampgrad.tensor(mask))
    yt = torch.nn.functional.scaled_dot_product_attention(t, t, t, attn_mask=torch.tensor(mask))
    np.testing.assert_allclose(np_of(ya), np_of(yt), rtol=1e-5, atol=1e-6)
    ya.sum().backward()
    yt.sum().backward()
    np.testing.assert_allclose(np_of(a.grad), np_of(t.grad), rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- dropout
def test_dropout_mask_scale_and_grad():
    x = ampgrad.ones(1 << 16, requires_grad=True)
    y = ampgrad.nn.functional.dropout(x, 0.25)
    assert y.grad_fn.name() == torch.nn.functional.dropout(torch.ones(3, requires_grad=True), 0.25).grad_fn.name()
    v = np_of(y)
    kept = v != 0
    assert abs(kept.mean() - 0.75) < 0.01
    np.testing.assert_allclose(v[kept], 1 / 0.75, rtol=1e-6)
    y.sum().backward()
    np.testing.assert_array_equal(np_of(x.grad), v)


def test_dropout_reproducible_under_manual_seed():
    x = ampgrad.randn(1000)
    ampgrad.manual_seed(7)
    a = np_of(ampgrad.nn.functional.dropout(x, 0.5))
    b = np_of(ampgrad.nn.functional.dropout(x, 0.5))
    ampgrad.manual_seed(7)
    c = np_of(ampgrad.nn.functional.dropout(x, 0.5))
    np.testing.assert_array_equal(a, c)
    assert not np.array_equal(a, b)


def test_dropout_bf16_mask_rounds_scale_as_torch():
    x = ampgrad.ones(4096, dtype=ampgrad.bfloat16)
    v = np_of(ampgrad.nn.functional.dropout(x, 0.3))
    t = np_of(torch.nn.functional.dropout(torch.ones(4096, dtype=torch.bfloat16), 0.3))
    assert set(np.unique(v)) == set(np.unique(t))


def test_dropout_edges_and_errors():
    x = ampgrad.randn(5, requires_grad=True)
    F = ampgrad.nn.functional
    assert F.dropout(x, 0.3, training=False) is x
    assert F.dropout(x, 0.0) is x
    y = F.dropout(x, 1.0)
    assert np.all(np_of(y) == 0) and y.requires_grad
    for p, exc in ((-0.1, ValueError), (1.1, ValueError), (float("nan"), RuntimeError)):
        with pytest.raises(exc, match="dropout probability has to be between 0 and 1, but got"):
            F.dropout(x, p)


def test_dropout2d_drops_whole_channels():
    x = ampgrad.ones(4, 8, 5, 5)
    y = np_of(ampgrad.nn.functional.dropout2d(x, 0.5))
    per_channel = y.reshape(4, 8, -1)
    assert np.all((per_channel == 0).all(-1) | (per_channel == 2).all(-1))


# ---------------------------------------------------------------- embedding
def test_embedding_backward_rules():
    rng = np.random.RandomState(4)
    w = rng.randn(50, 7).astype(np.float32)
    idx = rng.randint(0, 50, size=(6, 40))
    g = rng.randn(6, 40, 7).astype(np.float32)
    for kw in ({}, {"padding_idx": 3}, {"scale_grad_by_freq": True}, {"padding_idx": -2, "scale_grad_by_freq": True}):
        wa, wt = both(w)
        ya = ampgrad.nn.functional.embedding(ampgrad.tensor(idx), wa, **kw)
        yt = torch.nn.functional.embedding(torch.tensor(idx), wt, **kw)
        assert ya.grad_fn.name() == yt.grad_fn.name()
        ya.backward(ampgrad.tensor(g))
        yt.backward(torch.tensor(g))
        np.testing.assert_allclose(np_of(wa.grad), np_of(wt.grad), rtol=1e-5, atol=1e-5, err_msg=str(kw))


def test_embedding_bf16_backward_accumulates_in_fp32():
    idx = np.zeros(4096, dtype=np.int64)  # one row summed 4096 times: bf16 accumulation would stall at 256
    w = ampgrad.zeros(3, 2, dtype=ampgrad.bfloat16, requires_grad=True)
    ampgrad.nn.functional.embedding(ampgrad.tensor(idx), w).sum().backward()
    assert np_of(w.grad)[0, 0] == 4096


def test_embedding_errors():
    w = ampgrad.randn(4, 3)
    with pytest.raises(IndexError, match="index out of range in self"):
        ampgrad.nn.functional.embedding(ampgrad.tensor([4]), w)
    with pytest.raises(IndexError, match="index out of range in self"):
        ampgrad.nn.functional.embedding(ampgrad.tensor([-1]), w)


def test_embedding_max_norm_renorms_in_place():
    rng = np.random.RandomState(5)
    w = rng.randn(6, 4).astype(np.float32) * 3
    wa, wt = both(w, grad=False)
    idx = [1, 3, 3]
    ya = ampgrad.nn.functional.embedding(ampgrad.tensor(idx), wa, max_norm=1.0)
    yt = torch.nn.functional.embedding(torch.tensor(idx), wt, max_norm=1.0)
    np.testing.assert_allclose(np_of(wa), np_of(wt), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np_of(ya), np_of(yt), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- losses
@pytest.mark.parametrize("name,kw", [("mse_loss", {}), ("smooth_l1_loss", {"beta": 0.5}), ("huber_loss", {"delta": 0.7}),
                                     ("binary_cross_entropy", {}), ("binary_cross_entropy_with_logits", {})])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_loss_node_names_and_bf16_error(name, kw, reduction):
    rng = np.random.RandomState(6)
    n = 1 << 14
    x = rng.uniform(0.02, 0.98, n) if name == "binary_cross_entropy" else rng.randn(n) * 2
    t = rng.uniform(0, 1, n)
    res = {}
    for lib, dt in (("ag", "bfloat16"), ("torch", "bfloat16"), ("ref", "float64")):
        m = ampgrad if lib == "ag" else torch
        xx = m.tensor(x).to(m.bfloat16).to(getattr(m, dt)).requires_grad_(True)
        tt = m.tensor(t).to(m.bfloat16).to(getattr(m, dt))
        y = getattr(m.nn.functional, name)(xx, tt, reduction=reduction, **kw)
        if lib != "ref":
            res.setdefault("names", []).append(y.grad_fn.name())
        y.sum().backward()
        res[lib] = (np_of(y), np_of(xx.grad))
    assert res["names"][0] == res["names"][1]
    for i in range(2):
        ref = res["ref"][i]
        scale = np.abs(ref).max() + 1e-30
        e_ag = np.abs(res["ag"][i] - ref).max() / scale
        e_t = np.abs(res["torch"][i] - ref).max() / scale
        assert e_ag <= 1.25 * e_t + 1e-3, f"{name} {reduction} {'value grad'.split()[i]}: {e_ag:.4g} vs torch {e_t:.4g}"


def test_loss_target_grad_and_double_backward():
    rng = np.random.RandomState(7)
    x, t = rng.randn(3, 4), rng.uniform(0, 1, (3, 4))
    for name in ("mse_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy_with_logits"):
        outs = []
        for m in (ampgrad, torch):
            xx = m.tensor(x).requires_grad_(True)
            tt = m.tensor(t).requires_grad_(True)
            y = getattr(m.nn.functional, name)(xx, tt)
            gx, gt = m.autograd.grad(y, (xx, tt), create_graph=True)
            ggx = m.autograd.grad((gx * gx).sum() + (gt * xx).sum(), xx)[0]
            outs.append([np_of(gx), np_of(gt), np_of(ggx)])
        for a, b in zip(*outs):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=name)


def test_dropout_mask_does_not_depend_on_size_or_threads():
    """Element i's keep bit comes from Philox counter i // 4 (a vectorized block of 16 counters for
    long tensors, one counter at a time for the tail): a prefix of a long mask equals a short mask."""
    ampgrad.manual_seed(11)
    short = np_of(ampgrad.nn.functional.dropout(ampgrad.ones(40), 0.5))
    ampgrad.manual_seed(11)
    long = np_of(ampgrad.nn.functional.dropout(ampgrad.ones(1 << 17), 0.5))
    np.testing.assert_array_equal(short, long[:40])
    n = ampgrad.get_num_threads()
    try:
        ampgrad.set_num_threads(1)
        ampgrad.manual_seed(11)
        one = np_of(ampgrad.nn.functional.dropout(ampgrad.ones(1 << 17), 0.5))
    finally:
        ampgrad.set_num_threads(n)
    np.testing.assert_array_equal(one, long)


def test_dropout_mask_is_torchs_bernoulli_stream():
    """The mask bit for bit, independently of torch: torch's CPU dropout draws noise.bernoulli_(1 - p),
    one 53-bit double uniform per element from two mt19937 words (hi << 32 | lo; NumPy's legacy
    RandomState is the same mt19937 with the same seeding), kept when u < 1 - p; kept values are
    scaled by float32(1) / float32(1 - p)."""
    n, p = 301, 0.3
    words = np.random.RandomState(11).randint(0, 2 ** 32, size=2 * n, dtype=np.uint64)
    u = (((words[0::2] << np.uint64(32)) | words[1::2]) & np.uint64(2 ** 53 - 1)).astype(np.float64) * 2.0 ** -53
    ampgrad.manual_seed(11)
    x = ampgrad.full((n,), 1.7)
    got = np_of(ampgrad.nn.functional.dropout(x, p))
    scale = np.float32(1) / np.float32(1 - p)
    want = np.where(u < 1 - p, np.float32(1.7) * scale, np.float32(0))
    np.testing.assert_array_equal(got, want.astype(np.float32))
    # a second call continues the stream (no reseeding between masks)
    got2 = np_of(ampgrad.nn.functional.dropout(ampgrad.ones(8), p)) != 0
    words2 = np.random.RandomState(11).randint(0, 2 ** 32, size=2 * (n + 8), dtype=np.uint64)[2 * n:]
    u2 = (((words2[0::2] << np.uint64(32)) | words2[1::2]) & np.uint64(2 ** 53 - 1)).astype(np.float64) * 2.0 ** -53
    np.testing.assert_array_equal(got2, u2 < 1 - p)


def test_linear_1d_input_with_bias_rounds_once_as_torch():
    """torch folds a 1-d input with a bias into one addmm (_flatten_nd_linear): in bf16 the product and
    the bias are rounded once. Composing mv + add rounded twice (7 of 32 values off by up to 0.125)."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    x, W, b = torch.randn(64).bfloat16(), torch.randn(32, 64).bfloat16(), torch.randn(32).bfloat16()
    A = lambda v: ampgrad.tensor(v.float().numpy()).bfloat16()  # noqa: E731
    y = ampgrad.nn.functional.linear(A(x).requires_grad_(), A(W), A(b))
    np.testing.assert_array_equal(np_of(y.float()), torch.nn.functional.linear(x, W, b).float().numpy())
    assert y.grad_fn.name() == "ViewBackward0" and tuple(y.shape) == (32,)
