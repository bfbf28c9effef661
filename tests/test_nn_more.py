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


# ---------------------------------------------------------------- nn.utils: weight_norm / spectral_norm / parametrize
@pytest.mark.filterwarnings("ignore:`torch.nn.utils.weight_norm` is deprecated")
@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_hook(dim):
    rng = np.random.default_rng(6)
    am, tm = nn.Linear(5, 4), torch.nn.Linear(5, 4)
    am.load_state_dict(tm.state_dict())
    am = nn.utils.weight_norm(am, dim=dim)
    tm = torch.nn.utils.weight_norm(tm, dim=dim)
    assert list(am.state_dict()) == list(tm.state_dict()) == ["bias", "weight_g", "weight_v"]
    assert_close(am.weight_g, tm.weight_g)
    x = pair(rng, 3, 5)
    run_compare(am, tm, [x[0]], [x[1]], rng)
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
        nn.utils.weight_norm(am, dim=dim)
    nn.utils.remove_weight_norm(am)
    torch.nn.utils.remove_weight_norm(tm)
    assert list(am.state_dict()) == list(tm.state_dict())
    assert_close(am.weight, tm.weight)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found in"):
        nn.utils.remove_weight_norm(am)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_parametrizations_weight_norm(dim):
    rng = np.random.default_rng(7)
    am, tm = nn.Conv1d(3, 4, 2), torch.nn.Conv1d(3, 4, 2)
    am.load_state_dict(tm.state_dict())
    am = nn.utils.parametrizations.weight_norm(am, dim=dim)
    tm = torch.nn.utils.parametrizations.weight_norm(tm, dim=dim)
    assert list(am.state_dict()) == list(tm.state_dict())
    assert "parametrizations.weight.original0" in am.state_dict()
    assert type(am).__name__ == "ParametrizedConv1d"
    assert_close(am.parametrizations.weight.original0, tm.parametrizations.weight.original0)
    x = pair(rng, 2, 3, 6)
    run_compare(am, tm, [x[0]], [x[1]], rng)
    # assigning to the parametrized tensor runs right_inverse
    w = rng.standard_normal((4, 3, 2)).astype(np.float32)
    with torch.no_grad():
        tm.weight = torch.tensor(w)
    am.weight = ampgrad.tensor(w)
    assert_close(am.parametrizations.weight.original0, tm.parametrizations.weight.original0)
    assert_close(am.weight, tm.weight)
    nn.utils.parametrize.remove_parametrizations(am, "weight")
    torch.nn.utils.parametrize.remove_parametrizations(tm, "weight")
    assert type(am) is nn.Conv1d
    assert list(am.state_dict()) == list(tm.state_dict())
    assert_close(am.weight, tm.weight)


@pytest.mark.parametrize("new_api", [False, True])
@pytest.mark.parametrize("conv_t", [False, True])
def test_spectral_norm(new_api, conv_t):
    rng = np.random.default_rng(8)
    make = (lambda n: n.ConvTranspose2d(3, 4, 2)) if conv_t else (lambda n: n.Linear(6, 5))
    am, tm = module_pair(make)
    if new_api:
        am = nn.utils.parametrizations.spectral_norm(am)
        tm = torch.nn.utils.parametrizations.spectral_norm(tm)
    else:
        am = nn.utils.spectral_norm(am)
        tm = torch.nn.utils.spectral_norm(tm)
    assert list(am.state_dict()) == list(tm.state_dict())
    am.load_state_dict(tm.state_dict())  # the random u, v
    shape = (2, 3, 4, 4) if conv_t else (3, 6)
    for training in (True, True, False):
        am.train(training)
        tm.train(training)
        x = pair(rng, *shape)
        run_compare(am, tm, [x[0]], [x[1]], rng)
        for k, v in tm.state_dict().items():
            assert_close(am.state_dict()[k], v, what=k)
        for p in list(am.parameters()) + list(tm.parameters()):
            p.grad = None
    if new_api:
        nn.utils.parametrize.remove_parametrizations(am, "weight")
        torch.nn.utils.parametrize.remove_parametrizations(tm, "weight")
    else:
        nn.utils.remove_spectral_norm(am)
        torch.nn.utils.remove_spectral_norm(tm)
        with pytest.raises(ValueError, match="spectral_norm of 'weight' not found"):
            nn.utils.remove_spectral_norm(am)
    assert list(am.state_dict()) == list(tm.state_dict())
    assert_close(am.weight, tm.weight)
    with pytest.raises(ValueError, match="Expected n_power_iterations to be positive"):
        nn.utils.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)


class _Symmetric:
    @staticmethod
    def make(lib):
        class Symmetric(lib.nn.Module):
            def forward(self, X):
                return X.triu() + X.triu(1).transpose(-1, -2)

            def right_inverse(self, A):
                return A.triu()
        return Symmetric


