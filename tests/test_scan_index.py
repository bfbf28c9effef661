"""Scans, index reductions and binning (csrc/ops/scan_index.cpp, kernels/cpu/scan_index.cpp): scatter_reduce,
index_reduce, cummax, cummin, logcumsumexp, searchsorted, bucketize, bincount, histc against torch: values
(ties, -inf / NaN, empty and 0-d inputs, bf16), dtypes, gradients and backward node names, errors."""
import numpy as np
import pytest

import ampgrad as ag
from ampgrad.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

REDUCES = ["sum", "prod", "mean", "amax", "amin"]


def _pair(a, dtype="float32", requires_grad=False):
    a = np.asarray(a)
    t = torch.tensor(a).to(getattr(torch, dtype))
    x = ag.tensor(a).to(getattr(ag, dtype))
    if requires_grad:
        t.requires_grad_(True)
        x.requires_grad_(True)
    return x, t


def _np(v):
    if isinstance(v, torch.Tensor):
        return v.detach().to(torch.float64).numpy() if v.dtype in (torch.bfloat16, torch.float16) else v.detach().numpy()
    return v.detach().to(ag.float64).numpy() if v.dtype in (ag.bfloat16, ag.float16) else v.detach().numpy()


def _same(a, t, rtol=1e-6, atol=1e-6):
    assert str(a.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (a.dtype, t.dtype)
    assert tuple(a.shape) == tuple(t.shape), (a.shape, t.shape)
    np.testing.assert_allclose(_np(a), _np(t), rtol=rtol, atol=atol, equal_nan=True)


def _ties(shape, seed, zeros=False):
    rng = np.random.default_rng(seed)
    a = np.round(rng.standard_normal(shape) * 2) / 2  # many ties
    if not zeros:
        a[a == 0] = 0.5
    return a


def _index(shape, size, seed):
    return np.random.default_rng(seed).integers(0, size, shape)


# ---------------------------------------------------------------- scatter_reduce
SCATTER_CASES = [((4, 5), 0, (6, 5)), ((4, 5), 1, (4, 7)), ((3, 4, 5), 1, (2, 6, 4)), ((5,), 0, (9,)), ((4, 5), 0, (2, 3))]


@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bfloat16"])
@pytest.mark.parametrize("case", range(len(SCATTER_CASES)))
def test_scatter_reduce_values(reduce, include_self, dtype, case):
    shape, dim, ishape = SCATTER_CASES[case]
    x, tx = _pair(_ties(shape, case, zeros=True) * (4 if dtype == "int64" else 1), dtype)
    s, ts = _pair(_ties(ishape, case + 10) * (4 if dtype == "int64" else 1), dtype)
    i, ti = _pair(_index(ishape, shape[dim], case), "int64")
    got = ag.scatter_reduce(x, dim, i, s, reduce, include_self=include_self)
    want = torch.scatter_reduce(tx, dim, ti, ts, reduce, include_self=include_self)
    tol = 1e-2 if dtype == "bfloat16" else 1e-6
    _same(got, want, rtol=tol, atol=tol)
    _same(x.scatter_reduce(dim, i, s, reduce, include_self=include_self), want, rtol=tol, atol=tol)
    y = x.clone()
    assert y.scatter_reduce_(dim, i, s, reduce, include_self=include_self) is y
    _same(y, want, rtol=tol, atol=tol)


def test_scatter_reduce_nan_int_bool_0d():
    x, tx = _pair([1.0, 2.0, 3.0])
    s, ts = _pair([np.nan, 4.0, -np.inf, 1.0])
    i, ti = _pair([0, 0, 1, 2], "int64")
    for r in REDUCES:
        for inc in (True, False):
            _same(ag.scatter_reduce(x, 0, i, s, r, include_self=inc), torch.scatter_reduce(tx, 0, ti, ts, r, include_self=inc))
    # integer mean floors; uint8 sums wrap
    x, tx = _pair([[-3, 4, 5], [1, 2, 3]], "int64")
    s, ts = _pair([[2, 3, -8]], "int64")
    i, ti = _pair([[0, 0, 0]], "int64")
    for inc in (True, False):
        _same(x.scatter_reduce(0, i, s, "mean", include_self=inc), tx.scatter_reduce(0, ti, ts, "mean", include_self=inc))
    x, tx = _pair([1, 2], "uint8")
    s, ts = _pair([200, 100], "uint8")
    i, ti = _pair([0, 0], "int64")
    _same(x.scatter_reduce(0, i, s, "sum"), tx.scatter_reduce(0, ti, ts, "sum"))
    x, tx = _pair([True, False], "bool")
    s, ts = _pair([True, False, True], "bool")
    i, ti = _pair([0, 1, 1], "int64")
    for r in ("sum", "prod", "amax", "amin"):
        _same(x.scatter_reduce(0, i, s, r), tx.scatter_reduce(0, ti, ts, r))
    # 0-d self; empty index
    x, tx = _pair(2.0)
    s, ts = _pair([3.0, 4.0])
    i, ti = _pair([0, 0], "int64")
    for r in REDUCES:
        _same(x.scatter_reduce(0, i, s, r), tx.scatter_reduce(0, ti, ts, r))
    x, tx = _pair(np.ones((2, 3)))
    i, ti = _pair(np.zeros((0, 3), np.int64), "int64")
    s, ts = _pair(np.zeros((0, 3)))
    _same(x.scatter_reduce(0, i, s, "prod", include_self=False), tx.scatter_reduce(0, ti, ts, "prod", include_self=False))


def _grads(f_ag, f_t, ins_np, dtype="float64"):
    xs = [_pair(a, dtype, requires_grad=True) for a in ins_np]
    out = f_ag(*[p[0] for p in xs])
    tout = f_t(*[p[1] for p in xs])
    _same(out, tout, 1e-10, 1e-10)
    g = np.random.default_rng(3).standard_normal(tuple(tout.shape))
    out.backward(ag.tensor(g).to(out.dtype))
    tout.backward(torch.tensor(g).to(tout.dtype))
    for (x, t) in xs:
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-10)
    return out, tout


