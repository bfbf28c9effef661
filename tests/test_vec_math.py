"""Accuracy of the vectorized CPU math (kernels/cpu/vec_math.h, Note [Vector math]) and of the float32
cascade sums (Note [Float sums]): max ulp error against float64 references over wide ranges, exact
results at the special points, fp16/bf16 rounded once from the float32 result, strided == contiguous,
and the one-kernel activation backward ops against float64 derivatives."""
import math

import numpy as np
import pytest
import torch

import ampgrad as ag

F = ag.nn.functional
FLT_MIN = np.float32(1.1754943508222875e-38)


def _inputs(lo, hi, n=200_001):
    """Dense over [lo, hi], plus logarithmically spaced magnitudes of both signs inside it, plus tiny ones."""
    lin = np.linspace(lo, hi, n, dtype=np.float64)
    mags = np.logspace(-40, np.log10(max(abs(lo), abs(hi))), n // 2)
    logs = np.concatenate([mags, -mags])
    logs = logs[(logs >= lo) & (logs <= hi)]
    return np.concatenate([lin, logs]).astype(np.float32)


def _ulp_err(got, ref):
    """|got - ref| in units of the float32 spacing at ref (the smallest normal's spacing below it)."""
    ref = np.asarray(ref, np.float64)
    with np.errstate(over="ignore"):
        r32 = ref.astype(np.float32)
    big = np.isinf(r32) & ~np.isnan(ref)  # overflows float32: the result must be that infinity
    np.testing.assert_array_equal(got[big], r32[big])
    ok = np.isfinite(r32)
    spacing = np.spacing(np.abs(r32[ok])).astype(np.float64)
    spacing = np.maximum(spacing, np.spacing(FLT_MIN).astype(np.float64))
    return np.abs(got[ok].astype(np.float64) - ref[ok]) / spacing


def _gelu(x):
    return 0.5 * x * (1 + torch.erf(torch.from_numpy(x / math.sqrt(2))).numpy())


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(0.79788456080286535588 * (x + 0.044715 * x ** 3)))


def _sigmoid(x):
    with np.errstate(over="ignore"):
        return np.where(x >= 0, 1 / (1 + np.exp(-np.abs(x))), np.exp(-np.abs(x)) / (1 + np.exp(-np.abs(x))))


def _softplus(x):
    return np.where(x > 20, x, np.log1p(np.exp(np.minimum(x, 20))))


# name, ampgrad fn, float64 reference, ranges, max ulp
ULP_CASES = [
    ("exp", lambda x: x.exp(), np.exp, [(-104, 89), (-1, 1)], 0.55),  # Note [Float exp]; torch (MKL) 0.56
    ("expm1", lambda x: x.expm1(), np.expm1, [(-30, 89), (-1, 1)], 2),
    ("log", lambda x: x.log(), np.log, [(0, 3e38), (0.5, 2)], 1.5),
    ("log1p", lambda x: x.log1p(), np.log1p, [(-1, 1e30), (-0.5, 1)], 3),
    ("tanh", lambda x: x.tanh(), np.tanh, [(-12, 12), (-1, 1), (0.06, 0.07), (8.9, 9.1)], 0.7),  # Note [Float tanh]; torch 0.57
    ("sigmoid", lambda x: x.sigmoid(), _sigmoid, [(-100, 40), (-2, 2)], 3),
    ("erf", lambda x: x.erf(), lambda x: torch.erf(torch.from_numpy(x)).numpy(), [(-6, 6), (-1e-3, 1e-3)], 6),
    ("gelu", lambda x: F.gelu(x), _gelu, [(-1, 12)], 6),
    ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), _gelu_tanh, [(-1, 12)], 6),
    ("silu", lambda x: F.silu(x), lambda x: x * _sigmoid(x), [(-80, 80)], 3),
    ("softplus", lambda x: F.softplus(x), _softplus, [(-80, 80)], 3),
    # Note [Float sin] up to 25000 (torch: 0.6), the double reduction beyond (0.56) up to 2^19 pi/2, then libm per lane
    ("sin", lambda x: x.sin(), np.sin, [(-1e7, 1e7), (-4, 4), (-1e-3, 1e-3), (24000, 26000), (823000, 824000)], 0.9),
    ("cos", lambda x: x.cos(), np.cos, [(-1e7, 1e7), (-4, 4), (-1e-3, 1e-3), (24000, 26000), (823000, 824000)], 0.9),
]


