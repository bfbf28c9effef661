"""torch's dtype-specific CPU paths, matched exactly: integer convolution (wrapping arithmetic, and the
dtypes each of torch's slow paths accepts), uint8 bilinear / bicubic interpolation (torch's separable
int16-weight kernel), float16 / bfloat16 normal_ (torch's reduced-precision normal_fill, tail block
included), and float16 / bfloat16 attention and grid_sample (torch's rounding order)."""
import itertools

import numpy as np
import pytest

import ampgrad

torch = pytest.importorskip("torch")
F, G = torch.nn.functional, ampgrad.nn.functional


def A(t):
    """torch tensor -> ampgrad tensor (same dtype, same values)."""
    if t.dtype == torch.bfloat16:
        return ampgrad.tensor(t.float().numpy()).to(ampgrad.bfloat16)
    if t.dtype == torch.float16:
        return ampgrad.tensor(t.float().numpy()).to(ampgrad.float16)
    return ampgrad.tensor(t.numpy())


def same(a, t):
    """ampgrad result a equals torch result t bit for bit (dtype and values)."""
    assert str(a.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    if t.dtype in (torch.bfloat16, torch.float16):
        np.testing.assert_array_equal(a.float().numpy(), t.float().numpy())
    else:
        np.testing.assert_array_equal(a.numpy(), t.numpy())


def bits16(x):
    """The 16-bit patterns of a float16 / bfloat16 tensor (torch or ampgrad), as int32."""
    f = x.float().numpy().astype(np.float32)
    if "bfloat16" in str(x.dtype):
        return (f.view(np.int32) >> 16).astype(np.int32)
    return f.astype(np.float16).view(np.int16).astype(np.int32)


def run(f, *args, **kw):
    try:
        return f(*args, **kw)
    except Exception as e:  # noqa: BLE001 -- compared with torch's exception below
        return e


# ---------------------------------------------------------------- integer convolution
INT_DTYPES = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.bool]


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("dtype", INT_DTYPES, ids=str)
@pytest.mark.parametrize("transposed", [False, True])
def test_integer_convolution_matches_torch(nd, dtype, transposed):
    g = torch.Generator().manual_seed(nd * 10 + INT_DTYPES.index(dtype))
    name = ("conv_transpose%dd" if transposed else "conv%dd") % nd
    for stride, pad, dil, groups in [(1, 0, 1, 1), (2, 1, 2, 2), (1, 2, 1, 3), (3, 1, 1, 1)]:
        x = torch.randint(-100, 100, (2, 6) + (5,) * nd, generator=g).to(dtype)
        w = torch.randint(-100, 100, (6, 6 // groups) + (3,) * nd, generator=g).to(dtype)
        b = torch.randint(-100, 100, (6,), generator=g).to(dtype)
        kw = dict(stride=stride, padding=pad, dilation=dil, groups=groups)
        if transposed:
            kw["output_padding"] = stride - 1
        t = run(getattr(F, name), x, w, b, **kw)
        a = run(getattr(G, name), A(x), A(w), A(b), **kw)
        if isinstance(t, Exception):
            # torch's slow paths: every integer dtype for slow_conv2d / compute_columns3d; int64 only
            # dilated or transposed; no bool
            assert type(a) is type(t) and str(a) == str(t), (kw, a, t)
        else:
            assert not isinstance(a, Exception), (kw, a)
            same(a, t)


def test_integer_convolution_wraps_like_torch():
    x = torch.full((1, 1, 4), 100, dtype=torch.int8)
    w = torch.full((1, 1, 3), 100, dtype=torch.int8)
    same(G.conv1d(A(x), A(w)), F.conv1d(x, w))  # 30000 wraps to 48
    x, w = torch.full((1, 1, 4), 2 ** 40), torch.full((1, 1, 3), 2 ** 30)
    same(G.conv1d(A(x), A(w)), F.conv1d(x, w))  # 3 * 2**70 wraps to 0


# ---------------------------------------------------------------- uint8 interpolation
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_uint8_interpolation_matches_torch(mode, align_corners):
    g = torch.Generator().manual_seed(7)
    for shape, kw in [((2, 3, 4, 4), dict(size=(3, 3))), ((2, 3, 4, 4), dict(size=(5, 5))),
                      ((1, 2, 7, 5), dict(size=(4, 9))), ((1, 2, 7, 5), dict(size=(7, 3))),
                      ((2, 3, 4, 4), dict(scale_factor=1.7)), ((2, 3, 4, 4), dict(scale_factor=0.6)),
                      ((1, 5, 30, 31), dict(size=(13, 64))), ((1, 1, 3, 3), dict(size=(3, 3)))]:
        x = torch.randint(0, 256, shape, generator=g, dtype=torch.uint8)
        t = F.interpolate(x, mode=mode, align_corners=align_corners, **kw)
        same(G.interpolate(A(x), mode=mode, align_corners=align_corners, **kw), t)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_uint8_antialias_matches_torch(mode):
    g = torch.Generator().manual_seed(8)
    for shape, size in [((1, 3, 32, 29), (9, 11)), ((2, 2, 8, 8), (16, 5)), ((1, 1, 40, 3), (7, 3))]:
        x = torch.randint(0, 256, shape, generator=g, dtype=torch.uint8)
        t = F.interpolate(x, size=size, mode=mode, antialias=True)
        same(G.interpolate(A(x), size=size, mode=mode, antialias=True), t)


def test_uint8_interpolation_saturates():
    # bicubic overshoots at a step edge: torch clamps to [0, 255] instead of wrapping
    x = torch.zeros(1, 1, 4, 8, dtype=torch.uint8)
    x[..., 4:] = 255
    t = F.interpolate(x, size=(4, 13), mode="bicubic")
    assert t.min() == 0 and t.max() == 255
    same(G.interpolate(A(x), size=(4, 13), mode="bicubic"), t)


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int32, torch.bool], ids=str)
def test_integer_interpolation_refused_like_torch(dtype):
    for shape, mode in [((1, 2, 5), "linear"), ((1, 2, 3, 3, 3), "trilinear"), ((1, 2, 4, 4), "bilinear"),
                        ((1, 2, 4, 4), "bicubic")]:
        x = torch.zeros(shape, dtype=dtype)
        t = run(F.interpolate, x, scale_factor=2, mode=mode)
        a = run(G.interpolate, A(x), scale_factor=2, mode=mode)
        if dtype == torch.uint8 and mode in ("bilinear", "bicubic"):
            same(a, t)
            continue
        assert isinstance(t, NotImplementedError) and type(a) is type(t) and str(a) == str(t), (mode, a, t)