@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_grad_vs_torch(reduce, include_self):
    # ties (amax / amin split the gradient evenly) and zeros (prod's exclusive products)
    x = _ties((4, 5), 0, zeros=True)
    s = _ties((6, 5), 1, zeros=True)
    s[0, 0] = 0.0
    s[1, 1] = 0.0
    i, ti = _pair(_index((6, 5), 4, 2), "int64")
    if reduce == "prod":  # torch raises in double backward for two zeros in one slot; one zero per slot here
        s[i.numpy() == 0] = 1.0
    out, tout = _grads(lambda a, b: a.scatter_reduce(0, i, b, reduce, include_self=include_self),
                       lambda a, b: a.scatter_reduce(0, ti, b, reduce, include_self=include_self), [x, s])
    assert out.grad_fn.name() == tout.grad_fn.name() == "ScatterReduceBackward0"


@pytest.mark.parametrize("reduce", REDUCES)
def test_scatter_reduce_gradcheck(reduce):
    rng = np.random.default_rng(5)
    x = ag.tensor(rng.permutation(12).reshape(3, 4) / 3.0 + 0.5, dtype=ag.float64, requires_grad=True)
    s = ag.tensor(rng.permutation(20).reshape(5, 4) / 4.0 + 0.25, dtype=ag.float64, requires_grad=True)
    i = ag.tensor(_index((5, 4), 3, 6))
    for inc in (True, False):
        f = lambda a, b: a.scatter_reduce(0, i, b, reduce, include_self=inc)  # noqa: E731
        assert gradcheck(f, (x, s))
        assert gradgradcheck(f, (x, s))