def test_register_parametrization_chain_cache_and_errors():
    rng = np.random.default_rng(9)
    SymA, SymT = _Symmetric.make(ampgrad), _Symmetric.make(torch)

    class ScaleA(nn.Module):
        def forward(self, X):
            return X * 2.0

    class ScaleT(torch.nn.Module):
        def forward(self, X):
            return X * 2.0

    am, tm = module_pair(lambda n: n.Linear(4, 4))
    P, TP = nn.utils.parametrize, torch.nn.utils.parametrize
    P.register_parametrization(am, "weight", SymA())
    TP.register_parametrization(tm, "weight", SymT())
    P.register_parametrization(am, "weight", ScaleA())
    TP.register_parametrization(tm, "weight", ScaleT())
    assert P.is_parametrized(am) and P.is_parametrized(am, "weight") and not P.is_parametrized(am, "bias")
    assert P.type_before_parametrizations(am) is nn.Linear
    assert list(am.state_dict()) == list(tm.state_dict())
    assert_close(am.weight, tm.weight)
    x = pair(rng, 3, 4)
    run_compare(am, tm, [x[0]], [x[1]], rng)
    with P.cached():
        w1 = am.weight
        assert am.weight is w1
    assert am.weight is not w1
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized element"):
        P.register_parametrization(am, "nope", SymA())
    with pytest.raises(ValueError, match="may not change the shape"):
        class Bad(nn.Module):
            def forward(self, X):
                return X[:2]
        P.register_parametrization(nn.Linear(3, 3), "weight", Bad())
    with pytest.raises(RuntimeError, match="does not implement right_inverse"):
        am.weight = ampgrad.zeros(4, 4)
    P.remove_parametrizations(am, "weight", leave_parametrized=False)
    TP.remove_parametrizations(tm, "weight", leave_parametrized=False)
    assert_close(am.weight, tm.weight)
    assert type(am) is nn.Linear and not P.is_parametrized(am)
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        P.remove_parametrizations(am, "weight")


@pytest.mark.filterwarnings("ignore:`torch.nn.utils.stateless.functional_call` is deprecated")
def test_functional_call_and_fusion():
    rng = np.random.default_rng(10)
    am, tm = module_pair(lambda n: n.Linear(3, 2))
    w = rng.standard_normal((2, 3)).astype(np.float32)
    x = pair(rng, 4, 3)
    ya = nn.utils.stateless.functional_call(am, {"weight": ampgrad.tensor(w)}, (x[0],))
    yt = torch.nn.utils.stateless.functional_call(tm, {"weight": torch.tensor(w)}, (x[1],))
    assert_close(ya, yt)
    # conv + bn
    def make(n):
        s = n.Sequential(n.Conv2d(3, 4, 3), n.BatchNorm2d(4))
        return s
    am, tm = module_pair(make)
    for m in (tm,):
        m[1].running_mean.uniform_(-1, 1)
        m[1].running_var.uniform_(0.5, 2)
        m[1].weight.data.uniform_(0.5, 2)
        m[1].bias.data.uniform_(-1, 1)
    am.load_state_dict(tm.state_dict())
    am.eval()
    tm.eval()
    fa = nn.utils.fuse_conv_bn_eval(am[0], am[1])
    ft = torch.nn.utils.fuse_conv_bn_eval(tm[0], tm[1])
    assert_close(fa.weight, ft.weight)
    assert_close(fa.bias, ft.bias)
    x = pair(rng, 2, 3, 5, 5, grad=False)
    assert_close(fa(x[0]), am(x[0]), rtol=1e-4, atol=1e-5)
    assert_close(fa(x[0]), ft(x[1]), rtol=1e-4, atol=1e-5)
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        nn.utils.fuse_conv_bn_eval(nn.Conv2d(1, 1, 1), nn.BatchNorm2d(1))
    # linear + bn
    am, tm = module_pair(lambda n: n.Sequential(n.Linear(3, 4), n.BatchNorm1d(4)))
    tm[1].running_mean.uniform_(-1, 1)
    tm[1].running_var.uniform_(0.5, 2)
    am.load_state_dict(tm.state_dict())
    am.eval()
    tm.eval()
    fa = nn.utils.fusion.fuse_linear_bn_eval(am[0], am[1])
    ft = torch.nn.utils.fusion.fuse_linear_bn_eval(tm[0], tm[1])
    assert_close(fa.weight, ft.weight)
    assert_close(fa.bias, ft.bias)
    with pytest.raises(AssertionError, match="To fuse, linear.out_features == bn.num_features"):
        nn.utils.fusion.fuse_linear_bn_eval(nn.Linear(3, 4).eval(), nn.BatchNorm1d(3).eval())