@pytest.mark.parametrize("name,fn,ref,ranges,tol", ULP_CASES, ids=[c[0] for c in ULP_CASES])
def test_max_ulp_error(name, fn, ref, ranges, tol):
    for lo, hi in ranges:
        x = _inputs(lo, hi)
        got = fn(ag.tensor(x)).numpy()
        with np.errstate(all="ignore"):
            r = ref(x.astype(np.float64))
        err = _ulp_err(got, r)
        assert err.max() <= tol, f"{name} on [{lo}, {hi}]: {err.max():.2f} ulp at x={x[np.isfinite(r.astype(np.float32))][err.argmax()]!r}"


@pytest.mark.parametrize("name,fn,ref", [("gelu", lambda x: F.gelu(x), _gelu),
                                         ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), _gelu_tanh)])
def test_gelu_negative_tail_abs_error(name, fn, ref):
    # 1 + erf (1 + tanh) cancels for x < 0: bounded by the float32 rounding of that sum, as torch's.
    x = _inputs(-12, 0)
    got = fn(ag.tensor(x)).numpy().astype(np.float64)
    err = np.abs(got - ref(x.astype(np.float64)))
    assert (err <= np.abs(x) * 2.0 ** -21 + 1e-45).all(), err.max()


SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-40, -1e-40, 1e-30, -1e-30, 88.72, 88.73,
                    -88.72, -103.9, -104.0, -200.0, 200.0, 3e38, -3e38, 1.0, -1.0], dtype=np.float32)


@pytest.mark.parametrize("name", ["exp", "expm1", "log", "log1p", "tanh", "sigmoid", "erf", "silu", "softplus",
                                  "gelu", "gelu_tanh", "sin", "cos"])
def test_special_values(name):
    def run(m, t):
        return {"exp": t.exp, "expm1": t.expm1, "log": t.log, "log1p": t.log1p, "tanh": t.tanh, "sigmoid": t.sigmoid,
                "erf": t.erf, "sin": t.sin, "cos": t.cos, "silu": lambda: m.nn.functional.silu(t), "softplus": lambda: m.nn.functional.softplus(t),
                "gelu": lambda: m.nn.functional.gelu(t),
                "gelu_tanh": lambda: m.nn.functional.gelu(t, approximate="tanh")}[name]()
    x = np.concatenate([SPECIAL, np.zeros(16 - len(SPECIAL) % 16, np.float32)])  # whole vectors and a tail
    for xs in (x, x[:21]):
        got = run(ag, ag.tensor(xs)).numpy()
        exp = run(torch, torch.from_numpy(xs)).numpy()
        if name.startswith("gelu"):  # ampgrad gives the limits at +-inf (test_gelu_infinities)
            exp = np.where(xs == np.inf, np.inf, np.where(xs == -np.inf, 0.0, exp)).astype(np.float32)
            exp = np.where(xs == np.float32(3e38), xs, exp)  # torch's x * (1 + erf) overflows first: inf
        np.testing.assert_array_equal(np.isnan(got), np.isnan(exp))
        fin = ~np.isnan(exp)
        # exact at 0, -0, +-inf and saturation; denormal results may differ from torch's flush by < FLT_MIN
        np.testing.assert_allclose(got[fin], exp[fin], rtol=4e-7, atol=float(FLT_MIN))
        zero = fin & (exp == 0) & (got == 0)
        np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(exp[zero]))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", ["exp", "tanh", "sigmoid", "gelu", "silu", "erf", "log1p", "sin", "cos"])