# ---------------------------------------------------------------- index_reduce
INDEX_CASES = [((4, 5), 0, 6), ((4, 5), 1, 3), ((3, 4, 5), 2, 8), ((5,), 0, 7)]


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "bfloat16"])
@pytest.mark.parametrize("case", range(len(INDEX_CASES)))
def test_index_reduce_values(reduce, include_self, dtype, case):
    shape, dim, n = INDEX_CASES[case]
    sshape = list(shape)
    sshape[dim] = n
    x, tx = _pair(_ties(shape, case, zeros=True) * (4 if dtype == "int32" else 1), dtype)
    s, ts = _pair(_ties(sshape, case + 3) * (4 if dtype == "int32" else 1), dtype)
    i, ti = _pair(_index((n,), shape[dim], case), "int64")
    want = tx.index_reduce(dim, ti, ts, reduce, include_self=include_self)
    tol = 1e-2 if dtype == "bfloat16" else 1e-6
    _same(x.index_reduce(dim, i, s, reduce, include_self=include_self), want, tol, tol)
    _same(ag.index_reduce(x, dim, i.int(), s, reduce, include_self=include_self), want, tol, tol)
    y = x.clone()
    assert y.index_reduce_(dim, i, s, reduce, include_self=include_self) is y
    _same(y, want, tol, tol)


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_grad_vs_torch(reduce, include_self):
    x = _ties((4, 5), 0, zeros=True)
    s = _ties((4, 6), 1, zeros=True)
    i, ti = _pair([0, 2, 2, 4, 0, 1], "int64")
    if reduce == "prod":
        s[:, 0] = 1.0
    out, tout = _grads(lambda a, b: a.index_reduce(1, i, b, reduce, include_self=include_self),
                       lambda a, b: a.index_reduce(1, ti, b, reduce, include_self=include_self), [x, s])
    assert out.grad_fn.name() == tout.grad_fn.name() == "IndexReduceBackward0"


def test_index_reduce_bool():
    x, tx = _pair(np.arange(12).reshape(3, 4) % 3 > 0, "bool")
    s, ts = _pair(np.arange(8).reshape(2, 4) % 2 > 0, "bool")
    i, ti = _pair([2, 2], "int64")
    for r in ("prod", "amax", "amin"):
        _same(x.index_reduce(0, i, s, r), tx.index_reduce(0, ti, ts, r))


def test_index_reduce_0d():
    x, tx = _pair(2.0)
    s, ts = _pair(3.0)
    i, ti = _pair([0], "int64")
    for r in ("prod", "mean", "amax", "amin"):
        _same(x.index_reduce(0, i, s, r), tx.index_reduce(0, ti, ts, r))