def test_misc_utils_and_modules():
    m = nn.utils.skip_init(nn.Linear, 3, 4)
    assert type(m) is nn.Linear and tuple(m.weight.shape) == (4, 3)
    with pytest.raises(RuntimeError, match="Expected a Module"):
        nn.utils.skip_init(int, 3)
    m = nn.Sequential(nn.Conv2d(2, 3, 3), nn.Conv3d(2, 2, 1))
    w = m[0].weight.detach().clone()
    assert nn.utils.convert_conv2d_weight_memory_format(m, None) is m
    assert_close(m[0].weight, w)
    with pytest.warns(FutureWarning, match="nn.Container` is deprecated"):
        c = nn.Container(a=nn.Linear(2, 2))
    assert "a.weight" in c.state_dict()
    # SyncBatchNorm: BatchNorm on one process
    am, tm = module_pair(lambda n: n.SyncBatchNorm(3))
    rng = np.random.default_rng(11)
    x = pair(rng, 4, 3, 5)
    run_compare(am, tm, [x[0]], [x[1]], rng)
    assert_close(am.running_mean, tm.running_mean)
    with pytest.raises(ValueError, match="expected at least 2D input"):
        am(ampgrad.randn(3))
    seq = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    conv = nn.SyncBatchNorm.convert_sync_batchnorm(seq)
    assert type(conv[1]) is nn.SyncBatchNorm and conv[1].weight is seq[1].weight
    # DataParallel: the module under "module."
    am, tm = module_pair(lambda n: n.DataParallel(n.Linear(3, 2)))
    x = pair(rng, 4, 3)
    run_compare(am, tm, [x[0]], [x[1]], rng)


def test_init_additions():
    ampgrad.manual_seed(0)
    w = ampgrad.empty(10, 6)
    nn.init.sparse_(w, 0.3)
    zeros = (w == 0).sum(0)
    assert all(int(z) == 3 for z in zeros)
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        nn.init.sparse_(ampgrad.empty(3), 0.1)
    for shape, groups in (((4, 2, 3), 1), ((4, 2, 3, 3), 2), ((2, 2, 1, 3, 3), 1)):
        a, t = ampgrad.empty(*shape), torch.empty(*shape)
        nn.init.dirac_(a, groups)
        torch.nn.init.dirac_(t, groups)
        assert_close(a, t)
    a, t = ampgrad.empty(3, 5), torch.empty(3, 5)
    assert_close(nn.init.eye_(a), torch.nn.init.eye_(t))


# ---------------------------------------------------------------- normalisation
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("affine,track", [(False, False), (True, False), (True, True), (False, True)])
def test_instance_norm_modules(nd, affine, track):
    rng = np.random.default_rng(12)
    cls = f"InstanceNorm{nd}d"
    am, tm = module_pair(lambda n: getattr(n, cls)(3, affine=affine, track_running_stats=track, momentum=0.3))
    shape = (2, 3) + (4, 5, 3)[:nd]
    for training in (True, False):
        am.train(training)
        tm.train(training)
        x = pair(rng, *shape)
        run_compare(am, tm, [x[0]], [x[1]], rng, rtol=1e-4, atol=1e-4)
        for k, v in tm.state_dict().items():
            assert_close(am.state_dict()[k], v, rtol=1e-5, atol=1e-6, what=k)
        # unbatched
        x = pair(rng, *shape[1:])
        run_compare(am, tm, [x[0]], [x[1]], rng, rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match=r"expected .*D input"):
        am(ampgrad.randn(*((2,) * (nd + 3))))
    if affine:
        with pytest.raises(ValueError, match="to match num_features"):
            am(ampgrad.randn(*((2, 4) + (4,) * nd)))


def test_instance_norm_functional_and_errors():
    rng = np.random.default_rng(13)
    x = pair(rng, 2, 3, 6)
    w, b = pair(rng, 3), pair(rng, 3)
    rm_a, rm_t = ampgrad.zeros(3), torch.zeros(3)
    rv_a, rv_t = ampgrad.ones(3), torch.ones(3)
    ya = F.instance_norm(x[0], rm_a, rv_a, w[0], b[0], momentum=0.2)
    yt = TF.instance_norm(x[1], rm_t, rv_t, w[1], b[1], momentum=0.2)
    assert_close(ya, yt, 1e-4, 1e-5)
    assert_close(rm_a, rm_t)
    assert_close(rv_a, rv_t)
    with pytest.raises(ValueError, match="Expected more than 1 spatial element when training"):
        F.instance_norm(ampgrad.randn(2, 3, 1))


@pytest.mark.parametrize("shape,size", [((2, 5, 4), 3), ((2, 6, 3, 4), 2), ((1, 4, 2, 3, 3), 5)])
def test_local_response_norm(shape, size):
    rng = np.random.default_rng(14)
    am, tm = module_pair(lambda n: n.LocalResponseNorm(size, alpha=0.1, beta=0.8, k=1.5))
    x = pair(rng, *shape)
    run_compare(am, tm, [x[0]], [x[1]], rng)
    with pytest.raises(ValueError, match="Expected 3D or higher dimensionality input"):
        F.local_response_norm(ampgrad.randn(2, 3), 2)


@pytest.mark.parametrize("size", [2, 3, 5])
def test_cross_map_lrn2d(size):
    rng = np.random.default_rng(15)
    am, tm = module_pair(lambda n: n.CrossMapLRN2d(size, alpha=0.2, beta=0.7, k=1.2))
    x = pair(rng, 2, 6, 3, 4)
    run_compare(am, tm, [x[0]], [x[1]], rng)
    assert repr(am) == repr(tm)
    with pytest.raises(ValueError, match="CrossMapLRN2d: Expected input to be 4D, got 3D instead."):
        am(ampgrad.randn(2, 3, 4))