def test_low_precision_rounds_once(dtype, name):
    fns = {"sin": lambda t: t.sin(), "cos": lambda t: t.cos(), "exp": lambda t: t.exp(), "tanh": lambda t: t.tanh(), "sigmoid": lambda t: t.sigmoid(),
           "gelu": lambda t: F.gelu(t), "silu": lambda t: F.silu(t), "erf": lambda t: t.erf(), "log1p": lambda t: t.log1p()}
    x = ag.tensor(np.linspace(-0.9, 8, 1001, dtype=np.float32)).to(getattr(ag, dtype))
    got = fns[name](x)
    assert got.dtype == x.dtype
    via32 = fns[name](x.float()).to(x.dtype)  # float32 compute, one rounding
    np.testing.assert_array_equal(got.float().numpy(), via32.float().numpy())


def test_strided_matches_contiguous():
    # strided inner loops take the scalar functor (libm): the two agree within a few ulp (gelu: its
    # 1 + erf cancellation, as in test_gelu_negative_tail_abs_error)
    x = ag.randn(300, 257)
    for fn in (lambda t: t.exp(), lambda t: t.sigmoid(), lambda t: F.gelu(t), lambda t: t.tanh()):
        np.testing.assert_allclose(fn(x.t()).numpy(), fn(x.t().contiguous()).numpy(), rtol=1e-6, atol=2e-6)
    # a broadcast input (stride 0) stays on the vector path
    g = ag.tensor(0.7).expand(300, 257)
    np.testing.assert_array_equal(g.exp().numpy(), np.full((300, 257), ag.tensor([0.7]).exp().numpy()[0]))


