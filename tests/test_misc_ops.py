"""The issue-13 ops torch composes in Python or ATen over other ops (python/ampgrad/_misc_ops.py,
python/ampgrad/nn/_linear_cross_entropy.py) against torch: F.linear_cross_entropy (reference and chunked
paths), combinations, gradient, quantile / nanquantile, mode, unique / unique_consecutive, resize_ /
resize_as_, as_strided_copy / as_strided_scatter: values, dtypes, edge cases (empty, 0-d, NaN), gradients
and exception types."""
import math

import numpy as np
import pytest

import ampgrad as ag

torch = pytest.importorskip("torch")
F, AF = torch.nn.functional, ag.nn.functional
g = torch.Generator().manual_seed(0)


def A(x):
    if isinstance(x, torch.Tensor):
        if x.dtype == torch.bfloat16:
            return ag.tensor(x.float().numpy()).to(ag.bfloat16)
        return ag.tensor(x.detach().numpy())
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        return type(x)(A(v) for v in x)
    return x


def N(x):
    if isinstance(x, torch.Tensor):
        return x.detach().to(torch.float64).numpy() if x.dtype.is_floating_point else x.detach().numpy()
    return (x.detach().to(ag.float64) if x.dtype.is_floating_point else x.detach()).numpy()


def same(a, t, rtol=1e-7, atol=1e-9):
    if isinstance(t, (tuple, list)):
        assert isinstance(a, (tuple, list)) and len(a) == len(t), (type(a), len(t))
        for x, y in zip(a, t):
            same(x, y, rtol, atol)
        return
    assert str(a.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (a.dtype, t.dtype)
    assert tuple(a.shape) == tuple(t.shape), (tuple(a.shape), tuple(t.shape))
    np.testing.assert_allclose(N(a), N(t), rtol=rtol, atol=atol, equal_nan=True)


def same_error(tfn, afn):
    with pytest.raises(Exception) as te:
        tfn()
    with pytest.raises(te.type):
        afn()


def grads(tfn, afn, inputs, rtol=1e-7, atol=1e-9):
    """Gradients of a random cotangent through torch's and ampgrad's functions of the float64 inputs."""
    ts = [x.detach().clone().requires_grad_() for x in inputs]
    as_ = [A(x).requires_grad_() for x in inputs]
    yt, ya = tfn(*ts), afn(*as_)
    yt = yt if isinstance(yt, (tuple, list)) else (yt,)
    ya = ya if isinstance(ya, (tuple, list)) else (ya,)
    cots = [torch.randn(y.shape, generator=g, dtype=y.dtype) for y in yt]
    gt = torch.autograd.grad(yt, ts, cots, allow_unused=True)
    ga = ag.autograd.grad(ya, as_, [A(c) for c in cots], allow_unused=True)
    for x, y, inp in zip(ga, gt, inputs):
        x = ag.zeros(tuple(inp.shape), dtype=ag.float64) if x is None else x
        y = torch.zeros_like(inp) if y is None else y
        same(x, y, rtol, atol)


# ------------------------------------------------------------------------------- linear_cross_entropy
def _lce_case(batched=True, k_dim=False, probs=False):
    n, c, f = 6, 5, 4
    x = torch.randn((n, f) if batched else (f,), generator=g, dtype=torch.float64)
    w = torch.randn((c, 3, f) if k_dim else (c, f), generator=g, dtype=torch.float64)
    tshape = ((n,) if batched else ()) + ((c,) if probs else ()) + ((3,) if k_dim else ())
    if probs:
        t = torch.rand(tshape, generator=g, dtype=torch.float64).softmax(-2 if k_dim else -1)
    else:
        t = torch.randint(0, c, tshape, generator=g)
    return x, w, t


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("case", ["batched", "unbatched", "k_dim", "probs", "k_dim_probs"])
@pytest.mark.parametrize("extra", ["plain", "bias", "weight", "ignore", "smoothing"])
def test_linear_cross_entropy_reference(case, reduction, extra):
    x, w, t = _lce_case(batched=case != "unbatched", k_dim=case.startswith("k_dim"), probs=case.endswith("probs"))
    kw = {"reduction": reduction}
    if extra == "bias":
        kw["linear_bias"] = torch.randn(w.shape[:-1], generator=g, dtype=torch.float64)
    if extra == "weight":
        kw["weight"] = torch.rand(w.shape[0], generator=g, dtype=torch.float64) + 0.5
    if extra == "ignore":
        if case.endswith("probs"):
            same_error(lambda: F.linear_cross_entropy(x, w, t, ignore_index=1),
                       lambda: AF.linear_cross_entropy(A(x), A(w), A(t), ignore_index=1))
            return
        kw["ignore_index"] = 1
    if extra == "smoothing":
        kw["label_smoothing"] = 0.2
    akw = {k: A(v) for k, v in kw.items()}
    same(AF.linear_cross_entropy(A(x), A(w), A(t), **akw), F.linear_cross_entropy(x, w, t, **kw))
    ins = [x, w] + ([kw["linear_bias"]] if "linear_bias" in kw else [])

    def tf(x_, w_, *b):
        return F.linear_cross_entropy(x_, w_, t, **{**kw, **({"linear_bias": b[0]} if b else {})})

    def af(x_, w_, *b):
        return AF.linear_cross_entropy(x_, w_, A(t), **{**akw, **({"linear_bias": b[0]} if b else {})})
    grads(tf, af, ins)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("chunk", [1, 2, 4, 7, None])
@pytest.mark.parametrize("extra", ["plain", "bias_weight_ignore"])
def test_linear_cross_entropy_chunked(reduction, chunk, extra):
    x = torch.randn(7, 4, generator=g, dtype=torch.float64)
    w = torch.randn(9, 4, generator=g, dtype=torch.float64)
    t = torch.randint(0, 9, (7,), generator=g)
    kw = {"reduction": reduction}
    if extra != "plain":
        t[3] = 2
        kw.update(linear_bias=torch.randn(9, generator=g, dtype=torch.float64),
                  weight=torch.rand(9, generator=g, dtype=torch.float64) + 0.5, ignore_index=2)
    akw = {k: A(v) for k, v in kw.items()}
    to = torch.nn.LinearCrossEntropyOptions(batch_chunk_size=chunk, allow_retain_graph=True)
    ao = ag.nn.LinearCrossEntropyOptions(batch_chunk_size=chunk, allow_retain_graph=True)
    same(AF.linear_cross_entropy(A(x), A(w), A(t), options=ao, **akw),
         F.linear_cross_entropy(x, w, t, options=to, **kw), rtol=1e-12)
    ins = [x, w] + ([kw["linear_bias"]] if "linear_bias" in kw else [])
    ke = {k: v for k, v in kw.items() if k != "linear_bias"}
    ake = {k: v for k, v in akw.items() if k != "linear_bias"}
    grads(lambda x_, w_, *b: F.linear_cross_entropy(x_, w_, t, options=to, linear_bias=b[0] if b else None, **ke),
          lambda x_, w_, *b: AF.linear_cross_entropy(x_, w_, A(t), options=ao, linear_bias=b[0] if b else None, **ake),
          ins, rtol=1e-10, atol=1e-12)


def test_linear_cross_entropy_chunked_bf16_and_retain_graph():
    x = torch.randn(8, 16, generator=g).bfloat16()
    w = torch.randn(32, 16, generator=g).bfloat16()
    t = torch.randint(0, 32, (8,), generator=g)
    opts = torch.nn.LinearCrossEntropyOptions(batch_chunk_size=3)
    ref = F.linear_cross_entropy(x.double(), w.double(), t)
    a = AF.linear_cross_entropy(A(x), A(w), A(t), options=ag.nn.LinearCrossEntropyOptions(batch_chunk_size=3))
    assert a.dtype == ag.bfloat16
    assert abs(float(a.float()) - float(ref)) <= 1e-2 * abs(float(ref)) + 1e-2
    assert abs(float(F.linear_cross_entropy(x, w, t, options=opts).float()) - float(ref)) <= 2e-2 * abs(float(ref))
    xa = A(x).float().requires_grad_()
    y = AF.linear_cross_entropy(xa, A(w).float(), A(t), options=ag.nn.LinearCrossEntropyOptions(batch_chunk_size=3))
    y.backward()
    with pytest.raises(RuntimeError):
        y.backward()


def test_linear_cross_entropy_errors():
    mk = lambda *s: torch.randn(*s, generator=g)  # noqa: E731
    cases = [((mk(2, 3, 3), mk(2, 3), mk(3, 2)), {}), ((mk(2, 3), mk(2), mk(2, 2)), {}),
             ((mk(2, 3), mk(2, 4), mk(2, 2)), {}), ((mk(2, 3), mk(2, 3), mk(2, 2)), {"ignore_index": 0}),
             ((mk(3), mk(2, 4, 3), mk(2, 4)), {}), ((mk(2, 3), mk(2, 3), mk(2)), {"linear_bias": mk(3)})]
    for args, kw in cases:
        with pytest.raises(RuntimeError) as te:
            F.linear_cross_entropy(*args, **kw)
        with pytest.raises(RuntimeError) as ae:
            AF.linear_cross_entropy(*A(args), **{k: A(v) for k, v in kw.items()})
        assert str(ae.value) == str(te.value)
    for kw in [dict(batch_chunk_size=0), dict(acc_policy="x"), dict(chunking_method="bad")]:
        with pytest.raises(ValueError):
            torch.nn.LinearCrossEntropyOptions(**kw)
        with pytest.raises(ValueError):
            ag.nn.LinearCrossEntropyOptions(**kw)


# ----------------------------------------------------------------------------------------- combinations
@pytest.mark.parametrize("n", [0, 1, 4])
@pytest.mark.parametrize("r", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("rep", [False, True])
def test_combinations(n, r, rep):
    x = torch.randn(n, generator=g, dtype=torch.float64)
    same(ag.combinations(A(x), r, rep), torch.combinations(x, r, rep))
    if n and r:
        grads(lambda v: torch.combinations(v, r, rep), lambda v: ag.combinations(v, r, rep), [x])
    xi = torch.arange(n)
    same(ag.combinations(A(xi), r, rep), torch.combinations(xi, r, rep))


def test_combinations_errors():
    for args in [(torch.ones(2, 3), 2), (torch.ones(3), -1), (torch.tensor(1.0), 1), (torch.ones(3), True),
                 (torch.ones(3), 2, 1)]:
        same_error(lambda: torch.combinations(*args), lambda: ag.combinations(*A(args)))


# --------------------------------------------------------------------------------------------- gradient
@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_values_and_grads(edge_order):
    x = torch.randn(4, 5, 3, generator=g, dtype=torch.float64)
    coords = [torch.tensor([0.0, 0.5, 2.0, 2.5], dtype=torch.float64), torch.cumsum(torch.rand(5, generator=g,
                                                                                                dtype=torch.float64) + 0.1, 0)]
    for kw in [{}, {"spacing": 2.0}, {"dim": 1}, {"dim": [0, -1], "spacing": [0.5, 3.0]},
               {"dim": (0, 1), "spacing": coords}, {"spacing": torch.tensor(1.5, dtype=torch.float64)},
               {"dim": 1, "spacing": [coords[1]]}]:
        kw = dict(kw, edge_order=edge_order)
        akw = {k: A(v) for k, v in kw.items()}
        same(ag.gradient(A(x), **akw), torch.gradient(x, **kw), rtol=1e-12, atol=1e-12)
        grads(lambda v: torch.gradient(v, **kw), lambda v: ag.gradient(v, **akw), [x], rtol=1e-12, atol=1e-12)


def test_gradient_dtypes_and_edges():
    xi = torch.tensor([[1, 4, 9, 16], [2, 3, 5, 8]], dtype=torch.int32)
    same(ag.gradient(A(xi)), torch.gradient(xi))
    same(ag.gradient(A(xi), spacing=2), torch.gradient(xi, spacing=2))
    xb = torch.tensor([1.0, 4.0, 9.0, 2.0]).bfloat16()
    same(ag.gradient(A(xb)), torch.gradient(xb), rtol=1e-2)
    assert ag.gradient(ag.tensor(2.0)) == ()
    xf = torch.tensor([1.0, 4.0, 9.0], dtype=torch.float32)
    c64 = torch.tensor([0.0, 1.0, 3.0], dtype=torch.float64)
    same(ag.gradient(A(xf), spacing=[A(c64)]), torch.gradient(xf, spacing=[c64]))
    xn = torch.tensor([1.0, math.nan, 3.0, math.inf, 5.0])
    same(ag.gradient(A(xn)), torch.gradient(xn))


def test_gradient_errors():
    x = torch.randn(2, 4, generator=g)
    for kw in [dict(edge_order=3), dict(dim=1, edge_order=2, spacing=[1, 2]), dict(dim=[0, 0]), dict(dim=2),
               dict(spacing=[1.0]), dict(spacing="a"), dict(dim=1.0), dict(edge_order=True)]:
        same_error(lambda: torch.gradient(x, **kw), lambda: ag.gradient(A(x), **{k: A(v) for k, v in kw.items()}))
    for t in [torch.tensor([1.0])]:
        same_error(lambda: torch.gradient(t), lambda: ag.gradient(A(t)))
    same_error(lambda: torch.gradient(torch.ones(2), edge_order=2), lambda: ag.gradient(ag.ones(2), edge_order=2))


# --------------------------------------------------------------------------------- quantile / nanquantile
@pytest.mark.parametrize("interp", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("fn", ["quantile", "nanquantile"])
def test_quantile(fn, interp):
    x = torch.randn(4, 6, 5, generator=g, dtype=torch.float64)
    x[1, 2, 3] = math.nan
    x[2, :, 0] = math.nan
    qs = [0.0, 0.3, 1.0, 0.5, torch.tensor([0.0, 0.25, 0.5, 1 / 6, 0.9, 1.0], dtype=torch.float64),
          torch.tensor(0.7, dtype=torch.float64), torch.tensor([], dtype=torch.float64)]
    for q in qs:
        for dim in [None, 0, 1, -1]:
            for keepdim in (False, True):
                t = getattr(torch, fn)(x, q, dim, keepdim, interpolation=interp)
                a = getattr(ag, fn)(A(x), A(q), dim, keepdim, interpolation=interp)
                same(a, t, rtol=1e-12, atol=1e-12)
    xf = x.nan_to_num().float()
    for q in (0.37, torch.tensor([0.1, 0.6])):
        same(getattr(A(xf), fn)(A(q), 1, interpolation=interp), getattr(xf, fn)(q, 1, interpolation=interp), rtol=1e-6)
    # gradients (finite inputs: sort + gather + lerp)
    xg = torch.randn(5, 7, generator=g, dtype=torch.float64)
    q = torch.tensor([0.2, 0.5, 0.95], dtype=torch.float64)
    grads(lambda v: getattr(torch, fn)(v, q, 1, interpolation=interp),
          lambda v: getattr(ag, fn)(v, A(q), 1, interpolation=interp), [xg])
    # 0-d input, all-NaN rows
    x0 = torch.tensor(2.5, dtype=torch.float64)
    same(getattr(ag, fn)(A(x0), 0.3), getattr(torch, fn)(x0, 0.3))
    same(getattr(ag, fn)(A(x0), A(q), 0, True), getattr(torch, fn)(x0, q, 0, True))
    xa = torch.full((2, 3), math.nan, dtype=torch.float64)
    same(getattr(ag, fn)(A(xa), 0.5, 1), getattr(torch, fn)(xa, 0.5, 1))


def test_quantile_errors():
    x = torch.randn(2, 3, generator=g)
    cases = [(x.int(), 0.5, {}), (x, 1.5, {}), (x, torch.tensor([[0.5]]), {}), (x, torch.tensor([0.5], dtype=torch.float64), {}),
             (torch.empty(0), 0.5, {}), (x, torch.tensor([1.5]), {}), (x, 0.5, {"interpolation": "foo"}),
             (x, 0.5, {"dim": 3}), (x, 0.5, {"dim": True}), (x, 0.5, {"keepdim": 1}), (x, "a", {}),
             (x, 0.5, {"dim": (0, 1)}), (torch.empty(0, 3), 0.5, {"dim": 0})]
    for inp, q, kw in cases:
        for name in ("quantile", "nanquantile"):
            same_error(lambda: getattr(torch, name)(inp, q, **kw), lambda: getattr(ag, name)(A(inp), A(q), **kw))


# ------------------------------------------------------------------------------------------------ mode
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.int64, torch.int8, torch.uint8, torch.bool,
                                   torch.bfloat16])
def test_mode(dtype):
    x = torch.randint(0, 4, (5, 6, 7), generator=g).to(dtype)
    for dim in (0, 1, -1):
        for keepdim in (False, True):
            t = torch.mode(x, dim, keepdim)
            a = ag.mode(A(x), dim, keepdim)
            assert type(a).__name__ == "mode" and a._fields == ("values", "indices")
            same(a.values, t.values)
            same(a.indices, t.indices)  # ties: the smallest value, its last index (torch's CPU kernel)
    same(A(x).mode(1), x.mode(1))


def test_mode_edges_and_grad():
    for v in [[3, 1, 2, 1, 3, 0], [5, 5, 1, 1, 7, 7], [1, 2, 1, 2, 1], [2.0, 1.0], [1.0, 1.0, 2.0, 2.0]]:
        t = torch.tensor(v)
        same(ag.mode(A(t)), torch.mode(t))
    x0 = torch.tensor(4.0)
    same(ag.mode(A(x0)), torch.mode(x0))
    for shape, dim, kd in [((2, 0), 0, False), ((0, 3), 1, False), ((0, 2, 0), 1, True)]:
        e = torch.empty(shape)
        same(ag.mode(A(e), dim, kd), torch.mode(e, dim, kd))
    for shape, dim in [((0,), 0), ((3, 0), 1), ((0, 1, 0), 0)]:
        same_error(lambda: torch.mode(torch.empty(shape), dim), lambda: ag.mode(ag.empty(shape), dim))
    same_error(lambda: torch.mode(torch.ones(3), True), lambda: ag.mode(ag.ones(3), True))
    same_error(lambda: torch.mode(torch.ones(3), 0, "x"), lambda: ag.mode(ag.ones(3), 0, "x"))
    xg = torch.tensor([[1.0, 2.0, 2.0, 3.0], [5.0, 5.0, 4.0, 4.0]], dtype=torch.float64)
    grads(lambda v: torch.mode(v, 1).values, lambda v: ag.mode(v, 1).values, [xg])


# ------------------------------------------------------------------------------- unique, unique_consecutive
@pytest.mark.parametrize("dtype", [torch.float64, torch.int64, torch.int8, torch.uint8, torch.bool, torch.bfloat16])
def test_unique(dtype):
    x = torch.randint(0, 4, (4, 3, 5), generator=g).to(dtype)
    for inv in (False, True):
        for cnt in (False, True):
            for srt in (True, False):
                same(ag.unique(A(x), srt, inv, cnt), torch.unique(x, srt, inv, cnt))
            for dim in (0, 1, -1):
                same(ag.unique(A(x), True, inv, cnt, dim), torch.unique(x, True, inv, cnt, dim))
                same(ag.unique_consecutive(A(x), inv, cnt, dim), torch.unique_consecutive(x, inv, cnt, dim))
            same(ag.unique_consecutive(A(x), inv, cnt), torch.unique_consecutive(x, inv, cnt))
            same(A(x).unique(return_inverse=inv, return_counts=cnt), x.unique(return_inverse=inv, return_counts=cnt))
            same(A(x).unique_consecutive(return_inverse=inv, return_counts=cnt),
                 x.unique_consecutive(return_inverse=inv, return_counts=cnt))


def test_unique_edges():
    nan = math.nan
    for t in [torch.tensor([nan, 1.0, nan, 1.0]), torch.tensor(3.0), torch.empty(0), torch.empty(2, 0),
              torch.tensor([1, 1, 2, 2, 1, 3, 3, 3])]:
        same(ag.unique(A(t), return_inverse=True, return_counts=True), torch.unique(t, return_inverse=True,
                                                                                    return_counts=True))
        same(ag.unique_consecutive(A(t), return_inverse=True, return_counts=True),
             torch.unique_consecutive(t, return_inverse=True, return_counts=True))
    e = torch.empty(3, 0)
    same(ag.unique(A(e), dim=1, return_inverse=True, return_counts=True),
         torch.unique(e, dim=1, return_inverse=True, return_counts=True))
    same(ag.unique_consecutive(A(e), dim=1, return_inverse=True, return_counts=True),
         torch.unique_consecutive(e, dim=1, return_inverse=True, return_counts=True))
    for args, kw in [((torch.empty(0, 0),), {"dim": 1}), ((torch.empty(3, 0),), {"dim": 0}),
                     ((torch.ones(3),), {"sorted": 1}), ((torch.ones(3),), {"dim": True}),
                     ((torch.ones(3),), {"dim": 1}), ((torch.tensor(1.0),), {"dim": 0}),
                     ((torch.ones(3),), {"return_counts": "x"})]:
        same_error(lambda: torch.unique(*args, **kw), lambda: ag.unique(*A(args), **kw))


# --------------------------------------------------------------------------------- resize_, as_strided_*
def test_resize():
    for shape, new in [((5, 5, 5), (25, 5)), ((), ()), ((), (1, 1, 1)), ((2, 3), (4,)), ((6,), (2, 3))]:
        t = torch.randn(shape, generator=g)
        a = A(t)
        ta, aa = t.clone().resize_(new), a.clone().resize_(new)
        same(aa, ta)
        assert a.clone().resize_(*new).shape == ta.shape
        same(a.clone().resize_as_(A(torch.empty(new))), t.clone().resize_as_(torch.empty(new)))
    a = ag.arange(4.0)
    assert a.resize_(6).shape == (6,) and a[:4].tolist() == [0.0, 1.0, 2.0, 3.0]
    same_error(lambda: torch.ones(3, requires_grad=True).resize_(2), lambda: ag.ones(3, requires_grad=True).resize_(2))
    same_error(lambda: torch.ones(3).resize_(-1), lambda: ag.ones(3).resize_(-1))
    r = ag.resize_as_(ag.ones(2), ag.ones(3))  # grown: torch leaves the new element uninitialized
    assert r.shape == torch.resize_as_(torch.ones(2), torch.ones(3)).shape and r[:2].tolist() == [1.0, 1.0]


def test_as_strided_copy_and_scatter():
    x = torch.randn(16, generator=g, dtype=torch.float64)
    for size, stride, off in [([2, 2], [1, 2], 0), ([2, 2], [2, 1], 1), ([2, 2, 2, 2], [8, 4, 2, 1], 0), ([], [], 3)]:
        same(ag.as_strided_copy(A(x), size, stride, off), torch.as_strided_copy(x, size, stride, off))
        src = torch.randn(size, generator=g, dtype=torch.float64)
        same(ag.as_strided_scatter(A(x), A(src), size, stride, off), torch.as_strided_scatter(x, src, size, stride, off))
        same(A(x).as_strided_scatter(A(src), size, stride, off), x.as_strided_scatter(src, size, stride, off))
    # gradient against finite differences (torch's own as_strided_scatter gradient is wrong: see opinfo_skips)
    xs = ag.tensor(np.random.default_rng(0).standard_normal(5)).requires_grad_()
    ss = ag.tensor(np.random.default_rng(1).standard_normal(2)).requires_grad_()
    y = ag.as_strided_scatter(xs, ss, [2], [2], 1)
    gx, gs = ag.autograd.grad(y, (xs, ss), ag.arange(5.0, dtype=ag.float64))
    assert gx.tolist() == [0.0, 0.0, 2.0, 0.0, 4.0] and gs.tolist() == [1.0, 3.0]
    xt = torch.zeros(5, dtype=torch.float64, requires_grad=True)
    assert y.grad_fn.name() == torch.as_strided_scatter(xt * 1, torch.ones(2, dtype=torch.float64), [2], [2], 1).grad_fn.name() \
        == "AsStridedScatterBackward0"
    for args in [(x, torch.ones(3), [2], [1]), (x, torch.ones(2), [2], [1], -2), (x, 1.0, [2], [1]),
                 (x, torch.ones(2), 2, [1])]:
        same_error(lambda: torch.as_strided_scatter(*args), lambda: ag.as_strided_scatter(*A(args)))


def test_scatter_reduce_multiply_as_torch():
    for dt in (torch.float32, torch.float64, torch.int64, torch.int32):
        x = torch.arange(1, 13, dtype=dt).reshape(3, 4)
        idx = torch.tensor([[0, 1, 0, 2], [2, 2, 1, 0]])
        src = (torch.arange(8, dtype=dt).reshape(2, 4) - 3).to(dt)
        for dim in (0, 1, -1):
            tt = x.scatter(dim, idx[:, :3] if dim != 0 else idx, src, reduce="multiply")
            ta = A(x).scatter(dim, A(idx[:, :3] if dim != 0 else idx), A(src), reduce="multiply")
            same(ta, tt)
            same(ag.scatter(A(x), dim, A(idx), 2.5 if dt.is_floating_point else 3, reduce="multiply"),
                 torch.scatter(x, dim, idx, 2.5 if dt.is_floating_point else 3, reduce="multiply"))
    # 0-d, empty index, NaN/inf products
    same(ag.tensor(3.0).scatter(0, ag.tensor([0, 0]), ag.tensor([2.0, 4.0]), reduce="multiply"),
         torch.tensor(3.0).scatter(0, torch.tensor([0, 0]), torch.tensor([2.0, 4.0]), reduce="multiply"))
    same(ag.ones(3).scatter(0, ag.zeros(0, dtype=ag.int64), ag.ones(0), reduce="multiply"),
         torch.ones(3).scatter(0, torch.zeros(0, dtype=torch.int64), torch.ones(0), reduce="multiply"))
    v = torch.tensor([float("inf"), 0.0, float("nan")])
    same(ag.ones(3).scatter(0, ag.tensor([0, 0, 1]), A(v), reduce="multiply"),
         torch.ones(3).scatter(0, torch.tensor([0, 0, 1]), v, reduce="multiply"))
    # errors as torch's: bad reduce, out-of-range index; backward has no derivative
    same_error(lambda: torch.ones(3).scatter(0, torch.tensor([0]), torch.ones(1), reduce="mul"),
               lambda: ag.ones(3).scatter(0, ag.tensor([0]), ag.ones(1), reduce="mul"))
    same_error(lambda: torch.ones(3).scatter(0, torch.tensor([5]), torch.ones(1), reduce="multiply"),
               lambda: ag.ones(3).scatter(0, ag.tensor([5]), ag.ones(1), reduce="multiply"))
    xt, xa = torch.ones(3, requires_grad=True), ag.ones(3, requires_grad=True)
    yt = xt.scatter(0, torch.tensor([0]), torch.ones(1) * 2, reduce="multiply")
    ya = xa.scatter(0, ag.tensor([0]), ag.ones(1) * 2, reduce="multiply")
    assert ya.grad_fn.name() == yt.grad_fn.name()
    same_error(lambda: yt.sum().backward(), lambda: ya.sum().backward())


def test_mode_node_name_and_gradient_as_torch():
    x = torch.tensor([[1.0, 2.0, 2.0, 3.0], [5.0, 5.0, 4.0, 4.0]], requires_grad=True)
    a = ag.tensor(x.detach().numpy()).requires_grad_()
    for keepdim in (False, True):
        vt, va = torch.mode(x, 1, keepdim).values, ag.mode(a, 1, keepdim).values
        assert va.grad_fn.name() == vt.grad_fn.name() == "ModeBackward0"
        (gt,) = torch.autograd.grad(vt.sum(), x)
        (ga,) = ag.autograd.grad(va.sum(), a)
        np.testing.assert_array_equal(ga.numpy(), gt.numpy())
    assert ag.mode(ag.tensor(2.0, requires_grad=True)).values.grad_fn.name() == \
        torch.mode(torch.tensor(2.0, requires_grad=True)).values.grad_fn.name()
