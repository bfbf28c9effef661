"""Issue 10, stop 22 (d): differential-fuzz groups of torch.* functions fixed in Python, each against torch
(the exception type, values / dtypes where the call succeeds, and the inputs afterwards)."""
import itertools
import warnings

import numpy as np
import pytest

import ampgrad

torch = pytest.importorskip("torch")
from _torch_compare import outcome, same, to_np, check  # noqa: E402


def _outcome(f, L):
    return outcome(f, L, message=False)


_np = to_np
_same = same


def _check(f):
    check(f, ampgrad, torch, message=False)










def _with_input(mk, call):
    """Runs call(L, x) and returns (result, x afterwards): catches in-place side effects on the input."""
    def f(L):
        x = mk(L)
        return [call(L, x), x]
    return f


COV = {
    # one observation with exactly one kind of weights: torch's result is that of a zeroed input (and torch zeroes
    # the caller's tensor in place: a torch bug ampgrad does not copy, test_cov_one_observation_keeps_the_input)
    "one_obs_fweights_int": lambda L: L.cov(L.tensor([-4], dtype=L.int32), correction=1,
                                            fweights=L.tensor(1, dtype=L.int8)),
    "one_obs_aweights": lambda L: L.cov(L.tensor([[3.0], [5.0]]), aweights=L.tensor([2.0])),
    "one_obs_both": _with_input(lambda L: L.tensor([[3.0], [5.0]]),
                                lambda L, x: L.cov(x, fweights=L.tensor([2]), aweights=L.tensor([0.5]))),
    "zero_dim": lambda L: L.cov(L.tensor(3.0)),
    "weights_sum_zero": lambda L: L.cov(L.tensor([[1, 2, 4], [3, 5, 0]]), fweights=L.tensor([0, 0, 0])),
    "fweights_bool": lambda L: L.cov(L.tensor([[1, 2, 4], [3, 5, 0]]), fweights=L.tensor([True, False, True])),
    "fweights_dtype_before_numel": lambda L: L.cov(L.tensor([[1, 2, 4], [3, 5, 0]]), fweights=L.tensor([1.0, 2.0])),
    "both_weights": lambda L: L.cov(L.tensor([[1.0, 2, 4], [3, 5, 0]]), aweights=L.tensor([2.0, 1, 3]),
                                    fweights=L.tensor([1, 2, 2])),
    # the input promotes with floating weights (an integer input alone: the default float)
    "int_input_half_aweights": lambda L: L.cov(L.tensor([-3, -5, 3], dtype=L.int32), correction=-1,
                                               aweights=L.tensor([3.0, 2.0, 1.5], dtype=L.float16, requires_grad=True)),
    "float_input_double_aweights": lambda L: L.cov(L.tensor([-3.0, -5, 3]),
                                                   aweights=L.tensor([3.0, 2.0, 1.5], dtype=L.float64)),
    "int_input_fweights": lambda L: L.cov(L.tensor([-3, -5, 3]), fweights=L.tensor([1, 2, 1])),
    "aweights_correction0": lambda L: L.cov(L.tensor([[1.0, 2, 4], [3, 5, 0]]), aweights=L.tensor([2.0, 1, 3]),
                                            correction=0),
}


@pytest.mark.parametrize("name", sorted(COV))
def test_cov(name):
    _check(COV[name])


BERNOULLI = {
    # torch.bernoulli binds no Tensor-p overload: the parser's TypeError; a 0-d Tensor without grad is a float p
    "tensor_p": lambda L: L.bernoulli(L.ones(2), L.tensor([0.5])),
    "tensor_p_kw": lambda L: L.bernoulli(L.ones(2), p=L.ones(2)),
    "tensor_p_0d_grad": lambda L: L.bernoulli(L.ones(2), L.tensor(0.5, requires_grad=True)),
    "tensor_p_0d": lambda L: L.bernoulli(L.ones(3), L.tensor(1.0)),
    "tensor_p_0d_int": lambda L: L.bernoulli(L.ones(2), L.tensor(0)),
    # an integral input as its own probabilities: the kernel's NotImplementedError before the range check
    "int_self_out_of_range": lambda L: L.bernoulli(L.tensor([[2], [2]])),
    "int_self": lambda L: L.bernoulli(L.tensor([[0], [1]])),
    "bool_self": lambda L: L.bernoulli(L.tensor([True])),
    "int_self_empty": lambda L: L.bernoulli(L.ones(0, dtype=L.int64)),
    "int_self_float_p": lambda L: L.bernoulli(L.tensor([[0], [1]]), 0.0),
    "float_self_out_of_range": lambda L: L.bernoulli(L.ones(2) * 2),
}