# ---------------------------------------------------------------- EmbeddingBag
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("variant", ["2d", "offsets", "last_offset", "padding", "psw", "empty_bag"])
def test_embedding_bag(mode, variant):
    rng = np.random.default_rng(16)
    kw = {}
    if variant == "padding":
        kw["padding_idx"] = 2
    if variant == "last_offset":
        kw["include_last_offset"] = True
    am, tm = module_pair(lambda n: n.EmbeddingBag(7, 3, mode=mode, **kw))
    assert repr(am) == repr(tm)
    if variant == "2d":
        idx = rng.integers(0, 7, (3, 4))
        offs = None
    else:
        idx = np.array([1, 2, 4, 5, 4, 3, 2, 2, 6])
        offs = {"last_offset": [0, 2, 5, 9], "empty_bag": [0, 2, 2, 6]}.get(variant, [0, 3, 4])
    a_args, t_args = [ampgrad.tensor(idx)], [torch.tensor(idx)]
    a_kw, t_kw = {}, {}
    if offs is not None:
        a_kw["offsets"], t_kw["offsets"] = ampgrad.tensor(offs), torch.tensor(offs)
    if variant == "psw":
        if mode != "sum":
            with pytest.raises(NotImplementedError, match="per_sample_weights is only supported for mode='sum'"):
                am(*a_args, per_sample_weights=ampgrad.ones(len(idx)), **a_kw)
            return
        p = pair(rng, len(idx))
        a_args.append(p[0])
        t_args.append(p[1])
        a_kw["per_sample_weights"] = a_args.pop()
        t_kw["per_sample_weights"] = t_args.pop()
    run_compare(am, tm, a_args, t_args, rng, a_kw=a_kw, t_kw=t_kw)
    if variant == "psw":
        assert_close(a_kw["per_sample_weights"].grad, t_kw["per_sample_weights"].grad)


def test_embedding_bag_errors():
    w = ampgrad.randn(5, 2)
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        F.embedding_bag(ampgrad.tensor([1, 2]), w)
    with pytest.raises(ValueError, match="if input is 2D, then offsets has to be None"):
        F.embedding_bag(ampgrad.tensor([[1, 2]]), w, ampgrad.tensor([0]))
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        F.embedding_bag(ampgrad.tensor([[1, 2]]), w, mode="min")
    with pytest.raises(ValueError, match="weight has to be a 2D Tensor"):
        F.embedding_bag(ampgrad.tensor([[1, 2]]), ampgrad.randn(5))
    with pytest.raises(AssertionError, match="padding_idx must be within num_embeddings"):
        nn.EmbeddingBag(3, 2, padding_idx=3)


# ---------------------------------------------------------------- losses
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("var_shape", ["same", "last1", "dropped", "float"])
def test_gaussian_nll_loss(reduction, var_shape):
    rng = np.random.default_rng(17)
    x, t = pair(rng, 4, 3), pair(rng, 4, 3)
    if var_shape == "float":
        va, vt = 0.7, 0.7
    else:
        vshape = {"same": (4, 3), "last1": (4, 1), "dropped": (4,)}[var_shape]
        va, vt = pair(rng, *vshape, lo=0.0, hi=2.0)
    am, tm = module_pair(lambda n: n.GaussianNLLLoss(full=True, reduction=reduction))
    run_compare(am, tm, [x[0], t[0], va], [x[1], t[1], vt], rng)
    if not isinstance(va, float):
        assert_close(va.grad, vt.grad)
    with pytest.raises(ValueError, match="var is of incorrect size"):
        F.gaussian_nll_loss(ampgrad.randn(4, 3), ampgrad.randn(4, 3), ampgrad.ones(2))
    with pytest.raises(ValueError, match="var has negative entry"):
        F.gaussian_nll_loss(ampgrad.randn(4, 3), ampgrad.randn(4, 3), -ampgrad.ones(4, 3))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_multilabel_soft_margin_and_triplet_distance(reduction):
    rng = np.random.default_rng(18)
    x = pair(rng, 4, 5)
    tgt = tpair((rng.random((4, 5)) < 0.5).astype(np.float32))
    w = rng.random(5).astype(np.float32)
    am, tm = module_pair(lambda n: n.MultiLabelSoftMarginLoss(
        weight=(ampgrad.tensor(w) if n is nn else torch.tensor(w)), reduction=reduction))
    run_compare(am, tm, [x[0], tgt[0]], [x[1], tgt[1]], rng)
    a, p, n_ = pair(rng, 4, 3), pair(rng, 4, 3), pair(rng, 4, 3)
    for dist in (None, "cos"):
        for swap in (False, True):
            da = (lambda u, v: 1.0 - F.cosine_similarity(u, v)) if dist else None
            dt = (lambda u, v: 1.0 - TF.cosine_similarity(u, v)) if dist else None
            ma = nn.TripletMarginWithDistanceLoss(distance_function=da, margin=0.5, swap=swap, reduction=reduction)
            mt = torch.nn.TripletMarginWithDistanceLoss(distance_function=dt, margin=0.5, swap=swap,
                                                        reduction=reduction)
            for t_ in (a, p, n_):
                t_[0].grad = None
                t_[1].grad = None
            run_compare(ma, mt, [a[0], p[0], n_[0]], [a[1], p[1], n_[1]], rng)
    with pytest.raises(ValueError, match="margin must be greater than 0"):
        F.triplet_margin_with_distance_loss(a[0], p[0], n_[0], margin=0.0)
    with pytest.raises(RuntimeError, match="expected to have the same number of dimensions"):
        F.triplet_margin_with_distance_loss(a[0], p[0], ampgrad.randn(3))


