"""CPU autocast output dtypes and values against torch, for every op of the reference lists
(tests/amp_lists.py, CUDA and CPU lists) that ampgrad implements: fp32 inputs under
autocast("cpu", bfloat16 / float16) must give torch's result dtype (lowered, kept fp32, promoted
or passed through) and torch's numbers to low-precision tolerance."""
import numpy as np
import pytest

import ampgrad as ag
from ampgrad import _C

import amp_lists as L

torch = pytest.importorskip("torch")


class Inputs:
    """Draws the same float32 arrays for both libraries: T normal, P positive, U in (-0.9, 0.9),
    Z in (0.05, 0.95), S signs; I integer indices; M a module with weights copied from numpy."""

    def __init__(self, lib, seed):
        self.m, self.rng = lib, np.random.default_rng(seed)

    def _t(self, a):
        return self.m.tensor(a.astype(np.float32))

    def T(self, *s): return self._t(self.rng.standard_normal(s))
    def P(self, *s): return self._t(self.rng.uniform(0.5, 2.0, s))
    def U(self, *s): return self._t(self.rng.uniform(-0.9, 0.9, s))
    def Z(self, *s): return self._t(self.rng.uniform(0.05, 0.95, s))
    def S(self, *s): return self._t(np.where(self.rng.standard_normal(s) > 0, 1.0, -1.0))
    def I(self, *s, high): return self.m.tensor(self.rng.integers(0, high, s))

    def M(self, name, *args):
        mod = getattr(self.m.nn, name)(*args)
        with self.m.no_grad():
            for p in mod.parameters():
                p.copy_(self._t(self.rng.standard_normal(tuple(p.shape)) * 0.5))
        return mod


