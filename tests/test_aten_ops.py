"""torch's low-level norm / index / histogram functions (python/ampgrad/_aten_ops.py) against torch:
values, the statistics' dtypes and shapes, gradients through every output, and errors."""
import numpy as np
import pytest
import torch

import ampgrad as ag


def A(t):
    t = t.detach()
    if t.dtype == torch.bfloat16:
        return ag.tensor(t.float().numpy()).to(ag.bfloat16)
    return ag.tensor(t.numpy().copy())


def N(a):
    return (a.float() if a.dtype == ag.bfloat16 else a).detach().numpy()


def close(a, t, rtol=1e-5, atol=1e-6):
    assert str(a.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (a.dtype, t.dtype)
    assert tuple(a.shape) == tuple(t.shape), (a.shape, t.shape)
    np.testing.assert_allclose(N(a), t.detach().float().numpy() if t.dtype == torch.bfloat16 else t.detach().numpy(),
                               rtol=rtol, atol=atol, equal_nan=True)


def _grads(fn_t, fn_a, inputs):
    """Gradients of sum(out_i * c_i) over every floating output, torch and ampgrad."""
    ti = [x.detach().clone().requires_grad_(x.is_floating_point()) if isinstance(x, torch.Tensor) else x for x in inputs]
    ai = [A(x).requires_grad_(x.is_floating_point()) if isinstance(x, torch.Tensor) else x for x in inputs]
    to, ao = fn_t(*ti), fn_a(*ai)
    g = torch.Generator().manual_seed(3)
    tl, al = 0, 0
    for t, a in zip(to, ao):
        if t.is_floating_point() and t.numel():
            c = torch.randn(t.shape, generator=g, dtype=torch.float64).to(t.dtype)
            tl = tl + (t * c).sum()
            al = al + (a * A(c)).sum()
    leaves_t = [x for x in ti if isinstance(x, torch.Tensor) and x.requires_grad]
    leaves_a = [x for x in ai if isinstance(x, ag.Tensor) and x.requires_grad]
    gt = torch.autograd.grad(tl, leaves_t)
    ga = ag.autograd.grad(al, leaves_a)
    for x, y in zip(ga, gt):
        close(x, y, rtol=1e-9, atol=1e-9)


def test_native_layer_norm_values_stats_and_grads():
    x = torch.randn(3, 4, 5, dtype=torch.float64) * 3 + 1
    w, b = torch.randn(4, 5, dtype=torch.float64), torch.randn(4, 5, dtype=torch.float64)
    for args in [(x, [4, 5], w, b, 1e-5), (x, [5], None, None, 0.5)]:
        ref = torch.native_layer_norm(*args)
        got = ag.native_layer_norm(*[A(v) if isinstance(v, torch.Tensor) else v for v in args])
        for a, t in zip(got, ref):
            close(a, t, 1e-10, 1e-12)
    _grads(lambda x, w, b: torch.native_layer_norm(x, [4, 5], w, b, 1e-5),
           lambda x, w, b: ag.native_layer_norm(x, [4, 5], w, b, 1e-5), [x, w, b])


@pytest.mark.parametrize("wdt", [torch.bfloat16, torch.float32])
def test_native_layer_norm_bf16_stat_dtype(wdt):
    # torch's CPU rule: statistics in the input dtype unless the parameters' dtype differs (float32 then)
    x = torch.randn(6, 16).bfloat16()
    w = torch.randn(16).to(wdt)
    ref = torch.native_layer_norm(x, [16], w, None, 1e-5)
    got = ag.native_layer_norm(A(x), [16], A(w), None, 1e-5)
    for a, t in zip(got, ref):
        close(a, t, 2e-2, 2e-2)


def test_native_group_norm():
    x = torch.randn(2, 6, 7, dtype=torch.float64)
    w, b = torch.randn(6, dtype=torch.float64), torch.randn(6, dtype=torch.float64)
    ref = torch.native_group_norm(x, w, b, 2, 6, 7, 3, 1e-5)
    got = ag.native_group_norm(A(x), A(w), A(b), 2, 6, 7, 3, 1e-5)
    for a, t in zip(got, ref):
        close(a, t, 1e-10, 1e-12)
    _grads(lambda x, w, b: torch.native_group_norm(x, w, b, 2, 6, 7, 3, 1e-5),
           lambda x, w, b: ag.native_group_norm(x, w, b, 2, 6, 7, 3, 1e-5), [x, w, b])


@pytest.mark.parametrize("training", [True, False])
def test_native_batch_norm_family(training):
    x = torch.randn(4, 3, 5, dtype=torch.float64) * 2 + 0.5
    w, b = torch.randn(3, dtype=torch.float64), torch.randn(3, dtype=torch.float64)
    rm_t, rv_t = torch.randn(3, dtype=torch.float64), torch.rand(3, dtype=torch.float64) + 0.5
    rm_a, rv_a = A(rm_t), A(rv_t)
    ref = torch.native_batch_norm(x, w, b, rm_t, rv_t, training, 0.3, 1e-5)
    got = ag.native_batch_norm(A(x), A(w), A(b), rm_a, rv_a, training, 0.3, 1e-5)
    for a, t in zip(got, ref):
        close(a, t, 1e-10, 1e-12)
    close(rm_a, rm_t, 1e-12, 1e-12)  # the running statistics moved as torch's
    close(rv_a, rv_t, 1e-12, 1e-12)
    ref = torch._native_batch_norm_legit(x, w, b, training, 0.3, 1e-5) if training else None
    if training:
        got = ag._native_batch_norm_legit(A(x), A(w), A(b), training, 0.3, 1e-5)
        for a, t in zip(got, ref):
            close(a, t, 1e-10, 1e-12)
        ref = torch.ops.aten._batch_norm_with_update(x, w, b, rm_t, rv_t, 0.1, 1e-3)
        got = ag.ops.aten._batch_norm_with_update(A(x), A(w), A(b), rm_a, rv_a, 0.1, 1e-3)
        assert len(got) == 4
        for a, t in zip(got, ref):
            close(a, t, 1e-10, 1e-12)
        close(rm_a, rm_t, 1e-12, 1e-12)
        _grads(lambda x, w, b: torch.native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5),
               lambda x, w, b: ag.native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5), [x, w, b])


