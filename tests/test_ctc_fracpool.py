"""ctc_loss (torch.ctc_loss, F.ctc_loss, nn.CTCLoss) and fractional max pooling (F.fractional_max_pool2d/3d,
nn.FractionalMaxPool2d/3d) against torch: values, gradients (torch's formulas), float64 finite differences,
double backward, node names, autocast, and torch's errors."""
import numpy as np
import pytest

import ampgrad
import ampgrad.nn.functional as AF
from ampgrad.autograd import gradcheck

torch = pytest.importorskip("torch")
import torch.nn.functional as TF  # noqa: E402


def _t(lib, a, **kw):
    return lib.tensor(np.asarray(a), **kw)


def _np(t):
    return t.detach().float().numpy() if t.dtype in (ampgrad.bfloat16, torch.bfloat16) else t.detach().numpy()


# --------------------------------------------------------------------------------------------- CTC

def _ctc_case(seed, T=12, N=4, C=6, S=5, concat=False, dtype=np.float32, short_input=False):
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((T, N, C)).astype(dtype)
    tl = rng.integers(0, S + 1, N)
    il = np.full(N, T) if not short_input else rng.integers(max(1, T // 2), T + 1, N)
    tgt = rng.integers(1, C, (N, S))
    if concat:
        tgt = np.concatenate([tgt[i, :tl[i]] for i in range(N)])
    return logits, tgt, il, tl


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("concat", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("lengths_as", ["tuple", "tensor"])
def test_ctc_values_and_grads_match_torch(reduction, concat, dtype, lengths_as):
    for seed in range(3):
        logits, tgt, il, tl = _ctc_case(seed, concat=concat, dtype=dtype, short_input=seed == 1)
        out = []
        for L, F in ((ampgrad, AF), (torch, TF)):
            x = _t(L, logits, requires_grad=True)
            lp = F.log_softmax(x, -1)
            lp.retain_grad()
            lens = (tuple(int(v) for v in il), tuple(int(v) for v in tl)) if lengths_as == "tuple" else \
                (_t(L, il), _t(L, tl))
            r = F.ctc_loss(lp, _t(L, tgt), *lens, blank=0, reduction=reduction)
            (r * _t(L, np.linspace(0.5, 1.5, r.numel()).reshape(tuple(r.shape)).astype(dtype))).sum().backward()
            out.append((_np(r), _np(lp.grad), _np(x.grad), r.grad_fn.name()))
        a, t = out
        tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-12)
        np.testing.assert_allclose(a[0], t[0], **tol)
        np.testing.assert_allclose(a[1], t[1], **tol)  # torch's formula w.r.t. log_probs
        np.testing.assert_allclose(a[2], t[2], **tol)
        assert a[3] == t[3]


def test_ctc_blank_zero_infinity_unbatched_and_impossible_alignments():
    rng = np.random.default_rng(7)
    logits = rng.standard_normal((6, 3, 5)).astype(np.float64)
    tgt = np.array([[1, 1, 1, 2], [0, 0, 3, 3], [2, 4, 2, 4]])
    il, tl = (2, 6, 6), (3, 4, 0)   # sample 0 cannot be aligned (3 repeated labels need 5 frames): inf
    for zi in (False, True):
        res = []
        for L, F in ((ampgrad, AF), (torch, TF)):
            x = _t(L, logits, requires_grad=True)
            r = F.ctc_loss(F.log_softmax(x, -1), _t(L, tgt), il, tl, blank=4, reduction="none", zero_infinity=zi)
            r.sum().backward()
            res.append((_np(r), _np(x.grad), r.grad_fn.name(),
                        [n[0].name() if n[0] is not None else None for n in r.grad_fn.next_functions]))
        np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-12)
        np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-10, atol=1e-12, equal_nan=True)
        assert res[0][2:] == res[1][2:]
        assert np.isinf(res[0][0][0]) != zi  # the impossible alignment: inf, or 0 with zero_infinity
    # unbatched (T, C) with a 1-D target and 0-d / 1-element lengths
    for lens in (((6,), (2,)), "tensor0d"):
        res = []
        for L, F in ((ampgrad, AF), (torch, TF)):
            x = _t(L, logits[:, 0], requires_grad=True)
            ln = (_t(L, 6), _t(L, 2)) if lens == "tensor0d" else lens
            r = F.ctc_loss(F.log_softmax(x, -1), _t(L, [1, 2]), *ln, reduction="none")
            r.backward()
            res.append((_np(r), _np(x.grad), tuple(r.shape), r.grad_fn.name()))
        np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-12)
        np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-10, atol=1e-12)
        assert res[0][2:] == res[1][2:]