CASES = {
    "matmul": lambda m, x: x.T(3, 4) @ x.T(4, 5),
    "addbmm": lambda m, x: m.addbmm(x.T(3, 5), x.T(2, 3, 4), x.T(2, 4, 5)),
    "addmm": lambda m, x: m.addmm(x.T(3, 5), x.T(3, 4), x.T(4, 5)),
    "addmv": lambda m, x: m.addmv(x.T(3), x.T(3, 4), x.T(4)),
    "addr": lambda m, x: m.addr(x.T(3, 4), x.T(3), x.T(4)),
    "baddbmm": lambda m, x: m.baddbmm(x.T(2, 3, 5), x.T(2, 3, 4), x.T(2, 4, 5)),
    "bmm": lambda m, x: m.bmm(x.T(2, 3, 4), x.T(2, 4, 5)),
    "chain_matmul": lambda m, x: m.linalg.multi_dot([x.T(3, 4), x.T(4, 5), x.T(5, 2)]),
    "multi_dot": lambda m, x: m.linalg.multi_dot([x.T(3, 4), x.T(4, 5), x.T(5, 2)]),
    "conv1d": lambda m, x: m.nn.functional.conv1d(x.T(1, 2, 8), x.T(3, 2, 3), x.T(3)),
    "conv2d": lambda m, x: m.nn.functional.conv2d(x.T(1, 2, 6, 6), x.T(3, 2, 3, 3), x.T(3)),
    "conv3d": lambda m, x: m.nn.functional.conv3d(x.T(1, 2, 4, 4, 4), x.T(3, 2, 2, 2, 2)),
    "conv_transpose1d": lambda m, x: m.nn.functional.conv_transpose1d(x.T(1, 2, 5), x.T(2, 3, 3)),
    "conv_transpose2d": lambda m, x: m.nn.functional.conv_transpose2d(x.T(1, 2, 4, 4), x.T(2, 3, 3, 3)),
    "conv_transpose3d": lambda m, x: m.nn.functional.conv_transpose3d(x.T(1, 2, 3, 3, 3), x.T(2, 3, 2, 2, 2)),
    "GRUCell": lambda m, x: x.M("GRUCell", 4, 3)(x.T(2, 4), x.T(2, 3)),
    "LSTMCell": lambda m, x: x.M("LSTMCell", 4, 3)(x.T(2, 4), (x.T(2, 3), x.T(2, 3))),
    "RNNCell": lambda m, x: x.M("RNNCell", 4, 3)(x.T(2, 4), x.T(2, 3)),
    "mkldnn_rnn_layer": lambda m, x: x.M("LSTM", 4, 3, 2)(x.T(5, 2, 4)),
    "linear": lambda m, x: m.nn.functional.linear(x.T(3, 4), x.T(5, 4), x.T(5)),
    "_addmm_activation": lambda m, x: m._addmm_activation(x.T(5), x.T(3, 4), x.T(4, 5), use_gelu=False),
    "_native_multi_head_attention": lambda m, x: m._native_multi_head_attention(
        x.T(2, 5, 8), x.T(2, 5, 8), x.T(2, 5, 8), 8, 2, x.T(24, 8), x.T(24), x.T(8, 8), x.T(8)),
    "mm": lambda m, x: m.mm(x.T(3, 4), x.T(4, 5)),
    "mv": lambda m, x: m.mv(x.T(3, 4), x.T(4)),
    "prelu": lambda m, x: m.nn.functional.prelu(x.T(2, 3, 4), x.T(3)),
    "pow": lambda m, x: m.pow(x.P(4), x.T(4)),
    "rtruediv": lambda m, x: 2.0 / x.P(4),
    "rpow": lambda m, x: 2.0 ** x.T(4),
    "acos": lambda m, x: m.acos(x.U(4)),
    "asin": lambda m, x: m.asin(x.U(4)),
    "binary_cross_entropy_with_logits": lambda m, x: m.nn.functional.binary_cross_entropy_with_logits(x.T(4), x.Z(4)),
    "cosh": lambda m, x: m.cosh(x.T(4)),
    "cosine_embedding_loss": lambda m, x: m.nn.functional.cosine_embedding_loss(x.T(3, 4), x.T(3, 4), x.S(3)),
    "cdist": lambda m, x: m.cdist(x.T(3, 4), x.T(5, 4)),
    "cosine_similarity": lambda m, x: m.nn.functional.cosine_similarity(x.T(3, 4), x.T(3, 4)),
    "cross_entropy": lambda m, x: m.nn.functional.cross_entropy(x.T(3, 5), x.I(3, high=5)),
    "cumprod": lambda m, x: m.cumprod(x.P(4, 3), 1),
    "cumsum": lambda m, x: m.cumsum(x.T(4, 3), 1),
    "dist": lambda m, x: m.dist(x.T(4), x.T(4)),
    "erfinv": lambda m, x: m.erfinv(x.U(4)),
    "exp": lambda m, x: m.exp(x.T(4)),
    "expm1": lambda m, x: m.expm1(x.T(4)),
    "group_norm": lambda m, x: m.nn.functional.group_norm(x.T(2, 4, 3), 2, x.T(4), x.T(4)),
    "hinge_embedding_loss": lambda m, x: m.nn.functional.hinge_embedding_loss(x.T(4), x.S(4)),
    "kl_div": lambda m, x: m.nn.functional.kl_div(x.T(3, 4), x.Z(3, 4), reduction="batchmean"),
    "l1_loss": lambda m, x: m.nn.functional.l1_loss(x.T(4), x.T(4)),
    "layer_norm": lambda m, x: m.nn.functional.layer_norm(x.T(2, 4), (4,), x.T(4), x.T(4)),
    "rms_norm": lambda m, x: m.nn.functional.rms_norm(x.T(2, 4), (4,), x.T(4)),
    "log": lambda m, x: m.log(x.P(4)),
    "log_softmax": lambda m, x: m.nn.functional.log_softmax(x.T(3, 4), 1),
    "log10": lambda m, x: m.log10(x.P(4)),
    "log1p": lambda m, x: m.log1p(x.P(4)),
    "log2": lambda m, x: m.log2(x.P(4)),
    "margin_ranking_loss": lambda m, x: m.nn.functional.margin_ranking_loss(x.T(4), x.T(4), x.S(4)),
    "mse_loss": lambda m, x: m.nn.functional.mse_loss(x.T(4), x.T(4)),
    "multilabel_margin_loss": lambda m, x: m.nn.functional.multilabel_margin_loss(
        x.T(2, 4), m.tensor([[3, 0, -1, 1], [0, 1, 2, -1]])),
    "multi_margin_loss": lambda m, x: m.nn.functional.multi_margin_loss(x.T(3, 4), x.I(3, high=4)),
    "nll_loss": lambda m, x: m.nn.functional.nll_loss(x.T(3, 5), x.I(3, high=5)),
    "norm": lambda m, x: m.norm(x.T(4, 3)),
    "normalize": lambda m, x: m.nn.functional.normalize(x.T(3, 4)),
    "pdist": lambda m, x: m.nn.functional.pdist(x.T(4, 3)),
    "poisson_nll_loss": lambda m, x: m.nn.functional.poisson_nll_loss(x.T(4), x.P(4)),
    "prod": lambda m, x: m.prod(x.P(4)),
    "reciprocal": lambda m, x: m.reciprocal(x.P(4)),
    "rsqrt": lambda m, x: m.rsqrt(x.P(4)),
    "sinh": lambda m, x: m.sinh(x.T(4)),
    "smooth_l1_loss": lambda m, x: m.nn.functional.smooth_l1_loss(x.T(4), x.T(4)),
    "soft_margin_loss": lambda m, x: m.nn.functional.soft_margin_loss(x.T(4), x.S(4)),
    "softmax": lambda m, x: m.nn.functional.softmax(x.T(3, 4), 1),
    "softmin": lambda m, x: m.nn.functional.softmin(x.T(3, 4), 1),
    "softplus": lambda m, x: m.nn.functional.softplus(x.T(4)),
    "sum": lambda m, x: m.sum(x.T(4)),
    "renorm": lambda m, x: m.renorm(x.T(3, 4), 2, 0, 1.0),
    "tan": lambda m, x: m.tan(x.U(4)),
    "triplet_margin_loss": lambda m, x: m.nn.functional.triplet_margin_loss(x.T(3, 4), x.T(3, 4), x.T(3, 4)),
    "addcdiv": lambda m, x: m.addcdiv(x.T(4), x.T(4), x.P(4)),
    "addcmul": lambda m, x: m.addcmul(x.T(4), x.T(4), x.T(4)),
    "atan2": lambda m, x: m.atan2(x.T(4), x.T(4)),
    "bilinear": lambda m, x: m.nn.functional.bilinear(x.T(3, 4), x.T(3, 5), x.T(2, 4, 5), x.T(2)),
    "cross": lambda m, x: m.cross(x.T(4, 3), x.T(4, 3), dim=1),
    "dot": lambda m, x: m.dot(x.T(4), x.T(4)),
    "grid_sample": lambda m, x: m.nn.functional.grid_sample(x.T(1, 2, 4, 4), x.U(1, 3, 3, 2), align_corners=False),
    "max_pool3d": lambda m, x: m.nn.functional.max_pool3d(x.T(1, 2, 4, 4, 4).to(m.bfloat16), 2),
    "avg_pool3d": lambda m, x: m.nn.functional.avg_pool3d(x.T(1, 2, 4, 4, 4).to(m.bfloat16), 2),
    "adaptive_avg_pool3d": lambda m, x: m.nn.functional.adaptive_avg_pool3d(x.T(1, 2, 4, 4, 4).to(m.bfloat16), 2),
    "adaptive_max_pool3d": lambda m, x: m.nn.functional.adaptive_max_pool3d(x.T(1, 2, 4, 4, 4).to(m.bfloat16), 2),
    "ctc_loss": lambda m, x: m.nn.functional.ctc_loss(m.nn.functional.log_softmax(x.T(6, 2, 4), 2).to(m.bfloat16),
                                                      x.I(2, 3, high=3) + 1, (6, 5), (3, 2)),
    "fractional_max_pool2d": lambda m, x: m.nn.functional.fractional_max_pool2d(
        x.T(1, 2, 6, 6).to(m.bfloat16), 2, output_size=3, _random_samples=x.Z(1, 2, 2).to(m.bfloat16)),
    "fractional_max_pool3d": lambda m, x: m.nn.functional.fractional_max_pool3d(
        x.T(1, 2, 6, 6, 6).to(m.bfloat16), 2, output_size=3, _random_samples=x.Z(1, 2, 3).to(m.bfloat16)),
    "index_put": lambda m, x: x.T(4).index_put((x.I(2, high=4),), x.T(2)),
    "scatter_add": lambda m, x: x.T(3, 4).scatter_add(1, x.I(3, 2, high=4), x.T(3, 2)),
    "tensordot": lambda m, x: m.tensordot(x.T(3, 4), x.T(4, 5), dims=1),
    "binary_cross_entropy": lambda m, x: m.nn.functional.binary_cross_entropy(x.Z(4), x.Z(4)),
    "linalg_vecdot": lambda m, x: m.linalg.vecdot(x.T(3, 4), x.T(3, 4)),
    "scaled_dot_product_attention": lambda m, x: m.nn.functional.scaled_dot_product_attention(
        x.T(1, 2, 3, 4), x.T(1, 2, 3, 4), x.T(1, 2, 3, 4)),
    "trace": lambda m, x: m.trace(x.T(4, 4)),
    "huber_loss": lambda m, x: m.nn.functional.huber_loss(x.T(4), x.T(4)),
    "cat": lambda m, x: m.cat([x.T(2), x.T(2).to(m.bfloat16)]),
    "stack": lambda m, x: m.stack([x.T(2), x.T(2).to(m.bfloat16)]),
    "index_copy": lambda m, x: x.T(4, 3).index_copy(0, m.tensor([2, 0]), x.T(2, 3).to(m.bfloat16)),
    # spatial ops (ops/spatial.cpp)
    "reflection_pad1d": lambda m, x: m.nn.functional.pad(x.T(2, 5), (2, 2), mode="reflect"),
    "reflection_pad2d": lambda m, x: m.nn.functional.pad(x.T(1, 3, 4), (1, 1, 2, 0), mode="reflect"),
    "replication_pad1d": lambda m, x: m.nn.functional.pad(x.T(2, 5), (2, 1), mode="replicate"),
    "replication_pad2d": lambda m, x: m.nn.functional.pad(x.T(1, 3, 4), (1, 1, 2, 0), mode="replicate"),
    "replication_pad3d": lambda m, x: m.nn.functional.pad(x.T(1, 2, 3, 4), (1, 1, 2, 0, 1, 1), mode="replicate"),
    "max_unpool2d": lambda m, x: m.nn.functional.max_unpool2d(x.T(1, 2, 2, 2), x.I(1, 2, 2, 2, high=16), 2),
    "max_unpool3d": lambda m, x: m.nn.functional.max_unpool3d(x.T(1, 1, 2, 2, 2), x.I(1, 1, 2, 2, 2, high=64), 2),
}


