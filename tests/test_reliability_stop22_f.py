"""Issue 10, stop 22 (F.*): nn.functional fuzz groups fixed in Python, each against torch (values, dtypes, exception
types): torch's Python bodies' check order (softmax's implicit-dim warning and Tensor method, group_norm's rank and
batch-size checks, instance_norm's spatial check, triplet_margin_loss's margin), the parser errors of the op each
body ends in (a Tensor is never a bool; an int / float only when 0-d without grad), and aten's checks (kl_div's
integral inputs, soft_margin_loss's in-place broadcast, threshold's Scalars)."""
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
    # softmax / log_softmax / softmin: torch's bodies call the Tensor method after the implicit-dim warning
    "softmax_str": lambda L: _F(L).softmax("abc", "abc", "abc"),
    "log_softmax_str": lambda L: _F(L).log_softmax("abc", "abc", "abc"),
    "softmax_stacklevel_dtype": lambda L: _F(L).softmax(L.tensor([[4.0, 4.0, 4.0]]), None, L.float32),
    "log_softmax_bool_stacklevel": lambda L: _F(L).log_softmax(L.tensor([[False, True]]), None, L.bool),
    "softmin_stacklevel_float": lambda L: _F(L).softmin(L.tensor([1.0, 3.0, -3.0]), None, inf),
    "softmin_bool_dim": lambda L: _F(L).softmin(L.tensor([1.0, 3.0]), True),
    "softmax_implicit_dim": lambda L: _F(L).softmax(L.tensor([[1.0, 2.0], [0.5, 4.0]])),
    "softmin_dtype": lambda L: _F(L).softmin(L.tensor([[1.0, 2.0], [0.5, 4.0]]), 1, dtype=L.float64),
    "log_softmax_dtype": lambda L: _F(L).log_softmax(L.tensor([[1.0, 2.0], [0.5, 4.0]]), 0, dtype=L.float64),
    "tanhshrink_str": lambda L: _F(L).tanhshrink("abc"),
    "tanhshrink": lambda L: _F(L).tanhshrink(L.tensor([0.5, -2.0])),
    # group_norm: rank, then _verify_batch_size of the grouped shape, then torch.group_norm's parser
    "group_norm_str": lambda L: _F(L).group_norm("abc", "abc", "abc", "abc", "abc"),
    "group_norm_1d": lambda L: _F(L).group_norm(L.tensor([-2], dtype=L.int16).expand((4,)), 1, [1, 2], None, [1, 2]),
    "group_norm_bool_groups": lambda L: _F(L).group_norm(L.tensor([[[-1.0, 3.0]], [[2.0, 2.0]]]), L.tensor(False)),
    "group_norm_1d_tensor_groups": lambda L: _F(L).group_norm(L.ones(2, 4, 3), L.tensor([2])),
    "group_norm_2d_tensor_groups": lambda L: _F(L).group_norm(
        L.tensor([[[5], [-5], [3], [-1]]], dtype=L.int32).transpose(0, 1), num_groups=L.tensor([[3]], dtype=L.int32)),
    "group_norm_0d_tensor_groups": lambda L: _F(L).group_norm(L.arange(24.0).reshape(2, 4, 3), L.tensor(2)),
    "group_norm_weight_list": lambda L: _F(L).group_norm(L.ones(2, 4, 3), 2, [1.0]),
    # instance_norm: the spatial check, then torch.instance_norm's parser, then aten's running-stats check
    "instance_norm_no_stats": lambda L: _F(L).instance_norm(L.ones(2, 3, 4), use_input_stats=False),
    "instance_norm_1d_no_stats": lambda L: _F(L).instance_norm(L.tensor([4, 3], dtype=L.uint8), L.ones(4),
                                                               use_input_stats=False),
    "instance_norm_float_weight": lambda L: _F(L).instance_norm(L.ones(3, 2, 2), weight=inf),
    "instance_norm_momentum_none": lambda L: _F(L).instance_norm(L.ones(2, 1, 2, 1), L.zeros(1), L.ones(1),
                                                                 momentum=None),
    "instance_norm_tensor_flag": lambda L: _F(L).instance_norm(L.ones(2, 3, 4), use_input_stats=L.tensor(True)),
    "torch_instance_norm_tensor_flag": lambda L: L.instance_norm(L.ones(2, 3, 4), None, None, None, None,
                                                                 L.tensor(True), 0.1, 1e-5, False),
    "instance_norm": lambda L: _F(L).instance_norm(L.arange(24.0).reshape(2, 3, 4), weight=L.tensor([1.0, 2.0, 3.0])),
    # dropout1d/2d/3d read input.dim() after the p check
    "dropout3d_int": lambda L: _F(L).dropout3d(-9223372036854775809, inplace=True),
    "dropout1d_float": lambda L: _F(L).dropout1d(1.5),
    # dropout / dropout1d-3d: _VF's parser takes only a bool train; aten's mask cannot scale in an integer dtype
    "dropout_int_inplace": lambda L: _F(L).dropout(L.tensor([5, 3, -5]), inplace=True),
    "dropout_int": lambda L: _F(L).dropout(L.tensor([5, 3, -5])),
    "dropout_int_p1": lambda L: _F(L).dropout(L.tensor([5, 3, -5]), 1.0),
    "dropout_int_eval": lambda L: _F(L).dropout(L.tensor([5, 3, -5]), training=False, inplace=True),
    "dropout_train_dtype": lambda L: _F(L).dropout(L.tensor([5.0]), 0.5, L.float32),
    "dropout_train_int": lambda L: _F(L).dropout(L.tensor([5.0]), 0.5, 0),
    "dropout2d_bool": lambda L: _F(L).dropout2d(L.ones(2, 3, 4, dtype=L.bool), inplace=True),
    "dropout1d_int16": lambda L: _F(L).dropout1d(L.ones(2, 3, dtype=L.int16)),
    "dropout3d_train_dtype": lambda L: _F(L).dropout3d(L.ones(2, 3, 4, 5), training=L.float32),
    "dropout1d_1d_bad_train": lambda L: _F(L).dropout1d(L.zeros((0,), dtype=L.uint8), training="abc"),
    "dropout1d_empty_int": lambda L: _F(L).dropout1d(L.zeros(2, 0, dtype=L.int16)),
    # poisson_nll_loss: torch.poisson_nll_loss takes only bools for log_input / full
    "poisson_log_input_tensor": lambda L: _F(L).poisson_nll_loss(L.tensor(-2, dtype=L.int16), L.tensor(0, dtype=L.int16),
                                                                 L.tensor(0, dtype=L.int16), True),
    "poisson_log_input_tensor_2d": lambda L: _F(L).poisson_nll_loss(L.ones(2, 2), L.ones(2, 2), L.ones(2, 2)),
    "poisson_full_int": lambda L: _F(L).poisson_nll_loss(L.ones(2), L.ones(2), True, 1),
    "poisson": lambda L: _F(L).poisson_nll_loss(L.tensor([0.5, 1.5]), L.tensor([1.0, 3.0]), False, True),
    # threshold: both Scalars' types before their conversion; a 0-d Tensor is a Scalar
    "threshold_tensor_value_overflow": lambda L: _F(L).threshold(L.zeros((0,), dtype=L.int32), 2 ** 63 - 1,
                                                                 L.zeros((0,), dtype=L.int32), True),
    "threshold_0d_tensor_value": lambda L: _F(L).threshold(L.tensor([1, 5, -4], dtype=L.int8), inf,
                                                           L.tensor(-2, dtype=L.int16), True),
    "threshold_0d_value": lambda L: _F(L).threshold(L.tensor([1, 5, -4], dtype=L.int32), 2, L.tensor(7)),
    "threshold_int_input": lambda L: _F(L).threshold(-2 ** 63 - 1, -2 ** 63 - 1, L.zeros(2)),
    "threshold_": lambda L: _F(L).threshold_(L.tensor([1.0, 5.0, -4.0]), 2, 3),
    # triplet_margin_loss: the margin check, then the parser (swap: a bool), then aten's
    "triplet_margin_none_negative": lambda L: _F(L).triplet_margin_loss(L.ones(4, 2), L.ones(4, 2), None, margin=-inf),
    "triplet_margin_zero": lambda L: _F(L).triplet_margin_loss(L.ones(2, 2), L.ones(2), L.ones(1, 2, 3), 0.0),
    "triplet_margin_neg_zero": lambda L: _F(L).triplet_margin_loss(L.tensor(0.0), L.tensor(-2.5), L.tensor(2.0), -0.0),
    "triplet_swap_dtype": lambda L: _F(L).triplet_margin_loss(L.ones(2), L.ones(2), L.ones(2), 2.0, 1, 0.5, L.int64),
    "triplet_margin_huge_int": lambda L: _F(L).triplet_margin_loss(L.tensor([[1, 2]]), L.tensor([[2, 4]]),
                                                                   L.tensor([[0, 1]]), 2 ** 64),
    "triplet_margin_loss": lambda L: _F(L).triplet_margin_loss(L.tensor([[1.0, 2.0]]), L.tensor([[0.5, 2.5]]),
                                                               L.tensor([[3.0, -1.0]]), swap=True),
    # cosine_embedding_loss / soft_margin_loss / margin_ranking_loss / kl_div: the parser of the op torch's body calls
    "cosine_embedding_dtype_target": lambda L: _F(L).cosine_embedding_loss(L.ones(2, 3), L.ones(2, 3), L.int64),
    "cosine_embedding_str_margin": lambda L: _F(L).cosine_embedding_loss(L.ones(2, 3), L.ones(2, 3), L.ones(2), "abc"),
    "cosine_embedding_loss": lambda L: _F(L).cosine_embedding_loss(L.tensor([[1.0, 2.0], [0.5, -1.0]]),
                                                                   L.tensor([[1.0, 0.0], [2.0, 1.0]]), L.tensor([1, -1])),
    "soft_margin_broadcast": lambda L: _F(L).soft_margin_loss(L.tensor(2.0), L.tensor([[[2.0]]]).expand((4, 2, 4))),
    "soft_margin_int_input": lambda L: _F(L).soft_margin_loss(2 ** 62, L.zeros((0, 1))),
    "soft_margin_str_target": lambda L: _F(L).soft_margin_loss(L.ones(2, 2, dtype=L.bool), "abc"),
    "soft_margin_integer_tensors": lambda L: _F(L).soft_margin_loss(L.tensor([1, 2]), L.tensor([1, -1])),
    "soft_margin_loss": lambda L: _F(L).soft_margin_loss(L.tensor([1.0, 2.0]), L.tensor([1, -1]), reduction="none"),
    "margin_ranking_uint8": lambda L: _F(L).margin_ranking_loss(L.tensor([5, 2], dtype=L.uint8), L.tensor([0, 3], dtype=L.uint8),
                                                                L.tensor([4, 1], dtype=L.uint8), 0),
    "margin_ranking_loss": lambda L: _F(L).margin_ranking_loss(L.tensor([0.5, 2.0]), L.tensor([1.0, 1.0]),
                                                               L.tensor([1.0, -1.0]), 0.25),
    "kl_div_integral": lambda L: _F(L).kl_div(L.tensor(0, dtype=L.uint8), L.tensor(2, dtype=L.uint8), reduction="sum"),
    "kl_div_float_input": lambda L: _F(L).kl_div(float("nan"), L.tensor([1, 0, 3]), reduction="none"),
    "kl_div_str_log_target": lambda L: _F(L).kl_div(L.ones(2), L.ones(2), reduction="sum", log_target="abc"),
    "kl_div_batchmean": lambda L: _F(L).kl_div(L.tensor([[0.1, 0.2], [0.3, 0.4]]).log(),
                                               L.tensor([[0.5, 0.5], [0.2, 0.8]]), reduction="batchmean"),
    "kl_div_log_target": lambda L: _F(L).kl_div(L.tensor([[0.1, 0.2]]).log(), L.tensor([[0.5, 0.5]]).log(),
                                                reduction="none", log_target=True),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    ka, ra = _outcome(CASES[name], ampgrad)
    kt, rt = _outcome(CASES[name], torch)
    assert ka == kt, (name, ra, rt)
    if ka == "raise":
        assert ra[0] == rt[0], (name, ra, rt)
        return
    a, t = _np(ra), _np(rt)
    assert a[:2] == t[:2], name
    np.testing.assert_allclose(np.array(a[2], dtype=float), np.array(t[2], dtype=float), rtol=1e-5, atol=1e-6)