def test_gumbel_softmax_and_feature_alpha_dropout():
    ampgrad.manual_seed(0)
    x = ampgrad.randn(64, 5, requires_grad=True)
    y = F.gumbel_softmax(x, tau=0.5)
    assert_close(y.sum(-1), torch.ones(64), 1e-5, 1e-5)
    yh = F.gumbel_softmax(x, hard=True)
    assert set(np.unique(yh.detach().numpy())) <= {0.0, 1.0}
    assert_close(yh.sum(-1), torch.ones(64))
    yh.sum().backward()
    assert x.grad is not None
    # feature_alpha_dropout: per (sample, channel), kept -> a * x + b_keep, dropped -> the SELU saturation a*(-alpha*...) point
    x = ampgrad.randn(50, 8, 6)
    y = F.feature_alpha_dropout(x, 0.3, training=True)
    alpha = 1.7580993408473766
    a = 1.0 / math.sqrt((alpha * alpha * 0.3 + 1) * 0.7)
    kept = np.isclose(y.numpy(), a * x.numpy() + alpha * a * 0.3, atol=1e-5).all(-1)
    dropped = np.isclose(y.numpy(), -alpha * a + alpha * a * 0.3, atol=1e-5).all(-1)
    assert (kept | dropped).all() and 0.15 < dropped.mean() < 0.45
    assert F.feature_alpha_dropout(x, 0.3, training=False) is x
    m = nn.FeatureAlphaDropout(0.2)
    assert repr(m) == repr(torch.nn.FeatureAlphaDropout(0.2))
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        nn.FeatureAlphaDropout(1.5)


def test_adaptive_log_softmax():
    rng = np.random.default_rng(19)
    am, tm = module_pair(lambda n: n.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0))
    x = pair(rng, 7, 8)
    tgt = np.array([0, 2, 3, 5, 6, 9, 1])
    oa = am(x[0], ampgrad.tensor(tgt))
    ot = tm(x[1], torch.tensor(tgt))
    assert_close(oa.output, ot.output)
    assert_close(oa.loss, ot.loss)
    oa.loss.backward()
    ot.loss.backward()
    pa, pt = dict(am.named_parameters()), dict(tm.named_parameters())
    for k in pt:
        assert_close(pa[k].grad, pt[k].grad, what=k)
    assert_close(x[0].grad, x[1].grad)
    assert_close(am.log_prob(x[0]), tm.log_prob(x[1]))
    assert_close(am.predict(x[0]), tm.predict(x[1]))
    with pytest.raises(ValueError, match="cutoffs should be a sequence of unique"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 10, [6, 3])
    with pytest.raises(RuntimeError, match="Target values should be in"):
        am(x[0], ampgrad.tensor([0, 1, 2, 3, 4, 5, 10]))


# ---------------------------------------------------------------- lazy modules
LAZY = [
    ("LazyLinear", lambda n: n.LazyLinear(3), (2, 5), "Linear"),
    ("LazyLinear-nobias", lambda n: n.LazyLinear(3, bias=False), (4, 2, 5), "Linear"),
    ("LazyConv1d", lambda n: n.LazyConv1d(4, 3, padding=1), (2, 3, 7), "Conv1d"),
    ("LazyConv2d", lambda n: n.LazyConv2d(4, 2, groups=2), (2, 6, 5, 5), "Conv2d"),
    ("LazyConv3d", lambda n: n.LazyConv3d(2, 2), (1, 2, 4, 4, 4), "Conv3d"),
    ("LazyConvTranspose1d", lambda n: n.LazyConvTranspose1d(4, 3, stride=2), (2, 3, 5), "ConvTranspose1d"),
    ("LazyConvTranspose2d", lambda n: n.LazyConvTranspose2d(4, 2), (2, 3, 4, 4), "ConvTranspose2d"),
    ("LazyConvTranspose3d", lambda n: n.LazyConvTranspose3d(2, 2), (1, 2, 3, 3, 3), "ConvTranspose3d"),
    ("LazyBatchNorm1d", lambda n: n.LazyBatchNorm1d(), (4, 3), "BatchNorm1d"),
    ("LazyBatchNorm2d", lambda n: n.LazyBatchNorm2d(momentum=0.2), (2, 3, 4, 4), "BatchNorm2d"),
    ("LazyBatchNorm3d", lambda n: n.LazyBatchNorm3d(affine=False), (2, 3, 2, 2, 2), "BatchNorm3d"),
    ("LazyInstanceNorm1d", lambda n: n.LazyInstanceNorm1d(affine=True, track_running_stats=True), (2, 3, 5),
     "InstanceNorm1d"),
    ("LazyInstanceNorm2d", lambda n: n.LazyInstanceNorm2d(), (2, 3, 4, 4), "InstanceNorm2d"),
    ("LazyInstanceNorm3d", lambda n: n.LazyInstanceNorm3d(affine=True), (2, 3, 2, 3, 2), "InstanceNorm3d"),
]


