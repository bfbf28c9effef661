"""Note [Iteration order]: elementwise kernels walk dims in the output's memory order. Values and
result layouts on permuted, sliced, broadcast and in-place operands, against NumPy and torch."""
import numpy as np
import pytest

import ampgrad

torch = pytest.importorskip("torch")

PERMS = [(0, 1, 2), (2, 1, 0), (1, 0, 2), (0, 2, 1), (2, 0, 1), (1, 2, 0)]


@pytest.mark.parametrize("perm", PERMS)
def test_unary_binary_on_permuted_inputs(perm):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 6, 7)).astype(np.float32)
    y = rng.standard_normal((5, 6, 7)).astype(np.float32)
    ax, ay = ampgrad.tensor(x).permute(*perm), ampgrad.tensor(y).permute(*perm)
    tx, ty = torch.tensor(x).permute(*perm), torch.tensor(y).permute(*perm)
    for f in (lambda m, a, b: m.sigmoid(a), lambda m, a, b: a * 2 + 1, lambda m, a, b: a + b,
              lambda m, a, b: a - b.contiguous(), lambda m, a, b: m.where(a > 0, a, b),
              lambda m, a, b: a[:, ::2] * b[:, ::2], lambda m, a, b: a + b[:1]):
        r, t = f(ampgrad, ax, ay), f(torch, tx, ty)
        np.testing.assert_allclose(r.numpy(), t.numpy(), rtol=1e-6, atol=1e-7)
        assert tuple(r.shape) == tuple(t.shape)
        assert tuple(r.stride()) == tuple(t.stride()), (perm, r.stride(), t.stride())


@pytest.mark.parametrize("perm", PERMS)
def test_inplace_and_copy_into_permuted_outputs(perm):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 5, 6)).astype(np.float64)
    a = ampgrad.tensor(x)
    view = a.permute(*perm)
    view.mul_(3).add_(ampgrad.ones(view.shape[-1], dtype=ampgrad.float64))
    ref = torch.tensor(x)
    rv = ref.permute(*perm)
    rv.mul_(3).add_(torch.ones(rv.shape[-1], dtype=torch.float64))
    np.testing.assert_array_equal(a.numpy(), ref.numpy())
    # copy_ from a contiguous source into a permuted destination
    dst = ampgrad.zeros(4, 5, 6, dtype=ampgrad.float64).permute(*perm)
    src = ampgrad.arange(120, dtype=ampgrad.float64).reshape(dst.shape)
    dst.copy_(src)
    np.testing.assert_array_equal(dst.numpy(), src.numpy())


def test_arange_and_linspace_into_strided_out():
    base = ampgrad.zeros(3, 4)
    ampgrad.arange(12, out=base.view(12))
    np.testing.assert_array_equal(base.t().contiguous().numpy(), np.arange(12).reshape(3, 4).T)
    np.testing.assert_allclose(ampgrad.linspace(0, 1, 7).numpy(), np.linspace(0, 1, 7), rtol=1e-6)
