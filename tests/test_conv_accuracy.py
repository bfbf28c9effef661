"""bf16/fp16 convolution accuracy: ampgrad computes in fp32 and rounds once (torch's opmath rule), so
its error against a float64 reference of the same (rounded) inputs must be no worse than torch's own
low-precision result, beyond one rounding of the output. Forward and both gradients."""
import numpy as np
import pytest

import ampgrad

torch = pytest.importorskip("torch")

CASES = [
    ("conv2d 3x3", "conv2d", (4, 16, 12, 12), (16, 16, 3, 3), {"padding": 1}),
    ("conv2d stride groups", "conv2d", (2, 8, 11, 9), (12, 4, 3, 2), {"stride": 2, "groups": 2, "dilation": (1, 2)}),
    ("conv2d 1x1", "conv2d", (2, 32, 6, 6), (16, 32, 1, 1), {}),
    ("conv1d", "conv1d", (3, 16, 40), (8, 16, 5), {"padding": 2}),
    ("conv3d", "conv3d", (2, 4, 5, 6, 5), (6, 4, 3, 3, 3), {"padding": 1}),
    ("conv_transpose2d", "conv_transpose2d", (2, 16, 6, 6), (16, 8, 4, 4), {"stride": 2, "padding": 1}),
]


def _err(got, ref):
    return float(np.abs(got.detach().double().numpy() - ref).max())


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name,fn,xs,ws,kw", CASES, ids=[c[0] for c in CASES])
def test_low_precision_conv_error_no_worse_than_torch(name, fn, xs, ws, kw, dtype):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(xs)
    w = rng.standard_normal(ws) / np.sqrt(np.prod(ws[1:]))
    b = rng.standard_normal(ws[1] if "transpose" in fn else ws[0])
    # float64 reference on the low-precision inputs
    tdt = getattr(torch, dtype)
    tl = [torch.tensor(a).to(tdt).requires_grad_(True) for a in (x, w, b)]
    td = [t.detach().double().requires_grad_(True) for t in tl]
    al = [ampgrad.tensor(t.detach().double().numpy()).to(getattr(ampgrad, dtype)).requires_grad_(True) for t in tl]
    ref = getattr(torch.nn.functional, fn)(*td, **kw)
    gy = torch.tensor(rng.standard_normal(tuple(ref.shape)))
    ref_grads = torch.autograd.grad(ref, td, gy)
    yt = getattr(torch.nn.functional, fn)(*tl, **kw)
    t_grads = torch.autograd.grad(yt, tl, gy.to(tdt))
    ya = getattr(ampgrad.nn.functional, fn)(*al, **kw)
    a_grads = ampgrad.autograd.grad(ya, al, ampgrad.tensor(gy.numpy()).to(getattr(ampgrad, dtype)))
    eps = 2.0 ** -8 if dtype == "bfloat16" else 2.0 ** -11  # one rounding: half an ulp, relative
    for what, a, t, r in [("output", ya, yt, ref.detach().numpy())] + [
            (f"grad {i}", ga, gt, gr.numpy()) for i, (ga, gt, gr) in enumerate(zip(a_grads, t_grads, ref_grads))]:
        ea, et = _err(a, r), _err(t, r)
        bound = max(et, float(np.abs(r).max()) * eps) * 1.05 + 1e-12
        assert ea <= bound, f"{name} {dtype} {what}: ampgrad error {ea:.3g} > torch's {et:.3g} (bound {bound:.3g})"


# Note [Implicit GEMM convolution]: fp32 convolutions with unit stride along the last dim (at least 8
# outputs there) run without an im2col matrix, forward and, for stride 1, the input gradient (also the
# stride-1 transposed convolution); the rest keep im2col. Values and both gradients against float64
# torch over dims, groups, dilation, padding (including padding > dilation * (k - 1), which keeps
# im2col for the input gradient), ragged last-dim widths and stride.
IMPLICIT = [(dims, groups, dil, pad, k, width, bias, stride)
            for dims in (1, 2, 3) for groups, dil, pad, k, width, bias, stride in
            [(1, 1, 1, 3, 40, True, 1), (2, 2, 2, 3, 9, False, 1), (1, 1, 0, 1, 13, True, 1), (2, 1, 3, 3, 17, True, 1),
             (1, 2, 1, 3, 33, False, 2), (1, 1, 0, 3, 8, True, 1), (2, 1, 1, 3, 12, True, 2)]]


# output rows at most 16 wide take 24-row tiles (two A panels) when 21+ output channels remain
WIDE = [(2, 1, 1, 1, 3, 20, True, 2, 4, 32), (2, 1, 1, 1, 3, 14, False, 1, 8, 21), (1, 2, 1, 1, 3, 30, True, 2, 6, 50),
        (3, 1, 1, 1, 3, 12, True, 1, 3, 24)]