@pytest.mark.parametrize("name,make,shape,becomes", LAZY, ids=[c[0] for c in LAZY])
def test_lazy_modules(name, make, shape, becomes):
    rng = np.random.default_rng(20)
    am, tm = make(nn), make(torch.nn)
    assert repr(am) == repr(tm)
    assert am.has_uninitialized_params() and tm.has_uninitialized_params()
    assert list(am.state_dict()) == list(tm.state_dict())
    assert isinstance(am.weight if hasattr(am, "weight") and am.weight is not None else nn.UninitializedParameter(),
                      nn.UninitializedParameter)
    x = pair(rng, *shape)
    tm(x[1])  # materialize torch's, then copy its weights into ampgrad's (load_state_dict materializes)
    if "InstanceNorm" in name:  # (as torch: a loaded lazy InstanceNorm keeps num_features 0 and refuses the input)
        am(x[0].detach())
        am.train()
    am.load_state_dict(tm.state_dict())
    assert not getattr(am, "has_uninitialized_params", lambda: False)()
    run_compare(am, tm, [x[0]], [x[1]], rng, rtol=1e-4, atol=1e-5)
    assert type(am).__name__ == type(tm).__name__ == becomes
    assert list(am.state_dict()) == list(tm.state_dict())
    for k, v in tm.state_dict().items():
        assert_close(am.state_dict()[k], v, rtol=1e-5, atol=1e-6, what=k)


def test_lazy_forward_materializes_and_errors():
    torch_m = torch.nn.LazyLinear(4)
    m = nn.LazyLinear(4)
    y = m(ampgrad.randn(3, 6))
    assert type(m) is nn.Linear and m.in_features == 6 and tuple(m.weight.shape) == (4, 6)
    assert type(m.weight) is nn.Parameter and tuple(y.shape) == (3, 4)
    c = nn.LazyConv2d(4, 3)
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input to LazyConv2d"):
        c(ampgrad.randn(3, 5))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.LazyConv1d(4, 3, groups=2)(ampgrad.randn(1, 3, 5))
    b = nn.LazyBatchNorm1d()
    b(ampgrad.randn(4, 3))
    assert type(b) is nn.BatchNorm1d and type(b.running_mean) is ampgrad.Tensor
    assert repr(nn.UninitializedParameter()) == repr(torch.nn.UninitializedParameter())
    del torch_m


# ---------------------------------------------------------------- activations (engine ops)
ACTS = [
    ("Hardshrink", lambda n: n.Hardshrink(), "HardshrinkBackward0"),
    ("Hardshrink-1.2", lambda n: n.Hardshrink(1.2), "HardshrinkBackward0"),
    ("Softshrink", lambda n: n.Softshrink(0.7), "SoftshrinkBackward0"),
    ("Threshold", lambda n: n.Threshold(0.2, -3.0), "ThresholdBackward0"),
    ("RReLU-eval", lambda n: n.RReLU(0.1, 0.3).eval(), "RreluWithNoiseBackward0"),
    ("Softmax2d", lambda n: n.Softmax2d(), None),
]


@pytest.mark.parametrize("name,make,node", ACTS, ids=[a[0] for a in ACTS])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activation_modules(name, make, node, dtype):
    rng = np.random.default_rng(21)
    am, tm = module_pair(make)
    assert repr(am) == repr(tm)
    x = pair(rng, 3, 4, 5, dtype=dtype, lo=-3, hi=3)
    oa, ot = run_compare(am, tm, [x[0]], [x[1]], rng)
    if node:
        assert oa.grad_fn.name() == ot.grad_fn.name() == node


@pytest.mark.parametrize("fn,kw", [("hardshrink", {"lambd": 0.6}), ("softshrink", {"lambd": 0.6}),
                                   ("threshold", {"threshold": 0.1, "value": 2.0})])
def test_activation_double_backward_and_specials(fn, kw):
    rng = np.random.default_rng(22)
    x = pair(rng, 5, 6, lo=-2, hi=2)
    ya, yt = getattr(F, fn)(x[0], **kw), getattr(TF, fn)(x[1], **kw)
    ga = ampgrad.ones_like(ya, requires_grad=True)
    gt = torch.ones_like(yt, requires_grad=True)
    (dxa,) = ampgrad.autograd.grad(ya, x[0], ga, create_graph=True)
    (dxt,) = torch.autograd.grad(yt, x[1], gt, create_graph=True)
    assert_close(dxa, dxt)
    assert dxa.grad_fn.name() == dxt.grad_fn.name()
    (gga,) = ampgrad.autograd.grad((dxa * dxa).sum(), ga)
    (ggt,) = torch.autograd.grad((dxt * dxt).sum(), gt)
    assert_close(gga, ggt)
    sp = np.array([0.6, -0.6, 0.1, 0.0, -0.0, np.nan, np.inf, -np.inf, 0.61], np.float32)
    assert_close(getattr(F, fn)(ampgrad.tensor(sp), **kw), getattr(TF, fn)(torch.tensor(sp), **kw))
    for dt in (ampgrad.bfloat16, ampgrad.float16):
        tdt = getattr(torch, str(dt).split(".")[-1])
        xa = ampgrad.tensor(sp).to(dt)
        assert_close(getattr(F, fn)(xa, **kw).float(), getattr(TF, fn)(torch.tensor(sp).to(tdt), **kw).float())


