"""Type promotion against torch: promote_types / can_cast / result_type and the result dtype (and
values) of a + b, a * b, a / b and comparisons for every pair of dtypes, for tensors with dims,
0-dim tensors and Python scalars (int, float, bool)."""
import itertools

import numpy as np
import pytest

import ampgrad

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
SCALARS = [2, 2.5, True, -3, 1e10]
OPS = {
    "add": lambda a, b: a + b,
    "mul": lambda a, b: a * b,
    "truediv": lambda a, b: a / b,
    "lt": lambda a, b: a < b,
    "eq": lambda a, b: a == b,
    "torch.add": lambda a, b: _mod(a, b).add(a, b),
    "torch.maximum": lambda a, b: _mod(a, b).maximum(a, b),
    "torch.where": lambda a, b: _mod(a, b).where(_mod(a, b).tensor(True), a, b),
}


def _mod(a, b):
    for x in (a, b):
        if isinstance(x, ampgrad.Tensor):
            return ampgrad
    import torch
    return torch


def _tensors(name, shape, torch):
    vals = np.array([1, 2, 3, 1, 2, 3][: int(np.prod(shape)) or 1], dtype=np.float64).reshape(shape)
    return getattr(ampgrad, "tensor")(vals).to(getattr(ampgrad, name)), torch.tensor(vals).to(getattr(torch, name))


def _name(dt):
    return str(dt).split(".")[-1]


def _check_op(f, ag_args, th_args, what, torch):
    try:
        expected = f(*th_args)
    except Exception as e:
        exc = next(c for c in (NotImplementedError, IndexError, TypeError, ValueError, RuntimeError) if isinstance(e, c))
        with pytest.raises(exc):
            f(*ag_args)
        return
    actual = f(*ag_args)
    assert _name(actual.dtype) == _name(expected.dtype), f"{what}: {actual.dtype} != torch's {expected.dtype}"
    a = actual.float() if _name(actual.dtype) == "bfloat16" else actual
    e = expected.float() if _name(expected.dtype) == "bfloat16" else expected
    np.testing.assert_allclose(np.asarray(a.numpy(), dtype=np.float64), e.numpy().astype(np.float64), rtol=1e-3, err_msg=what)


@pytest.mark.parametrize("a,b", list(itertools.product(DTYPES, DTYPES)))
def test_promote_types_and_can_cast(a, b):
    torch = pytest.importorskip("torch")
    assert _name(ampgrad.promote_types(getattr(ampgrad, a), getattr(ampgrad, b))) == \
        _name(torch.promote_types(getattr(torch, a), getattr(torch, b)))
    assert ampgrad.can_cast(getattr(ampgrad, a), getattr(ampgrad, b)) == torch.can_cast(getattr(torch, a), getattr(torch, b))


@pytest.mark.parametrize("a,b", list(itertools.product(DTYPES, DTYPES)))
@pytest.mark.parametrize("kinds", ["dims-dims", "dims-0dim", "0dim-dims", "0dim-0dim"])
def test_binary_result_dtype(a, b, kinds):
    torch = pytest.importorskip("torch")
    ka, kb = kinds.split("-")
    xa, ta = _tensors(a, (2, 3) if ka == "dims" else (), torch)
    xb, tb = _tensors(b, (2, 3) if kb == "dims" else (), torch)
    assert _name(ampgrad.result_type(xa, xb)) == _name(torch.result_type(ta, tb)), "result_type"
    for op, f in OPS.items():
        _check_op(f, (xa, xb), (ta, tb), f"{a}({ka}) {op} {b}({kb})", torch)


@pytest.mark.parametrize("a", DTYPES)
@pytest.mark.parametrize("scalar", SCALARS, ids=repr)
@pytest.mark.parametrize("kind", ["dims", "0dim"])
def test_scalar_result_dtype(a, scalar, kind):
    torch = pytest.importorskip("torch")
    xa, ta = _tensors(a, (2, 3) if kind == "dims" else (), torch)
    assert _name(ampgrad.result_type(xa, scalar)) == _name(torch.result_type(ta, scalar)), "result_type(t, s)"
    assert _name(ampgrad.result_type(scalar, xa)) == _name(torch.result_type(scalar, ta)), "result_type(s, t)"
    for op, f in OPS.items():
        if op in ("torch.maximum",):  # no Scalar overload in torch (checked in test_errors)
            continue
        _check_op(f, (xa, scalar), (ta, scalar), f"{a}({kind}) {op} {scalar!r}", torch)
        if not op.startswith("torch."):
            _check_op(f, (scalar, xa), (scalar, ta), f"{scalar!r} {op} {a}({kind})", torch)


@pytest.mark.parametrize("default", ["float64", "float16", "bfloat16"])
def test_default_dtype_promotion(default):
    """A Python float meets an integer tensor as the default dtype."""
    torch = pytest.importorskip("torch")
    old_t, old_a = torch.get_default_dtype(), ampgrad.get_default_dtype()
    try:
        torch.set_default_dtype(getattr(torch, default))
        ampgrad.set_default_dtype(getattr(ampgrad, default))
        for name in ("int64", "bool", "float32"):
            xa, ta = _tensors(name, (2, 3), torch)
            for op, f in OPS.items():
                if op == "torch.maximum":
                    continue
                _check_op(f, (xa, 1.5), (ta, 1.5), f"{name} {op} 1.5 with default {default}", torch)
            assert _name((xa / xa).dtype) == _name((ta / ta).dtype)
            assert _name(ampgrad.tensor(1.5).dtype) == _name(torch.tensor(1.5).dtype)
    finally:
        torch.set_default_dtype(old_t)
        ampgrad.set_default_dtype(old_a)


def test_inplace_cast_rules():
    """a op= b: the result type must be castable to a's dtype (torch's can_cast rule)."""
    torch = pytest.importorskip("torch")
    for a, b in itertools.product(DTYPES, DTYPES):
        for op in ("add_", "mul_", "div_"):
            xa, ta = _tensors(a, (2, 3), torch)
            xb, tb = _tensors(b, (2, 3), torch)
            _check_op(lambda x, y: getattr(x, op)(y), (xa, xb), (ta, tb), f"{a}.{op}({b})", torch)
