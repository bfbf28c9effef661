"""Issue 10, stop 22: differential-fuzz groups of torch.* functions and Tensor methods fixed in Python, each
against torch (the exception type, and values / dtypes where the call succeeds): index_put(_)'s parser and
check order, tensor()/new_tensor() with a dtype storing non-numbers, the aten losses' int reduction and
torch.binary_cross_entropy_with_logits' aten composition."""
import warnings

import numpy as np
import pytest

import ampgrad

torch = pytest.importorskip("torch")
from _torch_compare import outcome, to_np, check  # noqa: E402


def _outcome(f, L):
    return outcome(f, L, message=False)


_np = to_np


def _check(f):
    check(f, ampgrad, torch, message=False)








def _z(L, *shape, dtype="float32"):
    return L.zeros(*shape, dtype=getattr(L, dtype))


def _ix(L, v):
    return L.tensor(v, dtype=L.int64)


INDEX_PUT = {
    # torch's parser: a Tensor list refuses None (and any non-Tensor) at once, before any other check
    "none_index": lambda L: _z(L, 2, 3).index_put([None], _z(L, 3)),
    "none_second": lambda L: _z(L, 2, 3).index_put([_ix(L, [0]), None], _z(L, 3)),
    "none_fn": lambda L: L.index_put(_z(L, 2, 3), [None], _z(L, 3), True),
    "none_inplace_leaf": lambda L: _z(L, 2, 3).requires_grad_().index_put_([_ix(L, [0]), None], _z(L, 3)),
    "int_element": lambda L: _z(L, 2, 3).index_put([_ix(L, [0]), 3], _z(L, 3)),
    "tensor_not_list": lambda L: _z(L, 2, 3).index_put(_ix(L, [0]), _z(L, 3)),
    "values_float": lambda L: _z(L, 2, 3).index_put([_ix(L, [0])], 1.0),
    # then: the leaf check (in-place), too many indices, index dtypes, masks, broadcast, value shape, dtype
    "leaf": lambda L: _z(L, 2, 3).requires_grad_().index_put_([_ix(L, [0])] * 3, _z(L, 3)),
    "too_many_before_dtype": lambda L: L.tensor([3], dtype=L.int32).index_put(
        [_ix(L, [2 ** 63 - 1]), L.tensor([0], dtype=L.int32)], L.tensor([1], dtype=L.uint8), True),
    "float_index_before_dtype": lambda L: _z(L, 0, dtype="int8").index_put_(
        [_z(L, 0)], L.tensor([1], dtype=L.uint8)),
    "value_shape_before_bounds": lambda L: L.index_put(
        _z(L, 2, 1, dtype="bool"), [_ix(L, 2), _ix(L, [[1, 0, 1, 1], [1, 1, 1, 0]])], _z(L, 3, dtype="bool")),
    "value_shape_before_bounds_inplace": lambda L: _ix(L, [[-3, -4]]).index_put_(
        [_ix(L, [[-5], [-2 ** 63]]).t()], _z(L, 2, 3, 0, dtype="int64"), True),
    "index_broadcast": lambda L: _z(L, 2, 3).index_put([_ix(L, [0, 1]), _ix(L, [0, 1, 1])], _z(L, 5)),
    "mask_shape": lambda L: _z(L, 2, 3).index_put([L.tensor([True, False, True])], _z(L, 3)),
    "mask_2d": lambda L: _z(L, 2, 3).index_put([L.tensor([[True, False, True], [True, True, True]])], _z(L, 5)),
    "mask_then_index": lambda L: _z(L, 2, 3).index_put(
        [L.tensor([[True, False, True], [True, True, True]]), _ix(L, [0])], _z(L, 5)),
    "empty_dim": lambda L: _z(L, 0, 3).index_put([_ix(L, [1])], _z(L, 3), True),
    "dtype_mismatch": lambda L: _z(L, 2, 3).index_put([_ix(L, [0])], _z(L, 3, dtype="int64")),
    "bounds": lambda L: _z(L, 2, 3).index_put([_ix(L, [5])], _z(L, 3)),
    # values unchanged
    "value_accumulate": lambda L: L.arange(6.).reshape(2, 3).index_put(
        (_ix(L, [0, 1, 0]), _ix(L, [2, 0, 2])), L.tensor([1., 2., 3.]), True),
    "value_mask": lambda L: L.arange(6.).reshape(2, 3).index_put((L.tensor([True, False]),), L.tensor(7.)),
    "value_int32_index": lambda L: L.arange(6).reshape(2, 3).index_put_(
        (L.tensor([1], dtype=L.int32),), _ix(L, [9, 8, 7])),
    "value_fn": lambda L: L.index_put(L.arange(4.), [_ix(L, [3])], L.tensor([-1.])),
    # torch's masked_fill dispatch: one value, one mask (no dtype check; a byte mask refused)
    "mask_fill_dtype": lambda L: L.tensor([[1., 2.]]).index_put([L.tensor([[True, False]])], _ix(L, [7])),
    "mask_fill_empty": lambda L: L.tensor([[False]]).index_put_([L.tensor([[False]])], _z(L, 1, 1, dtype="bool")),
    "mask_fill_0d": lambda L: L.tensor([[1., 2.]]).index_put([L.tensor(True)], L.tensor([7.])),
    "mask_fill_byte": lambda L: L.tensor([255, 5], dtype=L.uint8).index_put(
        [L.tensor([2, 4], dtype=L.uint8)], L.tensor([255], dtype=L.uint8)),
    "mask_fill_overflow_int": lambda L: L.tensor([1, 2]).index_put([L.tensor([True, False])], L.tensor(float("inf"))),
    "mask_fill_overflow_int8": lambda L: L.tensor([1, 2], dtype=L.int8).index_put(
        [L.tensor([True, False])], L.tensor(300)),
    "mask_fill_wrap_uint8": lambda L: L.tensor([1, 2], dtype=L.uint8).index_put(
        [L.tensor([True, False])], L.tensor(-1)),
    "mask_fill_shape": lambda L: L.tensor([[1., 2.]]).index_put([L.tensor([True, False])], L.tensor([7.])),
    # an empty index list: all of self (values checked against its shape), refused unless self is empty
    "empty_list_value": lambda L: _z(L, 0, 2).index_put((), L.ones(2), True),
    "empty_list_shape": lambda L: _z(L, 0, 2).index_put((), L.ones(4), True),
    "empty_list_nonempty": lambda L: L.tensor([4], dtype=L.uint8).expand((2,)).index_put(
        [], L.tensor([0, 2], dtype=L.uint8), True),
    "empty_list_dtype": lambda L: _z(L, 0, dtype="bool").index_put_([], _z(L, 0, dtype="int32"), True),
    "empty_list_grad": lambda L: L.index_put(_z(L, 0, 3, 0), [], _z(L, 0, 3, 0).requires_grad_(), True).requires_grad,
    "empty_list_grad_inplace": lambda L: _z(L, 0, 1, 2).index_put_([], _z(L, 0, 1, 2).requires_grad_()).requires_grad,
    "empty_list_one_value": lambda L: L.tensor(3.).index_put([], L.tensor(7.)),
}


