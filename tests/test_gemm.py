"""CPU GEMM paths against float64 NumPy: the AVX-512 micro-kernels (fp32 FMA, bf16 vdpbf16ps) where
the CPU has them, Eigen / fp32 widening otherwise, over every operand layout the packing handles
(row-major, column-major, strided), ragged panel edges, odd K, alpha/beta, batches, and
non-finite values."""
import numpy as np
import pytest

import ampgrad

rng = np.random.default_rng(7)


def bf16_round(x):
    """Rounds float32 values to bf16 (nearest-even) and back, in NumPy."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return r.astype(np.uint32).view(np.float32)


def operand(rows, cols, layout):
    """A bf16 tensor of shape (rows, cols) stored row-major, column-major (a transposed view), or
    with a gap between elements (neither: the packing's element-by-element path)."""
    if layout == "row":
        x = bf16_round(rng.standard_normal((rows, cols)))
        return ampgrad.tensor(x).bfloat16(), x
    if layout == "col":
        x = bf16_round(rng.standard_normal((cols, rows)))
        return ampgrad.tensor(x).bfloat16().t(), x.T
    x = bf16_round(rng.standard_normal((rows, 2 * cols)))
    return ampgrad.tensor(x).bfloat16()[:, ::2], x[:, ::2]


def check(result, ref, k):
    # fp32 accumulation of exact bf16 products, then one rounding to bf16 (relative 2^-8).
    got = result.float().numpy().astype(np.float64)
    tol = 2.0 ** -8 * np.abs(ref) + 1e-5 * np.sqrt(k) * np.abs(ref).max(initial=1.0)
    assert np.all(np.abs(got - ref) <= tol), np.abs(got - ref).max()


# Column-major A and row-major B are read in place for their full panels when the other operand has at
# most 4 panels (Note [Direct panels]: (30, 600, 64), (13, 33, 31)), the ragged ones packed.
@pytest.mark.parametrize("m,k,n", [(13, 33, 31), (40, 17, 100), (64, 256, 96), (100, 300, 70), (33, 1, 65), (30, 600, 64)])
@pytest.mark.parametrize("la", ["row", "col", "strided"])
@pytest.mark.parametrize("lb", ["row", "col", "strided"])
def test_f32_mm_layouts(m, k, n, la, lb):
    a, an = operand(m, k, la)
    b, bn = operand(k, n, lb)
    a, b = a.float(), b.float()
    out = a @ b
    assert out.dtype == ampgrad.float32
    ref = an.astype(np.float64) @ bn.astype(np.float64)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5, atol=1e-5 * np.sqrt(k))


def test_f32_addmm_alpha_beta():
    a, an = operand(50, 70, "row")
    b, bn = operand(70, 45, "col")
    c, cn = operand(50, 45, "row")
    out = ampgrad.addmm(c.float(), a.float(), b.float(), beta=0.5, alpha=-2.0)
    ref = 0.5 * cn.astype(np.float64) - 2.0 * (an.astype(np.float64) @ bn.astype(np.float64))
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5, atol=1e-4)
    # long K with a column-major A read in place and beta
    a2, an2 = operand(37, 700, "col")
    b2, bn2 = operand(700, 70, "row")
    c2, cn2 = operand(37, 70, "row")
    out = ampgrad.addmm(c2.float(), a2.float(), b2.float(), beta=0.5, alpha=-2.0)
    ref = 0.5 * cn2.astype(np.float64) - 2.0 * (an2.astype(np.float64) @ bn2.astype(np.float64))
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5, atol=1e-3)
    nan_c = ampgrad.full((50, 45), float("nan"))
    out = ampgrad.addmm(nan_c, a.float(), b.float(), beta=0.0)
    np.testing.assert_allclose(out.numpy(), an.astype(np.float64) @ bn.astype(np.float64), rtol=1e-5, atol=1e-4)


# The last four take the AMX path where the CPU has it (Note [AMX bf16 GEMM]: M*N*K >= 32768): ragged
# 32-row blocks and 32-column panels, K padded to 32.
SHAPES = [(1, 1, 1), (3, 5, 7), (12, 32, 32), (13, 33, 31), (25, 2, 65), (7, 64, 1), (40, 17, 100), (64, 256, 96),
          (100, 300, 70), (129, 65, 97), (47, 31, 130), (16, 1000, 16)]


@pytest.mark.parametrize("m,k,n", SHAPES)
@pytest.mark.parametrize("la", ["row", "col", "strided"])
@pytest.mark.parametrize("lb", ["row", "col", "strided"])
def test_bf16_mm_layouts(m, k, n, la, lb):
    a, an = operand(m, k, la)
    b, bn = operand(k, n, lb)
    out = a @ b
    assert out.dtype == ampgrad.bfloat16 and out.shape == (m, n)
    check(out, an.astype(np.float64) @ bn.astype(np.float64), k)


@pytest.mark.parametrize("beta,alpha", [(0.0, 1.0), (1.0, 1.0), (0.5, -2.0), (0.0, 0.25)])
def test_bf16_addmm_alpha_beta(beta, alpha):
    a, an = operand(30, 47, "row")
    b, bn = operand(47, 45, "col")
    c, cn = operand(30, 45, "row")
    out = ampgrad.addmm(c, a, b, beta=beta, alpha=alpha)
    ref = beta * cn.astype(np.float64) + alpha * (an.astype(np.float64) @ bn.astype(np.float64))
    check(out, ref, 47)


def test_bf16_addmm_beta_zero_ignores_nan():
    a, an = operand(5, 6, "row")
    b, bn = operand(6, 7, "row")
    c = ampgrad.full((5, 7), float("nan")).bfloat16()
    out = ampgrad.addmm(c, a, b, beta=0.0)
    check(out, an.astype(np.float64) @ bn.astype(np.float64), 6)


