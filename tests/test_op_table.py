"""The op table (csrc/ops/op_list.def, Note [Op table]) drives the engine: every kernel row has a
kernel, no row is dead, the plain unary ops are bound from it, and its policy column is what
autocast applies (Note [Autocast gate]): every row with a policy is exercised here, through each of
its entry points, against torch under autocast."""
import os
import re

import numpy as np
import pytest

import ampgrad as ag
from ampgrad import _C

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
ROWS = _C._op_table()  # (name, kernel family, cpu policy, cuda policy, has a CPU kernel)
POLICY_ROWS = [r[0] for r in ROWS if r[2] != "none" or r[3] != "none"]


def test_every_kernel_row_has_its_cpu_kernel():
    # CUDA-only kernels: the fused GEMM epilogue (Note [GEMM epilogues]).
    missing = [n for n, fam, _, _, has in ROWS if fam not in ("none", "gemm_bias") and not has]
    assert not missing, f"rows with a kernel family but no CPU kernel: {missing}"


def test_no_dead_rows():
    # A row without a kernel of its own exists for its autocast policy (an op composed of others).
    dead = [n for n, fam, cpu, cuda, _ in ROWS if fam == "none" and cpu == "none" and cuda == "none"]
    assert not dead, f"rows with neither a kernel nor a policy: {dead}"


def test_plain_unary_ops_are_bound_from_the_table():
    names = _C._unary_ops()
    assert len(names) >= 30
    for n in names:
        assert getattr(ag, n) is getattr(_C, n)
        assert callable(getattr(ag.Tensor, n)) and callable(getattr(ag.Tensor, n + "_"))
        x = ag.tensor([0.25, 0.5])
        np.testing.assert_array_equal(getattr(x, n)().numpy(), getattr(ag, n)(x).numpy())


def test_plain_binary_ops_are_bound_from_the_table(torch):
    names = _C._binary_ops()
    assert {"mul", "maximum", "eq", "logical_xor", "atan2"} <= set(names)
    a, b = np.array([0.5, -1.5, 2.0], np.float32), np.array([1.5, -1.5, 0.25], np.float32)
    for n in names:
        assert getattr(ag, n) is getattr(_C, n)
        ref = getattr(torch, n)(torch.tensor(a), torch.tensor(b)).numpy()
        np.testing.assert_array_equal(getattr(ag, n)(ag.tensor(a), ag.tensor(b)).numpy(), ref)
        np.testing.assert_array_equal(getattr(ag.tensor(a), n)(ag.tensor(b)).numpy(), ref)
        x, tx = ag.tensor(a), torch.tensor(a)
        getattr(x, n + "_")(ag.tensor(b))
        # torch has no maximum_ / minimum_ (ampgrad's write the out-of-place result, cast to self's dtype)
        want = getattr(tx, n + "_")(torch.tensor(b)) if hasattr(tx, n + "_") else torch.tensor(ref).to(tx.dtype)
        np.testing.assert_array_equal(x.numpy(), want.numpy())


def _sources(top, exts):
    for d, _, files in os.walk(os.path.join(ROOT, top)):
        for f in files:
            if f.endswith(exts):
                p = os.path.join(d, f)
                yield os.path.relpath(p, ROOT), open(p, encoding="utf-8").read()


def test_no_op_casts_by_hand():
    """Autocast is applied at the gate only: no _autocast(...) call in the Python package, no cast
    call in an op front end or binding (amp/ holds the gate and the policy code)."""
    hand = []
    for path, text in _sources("python/ampgrad", (".py",)):
        hand += [f"{path}: {m.group(0)}" for m in re.finditer(r"\b_autocast\(", text)]
    for path, text in _sources("csrc", (".cpp", ".h")):
        if path.startswith(os.path.join("csrc", "amp")):
            continue
        hand += [f"{path}: {m.group(0)}" for m in re.finditer(r"AG_AUTOCAST|amp::apply\(|amp::set_opt_dtype\(", text)]
    assert not hand, hand


# ---------------------------------------------------------------- the policy column, row by row
def _arr(shape, seed, lo=-1.0, hi=1.0):
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(np.float32)