MESSAGES = ["softmax_str", "group_norm_1d", "group_norm_1d_tensor_groups", "instance_norm_no_stats",
            "instance_norm_float_weight", "instance_norm_momentum_none", "torch_instance_norm_tensor_flag",
            "poisson_log_input_tensor", "threshold_tensor_value_overflow", "threshold_0d_tensor_value",
            "threshold_int_input", "triplet_margin_zero", "triplet_swap_dtype", "cosine_embedding_dtype_target",
            "soft_margin_broadcast", "soft_margin_int_input", "kl_div_integral", "kl_div_float_input",
            "dropout_int_inplace", "dropout_train_dtype", "dropout3d_train_dtype"]


@pytest.mark.parametrize("name", MESSAGES)
def test_message_matches_torch(name):
    assert _outcome(CASES[name], ampgrad) == _outcome(CASES[name], torch)


def test_softmax_implicit_dim_warns():
    x = ampgrad.tensor([[1.0, 2.0]])
    for f in (ampgrad.nn.functional.softmax, ampgrad.nn.functional.log_softmax, ampgrad.nn.functional.softmin):
        with pytest.warns(UserWarning, match="Implicit dimension choice for " + f.__name__):
            f(x)


def test_soft_margin_loss_gradient():
    x = ampgrad.tensor([1.0, 2.0], requires_grad=True)
    xt = torch.tensor([1.0, 2.0], requires_grad=True)
    ampgrad.nn.functional.soft_margin_loss(x, ampgrad.tensor([1.0, -1.0])).backward()
    torch.nn.functional.soft_margin_loss(xt, torch.tensor([1.0, -1.0])).backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-6)
