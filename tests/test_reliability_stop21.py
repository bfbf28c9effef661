"""Issue 10, stop 21: fuzz groups fixed in the bindings, each against torch (values, dtypes, exception types):
two Python numbers to a binary op (Note [Two Python numbers] in csrc/bindings/ops.cpp), torch's deprecated
add/sub(alpha, other) overloads, pow_'s `exponent` keyword, expand's `size` / `implicit` keywords,
split's bool and 0-d tensor split sizes, dist's p beyond int64 and the 1 x 1 matrix_exp."""
import warnings

import numpy as np
import pytest

import ampgrad

torch = pytest.importorskip("torch")


def _outcome(f, L):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = f(L)
        except Exception as e:  # noqa: BLE001
            return ("raise", type(e).__name__), [str(x.message) for x in w]
    return ("ok", r), [str(x.message) for x in w]


def _np(r):
    if isinstance(r, (tuple, list)):
        return [_np(x) for x in r]
    if hasattr(r, "detach"):
        v = r.detach()
        return (str(r.dtype).split(".")[-1], tuple(r.shape), (v.float() if v.is_floating_point() else v).numpy().tolist())
    return r


CASES = {
    # two Python numbers: a 0-d tensor of their result type (floats: the default dtype), or TypeError
    "add_numbers": lambda L: L.add(1.5, 2),
    "sub_numbers_alpha": lambda L: L.sub(3, 2.5, alpha=2),
    "mul_numbers": lambda L: L.mul(3, 2.5),
    "mul_ints": lambda L: L.mul(3, 4),
    "mul_bools": lambda L: L.mul(True, False),
    "div_numbers": lambda L: L.div(3, 2),
    "div_floor_numbers": lambda L: L.div(7, 2, rounding_mode="floor"),
    "floor_divide_numbers": lambda L: L.floor_divide(7.5, 2),
    "true_divide_numbers": lambda L: L.true_divide(1, 4),
    "pow_numbers": lambda L: L.pow(5, -2),
    "pow_numbers_huge": lambda L: L.pow(2.0, -9223372036854775809),
    "xlogy_numbers": lambda L: L.xlogy(True, -9223372036854775809),
    "remainder_numbers": lambda L: L.remainder(5, 3),
    "bitwise_and_numbers": lambda L: L.bitwise_and(5, 3),
    "bitwise_xor_numbers": lambda L: L.bitwise_xor(5, 3.5),
    # the deprecated overloads: input + alpha * other
    "add_deprecated_method": lambda L: L.tensor([1.0, 2.0]).add(3, L.tensor([0.5, 0.25])),
    "add_deprecated_fn": lambda L: L.add(L.tensor([1.0, 2.0]), 2, L.tensor([0.5, 0.25])),
    "sub_deprecated_fn": lambda L: L.sub(L.tensor([1, 2]), 2, L.tensor([5, 7])),
    "add_deprecated_number_other": lambda L: L.tensor([1.0, 2.0]).add(2, 3.5),
    "add_deprecated_bool_alpha": lambda L: L.tensor([1.5]).add(True, float("inf")),
    "add_deprecated_huge_other": lambda L: L.tensor([-3], dtype=L.int32).add(-3, -9223372036854775809),
    "add__deprecated": lambda L: L.tensor([1.0, 2.0]).add_(2, L.tensor([0.5, 0.25])),
    "sub__deprecated": lambda L: L.tensor([1.0, 2.0]).sub_(2, L.tensor([0.5, 0.25])),
    "add__deprecated_cast": lambda L: L.tensor([3], dtype=L.uint8).add_(float("nan"), float("inf")),
    "add_alpha_not_number": lambda L: L.tensor([1.0]).add("x", L.tensor([1.0])),
    # pow_'s keyword
    "pow__exponent_kw": lambda L: L.tensor([1.5, 2.0]).pow_(exponent=2),
    "pow__bool_inf": lambda L: L.tensor([[False], [True]]).pow_(exponent=float("inf")),
    # expand's keywords
    "expand_size_kw": lambda L: L.ones(2).expand(size=(3, 2)),
    "expand_implicit": lambda L: L.ones(2).expand(3, 2, implicit=False),
    "expand_bad_kw": lambda L: L.ones(2).expand(3, 2, foo=1),
    # split: bool is not an int; a 0-d tensor is
    "split_bool": lambda L: L.split(L.ones(3, 3), False),
    "split_0d_tensor": lambda L: L.split(L.ones(3, 3), L.tensor(2)),
    "split_0d_negative": lambda L: L.split(L.ones(3, 3), L.tensor(-4.0)),
    "split_method_bool": lambda L: L.ones(3, 3).split(True),
    # dist: p is a Scalar, converted before any check
    "dist_p_huge": lambda L: L.ones(2).dist(L.ones(2), p=2 ** 70),
    "dist_p_huge_negative": lambda L: L.ones(2, dtype=L.int32).dist(L.ones(2, dtype=L.int32), p=-(2 ** 63) - 1),
    # matrix_exp of a 1 x 1 matrix is exp of the entry
    "matrix_exp_1x1_neg_inf": lambda L: L.matrix_exp(L.tensor([[float("-inf")]])),
    "matrix_exp_1x1_bf16": lambda L: L.matrix_exp(L.tensor([[[-float("inf")]], [[0.5]]], dtype=L.bfloat16)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    (ka, ra), wa = _outcome(CASES[name], ampgrad)
    (kt, rt), wt = _outcome(CASES[name], torch)
    assert ka == kt, (name, ra, rt)
    if ka == "raise":
        assert ra == rt, name
        return
    a, t = _np(ra), _np(rt)
    if isinstance(a, tuple):
        assert a[:2] == t[:2], name
        np.testing.assert_allclose(np.array(a[2], dtype=float), np.array(t[2], dtype=float), rtol=1e-6)
    else:
        assert len(a) == len(t) and all(x[:2] == y[:2] for x, y in zip(a, t)), name
    # the deprecation warning carries torch's text (torch warns once per process, so it may be gone there)
    dep_a = [m for m in wa if "deprecated" in m]
    dep_t = [m.split(" (Triggered internally")[0] for m in wt if "deprecated" in m]
    assert bool(dep_a) == ("deprecated" in name), name
    assert not dep_t or dep_a == dep_t, name


def test_matrix_exp_1x1_gradient():
    x = ampgrad.tensor([[0.75]], dtype=ampgrad.float64, requires_grad=True)
    y = ampgrad.matrix_exp(x)
    y.sum().backward()
    assert type(y.grad_fn).__name__ == "LinalgMatrixExpBackward0"
    np.testing.assert_allclose(x.grad.numpy(), np.exp([[0.75]]), rtol=1e-12)


AFTER_FUZZ = {  # the fuzz re-run's groups after the first round of this stop
    "expand_no_size": lambda L: L.tensor(3).expand(implicit=True),
    "subtract_dtype_third": lambda L: L.subtract(L.tensor([True]), 2 ** 64, L.int64),
    "sub__bool_alpha_bf16": lambda L: L.tensor(-3.0, dtype=L.bfloat16).sub_(True, 1e300),
    "add__bool_alpha_kw": lambda L: L.tensor([1.0]).add_(L.tensor([1.0]), alpha=True),
    "add__float_alpha_int": lambda L: L.tensor([1]).add_(L.tensor([1]), alpha=0.5),
    "batch_norm_aten_int8": lambda L: L.batch_norm(L.tensor([[[-1, -1]], [[-1, 5]], [[2, 5]]], dtype=L.int8), None, None,
                                                   None, None, True, 0.5, -0.0, True),
    "batch_norm_aten_one_value": lambda L: L.batch_norm(L.ones(1, 3), None, None, None, None, True, 0.1, 1e-5, False),
    "add_numbers_overflow_float": lambda L: L.add(1e300, 1),
}


@pytest.mark.parametrize("name", sorted(AFTER_FUZZ))
def test_matches_torch_after_fuzz(name):
    (ka, ra), _ = _outcome(AFTER_FUZZ[name], ampgrad)
    (kt, rt), _ = _outcome(AFTER_FUZZ[name], torch)
    assert ka == kt, (name, ra, rt)
    if ka == "raise":
        assert ra == rt, name
    else:
        a, t = _np(ra), _np(rt)
        assert a[:2] == t[:2], name
        np.testing.assert_allclose(np.array(a[2], dtype=float), np.array(t[2], dtype=float), rtol=1e-6)


def test_broadcast_of_0d_tensors_and_expand_to_no_size():
    for L in (ampgrad, torch):
        a, b = L.broadcast_tensors(L.tensor(1), L.tensor(2.5))
        assert tuple(a.shape) == tuple(b.shape) == ()
        assert tuple(L.broadcast_to(L.tensor(3), ()).shape) == ()
        assert tuple(L.tensor(3).expand(()).shape) == ()
    msgs = []
    for L in (ampgrad, torch):
        with pytest.raises(RuntimeError) as e:
            L.broadcast_to(L.tensor([-5]), ())
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