@pytest.mark.parametrize("name", sorted(INDEX_PUT))
def test_index_put(name):
    _check(INDEX_PUT[name])


def test_index_put_setitem_and_masked_index_put_unchanged():
    for L in (ampgrad, torch):
        x = L.zeros(2, 3)
        x[:, L.tensor([0, 2])] = 1.0
        assert x.sum().item() == 4.0
    a = ampgrad.ops.aten._unsafe_masked_index_put_accumulate(
        ampgrad.zeros(2, 3), ampgrad.tensor([[True], [False]]), [ampgrad.tensor([0, 1]), None], ampgrad.ones(2, 3))
    t = torch.ops.aten._unsafe_masked_index_put_accumulate(
        torch.zeros(2, 3), torch.tensor([[True], [False]]), [torch.tensor([0, 1]), None], torch.ones(2, 3))
    assert a.tolist() == t.tolist()


TENSOR_STORE = {
    # a given dtype is not inferred: each element is converted to it (TypeError), sequences checked first
    "new_tensor_none_float": lambda L: _z(L, 2).new_tensor(None),
    "new_tensor_none_int": lambda L: _z(L, 2, dtype="int8").new_tensor([None]),
    "new_tensor_object_bool": lambda L: _z(L, 2, dtype="bool").new_tensor([1, object()]),
    "tensor_none_float": lambda L: L.tensor(None, dtype=L.float32),
    "tensor_none_int": lambda L: L.tensor([1, None], dtype=L.int64),
    "as_tensor_none": lambda L: L.as_tensor([1, None], dtype=L.int64),
    "tensor_str_leaf": lambda L: L.tensor([1, "a"], dtype=L.int64),
    "tensor_str_first": lambda L: L.tensor(["a"], dtype=L.int64),
    "ragged_first": lambda L: L.tensor([[1, 2], [None]], dtype=L.float32),
    "not_a_sequence": lambda L: L.tensor([[1, 2], 3], dtype=L.float32),
    "list_leaf": lambda L: L.tensor([1, [2]], dtype=L.float32),
    "nested_none": lambda L: L.tensor([[1, 2], [3, None]], dtype=L.float32),
    "no_dtype_none": lambda L: L.tensor([1, None]),
    "value_mixed": lambda L: L.tensor([1.5, True, 2], dtype=L.int32),
    "value_tensor_elem": lambda L: L.tensor([L.tensor(1.), 2], dtype=L.float32),
    "value_empty": lambda L: L.tensor([[], []], dtype=L.float32),
}