def _listed_and_implemented():
    names = {row[0] for row in _C._op_table()}
    out = []
    for lst in (L.CUDA_LOWER, L.CUDA_FP32, L.CUDA_PROMOTE, L.CUDA_BANNED, L.CPU_LOWER, L.CPU_FP32, L.CPU_PROMOTE):
        for n in lst:
            n = L.ALIASES.get(n, n)
            if n in names and n not in out:
                out.append(n)
    return out


# Rows of the op table (policy data) whose Python functions do not exist yet.
NOT_YET = set()


def test_every_listed_op_has_a_case():
    missing = [n for n in _listed_and_implemented() if n not in CASES and n not in NOT_YET]
    assert not missing, f"listed ops ampgrad implements without a dtype case: {missing}"
    # When one of these lands, its case below starts to run: take it off the list.
    assert not [n for n in NOT_YET if hasattr(ag.nn.functional, n)]


def _flat(r):
    return [t for x in r for t in _flat(x)] if isinstance(r, (tuple, list)) else [r]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", sorted(set(CASES) - NOT_YET))
def test_cpu_autocast_dtype_and_values_match_torch(name, dtype):
    seed = sum(map(ord, name))
    try:
        with torch.autocast("cpu", dtype=getattr(torch, dtype)):
            ref = _flat(CASES[name](torch, Inputs(torch, seed)))
    except RuntimeError as e:
        if name == "mkldnn_rnn_layer" and dtype == "float16":
            pytest.skip("torch's oneDNN LSTM has no float16 primitive on this CPU (ampgrad computes it)")
        with pytest.raises(RuntimeError):
            with ag.autocast("cpu", dtype=getattr(ag, dtype)):
                CASES[name](ag, Inputs(ag, seed))
        pytest.skip(f"torch refuses: {str(e)[:60]}")
    with ag.autocast("cpu", dtype=getattr(ag, dtype)):
        out = _flat(CASES[name](ag, Inputs(ag, seed)))
    assert len(out) == len(ref)
    for o, r in zip(out, ref):
        assert str(o.dtype).split(".")[-1] == str(r.dtype).split(".")[-1], f"{name}: {o.dtype} vs torch {r.dtype}"
        rd = r.detach().double().numpy()
        np.testing.assert_allclose(o.detach().double().numpy(), rd, rtol=3e-2, atol=3e-2 * max(1.0, np.abs(rd).max()))
