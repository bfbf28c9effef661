"""Strided transposed convolutions and strided convolutions' input gradients (Note [Sub-pixel transposed
convolution]: one stride-1 implicit-GEMM convolution per output phase) against torch: every phase layout
of kernel size / stride / padding / output_padding / groups, kernels smaller than the stride (phases with
no taps get the bias alone), with and without bias, values and all three gradients."""
import itertools

import numpy as np
import pytest

import ampgrad

torch = pytest.importorskip("torch")


def _run(L, fn, x, w, b, kw):
    X = L.tensor(x, requires_grad=True)
    W = L.tensor(w, requires_grad=True)
    B = None if b is None else L.tensor(b, requires_grad=True)
    y = fn(L)(X, W, B, **kw)
    g = L.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)).astype(np.float32))
    (y * g).sum().backward()
    return [y.detach().numpy(), X.grad.numpy(), W.grad.numpy()] + ([] if B is None else [B.grad.numpy()])


def _check(fn, x, w, b, kw):
    for a, t in zip(_run(ampgrad, fn, x, w, b, kw), _run(torch, fn, x, w, b, kw)):
        assert a.shape == t.shape
        np.testing.assert_allclose(a, t, rtol=0, atol=2e-5 * max(np.abs(t).max(), 1e-6))


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_strided_transposed_conv_matches_torch(dims):
    rng = np.random.default_rng(dims)
    spatial = {1: (19,), 2: (9, 11), 3: (3, 4, 9)}[dims]
    ks, ss = ((1, 2, 3, 4, 5), (2, 3)) if dims < 3 else ((1, 2, 3), (2,))
    for k, s, p, op, G, bias in itertools.product(ks, ss, (0, 1, 2), (0, 1), (1, 2), (True, False)):
        if p >= k or op >= s:
            continue
        x = rng.standard_normal((2, 4) + spatial).astype(np.float32)
        w = rng.standard_normal((4, 6 // G) + (k,) * dims).astype(np.float32)
        b = rng.standard_normal(6).astype(np.float32) if bias else None
        _check(lambda L: getattr(L.nn.functional, f"conv_transpose{dims}d"), x, w, b,
               dict(stride=s, padding=p, output_padding=op, groups=G))


@pytest.mark.parametrize("dims", [2, 3])
def test_strided_conv_input_gradient_matches_torch(dims):
    rng = np.random.default_rng(10 + dims)
    spatial = {2: (17, 19), 3: (5, 6, 18)}[dims]
    for k, s, p in itertools.product((1, 2, 3, 4), (2, 3), (0, 1)):
        if p >= k:
            continue
        x = rng.standard_normal((2, 3) + spatial).astype(np.float32)
        w = rng.standard_normal((5, 3) + (k,) * dims).astype(np.float32)
        _check(lambda L: getattr(L.nn.functional, f"conv{dims}d"), x, w, None, dict(stride=s, padding=p))