def test_softmax_backward_data_and_dropout_backward():
    x = torch.randn(3, 7, dtype=torch.float64)
    y = torch.softmax(x, 1)
    g = torch.randn(3, 7, dtype=torch.float64)
    close(ag._softmax_backward_data(A(g), A(y), 1, ag.float64), torch._softmax_backward_data(g, y, 1, torch.float64),
          1e-12, 1e-14)
    # the same as the autograd gradient of softmax
    xa = A(x).requires_grad_()
    (ga,) = ag.autograd.grad(ag.softmax(xa, 1), xa, A(g))
    close(ga, torch._softmax_backward_data(g, y, 1, torch.float64), 1e-12, 1e-14)
    m = torch.rand(4, 5) > 0.5
    gg = torch.randn(4, 5)
    close(ag.ops.aten.native_dropout_backward.default(A(gg), A(m), 2.0), torch.ops.aten.native_dropout_backward(gg, m, 2.0))


def test_unsafe_masked_index_out_of_range_where_masked():
    x = torch.randn(5, 6)
    i0 = torch.tensor([[0], [4], [9], [-7]])   # 9 and -7 are out of range: masked
    i1 = torch.tensor([[1, 5, 2]])
    mask = torch.tensor([[True, True, False], [True, False, True], [False, False, False], [False, False, False]])
    ref = torch._unsafe_masked_index(x, mask, [i0, i1], -3.0)
    got = ag._unsafe_masked_index(A(x), A(mask), [A(i0), A(i1)], -3.0)
    close(got, ref)
    v = torch.randn(4, 3)
    ref = torch._unsafe_masked_index_put_accumulate(x, mask, [i0, i1], v)
    got = ag._unsafe_masked_index_put_accumulate(A(x), A(mask), [A(i0), A(i1)], A(v))
    close(got, ref)


def test_chunk_cat():
    ts = [torch.randn(2, 3, 5), torch.randn(2, 3, 2), torch.randn(2, 3)]
    for dim, n in [(1, 2), (1, 3), (-1, 4)]:
        if dim == -1:
            use = ts[:2]
        else:
            use = ts
        ref = torch._chunk_cat(use, dim, n)
        got = ag._chunk_cat([A(t) for t in use], dim, n)
        close(got, ref)


def test_nonzero_static():
    x = torch.tensor([[0, 1, 0], [2, 0, 3]])
    for size, fill in [(0, -1), (2, -1), (3, 7), (6, -1)]:
        close(ag.nonzero_static(A(x), size=size, fill_value=fill), torch.nonzero_static(x, size=size, fill_value=fill))
    close(ag.nonzero_static(A(torch.tensor(5.0)), size=2), torch.nonzero_static(torch.tensor(5.0), size=2))
    with pytest.raises(RuntimeError):
        ag.nonzero_static(A(x), size=-1)


def test_histogram_against_torch():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(1000, generator=g, dtype=torch.float64)
    x[::97] = float("nan")
    w = torch.rand(1000, generator=g, dtype=torch.float64)
    edges = torch.tensor([-2.0, -0.5, 0.0, 0.1, 3.0], dtype=torch.float64)
    cases = [dict(bins=10), dict(bins=7, range=(-1.0, 1.0)), dict(bins=edges), dict(bins=5, weight=w),
             dict(bins=5, density=True), dict(bins=edges, weight=w, density=True), dict(bins=3, range=(2.0, 2.0))]
    xs = x[~x.isnan()]
    for kw in cases:
        kwt = dict(kw)
        inp = x if "range" in kw or isinstance(kw["bins"], torch.Tensor) else xs
        if "weight" in kwt and inp is xs:
            kwt["weight"] = w[~x.isnan()]
        kwa = {k: (A(v) if isinstance(v, torch.Tensor) else v) for k, v in kwt.items()}
        h_t, e_t = torch.histogram(inp, **kwt)
        h_a, e_a = ag.histogram(A(inp), **kwa)
        close(h_a, h_t, 1e-12, 1e-12)
        close(e_a, e_t, 1e-12, 1e-12)
    # the right edge of the last bin is closed; values on inner edges go right
    v = torch.tensor([0.0, 1.0, 2.0, 3.0, 4.0])
    close(ag.histogram(A(v), 4)[0], torch.histogram(v, 4)[0])
    with pytest.raises(RuntimeError):
        ag.histogram(A(v), 3, range=(2.0, 1.0))
    with pytest.raises(RuntimeError):
        ag.histogram(A(v), -1)