@pytest.mark.parametrize("dims,groups,dil,pad,k,width,bias,stride,C,O",
                         [c + (4, 6) for c in IMPLICIT] + WIDE)
def test_fp32_conv_implicit_gemm_against_float64(dims, groups, dil, pad, k, width, bias, stride, C, O):
    rng = np.random.default_rng(dims * 100 + width)
    sp = (width,) if dims == 1 else ((5, width) if dims == 2 else (3, 4, width))
    x = rng.standard_normal((2, C) + sp)
    w = rng.standard_normal((O, C // groups) + (k,) * dims)
    b = rng.standard_normal(O) if bias else None
    st = (1,) * (dims - 1) + (stride,)
    kw = dict(stride=st, padding=pad, dilation=dil, groups=groups)

    def run(L, dt):
        X = L.tensor(x.astype(dt), requires_grad=True)
        W = L.tensor(w.astype(dt), requires_grad=True)
        B = None if b is None else L.tensor(b.astype(dt), requires_grad=True)
        y = getattr(L.nn.functional, f"conv{dims}d")(X, W, B, **kw)
        gy = np.cos(np.arange(int(np.prod(tuple(y.shape))))).reshape(tuple(y.shape)).astype(dt)
        y.backward(L.tensor(gy))
        return [t.detach().double().numpy() for t in (y, X.grad, W.grad)]

    got, ref = run(ampgrad, np.float32), run(torch, np.float64)
    for g_, r_, what in zip(got, ref, ("y", "grad x", "grad w")):
        assert g_.shape == r_.shape
        np.testing.assert_allclose(g_, r_, rtol=1e-5, atol=2e-5 * np.abs(r_).max(), err_msg=what)
    if pad <= dil * (k - 1):  # the transposed convolution of the same geometry
        wt = rng.standard_normal((C, O // groups) + (k,) * dims)
        outs = [getattr(L.nn.functional, f"conv_transpose{dims}d")(L.tensor(x.astype(dt)), L.tensor(wt.astype(dt)), None, **kw)
                .double().numpy() for L, dt in ((ampgrad, np.float32), (torch, np.float64))]
        np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5, atol=2e-5 * np.abs(outs[1]).max())


# Note [Implicit GEMM weight gradient]: the fp32 weight gradient reads the padded input in place (tiles of
# gw^T split between threads, images in ~4 MB chunks accumulated in turn). Against float64 torch: strided
# transposed convolutions (their weight gradient is a stride-2 product in conv space), stride (2, 1),
# groups with more than 32 output channels per group (a ragged second panel), Kdim not a multiple of the
# 12-row tile, and images large enough that every chunk holds one image (the accumulate path).
WGRAD = [("conv_transpose2d", (4, 16, 12, 10), (16, 12, 4, 4), dict(stride=2, padding=1)),
         ("conv_transpose2d", (2, 8, 9, 11), (8, 40, 3, 3), dict(stride=2, padding=1, output_padding=1)),
         ("conv_transpose1d", (3, 6, 20), (6, 5, 5), dict(stride=2, padding=2)),
         ("conv2d", (2, 10, 17, 19), (70, 5, 3, 3), dict(stride=(2, 1), padding=1, groups=2)),
         ("conv2d", (3, 5, 9, 33), (7, 5, 2, 5), dict(stride=2, dilation=(2, 1), padding=(1, 2))),
         ("conv3d", (2, 3, 5, 6, 18), (4, 3, 3, 3, 3), dict(stride=(1, 2, 2), padding=1)),
         ("conv2d", (3, 8, 190, 200), (4, 8, 3, 3), dict(padding=1))]


@pytest.mark.parametrize("fn,xs,ws,kw", WGRAD, ids=[f"{c[0]}-{i}" for i, c in enumerate(WGRAD)])
def test_fp32_conv_weight_gradient_against_float64(fn, xs, ws, kw):
    rng = np.random.default_rng(len(xs) * 7 + ws[0])
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)

    def run(L, dt):
        X = L.tensor(x.astype(dt), requires_grad=True)
        W = L.tensor(w.astype(dt), requires_grad=True)
        y = getattr(L.nn.functional, fn)(X, W, **kw)
        gy = np.sin(np.arange(int(np.prod(tuple(y.shape))))).reshape(tuple(y.shape)).astype(dt)
        y.backward(L.tensor(gy))
        return [t.detach().double().numpy() for t in (W.grad, X.grad)]

    got, ref = run(ampgrad, np.float32), run(torch, np.float64)
    for g_, r_, what in zip(got, ref, ("grad w", "grad x")):
        assert g_.shape == r_.shape
        np.testing.assert_allclose(g_, r_, rtol=1e-5, atol=3e-5 * np.abs(r_).max(), err_msg=what)
