"""Issue 10, stop 22: silent wrong results found by the fuzz, each against torch as the oracle.

- A Python int beyond 2**53 meeting a tensor (Note [Exact integer fills] in csrc/ops/factory.cpp): it went through
  a double, and 2**63 - 1 came back as -2**63, so `x - (2**63 - 1)` had the wrong sign.
- add / sub with a floating alpha: one fused multiply-add, as torch's CPU kernel (inf - 1e300 * 1e300 is inf).
- In-place comparisons (gt_, ...) with an operand that requires grad record torch's zero-gradient node.
- heaviside records torch's NotImplemented node: the result requires grad, backward raises."""
import numpy as np
import pytest

import ampgrad

torch = pytest.importorskip("torch")

M = 2**63 - 1
BIG = [M, -(2**63), 2**62 + 1, 2**53 + 1, -(2**53) - 3, 2**63 - 2]


def _both(f):
    out = []
    for L in (torch, ampgrad):
        try:
            r = f(L)
            out.append(("ok", str(r.dtype).split(".")[-1], r.detach().double().numpy() if r.is_floating_point()
                        else r.numpy().astype(np.int64)))
        except Exception as e:  # noqa: BLE001
            out.append(("raise", type(e).__name__, None))
    return out


def _same(f):
    t, a = _both(f)
    assert t[:2] == a[:2], (t, a)
    if t[0] == "ok":
        np.testing.assert_array_equal(t[2], a[2])


@pytest.mark.parametrize("v", BIG)
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
@pytest.mark.parametrize("op", ["sub", "add", "mul", "gt", "le", "eq", "xlogy", "rsub"])
def test_huge_int_scalar_with_float_tensor(v, dtype, op):
    def f(L):
        x = L.tensor([0.001, -4.0, 3.5, -np.inf], dtype=getattr(L, dtype))
        return getattr(L, op)(x, v) if op != "rsub" else v - x
    _same(f)


@pytest.mark.parametrize("v", BIG)
@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8", "bool"])
@pytest.mark.parametrize("op", ["__or__", "__and__", "__xor__", "__add__", "__radd__", "__mul__", "__le__", "__eq__",
                                "fmod", "__contains__"])
def test_huge_int_scalar_with_int_tensor(v, dtype, op):
    if dtype == "bool" and op in ("fmod",):
        pytest.skip("not defined for bool in either")

    def f(L):
        x = L.tensor([-5, 3, 0, 1], dtype=getattr(L, dtype))
        r = getattr(x, op)(v)
        return L.tensor(r) if isinstance(r, bool) else r
    _same(f)


@pytest.mark.parametrize("v", BIG)
@pytest.mark.parametrize("dtype", ["int64", "float64", "float32"])
def test_huge_int_fill_and_full(v, dtype):
    _same(lambda L: L.full((3,), v, dtype=getattr(L, dtype)))
    _same(lambda L: L.zeros(2, 2, dtype=getattr(L, dtype)).fill_(v))
    _same(lambda L: L.tensor(v) + L.tensor([1, 2]))
    if dtype == "int64":  # the value itself, not the double nearest to it
        assert ampgrad.full((1,), v).item() == v
        assert ampgrad.zeros(1, dtype=ampgrad.int64).fill_(v).item() == v


def test_alpha_is_a_fused_multiply_add():
    inf = float("inf")
    for op in ("add", "sub"):
        for alpha in (1e300, -1e300, 3.0, 0.1):
            def f(L, op=op, alpha=alpha):
                x = L.tensor([0.5, -3.5, 0.0, inf, -inf, 1e-300], dtype=L.float64)
                y = L.tensor([1e300, 1e300, 0.0, 1e300, -1e300, 1e-300], dtype=L.float64)
                return getattr(L, op)(x, y, alpha=alpha)
            _same(f)
    # in place (the optimizers' path) too, and the same numbers as the unfused formula where no overflow
    x = ampgrad.tensor([1.0, 2.0, 3.0]).double()
    x.sub_(ampgrad.tensor([0.5, 0.25, 0.125]).double(), alpha=0.1)
    np.testing.assert_allclose(x.numpy(), [0.95, 1.975, 2.9875], rtol=1e-15)


@pytest.mark.parametrize("op", ["eq_", "ne_", "lt_", "le_", "gt_", "ge_"])
def test_inplace_comparison_records_zero_gradient(op):
    res = {}
    for L in (torch, ampgrad):
        b = L.tensor([2.0, 2.0, 2.0], requires_grad=True)
        a0 = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        a = a0.clone()
        r = getattr(a, op)(b)
        name1 = type(r.grad_fn).__name__
        (r * L.tensor([1.0, 2.0, 3.0])).sum().backward()
        c = L.tensor([1.0, 2.0, 3.0], requires_grad=True).clone()
        name0 = type(getattr(c, op)(2.0).grad_fn).__name__
        d = L.tensor([1.0, 2.0, 3.0])  # a plain tensor: requires grad only through the operand
        rd = getattr(d, op)(b.detach().requires_grad_())
        res[L.__name__] = (r.detach().numpy().tolist(), r.requires_grad, name1, name0, b.grad.numpy().tolist(),
                           a0.grad.numpy().tolist(), rd.requires_grad)
    assert res["torch"] == res["ampgrad"]
    assert res["ampgrad"][2].endswith("Backward1") and res["ampgrad"][3].endswith("Backward0")


def test_inplace_comparison_on_a_leaf_still_raises():
    for L in (torch, ampgrad):
        a = L.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable"):
            a.gt_(L.tensor([0.0, 3.0], requires_grad=True))
        assert a.tolist() == [1.0, 2.0]


def test_heaviside_not_implemented_node():
    for L in (torch, ampgrad):
        a = L.tensor([1.0, 0.0, -1.0], requires_grad=True)
        r = L.heaviside(a, L.tensor([0.5, 0.5, 0.5]))
        assert r.requires_grad and type(r.grad_fn).__name__ == "NotImplemented"
        assert r.tolist() == [1.0, 0.5, 0.0]
        with pytest.raises(RuntimeError, match="derivative for aten::heaviside is not implemented"):
            r.sum().backward()
        # no input requires grad: no node
        assert L.heaviside(a.detach(), L.tensor([0.5, 0.5, 0.5])).grad_fn is None