def test_which_outputs_are_differentiable_as_torch():
    x = torch.randn(2, 4, 3, dtype=torch.float64)
    calls = [(lambda m, x: m.native_layer_norm(x, [3], None, None, 1e-5)),
             (lambda m, x: m.native_group_norm(x, None, None, 2, 4, 3, 2, 1e-5)),
             (lambda m, x: m.native_batch_norm(x, None, None, None, None, True, 0.1, 1e-5))]
    for f in calls:
        t = [o.requires_grad for o in f(torch, x.clone().requires_grad_())]
        a = [o.requires_grad for o in f(ag, A(x).requires_grad_())]
        assert a == t


def test_ops_aten_namespace_reaches_builtins():
    x, y = torch.randn(3, 4), torch.randn(3, 4)
    close(ag.ops.aten.add.Tensor(A(x), A(y)), torch.ops.aten.add.Tensor(x, y))
    close(ag.ops.aten.mm.default(A(x), A(y.t().contiguous())), torch.ops.aten.mm.default(x, y.t().contiguous()), 1e-5, 1e-5)
    close(ag.ops.aten._softmax_backward_data(A(x), A(y), 1, ag.float32), torch.ops.aten._softmax_backward_data(x, y, 1, torch.float32))
    with pytest.raises(AttributeError):
        ag.ops.aten.no_such_op_anywhere
    assert not hasattr(ag, "native_dropout_backward")  # torch has it only under torch.ops.aten


@pytest.mark.parametrize("shape,k,s,p,d,ceil", [((2, 3, 7, 6), 3, 2, 1, 1, False), ((3, 5, 5), (2, 3), (1, 2), 0, (2, 1), True)])
def test_max_pool2d_with_indices_backward(shape, k, s, p, d, ceil):
    x = torch.randn(shape, dtype=torch.float64)
    out, idx = torch.nn.functional.max_pool2d(x, k, s, p, d, ceil_mode=ceil, return_indices=True)
    g = torch.randn(out.shape, dtype=torch.float64, requires_grad=True)
    ref = torch.ops.aten.max_pool2d_with_indices_backward.default(g, x, k, s, p, d, ceil, idx)
    ga = A(g).requires_grad_()
    got = ag.ops.aten.max_pool2d_with_indices_backward.default(ga, A(x), k, s, p, d, ceil, A(idx))
    close(got, ref, 1e-12, 1e-12)
    c = torch.randn(ref.shape, dtype=torch.float64)
    (gt,) = torch.autograd.grad(ref, g, c)
    (gg,) = ag.autograd.grad(got, ga, A(c))
    close(gg, gt, 1e-12, 1e-12)


def test_histogram_errors_in_torch_order():
    inf = float("inf")
    cases = [lambda m: m.histogram(m.tensor([1]), 4, range=[0.0, -inf]),
             lambda m: m.histogram(m.tensor([1]), 4, range=[2.0, 1.0]),
             lambda m: m.histogram(m.tensor([1.0]), 4, range=[0.5, inf]),
             lambda m: m.histogram(m.tensor([1.0]), 0),
             lambda m: m.histogram(m.tensor([1]), -2),
             lambda m: m.histogram(m.tensor([1.0, 2.0]), 3, weight=m.tensor([1.0])),
             lambda m: m.histogram(m.tensor([1.0, 2.0]), 3, weight=m.tensor([1.0, 2.0], dtype=m.float64)),
             lambda m: m.histogram(m.tensor([1.0, float("nan")]), 3),
             lambda m: m.histogram(m.tensor([1]), m.tensor([[1, 2]])),
             lambda m: m.histogram(m.tensor([1.0]), m.tensor([1, 2])),
             lambda m: m.histogram(m.tensor([1]), 4),
             lambda m: m.tensor(1, dtype=m.int8).histogram(m.tensor(5, dtype=m.int8)),
             lambda m: m.tensor([1], dtype=m.int8).histogram(m.tensor([5], dtype=m.int8)),
             lambda m: m.tensor([1]).histogram(m.tensor([5, 6]))]
    for f in cases:
        with pytest.raises(Exception) as et:
            f(torch)
        with pytest.raises(Exception) as ea:
            f(ag)
        assert type(ea.value) is type(et.value), (et.value, ea.value)
        assert str(ea.value) == str(et.value)
    h, e = ag.histogram(ag.tensor([]), 3)
    ht, et_ = torch.histogram(torch.tensor([]), 3)
    close(h, ht)
    close(e, et_)
