"""nn additions against torch (tests for engineer nnmods' work): MultiheadAttention and the Transformer family,
nn.utils (weight_norm, spectral_norm, parametrize, stateless, fusion, ...), instance_norm / local_response_norm /
embedding_bag, new activations and losses, lazy modules. Outputs and parameter gradients with copied weights,
state_dict keys, error types."""
import copy
import math
import warnings

import numpy as np
import pytest

import ampgrad
import ampgrad.nn as nn
import ampgrad.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def np_of(t):
    return t.detach().double().numpy()


def assert_close(a, t, rtol=1e-5, atol=1e-5, what=""):
    a, t = np_of(a), np_of(t)
    assert a.shape == t.shape, f"{what}: shape {a.shape} != {t.shape}"
    np.testing.assert_allclose(a, t, rtol=rtol, atol=atol, err_msg=what)


def pair(rng, *shape, grad=True, dtype=np.float32, lo=None, hi=None):
    x = rng.standard_normal(shape) if lo is None else rng.uniform(lo, hi, shape)
    x = np.asarray(x, dtype=dtype)
    return ampgrad.tensor(x, requires_grad=grad), torch.tensor(x, requires_grad=grad)


def tpair(arr):
    arr = np.asarray(arr)
    return ampgrad.tensor(arr), torch.tensor(arr)


def module_pair(make, seed=0):
    """make(lib) for ampgrad.nn and torch.nn; the ampgrad copy gets torch's weights; state_dict keys equal."""
    torch.manual_seed(seed)
    tm = make(torch.nn)
    am = make(nn)
    assert list(am.state_dict().keys()) == list(tm.state_dict().keys())
    am.load_state_dict(tm.state_dict())
    return am, tm


def run_compare(am, tm, a_in, t_in, rng, rtol=1e-4, atol=1e-5, out_index=None, **kw):
    """Forward both modules; compare outputs, then input and parameter gradients."""
    oa, ot = am(*a_in, **kw.get("a_kw", {})), tm(*t_in, **kw.get("t_kw", {}))
    outs_a = oa if isinstance(oa, tuple) else (oa,)
    outs_t = ot if isinstance(ot, tuple) else (ot,)
    assert len(outs_a) == len(outs_t)
    ga, gt = [], []
    for x, y in zip(outs_a, outs_t):
        if y is None:
            assert x is None
            continue
        assert_close(x, y, rtol, atol, "forward")
        if y.requires_grad:
            g = np.asarray(rng.standard_normal(tuple(y.shape)), np.float32)
            ga.append((x, ampgrad.tensor(g)))
            gt.append((y, torch.tensor(g)))
    if gt:
        ampgrad.autograd.backward([x for x, _ in ga], [g for _, g in ga])
        torch.autograd.backward([y for y, _ in gt], [g for _, g in gt])
        for xa, xt in zip(a_in, t_in):
            if isinstance(xt, torch.Tensor) and xt.grad is not None:
                assert_close(xa.grad, xt.grad, rtol, atol, "input grad")
        pa, pt = dict(am.named_parameters()), dict(tm.named_parameters())
        assert pa.keys() == pt.keys()
        for k in pt:
            if pt[k].grad is None:
                assert pa[k].grad is None or not np.any(np_of(pa[k].grad)), k
            else:
                assert pa[k].grad is not None, k
                assert_close(pa[k].grad, pt[k].grad, rtol, atol, f"grad of {k}")
    return oa, ot


# ---------------------------------------------------------------- MultiheadAttention
MHA_CASES = [
    dict(),
    dict(bias=False),
    dict(add_bias_kv=True),
    dict(add_zero_attn=True),
    dict(add_bias_kv=True, add_zero_attn=True),
    dict(kdim=5, vdim=3),
    dict(batch_first=True),
    dict(kdim=6, vdim=7, batch_first=True, bias=False),
]