@pytest.mark.parametrize("name", ["sigmoid", "tanh", "gelu", "gelu_tanh", "silu", "softplus", "erf"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_activation_backward_one_kernel(name, dtype):
    fns = {"sigmoid": lambda m, t: t.sigmoid(), "tanh": lambda m, t: t.tanh(), "erf": lambda m, t: t.erf(), "gelu": lambda m, t: m.nn.functional.gelu(t),
           "gelu_tanh": lambda m, t: m.nn.functional.gelu(t, approximate="tanh"),
           "silu": lambda m, t: m.nn.functional.silu(t), "softplus": lambda m, t: m.nn.functional.softplus(t, beta=2)}
    xn = np.linspace(-9, 9, 4099, dtype=np.float32)
    gn = np.random.default_rng(0).standard_normal(xn.shape).astype(np.float32)
    x = ag.tensor(xn).to(getattr(ag, dtype)).requires_grad_(True)
    fns[name](ag, x).backward(ag.tensor(gn).to(getattr(ag, dtype)))
    # float32: the exact derivative; bf16: torch's (sigmoid / tanh differentiate the rounded result)
    ref_dt = torch.float64 if dtype == "float32" else torch.bfloat16
    xt = torch.from_numpy(xn).to(getattr(torch, dtype)).to(ref_dt).requires_grad_(True)
    fns[name](torch, xt).backward(torch.from_numpy(gn).to(getattr(torch, dtype)).to(ref_dt))
    assert x.grad.dtype == x.dtype
    tol = 2e-6 if dtype == "float32" else 2e-2
    np.testing.assert_allclose(x.grad.float().numpy(), xt.grad.double().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("name,node", [("sigmoid", "SigmoidBackwardBackward0"), ("tanh", "TanhBackwardBackward0"),
                                       ("gelu", "GeluBackwardBackward0"), ("gelu_tanh", "GeluBackwardBackward0"),
                                       ("softplus", "SoftplusBackwardBackward0"), ("silu", "MulBackward0"),
                                       ("erf", "MulBackward0")])
def test_activation_double_backward(name, node):
    fns = {"sigmoid": lambda m, t: t.sigmoid(), "tanh": lambda m, t: t.tanh(), "erf": lambda m, t: t.erf(), "gelu": lambda m, t: m.nn.functional.gelu(t),
           "gelu_tanh": lambda m, t: m.nn.functional.gelu(t, approximate="tanh"),
           "silu": lambda m, t: m.nn.functional.silu(t), "softplus": lambda m, t: m.nn.functional.softplus(t, 2, 3)}
    xn = np.linspace(-4, 4, 37)
    res = []
    for m in (ag, torch):
        x = m.tensor(xn, dtype=m.float64, requires_grad=True)
        g = m.tensor(np.cos(xn), dtype=m.float64, requires_grad=True)
        (gx,) = m.autograd.grad(fns[name](m, x), x, g, create_graph=True)
        assert gx.grad_fn.name() == node
        ggx, gg = m.autograd.grad((gx * m.tensor(np.sin(xn), dtype=m.float64)).sum(), [x, g])
        res.append((gx.detach().numpy(), ggx.numpy(), gg.numpy()))
    for a, t in zip(*res):
        np.testing.assert_allclose(a, t, rtol=1e-10, atol=1e-12)


def test_erf_backward_ulp():
    """ErfBackward0's one kernel carries x^2 in two parts: within 3 ulp of 2/sqrt(pi) e^(-x^2) where torch's
    exp(-x.pow(2)) is off by up to ~17 ulp (x^2 rounded once)."""
    xn = np.linspace(-5, 5, 100_001).astype(np.float32)
    x = ag.tensor(xn, requires_grad=True)
    x.erf().backward(ag.ones(len(xn)))
    ref = 2 / np.sqrt(np.pi) * np.exp(-xn.astype(np.float64) ** 2)
    assert _ulp_err(x.grad.numpy(), ref).max() <= 3


def test_sum_float32_accuracy():
    rng = np.random.default_rng(0)
    for xn in (rng.standard_normal(1 << 20).astype(np.float32), (rng.random(1 << 20) + 1).astype(np.float32),
               rng.standard_normal(3_000_017).astype(np.float32)):
        exact = xn.astype(np.float64).sum()
        scale = np.abs(xn.astype(np.float64)).sum()
        got = float(ag.tensor(xn).sum())
        err_t = abs(float(torch.from_numpy(xn).sum()) - exact)
        err_a = abs(got - exact)
        assert err_a <= 1e-6 * scale, (err_a, scale)
        assert err_a <= max(4 * err_t, 2e-7 * scale), (err_a, err_t)
        assert float(ag.tensor(xn).mean()) == pytest.approx(exact / len(xn), rel=1e-6, abs=1e-6 * scale / len(xn))


@pytest.mark.parametrize("shape,dim", [((1000, 1030), 1), ((1000, 1030), 0), ((7, 3000, 33), 1), ((5, 70000), 1),
                                       ((70000, 3), 0), ((0, 5), 0), ((4, 0), 1), ((2, 3, 4), (0, 2))])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_sum_mean_dims(shape, dim, dtype):
    xn = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    x = ag.tensor(xn).to(getattr(ag, dtype))
    xt = torch.from_numpy(xn).to(getattr(torch, dtype))
    for op in ("sum", "mean"):
        got = getattr(x, op)(dim)
        ref = getattr(xt.double(), op)(dim)
        assert got.dtype == x.dtype and tuple(got.shape) == tuple(ref.shape)
        scale = getattr(xt.double().abs(), op)(dim).numpy()  # the rounding error grows with sum |x|
        tol = 2e-6 if dtype == "float32" else 1e-2
        g, r = got.float().numpy(), ref.numpy()
        np.testing.assert_array_equal(np.isnan(g), np.isnan(r))  # the mean of nothing
        ok = ~np.isnan(r)
        assert (np.abs(g - r)[ok] <= tol * (scale + np.abs(r))[ok]).all()


def test_sum_independent_of_threads():
    x = ag.randn(1 << 21)
    n = ag.get_num_threads()
    try:
        ag.set_num_threads(1)
        a = float(x.sum())
        ag.set_num_threads(2)
        b = float(x.sum())
    finally:
        ag.set_num_threads(n)
    assert a == b


# Note [Float norms] and the float32 amax/amin rows: vector paths with parts of long rows in parallel.
@pytest.mark.parametrize("n", [5, 33, 1000, 65536 + 5, 3 * 65536 + 17, 1 << 20])
@pytest.mark.parametrize("dt", ["float32", "bfloat16"])
def test_float_norm_and_minmax_against_float64(n, dt):
    import torch as th
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n).astype(np.float32) * 3
    t = th.tensor(a).to(getattr(th, dt))
    x = ag.tensor(a).to(getattr(ag, dt))
    ref = t.double().numpy()
    for p, r in ((2, np.sqrt((ref * ref).sum())), (1, np.abs(ref).sum())):
        mine, theirs = float(x.norm(p)), float(t.norm(p))
        tol = max(abs(theirs - r) / r, 2.0 ** -8 if dt == "bfloat16" else 2.0 ** -22)
        assert abs(mine - r) / r <= tol * 1.01, (p, mine, theirs, r)
    assert float(x.amax()) == float(t.amax()) and float(x.amin()) == float(t.amin())


def test_float_amax_and_norm_propagate_nan_in_any_part():
    for n in (40, 70000, 3 * 65536 + 3):
        for pos in (0, n // 2, n - 1):
            a = np.zeros(n, np.float32)
            a[pos] = np.nan
            x = ag.tensor(a)
            assert np.isnan(float(x.amax())) and np.isnan(float(x.amin())) and np.isnan(float(x.norm()))
    rows = np.random.default_rng(0).standard_normal((6, 100)).astype(np.float32)
    rows[2, 50] = np.nan
    got = ag.tensor(rows).amax(1).numpy()
    assert np.isnan(got[2]) and np.array_equal(np.delete(got, 2), np.delete(rows.max(1), 2))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("n", [33, 1000, 5000, 70000])
def test_minmax_rows_fast_path_matches_torch_with_nan_and_inf(dtype, n):
    """amax / amin / max / min over long rows take the 16-lane path (bf16 / fp16 widened in blocks): NaN
    anywhere wins, +-inf are values, ties and signed zeros as torch."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(n)
    a = rng.standard_normal((4, n)).astype(np.float32)
    a[1, n // 2] = np.nan
    a[2, -1] = np.inf
    a[3, :] = -0.0
    a[3, n // 3] = 0.0
    t, g = torch.tensor(a).to(getattr(torch, dtype)), ag.tensor(a).to(getattr(ag, dtype))
    for op in ("amax", "amin"):
        want = getattr(t, op)(1).float().numpy()
        got = getattr(g, op)(1).float().numpy()
        np.testing.assert_array_equal(got, want)
        assert (np.signbit(got) == np.signbit(want))[~np.isnan(want)].all()
    for row in range(4):
        np.testing.assert_array_equal(g[row].max().float().numpy(), t[row].max().float().numpy())
        np.testing.assert_array_equal(g[row].min().float().numpy(), t[row].min().float().numpy())


def test_sin_cos_near_multiples_of_half_pi():
    # the float32 values closest to k pi/2: the reduction must keep r's relative accuracy
    k = np.arange(1, 200_000, dtype=np.float64)
    x = np.unique(np.concatenate([np.float32(k * np.pi / 2), np.nextafter(np.float32(k * np.pi / 2), np.float32(0))]))
    for f, ref in (("sin", np.sin), ("cos", np.cos)):
        got = getattr(ag.tensor(x), f)().numpy()
        err = _ulp_err(got, ref(x.astype(np.float64)))
        assert err.max() <= 0.6, (f, err.max(), x[err.argmax()])


def _row_cases():
    rng = np.random.default_rng(7)
    return [rng.standard_normal(s).astype(np.float32) * 4 + 3 for s in [(1, 5), (3, 17), (64, 1000), (2, 70_001), (1, 300_000)]]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_logsumexp_var_rows_against_float64(dtype):
    # Note [Float logsumexp] / [Float var]: the vector row paths are as accurate as torch's on the same input
    for x in _row_cases():
        t = torch.from_numpy(x).to(getattr(torch, dtype))
        a = ag.tensor(x).to(getattr(ag, dtype))
        x64 = t.double()
        for name, fa, ft in [("logsumexp", lambda u: u.logsumexp(1), lambda u: u.logsumexp(1)),
                             ("var", lambda u: u.var(1), lambda u: u.var(1)),
                             ("std0", lambda u: u.std(1, correction=0), lambda u: u.std(1, correction=0))]:
            got = fa(a)
            assert got.dtype == a.dtype
            got64 = torch.from_numpy(got.float().numpy()).double()
            ref = ft(x64)
            e_ag = ((got64 - ref).abs() / ref.abs()).max().item()
            e_t = ((ft(t).double() - ref).abs() / ref.abs()).max().item()
            eps = {"float32": 2.0 ** -24, "bfloat16": 2.0 ** -8, "float16": 2.0 ** -11}[dtype]
            assert e_ag <= max(2 * e_t, 4 * eps), (name, x.shape, e_ag, e_t)


def test_logsumexp_var_rows_special_values():
    inf, nan = float("inf"), float("nan")
    rows = [[0.0] * 40 + [nan], [-inf] * 41, [inf] + [1.0] * 40, [-inf] * 20 + [0.0] * 21, [-1e30] * 40 + [5.0],
            [3e38] * 41, [-3e38] * 41, [1e-40] * 41]
    x = torch.tensor(rows)
    a = ag.tensor(x.numpy())
    for f in (lambda u: u.logsumexp(1), lambda u: u.var(1), lambda u: u.std(1)):
        np.testing.assert_allclose(f(a).numpy(), f(x).numpy(), rtol=1e-6, equal_nan=True)
    # a long single row: NaN or +inf in a late part wins
    for v in (nan, inf):
        y = np.zeros(200_000, np.float32)
        y[150_001] = v
        np.testing.assert_array_equal(ag.tensor(y).logsumexp(0).numpy(), torch.from_numpy(y).logsumexp(0).numpy())


@pytest.mark.parametrize("dtype", ["bool", "uint8"])
def test_all_any_contiguous_rows_fast_path(dtype):
    # memchr / 8-byte words over contiguous rows: a single differing byte anywhere, rows of every length
    # around the 64-byte step, uint8 values other than 0 / 1, and the strided (dim=0) loop for comparison
    rng = np.random.default_rng(3)
    for n in [1, 7, 63, 64, 65, 127, 128, 1000, 262144]:
        for pos in sorted({0, n // 2, n - 1}):
            ones = np.full(n, 2 if dtype == "uint8" else 1, dtype=np.uint8 if dtype == "uint8" else np.bool_)
            zeros = np.zeros(n, dtype=ones.dtype)
            one_zero = ones.copy()
            one_zero[pos] = 0
            one_one = zeros.copy()
            one_one[pos] = ones[0]
            for arr in (ones, zeros, one_zero, one_one):
                t, a = torch.from_numpy(arr.copy()), ag.tensor(arr.copy())
                assert bool(a.all()) == bool(t.all()) and bool(a.any()) == bool(t.any()), (n, pos)
    m = (rng.random((37, 130)) > 0.02).astype(np.bool_ if dtype == "bool" else np.uint8)
    t, a = torch.from_numpy(m), ag.tensor(m)
    for dim in (0, 1):
        np.testing.assert_array_equal(a.all(dim).numpy(), t.all(dim).numpy())
        np.testing.assert_array_equal(a.any(dim).numpy(), t.any(dim).numpy())


def test_float_row_minmax_nan_in_every_accumulator_lane():
    # the 16-lane max/min keeps four accumulators over 64-value steps plus 16-value and scalar tails:
    # a NaN at any position of a row wins, and without NaN the extreme is found wherever it sits
    n = 64 * 3 + 16 + 5
    for pos in range(n):
        x = np.linspace(-1, 1, n, dtype=np.float32)
        y = x.copy()
        y[pos] = np.nan
        z = x.copy()
        z[pos] = 7.0
        w = x.copy()
        w[pos] = -7.0
        a = ag.tensor(np.stack([y, z, w]))
        assert np.isnan(a.amax(1).numpy()[0]) and np.isnan(a.amin(1).numpy()[0]), pos
        assert a.amax(1).numpy()[1] == 7.0 and a.amin(1).numpy()[2] == -7.0, pos