def test_activation_errors_inplace_and_int():
    with pytest.raises(RuntimeError, match=r"lambda must be in range \[0, 3.40282e\+38\] for input dtype Float, but "
                                           r"found -0.5"):
        F.softshrink(ampgrad.randn(3), -0.5)
    for f, tf, msg in ((F.hardshrink, TF.hardshrink, "hardshrink_cpu"), (F.softshrink, TF.softshrink, "softshrink_check")):
        with pytest.raises(NotImplementedError, match=msg):
            f(ampgrad.tensor([1, 2]))
        with pytest.raises(NotImplementedError, match=msg):
            tf(torch.tensor([1, 2]))
    with pytest.raises(NotImplementedError, match="threshold_cpu"):
        F.threshold(ampgrad.tensor([True]), 0.5, 0.0)
    assert_close(F.threshold(ampgrad.tensor([1, 2, 3, -1]), -1.5, 7), TF.threshold(torch.tensor([1, 2, 3, -1]), -1.5, 7))
    # in place
    rng = np.random.default_rng(23)
    x = pair(rng, 4, 5)
    ya = F.threshold(x[0] * 1.0, 0.1, 5.0, inplace=True)
    yt = TF.threshold(x[1] * 1.0, 0.1, 5.0, inplace=True)
    assert ya.grad_fn.name() == yt.grad_fn.name() == "ThresholdBackward1"
    assert_close(ya, yt)
    ya.sum().backward()
    yt.sum().backward()
    assert_close(x[0].grad, x[1].grad)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        F.threshold_(x[0], 0.0, 0.0)
    t = ampgrad.tensor([-1.0, 2.0])
    F.rrelu_(t, 0.2, 0.4)
    assert_close(t, torch.tensor([-0.3, 2.0]))
    assert F.threshold_(t, 0.0, 9.0) is t
    assert_close(t, torch.tensor([9.0, 2.0]))


def test_rrelu_training():
    ampgrad.manual_seed(0)
    x = ampgrad.randn(2000, requires_grad=True)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    assert y.grad_fn.name() == "RreluWithNoiseBackward0"
    xn, yn = x.detach().numpy(), y.detach().numpy()
    pos = xn > 0
    np.testing.assert_array_equal(yn[pos], xn[pos])
    slope = yn[~pos] / xn[~pos]
    assert slope.min() >= 0.1 - 1e-6 and slope.max() <= 0.3 + 1e-6 and slope.std() > 0.04
    assert abs(slope.mean() - 0.2) < 0.01
    y.backward(ampgrad.ones_like(y))
    g = x.grad.numpy()
    np.testing.assert_allclose(g[~pos], slope, rtol=1e-5)
    np.testing.assert_array_equal(g[pos], 1.0)
    m = nn.RReLU(0.1, 0.3)
    out = m(ampgrad.full((50,), -1.0))
    assert out.numpy().std() > 0
    with pytest.raises(NotImplementedError, match="rrelu_with_noise_out_cpu"):
        F.rrelu(ampgrad.tensor([1, 2]), training=True)


@pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")
def test_transformer_encoder_inference_nested_path():
    # torch's eval/no-grad path with a left-aligned key padding mask returns zeros at the padded positions
    rng = np.random.default_rng(24)
    am, tm = module_pair(lambda n: n.TransformerEncoder(n.TransformerEncoderLayer(8, 2, 16, dropout=0.0,
                                                                                  batch_first=True), 2))
    am.eval()
    tm.eval()
    x = rng.standard_normal((3, 5, 8)).astype(np.float32)
    kpm = np.zeros((3, 5), bool)
    kpm[1, 3:] = True
    kpm[2, 4:] = True
    with torch.no_grad(), ampgrad.no_grad():
        ya = am(ampgrad.tensor(x), src_key_padding_mask=ampgrad.tensor(kpm))
        yt = tm(torch.tensor(x), src_key_padding_mask=torch.tensor(kpm))
    assert_close(ya, yt, 1e-4, 1e-5)
    assert not np.any(ya.numpy()[1, 3:])
    # with grad the composite path (no zeros)
    ya = am(ampgrad.tensor(x), src_key_padding_mask=ampgrad.tensor(kpm))
    yt = tm(torch.tensor(x), src_key_padding_mask=torch.tensor(kpm))
    assert_close(ya, yt, 1e-4, 1e-5)


