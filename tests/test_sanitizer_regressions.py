"""Regression tests for what the ASan + UBSan build found (tools/SANITIZERS.md). Each passes on the
normal build too; under tools/sanitize.sh the sanitizers check that the kernels stay defined.

Integer arithmetic wraps (two's complement) as torch's does; signed overflow used to be undefined
behaviour in the kernels (kernels/common/scalar_math.h, kernels/cpu/reduce.cpp), and INT_MIN / -1
trapped (SIGFPE) in the integer division kernels.
"""
import pytest

import ampgrad

IMIN32, IMAX32 = -2**31, 2**31 - 1
IMIN64, IMAX64 = -2**63, 2**63 - 1

CASES = [
    # (name, fn(m, x) with x = [INT_MIN, 5, -7] in the dtype, expected for int32, expected for int64)
    ("neg", lambda m, x: m.neg(x), [IMIN32, -5, 7], [IMIN64, -5, 7]),
    ("abs", lambda m, x: m.abs(x), [IMIN32, 5, 7], [IMIN64, 5, 7]),
    ("add", lambda m, x: x + x, [0, 10, -14], [0, 10, -14]),
    ("add_alpha", lambda m, x: m.add(x, x, alpha=3), [0, 20, -28], [0, 20, -28]),
    ("sub", lambda m, x: x - 1, [IMAX32, 4, -8], [IMAX64, 4, -8]),
    ("sub_alpha", lambda m, x: m.sub(x, x, alpha=2), [IMIN32, -5, 7], [IMIN64, -5, 7]),
    ("mul", lambda m, x: x * x, [0, 25, 49], [0, 25, 49]),
    ("pow", lambda m, x: x.pow(3), [0, 125, -343], [0, 125, -343]),
    ("floor_divide", lambda m, x: m.floor_divide(x, m.full_like(x, -1)), [IMIN32, -5, 7], [IMIN64, -5, 7]),
    ("fmod", lambda m, x: m.fmod(x, m.full_like(x, -1)), [0, 0, 0], [0, 0, 0]),
    ("remainder", lambda m, x: m.remainder(x, m.full_like(x, -1)), [0, 0, 0], [0, 0, 0]),
]


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("name,fn,exp32,exp64", CASES, ids=[c[0] for c in CASES])
def test_integer_ops_wrap(name, fn, exp32, exp64, dtype):
    lo = IMIN32 if dtype == "int32" else IMIN64
    x = ampgrad.tensor([lo, 5, -7], dtype=getattr(ampgrad, dtype))
    assert fn(ampgrad, x).tolist() == (exp32 if dtype == "int32" else exp64)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("name,fn", [(c[0], c[1]) for c in CASES], ids=[c[0] for c in CASES])
def test_integer_ops_wrap_like_torch(name, fn, dtype, torch):
    lo = IMIN32 if dtype == "int32" else IMIN64
    x = ampgrad.tensor([lo, 5, -7], dtype=getattr(ampgrad, dtype))
    t = torch.tensor([lo, 5, -7], dtype=getattr(torch, dtype))
    assert fn(ampgrad, x).tolist() == fn(torch, t).tolist()


def test_trunc_division_by_minus_one():
    # torch's CPU kernel traps (SIGFPE) on INT_MIN / -1; ampgrad wraps as floor_divide does.
    for dt, lo in (("int32", IMIN32), ("int64", IMIN64)):
        x = ampgrad.tensor([lo, 5, -7], dtype=getattr(ampgrad, dt))
        assert ampgrad.div(x, ampgrad.full_like(x, -1), rounding_mode="trunc").tolist() == [lo, -5, 7]


def test_integer_reductions_wrap(torch):
    big = [2**62, 2**62, 3]
    x = ampgrad.tensor(big, dtype=ampgrad.int64)
    t = torch.tensor(big, dtype=torch.int64)
    assert x.sum().item() == t.sum().item() == -2**63 + 3
    assert x.prod().item() == t.prod().item() == 0
    assert x.cumsum(0).tolist() == t.cumsum(0).tolist()
    assert x.cumprod(0).tolist() == t.cumprod(0).tolist()