# ---------------------------------------------------------------- float16 / bfloat16 normal_
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_reduced_precision_normal_matches_torch(dtype):
    adt = getattr(ampgrad, str(dtype).split(".")[-1])
    for n, (mean, std) in itertools.product([16, 17, 20, 24, 31, 33, 47, 100, 1000], [(0.0, 1.0), (0.3, 2.0)]):
        torch.manual_seed(5)
        t = torch.empty(n, dtype=dtype).normal_(mean, std)
        ampgrad.manual_seed(5)
        a = ampgrad.empty(n, dtype=adt).normal_(mean, std)
        torch.manual_seed(6)
        t2 = torch.randn(3, n, dtype=dtype)
        ampgrad.manual_seed(6)
        a2 = ampgrad.randn(3, n, dtype=adt)
        for x, y in ((a, t), (a2, t2)):
            # torch's float32 normals come from its vectorised log / sin / cos (1-2 ulp from ampgrad's,
            # README), so a rounding to 16 bits may land one ulp away; every element, the last 16
            # included, is the same draw.
            d = np.abs(bits16(x) - bits16(y))
            assert d.max() <= 1 and (d == 0).mean() > 0.97, (n, mean, std, d)


# ---------------------------------------------------------------- attention and grid_sample
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_reduced_precision_attention_math_path_matches_torch(dtype):
    g = torch.Generator().manual_seed(3)
    q = torch.randn(4, 3, 8, generator=g).to(dtype)
    k = torch.randn(4, 6, 8, generator=g).to(dtype)
    v = torch.randn(4, 6, 8, generator=g).to(dtype)
    for kw in [dict(dropout_p=0.5, is_causal=True), dict(dropout_p=0.3), dict(is_causal=True), {}]:
        torch.manual_seed(0)
        t = F.scaled_dot_product_attention(q, k, v, **kw)
        ampgrad.manual_seed(0)
        same(G.scaled_dot_product_attention(A(q), A(k), A(v), **kw), t)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_reduced_precision_grid_sample_bilinear_matches_torch(dtype, padding_mode, align_corners):
    g = torch.Generator().manual_seed(4)
    x = torch.randn(2, 3, 5, 7, generator=g).to(dtype)
    grid = (torch.rand(2, 6, 4, 2, generator=g) * 2.4 - 1.2).to(dtype)
    t = F.grid_sample(x, grid, mode="bilinear", padding_mode=padding_mode, align_corners=align_corners)
    same(G.grid_sample(A(x), A(grid), mode="bilinear", padding_mode=padding_mode, align_corners=align_corners), t)