@pytest.mark.parametrize("orth_map", ["matrix_exp", "cayley", "householder"])
def test_parametrizations_orthogonal(orth_map):
    need = {"matrix_exp": ["matrix_exp"], "cayley": ["solve"], "householder": []}[orth_map] + ["geqrf",
                                                                                               "householder_product"]
    missing = [n for n in need if getattr(ampgrad.linalg, n, None) is None and getattr(ampgrad, n, None) is None]
    if missing:
        pytest.skip(f"ampgrad.linalg lacks {missing}")
    rng = np.random.default_rng(25)
    shape = (4, 4) if orth_map != "householder" else (5, 3)
    am, tm = module_pair(lambda n: n.Linear(shape[1], shape[0]))
    nn.utils.parametrizations.orthogonal(am, orthogonal_map=orth_map)
    torch.nn.utils.parametrizations.orthogonal(tm, orthogonal_map=orth_map)
    assert list(am.state_dict()) == list(tm.state_dict())
    am.load_state_dict(tm.state_dict())
    w = am.weight.detach().numpy()
    np.testing.assert_allclose(w.T @ w if shape[0] >= shape[1] else w @ w.T, np.eye(min(shape)), atol=1e-5)
    x = pair(rng, 3, shape[1])
    run_compare(am, tm, [x[0]], [x[1]], rng, rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="Expected a matrix or batch of matrices"):
        nn.utils.parametrizations.orthogonal(nn.BatchNorm1d(3))


def test_deprecated_aliases_nllloss2d_and_init_dirac_eye():
    """torch.nn.NLLLoss2d (a NLLLoss that warns FutureWarning) and nn.init.dirac / eye (the deprecated
    spellings of dirac_ / eye_): same values as torch, same warning class."""
    import numpy as np
    import torch
    import ampgrad
    x = np.random.RandomState(0).randn(2, 3, 4, 4).astype(np.float32)
    t = np.random.RandomState(1).randint(0, 3, (2, 4, 4))
    with pytest.warns(FutureWarning, match="NLLLoss2d"):
        m = ampgrad.nn.NLLLoss2d(ignore_index=1)
    with pytest.warns(FutureWarning):
        mt = torch.nn.NLLLoss2d(ignore_index=1)
    got = m(ampgrad.tensor(x).log_softmax(1), ampgrad.tensor(t)).item()
    want = mt(torch.tensor(x).log_softmax(1), torch.tensor(t)).item()
    assert abs(got - want) <= 1e-6 * abs(want)
    for name, shape in (("dirac", (4, 2, 3, 3)), ("eye", (3, 5))):
        a = ampgrad.zeros(*shape)
        with pytest.warns(FutureWarning, match=f"nn.init.{name}` is now deprecated"):
            getattr(ampgrad.nn.init, name)(a)
        b = torch.zeros(*shape)
        with pytest.warns(FutureWarning):
            getattr(torch.nn.init, name)(b)
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("out_features,bias,kw", [
    ((), False, {}), ((), True, {"reduction": "sum", "label_smoothing": 0.1}),
    ((3,), True, {"reduction": "none"}), ((), False, {"ignore_index": 2, "weight": "w"}),
    ((), True, {"options": "opts"})])
def test_linear_cross_entropy_loss_module_matches_torch(out_features, bias, kw):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    N, D, C = 6, 4, 5
    x = rng.standard_normal((N, D)).astype(np.float32)
    tgt = rng.integers(0, C, (N,) + tuple(out_features))
    class_w = rng.random(C).astype(np.float32)
    res = []
    for L in (ampgrad, torch):
        L.manual_seed(3)  # the same Linear init in both (the generators' streams agree)
        k = dict(kw)
        if k.get("weight") == "w":
            k["weight"] = L.tensor(class_w)
        if k.get("options") == "opts":
            k["options"] = L.nn.LinearCrossEntropyOptions(batch_chunk_size=2)
        m = L.nn.LinearCrossEntropyLoss(D, C, out_features=out_features, bias=bias, **k)
        assert tuple(m.linear.weight.shape) == (C * int(np.prod(out_features or (1,))), D)
        xi = L.tensor(x, requires_grad=True)  # K-dimensional targets (N, d1) with a (C, d1, D) weight
        out = m(xi, L.tensor(tgt))
        out.sum().backward()
        res.append((out.detach().numpy(), xi.grad.numpy(), m.linear.weight.grad.numpy(),
                    str(m), [tuple(p.shape) for p in m.parameters()]))
    a, t = res
    np.testing.assert_allclose(a[0], t[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(a[1], t[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(a[2], t[2], rtol=1e-5, atol=1e-6)
    assert a[3] == t[3] and a[4] == t[4]


def test_linear_cross_entropy_loss_module_errors_like_torch():
    torch = pytest.importorskip("torch")
    for L in (ampgrad, torch):
        with pytest.raises(RuntimeError, match=r"expected weight shape to be \(5,\), got \(4,\)"):
            L.nn.LinearCrossEntropyLoss(3, 5, weight=L.ones(4))
        with pytest.raises(RuntimeError, match="expected label_smoothing to be in range"):
            L.nn.LinearCrossEntropyLoss(3, 5, label_smoothing=1.5)