@pytest.mark.parametrize("name", sorted(BERNOULLI))
def test_bernoulli(name):
    _check(BERNOULLI[name])


def _lu_nograd(L):
    with L.no_grad():
        return L.lu_unpack(L.ones(4, requires_grad=True), L.ones(2, dtype=L.int32))


LU_UNPACK = {
    # LU_data requiring grad: torch's autograd kernel reads size(-1), size(-2) first (IndexError)
    "grad_1d": lambda L: L.lu_unpack(L.ones(4, requires_grad=True), L.ones(2), True, False),
    "grad_0d": lambda L: L.lu_unpack(L.ones((), requires_grad=True), L.ones(2, dtype=L.int32)),
    "grad_1d_no_grad_mode": _lu_nograd,
    "no_grad_1d": lambda L: L.lu_unpack(L.ones(4), L.ones(2, requires_grad=True), True, False),
    # LU_pivots is read only to unpack them
    "float_pivots_unused": lambda L: L.lu_unpack(L.ones(1, 1), L.ones(1, 1, requires_grad=True), False, False),
    "float_pivots_data": lambda L: L.lu_unpack(L.tensor([[2.0, 1], [4, 3]]), L.ones(5, 3), True, False),
    "batched_pivots_unused": lambda L: L.lu_unpack(L.ones(3, 2, 4), L.ones(2, dtype=L.int32) * 7, True, False),
    "float_pivots_used": lambda L: L.lu_unpack(L.ones(2, 2), L.ones(5, 3), True, True),
    "valid": lambda L: L.lu_unpack(L.tensor([[2.0, 1], [4, 3]]), L.tensor([2, 2], dtype=L.int32)),
}


@pytest.mark.parametrize("name", sorted(LU_UNPACK))
def test_lu_unpack(name):
    _check(LU_UNPACK[name])


def _cl(L):
    return L.arange(120.0).reshape(2, 4, 5, 3).permute(0, 3, 1, 2)   # channels-last dense


GROUP_NORM = {
    # aten's check_group_norm_inputs: num_groups > 0 (F.group_norm's ZeroDivisionError is F's own)
    "zero_groups": lambda L: L.group_norm(L.ones(1, 3, 2), 0, cudnn_enabled=False),
    "negative_groups": lambda L: L.group_norm(L.ones(1, 3, 2), -1),
    "empty_zero_groups": lambda L: L.group_norm(L.ones(0, 3, 2), 0),
    "not_divisible": lambda L: L.group_norm(L.ones(1, 3, 2), 2),
    "valid": lambda L: L.group_norm(L.arange(6.0).reshape(1, 3, 2), 3),
    "native_zero_groups": lambda L: L.native_group_norm(L.ones(1, 3, 2), None, None, 1, 3, 2, 0, 1e-5),
    "native_empty_zero_groups": lambda L: L.native_group_norm(L.ones(0, 3, 2), None, None, 0, 3, 2, 0, 1e-5),
    # the CPU kernel wants X contiguous in its suggested memory format
    "native_strided": lambda L: L.native_group_norm(L.ones(1, 3, 2)[:, ::2], None, None, 1, 2, 2, 1, 1e-5),
    "native_strided_4d": lambda L: L.native_group_norm(L.arange(120.0).reshape(2, 3, 4, 5)[:, :, ::2], None, None,
                                                       2, 3, 10, 3, 1e-5),
    "native_channels_last": lambda L: L.native_group_norm(_cl(L), None, None, 2, 3, 20, 3, 1e-5)[1:],
}


@pytest.mark.parametrize("name", sorted(GROUP_NORM))
def test_group_norm(name):
    _check(GROUP_NORM[name])