def test_ctc_gradcheck_through_log_softmax_and_module():
    logits, tgt, il, tl = _ctc_case(3, T=7, N=2, C=4, S=3, dtype=np.float64)
    x = _t(ampgrad, logits, requires_grad=True)
    f = lambda x: AF.ctc_loss(AF.log_softmax(x, -1), _t(ampgrad, tgt), tuple(il), tuple(tl))  # noqa: E731
    assert gradcheck(f, (x,))
    m, tm = ampgrad.nn.CTCLoss(blank=0, reduction="sum"), torch.nn.CTCLoss(blank=0, reduction="sum")
    a = m(AF.log_softmax(x, -1), _t(ampgrad, tgt), _t(ampgrad, il), _t(ampgrad, tl))
    t = tm(TF.log_softmax(_t(torch, logits), -1), _t(torch, tgt), _t(torch, il), _t(torch, tl))
    np.testing.assert_allclose(_np(a), _np(t), rtol=1e-12)
    # torch does not differentiate its CTC backward: the same error
    for L, F in ((ampgrad, AF), (torch, TF)):
        lp = F.log_softmax(_t(L, logits, requires_grad=True), -1)
        g, = L.autograd.grad(F.ctc_loss(lp, _t(L, tgt), tuple(il), tuple(tl)), lp, create_graph=True)
        with pytest.raises(RuntimeError, match="derivative for aten::_ctc_loss_backward is not implemented"):
            g.sum().backward()


def test_ctc_autocast_runs_in_float32():
    logits, tgt, il, tl = _ctc_case(4)
    res = []
    for L, F in ((ampgrad, AF), (torch, TF)):
        lp = F.log_softmax(_t(L, logits), -1).to(L.bfloat16)
        with L.autocast("cpu", dtype=L.bfloat16):
            r = F.ctc_loss(lp, _t(L, tgt), tuple(il), tuple(tl), reduction="none")
        res.append(r)
        with pytest.raises(NotImplementedError, match="\"ctc_loss_cpu\" not implemented for 'BFloat16'"):
            F.ctc_loss(lp, _t(L, tgt), tuple(il), tuple(tl))
    assert res[0].dtype == ampgrad.float32 and res[1].dtype == torch.float32
    np.testing.assert_allclose(_np(res[0]), _np(res[1]), rtol=1e-6)


CTC_ERRORS = [
    dict(il=(6, 5), tl=(2, 2)), dict(il=(5, 5), tl=(3, 2)), dict(il=(5,), tl=(2, 2)), dict(il=(5, 5), tl=(2,)),
    dict(blank=4), dict(blank=-1), dict(il=(-1, 5)), dict(tl=(-1, 2)), dict(tgt=[1, 2, 1]),
    dict(lp_shape=(1, 5, 2, 4)), dict(tgt=[[[1, 2]]]), dict(tgt=[[1, 2]]), dict(lp_shape=(0, 2, 4), il=(0, 0)),
    dict(lp_dtype="float16"), dict(lp_dtype="int64"), dict(il=5), dict(reduction="foo"),
    dict(il="float"), dict(tgt=[[1, 2], [1, 1]], il=(5, 5), tl=(2, 2), tgt_dtype="float32"),
]


