"""ampgrad.masked (python/ampgrad/masked/) against torch.masked: values and dtypes with broadcast masks,
keepdim, dim tuples, dtype=, all-masked rows, empty and 0-d inputs, NaN; gradients (masked-out elements
get zero) and double backward against torch; torch's exception types for bad arguments."""
import math

import numpy as np
import pytest

import ampgrad as ag

torch = pytest.importorskip("torch")

TM = torch.masked


def _t2a(x):
    if isinstance(x, torch.Tensor):
        if x.dtype == torch.bfloat16:
            return ag.tensor(x.float().numpy()).to(ag.bfloat16)
        return ag.tensor(x.detach().numpy())
    if isinstance(x, torch.dtype):
        return getattr(ag, str(x).split(".")[-1])
    return x


def _np(x):
    if isinstance(x, torch.Tensor):
        return x.detach().to(torch.float64).numpy() if x.dtype.is_floating_point else x.detach().numpy()
    return (x.detach().to(ag.float64) if x.dtype.is_floating_point else x.detach()).numpy()


def _same(a, t, rtol=1e-6, atol=1e-7):
    assert str(a.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (a.dtype, t.dtype)
    assert tuple(a.shape) == tuple(t.shape), (tuple(a.shape), tuple(t.shape))
    np.testing.assert_allclose(_np(a), _np(t), rtol=rtol, atol=atol, equal_nan=True)


def _call(name, x, *args, **kw):
    """(ampgrad result, torch result) of masked.<name>; tensors and dtypes in args/kwargs are converted."""
    t = getattr(TM, name)(x, *args, **kw)
    a = getattr(ag.masked, name)(_t2a(x), *[_t2a(v) for v in args], **{k: _t2a(v) for k, v in kw.items()})
    return a, t


g = torch.Generator().manual_seed(0)
X = torch.randn(3, 4, 5, generator=g, dtype=torch.float64)
MASKS = {
    "full": torch.rand(3, 4, 5, generator=g) > 0.4,
    "broadcast_row": torch.rand(4, 5, generator=g) > 0.3,
    "broadcast_last": torch.tensor([True, False, True, True, False]),
    "all_masked_rows": torch.cat([torch.zeros(1, 4, 5, dtype=torch.bool), torch.rand(2, 4, 5, generator=g) > 0.5]),
    "none": None,
}
REDUCTIONS = ["sum", "prod", "amax", "amin", "mean", "logsumexp", "norm", "var", "std"]
DIMS = [None, 0, -1, (0, 2), ()]


@pytest.mark.parametrize("mask", list(MASKS))
@pytest.mark.parametrize("dim", DIMS, ids=str)
@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("keepdim", [False, True])
def test_reductions_match_torch(name, dim, mask, keepdim):
    m = MASKS[mask]
    kw = {"keepdim": keepdim, "mask": m}
    args = (2.0, dim) if name == "norm" else (dim,)
    a, t = _call(name, X, *args, **kw)
    _same(a, t, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mask", list(MASKS))
@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin", "cumsum", "cumprod"])
@pytest.mark.parametrize("dim", [0, -1, 1])
def test_normalizations_match_torch(name, dim, mask):
    a, t = _call(name, X, dim, mask=MASKS[mask])
    _same(a, t, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mask", list(MASKS))
@pytest.mark.parametrize("ord", [1.0, 2.0, 3.5, math.inf, -math.inf, 0.0])
def test_norm_and_normalize_orders(ord, mask):
    a, t = _call("norm", X, ord, 1, mask=MASKS[mask])
    _same(a, t, rtol=1e-10, atol=1e-12)
    a, t = _call("normalize", X, ord, -1, mask=MASKS[mask])
    _same(a, t, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mask", ["full", "broadcast_row", "none"])
@pytest.mark.parametrize("name", ["argmax", "argmin", "median"])
def test_index_reductions(name, mask):
    for dim in (0, 2, -1):
        a, t = _call(name, X, dim, mask=MASKS[mask])
        _same(a, t)
        a, t = _call(name, X, dim, keepdim=True, mask=MASKS[mask])
        _same(a, t)
    if name != "median":
        a, t = _call(name, X, mask=MASKS[mask])  # dim=None: flattened
        _same(a, t)


def test_median_all_masked_rows_nan_and_int_error():
    m = MASKS["all_masked_rows"]
    a, t = _call("median", X, 2, mask=m)
    _same(a, t)
    assert bool(ag.isnan(a).any())
    xi = (X * 10).to(torch.int32)
    a, t = _call("median", xi, 1, mask=MASKS["full"])
    _same(a, t)
    with pytest.raises(ValueError, match="fully masked out rows"):
        TM.median(xi, 2, mask=m)
    with pytest.raises(ValueError, match="fully masked out rows"):
        ag.masked.median(_t2a(xi), 2, mask=_t2a(m))


@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64, torch.bool,
                                   torch.bfloat16, torch.float32])
@pytest.mark.parametrize("name", ["sum", "prod", "amax", "amin", "argmax", "argmin", "cumsum", "var", "std",
                                  "logsumexp"])
def test_dtypes(name, dtype):
    x = (X * 4).to(dtype)
    m = MASKS["full"]
    args = (1,)
    try:
        t = getattr(TM, name)(x, *args, mask=m)
    except Exception as e:  # noqa: BLE001 - ampgrad must raise the same type
        with pytest.raises(type(e)):
            getattr(ag.masked, name)(_t2a(x), *args, mask=_t2a(m))
        return
    a = getattr(ag.masked, name)(_t2a(x), *args, mask=_t2a(m))
    tol = 1e-2 if dtype == torch.bfloat16 else 1e-5
    _same(a, t, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["sum", "prod", "amax", "mean", "var", "logsumexp", "norm"])
def test_dtype_argument(name):
    x = X.float()
    args = (2.0, 1) if name == "norm" else (1,)
    a, t = _call(name, x, *args, dtype=torch.float64, mask=MASKS["full"])
    _same(a, t, rtol=1e-6)
    a, t = _call("sum", (X * 3).to(torch.int8), 0, dtype=torch.int16, mask=MASKS["full"])
    _same(a, t)


def test_mean_requires_float_dtype():
    xi = X.to(torch.int32)
    for fn in (TM.mean, ag.masked.mean):
        with pytest.raises(ValueError, match="Could not infer output dtype"):
            fn(xi if fn is TM.mean else _t2a(xi))
    a, t = _call("mean", xi, 1, dtype=torch.float32, mask=MASKS["full"])
    _same(a, t, rtol=1e-6)


def test_edge_inputs():
    # 0-d input, with and without mask
    x0 = torch.tensor(2.5, dtype=torch.float64)
    for name in ["sum", "prod", "amax", "amin", "mean", "logsumexp", "var"]:
        for m in (None, torch.tensor(True), torch.tensor(False)):
            a, t = _call(name, x0, mask=m)
            _same(a, t)
            a, t = _call(name, x0, 0, keepdim=True, mask=m)
            _same(a, t)
    # empty reduced dim: identities (sum 0, prod 1, amax -inf) and nan for mean/var
    xe = torch.zeros(3, 0, dtype=torch.float64)
    for name in ["sum", "prod", "mean", "var", "logsumexp"]:
        a, t = _call(name, xe, 1, mask=torch.zeros(3, 0, dtype=torch.bool))
        _same(a, t)
    # NaN in a masked-out position does not leak into the result; in a masked-in one it does
    xn = X.clone()
    xn[0, 0, 0] = math.nan
    for flag in (False, True):
        m = MASKS["full"].clone()
        m[0, 0, 0] = flag
        for name in ["sum", "amax", "mean", "softmax", "var"]:
            a, t = _call(name, xn, -1, mask=m)
            _same(a, t)
    # a mask of another integer dtype is converted to bool
    a, t = _call("sum", X, 1, mask=MASKS["full"].to(torch.uint8))
    _same(a, t)


def test_logaddexp():
    y = torch.randn(3, 4, 5, generator=g, dtype=torch.float64)
    m1, m2 = MASKS["full"], MASKS["broadcast_row"]
    for im, om in [(m1, m2), (None, m2), (m1, None), (None, None), (torch.zeros(5, dtype=torch.bool), m1)]:
        t = TM.logaddexp(X, y, input_mask=im, other_mask=om)
        a = ag.masked.logaddexp(_t2a(X), _t2a(y), input_mask=_t2a(im), other_mask=_t2a(om))
        _same(a, t, rtol=1e-12)
    t = TM.logaddexp(X, y, dtype=torch.float32, input_mask=m1)
    a = ag.masked.logaddexp(_t2a(X), _t2a(y), dtype=ag.float32, input_mask=_t2a(m1))
    _same(a, t, rtol=1e-6)


def _grads(name, x, args, kw, create_graph=False):
    xt = x.clone().requires_grad_()
    xa = _t2a(x).requires_grad_()
    yt = getattr(TM, name)(xt, *args, **kw)
    ya = getattr(ag.masked, name)(xa, *args, **{k: _t2a(v) for k, v in kw.items()})
    cot = torch.randn(yt.shape, generator=g, dtype=torch.float64)
    (gt,) = torch.autograd.grad(yt, xt, cot, create_graph=create_graph)
    (ga,) = ag.autograd.grad(ya, xa, _t2a(cot), create_graph=create_graph)
    return xt, xa, gt, ga


@pytest.mark.parametrize("mask", ["full", "broadcast_row", "none"])
@pytest.mark.parametrize("name,args", [("sum", (1,)), ("prod", (1,)), ("amax", (2,)), ("amin", ((0, 1),)),
                                       ("mean", (None,)), ("logsumexp", (1,)), ("norm", (2.0, 1)),
                                       ("norm", (math.inf, 2)), ("var", (1,)), ("std", ((0, 2),)),
                                       ("softmax", (1,)), ("log_softmax", (2,)), ("softmin", (0,)),
                                       ("cumsum", (1,)), ("cumprod", (2,)), ("normalize", (2.0, 1)),
                                       ("median", (2,))])
def test_gradients_match_torch(name, args, mask):
    kw = {"mask": MASKS[mask]}
    xt, xa, gt, ga = _grads(name, X, args, kw)
    _same(ga, gt, rtol=1e-9, atol=1e-10)
    if mask == "full":  # masked-out elements get exactly zero gradient
        assert (_np(ga)[~MASKS["full"].numpy()] == 0).all()


@pytest.mark.parametrize("name,args", [("sum", (1,)), ("mean", (1,)), ("var", (1,)), ("softmax", (1,)),
                                       ("logsumexp", (2,)), ("norm", (2.0, 1))])
def test_double_backward(name, args):
    kw = {"mask": MASKS["full"]}
    xt, xa, gt, ga = _grads(name, X, args, kw, create_graph=True)
    v = torch.randn(X.shape, generator=g, dtype=torch.float64)
    if not gt.requires_grad:  # linear ops: the gradient does not depend on x
        assert not ga.requires_grad or ag.autograd.grad(ga, xa, _t2a(v), allow_unused=True)[0] is None
        return
    (ggt,) = torch.autograd.grad(gt, xt, v)
    (gga,) = ag.autograd.grad(ga, xa, _t2a(v))
    _same(gga, ggt, rtol=1e-8, atol=1e-10)


def test_logaddexp_gradient():
    y = torch.randn(3, 4, 5, generator=g, dtype=torch.float64)
    xt, yt = X.clone().requires_grad_(), y.clone().requires_grad_()
    xa, ya = _t2a(X).requires_grad_(), _t2a(y).requires_grad_()
    m1, m2 = MASKS["full"], MASKS["broadcast_row"]
    ot = TM.logaddexp(xt, yt, input_mask=m1, other_mask=m2)
    oa = ag.masked.logaddexp(xa, ya, input_mask=_t2a(m1), other_mask=_t2a(m2))
    cot = torch.randn(ot.shape, generator=g, dtype=torch.float64)
    gt = torch.autograd.grad(ot, (xt, yt), cot)
    ga = ag.autograd.grad(oa, (xa, ya), _t2a(cot))
    for a, t in zip(ga, gt):
        _same(a, t, rtol=1e-10, atol=1e-12)


def test_errors_match_torch():
    xa, m = _t2a(X), _t2a(MASKS["full"])
    cases = [
        ("sum", (X, 3), {}),                          # dim out of range
        ("sum", (X, (0, 0)), {}),                     # repeated dim
        ("amax", (X, -4), {}),
        ("sum", (X, 1), {"mask": torch.ones(2, 3, 4, 5, dtype=torch.bool)}),  # mask has more dims
        ("sum", (X, 1), {"mask": torch.ones(3, dtype=torch.bool)}),          # not broadcastable
        ("amax", (X.to(torch.bool), 1), {"mask": MASKS["full"]}),           # no identity for bool amax
        ("softmax", (X, 5), {}),
        ("var", (X, 1, True), {"correction": 1}),                         # unbiased and correction
        ("norm", (X.float(), -math.inf, 1), {"mask": MASKS["full"]}),
    ]
    for name, args, kw in cases:
        try:
            getattr(TM, name)(*args, **kw)
            expected = None
        except Exception as e:  # noqa: BLE001
            expected = type(e)
        if expected is None:
            a, t = _call(name, *args, **kw)
            _same(a, t, rtol=1e-6)
            continue
        with pytest.raises(expected):
            getattr(ag.masked, name)(*[_t2a(v) for v in args], **{k: _t2a(v) for k, v in kw.items()})
    assert xa is not None and m is not None


def test_output_mask_and_input_mask():
    m = MASKS["broadcast_row"]
    a = ag.masked._input_mask(_t2a(X), mask=_t2a(m))
    t = TM._input_mask(X, mask=m)
    _same(a, t)
    for op_a, op_t, args in [(ag.masked.sum, TM.sum, (1,)), (ag.masked.softmax, TM.softmax, (1,))]:
        a = ag.masked._output_mask(op_a, _t2a(X), *args, mask=_t2a(m), keepdim=False)
        t = TM._output_mask(op_t, X, *args, mask=m, keepdim=False)
        _same(a, t)