class _In:
    """Float32 inputs built the same way for torch and ampgrad, on `device`."""

    def __init__(self, m, device="cpu"):
        self.m, self.device = m, device

    def __call__(self, *shape, seed=0, lo=-1.0, hi=1.0):
        return self.m.tensor(_arr(shape, seed, lo, hi), device=self.device)

    def pos(self, *shape, seed=0):
        return self(*shape, seed=seed, lo=0.1, hi=0.9)

    def long(self, *vals):
        return self.m.tensor(list(vals), device=self.device)

    def const(self, vals):
        return self.m.tensor(vals, device=self.device)


F = lambda m: m.nn.functional  # noqa: E731
# Row -> its entry points: function / method / operator / nn.functional forms, each (m, inputs) -> result.
CALLS = {
    "exp": [lambda m, t: m.exp(t(4)), lambda m, t: t(4).exp()],
    "expm1": [lambda m, t: m.expm1(t(4)), lambda m, t: t(4).expm1()],
    "log": [lambda m, t: m.log(t.pos(4)), lambda m, t: t.pos(4).log()],
    "log2": [lambda m, t: m.log2(t.pos(4)), lambda m, t: t.pos(4).log2()],
    "log10": [lambda m, t: m.log10(t.pos(4)), lambda m, t: t.pos(4).log10()],
    "log1p": [lambda m, t: m.log1p(t.pos(4)), lambda m, t: t.pos(4).log1p()],
    "rsqrt": [lambda m, t: m.rsqrt(t.pos(4)), lambda m, t: t.pos(4).rsqrt()],
    "reciprocal": [lambda m, t: m.reciprocal(t.pos(4)), lambda m, t: t.pos(4).reciprocal()],
    "tan": [lambda m, t: m.tan(t(4)), lambda m, t: t(4).tan()],
    "asin": [lambda m, t: m.asin(t(4)), lambda m, t: t(4).asin()],
    "acos": [lambda m, t: m.acos(t(4)), lambda m, t: t(4).acos()],
    "sinh": [lambda m, t: m.sinh(t(4)), lambda m, t: t(4).sinh()],
    "cosh": [lambda m, t: m.cosh(t(4)), lambda m, t: t(4).cosh()],
    "softplus": [lambda m, t: F(m).softplus(t(4))],
    "erfinv": [lambda m, t: m.erfinv(t(4)), lambda m, t: t(4).erfinv()],
    "pow": [lambda m, t: m.pow(t.pos(4), t(4, seed=1)), lambda m, t: t.pos(4).pow(2.5), lambda m, t: t.pos(4) ** t(4, seed=1)],
    "atan2": [lambda m, t: m.atan2(t(4), t(4, seed=1).bfloat16()), lambda m, t: t(4).atan2(t(4, seed=1))],
    "rtruediv": [lambda m, t: 2.0 / t.pos(4)],
    "rpow": [lambda m, t: 2.0 ** t(4)],
    "addcmul": [lambda m, t: m.addcmul(t(4), t(4, seed=1).bfloat16(), t(4, seed=2)), lambda m, t: t(4).addcmul(t(4, seed=1), t(4, seed=2))],
    "addcdiv": [lambda m, t: m.addcdiv(t(4), t(4, seed=1), t.pos(4, seed=2).bfloat16()), lambda m, t: t(4).addcdiv(t(4, seed=1), t.pos(4, seed=2))],
    "sum": [lambda m, t: m.sum(t(4, 3).bfloat16()), lambda m, t: t(4, 3).bfloat16().sum(1)],
    "prod": [lambda m, t: m.prod(t.pos(4, 3).bfloat16()), lambda m, t: t.pos(4, 3).bfloat16().prod(1)],
    "norm": [lambda m, t: m.norm(t(4, 3).bfloat16()), lambda m, t: t(4, 3).bfloat16().norm(dim=1)],
    "cumsum": [lambda m, t: m.cumsum(t(4, 3).bfloat16(), 1), lambda m, t: t(4, 3).bfloat16().cumsum(0)],
    "cumprod": [lambda m, t: m.cumprod(t.pos(4, 3).bfloat16(), 1), lambda m, t: t.pos(4, 3).bfloat16().cumprod(0)],
    "softmax": [lambda m, t: m.softmax(t(4, 3).bfloat16(), 1), lambda m, t: F(m).softmax(t(4, 3).bfloat16(), dim=0)],
    "log_softmax": [lambda m, t: m.log_softmax(t(4, 3).bfloat16(), 1), lambda m, t: F(m).log_softmax(t(4, 3).bfloat16(), dim=0)],
    "matmul": [lambda m, t: m.matmul(t(3, 4), t(4, 2)), lambda m, t: t(3, 4) @ t(4, 2), lambda m, t: t(3, 4).matmul(t(4, 2))],
    "mm": [lambda m, t: m.mm(t(3, 4), t(4, 2)), lambda m, t: t(3, 4).mm(t(4, 2))],
    "bmm": [lambda m, t: m.bmm(t(2, 3, 4), t(2, 4, 2)), lambda m, t: t(2, 3, 4).bmm(t(2, 4, 2))],
    "mv": [lambda m, t: m.mv(t(3, 4), t(4)), lambda m, t: t(3, 4).mv(t(4))],
    "dot": [lambda m, t: m.dot(t(4), t(4, seed=1)), lambda m, t: t(4).dot(t(4, seed=1))],
    "addmm": [lambda m, t: m.addmm(t(3, 2), t(3, 4), t(4, 2)), lambda m, t: t(3, 2).addmm(t(3, 4), t(4, 2))],
    "_addmm_activation": [lambda m, t: m._addmm_activation(t(2), t(3, 4), t(4, 2)),
                          lambda m, t: m._addmm_activation(t(2), t(3, 4), t(4, 2), use_gelu=True)],
    "_native_multi_head_attention": [lambda m, t: m._native_multi_head_attention(
        t(2, 3, 4), t(2, 3, 4), t(2, 3, 4), 4, 2, t(12, 4), t(12), t(4, 4), t(4))[0]],
    "addmv": [lambda m, t: m.addmv(t(3), t(3, 4), t(4)), lambda m, t: t(3).addmv(t(3, 4), t(4))],
    "addr": [lambda m, t: m.addr(t(3, 4), t(3), t(4)), lambda m, t: t(3, 4).addr(t(3), t(4))],
    "addbmm": [lambda m, t: m.addbmm(t(3, 2), t(2, 3, 4), t(2, 4, 2)), lambda m, t: t(3, 2).addbmm(t(2, 3, 4), t(2, 4, 2))],
    "baddbmm": [lambda m, t: m.baddbmm(t(2, 3, 2), t(2, 3, 4), t(2, 4, 2)), lambda m, t: t(2, 3, 2).baddbmm(t(2, 3, 4), t(2, 4, 2))],
    "linear": [lambda m, t: F(m).linear(t(3, 4), t(2, 4), t(2))],
    "cat": [lambda m, t: m.cat([t(2, 3), t(2, 3, seed=1).bfloat16()]), lambda m, t: m.concat([t(2, 3).bfloat16(), t(1, 3)])],
    "stack": [lambda m, t: m.stack([t(2, 3), t(2, 3, seed=1).bfloat16()])],
    "scatter_add": [lambda m, t: m.scatter_add(t(3, 3), 0, t.long([[0, 1, 2]]), t(1, 3).bfloat16()),
                    lambda m, t: t(3, 3).scatter_add(0, t.long([[2, 1, 0]]), t(1, 3))],
    "index_copy": [lambda m, t: m.index_copy(t(3, 3), 0, t.long(2, 0), t(2, 3).bfloat16()),
                   lambda m, t: t(3, 3).bfloat16().index_copy(0, t.long(1), t(1, 3))],
    "index_put": [lambda m, t: t(3, 3).index_put((t.long(0, 2),), t(2, 3).bfloat16())],
    "conv1d": [lambda m, t: F(m).conv1d(t(1, 2, 6), t(3, 2, 3), t(3))],
    "conv2d": [lambda m, t: F(m).conv2d(t(1, 2, 5, 5), t(3, 2, 3, 3), t(3))],
    "conv3d": [lambda m, t: F(m).conv3d(t(1, 2, 4, 4, 4), t(3, 2, 2, 2, 2))],
    "conv_transpose1d": [lambda m, t: F(m).conv_transpose1d(t(1, 2, 5), t(2, 3, 3), t(3))],
    "conv_transpose2d": [lambda m, t: F(m).conv_transpose2d(t(1, 2, 4, 4), t(2, 3, 3, 3))],
    "conv_transpose3d": [lambda m, t: F(m).conv_transpose3d(t(1, 2, 3, 3, 3), t(2, 3, 2, 2, 2))],
    "prelu": [lambda m, t: F(m).prelu(t(2, 3), t.pos(1))],
    "RNNCell": [lambda m, t: _cell(m, "RNNCell", t)],
    "LSTMCell": [lambda m, t: _cell(m, "LSTMCell", t)[0]],
    "GRUCell": [lambda m, t: _cell(m, "GRUCell", t)],
    "mkldnn_rnn_layer": [lambda m, t: _cell(m, "LSTM", t, (5, 2, 4))[0]],
    "chain_matmul": [lambda m, t: m.chain_matmul(t(3, 4), t(4, 2), t(2, 2))],
    "multi_dot": [lambda m, t: m.linalg.multi_dot([t(3, 4), t(4, 2), t(2, 2)])],
    "linalg_vecdot": [lambda m, t: m.linalg.vecdot(t(3, 4), t(3, 4, seed=1))],
    "scaled_dot_product_attention": [lambda m, t: F(m).scaled_dot_product_attention(t(1, 3, 4), t(1, 3, 4, seed=1), t(1, 3, 4, seed=2))],
    "layer_norm": [lambda m, t: F(m).layer_norm(t(2, 4).bfloat16(), (4,))],
    "group_norm": [lambda m, t: F(m).group_norm(t(2, 4, 3).bfloat16(), 2)],
    "rms_norm": [lambda m, t: F(m).rms_norm(t(2, 4).bfloat16(), (4,))],
    "softmin": [lambda m, t: F(m).softmin(t(2, 4).bfloat16(), 1)],
    "normalize": [lambda m, t: F(m).normalize(t(2, 4).bfloat16())],
    "cosine_similarity": [lambda m, t: F(m).cosine_similarity(t(2, 4).bfloat16(), t(2, 4, seed=1))],
    "cdist": [lambda m, t: m.cdist(t(3, 4).bfloat16(), t(2, 4, seed=1).bfloat16())],
    "dist": [lambda m, t: m.dist(t(4).bfloat16(), t(4, seed=1).bfloat16())],
    "pdist": [lambda m, t: F(m).pdist(t(3, 4))],  # torch has no bf16/fp16 pdist on the CPU
    "renorm": [lambda m, t: m.renorm(t(3, 4).bfloat16(), 2, 0, 1.0)],
    "trace": [lambda m, t: m.trace(t(3, 3).bfloat16())],
    "cross_entropy": [lambda m, t: F(m).cross_entropy(t(3, 4).bfloat16(), t.long(0, 3, 1))],
    "nll_loss": [lambda m, t: F(m).nll_loss(t(3, 4).bfloat16(), t.long(0, 3, 1))],
    "mse_loss": [lambda m, t: F(m).mse_loss(t(3, 4).bfloat16(), t(3, 4, seed=1).bfloat16())],
    "l1_loss": [lambda m, t: F(m).l1_loss(t(3, 4).bfloat16(), t(3, 4, seed=1).bfloat16())],
    "smooth_l1_loss": [lambda m, t: F(m).smooth_l1_loss(t(3, 4).bfloat16(), t(3, 4, seed=1).bfloat16())],
    "huber_loss": [lambda m, t: F(m).huber_loss(t(3, 4).bfloat16(), t(3, 4, seed=1).bfloat16())],
    "kl_div": [lambda m, t: F(m).kl_div(t(3, 4).bfloat16(), t.pos(3, 4, seed=1).bfloat16(), reduction="batchmean")],
    "binary_cross_entropy": [lambda m, t: F(m).binary_cross_entropy(t.pos(3, 4).bfloat16(), t.pos(3, 4, seed=1).bfloat16())],
    "binary_cross_entropy_with_logits": [lambda m, t: F(m).binary_cross_entropy_with_logits(t(3, 4).bfloat16(), t.pos(3, 4, seed=1).bfloat16())],
    "cosine_embedding_loss": [lambda m, t: F(m).cosine_embedding_loss(t(3, 4).bfloat16(), t(3, 4, seed=1).bfloat16(), t.const([1.0, -1.0, 1.0]))],
    "hinge_embedding_loss": [lambda m, t: F(m).hinge_embedding_loss(t(3, 4).bfloat16(), t.const([1.0, -1.0, 1.0, 1.0]))],
    "margin_ranking_loss": [lambda m, t: F(m).margin_ranking_loss(t(3).bfloat16(), t(3, seed=1).bfloat16(), t.const([1.0, -1.0, 1.0]))],
    "multilabel_margin_loss": [lambda m, t: F(m).multilabel_margin_loss(t(2, 4).bfloat16(), t.const([[3, 0, -1, 1], [1, -1, 0, 0]]))],
    "multi_margin_loss": [lambda m, t: F(m).multi_margin_loss(t(3, 4).bfloat16(), t.long(0, 3, 1))],
    "poisson_nll_loss": [lambda m, t: F(m).poisson_nll_loss(t(3, 4).bfloat16(), t.pos(3, 4, seed=1).bfloat16())],
    "soft_margin_loss": [lambda m, t: F(m).soft_margin_loss(t(3, 4).bfloat16(), t.const([[1.0, -1.0, 1.0, 1.0]] * 3))],
    "triplet_margin_loss": [lambda m, t: F(m).triplet_margin_loss(t(3, 4).bfloat16(), t(3, 4, seed=1).bfloat16(), t(3, 4, seed=2).bfloat16())],
    "bilinear": [lambda m, t: F(m).bilinear(t(2, 3), t(2, 4), t(5, 3, 4), t(5))],
    "cross": [lambda m, t: m.cross(t(2, 3), t(2, 3, seed=1), dim=1), lambda m, t: m.linalg.cross(t(2, 3), t(2, 3, seed=1))],
    "tensordot": [lambda m, t: m.tensordot(t(3, 4), t(4, 2), dims=1)],
    "grid_sample": [lambda m, t: F(m).grid_sample(t(1, 2, 4, 4), t(1, 3, 3, 2), align_corners=False)],
    "max_pool3d": [lambda m, t: F(m).max_pool3d(t(1, 2, 4, 4, 4).bfloat16(), 2)],
    "avg_pool3d": [lambda m, t: F(m).avg_pool3d(t(1, 2, 4, 4, 4).bfloat16(), 2)],
    "adaptive_avg_pool3d": [lambda m, t: F(m).adaptive_avg_pool3d(t(1, 2, 4, 4, 4).bfloat16(), 2)],
    "adaptive_max_pool3d": [lambda m, t: F(m).adaptive_max_pool3d(t(1, 2, 4, 4, 4).bfloat16(), 2)],
    # spatial ops (ops/spatial.cpp): F.pad's reflect / replicate kernels and max_unpool run in fp32 under CPU autocast
    "reflection_pad1d": [lambda m, t: F(m).pad(t(2, 5).bfloat16(), (2, 2), mode="reflect")],
    "reflection_pad2d": [lambda m, t: F(m).pad(t(1, 3, 4).bfloat16(), (1, 1, 2, 0), mode="reflect"),
                         lambda m, t: m.nn.ReflectionPad2d(1)(t(1, 2, 3, 4).bfloat16())],
    "replication_pad1d": [lambda m, t: F(m).pad(t(2, 5).bfloat16(), (2, 1), mode="replicate")],
    "replication_pad2d": [lambda m, t: F(m).pad(t(1, 3, 4).bfloat16(), (1, 1, 2, 0), mode="replicate")],
    "replication_pad3d": [lambda m, t: F(m).pad(t(1, 2, 3, 4).bfloat16(), (1, 1, 2, 0, 1, 1), mode="replicate")],
    "max_unpool2d": [lambda m, t: F(m).max_unpool2d(t(1, 2, 2, 2).bfloat16(), t.long(0, 3, 9, 15, 1, 2, 4, 8).reshape(1, 2, 2, 2), 2)],
    "max_unpool3d": [lambda m, t: F(m).max_unpool3d(t(1, 1, 2, 2, 2).bfloat16(), t.long(0, 3, 9, 15, 1, 2, 4, 8).reshape(1, 1, 2, 2, 2), 2)],
    # ops/ctc_fracpool.cpp: torch's CPU autocast runs them in float32
    "ctc_loss": [lambda m, t: F(m).ctc_loss(F(m).log_softmax(t(5, 2, 4), 2).bfloat16(), t.long(1, 2, 3, 1).reshape(2, 2),
                                            (5, 4), (2, 2)),
                 lambda m, t: m.ctc_loss(F(m).log_softmax(t(5, 2, 4), 2).bfloat16(), t.long(1, 2, 3, 1).reshape(2, 2),
                                         (5, 4), (2, 2), 0, 0),
                 lambda m, t: m.nn.CTCLoss(reduction="sum")(F(m).log_softmax(t(5, 2, 4), 2).bfloat16(),
                                                             t.long(1, 2, 3, 1).reshape(2, 2), (5, 4), (2, 2))],
    "fractional_max_pool2d": [lambda m, t: F(m).fractional_max_pool2d(t(1, 2, 6, 6).bfloat16(), 2, output_size=3,
                                                                      _random_samples=t.pos(1, 2, 2).bfloat16()),
                              lambda m, t: m.nn.FractionalMaxPool2d(2, output_size=3, _random_samples=t.pos(1, 2, 2).bfloat16())(
                                  t(1, 2, 6, 6).bfloat16())],
    "fractional_max_pool3d": [lambda m, t: F(m).fractional_max_pool3d(t(1, 2, 5, 5, 5).bfloat16(), 2, output_size=3,
                                                                      _random_samples=t.pos(1, 2, 3).bfloat16())],
}