@pytest.mark.parametrize("name", sorted(TENSOR_STORE))
def test_tensor_store(name):
    _check(TENSOR_STORE[name])


def _f(L, v, dtype="float32"):
    return L.tensor(v, dtype=getattr(L, dtype))


LOSSES = {
    # aten's apply_loss_reduction: 1 mean, 2 sum, any other int none; a bool is the parser's TypeError
    "kl_div_minus1": lambda L: L.kl_div(_f(L, [0.1, 0.2]), _f(L, [0.3, 0.4]), -1),
    "kl_div_bool": lambda L: L.kl_div(_f(L, [0.1, 0.2]), _f(L, [0.3, 0.4]), True),
    "kl_div_sum": lambda L: L.kl_div(_f(L, [0.1, 0.2]), _f(L, [0.3, 0.4]), 2),
    "margin_ranking_minus2": lambda L: L.margin_ranking_loss(_f(L, [1., 2.]), _f(L, [2., 0.]), _f(L, [1., -1.]),
                                                             0.0, -2),
    "hinge_3": lambda L: L.hinge_embedding_loss(_f(L, [0.5, 2.]), _f(L, [1., -1.]), 1.0, 3),
    "cosine_embedding_minus1": lambda L: L.cosine_embedding_loss(_f(L, [[1., 2.]]), _f(L, [[2., 1.]]), _f(L, [1.]),
                                                                 0.0, -1),
    "poisson_nll_minus1": lambda L: L.poisson_nll_loss(_f(L, [0.5, 2.]), _f(L, [1., 3.]), True, False, 1e-8, -1),
    "triplet_minus1": lambda L: L.triplet_margin_loss(_f(L, [[0., 1.]]), _f(L, [[1., 1.]]), _f(L, [[2., 0.]]),
                                                      1.0, 2, 1e-6, False, -1),
    # binary_cross_entropy_with_logits: aten's body (log_sigmoid's dtype check first, no size check, in-place
    # arithmetic into target's shape and dtype)
    "bce_int_input_size": lambda L: L.binary_cross_entropy_with_logits(_z(L, 3, dtype="int8"), _z(L, 4)),
    "bce_int_input_reduction": lambda L: L.binary_cross_entropy_with_logits(_z(L, 3, dtype="int16"), _z(L, 3),
                                                                            reduction=-1),
    "bce_size": lambda L: L.binary_cross_entropy_with_logits(_z(L, 3), _z(L, 4)),
    "bce_int_target": lambda L: L.binary_cross_entropy_with_logits(_z(L, 3), _z(L, 3, dtype="int8")),
    "bce_reduction_minus1": lambda L: L.binary_cross_entropy_with_logits(_f(L, [0.5, -1.]), _f(L, [0.2, 1.]),
                                                                         reduction=-1),
    "bce_pos_weight_broadcast": lambda L: L.binary_cross_entropy_with_logits(
        _f(L, [0.5, -1., 2.]), _f(L, [0.2, 0.5, 1.]), None, _f(L, [[2., 1., .5]]), 0),
    "bce_target_2d": lambda L: L.binary_cross_entropy_with_logits(
        _f(L, [0.5, -1., 2.]), _f(L, [[0.2, 0.5, 1.]]), _f(L, [1., 2., 3.]), None, 2),
    "bce_target_f64": lambda L: L.binary_cross_entropy_with_logits(
        _f(L, [0.5, -1., 2.]), _f(L, [0.2, 0.5, 1.], "float64"), None, None, 0),
    "bce_value": lambda L: L.binary_cross_entropy_with_logits(
        _f(L, [0.5, -1., 2.]), _f(L, [0.2, 0.5, 1.]), _f(L, [1., 2., 3.]), _f(L, [2., 1., .5]), 1),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_losses(name):
    _check(LOSSES[name])


REDUCTIONS = {
    # a listed dim of size 0 in an empty tensor: IndexError naming that dim as given, dims checked in order
    "amax_all_dims_listed": lambda L: L.amax(_z(L, 0), [-1], True),
    "amax_two_dims": lambda L: L.amax(_z(L, 3, 0), (0, 1)),
    "amin_order": lambda L: L.amin(_z(L, 0, 3), [1, -2]),
    "amin_zero_before_range": lambda L: L.amin(_z(L, 0, 3), [0, 5]),
    "amin_range_before_zero": lambda L: L.amin(_z(L, 0, 3), [1, 5]),
    "amin_no_dim": lambda L: L.amin(_z(L, 0, 3), []),
    "aminmax_dim": lambda L: _z(L, 0).aminmax(dim=0),
    "aminmax_negative_dim": lambda L: L.aminmax(_z(L, 0, 3), dim=-2),
    "value_amax_nonempty_dim": lambda L: L.amax(_z(L, 0, 3), 1),
    "value_aminmax": lambda L: L.aminmax(L.arange(6.).reshape(2, 3), dim=1),
    "value_amax_int_dim": lambda L: L.arange(6.).reshape(2, 3).amax(0),
    # a signature with two positional parameters takes no varargs int list: x.amin(1, True) is dim, keepdim
    "amin_dim_keepdim_0d": lambda L: L.tensor(1).amin(1, True),
    "amin_huge_dim_keepdim": lambda L: L.tensor(1).amin(2 ** 40, True),
    "sum_keepdim_int": lambda L: _z(L, 2, 3).sum(5, True),
    "value_amin_dim_keepdim": lambda L: L.arange(6.).reshape(2, 3).amin(1, True),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions(name):
    _check(REDUCTIONS[name])


RANGE = {
    # torch.range's checks in aten's order: dtype, bounds in the accumulate type, step, finiteness, sign
    "bool_first": lambda L: L.range(float("nan"), 2, 0, dtype=L.bool),
    "step_zero": lambda L: L.range(0, 2, 0, dtype=L.float16),
    "nan_start": lambda L: L.range(float("nan"), True, 0.5, dtype=L.bfloat16),
    "inf_end": lambda L: L.range(0, float("inf")),
    "inf_int": lambda L: L.range(0, float("inf"), dtype=L.int64),
    "sign": lambda L: L.range(0, end=-1.5, dtype=L.bfloat16),
    "scalar_overflow": lambda L: L.range(2, -9223372036854775809, 5),
    "end_required": lambda L: L.range(5),
    "value_trunc_int": lambda L: L.range(0.5, 3.7, dtype=L.int64),
    "value_float_step": lambda L: L.range(1.5, 4, 0.5),
    "value_descending": lambda L: L.range(5, 0, -1),
    "value_uint8": lambda L: L.range(0, 5, dtype=L.uint8),
}


@pytest.mark.parametrize("name", sorted(RANGE))
def test_range(name):
    _check(RANGE[name])


MISC = {
    # the dtype conversions take memory_format only by keyword
    "half_positional": lambda L: _z(L, 2).half(1),
    "bool_two_positional": lambda L: _z(L, 2).bool(1, 2),
    "char_tensor_positional": lambda L: _z(L, 2).char(_z(L, 1)),
    "value_int": lambda L: L.tensor([1.5, -2.5]).int(),
    "value_double": lambda L: L.tensor([1.5, -2.5]).double(),
    # the autocast state functions' `str device_type`
    "get_autocast_dtype_int": lambda L: L.get_autocast_dtype(4611686018427387904),
    "set_autocast_dtype_int": lambda L: L.set_autocast_dtype(3, L.float16),
    "is_autocast_enabled_int": lambda L: L.is_autocast_enabled(3),
    "set_autocast_enabled_int": lambda L: L.set_autocast_enabled(3, True),
    "value_get_autocast_dtype": lambda L: str(L.get_autocast_dtype("cpu")).split(".")[-1],
    "value_is_autocast_enabled": lambda L: L.is_autocast_enabled("cpu"),
}


@pytest.mark.parametrize("name", sorted(MISC))
def test_misc(name):
    _check(MISC[name])
