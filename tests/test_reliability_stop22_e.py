"""Issue 10, stop 22 (Tensor.* and F.*): method / nn.functional fuzz groups fixed in Python, each against torch
(values, dtypes, exception types)."""
import warnings

import numpy as np
import pytest

import ampgrad

torch = pytest.importorskip("torch")
from _torch_compare import outcome, to_np  # noqa: E402


def _outcome(f, L):
    return outcome(f, L, message=True)


_np = to_np

inf = float("inf")






def _F(L):
    return L.nn.functional


CASES = {
    # new_zeros / new_ones / new_empty: `size` is also a keyword, and is required
    "new_zeros_size_kw": lambda L: L.tensor([3, -1, 1])[::3].new_zeros(size=[1, 3]),
    "new_empty_size_kw_dtype": lambda L: L.zeros(2, dtype=L.int16).new_empty(size=[], dtype=L.bool).shape,
    "new_ones_size_kw_overflow": lambda L: L.zeros((0, 4), dtype=L.uint8).new_ones(size=[2 ** 62, 2]),
    "new_ones_no_size": lambda L: L.zeros(2).new_ones(dtype=L.float32),
    "new_zeros_size_twice": lambda L: L.zeros(2).new_zeros([2], size=[2]),
    "new_zeros_varargs": lambda L: L.zeros(2).new_zeros(2, 3),
    "new_full_size_kw": lambda L: L.zeros(2).new_full(size=[2], fill_value=3),
    # median / nanmedian: torch's signatures are () and (int dim, bool keepdim=False); None is not a dim
    "median_method_none_dim": lambda L: L.tensor([[-2.5, -4.0], [-2.5, -4.0]], dtype=L.bfloat16).median(None, True),
    "median_fn_none_dim": lambda L: L.median(L.tensor([[1.0, 2.0]]), None),
    "nanmedian_dim_kw_none": lambda L: L.nanmedian(L.tensor([[1.0, 2.0]]), dim=None),
    "median_keepdim_only": lambda L: L.median(L.tensor([[1.0, 2.0]]), keepdim=True),
    "median_all": lambda L: L.tensor([[1.0, 2.0], [3.0, 4.0]]).median(),
    "median_dim": lambda L: tuple(L.tensor([[1.0, 2.0], [3.0, 4.0]]).nanmedian(1, True)),
    # bernoulli_: a Tensor p's dtype is dispatched on before its values are read; uniform_: the dtype before the bounds
    "bernoulli_bool_p": lambda L: L.tensor(True).bernoulli_(L.tensor(True)),
    "bernoulli_int_p_out_of_range": lambda L: L.zeros((3, 6), dtype=L.int32)[:, ::3].bernoulli_(L.tensor(-5, dtype=L.int32)),
    "bernoulli_float_p_out_of_range": lambda L: L.zeros(3, dtype=L.int32).bernoulli_(L.tensor(2.0)),
    "bernoulli_int_self_float_p": lambda L: L.zeros(3, dtype=L.int32).bernoulli_(L.tensor([0.0, 1.0, 1.0])),
    "uniform_int_nan_bound": lambda L: L.tensor([[[-5, 3]]], dtype=L.int16).uniform_(0.0, float("nan")),
    "uniform_bool": lambda L: L.zeros(2, dtype=L.bool).uniform_(),
    "uniform_int_str": lambda L: L.zeros(2, dtype=L.int32).uniform_("a"),
    "uniform_float_reversed": lambda L: L.zeros(2).uniform_(3.0, 1.0),
    "uniform_float_range": lambda L: L.zeros(2).uniform_(2.0, 2.0),
    # Tensor.type: torch's parser checks `bool non_blocking` before the dtype string
    "type_str_non_blocking": lambda L: L.tensor(False).type("abc", "abc"),
    "type_int_non_blocking_kw": lambda L: L.zeros(2).type("abc", non_blocking=1),
    "type_dtype_non_blocking": lambda L: L.zeros(2).type(L.int32, True),
    "type_bad_str": lambda L: L.zeros(2).type("abc"),
    "type_str": lambda L: L.zeros(2).type(dtype="torch.IntTensor"),
    # F.bilinear: aten's checks in order (dtypes, ranks, batch sizes, then weight.size(d): IndexError when missing)
    "bilinear_0d_weight": lambda L: _F(L).bilinear(L.tensor([0.5], dtype=L.float64), L.tensor([3.0, 3.0, -2.5], dtype=L.float64),
                                                    weight=L.tensor(4.0, dtype=L.float64), bias=None),
    "bilinear_int_weight": lambda L: _F(L).bilinear(L.zeros(2, 2, dtype=L.bfloat16), L.zeros(2, 3, dtype=L.bfloat16),
                                                     L.tensor([-2, 5, 0])),
    "bilinear_rank_mismatch": lambda L: _F(L).bilinear(L.zeros(2, 3), L.zeros(4), L.zeros(5, 3, 4)),
    "bilinear_batch_mismatch": lambda L: _F(L).bilinear(L.zeros(2, 3), L.zeros(3, 4), L.zeros(5, 3, 4)),
    "bilinear_0d_inputs": lambda L: _F(L).bilinear(L.zeros(()), L.zeros(()), L.zeros(5, 3, 4)),
    "bilinear_2d_weight": lambda L: _F(L).bilinear(L.zeros(2, 3), L.zeros(2, 4), L.zeros(5, 3)),
    "bilinear_bias_size": lambda L: _F(L).bilinear(L.zeros(2, 3), L.zeros(2, 4), L.zeros(5, 3, 4), L.zeros(6)),
    "bilinear_0d_bias": lambda L: _F(L).bilinear(L.zeros(2, 3), L.zeros(2, 4), L.zeros(5, 3, 4), L.zeros(())),
    "bilinear_4d_weight": lambda L: _F(L).bilinear(L.zeros(2, 3), L.zeros(2, 4), L.zeros(5, 3, 4, 2)),
    "bilinear_values": lambda L: _F(L).bilinear(L.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]]), L.tensor([[1.0, -2.0], [3.0, 0.5]]),
                                                 L.arange(12.0).reshape(2, 3, 2), L.tensor([0.5, -0.5])),
    "bilinear_1d_values": lambda L: _F(L).bilinear(L.tensor([1.0, 2.0, 3.0]), L.tensor([1.0, -2.0]), L.arange(12.0).reshape(2, 3, 2)),
    # F.relu: torch's body calls torch.relu_ / torch.relu, whose parser rejects a non-Tensor
    "relu_dtype_inplace": lambda L: _F(L).relu(L.int64, True),
    "relu_dtype": lambda L: _F(L).relu(L.int64),
    "relu_list": lambda L: _F(L).relu([1.0]),
    "relu_inplace_int": lambda L: _F(L).relu(L.tensor([-1, 2]), True),
    # F.rms_norm: aten's rank check (a ValueError) after the empty-shape check, before the shape match
    "rms_norm_0d": lambda L: _F(L).rms_norm(L.tensor(2, dtype=L.int32), [2, 1], None),
    "rms_norm_1d_rank": lambda L: _F(L).rms_norm(L.zeros(3), [2, 1]),
    "rms_norm_0d_empty_shape": lambda L: _F(L).rms_norm(L.tensor(2.0), []),
    "rms_norm_shape_mismatch": lambda L: _F(L).rms_norm(L.zeros(2, 3), [2, 2]),
    "rms_norm_int": lambda L: _F(L).rms_norm(L.zeros(3, dtype=L.int32), [3]),
    "rms_norm_values": lambda L: _F(L).rms_norm(L.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]]), [3], eps=1e-6),
    # F.smooth_l1_loss: torch's body broadcasts, then reads the reduction, before aten's beta check
    "smooth_l1_bad_reduction_negative_beta": lambda L: _F(L).smooth_l1_loss(
        L.tensor([32767, 4], dtype=L.int16), L.tensor(-4, dtype=L.int16), reduction="bad", beta=-inf),
    "smooth_l1_unbroadcastable_bad_reduction": lambda L: _F(L).smooth_l1_loss(L.zeros(2), L.zeros(3), reduction="bad"),
    "smooth_l1_negative_beta": lambda L: _F(L).smooth_l1_loss(L.zeros(2), L.zeros(2), beta=-1.0),
    "smooth_l1_values": lambda L: _F(L).smooth_l1_loss(L.tensor([1.0, 3.0]), L.zeros(2), beta=0.5),
    # kthvalue: the dim's range, then the empty reduction dim (IndexError), then k's range
    "kthvalue_empty_dim_bad_k": lambda L: L.tensor([[[[255]]]], dtype=L.uint8).expand((3, 4, 2, 0)).kthvalue(-1),
    "kthvalue_empty_dim": lambda L: L.zeros(3, 0, 2).kthvalue(1, 1),
    "kthvalue_dim_range": lambda L: L.zeros(3, 0, 2).kthvalue(1, 5),
    "kthvalue_k_range": lambda L: L.zeros(3, 0, 2).kthvalue(5, 0),
    "kthvalue_other_dim_empty": lambda L: tuple(L.zeros(3, 0, 2).kthvalue(1, 0)),
    "kthvalue_0d": lambda L: tuple(L.tensor(2.0).kthvalue(1)),
    "kthvalue_values": lambda L: tuple(L.tensor([[3.0, 1.0], [2.0, 0.0]]).kthvalue(1, 0, True)),
    # F.binary_cross_entropy_with_logits: after the body's size check, torch's parser rejects a non-Tensor weight
    "bce_logits_str_weight": lambda L: _F(L).binary_cross_entropy_with_logits(
        L.zeros((0, 3, 0), dtype=L.int16), L.zeros((0, 3, 0), dtype=L.int16), "abc", reduction="mean"),
    "bce_logits_str_pos_weight": lambda L: _F(L).binary_cross_entropy_with_logits(L.zeros(2), L.zeros(2), pos_weight="abc"),
    "bce_logits_size_first": lambda L: _F(L).binary_cross_entropy_with_logits(L.zeros(2), L.zeros(3), "abc"),
    "bce_logits_reduction_first": lambda L: _F(L).binary_cross_entropy_with_logits(L.zeros(2), L.zeros(2), "abc",
                                                                                    reduction="bad"),
    "bce_logits_values": lambda L: _F(L).binary_cross_entropy_with_logits(L.tensor([1.0, -2.0]), L.tensor([1.0, 0.0]),
                                                                           L.tensor([2.0, 1.0])),
    # F.poisson_nll_loss: its body's own reduction check (reduction + " is not ...": a TypeError for a non-str)
    "poisson_int_reduction": lambda L: _F(L).poisson_nll_loss(L.zeros(2, 2), L.zeros(2, 2), eps=float("nan"),
                                                              reduction=2 ** 64),
    "poisson_none_reduction": lambda L: _F(L).poisson_nll_loss(L.zeros(2), L.zeros(2), reduction=None),
    "poisson_elementwise_mean": lambda L: _F(L).poisson_nll_loss(L.zeros(2), L.zeros(2), reduction="elementwise_mean"),
    "poisson_bad_reduction": lambda L: _F(L).poisson_nll_loss(L.zeros(2), L.zeros(2), reduction="bad"),
    "poisson_values": lambda L: _F(L).poisson_nll_loss(L.tensor([1.0, 2.0]), L.tensor([2.0, 0.5]), full=True),
    "l1_int_reduction": lambda L: _F(L).l1_loss(L.zeros(2), L.zeros(2), reduction=5),
    # weighted F.l1_loss / F.mse_loss: broadcast, then weight.size(), before the errors are computed
    "l1_bool_int_weight": lambda L: _F(L).l1_loss(L.tensor([False, False]), L.tensor([False, True]), reduction="none",
                                                   weight=2 ** 64),
    "mse_bool_int_weight": lambda L: _F(L).mse_loss(L.tensor([False, False]), L.tensor([False, True]), weight=5),
    "l1_unbroadcastable_int_weight": lambda L: _F(L).l1_loss(L.zeros(2), L.zeros(3), weight=5),
    "l1_weight_size": lambda L: _F(L).l1_loss(L.zeros(2), L.zeros(2), weight=L.zeros(3)),
    "l1_bool_weight": lambda L: _F(L).l1_loss(L.tensor([False, True]), L.tensor([False, True]), weight=L.zeros(2)),
    "l1_weighted_values": lambda L: _F(L).l1_loss(L.tensor([1.0, -2.0]), L.tensor([0.5, 1.0]), weight=L.tensor([2.0, 1.0])),
    "mse_weighted_values": lambda L: _F(L).mse_loss(L.tensor([1.0, -2.0]), L.tensor([0.5, 1.0]), weight=L.tensor([2.0, 1.0]),
                                                    reduction="none"),
    # arange dispatches on a bool dtype before its step check; F.embedding_bag builds a 2-D input's offsets with it
    "arange_bool_zero_step": lambda L: L.arange(0, 0, 0, dtype=L.bool),
    "arange_bool": lambda L: L.arange(0, 6, 3, dtype=L.bool),
    "arange_zero_step": lambda L: L.arange(0, 6, 0, dtype=L.int64),
    "embedding_bag_bool_bad_mode": lambda L: _F(L).embedding_bag(L.zeros((0, 0), dtype=L.bool), L.zeros((0, 0), dtype=L.bool),
                                                                 scale_grad_by_freq=False, mode="bad"),
    "embedding_bag_empty_bags": lambda L: _F(L).embedding_bag(L.zeros((2, 0), dtype=L.int64), L.zeros(3, 2)),
    "embedding_bag_bad_mode": lambda L: _F(L).embedding_bag(L.tensor([[0, 1], [2, 2]]), L.zeros(3, 2), mode="bad"),
    "embedding_bag_max": lambda L: _F(L).embedding_bag(L.tensor([[0, 1], [2, 2]]), L.arange(6.0).reshape(3, 2), mode="max"),
    "embedding_bag_no_bags": lambda L: _F(L).embedding_bag(L.zeros((0, 3), dtype=L.int64), L.zeros(3, 2)),
    # Tensor.lu / torch.lu: torch's body calls torch._lu_with_info(A, pivot=pivot, ...): its parser's bool pivot first
    "lu_str_pivot_0d": lambda L: L.tensor(False).lu("abc", "abc"),
    "lu_int_pivot": lambda L: L.tensor([[2.0, 1.0], [1.0, 3.0]]).lu(1),
    "torch_lu_str_pivot": lambda L: L.lu(L.tensor([[2.0, 1.0], [1.0, 3.0]]), "a"),
    "lu_truthy_get_infos": lambda L: L.tensor([[2.0, 1.0], [1.0, 3.0]]).lu(True, "a"),
    "lu_1d": lambda L: L.zeros(3).lu(),
    # (re-fuzz) rms_norm checks the weight's shape before the rank; bernoulli_ expands p first and an empty self
    # never reaches the kernel's dtype dispatch
    "rms_norm_weight_before_rank": lambda L: _F(L).rms_norm(L.zeros(3, 4, dtype=L.float64), [2, 0, 1],
                                                            L.zeros((4, 0, 2, 2), dtype=L.float64)),
    "rms_norm_1d_weight_shape": lambda L: _F(L).rms_norm(L.zeros(4), [2, 1], L.zeros(3)),
    "rms_norm_weighted_values": lambda L: _F(L).rms_norm(L.ones(2, 3), [3], L.tensor([1.0, 2.0, 3.0])),
    "bernoulli_int_p_unexpandable": lambda L: L.tensor(3, dtype=L.int16).bernoulli_(L.tensor([[[-3, -2, 4]]], dtype=L.int16)),
    "bernoulli_int_p_empty_self": lambda L: L.zeros((0, 2, 2), dtype=L.int32)[::2].bernoulli_(L.zeros((0, 2, 2), dtype=L.int32)),
    "bernoulli_int_p_broadcast": lambda L: L.zeros(2, dtype=L.int32).bernoulli_(L.zeros(1, dtype=L.int32)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    ka, ra = _outcome(CASES[name], ampgrad)
    kt, rt = _outcome(CASES[name], torch)
    assert ka == kt, (name, ra, rt)
    if ka == "raise":
        assert ra[0] == rt[0], (name, ra, rt)
        return
    if isinstance(rt, torch.Size):
        assert tuple(ra) == tuple(rt), name
        return
    pairs = zip(ra, rt) if isinstance(rt, tuple) else [(ra, rt)]
    for x, y in pairs:
        a, t = _np(x), _np(y)
        assert a[:2] == t[:2], name
        if not name.startswith("new_empty"):
            np.testing.assert_allclose(np.array(a[2], dtype=float), np.array(t[2], dtype=float), rtol=1e-5, atol=1e-6)