def _cell(m, kind, t, shape=(2, 4)):
    m.manual_seed(0)
    cell = getattr(m.nn, kind)(4, 3).to(t.device)
    with m.no_grad():
        for i, p in enumerate(cell.parameters()):
            p.copy_(m.tensor(_arr(tuple(p.shape), 10 + i), device=t.device))
    return cell(t(*shape), None)


def test_every_policy_row_is_exercised():
    assert sorted(set(POLICY_ROWS) - set(CALLS)) == [], "policy rows without entry points in CALLS"
    assert sorted(set(CALLS) - set(POLICY_ROWS)) == [], "CALLS entries that are not policy rows"


def _name(dt):
    return str(dt).split(".")[-1]


@pytest.mark.filterwarnings("ignore:torch.chain_matmul is deprecated")
@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("row,k", [(r, k) for r in POLICY_ROWS for k in range(len(CALLS.get(r, [])))])
def test_policy_row_under_autocast_matches_torch(row, k, dtype, device):
    """Each entry point of each policy row, under autocast on `device`: dtype and values as torch's
    (rows whose policy is for the other device type must not cast), or torch's exception type. The
    CUDA axis runs where ampgrad and torch both have a GPU."""
    torch = pytest.importorskip("torch")
    if device == "cuda" and not (ag.cuda.is_available() and torch.cuda.is_available()):
        pytest.skip("needs CUDA in ampgrad and torch")
    fn = CALLS[row][k]
    try:
        with torch.autocast(device, dtype=getattr(torch, dtype)):
            ref = fn(torch, _In(torch, device))
    except Exception as e:  # noqa: BLE001 - the exception type is what is compared
        if row == "mkldnn_rnn_layer" and dtype == "float16" and device == "cpu":
            pytest.skip("torch's oneDNN LSTM has no float16 primitive on this CPU (ampgrad computes it)")
        with pytest.raises(type(e)):
            with ag.autocast(device, dtype=getattr(ag, dtype)):
                fn(ag, _In(ag, device))
        return
    with ag.autocast(device, dtype=getattr(ag, dtype)):
        out = fn(ag, _In(ag, device))
    assert _name(out.dtype) == _name(ref.dtype), f"{row}[{k}]: {out.dtype} vs torch {ref.dtype}"
    # fp32 results compare tightly; the cells add fp32 state to bf16 linear outputs (rounded as torch's).
    tol = 0 if _name(ref.dtype) in ("float32", "float64") and "Cell" not in row else 2e-2
    np.testing.assert_allclose(out.detach().double().cpu().numpy(), ref.detach().double().cpu().numpy(), rtol=max(tol, 1e-5),
                               atol=max(tol, 1e-6))