NORM_EXCEPT_DIM = {
    # the norm's dtype check: floating point or complex only
    "bool": lambda L: L.norm_except_dim(L.tensor([True, False]), dim=0),
    "int_dim1": lambda L: L.norm_except_dim(L.tensor([[1, 2]]), dim=1),
    "int_all": lambda L: L.norm_except_dim(L.tensor([1, 2]), dim=-1),
    "int_bad_dim": lambda L: L.norm_except_dim(L.tensor([[1, 2]]), dim=3),
    "float": lambda L: L.norm_except_dim(L.tensor([[1.0, 2], [3, 4]]), dim=1),
}


@pytest.mark.parametrize("name", sorted(NORM_EXCEPT_DIM))
def test_norm_except_dim(name):
    _check(NORM_EXCEPT_DIM[name])


def _ts(L, b_shape, A_shape, dtype="int16", A_dtype=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = L.ones(*b_shape, dtype=getattr(L, dtype))
        A = L.eye(A_shape[-1], dtype=getattr(L, A_dtype or dtype)).expand(*A_shape) if A_shape[-1] == A_shape[-2] \
            else L.ones(*A_shape, dtype=getattr(L, A_dtype or dtype))
        return L.triangular_solve(b, A)


TRIANGULAR_SOLVE = {
    # shape and dtype-equality checks first, then the CPU kernel's NotImplementedError for non-float dtypes
    "int16": lambda L: _ts(L, (2, 1), (2, 2)),
    "int64": lambda L: _ts(L, (2, 1), (2, 2), "int64"),
    "bool": lambda L: _ts(L, (2, 1), (2, 2), "bool"),
    "float16": lambda L: _ts(L, (2, 1), (2, 2), "float16"),
    "int_empty": lambda L: _ts(L, (2, 0), (2, 2)),
    "mixed_dtypes": lambda L: _ts(L, (2, 1), (2, 2), "float32", "int16"),
    "int_not_square": lambda L: _ts(L, (2, 1), (2, 3)),
    "int_incompatible": lambda L: _ts(L, (3, 1), (2, 2)),
    "int_b_1d": lambda L: _ts(L, (2,), (2, 2)),
    "int_batch_mismatch": lambda L: _ts(L, (3, 2, 1), (2, 2, 2)),
    "float": lambda L: _ts(L, (3, 2, 1), (1, 2, 2), "float32"),
}


@pytest.mark.parametrize("name", sorted(TRIANGULAR_SOLVE))
def test_triangular_solve(name):
    _check(TRIANGULAR_SOLVE[name])


THRESHOLD = {
    # the Scalars convert exactly to an integer dtype; float32 / half / bfloat16 convert them to float
    "int64_bounds_empty": lambda L: L.threshold_(L.zeros((3, 0), dtype=L.int64), 2147483648, 9223372036854775807),
    "int64_bounds": lambda L: L.threshold(L.zeros((3, 1), dtype=L.int64), 2147483648, 9223372036854775807),
    "int32_overflow": lambda L: L.threshold_(L.zeros((3, 1), dtype=L.int32), 2147483648, 9223372036854775807),
    "float_value_overflow": lambda L: L.threshold(L.zeros((2, 2, 0)), 2, 1e300),
    "float_threshold_overflow": lambda L: L.threshold(L.zeros((2, 2, 1)), 1e300, 1),
    "bfloat16_overflow": lambda L: L.threshold(L.zeros(2, dtype=L.bfloat16), 0.5, 1e39),
    "int64_exact": lambda L: L.threshold(L.tensor([9223372036854775806, 9223372036854775807, -5, 3]),
                                         9223372036854775806, -9223372036854775808),
    "int64_exact_float_threshold": lambda L: L.threshold(L.tensor([9223372036854775806, -5, 3]), 2.5,
                                                         9223372036854775807),
    "int64_exact_inplace": _with_input(lambda L: L.tensor([9223372036854775806, 9223372036854775807, -5]),
                                       lambda L, x: L.threshold_(x, 9223372036854775806, -9223372036854775808)),
    "half_range": lambda L: L.threshold(L.tensor([1.0], dtype=L.float16), 0.5, 1e5),
    "half_in_range": lambda L: L.threshold(L.tensor([1.0], dtype=L.float16), 0.5, 60000),
    "bfloat16_range": lambda L: L.threshold(L.tensor([1.0], dtype=L.bfloat16), 0.5, 1e39),
    "uint8_negative_wraps": lambda L: L.threshold(L.tensor([1, 4], dtype=L.uint8), -3, 2),
    "uint8_too_negative": lambda L: L.threshold(L.tensor([1, 4], dtype=L.uint8), -300, 2),
    # the threshold is compared in the op math (float), the value converts to the dtype; a negative float no uint8
    "half_threshold_in_float": lambda L: L.threshold(L.tensor([-4.0, 1.5], dtype=L.float16), 9223372036854775807, 1.5),
    "half_threshold_beyond_float": lambda L: L.threshold(L.tensor([1.0], dtype=L.float16), 1e39, 1.0),
    "uint8_negative_float_threshold": lambda L: L.threshold(L.tensor([0, 1, 0, 2], dtype=L.uint8), -1.5, value=2),
    "uint8_negative_int_value": lambda L: L.threshold(L.tensor([1], dtype=L.uint8), 2, -3),
    "int8_float_below": lambda L: L.threshold(L.tensor([1], dtype=L.int8), 2, -128.5),
    "float64_huge": lambda L: L.threshold(L.tensor([0.0, 3.0], dtype=L.float64), 2, 1e300),
    "float_inf": lambda L: L.threshold(L.tensor([0.0, 3.0]), 2, float("inf")),
}


@pytest.mark.parametrize("name", sorted(THRESHOLD))
def test_threshold(name):
    _check(THRESHOLD[name])


def _rrelu_(L, lower, upper, training, dtype="float64"):
    x = L.tensor([-1.0, 0.0, 2.0], dtype=getattr(L, dtype))
    r = L.rrelu_(x, lower, upper, training)
    return r if training is False or lower == upper else r.shape


_INF = float("inf")
RRELU_ = {
    # aten's rrelu_ checks no finiteness: evaluation is leaky_relu with the mean slope (its float conversion),
    # training uniform_'s bound checks; a NaN bound fails lower <= upper
    "inf_eval": lambda L: _rrelu_(L, _INF, _INF, False),
    "inf_train": lambda L: _rrelu_(L, _INF, _INF, True),
    "half_inf_train": lambda L: _rrelu_(L, 0.0, _INF, True),
    "neg_inf_eval": lambda L: _rrelu_(L, -_INF, 0.0, False),
    "huge_eval_f64": lambda L: _rrelu_(L, 1e300, 1e300, False),
    "huge_eval_f32": lambda L: _rrelu_(L, 1e300, 1e300, False, "float32"),
    "huge_train_f32": lambda L: _rrelu_(L, 1e300, 1e300, True, "float32"),
    "huge_train_f64": lambda L: _rrelu_(L, 1e300, 1e300, True),
    "wide_train_f64": lambda L: _rrelu_(L, -1e308, 1e308, True),
    "nan_lower": lambda L: _rrelu_(L, float("nan"), 1.0, False),
    "nan_upper": lambda L: _rrelu_(L, 0.1, float("nan"), True),
    "empty_inf": lambda L: L.rrelu_(L.zeros((1, 2, 0, 2), dtype=L.float64), _INF, _INF),
}


@pytest.mark.parametrize("name", sorted(RRELU_))
def test_rrelu_(name):
    _check(RRELU_[name])


PARSER = {
    # torch's parser takes only a bool for a bool parameter, only an int (not a bool) for an int, a tuple for size
    "isin_int_assume_unique": lambda L: L.isin(-1.5, L.ones(3), assume_unique=1099511627776, invert=True),
    "isin_int_invert": lambda L: L.isin(L.ones(3), L.ones(2), invert=0),
    "isin_bools": lambda L: L.isin(L.tensor([1.0, 2.0]), L.ones(2), assume_unique=True, invert=True),
    "sort_int_descending": lambda L: L.sort(L.tensor([[4]], dtype=L.int16), 1, descending=-9223372036854775809),
    "sort_int_descending_pos": lambda L: L.sort(L.tensor([3.0, 1.0]), 0, 1),
    "sort_method_int_descending": lambda L: L.tensor([3.0, 1.0]).sort(0, 1),
    "sort_none_descending": lambda L: L.sort(L.tensor([3.0, 1.0]), 0, None),
    "sort_stable_none": lambda L: L.sort(L.tensor([3], dtype=L.int64).expand((3, 4)), stable=None, dim=-1,
                                         descending=True),
    "sort_bools": lambda L: L.sort(L.tensor([3.0, 1.0, 2.0]), dim=0, descending=True, stable=True),
    "randperm_bool": lambda L: L.randperm(True, dtype=L.int64),
    "randperm_int": lambda L: L.randperm(3).sort()[0],
    "normal_int_size": lambda L: L.normal(0.0, 0.0, 1),
    "normal_tuple_size": lambda L: L.normal(0.0, 0.0, (2,)),
    "normal_list_size": lambda L: L.normal(0.0, 0.0, [2, 1]),
}


@pytest.mark.parametrize("name", sorted(PARSER))
def test_parser(name):
    _check(PARSER[name])


NONZERO_STATIC = {
    # the parser: int arguments (no bool, no float), then an int64 overflow on unpacking (ValueError)
    "fill_2_64": lambda L: L.nonzero_static(L.ones(2), size=3, fill_value=18446744073709551616),
    "fill_2_63": lambda L: L.nonzero_static(L.ones(2), size=3, fill_value=2 ** 63),
    "fill_min": lambda L: L.nonzero_static(L.ones(2), size=3, fill_value=-2 ** 63),
    "fill_below_min": lambda L: L.nonzero_static(L.ones(2), size=3, fill_value=-2 ** 63 - 1),
    "fill_max": lambda L: L.nonzero_static(L.ones(2), size=3, fill_value=2 ** 63 - 1),
    "fill_float": lambda L: L.nonzero_static(L.ones(2), size=3, fill_value=2.5),
    "fill_bool": lambda L: L.nonzero_static(L.ones(2), size=3, fill_value=True),
    "size_2_63": lambda L: L.nonzero_static(L.ones(2), size=2 ** 63, fill_value=0),
    "size_negative": lambda L: L.nonzero_static(L.ones(2), size=-1),
}


@pytest.mark.parametrize("name", sorted(NONZERO_STATIC))
def test_nonzero_static(name):
    _check(NONZERO_STATIC[name])


def _x3(L):
    return L.tensor([-3.0, -3.0, 2.0])


GRADIENT = {
    # aten's pre_check_gradient order: uint8, the spacing list's length, edge_order, the dims, then the sizes
    "spacing_len_before_dim_range": lambda L: L.gradient(
        L.zeros((3, 0, 2, 1), dtype=L.int16),
        spacing=[L.zeros((1, 0, 2, 3), dtype=L.int16).transpose(0, 3), L.zeros((3, 0, 2, 1), dtype=L.int16)], dim=[4]),
    "uint8": lambda L: L.gradient(_x3(L).to(L.uint8), dim=[5]),
    "edge_order_before_dim_range": lambda L: L.gradient(_x3(L), dim=[5], edge_order=3),
    "spacing_len_no_dim": lambda L: L.gradient(_x3(L), spacing=[1.0, 2.0], edge_order=3),
    "duplicate_dims": lambda L: L.gradient(_x3(L), dim=[0, 0]),
    # coordinates with fewer than two values: aten's IndexError
    "one_coordinate": lambda L: L.gradient(L.tensor([-3, -3, 2], dtype=L.int32),
                                           spacing=[L.tensor([-3], dtype=L.int32)], dim=[0]),
    "no_coordinate": lambda L: L.gradient(_x3(L), spacing=[L.ones(0)], dim=0),
    "coordinates_2d": lambda L: L.gradient(L.ones(2, 3), spacing=[L.zeros((2, 0)), L.ones(3)]),
    "coordinates": lambda L: L.gradient(_x3(L), spacing=[L.tensor([1.0, 2, 4])], dim=0),
    "scalar_spacing": lambda L: L.gradient(_x3(L), spacing=2.0, dim=0),
}


@pytest.mark.parametrize("name", sorted(GRADIENT))
def test_gradient(name):
    _check(GRADIENT[name])


def _chol(f):
    def g(L):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = f(L)
        return [r, r.requires_grad]
    return g


CHOLESKY = {
    # aten's cholesky returns empty_like for an empty input before its square / dtype checks
    "empty_not_square": _chol(lambda L: L.cholesky(L.zeros((2, 0), dtype=L.float64), upper=True)),
    "empty_rows": _chol(lambda L: L.cholesky(L.zeros((0, 3), dtype=L.float64))),
    "empty_1d_int": _chol(lambda L: L.cholesky(L.zeros((0,), dtype=L.int64))),
    "empty_grad": _chol(lambda L: L.cholesky(L.zeros((0, 2), requires_grad=True))),
    "not_square": _chol(lambda L: L.cholesky(L.zeros((2, 3), dtype=L.float64))),
    "valid": _chol(lambda L: L.cholesky(L.eye(2, dtype=L.float64) * 4)),
}


@pytest.mark.parametrize("name", sorted(CHOLESKY))
def test_cholesky(name):
    _check(CHOLESKY[name])


@pytest.mark.filterwarnings("ignore:cov")
def test_cov_one_observation_keeps_the_input():
    """torch.cov zeroes its input in place for one observation with one kind of weights (ATen's Correlation.cpp);
    ampgrad returns the same result and leaves the input as it was."""
    for kw in ({"fweights": "f"}, {"aweights": "a"}):
        res = {}
        for L in (torch, ampgrad):
            x = L.tensor([[3.0], [5.0]])
            w = L.tensor([2]) if "fweights" in kw else L.tensor([2.0])
            c = L.cov(x, **{next(iter(kw)): w})
            res[L.__name__] = (np.asarray(c.tolist(), dtype=float), x.tolist())
        np.testing.assert_array_equal(res["ampgrad"][0], res["torch"][0])
        assert res["torch"][1] == [[0.0], [0.0]]        # torch's bug, still there
        assert res["ampgrad"][1] == [[3.0], [5.0]]
    # the same bug makes torch raise for a leaf that requires grad (its in-place zero_); ampgrad returns the value
    c = ampgrad.cov(ampgrad.tensor([[3.0], [5.0]], requires_grad=True), fweights=ampgrad.tensor([2]))
    with pytest.raises(RuntimeError, match="leaf Variable"):
        torch.cov(torch.tensor([[3.0], [5.0]], requires_grad=True), fweights=torch.tensor([2]))
    ref = torch.cov(torch.tensor([[3.0], [5.0]]), fweights=torch.tensor([2]))
    np.testing.assert_array_equal(np.asarray(c.tolist()), ref.numpy())


@pytest.mark.parametrize("dims", [None, "abc", 1.5])
def test_tensordot_dims_type_checked_first(dims):
    _check(lambda L: L.tensordot(L.tensor([True]), L.tensor([True, True]), dims))
    _check(lambda L: L.tensordot(L.ones(2, 3), L.ones(3, 2), dims))


@pytest.mark.parametrize("dts", [("bfloat16", "float16"), ("float32", "float64"), ("bfloat16", "float32")])
def test_lu_solve_same_dtype_checked_first(dts):
    def f(L):
        LU = L.tensor([[2.0, 1.0], [0.5, 3.0]], dtype=getattr(L, dts[0]))
        return L.linalg.lu_solve(LU, L.tensor([1, 2], dtype=L.int32), L.ones(2, 1, dtype=getattr(L, dts[1])))
    _check(f)
    _check(lambda L: L.linalg.lu_solve(L.ones(3), L.tensor([1, 2], dtype=L.int32), L.ones(2, 1, dtype=L.float64)))


@pytest.mark.parametrize("fn", ["tril_indices", "triu_indices"])
@pytest.mark.parametrize("args", [(3, 3, 0), (3, 3, 10), (3, 3, -10), (4, 6, 2), (6, 4, -2), (5, 2**62, 2), (0, 2**62, 0),
                                  (-1, 4, 2), (3, -1, 0), (1, 1, 0), (7, 3, -1), (3, 7, 1), (2**31, 2**31, 0)])
@pytest.mark.parametrize("dtype", [None, "int32", "float64", "int16", "bool"])
def test_tri_indices_orders_and_counts(fn, args, dtype):
    if fn == "triu_indices" and args[1] >= 2**62 and args[0] > 0:
        pytest.skip("torch allocates 2**62 elements")
    kw = {} if dtype is None else {"dtype": dtype}
    _check(lambda L: getattr(L, fn)(*args, **{k: getattr(L, v) for k, v in kw.items()}))


def test_tri_indices_every_small_case():
    for r, c, k in itertools.product(range(0, 6), range(0, 6), range(-7, 8)):
        for fn in ("tril_indices", "triu_indices"):
            assert getattr(ampgrad, fn)(r, c, k).tolist() == getattr(torch, fn)(r, c, k).tolist(), (fn, r, c, k)


INDEX_FILL = {
    "int32_index": lambda L: L.index_fill(L.tensor([[-5, 4]], dtype=L.int16), 0, L.tensor(0, dtype=L.int32), 5),
    "int32_index_nan": lambda L: L.index_fill(L.tensor([[-5, 4]], dtype=L.int16), 0, L.tensor(0, dtype=L.int32),
                                              float("nan")),
    "2d_index": lambda L: L.index_fill(L.tensor([[-5, 4]], dtype=L.int16), 0, L.tensor([[0]]), float("nan")),
    "bad_dim_first": lambda L: L.index_fill(L.tensor([[-5, 4]], dtype=L.int16), 3, L.tensor([[0]]), 1),
    "nan_into_int": lambda L: L.index_fill(L.tensor([[-5, 4]], dtype=L.int16), 0, L.tensor(0), float("nan")),
    "out_of_bounds": lambda L: L.index_fill(L.tensor([[-5, 4]], dtype=L.int16), 0, L.tensor(7), 1),
    "value_1d": lambda L: L.index_fill(L.tensor([[-5.0, 4]]), 0, L.tensor([0], dtype=L.int32), L.tensor([1.0, 2])),
    "ok": lambda L: L.index_fill(L.tensor([[-5.0, 4], [1, 2]]), 1, L.tensor([1, 1]), -3.5),
    "diag_embed_dim": lambda L: L.tensor([0], dtype=L.int8).diag_embed(-3, -1, 2**63 - 1),
    "diag_embed_huge": lambda L: L.diag_embed(L.zeros((5, 0), dtype=L.int16)[::2], 2**40, 2**63 - 1),
    "diag_embed_ok": lambda L: L.diag_embed(L.tensor([[1.0, 2.0]]), 1, 0, 2),
}


@pytest.mark.parametrize("name", sorted(INDEX_FILL))
def test_index_fill_and_diag_embed_orders(name):
    _check(INDEX_FILL[name])


@pytest.mark.parametrize("dtype", ["uint8", "int64", "bool", "float16", "float32"])
@pytest.mark.parametrize("case", [("adaptive_avg_pool1d", (1, 2), 1), ("adaptive_avg_pool1d", (1, 2), 2),
                                  ("adaptive_avg_pool2d", (1, 2, 2), 1), ("adaptive_avg_pool2d", (1, 2, 2), (1, 2)),
                                  ("adaptive_avg_pool3d", (1, 2, 2, 2), 1), ("adaptive_avg_pool3d", (1, 2, 2, 2), 2)])
def test_adaptive_avg_pool_output_of_ones_is_mean(dtype, case):
    fn, shape, size = case
    _check(lambda L: getattr(L.nn.functional, fn)(L.ones(shape, dtype=getattr(L, dtype)), size))


@pytest.mark.parametrize("args", [((3,), (1,), 1, -1), ((2, 2), (2,), 0, 0, 1), ((2, 2), (2,), 0, 0, 0),
                                  ((2, 2), (2,), 0, 0, 5), ((2, 2), (3,), 0, 0, 1), ((2, 3), (2,), 1, 0, 1),
                                  ((3, 2, 4), (2, 2), -1, 2, 0)])
def test_diagonal_scatter_checks_the_diagonal_first(args):
    shape, src_shape, *rest = args
    _check(lambda L: L.diagonal_scatter(L.zeros(shape), L.arange(float(np.prod(src_shape))).reshape(src_shape), *rest))


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 2, 2)])
@pytest.mark.parametrize("attr", ["H", "mH", "T", "mT"])
def test_h_and_mh_shapes(shape, attr):
    _check(lambda L: getattr(L.arange(float(np.prod(shape))).reshape(shape), attr))


