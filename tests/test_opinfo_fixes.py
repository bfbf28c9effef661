"""Regression tests for the OpInfo failures fixed under issue 13 point 3, each against torch."""
import numpy as np
import pytest

import ampgrad

torch = pytest.importorskip("torch")


def A(t, requires_grad=None):
    """torch tensor -> ampgrad tensor (same values, dtype, requires_grad)."""
    a = ampgrad.tensor(t.detach().numpy().copy())
    if requires_grad if requires_grad is not None else t.requires_grad:
        a.requires_grad_(True)
    return a


def close(a, t, rtol=1e-6, atol=1e-6):
    assert tuple(a.shape) == tuple(t.shape), (tuple(a.shape), tuple(t.shape))
    assert str(a.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(a.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol)


def grads(fn_t, fn_a, *ts):
    """Compare f's value and the gradients of sum(f * cotangent) for the float inputs."""
    leaves_t = [t.detach().clone().requires_grad_(t.is_floating_point()) for t in ts]
    leaves_a = [A(t, t.is_floating_point()) for t in ts]
    out_t, out_a = fn_t(*leaves_t), fn_a(*leaves_a)
    close(out_a, out_t)
    cot = torch.randn(out_t.shape, dtype=out_t.dtype, generator=torch.Generator().manual_seed(0))
    gt = torch.autograd.grad(out_t, [t for t in leaves_t if t.requires_grad], cot, allow_unused=True)
    ga = ampgrad.autograd.grad(out_a, [a for a in leaves_a if a.requires_grad], A(cot), allow_unused=True)
    for x, y in zip(ga, gt):
        if y is None:
            assert x is None or not np.any(x.numpy())
        else:
            close(x, y)


def test_masked_fill_mask_broadcasts_input_larger():
    x, m = torch.randn(5), torch.rand(5, 5) > 0.5
    close(ampgrad.masked_fill(A(x), A(m), 2.5), torch.masked_fill(x, m, 2.5))
    grads(lambda x: torch.masked_fill(x, m, 2.5), lambda x: ampgrad.masked_fill(x, A(m), 2.5), x)
    with pytest.raises(RuntimeError):  # in place, self cannot grow (torch raises too)
        torch.zeros(5).masked_fill_(m, 1.0)
    a = ampgrad.zeros(5)
    with pytest.raises(RuntimeError):
        a.masked_fill_(A(m), 1.0)
    assert a.tolist() == [0.0] * 5


@pytest.mark.parametrize("op", ["index_add", "index_copy"])
def test_index_add_copy_on_0d(op):
    x, src, idx = torch.tensor(1.5, dtype=torch.float64), torch.tensor(-2.0, dtype=torch.float64), torch.tensor([0])
    grads(lambda x, s: getattr(torch, op)(x, 0, idx, s), lambda x, s: getattr(ampgrad, op)(x, 0, A(idx), s), x, src)
    grads(lambda x, s: getattr(torch, op)(x, 0, idx[0], s), lambda x, s: getattr(ampgrad, op)(x, 0, A(idx[0]), s), x, src)


@pytest.mark.parametrize("which", ["both", "min", "max"])
def test_clamp_tensor_bounds_ties_give_the_gradient_to_self(which):
    x = torch.tensor([1.0, 2.0, 3.0, 0.5, 7.0, 4.0], dtype=torch.float64)
    lo = torch.tensor([1.0, 0.0, 0.0, 1.0, 0.0, 5.0], dtype=torch.float64)  # ties at 0, x < lo at 3, lo > hi at 5
    hi = torch.tensor([5.0, 2.0, 5.0, 5.0, 6.0, 3.0], dtype=torch.float64)  # tie at 1, x > hi at 4

    def f(mod):
        if which == "both":
            return lambda x, l, h: mod.clamp(x, l, h)
        if which == "min":
            return lambda x, l, h: mod.clamp_min(x, l)
        return lambda x, l, h: mod.clamp_max(x, h)
    grads(f(torch), f(ampgrad), x, lo, hi)
    xa = A(x, True)
    assert ampgrad.clamp(xa, A(lo), A(hi)).grad_fn.name() == torch.clamp(x.requires_grad_(), lo, hi).grad_fn.name()


def test_clamp_tensor_bounds_broadcast_and_jvp():
    x, lo = torch.randn(3, 4, dtype=torch.float64), torch.zeros(4, dtype=torch.float64)
    grads(lambda x, l: torch.clamp(x, min=l), lambda x, l: ampgrad.clamp(x, min=l), x, lo)
    import ampgrad.autograd.forward_ad as fwa
    import torch.autograd.forward_ad as fwt
    t = torch.randn(3, 4, dtype=torch.float64)
    with fwt.dual_level():
        jt = fwt.unpack_dual(torch.clamp(fwt.make_dual(x, t), min=lo)).tangent
    with fwa.dual_level():
        ja = fwa.unpack_dual(ampgrad.clamp(fwa.make_dual(A(x), A(t)), min=A(lo))).tangent
    close(ja, jt)


def test_prelu_0d_input_keeps_its_shape():
    x, w = torch.tensor(-1.5, dtype=torch.float64), torch.tensor([0.25], dtype=torch.float64)
    grads(torch.nn.functional.prelu, ampgrad.nn.functional.prelu, x, w)


def test_softmin_negates_in_the_input_dtype():
    x = torch.randint(0, 10, (5, 5), dtype=torch.uint8, generator=torch.Generator().manual_seed(3))
    x[0, 0] = 0
    close(ampgrad.nn.functional.softmin(A(x), 0, dtype=ampgrad.float64),
          torch.nn.functional.softmin(x, 0, dtype=torch.float64))


@pytest.mark.parametrize("loss", ["multi_margin_loss", "multilabel_margin_loss"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_margin_losses_on_0d(loss, reduction):
    x, t = torch.tensor(0.3, dtype=torch.float64), torch.tensor(0)
    grads(lambda x: getattr(torch.nn.functional, loss)(x, t, reduction=reduction),
          lambda x: getattr(ampgrad.nn.functional, loss)(x, A(t), reduction=reduction), x)


def test_pdist_p0_keeps_its_history():
    x = torch.randn(5, 3, dtype=torch.float64)
    x[1] = x[0]
    grads(lambda x: torch.nn.functional.pdist(x, p=0), lambda x: ampgrad.nn.functional.pdist(x, p=0), x)
    assert ampgrad.nn.functional.pdist(A(x, True), p=0).requires_grad


def test_normal_gradients_are_zero():
    mean = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    std = torch.rand(3, 4, dtype=torch.float64, requires_grad=True)
    ma, sa = A(mean, True), A(std, True)
    ampgrad.manual_seed(0)
    out = ampgrad.normal(ma, sa)
    ampgrad.manual_seed(0)
    ref = ampgrad.randn(3, 4, dtype=ampgrad.float64) * sa.detach() + ma.detach()
    np.testing.assert_array_equal(out.detach().numpy(), ref.numpy())
    gm, gs = ampgrad.autograd.grad(out, [ma, sa], ampgrad.ones(3, 4, dtype=ampgrad.float64))
    tm, ts = torch.autograd.grad(torch.normal(mean, std), [mean, std], torch.ones(3, 4, dtype=torch.float64))
    close(gm, tm)
    close(gs, ts)
    out2 = ampgrad.normal(2.0, A(std, True))
    assert out2.requires_grad
    assert not np.any(ampgrad.autograd.grad(out2.sum(), out2.grad_fn and [sa] or [], allow_unused=True)[0] or 0)


@pytest.mark.parametrize("dims", [([0, 1], [2, 0]), ([1], [0]), ([0, 2], [2, 1])])
def test_tensordot_broadcasts_size_1_contracted_dims(dims):
    a, b = torch.randn(1, 1, 1, dtype=torch.float64), torch.randn(2, 1, 2, dtype=torch.float64)
    grads(lambda a, b: torch.tensordot(a, b, dims=dims), lambda a, b: ampgrad.tensordot(a, b, dims=dims), a, b)
    with pytest.raises(RuntimeError, match="contracted dimensions need to match"):
        ampgrad.tensordot(ampgrad.ones(2, 3), ampgrad.ones(3, 2), dims=([0], [0]))


def test_batch_norm_empty_input_is_cloned():
    x = torch.randn(0, dtype=torch.float64)
    out_t = torch.nn.functional.batch_norm(x.requires_grad_(), torch.zeros(0), torch.ones(0), training=True)
    out_a = ampgrad.nn.functional.batch_norm(A(x, True), ampgrad.zeros(0), ampgrad.ones(0), training=True)
    close(out_a, out_t)
    assert out_a.grad_fn.name() == out_t.grad_fn.name() == "CloneBackward0"


def test_torch_spellings_of_nn_ops():
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(4, 5, generator=g, dtype=torch.float64), torch.randn(4, 5, generator=g, dtype=torch.float64)
    s = torch.sign(torch.randn(4, generator=g)).to(torch.float64)
    p = torch.rand(4, 5, generator=g, dtype=torch.float64)
    for red in (0, 1, 2):
        close(ampgrad.kl_div(A(x), A(p), red), torch.kl_div(x, p, red))
        close(ampgrad.kl_div(A(x), A(y), red, log_target=True), torch.kl_div(x, y, red, log_target=True))
        close(ampgrad.margin_ranking_loss(A(x[:, 0]), A(y[:, 0]), A(s), 0.1, red),
              torch.margin_ranking_loss(x[:, 0], y[:, 0], s, 0.1, red))
        close(ampgrad.binary_cross_entropy_with_logits(A(x), A(p), None, A(p[0]), red),
              torch.binary_cross_entropy_with_logits(x, p, None, p[0], red))
        close(ampgrad.hinge_embedding_loss(A(x[:, 0]), A(s), 0.5, red), torch.hinge_embedding_loss(x[:, 0], s, 0.5, red))
        close(ampgrad.cosine_embedding_loss(A(x), A(y), A(s), 0.2, red), torch.cosine_embedding_loss(x, y, s, 0.2, red))
        close(ampgrad.poisson_nll_loss(A(x), A(p), True, True, 1e-8, red), torch.poisson_nll_loss(x, p, True, True, 1e-8, red))
        close(ampgrad.triplet_margin_loss(A(x), A(y), A(p), 1.0, 2, 1e-6, True, red),
              torch.triplet_margin_loss(x, y, p, 1.0, 2, 1e-6, True, red))
    # aten's apply_loss_reduction: any int other than 1 (mean) and 2 (sum) reduces nothing
    close(ampgrad.kl_div(A(x), A(p), 3), torch.kl_div(x, p, 3))
    close(ampgrad.selu(A(x)), torch.selu(x))
    close(ampgrad.celu(A(x), 0.7), torch.celu(x, 0.7))
    close(ampgrad.alpha_dropout(A(x), 0.5, False), torch.alpha_dropout(x, 0.5, False))
    close(ampgrad.feature_dropout(A(x), 0.5, False), torch.feature_dropout(x, 0.5, False))
    rm, rv = torch.zeros(5, dtype=torch.float64), torch.ones(5, dtype=torch.float64)
    close(ampgrad.batch_norm(A(x), A(p[0]), A(y[0]), A(rm), A(rv), True, 0.1, 1e-5, True),
          torch.batch_norm(x, p[0], y[0], rm.clone(), rv.clone(), True, 0.1, 1e-5, True))


def test_vdot():
    a, b = torch.randn(6, dtype=torch.float64), torch.randn(6, dtype=torch.float64)
    grads(torch.vdot, ampgrad.vdot, a, b)
    with pytest.raises(RuntimeError, match="1D tensors expected"):
        ampgrad.vdot(ampgrad.ones(2, 2), ampgrad.ones(2, 2))


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("nd", [1, 2, 3])
def test_convolution(nd, transposed):
    g = torch.Generator().manual_seed(nd)
    x = torch.randn((2, 4) + (5,) * nd, generator=g, dtype=torch.float64)
    w = torch.randn(((4, 3) if transposed else (6, 2)) + (3,) * nd, generator=g, dtype=torch.float64)
    b = torch.randn(6 if transposed else 6, generator=g, dtype=torch.float64)
    stride, pad, dil, opad = [2] * nd, [1] * nd, [1] * nd, [1 if transposed else 0] * nd
    grads(lambda x, w, b: torch.convolution(x, w, b, stride, pad, dil, transposed, opad, 2),
          lambda x, w, b: ampgrad.convolution(x, w, b, stride, pad, dil, transposed, opad, 2), x, w, b)


def test_conv_tbc():
    g = torch.Generator().manual_seed(0)
    x, w, b = (torch.randn(7, 2, 3, generator=g, dtype=torch.float64), torch.randn(3, 3, 4, generator=g, dtype=torch.float64),
               torch.randn(4, generator=g, dtype=torch.float64))
    grads(lambda x, w, b: torch.conv_tbc(x, w, b, 1), lambda x, w, b: ampgrad.conv_tbc(x, w, b, 1), x, w, b)


def test_zero_function():
    a = ampgrad.ones(3)
    assert ampgrad.zero_(a) is a and a.tolist() == [0.0, 0.0, 0.0]


def test_tensor_to_positional_non_blocking_and_copy():
    a = ampgrad.ones(3)
    b = a.to("cpu", ampgrad.float32, False, True)
    assert b.dtype == ampgrad.float32 and b.data_ptr() != a.data_ptr()
    assert a.to("cpu", ampgrad.float32, False, False).data_ptr() == a.data_ptr()
    c = a.to(ampgrad.float64, False, True)
    assert c.dtype == ampgrad.float64
    d = a.to(ampgrad.ones(1, dtype=ampgrad.int32), False, True)
    assert d.dtype == ampgrad.int32
    e = a.to(a, False, True)
    assert e.data_ptr() != a.data_ptr()
    t = torch.ones(3)
    assert t.to("cpu", torch.float32, False, True).data_ptr() != t.data_ptr()  # the overload this mirrors
    with pytest.raises(TypeError):
        a.to("cpu", ampgrad.float32, False, 1.5)


def test_addr_bool_is_logical():
    s, v1, v2 = torch.tensor([[True, False], [False, False]]), torch.tensor([True, False]), torch.tensor([False, True])
    for beta, alpha in ((3, 2), (0, 1), (1, 0)):
        out = ampgrad.addr(A(s), A(v1), A(v2), beta=beta, alpha=alpha)
        assert out.dtype == ampgrad.bool
        assert out.tolist() == torch.addr(s, v1, v2, beta=beta, alpha=alpha).tolist()
    with pytest.raises(RuntimeError, match="must not be a floating point number"):
        ampgrad.addr(A(s), A(v1), A(v2), beta=0.5)


def test_layer_norm_one_element_rows_are_exact():
    x, w, b = torch.randn(4, 1), torch.randn(1), torch.randn(1)
    out = ampgrad.nn.functional.layer_norm(A(x), [1], A(w), A(b))
    np.testing.assert_array_equal(out.numpy(), torch.nn.functional.layer_norm(x, [1], w, b).numpy())


def test_bernoulli_and_pdist_node_names_match_torch():
    """The compositions' outputs carry torch's single node (BernoulliBackward0, PdistBackward0 for every p)."""
    assert ampgrad.bernoulli(ampgrad.full((3,), 0.5, requires_grad=True)).grad_fn.name() == \
        torch.bernoulli(torch.full((3,), 0.5, requires_grad=True)).grad_fn.name()
    for p in (0, 1, 2, 3.5, float("inf")):
        x = ampgrad.randn(4, 3, requires_grad=True)
        d = ampgrad.pdist(x, p=p)
        assert d.grad_fn.name() == torch.pdist(torch.randn(4, 3, requires_grad=True), p=p).grad_fn.name()
        d.sum().backward()
        assert x.grad is not None and tuple(x.grad.shape) == (4, 3)


@pytest.mark.parametrize("need_weights,average", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("mask_type", [None, 0, 1])
def test_native_multi_head_attention_matches_torch(need_weights, average, mask_type):
    g = torch.Generator().manual_seed(11)
    q = torch.randn(2, 5, 8, generator=g)
    ws = [torch.randn(24, 8, generator=g) * 0.3, torch.randn(24, generator=g), torch.randn(8, 8, generator=g) * 0.3,
          torch.randn(8, generator=g)]
    mask = None
    if mask_type == 0:
        mask = torch.triu(torch.ones(5, 5, dtype=torch.bool), 1)
    elif mask_type == 1:
        mask = torch.tensor([[False] * 4 + [True], [False] * 5])
    t = torch._native_multi_head_attention(q, q, q, 8, 2, *ws, mask, need_weights, average, mask_type)
    A = lambda x: None if x is None else ampgrad.tensor(x.numpy())  # noqa: E731
    a = ampgrad._native_multi_head_attention(A(q), A(q), A(q), 8, 2, *[A(w) for w in ws], A(mask), need_weights,
                                             average, mask_type)
    for x, y in zip(a, t):
        if y is None:  # the weights when not need_weights
            assert x is None
            continue
        assert tuple(x.shape) == tuple(y.shape)
        np.testing.assert_allclose(x.detach().numpy(), y.detach().numpy(), rtol=1e-5, atol=1e-5)