def test_gate_excludes_inner_ops_only_on_the_rows_devices():
    """A gated op runs its inner ops with autocast excluded on the device types its row has a policy
    for (torch's ExcludeDispatchKeyGuard per Autocast key): mse_loss (fp32 on CPU) computes in fp32
    from bf16 inputs; RNNCell (a CUDA-only row) still runs linear in bf16 on the CPU."""
    x, y = ag.randn(3, 4).bfloat16(), ag.randn(3, 4).bfloat16()
    with ag.autocast("cpu"):
        assert ag.nn.functional.mse_loss(x, y).dtype == ag.float32
        cell = ag.nn.RNNCell(4, 3)
        assert cell(ag.randn(2, 4)).dtype == ag.bfloat16
        assert ag.is_autocast_enabled("cpu")  # the gate leaves the state as it found it
        assert (ag.randn(2, 2) @ ag.randn(2, 2)).dtype == ag.bfloat16


def test_gated_op_runs_its_inner_ops_without_autocast(torch):
    """cdist (fp32 on CPU) computes large inputs through a matrix product (lower_precision_fp on CPU):
    inside the gate that product must stay fp32, as in torch (its inner at::mm is not autocast)."""
    a, b = _arr((40, 8), 1), _arr((30, 8), 2)
    with torch.autocast("cpu"):
        ref = torch.cdist(torch.tensor(a), torch.tensor(b))
    with ag.autocast("cpu"):
        out = ag.cdist(ag.tensor(a), ag.tensor(b))
    assert out.dtype == ag.float32 and ref.dtype == torch.float32
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out.numpy(), ag.cdist(ag.tensor(a), ag.tensor(b)).numpy(), rtol=1e-6, atol=1e-6)