SHAPE_EXTRA = {
    "masked_scatter_dtypes": lambda L: L.masked_scatter(L.zeros(3, dtype=L.int16), L.tensor([True, False, True]),
                                                        L.tensor([True, False])),
    "masked_scatter_dtypes_first": lambda L: L.masked_scatter(L.zeros(3, dtype=L.int16), L.tensor([1, 0, 1]),
                                                              L.tensor([True, False])),
    "masked_scatter_ok": lambda L: L.masked_scatter(L.zeros(3), L.tensor([True, False, True]), L.tensor([1.0, 2.0])),
    "take_along_float_idx": lambda L: L.take_along_dim(L.zeros((0, 4, 1)), L.zeros((0, 1, 0)), 0),
    "take_along_float_idx_bad_dim": lambda L: L.take_along_dim(L.zeros((2, 4)), L.zeros((2, 1)), 5),
    "take_along_ok": lambda L: L.take_along_dim(L.arange(8.0).reshape(2, 4), L.tensor([[1], [3]]), 1),
    "trapezoid_0d": lambda L: L.trapezoid(L.tensor(3.0)),
    "trapezoid_0d_bool": lambda L: L.trapezoid(L.tensor(True), dim=5),
    "trapezoid_bool": lambda L: L.trapezoid(L.tensor([True, False])),
    "trapezoid_ok": lambda L: L.trapezoid(L.tensor([1.0, 2.0, 4.0])),
    "cartesian_str": lambda L: L.cartesian_prod("abc"),
    "cartesian_str_second": lambda L: L.cartesian_prod(L.ones(2), "abc"),
    "cartesian_ok": lambda L: L.cartesian_prod(L.tensor([1, 2]), L.tensor([3, 4, 5])),
    "empty_strided_dims": lambda L: L.empty_strided([1], [3, 1, 2]).shape,
    "empty_strided_ok": lambda L: L.empty_strided([2, 3], [3, 1]).shape,
}