# ---------------------------------------------------------------- cummax / cummin / logcumsumexp
@pytest.mark.parametrize("fn", ["cummax", "cummin"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bfloat16", "bool", "int8"])
def test_cummaxmin_values(fn, dtype):
    a = _ties((4, 6, 3), 0, zeros=True)
    if dtype in ("float32", "float64", "bfloat16"):
        a[1, 2, 0] = np.nan
        a[2, 4, 1] = np.nan
        a[3, :, 2] = [np.nan, 1.0, np.nan, -np.inf, np.inf, 2.0]
    elif dtype == "bool":
        a = a > 0
    x, tx = _pair(a, dtype)
    for d in (0, 1, -1):
        got, want = getattr(ag, fn)(x, d), getattr(torch, fn)(tx, d)
        assert type(got).__name__ == fn and got._fields == ("values", "indices")
        _same(got.values, want.values)
        _same(got.indices, want.indices)
        _same(getattr(x, fn)(dim=d).indices, want.indices)
    for shape in [(), (0,), (3, 0)]:
        x, tx = _pair(np.ones(shape), dtype)
        got, want = getattr(ag, fn)(x, 0), getattr(torch, fn)(tx, 0)
        _same(got.values, want.values)
        _same(got.indices, want.indices)


@pytest.mark.parametrize("fn", ["cummax", "cummin"])
def test_cummaxmin_grad(fn):
    out, tout = _grads(lambda a: getattr(ag, fn)(a, 1).values, lambda a: getattr(torch, fn)(a, 1).values, [_ties((3, 7), 1)])
    assert out.grad_fn.name() == tout.grad_fn.name()
    x = ag.tensor(np.random.default_rng(0).permutation(24).reshape(4, 6) / 5.0, dtype=ag.float64, requires_grad=True)
    assert gradcheck(lambda a: getattr(ag, fn)(a, 0).values, (x,))
    assert gradgradcheck(lambda a: getattr(ag, fn)(a, 1).values, (x,))
    y = ag.tensor(2.0, dtype=ag.float64, requires_grad=True)
    getattr(ag, fn)(y, 0).values.backward()
    assert y.grad.item() == 1.0


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
def test_logcumsumexp_values(dtype):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((5, 7)) * 3
    a[0] = [-np.inf, 1000.0, -np.inf, np.inf, 1.0, -np.inf, 3.0]
    a[1] = [-np.inf] * 7
    a[2, 3] = np.nan
    a[3] = [1e4, -1e4, 88.0, 89.0, -88.0, 0.0, 1e-3]
    x, tx = _pair(a, dtype)
    tol = 1e-2 if dtype in ("bfloat16", "float16") else 1e-6
    for d in (0, 1):
        _same(ag.logcumsumexp(x, d), torch.logcumsumexp(tx, d), tol, tol)
        _same(x.logcumsumexp(d), torch.logcumsumexp(tx, d), tol, tol)
    for shape in [(), (0,), (2, 0)]:
        x, tx = _pair(np.ones(shape), dtype)
        _same(ag.logcumsumexp(x, 0), torch.logcumsumexp(tx, 0))


def test_logcumsumexp_grad():
    a = np.random.default_rng(1).standard_normal((4, 6)) * 2
    out, tout = _grads(lambda x: ag.logcumsumexp(x, 1), lambda x: torch.logcumsumexp(x, 1), [a])
    assert out.grad_fn.name() == tout.grad_fn.name() == "LogcumsumexpBackward0"
    x = ag.tensor(a, dtype=ag.float64, requires_grad=True)
    assert gradcheck(lambda t: ag.logcumsumexp(t, 0), (x,))
    assert gradgradcheck(lambda t: ag.logcumsumexp(t, 1), (x,))
    # -inf entries: finite gradients, as torch's
    b = np.array([[-np.inf, 0.5, -np.inf, 2.0]])
    _grads(lambda x: ag.logcumsumexp(x, 1), lambda x: torch.logcumsumexp(x, 1), [b])


# ---------------------------------------------------------------- searchsorted / bucketize
def test_searchsorted_values():
    b = np.array([1.0, 2.0, 2.0, 3.0, 5.0])
    v = np.array([[0.0, 2.0, 2.5, np.nan], [3.0, 5.0, 6.0, -np.inf]])
    for dtype in ("float32", "float64", "int64", "bfloat16"):
        (x, tx), (y, ty) = _pair(b, dtype), _pair(np.nan_to_num(v) if dtype == "int64" else v, dtype)
        for kw in [{}, {"right": True}, {"side": "right"}, {"side": "left"}, {"out_int32": True}]:
            _same(ag.searchsorted(x, y, **kw), torch.searchsorted(tx, ty, **kw))
            _same(ag.bucketize(y, x, **{k: v for k, v in kw.items() if k != "side"}),
                  torch.bucketize(ty, tx, **{k: v for k, v in kw.items() if k != "side"}))
    # N-d boundaries, sorter, scalars, mixed dtypes
    bb = np.sort(np.random.default_rng(0).standard_normal((2, 3, 6)), axis=-1)
    vv = np.random.default_rng(1).standard_normal((2, 3, 4))
    (x, tx), (y, ty) = _pair(bb), _pair(vv)
    for right in (False, True):
        _same(ag.searchsorted(x, y, right=right), torch.searchsorted(tx, ty, right=right))
    u = np.array([3.0, 1.0, 2.0, 2.0, 0.5])
    (x, tx), (s, ts) = _pair(u), _pair(np.argsort(u, kind="stable"), "int64")
    (y, ty) = _pair([2.0, 0.1, 9.0])
    _same(ag.searchsorted(x, y, sorter=s), torch.searchsorted(tx, ty, sorter=ts))
    _same(ag.searchsorted(x, y, sorter=s, side="right"), torch.searchsorted(tx, ty, sorter=ts, side="right"))
    (x, tx) = _pair(b)
    _same(ag.searchsorted(x, 2), torch.searchsorted(tx, 2))
    _same(ag.searchsorted(x, 2.5, right=True), torch.searchsorted(tx, 2.5, right=True))
    _same(ag.bucketize(2.0, x), torch.bucketize(2.0, tx))
    (yl, tyl) = _pair([1, 2, 7], "int64")
    _same(ag.searchsorted(x, yl), torch.searchsorted(tx, tyl))
    _same(ag.searchsorted(x, ag.zeros((0, 2))), torch.searchsorted(tx, torch.zeros((0, 2))))


# ---------------------------------------------------------------- bincount / histc
def test_bincount_values():
    for dtype in ("int64", "int32", "uint8", "int8"):
        x, tx = _pair([0, 1, 1, 3, 7, 3], dtype)
        _same(ag.bincount(x), torch.bincount(tx))
        _same(x.bincount(minlength=10), tx.bincount(minlength=10))
        for wd in ("float32", "float64", "int64", "bfloat16"):
            w, tw = _pair([0.5, 1, 2, 3, -1, 0.25], wd)
            _same(ag.bincount(x, w), torch.bincount(tx, tw))
            _same(ag.bincount(x, weights=w, minlength=3), torch.bincount(tx, weights=tw, minlength=3))
    e, te = _pair(np.zeros(0, np.int64), "int64")
    _same(ag.bincount(e), torch.bincount(te))
    _same(ag.bincount(e, minlength=4), torch.bincount(te, minlength=4))


def test_histc_values():
    rng = np.random.default_rng(0)
    a = rng.standard_normal(1000) * 3
    a[:5] = [np.nan, np.inf, -np.inf, 0.0, 10.0]
    for dtype in ("float32", "float64", "bfloat16"):
        x, tx = _pair(a, dtype)
        for kw in [{"bins": 10, "min": -2, "max": 2}, {"bins": 3, "min": 0, "max": 10}, {"bins": 1, "min": -1, "max": 1}]:
            _same(ag.histc(x, **kw), torch.histc(tx, **kw))
        x, tx = _pair(a[5:], dtype)
        for kw in [{}, {"bins": 7}]:
            _same(ag.histc(x, **kw), torch.histc(tx, **kw))
            _same(x.histc(**kw), tx.histc(**kw))
    x, tx = _pair(np.arange(11.0))
    _same(ag.histc(x, bins=3, min=0, max=10), torch.histc(tx, bins=3, min=0, max=10))
    for arr in ([1.0, 1.0], [], 2.0):
        x, tx = _pair(arr)
        _same(ag.histc(x, bins=4), torch.histc(tx, bins=4))


# ---------------------------------------------------------------- errors
def _err(f_ag, f_t):
    with pytest.raises(Exception) as te:
        f_t()
    with pytest.raises(Exception) as ae:
        f_ag()
    assert type(ae.value).__name__ == type(te.value).__name__, (ae.value, te.value)
    assert str(ae.value).split("\n")[0] == str(te.value).split("\n")[0]


def _both(arrs):
    return [_pair(np.asarray(a), d) for a, d in arrs]


ERRORS = {
    "sr_reduce": lambda m, x, i, s: m.scatter_reduce(x, 0, i, s, "foo"),
    "sr_dim": lambda m, x, i, s: m.scatter_reduce(x, 3, i, s, "sum"),
    "sr_index_dtype": lambda m, x, i, s: m.scatter_reduce(x, 0, i.float(), s, "sum"),
    "sr_src_dtype": lambda m, x, i, s: m.scatter_reduce(x, 0, i, s.double(), "sum"),
    "sr_oob": lambda m, x, i, s: m.scatter_reduce(x, 0, i + 5, s, "amax"),
    "sr_neg": lambda m, x, i, s: m.scatter_reduce(x, 0, i - 5, s, "amax"),
    "sr_ndim": lambda m, x, i, s: m.scatter_reduce(x, 0, i[0], s, "sum"),
    "sr_size": lambda m, x, i, s: m.scatter_reduce(x, 1, m.zeros((4, 4), dtype=m.int64), s, "sum"),
    "sr_bool_mean": lambda m, x, i, s: m.scatter_reduce(x > 0, 0, i, s > 0, "mean"),
    "ir_sum": lambda m, x, i, s: x.index_reduce(0, i[0, :3], s[:, :4], "sum"),
    "ir_index_dtype": lambda m, x, i, s: x.index_reduce(0, i[0, :2].float(), s, "prod"),
    "ir_oob": lambda m, x, i, s: x.index_reduce(0, i[0, :2] + 9, s, "prod"),
    "ir_count": lambda m, x, i, s: x.index_reduce(0, i[0, :3], s, "prod"),
    "ir_2d_index": lambda m, x, i, s: x.index_reduce(0, i[:, :1], s, "prod"),
    "ir_shape": lambda m, x, i, s: x.index_reduce(0, i[0, :2], s[:, :3], "prod"),
    "ir_dtype": lambda m, x, i, s: x.index_reduce(0, i[0, :2], s.double(), "prod"),
    "ir_bool_1d": lambda m, x, i, s: (x[0] > 0).index_reduce(0, i[0, :2], s[0, :2] > 0, "amax"),
    "ir_bool_exclude": lambda m, x, i, s: (x > 0).index_reduce(0, i[0, :2], s > 0, "amax", include_self=False),
    "ir_bool_mean": lambda m, x, i, s: (x > 0).index_reduce(0, i[0, :2], s > 0, "mean"),
    "cm_dim": lambda m, x, i, s: m.cummax(x, 2),
    "lcse_int": lambda m, x, i, s: m.logcumsumexp(i, 0),
    "lcse_dim": lambda m, x, i, s: m.logcumsumexp(x, -3),
    "ss_side": lambda m, x, i, s: m.searchsorted(x[0], s, side="foo"),
    "ss_opposite": lambda m, x, i, s: m.searchsorted(x[0], s, side="left", right=True),
    "ss_0d": lambda m, x, i, s: m.searchsorted(x[0, 0], s),
    "ss_dims": lambda m, x, i, s: m.searchsorted(x, s[:, :2]),
    "ss_sorter_dtype": lambda m, x, i, s: m.searchsorted(x[0], s, sorter=x[0]),
    "ss_sorter_size": lambda m, x, i, s: m.searchsorted(x[0], s, sorter=i[0, :2]),
    "ss_sorter_oob": lambda m, x, i, s: m.searchsorted(x[0], s, sorter=i[0] + 7),
    "bk_2d": lambda m, x, i, s: m.bucketize(s, x),
    "bc_float": lambda m, x, i, s: m.bincount(x[0]),
    "bc_neg": lambda m, x, i, s: m.bincount(i[0] - 3),
    "bc_2d": lambda m, x, i, s: m.bincount(i),
    "bc_minlength": lambda m, x, i, s: m.bincount(i[0], minlength=-1),
    "bc_weights": lambda m, x, i, s: m.bincount(i[0], weights=x[0, :2]),
    "bc_bool": lambda m, x, i, s: m.bincount(i[0] > 0),
    "hc_int": lambda m, x, i, s: m.histc(i, bins=3),
    "hc_bins": lambda m, x, i, s: m.histc(x, bins=0),
    "hc_range": lambda m, x, i, s: m.histc(x, bins=3, min=3, max=1),
    "hc_inf": lambda m, x, i, s: m.histc(x, bins=3, min=0, max=float("inf")),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name):
    (x, tx), (i, ti), (s, ts) = _both([(np.arange(12.0).reshape(3, 4), "float32"),
                                        (np.array([[0, 1, 2, 0], [1, 1, 0, 2]]), "int64"),
                                        (np.ones((2, 4)), "float32")])
    before = x.numpy().copy()
    _err(lambda: ERRORS[name](ag, x, i, s), lambda: ERRORS[name](torch, tx, ti, ts))
    np.testing.assert_array_equal(x.numpy(), before)


def test_failed_inplace_leaves_self():
    x = ag.ones((3, 4))
    with pytest.raises(RuntimeError):
        x.scatter_reduce_(0, ag.tensor([[0, 9, 0, 0]]), ag.ones((1, 4)), "sum")
    np.testing.assert_array_equal(x.numpy(), np.ones((3, 4)))
    with pytest.raises(IndexError):
        x.index_reduce_(0, ag.tensor([7]), ag.ones((1, 4)), "prod")
    np.testing.assert_array_equal(x.numpy(), np.ones((3, 4)))


def test_no_grad_outputs():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    assert not ag.searchsorted(x, x).requires_grad
    assert not ag.histc(x, bins=3).requires_grad
    w = ag.tensor([0.5, 1.0], requires_grad=True)
    r = ag.bincount(ag.tensor([0, 1]), weights=w)
    assert r.requires_grad
    with pytest.raises(NotImplementedError):
        r.sum().backward()


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_logcumsumexp_grad_low_precision(dtype):
    a = np.random.default_rng(2).standard_normal((3, 5))
    x, tx = _pair(a, dtype, requires_grad=True)
    g = np.random.default_rng(3).standard_normal((3, 5))
    ag.logcumsumexp(x, 1).backward(ag.tensor(g).to(x.dtype))
    torch.logcumsumexp(tx, 1).backward(torch.tensor(g).to(tx.dtype))
    tol = 5e-2 if dtype == "bfloat16" else 1e-5
    _same(x.grad, tx.grad, tol, tol)