def test_gate_rejects_unknown_rows():
    from ampgrad._op_gate import engine_op
    with pytest.raises(ValueError, match="no op 'not_an_op'"):
        engine_op("not_an_op")


def test_gate_keeps_python_references_exact():
    """The gate of the ops composed in Python rebinds a cast argument in its argument list: the original
    tensor's reference is released and the cast one's taken. A raw rebinding leaked every cast input
    (a bf16 step's logits under autocast through cross_entropy: ~65 KB per call, RSS growing without end)
    and left the cast tensor a reference short (freed while the callee still held it: a crash)."""
    import gc
    import sys
    import weakref
    x = ag.randn(4, 3).bfloat16()
    t = ag.zeros(4, dtype=ag.long)
    seen = []

    def fn(a, b, w=None):
        seen.append(a)
        assert a.dtype == ag.float32 and w.dtype == ag.float32  # cast per the row (fp32 on CPU)
        return a.sum()

    op = _C._op_id("cross_entropy")
    before = sys.getrefcount(x)
    w = ag.ones(3).bfloat16()
    with ag.autocast("cpu", dtype=ag.bfloat16):
        for _ in range(3):
            _C._autocast_gate(op, fn, (x, t), {"w": w})
    assert sys.getrefcount(x) == before
    gc.collect()
    # each cast argument is owned by `seen` alone now (getrefcount's own argument is the +1)
    assert [sys.getrefcount(seen[i]) for i in range(3)] == [2, 2, 2]
    assert seen[0].sum().item() == pytest.approx(x.float().sum().item())
    # through the public op: the bf16 logits die with their last reference
    logits = ag.randn(8, 5).bfloat16()
    ref = weakref.ref(logits) if hasattr(logits, "__weakref__") else None
    before = sys.getrefcount(logits)
    with ag.autocast("cpu", dtype=ag.bfloat16):
        loss = ag.nn.functional.cross_entropy(logits, ag.zeros(8, dtype=ag.long))
    assert loss.dtype == ag.float32
    assert sys.getrefcount(logits) == before
    if ref is not None:
        del logits
        gc.collect()
        assert ref() is None


@pytest.mark.skipif("ASAN_OPTIONS" in os.environ, reason="sanitizer builds allocate every block exactly (no cache)")
def test_large_cpu_blocks_are_reused():
    """Note [Large CPU blocks]: a freed block above 1 MiB goes back to ampgrad's cache, and the next tensor
    of its size class takes it (returning it to glibc cost every step page faults on fresh pages). A
    reused block holds stale bytes: an op's output must still be exactly its values."""
    for n in (1 << 20, 3 << 19, 1_000_003):  # 4 MiB, 6 MiB, an odd size
        a = ag.full((n,), 7.0)
        p = a.data_ptr()
        del a
        b = ag.arange(n, dtype=ag.float32)
        assert b.data_ptr() == p
        np.testing.assert_array_equal(b.numpy(), np.arange(n, dtype=np.float32))
        c = ag.zeros(n)
        del b
        assert float(c.abs().max()) == 0.0