@pytest.mark.parametrize("name", sorted(SHAPE_EXTRA))
def test_shape_extra_checks(name):
    _check(SHAPE_EXTRA[name])


@pytest.mark.parametrize("args", [(True, True), (True,), (1, True), (0,), (-1, False)])
def test_prod_bool_dim(args):
    _check(lambda L: L.tensor([[-2, 5], [3, 5], [3, 1]]).prod(*args))
    _check(lambda L: L.prod(L.tensor([[-2.0, 5], [3, 5]]), *args))


MORE = {
    "sum_to_size_str": lambda L: L.tensor([[1, 2]]).sum_to_size("abc"),
    "sum_to_size_minus1": lambda L: L.zeros(3, 2).sum_to_size(3, -1),
    "sum_to_size_longer": lambda L: L.zeros(3, 2).sum_to_size(2, 3, 2),
    "sum_to_size_float": lambda L: L.zeros(3, 2).sum_to_size(1.5),
    "sum_to_size_ok": lambda L: L.arange(6.0).reshape(3, 2).sum_to_size([1, 2]),
    "sum_to_size_tuple": lambda L: L.arange(6.0).reshape(3, 2).sum_to_size((3, 1)),
    "square_bool": lambda L: L.tensor(False).square_(),
    "square_int8": lambda L: L.tensor([3, -2], dtype=L.int8).square_(),
    "meshgrid_empty": lambda L: L.meshgrid([]),
    "cartesian_2d": lambda L: L.cartesian_prod(L.zeros(3, 1)),
    "cartesian_2d_second": lambda L: L.cartesian_prod(L.zeros(2), L.zeros(3, 1)),
    "cartesian_empty": lambda L: L.cartesian_prod(),
}


@pytest.mark.filterwarnings("ignore:torch.meshgrid")
@pytest.mark.parametrize("name", sorted(MORE))
def test_more_shape_checks(name):
    _check(MORE[name])