@pytest.mark.parametrize("case", range(len(CTC_ERRORS)))
def test_ctc_errors_like_torch(case):
    c = CTC_ERRORS[case]
    outcomes = []
    for L, F in ((ampgrad, AF), (torch, TF)):
        shape = c.get("lp_shape", (5, 2, 4))
        lp = L.randn(*shape).log_softmax(-1) if shape[0] else L.zeros(*shape)
        dt = c.get("lp_dtype")
        if dt:
            lp = lp.to(getattr(L, dt))
        tgt = _t(L, c.get("tgt", [[1, 2], [1, 1]]))
        if c.get("tgt_dtype"):
            tgt = tgt.to(getattr(L, c["tgt_dtype"]))
        il = c.get("il", (5, 5))
        if il == "float":
            il = L.tensor([5.0, 5.0])
        try:
            r = F.ctc_loss(lp, tgt, il, c.get("tl", (2, 2)), blank=c.get("blank", 0),
                           reduction=c.get("reduction", "mean"))
            outcomes.append(("ok", tuple(r.shape)))
        except Exception as e:  # noqa: BLE001
            outcomes.append((type(e).__name__, str(e).split("\n")[0][:60]))
    a, t = outcomes
    assert a[0] == t[0], outcomes
    if a[0] in ("RuntimeError", "ValueError", "NotImplementedError"):
        assert a[1] == t[1], outcomes


def test_ctc_out_of_range_target_is_refused():
    lp = ampgrad.randn(5, 2, 4).log_softmax(-1)
    with pytest.raises(IndexError, match="out of the label range"):
        AF.ctc_loss(lp, ampgrad.tensor([[1, 7], [1, 1]]), (5, 5), (2, 2))
    # padding beyond target_length is not read
    r = AF.ctc_loss(lp, ampgrad.tensor([[1, -1], [1, 1]]), (5, 5), (1, 2), reduction="none")
    assert np.isfinite(r.numpy()).all()


# ------------------------------------------------------------------------------- fractional max pool

@pytest.mark.parametrize("nd", [2, 3])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
@pytest.mark.parametrize("batched", [True, False])
def test_fractional_max_pool_matches_torch(nd, dtype, batched):
    rng = np.random.default_rng(nd * 10 + batched)
    shape = (2, 3, 9, 8) if nd == 2 else (2, 3, 7, 8, 9)
    x = rng.standard_normal(shape).astype(np.float32)
    x.reshape(-1)[::7] = 0.5  # ties inside windows: the first maximum wins, as in torch
    x.reshape(-1)[3] = np.nan  # a NaN is the maximum of its windows
    if not batched:
        x = x[0]
    samples = rng.random((2 if batched else 1, 3, nd)).astype(np.float32)
    out_size = (4, 3) if nd == 2 else (3, 4, 2)
    gy_np = rng.standard_normal(x.shape[:-nd] + out_size).astype(np.float32)
    res = []
    for L, F in ((ampgrad, AF), (torch, TF)):
        dt = getattr(L, dtype)
        xi = _t(L, x).to(dt).requires_grad_()
        fn = F.fractional_max_pool2d if nd == 2 else F.fractional_max_pool3d
        y, idx = fn(xi, 2, output_size=out_size, return_indices=True, _random_samples=_t(L, samples).to(dt))
        gy = _t(L, gy_np).to(dt).requires_grad_()
        g, = L.autograd.grad(y, xi, gy, create_graph=True)
        gg, = L.autograd.grad(g, gy, L.ones_like(g))
        res.append((_np(y), idx.numpy(), _np(g), _np(gg), y.grad_fn.name(), g.grad_fn.name()))
    a, t = res
    np.testing.assert_array_equal(a[1], t[1])
    np.testing.assert_array_equal(a[0], t[0])
    np.testing.assert_allclose(a[2], t[2], rtol=1e-2 if dtype in ("bfloat16", "float16") else 1e-6)
    np.testing.assert_array_equal(a[3], t[3])
    assert a[4:] == t[4:]


def test_fractional_max_pool_seeded_samples_and_ratio_match_torch():
    x = np.random.default_rng(0).standard_normal((2, 3, 17, 13)).astype(np.float32)
    res = []
    for L, F in ((ampgrad, AF), (torch, TF)):
        L.manual_seed(11)
        a = F.fractional_max_pool2d(_t(L, x), (3, 2), output_ratio=(0.5, 0.6))
        L.manual_seed(12)
        m = L.nn.FractionalMaxPool2d(3, output_ratio=0.5, return_indices=True)
        b, bi = m(_t(L, x))
        L.manual_seed(13)
        c = L.nn.FractionalMaxPool3d(2, output_size=(1, 4, 5))(_t(L, x))  # an unbatched 4-d input
        res.append((_np(a), _np(b), bi.numpy(), _np(c), repr(m)))
    for u, v in zip(*res):
        if isinstance(u, str):
            continue
        np.testing.assert_array_equal(u, v)