def test_bf16_bmm_and_out_view():
    a = bf16_round(rng.standard_normal((3, 20, 9)))
    b = bf16_round(rng.standard_normal((3, 9, 33)))
    out = ampgrad.tensor(a).bfloat16() @ ampgrad.tensor(b).bfloat16()
    check(out, a.astype(np.float64) @ b.astype(np.float64), 9)


def test_bf16_non_finite_and_k_zero():
    a = np.ones((4, 8), np.float32)
    a[1, 3] = np.inf
    a[2, 0] = np.nan
    b = np.ones((8, 40), np.float32)
    out = (ampgrad.tensor(a).bfloat16() @ ampgrad.tensor(b).bfloat16()).float().numpy()
    assert np.all(out[0] == 8) and np.all(np.isposinf(out[1])) and np.all(np.isnan(out[2])) and np.all(out[3] == 8)
    empty = ampgrad.zeros(4, 0).bfloat16() @ ampgrad.zeros(0, 40).bfloat16()
    assert empty.shape == (4, 40) and np.all(empty.float().numpy() == 0)


def test_bf16_rounding_keeps_denormal_results():
    # beta * C is added in fp32 and the sum rounded like a bf16 cast: a denormal C survives.
    # (Products below 2^-126 inside the dot products flush to zero on AVX512-BF16, as they do in
    # torch's oneDNN bf16 GEMM.)
    c = ampgrad.full((3, 40), 2.0 ** -130).bfloat16()
    out = ampgrad.addmm(c, ampgrad.zeros(3, 4).bfloat16(), ampgrad.ones(4, 40).bfloat16(), beta=1.0)
    assert np.all(out.float().numpy() == 2.0 ** -130)


@pytest.mark.skipif(pytest.importorskip("torch", reason="torch oracle") is None, reason="torch oracle")
def test_bf16_linear_matches_torch():
    import torch
    x = bf16_round(rng.standard_normal((64, 200)))
    w = bf16_round(rng.standard_normal((96, 200)))
    b = bf16_round(rng.standard_normal(96))
    got = ampgrad.nn.functional.linear(*(ampgrad.tensor(v).bfloat16() for v in (x, w, b))).float().numpy()
    ref = torch.nn.functional.linear(*(torch.tensor(v).bfloat16() for v in (x, w, b))).float().numpy()
    np.testing.assert_allclose(got, ref, rtol=2 ** -7, atol=1e-2)


def test_packing_buffers_reused_across_shapes_threads_and_giant_operands():
    # the packed panels live in per-thread buffers (kernels/cpu/gemm_avx512.cpp scratch): shapes that
    # shrink and grow, Python threads running GEMMs at once, and a B operand over the 64 MB kept limit
    import threading
    rng = np.random.default_rng(5)
    shapes = [(64, 300, 70), (7, 5, 3), (129, 257, 33), (16, 4096, 4200), (5, 9, 1000)]
    for m, k, n in shapes:
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        got = (ampgrad.tensor(a) @ ampgrad.tensor(b)).numpy()
        np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3 * np.sqrt(k))
    errs = []

    def work(seed):
        r = np.random.default_rng(seed)
        for _ in range(20):
            m, k, n = (int(v) for v in r.integers(1, 200, 3))
            a = r.standard_normal((m, k)).astype(np.float32)
            b = r.standard_normal((k, n)).astype(np.float32)
            got = (ampgrad.tensor(a) @ ampgrad.tensor(b)).numpy()
            if not np.allclose(got, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3 * np.sqrt(k)):
                errs.append((m, k, n))
    ts = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errs


def test_bf16_kernels_agree_with_amx_turned_off():
    # AMPGRAD_AMX=0 takes the vdpbf16ps kernel on a CPU with AMX (elsewhere both runs take the same
    # one): both sum exact bf16 products in fp32, so both stay within the bf16 bound of float64.
    import subprocess
    import sys
    code = (
        "import numpy as np, ampgrad\n"
        "r = np.random.default_rng(3)\n"
        "out = []\n"
        "for m, k, n in [(100, 300, 70), (64, 64, 64), (33, 97, 129)]:\n"
        "    a = ampgrad.tensor(r.standard_normal((m, k)).astype(np.float32)).bfloat16()\n"
        "    b = ampgrad.tensor(r.standard_normal((n, k)).astype(np.float32)).bfloat16().t()\n"
        "    c = ampgrad.tensor(r.standard_normal((m, n)).astype(np.float32)).bfloat16()\n"
        "    out.append(ampgrad.addmm(c, a, b, beta=0.5, alpha=1.5).float().numpy())\n"
        "    out.append((a.double() @ b.double() * 1.5 + c.double() * 0.5).numpy())\n"
        "np.savez(__import__('sys').argv[1], *out)\n"
    )
    import os
    import tempfile
    res = {}
    with tempfile.TemporaryDirectory() as d:
        for amx in ("1", "0"):
            path = os.path.join(d, amx + ".npz")
            env = dict(os.environ, AMPGRAD_AMX=amx)
            subprocess.run([sys.executable, "-c", code, path], check=True, env=env)
            z = np.load(path)
            res[amx] = [z["arr_%d" % i] for i in range(len(z.files))]
    for amx in ("1", "0"):
        for got, ref in zip(res[amx][0::2], res[amx][1::2]):
            tol = 2.0 ** -8 * np.abs(ref) + 1e-5 * np.sqrt(300) * np.abs(ref).max()
            assert np.all(np.abs(got - ref) <= tol), (amx, np.abs(got - ref).max())