@pytest.mark.parametrize("kw", MHA_CASES, ids=[str(k) for k in MHA_CASES])
@pytest.mark.parametrize("need_weights,average", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("mask", ["none", "kpm_bool", "kpm_float", "attn_bool2", "attn_float3", "both"])
def test_multihead_attention(kw, need_weights, average, mask):
    rng = np.random.default_rng(0)
    E, H, L, S, N = 8, 2, 4, 5, 3
    am, tm = module_pair(lambda n: n.MultiheadAttention(E, H, **kw))
    kd, vd = kw.get("kdim", E), kw.get("vdim", E)
    bf = kw.get("batch_first", False)
    shp = (lambda s, d: (N, s, d)) if bf else (lambda s, d: (s, N, d))
    q = pair(rng, *shp(L, E))
    k = pair(rng, *shp(S, kd))
    v = pair(rng, *shp(S, vd))
    extra = 1 if kw.get("add_bias_kv") else 0
    a_kw, t_kw = dict(need_weights=need_weights, average_attn_weights=average), {}
    kpm_b = rng.random((N, S)) < 0.3
    kpm_b[:, 0] = False
    attn_b = rng.random((L, S)) < 0.3
    attn_b[:, 0] = False
    if mask in ("kpm_bool", "both"):
        a_kw["key_padding_mask"], t_kw["key_padding_mask"] = tpair(kpm_b)
    if mask == "kpm_float":
        a_kw["key_padding_mask"], t_kw["key_padding_mask"] = tpair(np.where(kpm_b, -1.5, 0.25).astype(np.float32))
    if mask in ("attn_bool2", "both"):
        a_kw["attn_mask"], t_kw["attn_mask"] = tpair(attn_b)
    if mask == "attn_float3":
        a_kw["attn_mask"], t_kw["attn_mask"] = tpair(rng.standard_normal((N * H, L, S)).astype(np.float32))
    t_kw = {**a_kw, **{k2: v2 for k2, v2 in t_kw.items()}}
    a_kw = {k2: v2 for k2, v2 in a_kw.items()}
    for key in ("key_padding_mask", "attn_mask"):
        if key in a_kw:
            a_kw[key] = a_kw[key]
    del extra
    run_compare(am, tm, [q[0], k[0], v[0]], [q[1], k[1], v[1]], rng, a_kw=a_kw, t_kw=t_kw)


def test_mha_self_attention_unbatched_and_causal():
    rng = np.random.default_rng(1)
    am, tm = module_pair(lambda n: n.MultiheadAttention(6, 3))
    x = pair(rng, 5, 6)
    run_compare(am, tm, [x[0], x[0], x[0]], [x[1], x[1], x[1]], rng)
    mask_a = nn.Transformer.generate_square_subsequent_mask(5)
    mask_t = torch.nn.Transformer.generate_square_subsequent_mask(5)
    assert_close(mask_a, mask_t)
    for nw in (True, False):
        x = pair(rng, 5, 2, 6)
        run_compare(am, tm, [x[0], x[0], x[0]], [x[1], x[1], x[1]], rng,
                    a_kw=dict(attn_mask=mask_a, is_causal=True, need_weights=nw),
                    t_kw=dict(attn_mask=mask_t, is_causal=True, need_weights=nw))
    # unbatched with a 3-D mask and 1-D key_padding_mask
    x = pair(rng, 5, 6)
    m = rng.standard_normal((3, 5, 5)).astype(np.float32)
    kp = np.array([0.0, 0.0, -np.inf, 0.0, -1.0], np.float32)
    run_compare(am, tm, [x[0], x[0], x[0]], [x[1], x[1], x[1]], rng,
                a_kw=dict(attn_mask=ampgrad.tensor(m), key_padding_mask=ampgrad.tensor(kp)),
                t_kw=dict(attn_mask=torch.tensor(m), key_padding_mask=torch.tensor(kp)))


def test_mha_errors_and_layout():
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(7, 2)
    with pytest.raises(ValueError, match="must be greater than 0"):
        nn.MultiheadAttention(0, 2)
    m = nn.MultiheadAttention(4, 2)
    assert type(m.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
    assert isinstance(m.out_proj, nn.Linear)
    q = ampgrad.randn(3, 2, 4)
    with pytest.raises(AssertionError, match="expected `key` and `value` to be 3-D"):
        m(q, ampgrad.randn(3, 4), ampgrad.randn(3, 4))
    with pytest.raises(AssertionError, match="query should be unbatched 2D or batched 3D"):
        m(ampgrad.randn(4), ampgrad.randn(4), ampgrad.randn(4))
    with pytest.raises(RuntimeError, match="The shape of the 2D attn_mask"):
        m(q, q, q, attn_mask=ampgrad.zeros(2, 2))
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        m(q, q, q, is_causal=True)
    with pytest.raises(AssertionError, match="only bool and floating types of key_padding_mask"):
        m(q, q, q, key_padding_mask=ampgrad.zeros(2, 3, dtype=ampgrad.int64))
    with pytest.raises(AssertionError, match="was expecting embedding dimension of 4, but got 5"):
        F.multi_head_attention_forward(ampgrad.randn(3, 2, 5), ampgrad.randn(3, 2, 5), ampgrad.randn(3, 2, 5), 4, 2,
                                       m.in_proj_weight, m.in_proj_bias, None, None, False, 0.0,
                                       m.out_proj.weight, m.out_proj.bias)


def test_mha_functional_matches_torch():
    rng = np.random.default_rng(2)
    E, H = 6, 2
    w = pair(rng, 3 * E, E)
    b = pair(rng, 3 * E)
    ow = pair(rng, E, E)
    ob = pair(rng, E)
    q = pair(rng, 4, 2, E)
    k = pair(rng, 5, 2, E)
    for need in (True, False):
        outs = []
        for lib, i in ((F, 0), (TF, 1)):
            outs.append(lib.multi_head_attention_forward(q[i], k[i], k[i], E, H, w[i], b[i], None, None, False, 0.0,
                                                         ow[i], ob[i], need_weights=need))
        assert_close(outs[0][0], outs[1][0])
        if need:
            assert_close(outs[0][1], outs[1][1])
        else:
            assert outs[0][1] is None


# ---------------------------------------------------------------- Transformer family
@pytest.mark.parametrize("kw", [dict(), dict(norm_first=True), dict(activation="gelu", batch_first=True),
                                dict(bias=False), dict(activation=lambda x: x.sigmoid() * x)],
                         ids=["default", "norm_first", "gelu_bf", "nobias", "callable"])
def test_transformer_layers(kw):
    rng = np.random.default_rng(3)
    d, h, ff = 8, 2, 16
    bf = kw.get("batch_first", False)
    akw = dict(kw)
    tkw = dict(kw)
    if callable(kw.get("activation")):
        tkw["activation"] = lambda x: x.sigmoid() * x
    src = pair(rng, *((2, 5, d) if bf else (5, 2, d)))
    tgt = pair(rng, *((2, 4, d) if bf else (4, 2, d)))
    am, tm = module_pair(lambda n: n.TransformerEncoderLayer(d, h, ff, dropout=0.0, **(akw if n is nn else tkw)))
    kpm = np.zeros((2, 5), bool)
    kpm[1, 3:] = True
    run_compare(am, tm, [src[0]], [src[1]], rng, a_kw=dict(src_key_padding_mask=ampgrad.tensor(kpm)),
                t_kw=dict(src_key_padding_mask=torch.tensor(kpm)))
    am, tm = module_pair(lambda n: n.TransformerDecoderLayer(d, h, ff, dropout=0.0, **(akw if n is nn else tkw)))
    mem = pair(rng, *((2, 5, d) if bf else (5, 2, d)))
    run_compare(am, tm, [tgt[0], mem[0]], [tgt[1], mem[1]], rng,
                a_kw=dict(tgt_mask=nn.Transformer.generate_square_subsequent_mask(4), tgt_is_causal=True,
                          memory_key_padding_mask=ampgrad.tensor(kpm)),
                t_kw=dict(tgt_mask=torch.nn.Transformer.generate_square_subsequent_mask(4), tgt_is_causal=True,
                          memory_key_padding_mask=torch.tensor(kpm)))


@pytest.mark.filterwarnings("ignore:enable_nested_tensor")
def test_transformer_full_model():
    rng = np.random.default_rng(4)
    make = lambda n: n.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2,  # noqa: E731
                                   dim_feedforward=12, dropout=0.0)
    am, tm = module_pair(make)
    src, tgt = pair(rng, 6, 2, 8), pair(rng, 4, 2, 8)
    ma = nn.Transformer.generate_square_subsequent_mask(4)
    mt = torch.nn.Transformer.generate_square_subsequent_mask(4)
    run_compare(am, tm, [src[0], tgt[0]], [src[1], tgt[1]], rng, a_kw=dict(tgt_mask=ma), t_kw=dict(tgt_mask=mt))
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        am(ampgrad.randn(6, 2, 8), ampgrad.randn(4, 3, 8))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to d_model"):
        am(ampgrad.randn(6, 2, 7), ampgrad.randn(4, 2, 7))
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")


def test_transformer_encoder_stack():
    rng = np.random.default_rng(5)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        am, tm = module_pair(lambda n: n.TransformerEncoder(n.TransformerEncoderLayer(8, 2, 16, dropout=0.0), 3,
                                                            n.LayerNorm(8), enable_nested_tensor=True))
    assert any("enable_nested_tensor is True" in str(x.message) for x in w)
    assert am.use_nested_tensor is False and tm.use_nested_tensor is False
    src = pair(rng, 5, 2, 8)
    mask = np.triu(np.full((5, 5), -np.inf, np.float32), 1)
    run_compare(am, tm, [src[0]], [src[1]], rng, a_kw=dict(mask=ampgrad.tensor(mask)),
                t_kw=dict(mask=torch.tensor(mask)))
    am, tm = module_pair(lambda n: n.TransformerDecoder(n.TransformerDecoderLayer(8, 2, 16, dropout=0.0,
                                                                                  norm_first=True), 2))
    tgt, mem = pair(rng, 3, 2, 8), pair(rng, 5, 2, 8)
    run_compare(am, tm, [tgt[0], mem[0]], [tgt[1], mem[1]], rng)