def test_fractional_max_pool_jvp_and_gradcheck():
    x = ampgrad.randn(1, 2, 6, 7, dtype=ampgrad.float64, requires_grad=True)
    s = ampgrad.rand(1, 2, 2, dtype=ampgrad.float64)
    assert gradcheck(lambda x: AF.fractional_max_pool2d(x, 2, output_size=3, _random_samples=s), (x,),
                     check_forward_ad=True)


FMP_ERRORS = [
    dict(output_size=None), dict(output_ratio=0.5, output_size=None), dict(output_ratio=(0.5, 0.5, 0.5), output_size=None),
    dict(kernel=8), dict(output_size=8), dict(output_size=9), dict(kernel=(2, 2, 2)), dict(output_size=(4, 4, 4)),
    dict(samples=(2, 3, 3)), dict(samples=(1, 3, 2)), dict(samples=(2, 3, 2), samples_dtype="float64"),
    dict(shape=(3, 9, 8)), dict(shape=(9, 8)), dict(shape=(0, 3, 9, 8)), dict(shape=(2, 0, 9, 8)),
    dict(dtype="int64"), dict(output_size=-1), dict(output_size=0), dict(kernel=0),
    dict(shape=(2, 3, 4, 5, 6)), dict(samples=(2, 3, 2, 1)), dict(samples=(2, 4, 2)),
    dict(nd=3, shape=(2, 3, 7, 8, 9), output_size=7), dict(nd=3, shape=(2, 3, 7, 8, 9), output_size=(6, 4, 4)),
    dict(nd=3, shape=(2, 3, 7, 8, 9), output_size=(4, 4, 8)), dict(nd=3, shape=(2, 3, 7, 8, 9), output_size=4, samples=(2, 3, 2)),
    dict(nd=3, shape=(7, 8, 9), output_size=4),
]


@pytest.mark.parametrize("case", range(len(FMP_ERRORS)))
def test_fractional_max_pool_errors_like_torch(case):
    c = FMP_ERRORS[case]
    outcomes = []
    for L, F in ((ampgrad, AF), (torch, TF)):
        nd = c.get("nd", 2)
        x = L.ones(*c.get("shape", (2, 3, 9, 8)))
        if c.get("dtype"):
            x = x.to(getattr(L, c["dtype"]))
        kw = {"output_size": c.get("output_size", 4)}
        if "output_ratio" in c:
            kw["output_ratio"] = c["output_ratio"]
        if "samples" in c:
            kw["_random_samples"] = L.rand(*c["samples"]).to(getattr(L, c.get("samples_dtype", "float32")))
        fn = F.fractional_max_pool2d if nd == 2 else F.fractional_max_pool3d
        try:
            r = fn(x, c.get("kernel", 2), **kw)
            outcomes.append(("ok", tuple(r.shape)))
        except Exception as e:  # noqa: BLE001
            outcomes.append((type(e).__name__, str(e).split("\n")[0][:70]))
    a, t = outcomes
    assert a[0] == t[0], outcomes
    if a[0] != "ok" and a[0] != "IndexError":
        assert a[1] == t[1], outcomes
    else:
        assert a == t or a[0] == "IndexError", outcomes


def test_fractional_modules_constructor_errors_like_torch():
    for L in (ampgrad, torch):
        with pytest.raises(ValueError, match="requires specifying either an output size, or a pooling ratio"):
            L.nn.FractionalMaxPool2d(2)
        with pytest.raises(ValueError, match="only one of output_size and output_ratio may be specified"):
            L.nn.FractionalMaxPool3d(2, output_size=3, output_ratio=0.5)
        with pytest.raises(ValueError, match=r"output_ratio must be between 0 and 1 \(got 1.5\)"):
            L.nn.FractionalMaxPool2d(2, output_ratio=1.5)


def test_fractional_max_pool_autocast_float32():
    x = np.random.default_rng(2).standard_normal((1, 2, 8, 8)).astype(np.float32)
    for L, F in ((ampgrad, AF), (torch, TF)):
        with L.autocast("cpu", dtype=L.bfloat16):
            y = F.fractional_max_pool2d(_t(L, x).bfloat16(), 2, output_size=4)
        assert str(y.dtype).endswith("float32")
