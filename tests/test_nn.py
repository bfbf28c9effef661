"""nn against torch: every module and functional op (forward values, gradients w.r.t. inputs and
parameters), torch's default initialisation under the same seed, the Module API (registration,
traversal, state_dict round trip, conversions, hooks, repr), containers, init, utils and errors.
The per-function nn.functional cases live in tests/op_db.py (checked by tests/test_ops.py)."""
import copy
import math
import pickle
import warnings

import numpy as np
import pytest

import ampgrad
import ampgrad.nn as nn
import ampgrad.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional


# ---------------------------------------------------------------- helpers
def np_of(t):
    return t.detach().double().numpy() if isinstance(t, torch.Tensor) else t.detach().double().numpy()


def assert_close(a, t, rtol=1e-5, atol=1e-6, what=""):
    a, t = np_of(a), np_of(t)
    assert a.shape == t.shape, f"{what}: shape {a.shape} != {t.shape}"
    np.testing.assert_allclose(a, t, rtol=rtol, atol=atol, err_msg=what)


def pair(rng, *shape, lo=None, hi=None, grad=True, dtype=np.float32):
    x = rng.standard_normal(shape) if lo is None else rng.uniform(lo, hi, shape)
    x = np.asarray(x, dtype=dtype)
    return ampgrad.tensor(x, requires_grad=grad), torch.tensor(x, requires_grad=grad)


def ipair(arr):
    return ampgrad.tensor(np.asarray(arr)), torch.tensor(np.asarray(arr))


def check_fn(fa, ft, inputs, rng, rtol=1e-5, atol=1e-6):
    """Runs fa on the ampgrad halves and ft on the torch halves of `inputs` (pairs or constants);
    compares outputs and, for differentiable outputs, the gradients of every input."""
    a_in = [x[0] if isinstance(x, tuple) else x for x in inputs]
    t_in = [x[1] if isinstance(x, tuple) else x for x in inputs]
    out_a, out_t = fa(*a_in), ft(*t_in)
    outs_a = out_a if isinstance(out_a, tuple) else (out_a,)
    outs_t = out_t if isinstance(out_t, tuple) else (out_t,)
    for oa, ot in zip(outs_a, outs_t):
        assert_close(oa, ot, rtol, atol, "forward")
    if not outs_t[0].requires_grad:
        return
    ga = [ampgrad.tensor(g) for g in (np.asarray(rng.standard_normal(o.shape), np.float32) for o in outs_t)]
    gt = [torch.tensor(g.numpy()) for g in ga]
    ampgrad.autograd.backward(list(outs_a), ga)
    torch.autograd.backward(list(outs_t), gt)
    for i, (xa, xt) in enumerate(zip(a_in, t_in)):
        if isinstance(xt, torch.Tensor) and xt.grad is not None:
            assert xa.grad is not None, f"input {i} got no gradient"
            assert_close(xa.grad, xt.grad, rtol, atol, f"grad of input {i}")


def copy_weights(am, tm):
    am.load_state_dict(tm.state_dict())  # array-like values are accepted (ampgrad extension)


# ---------------------------------------------------------------- modules against torch
# (name, constructor(lib), input shapes (or callables of rng), rtol)
MODULES = [
    ("Linear", lambda n: n.Linear(5, 4), [(3, 5)]),
    ("Linear-nobias-3d", lambda n: n.Linear(5, 4, bias=False), [(2, 3, 5)]),
    ("Bilinear", lambda n: n.Bilinear(3, 4, 5), [(6, 3), (6, 4)]),
    ("Conv1d", lambda n: n.Conv1d(3, 4, 3, stride=2, padding=1), [(2, 3, 9)]),
    ("Conv1d-reflect", lambda n: n.Conv1d(4, 6, 3, padding=2, dilation=2, groups=2, padding_mode="reflect"), [(2, 4, 8)]),
    ("Conv1d-unbatched", lambda n: n.Conv1d(3, 2, 2, padding="same"), [(3, 7)]),
    ("Conv2d", lambda n: n.Conv2d(3, 4, 3, stride=(2, 1), padding=(1, 2)), [(2, 3, 7, 6)]),
    ("Conv2d-same", lambda n: n.Conv2d(4, 4, (3, 2), padding="same", dilation=(1, 2), groups=4, bias=False), [(2, 4, 5, 6)]),
    ("Conv2d-circular", lambda n: n.Conv2d(2, 3, 3, padding=1, padding_mode="circular"), [(1, 2, 5, 5)]),
    ("Conv2d-replicate", lambda n: n.Conv2d(2, 3, 3, padding=(1, 2), padding_mode="replicate"), [(1, 2, 5, 5)]),
    ("Conv2d-1x1", lambda n: n.Conv2d(3, 5, 1), [(2, 3, 4, 4)]),
    ("ConvTranspose1d", lambda n: n.ConvTranspose1d(3, 4, 3, stride=2, padding=1, output_padding=1), [(2, 3, 5)]),
    ("ConvTranspose2d", lambda n: n.ConvTranspose2d(4, 6, (3, 2), stride=2, padding=(1, 0), groups=2, dilation=(1, 2)),
     [(2, 4, 4, 5)]),
    ("ConvTranspose2d-unbatched", lambda n: n.ConvTranspose2d(2, 3, 2, bias=False), [(2, 3, 3)]),
    ("LayerNorm", lambda n: n.LayerNorm((3, 4)), [(2, 5, 3, 4)]),
    ("LayerNorm-noaffine", lambda n: n.LayerNorm(4, elementwise_affine=False, eps=1e-3), [(3, 4)]),
    ("GroupNorm", lambda n: n.GroupNorm(2, 6), [(3, 6, 4)]),
    ("RMSNorm", lambda n: n.RMSNorm(4), [(3, 4)]),
    ("PReLU", lambda n: n.PReLU(3, init=0.1), [(2, 3, 4)]),
    ("ReLU", lambda n: n.ReLU(), [(3, 4)]),
    ("GELU", lambda n: n.GELU(), [(3, 4)]),
    ("GELU-tanh", lambda n: n.GELU("tanh"), [(3, 4)]),
    ("SiLU", lambda n: n.SiLU(), [(3, 4)]),
    ("Tanh", lambda n: n.Tanh(), [(3, 4)]),
    ("Sigmoid", lambda n: n.Sigmoid(), [(3, 4)]),
    ("Softplus", lambda n: n.Softplus(beta=2.0, threshold=1.0), [(3, 4)]),
    ("LeakyReLU", lambda n: n.LeakyReLU(0.2), [(3, 4)]),
    ("ELU", lambda n: n.ELU(0.5), [(3, 4)]),
    ("Hardtanh", lambda n: n.Hardtanh(-0.5, 0.7), [(3, 4)]),
    ("ReLU6", lambda n: n.ReLU6(), [(3, 4)]),
    ("Mish", lambda n: n.Mish(), [(3, 4)]),
    ("Softmax", lambda n: n.Softmax(dim=1), [(3, 4)]),
    ("LogSoftmax", lambda n: n.LogSoftmax(dim=0), [(3, 4)]),
    ("Softmin", lambda n: n.Softmin(dim=-1), [(3, 4)]),
    ("Flatten", lambda n: n.Flatten(), [(2, 3, 4)]),
    ("Unflatten", lambda n: n.Unflatten(1, (2, 3)), [(4, 6)]),
    ("Identity", lambda n: n.Identity(3, foo=1), [(2, 2)]),
    ("RNNCell", lambda n: n.RNNCell(3, 4), [(5, 3), (5, 4)]),
    ("RNNCell-relu-unbatched", lambda n: n.RNNCell(3, 4, nonlinearity="relu"), [(3,)]),
    ("GRUCell", lambda n: n.GRUCell(3, 4), [(5, 3), (5, 4)]),
    ("GRUCell-nobias", lambda n: n.GRUCell(3, 4, bias=False), [(5, 3)]),
    ("CosineSimilarity", lambda n: n.CosineSimilarity(dim=1), [(3, 4), (3, 4)]),
    ("PairwiseDistance", lambda n: n.PairwiseDistance(p=1.5), [(3, 4), (3, 4)]),
    ("Sequential", lambda n: n.Sequential(n.Conv2d(2, 4, 3), n.GroupNorm(2, 4), n.SiLU(), n.Flatten(), n.Linear(16, 3)),
     [(2, 2, 4, 4)]),
]


@pytest.mark.parametrize("name,ctor,shapes", MODULES, ids=[m[0] for m in MODULES])
def test_module_matches_torch(name, ctor, shapes):
    rng = np.random.default_rng(0)
    torch.manual_seed(0)
    tm = ctor(torch.nn)
    am = ctor(nn)
    copy_weights(am, tm)
    inputs = [pair(rng, *s) for s in shapes]
    check_fn(am, tm, inputs, rng)
    for (pn, pa), (qn, pt) in zip(am.named_parameters(), tm.named_parameters()):
        assert pn == qn
        if pt.grad is not None:
            assert_close(pa.grad, pt.grad, what=f"grad of {pn}")


def test_lstm_cell_matches_torch():
    rng = np.random.default_rng(1)
    torch.manual_seed(0)
    tm, am = torch.nn.LSTMCell(3, 4), nn.LSTMCell(3, 4)
    copy_weights(am, tm)
    x, h, c = pair(rng, 5, 3), pair(rng, 5, 4), pair(rng, 5, 4)
    check_fn(lambda x, h, c: am(x, (h, c)), lambda x, h, c: tm(x, (h, c)), [x, h, c], rng)
    for pa, pt in zip(am.parameters(), tm.parameters()):
        assert_close(pa.grad, pt.grad)
    xa, xt = pair(rng, 3)
    for oa, ot in zip(am(xa), tm(xt)):  # unbatched, zero state
        assert_close(oa, ot)


def test_embedding_module():
    rng = np.random.default_rng(2)
    torch.manual_seed(0)
    tm, am = torch.nn.Embedding(6, 3, padding_idx=2), nn.Embedding(6, 3, padding_idx=2)
    copy_weights(am, tm)
    ia, it = ipair(rng.integers(0, 6, (4, 5)))
    check_fn(lambda: am(ia), lambda: tm(it), [], rng)
    assert_close(am.weight.grad, tm.weight.grad)
    assert float(am.weight.grad[2].abs().sum()) == 0.0
    w = ampgrad.randn(4, 2)
    e = nn.Embedding.from_pretrained(w)
    assert not e.weight.requires_grad and e.weight.data_ptr() == w.data_ptr()


# (module, output-free params) drawn in torch's order under the same seed
INIT_CASES = [
    lambda n: n.Linear(7, 5), lambda n: n.Linear(3, 2, bias=False), lambda n: n.Bilinear(2, 3, 4),
    lambda n: n.Conv1d(3, 4, 3), lambda n: n.Conv2d(4, 6, (3, 2), groups=2), lambda n: n.ConvTranspose1d(3, 4, 2),
    lambda n: n.ConvTranspose2d(4, 2, 3, groups=2), lambda n: n.Conv3d(2, 4, (2, 3, 2)),
    lambda n: n.ConvTranspose3d(4, 2, 2, groups=2), lambda n: n.Embedding(10, 4, padding_idx=3),
    lambda n: n.LayerNorm(3), lambda n: n.GroupNorm(2, 4), lambda n: n.PReLU(), lambda n: n.RNNCell(3, 5),
    lambda n: n.LSTMCell(3, 5), lambda n: n.GRUCell(3, 5),
    lambda n: n.Sequential(n.Linear(4, 8), n.ReLU(), n.Linear(8, 2)),
]


@pytest.mark.parametrize("ctor", INIT_CASES)
def test_default_init_equals_torch(ctor):
    torch.manual_seed(123)
    tm = ctor(torch.nn)
    ampgrad.manual_seed(123)
    am = ctor(nn)
    ts, as_ = tm.state_dict(), am.state_dict()
    assert list(ts.keys()) == list(as_.keys())
    for k in ts:
        # uniform_ draws are bit-identical; normal_ over >= 16 values may differ by an ulp (torch's
        # AVX2 Box-Muller uses vectorised log/sin/cos)
        np.testing.assert_allclose(as_[k].numpy(), ts[k].numpy(), rtol=2e-6, atol=1e-7, err_msg=k)
    # the generator is left where torch leaves it
    np.testing.assert_array_equal(ampgrad.rand(5).numpy(), torch.rand(5).numpy())


def test_randint_and_randperm_streams_equal_torch():
    """randint with low == -1 draws (it once hit randperm's shuffle marker), randperm shuffles."""
    for seed in (0, 5):
        torch.manual_seed(seed)
        ampgrad.manual_seed(seed)
        for low, high, size in ((-1, 5, (10,)), (-1, 5, (2, 5)), (0, 7, (9,)), (-3, -1, (4,))):
            np.testing.assert_array_equal(ampgrad.randint(low, high, size).numpy(), torch.randint(low, high, size).numpy())
        np.testing.assert_array_equal(ampgrad.randperm(20).numpy(), torch.randperm(20).numpy())


# ---------------------------------------------------------------- functional against torch
# The per-function cases (losses, activations, norms, convolutions, grid_sample, ...) are entries of
# tests/op_db.py ("nn.functional.*"): forward in every float dtype, gradients, finite differences,
# gradgrad, forward AD, non-contiguous inputs, autocast and the device axis (tests/test_ops.py).


def test_embedding_functional_options():
    rng = np.random.default_rng(3)
    idx = rng.integers(0, 5, (3, 4))
    ia, it = ipair(idx)
    for kw in (dict(), dict(padding_idx=2), dict(padding_idx=-1), dict(scale_grad_by_freq=True)):
        wa, wt = pair(rng, 5, 3)
        check_fn(lambda w: F.embedding(ia, w, **kw), lambda w: TF.embedding(it, w, **kw), [(wa, wt)], rng)
    wa, wt = pair(rng, 5, 3, grad=False)
    wa.mul_(3), wt.mul_(3)
    assert_close(F.embedding(ia, wa, max_norm=1.0), TF.embedding(it, wt, max_norm=1.0))
    assert_close(wa, wt)  # rows renormalised in place


def test_one_hot():
    ia, it = ipair(np.array([[0, 3], [2, 1]]))
    np.testing.assert_array_equal(F.one_hot(ia).numpy(), TF.one_hot(it).numpy())
    assert F.one_hot(ia, 6).dtype == ampgrad.int64 and F.one_hot(ia, 6).shape == (2, 2, 6)


def test_dropout_semantics():
    ampgrad.manual_seed(0)
    x = ampgrad.ones(200, 200, requires_grad=True)
    y = F.dropout(x, 0.3)
    kept = (y != 0).double().mean().item()
    assert abs(kept - 0.7) < 0.01
    assert np.allclose(np.unique(y.detach().numpy()), [0.0, 1 / 0.7])
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.detach().numpy())  # grad = mask / (1 - p)
    assert F.dropout(x, 0.3, training=False) is x
    assert float(F.dropout(x, 1.0).abs().sum()) == 0.0
    m = nn.Dropout(0.5)
    m.eval()
    assert m(x) is x
    z = F.dropout2d(ampgrad.ones(4, 8, 5, 5), 0.5)
    per_channel = z.reshape(4, 8, 25)
    assert bool(((per_channel == per_channel[:, :, :1]).all()))  # one draw per channel
    with pytest.raises(ValueError):
        F.dropout(x, 1.5)
    with pytest.raises(ValueError):
        nn.Dropout(-0.1)


def test_scaled_dot_product_attention():
    rng = np.random.default_rng(10)
    q, k, v = pair(rng, 2, 4, 5, 8), pair(rng, 2, 4, 6, 8), pair(rng, 2, 4, 6, 8)
    check_fn(F.scaled_dot_product_attention, TF.scaled_dot_product_attention, [q, k, v], rng)
    q, k, v = pair(rng, 2, 4, 6, 8), pair(rng, 2, 4, 6, 8), pair(rng, 2, 4, 6, 8)
    check_fn(lambda *a: F.scaled_dot_product_attention(*a, is_causal=True, scale=0.3),
             lambda *a: TF.scaled_dot_product_attention(*a, is_causal=True, scale=0.3), [q, k, v], rng)
    keep = rng.random((2, 1, 6, 6)) > 0.3
    keep[..., 0] = True
    ma, mt = ipair(keep)
    check_fn(lambda *a: F.scaled_dot_product_attention(*a, attn_mask=ma), lambda *a: TF.scaled_dot_product_attention(*a, attn_mask=mt),
             [pair(rng, 2, 4, 6, 8), pair(rng, 2, 4, 6, 8), pair(rng, 2, 4, 6, 8)], rng)
    check_fn(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
             lambda q, k, v, m: TF.scaled_dot_product_attention(q, k, v, attn_mask=m),
             [pair(rng, 2, 4, 6, 8), pair(rng, 2, 4, 6, 8), pair(rng, 2, 4, 6, 8), pair(rng, 6, 6)], rng)
    check_fn(lambda *a: F.scaled_dot_product_attention(*a, enable_gqa=True),
             lambda *a: TF.scaled_dot_product_attention(*a, enable_gqa=True),
             [pair(rng, 2, 4, 5, 8), pair(rng, 2, 2, 6, 8), pair(rng, 2, 2, 6, 8)], rng)


def test_products_and_distances():
    rng = np.random.default_rng(4)
    cases = [
        (lambda a, b: ampgrad.cross(a, b, dim=1), lambda a, b: torch.cross(a, b, dim=1), [(4, 3, 2), (4, 3, 2)]),
        (lambda a, b: ampgrad.linalg.cross(a, b), lambda a, b: torch.linalg.cross(a, b), [(4, 3), (1, 3)]),
        (lambda a, b: ampgrad.tensordot(a, b), lambda a, b: torch.tensordot(a, b), [(2, 3, 4), (3, 4, 5)]),
        (lambda a, b: ampgrad.tensordot(a, b, ([0, 2], [2, 0])), lambda a, b: torch.tensordot(a, b, ([0, 2], [2, 0])),
         [(2, 3, 4), (4, 3, 2)]),
        (lambda *m: ampgrad.linalg.multi_dot(m), lambda *m: torch.linalg.multi_dot(m), [(3,), (3, 9), (9, 2), (2, 7), (7,)]),
        (lambda *m: ampgrad.linalg.multi_dot([x * 0.1 for x in m]), lambda *m: torch.linalg.multi_dot([x * 0.1 for x in m]),
         [(10, 3), (3, 40), (40, 5), (5, 20)]),
        (ampgrad.cdist, torch.cdist, [(2, 5, 3), (2, 4, 3)]),
        (ampgrad.cdist, torch.cdist, [(30, 3), (27, 3)]),  # the matmul path
        (lambda a, b: ampgrad.cdist(a, b, 1.0), lambda a, b: torch.cdist(a, b, 1.0), [(5, 3), (4, 3)]),
        (lambda a, b: ampgrad.cdist(a, b, math.inf), lambda a, b: torch.cdist(a, b, math.inf), [(5, 3), (4, 3)]),
        (ampgrad.dist, torch.dist, [(5, 3), (3,)]),
        (lambda a, b: ampgrad.dist(a, b, 3), lambda a, b: torch.dist(a, b, 3), [(5, 3), (5, 3)]),
        (lambda a: ampgrad.renorm(a, 2, 0, 1.0), lambda a: torch.renorm(a, 2, 0, 1.0), [(5, 3)]),
        (lambda a: ampgrad.renorm(a, 1, 1, 2.0), lambda a: torch.renorm(a, 1, 1, 2.0), [(5, 3, 2)]),
        (lambda a: ampgrad.linalg.vector_norm(a, 3, dim=1), lambda a: torch.linalg.vector_norm(a, 3, dim=1), [(5, 3)]),
        (lambda a: ampgrad.linalg.vector_norm(a, math.inf), lambda a: torch.linalg.vector_norm(a, math.inf), [(5, 3)]),
        (lambda a: ampgrad.linalg.matrix_norm(a, 1), lambda a: torch.linalg.matrix_norm(a, 1), [(2, 5, 3)]),
        (lambda a: ampgrad.linalg.matrix_norm(a, -math.inf), lambda a: torch.linalg.matrix_norm(a, -math.inf), [(2, 5, 3)]),
        (lambda a: ampgrad.linalg.norm(a, dim=(0, 2), keepdim=True), lambda a: torch.linalg.norm(a, dim=(0, 2), keepdim=True),
         [(2, 5, 3)]),
        (ampgrad.linalg.vecdot, torch.linalg.vecdot, [(2, 5, 3), (5, 3)]),
    ]
    for fa, ft, shapes in cases:
        check_fn(fa, ft, [pair(rng, *s) for s in shapes], rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_fn(ampgrad.chain_matmul, torch.chain_matmul, [pair(rng, 2, 3), pair(rng, 3, 4), pair(rng, 4, 5)], rng)
        check_fn(ampgrad.cross, torch.cross, [pair(rng, 2, 3), pair(rng, 2, 3)], rng)


def test_torch_level_nn_names():
    rng = np.random.default_rng(11)
    x, w = pair(rng, 2, 3, 6), pair(rng, 4, 3, 2)
    check_fn(ampgrad.conv1d, torch.conv1d, [x, w], rng)
    check_fn(lambda x: ampgrad.layer_norm(x, [6]), lambda x: torch.layer_norm(x, [6]), [pair(rng, 2, 3, 6)], rng)
    check_fn(lambda x: ampgrad.group_norm(x, 3), lambda x: torch.group_norm(x, 3), [pair(rng, 2, 3, 6)], rng)
    check_fn(ampgrad.cosine_similarity, torch.cosine_similarity, [pair(rng, 3, 4), pair(rng, 3, 4)], rng)
    ia, it = ipair(np.array([[0, 2], [1, 1]]))
    check_fn(lambda w: ampgrad.embedding(w, ia, 1), lambda w: torch.embedding(w, it, 1), [pair(rng, 3, 2)], rng)
    xa = ampgrad.ones(3)
    assert ampgrad.dropout(xa, 0.5, False) is xa


EINSUM = [("ij,jk->ik", [(2, 3), (3, 4)]), ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]), ("ii->i", [(3, 3)]),
          ("ii", [(3, 3)]), ("i,i", [(3,), (3,)]), ("i,j->ij", [(3,), (4,)]), ("...ij,...jk", [(2, 2, 3), (3, 4)]),
          ("bn,anm,bm->ba", [(2, 3), (5, 3, 4), (2, 4)]), ("ij->ji", [(2, 3)]), ("ijk->", [(2, 3, 4)]),
          ("abc,cd,de->abe", [(2, 3, 4), (4, 5), (5, 2)]), ("i...->...", [(2, 3, 4)]),
          ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]), ("ij,kj,k->i", [(2, 3), (4, 3), (4,)]),
          ("ij,j", [(1, 3), (3,)]), ("b i d, b j d -> b i j", [(2, 3, 4), (2, 5, 4)])]


@pytest.mark.parametrize("eq,shapes", EINSUM, ids=[e[0] for e in EINSUM])
def test_einsum(eq, shapes):
    rng = np.random.default_rng(5)
    check_fn(lambda *a: ampgrad.einsum(eq, *a), lambda *a: torch.einsum(eq, *a), [pair(rng, *s) for s in shapes], rng)


# ---------------------------------------------------------------- bad input raises torch's exception type
ERRORS = [
    ("conv2d-same-strided", lambda L, F_: F_.conv2d(L.randn(1, 3, 5, 5), L.randn(2, 3, 3, 3), stride=2, padding="same")),
    ("conv2d-bad-padding", lambda L, F_: F_.conv2d(L.randn(1, 3, 5, 5), L.randn(2, 3, 3, 3), padding="foo")),
    ("conv2d-channels", lambda L, F_: F_.conv2d(L.randn(1, 4, 5, 5), L.randn(2, 3, 3, 3))),
    ("conv2d-input-dim", lambda L, F_: F_.conv2d(L.randn(5, 5), L.randn(2, 3, 3, 3))),
    ("conv2d-kernel-too-big", lambda L, F_: F_.conv2d(L.randn(1, 3, 2, 2), L.randn(2, 3, 3, 3))),
    ("conv2d-dtype", lambda L, F_: F_.conv2d(L.randn(1, 3, 5, 5).double(), L.randn(2, 3, 3, 3))),
    ("conv_t-output-padding", lambda L, F_: F_.conv_transpose2d(L.randn(1, 3, 5, 5), L.randn(3, 2, 3, 3), output_padding=1)),
    ("conv2d-groups-weight", lambda L, F_: F_.conv2d(L.randn(1, 4, 5, 5), L.randn(3, 2, 3, 3), groups=2)),
    ("conv2d-bias-size", lambda L, F_: F_.conv2d(L.randn(1, 3, 5, 5), L.randn(2, 3, 3, 3), L.randn(3))),
    ("conv2d-neg-padding", lambda L, F_: F_.conv2d(L.randn(1, 3, 5, 5), L.randn(2, 3, 3, 3), padding=-1)),
    ("conv2d-zero-stride", lambda L, F_: F_.conv2d(L.randn(1, 3, 5, 5), L.randn(2, 3, 3, 3), stride=0)),
    ("conv3d-weight-dim", lambda L, F_: F_.conv3d(L.randn(1, 3, 5, 5, 5), L.randn(2, 3, 3, 3))),
    ("conv1d-stride-len", lambda L, F_: F_.conv1d(L.randn(1, 3, 5), L.randn(2, 3, 3), stride=(1, 2))),
    ("conv_t-channels", lambda L, F_: F_.conv_transpose2d(L.randn(1, 4, 5, 5), L.randn(3, 2, 3, 3))),
    ("conv_t-too-small", lambda L, F_: F_.conv_transpose2d(L.randn(1, 3, 1, 1), L.randn(3, 2, 1, 1), padding=1)),
    ("conv_t-bias-size", lambda L, F_: F_.conv_transpose1d(L.randn(1, 3, 5), L.randn(3, 2, 3), L.randn(3))),
    ("max_pool2d-pad", lambda L, F_: F_.max_pool2d(L.randn(2, 3, 8, 8), 3, padding=2)),
    ("max_pool2d-zero-stride", lambda L, F_: F_.max_pool2d(L.randn(2, 3, 8, 8), 2, stride=0)),
    ("max_pool2d-dilation", lambda L, F_: F_.max_pool2d(L.randn(2, 3, 8, 8), 2, dilation=0)),
    ("max_pool2d-too-small", lambda L, F_: F_.max_pool2d(L.randn(2, 3, 8, 8), 20)),
    ("max_pool2d-dim", lambda L, F_: F_.max_pool2d(L.randn(2, 3, 4, 5, 6), 2)),
    ("max_pool3d-too-small", lambda L, F_: F_.max_pool3d(L.randn(2, 3, 4, 4, 4), 5)),
    ("max_pool1d-pad", lambda L, F_: F_.max_pool1d(L.randn(2, 3, 8), 3, padding=2)),
    ("avg_pool2d-pad", lambda L, F_: F_.avg_pool2d(L.randn(2, 3, 8, 8), 3, padding=2)),
    ("avg_pool2d-divisor", lambda L, F_: F_.avg_pool2d(L.randn(2, 3, 8, 8), 2, divisor_override=0)),
    ("avg_pool2d-too-small", lambda L, F_: F_.avg_pool2d(L.randn(2, 3, 8, 8), 20)),
    ("avg_pool3d-dim", lambda L, F_: F_.avg_pool3d(L.randn(3, 8, 8), 2)),
    ("adaptive_avg_pool2d-dim", lambda L, F_: F_.adaptive_avg_pool2d(L.randn(2, 3, 4, 5, 6), 2)),
    ("adaptive_avg_pool2d-size", lambda L, F_: F_.adaptive_avg_pool2d(L.randn(2, 3, 8, 8), (2,))),
    ("adaptive_avg_pool2d-int", lambda L, F_: F_.adaptive_avg_pool2d(L.ones(2, 3, 8, 8, dtype=L.int64), 2)),
    ("adaptive_max_pool2d-empty", lambda L, F_: F_.adaptive_max_pool2d(L.randn(2, 3, 0, 8), 2)),
    ("ce-target-oob", lambda L, F_: F_.cross_entropy(L.randn(3, 5), L.tensor([1, 2, 7]))),
    ("ce-batch", lambda L, F_: F_.cross_entropy(L.randn(3, 5), L.tensor([1, 2]))),
    ("ce-float-target", lambda L, F_: F_.cross_entropy(L.randn(3, 5), L.tensor([1.0, 2.0, 3.0]))),
    ("ce-label-smoothing", lambda L, F_: F_.cross_entropy(L.randn(3, 5), L.tensor([1, 2, 3]), label_smoothing=1.5)),
    ("nll-neg-target", lambda L, F_: F_.nll_loss(L.randn(3, 5), L.tensor([1, 2, -1]))),
    ("nll-spatial", lambda L, F_: F_.nll_loss(L.randn(3, 5, 2), L.tensor([1, 2, 1]))),
    ("nll-weight", lambda L, F_: F_.nll_loss(L.randn(3, 5), L.tensor([1, 2, 1]), weight=L.ones(4))),
    ("bce-range", lambda L, F_: F_.binary_cross_entropy(L.tensor([1.5]), L.tensor([1.0]))),
    ("bce-size", lambda L, F_: F_.binary_cross_entropy(L.tensor([0.5, 0.2]), L.tensor([1.0]))),
    ("bce-logits-size", lambda L, F_: F_.binary_cross_entropy_with_logits(L.tensor([0.5, 0.2]), L.tensor([1.0]))),
    ("bad-reduction", lambda L, F_: F_.mse_loss(L.randn(3), L.randn(3), reduction="foo")),
    ("kl-bad-reduction", lambda L, F_: F_.kl_div(L.randn(3), L.randn(3), reduction="foo")),
    ("layer_norm-shape", lambda L, F_: F_.layer_norm(L.randn(3, 4), (5,))),
    ("group_norm-groups", lambda L, F_: F_.group_norm(L.randn(3, 4, 5), 3)),
    ("embedding-oob", lambda L, F_: F_.embedding(L.tensor([5]), L.randn(3, 4))),
    ("embedding-float-index", lambda L, F_: F_.embedding(L.tensor([1.0]), L.randn(3, 4))),
    ("embedding-padding-idx", lambda L, F_: F_.embedding(L.tensor([1]), L.randn(3, 4), padding_idx=5)),
    ("one_hot-float", lambda L, F_: F_.one_hot(L.tensor([1.0]))),
    ("one_hot-negative", lambda L, F_: F_.one_hot(L.tensor([-1]))),
    ("one_hot-too-large", lambda L, F_: F_.one_hot(L.tensor([3]), 2)),
    ("pad-odd", lambda L, F_: F_.pad(L.randn(3), (1,))),
    ("pad-too-long", lambda L, F_: F_.pad(L.randn(3), (1, 1, 1, 1))),
    ("dropout-p", lambda L, F_: F_.dropout(L.randn(3), 1.5)),
    ("prelu-channels", lambda L, F_: F_.prelu(L.randn(2, 3), L.randn(2))),
    ("cdist-1d", lambda L, F_: L.cdist(L.randn(3), L.randn(3, 3))),
    ("cdist-cols", lambda L, F_: L.cdist(L.randn(3, 2), L.randn(3, 3))),
    ("einsum-size", lambda L, F_: L.einsum("ij,jk->ik", L.randn(2, 3), L.randn(4, 5))),
    ("tensordot-size", lambda L, F_: L.tensordot(L.randn(2, 3), L.randn(4, 5), dims=1)),
    ("multi_dot-one", lambda L, F_: L.linalg.multi_dot([L.randn(2, 3)])),
    ("linear-shape", lambda L, F_: L.nn.Linear(3, 4)(L.randn(2, 5))),
    ("module-bad-param", lambda L, F_: setattr(L.nn.Linear(3, 2), "weight", L.ones(2, 3))),
    ("module-bad-buffer", lambda L, F_: L.nn.Linear(3, 2).register_buffer("b", 3)),
    ("module-buffer-exists", lambda L, F_: L.nn.Linear(3, 2).register_buffer("weight", L.ones(1))),
    ("module-param-type", lambda L, F_: L.nn.Linear(3, 2).register_parameter("p", L.ones(2))),
    ("module-no-attr", lambda L, F_: L.nn.Linear(3, 2).foo),
    ("module-add-non-module", lambda L, F_: L.nn.Module().add_module("x", 3)),
    ("module-no-forward", lambda L, F_: L.nn.Module()(1)),
    ("module-train-flag", lambda L, F_: L.nn.Linear(3, 2).train(1)),
    ("module-to-int", lambda L, F_: L.nn.Linear(3, 2).to(L.int64)),
    ("load-not-dict", lambda L, F_: L.nn.Linear(3, 2).load_state_dict(3)),
    ("load-missing", lambda L, F_: L.nn.Linear(3, 2).load_state_dict({"weight": L.ones(2, 3)})),
    ("load-size", lambda L, F_: L.nn.Linear(3, 2).load_state_dict({"weight": L.ones(3, 3), "bias": L.ones(2)})),
    ("conv-groups", lambda L, F_: L.nn.Conv2d(3, 4, 3, groups=2)),
    ("conv-padding-string", lambda L, F_: L.nn.Conv2d(3, 3, 3, padding="foo")),
    ("conv-same-strided", lambda L, F_: L.nn.Conv2d(3, 3, 3, stride=2, padding="same")),
    ("conv-padding-mode", lambda L, F_: L.nn.Conv2d(3, 3, 3, padding_mode="x")),
    ("convT-padding-mode", lambda L, F_: L.nn.ConvTranspose2d(3, 3, 3, padding_mode="reflect")),
    ("groupnorm-ctor", lambda L, F_: L.nn.GroupNorm(3, 4)),
    ("rnncell-3d", lambda L, F_: L.nn.GRUCell(3, 4)(L.randn(2, 2, 3))),
    ("sequential-index", lambda L, F_: L.nn.Sequential(L.nn.ReLU())[3]),
    ("parameterlist-call", lambda L, F_: L.nn.ParameterList()(1)),
    ("init-fan-1d", lambda L, F_: L.nn.init.kaiming_uniform_(L.empty(3))),
    ("init-mode", lambda L, F_: L.nn.init.kaiming_uniform_(L.empty(3, 3), mode="foo")),
    ("init-gain", lambda L, F_: L.nn.init.calculate_gain("foo")),
    ("init-eye", lambda L, F_: L.nn.init.eye_(L.empty(3, 3, 3))),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, fn):
    with pytest.raises(Exception) as te:
        fn(torch, TF)
    with pytest.raises(Exception) as ae:
        fn(ampgrad, F)
    assert type(ae.value) is type(te.value), f"torch raised {te.value!r}, ampgrad raised {ae.value!r}"


# ---------------------------------------------------------------- Module API
def _model(L):
    n = L.nn

    class Net(n.Module):
        def __init__(self):
            super().__init__()
            self.conv = n.Conv2d(2, 3, 3)
            self.blocks = n.ModuleList([n.Linear(4, 4), n.Linear(4, 4)])
            self.head = n.Sequential(n.ReLU(), n.Linear(4, 2))
            self.register_buffer("scale", L.ones(2) * 3)
            self.register_buffer("tmp", L.zeros(1), persistent=False)
            self.shared = self.blocks[0]

        def forward(self, x):
            x = self.conv(x).mean((2, 3))
            x = L.nn.functional.pad(x, (0, 1))
            for b in self.blocks:
                x = b(x).tanh()
            return self.head(x) * self.scale

    return Net()


def test_module_traversal_matches_torch():
    am, tm = _model(ampgrad), _model(torch)
    assert [n for n, _ in am.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert [n for n, _ in am.named_parameters(remove_duplicate=False)] == \
        [n for n, _ in tm.named_parameters(remove_duplicate=False)]
    assert [n for n, _ in am.named_buffers()] == [n for n, _ in tm.named_buffers()]
    assert [n for n, _ in am.named_modules()] == [n for n, _ in tm.named_modules()]
    assert [n for n, _ in am.named_children()] == [n for n, _ in tm.named_children()]
    assert [n for n, _ in am.named_parameters(prefix="m", recurse=False)] == []
    assert [n for n, _ in am.head.named_parameters(prefix="h")] == ["h.1.weight", "h.1.bias"]
    assert list(am.state_dict().keys()) == list(tm.state_dict().keys())
    assert "tmp" not in am.state_dict() and "scale" in am.state_dict()
    assert am.get_submodule("head.1") is am.head[1]
    assert am.get_parameter("head.1.bias") is am.head[1].bias
    assert am.get_buffer("scale") is am.scale
    assert len(list(am.modules())) == len(list(tm.modules()))


def test_state_dict_round_trip_and_forward_match():
    rng = np.random.default_rng(6)
    am, tm = _model(ampgrad), _model(torch)
    copy_weights(am, tm)
    xa, xt = pair(rng, 2, 2, 5, 5)
    check_fn(am, tm, [(xa, xt)], rng)
    for (n, pa), (_, pt) in zip(am.named_parameters(), tm.named_parameters()):
        assert_close(pa.grad, pt.grad, what=n)
    # round trip into a fresh model: same outputs, tensors copied (not aliased)
    sd = am.state_dict()
    assert all(not v.requires_grad for v in sd.values())
    am2 = _model(ampgrad)
    res = am2.load_state_dict(sd)
    assert res.missing_keys == [] and res.unexpected_keys == [] and repr(res) == "<All keys matched successfully>"
    assert_close(am2(xa), am(xa))
    assert am2.conv.weight.data_ptr() != am.conv.weight.data_ptr()
    # keep_vars returns the Parameters themselves; assign=True installs the given tensors
    assert am.state_dict(keep_vars=True)["conv.weight"] is am.conv.weight
    lin = nn.Linear(3, 2)
    w = ampgrad.randn(2, 3)
    lin.load_state_dict({"weight": w, "bias": ampgrad.zeros(2)}, assign=True)
    assert isinstance(lin.weight, nn.Parameter) and lin.weight.data_ptr() == w.data_ptr() and lin.weight.requires_grad
    # non-strict loading reports the keys
    r = nn.Linear(3, 2).load_state_dict({"weight": ampgrad.ones(2, 3), "extra": ampgrad.ones(1)}, strict=False)
    assert r.missing_keys == ["bias"] and r.unexpected_keys == ["extra"]
    with pytest.raises(RuntimeError, match=r'Missing key\(s\) in state_dict: "bias"'):
        nn.Linear(3, 2).load_state_dict({"weight": ampgrad.ones(2, 3)})
    with pytest.raises(RuntimeError, match=r'Unexpected key\(s\) in state_dict: "foo"'):
        nn.Linear(3, 2).load_state_dict({"weight": ampgrad.ones(2, 3), "bias": ampgrad.ones(2), "foo": ampgrad.ones(1)})
    with pytest.raises(RuntimeError, match="size mismatch for weight"):
        nn.Linear(3, 2).load_state_dict({"weight": ampgrad.ones(3, 3), "bias": ampgrad.ones(2)})


def test_pickle_and_deepcopy():
    m = nn.Sequential(nn.Linear(3, 2), nn.LayerNorm(2))
    for m2 in (copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
        assert isinstance(m2[0].weight, nn.Parameter) and m2[0].weight.requires_grad
        assert m2[0].weight.data_ptr() != m[0].weight.data_ptr()
        np.testing.assert_array_equal(m2[0].weight.detach().numpy(), m[0].weight.detach().numpy())
        assert repr(m2) == repr(m)


def test_parameter():
    data = ampgrad.randn(2, 3)
    p = nn.Parameter(data)
    assert isinstance(p, nn.Parameter) and isinstance(p, ampgrad.Tensor)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    assert p.data_ptr() == data.data_ptr()  # shares storage
    assert repr(p).startswith("Parameter containing:\ntensor(") and str(p) == repr(p)
    assert repr(nn.Parameter(ampgrad.ones(2))) == repr(torch.nn.Parameter(torch.ones(2)))
    assert not nn.Parameter(data, requires_grad=False).requires_grad
    assert nn.Parameter().shape == (0,)
    (p * 2).sum().backward()
    assert type(p.grad) is ampgrad.Tensor
    assert type(p.detach()) is ampgrad.Tensor and type(p * 1) is ampgrad.Tensor
    with pytest.raises(RuntimeError):
        nn.Parameter(ampgrad.tensor([1, 2]))
    p2 = copy.deepcopy(p)
    assert type(p2) is nn.Parameter and p2.data_ptr() != p.data_ptr()
    b = nn.Buffer(ampgrad.ones(2), persistent=False)
    m = nn.Module()
    m.buf = b
    assert "buf" in dict(m.named_buffers()) and "buf" not in m.state_dict()


def test_setattr_delattr_semantics():
    m = nn.Module()
    m.p = nn.Parameter(ampgrad.ones(2))
    m.sub = nn.Linear(2, 2)
    m.register_buffer("b", ampgrad.zeros(2))
    m.x = 5
    assert set(m._parameters) == {"p"} and set(m._modules) == {"sub"} and set(m._buffers) == {"b"}
    m.p = None  # allowed: keeps the slot
    assert "p" in m._parameters and m.p is None
    m.b = ampgrad.ones(3)  # a plain tensor replaces a buffer
    assert m._buffers["b"].shape == (3,)
    m.sub = None
    assert m.sub is None
    m.sub = nn.Linear(1, 1)
    del m.sub, m.b, m.p, m.x
    assert not m._modules and not m._buffers and not m._parameters
    with pytest.raises(AttributeError):
        m.x
    m.q = nn.Parameter(ampgrad.ones(1))
    with pytest.raises(TypeError):  # a parameter slot takes a Parameter or None only
        m.q = nn.Linear(1, 1)
    m.r = ampgrad.ones(1)
    m.r = nn.Linear(1, 1)  # a plain attribute moves to the module registry
    assert "r" in m._modules and "r" not in m.__dict__
    assert "q" in dir(m) and "r" in dir(m)


def test_train_eval_zero_grad_requires_grad():
    m = nn.Sequential(nn.Linear(2, 2), nn.Dropout())
    assert m.training and m[1].training
    assert m.eval() is m and not m[1].training
    m.train()
    assert m[1].training
    m(ampgrad.ones(1, 2)).sum().backward()
    m.zero_grad(set_to_none=False)
    assert float(m[0].weight.grad.abs().sum()) == 0.0
    m.zero_grad()
    assert m[0].weight.grad is None
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())


def test_conversions_keep_parameter_identity():
    m = nn.Sequential(nn.Linear(2, 3), nn.LayerNorm(3))
    m.register_buffer("steps", ampgrad.tensor(3))
    w = m[0].weight
    m(ampgrad.ones(1, 2)).sum().backward()
    assert m.double() is m
    assert m[0].weight is w and w.dtype == ampgrad.float64 and isinstance(w, nn.Parameter) and w.requires_grad
    assert w.grad.dtype == ampgrad.float64
    assert m.steps.dtype == ampgrad.int64  # integer buffers keep their dtype
    m.half()
    assert w.dtype == ampgrad.float16
    m.to(ampgrad.float32)
    assert w.dtype == ampgrad.float32
    m.bfloat16().float()
    assert m.to("cpu") is m and m.cpu() is m
    m.type(ampgrad.float64)
    assert w.dtype == ampgrad.float64
    seen = []
    m.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen == ["Linear", "LayerNorm", "Sequential"]


def test_forward_hooks():
    m = nn.Linear(2, 2)
    calls = []
    h1 = m.register_forward_pre_hook(lambda mod, args: (args[0] * 0,))
    h2 = m.register_forward_hook(lambda mod, args, out: out + 1)
    h3 = m.register_forward_hook(lambda mod, args, out: calls.append("first"), prepend=True)
    h4 = m.register_forward_pre_hook(lambda mod, args, kwargs: calls.append(kwargs) or None, with_kwargs=True)
    out = m(ampgrad.ones(1, 2))
    np.testing.assert_allclose(out.detach().numpy(), (m.bias + 1).detach().numpy()[None])
    assert calls == [{}, "first"]
    for h in (h1, h2, h3, h4):
        h.remove()
    out = m(ampgrad.ones(1, 2))
    np.testing.assert_allclose(out.detach().numpy(), (m.weight.sum(1) + m.bias).detach().numpy()[None], rtol=1e-6)
    with m.register_forward_hook(lambda mod, args, kwargs, out: out * 0, with_kwargs=True):
        assert float(m(ampgrad.ones(1, 2)).abs().sum()) == 0.0
    assert float(m(ampgrad.ones(1, 2)).abs().sum()) != 0.0

    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")
    b = Boom()
    seen = []
    b.register_forward_hook(lambda mod, args, out: seen.append(out), always_call=True)
    with pytest.raises(ValueError):
        b(1)
    assert seen == [None]


def test_repr_matches_torch():
    def build(n):
        return n.Sequential(
            n.Linear(5, 4), n.Conv2d(3, 4, 3, stride=2, padding=1, bias=False), n.Conv1d(3, 4, 3, padding_mode="reflect", dilation=2),
            n.ConvTranspose2d(4, 2, 3, output_padding=1, stride=2), n.Embedding(5, 3, padding_idx=1), n.Bilinear(2, 3, 4),
            n.LayerNorm((3, 4)), n.GroupNorm(2, 4), n.PReLU(3), n.RNNCell(3, 4, nonlinearity="relu"), n.LSTMCell(3, 4, bias=False),
            n.GRUCell(3, 4), n.Dropout(0.2), n.Flatten(), n.Unflatten(1, (2, 3)), n.Identity(), n.ReLU(inplace=True),
            n.GELU("tanh"), n.Softplus(2), n.LeakyReLU(0.2, True), n.ELU(), n.Hardtanh(), n.Softmax(1), n.LogSoftmax(dim=-1),
            n.CrossEntropyLoss(label_smoothing=0.1), n.KLDivLoss(reduction="batchmean"), n.BCEWithLogitsLoss(),
            n.ModuleDict({"a": n.Linear(1, 1)}), n.ModuleList([n.Linear(2, 2), n.Linear(2, 2), n.Tanh()]),
            n.Conv2d(2, 2, 3, padding="same"))
    assert repr(build(nn)) == repr(build(torch.nn))
    pl = nn.ParameterList([nn.Parameter(ampgrad.ones(2, 3)), ampgrad.zeros(3)])
    tpl = torch.nn.ParameterList([torch.nn.Parameter(torch.ones(2, 3)), torch.zeros(3)])
    assert repr(pl) == repr(tpl).replace("torch.", "ampgrad.")


def test_containers():
    a, b, c = nn.Linear(1, 1), nn.ReLU(), nn.Tanh()
    s = nn.Sequential(a, b)
    s.append(c)
    assert len(s) == 3 and s[-1] is c and list(s) == [a, b, c]
    t = s[1:]
    assert isinstance(t, nn.Sequential) and list(t._modules) == ["1", "2"]
    del s[0]
    assert list(s._modules) == ["0", "1"] and s[0] is b
    s.insert(0, a)
    assert list(s) == [a, b, c]
    assert list(s + nn.Sequential(c)) == [a, b, c, c]
    assert s.pop(1) is b and list(s) == [a, c]
    from collections import OrderedDict
    named = nn.Sequential(OrderedDict([("fc", a), ("act", c)]))
    assert named.fc is a and [n for n, _ in named.named_children()] == ["fc", "act"]

    ml = nn.ModuleList([a])
    ml += [b]
    ml.extend([c])
    ml.insert(1, nn.Identity())
    assert len(ml) == 4 and ml[-1] is c and isinstance(ml[1:], nn.ModuleList)
    del ml[1]
    assert list(ml) == [a, b, c] and list(ml._modules) == ["0", "1", "2"]
    with pytest.raises(TypeError):
        ml.extend(3)

    md = nn.ModuleDict({"x": a})
    md["y"] = b
    md.update([("z", c)])
    assert list(md.keys()) == ["x", "y", "z"] and "y" in md and md.pop("y") is b and len(md) == 2

    pl = nn.ParameterList([ampgrad.ones(2)])
    pl.append(nn.Parameter(ampgrad.zeros(1)))
    assert len(pl) == 2 and all(isinstance(p, nn.Parameter) for p in pl)
    m = nn.Module()
    m.pl = pl
    assert [n for n, _ in m.named_parameters()] == ["pl.0", "pl.1"]
    pd = nn.ParameterDict({"w": ampgrad.ones(2)})
    assert isinstance(pd["w"], nn.Parameter) and list(pd.keys()) == ["w"]


def test_conv_transpose_output_size():
    torch.manual_seed(0)
    tm = torch.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1)
    am = nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1)
    copy_weights(am, tm)
    rng = np.random.default_rng(7)
    xa, xt = pair(rng, 1, 2, 4, 4, grad=False)
    assert_close(am(xa, output_size=[8, 8]), tm(xt, output_size=[8, 8]))
    with pytest.raises(ValueError):
        am(xa, output_size=[12, 12])


# ---------------------------------------------------------------- init
INITS = [
    ("uniform_", lambda I, t: I.uniform_(t, -0.3, 0.7)), ("normal_", lambda I, t: I.normal_(t, 0.5, 2.0)),
    ("constant_", lambda I, t: I.constant_(t, 0.25)), ("ones_", lambda I, t: I.ones_(t)), ("zeros_", lambda I, t: I.zeros_(t)),
    ("eye_", lambda I, t: I.eye_(t)),
    ("xavier_uniform_", lambda I, t: I.xavier_uniform_(t, gain=2.0)), ("xavier_normal_", lambda I, t: I.xavier_normal_(t)),
    ("kaiming_uniform_", lambda I, t: I.kaiming_uniform_(t, mode="fan_out", nonlinearity="relu")),
    ("kaiming_normal_", lambda I, t: I.kaiming_normal_(t, a=0.1)),
    ("trunc_normal_", lambda I, t: I.trunc_normal_(t, 0.1, 0.5, -0.4, 0.8)),
    ("trunc_normal_-tail", lambda I, t: I.trunc_normal_(t, 0.0, 1.0, 1.5, 3.0)),
    ("orthogonal_", lambda I, t: I.orthogonal_(t, gain=1.5)),
]


@pytest.mark.parametrize("name,fn", INITS, ids=[i[0] for i in INITS])
def test_init_matches_torch(name, fn):
    torch.manual_seed(7)
    tt = torch.empty(6, 10)
    fn(torch.nn.init, tt)
    ampgrad.manual_seed(7)
    at = ampgrad.empty(6, 10)
    assert fn(nn.init, at) is at
    assert_close(at, tt, rtol=1e-5, atol=1e-6)


def test_init_helpers():
    for nl, p in [("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None), ("relu", None),
                  ("leaky_relu", None), ("leaky_relu", 0.2), ("selu", None)]:
        assert nn.init.calculate_gain(nl, p) == torch.nn.init.calculate_gain(nl, p)
    t = ampgrad.empty(4, 3, 5, 2)
    assert nn.init._calculate_fan_in_and_fan_out(t) == torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(4, 3, 5, 2))
    w = nn.Parameter(ampgrad.empty(3, 3))
    assert_close(nn.init.dirac_(ampgrad.empty(4, 2, 3), groups=2), torch.nn.init.dirac_(torch.empty(4, 2, 3), groups=2))
    nn.init.kaiming_uniform_(w)  # in place on a leaf that requires grad (runs under no_grad)
    assert w.requires_grad and w.grad_fn is None


# ---------------------------------------------------------------- nn.utils
@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf])
def test_clip_grad_norm(norm_type):
    rng = np.random.default_rng(8)
    grads = [rng.standard_normal(s).astype(np.float32) * 3 for s in [(3, 4), (5,), (2, 2, 2)]]
    ps_a = [nn.Parameter(ampgrad.zeros(*g.shape)) for g in grads]
    ps_t = [torch.nn.Parameter(torch.zeros(*g.shape)) for g in grads]
    for pa, pt, g in zip(ps_a, ps_t, grads):
        pa.grad, pt.grad = ampgrad.tensor(g), torch.tensor(g)
    na = nn.utils.clip_grad_norm_(ps_a, 1.5, norm_type)
    nt = torch.nn.utils.clip_grad_norm_(ps_t, 1.5, norm_type)
    assert_close(na, nt)
    for pa, pt in zip(ps_a, ps_t):
        assert_close(pa.grad, pt.grad)


def test_clip_grad_misc():
    p = nn.Parameter(ampgrad.zeros(3))
    p.grad = ampgrad.tensor([1.0, float("inf"), -2.0])
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    p.grad = ampgrad.tensor([3.0, -0.5, -2.0])
    nn.utils.clip_grad_value_(p, 1.0)
    np.testing.assert_allclose(p.grad.numpy(), [1.0, -0.5, -1.0])
    big = nn.Parameter(ampgrad.zeros(2))
    big.grad = ampgrad.tensor([0.1, 0.1])
    nn.utils.clip_grad_norm_(big, 10.0)  # below max_norm: unchanged up to the 1e-6 guard
    np.testing.assert_allclose(big.grad.numpy(), [0.1, 0.1], rtol=1e-6)
    assert float(nn.utils.clip_grad_norm_([nn.Parameter(ampgrad.zeros(1))], 1.0)) == 0.0


def test_parameters_vector_round_trip():
    m = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    v = nn.utils.parameters_to_vector(m.parameters())
    assert v.shape == (11,)
    ref = torch.nn.utils.parameters_to_vector([torch.tensor(p.detach().numpy()) for p in m.parameters()])
    assert_close(v, ref)
    nn.utils.vector_to_parameters(ampgrad.arange(11.0), m.parameters())
    np.testing.assert_array_equal(m[0].weight.detach().numpy().ravel(), np.arange(6.0))
    assert isinstance(m[0].weight, nn.Parameter)
    with pytest.raises(TypeError):
        nn.utils.vector_to_parameters([1.0], m.parameters())


def test_training_loop_matches_torch():
    """A small conv net trained for a few steps with SGD: same losses and weights as torch."""
    def build(L):
        n = L.nn
        return n.Sequential(n.Conv2d(1, 4, 3, padding=1), n.GroupNorm(2, 4), n.ReLU(), n.Flatten(), n.Linear(64, 3))

    rng = np.random.default_rng(9)
    xs = rng.standard_normal((5, 8, 1, 4, 4)).astype(np.float32)
    ys = rng.integers(0, 3, (5, 8))
    losses = {}
    for L in (torch, ampgrad):
        L.manual_seed(0)
        m = build(L)
        opt = L.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        losses[L.__name__] = []
        for x, y in zip(xs, ys):
            opt.zero_grad()
            loss = L.nn.functional.cross_entropy(m(L.tensor(x)), L.tensor(y))
            loss.backward()
            opt.step()
            losses[L.__name__].append(loss.item())
        losses[L.__name__ + "_w"] = [p.detach().numpy() for p in m.parameters()]
    np.testing.assert_allclose(losses["ampgrad"], losses["torch"], rtol=1e-5)
    for a, t in zip(losses["ampgrad_w"], losses["torch_w"]):
        np.testing.assert_allclose(a, t, rtol=1e-4, atol=1e-6)


def test_gradient_penalty_double_backward():
    """SPEC 4.4: grads with create_graph=True, a penalty on their norm, and a second backward through
    convolutions, norms and the loss; same parameter gradients as torch."""
    def run(L):
        L.manual_seed(0)
        n = L.nn
        m = n.Sequential(n.Conv2d(2, 3, 3, padding=1), n.GroupNorm(1, 3), n.GELU(), n.ConvTranspose2d(3, 2, 2, stride=2),
                         n.Flatten(), n.Linear(2 * 8 * 8, 5), n.LayerNorm(5))
        rng = np.random.default_rng(0)
        x = L.tensor(rng.standard_normal((4, 2, 4, 4)).astype(np.float32))
        y = L.tensor(rng.integers(0, 5, 4))
        loss = L.nn.functional.cross_entropy(m(x), y, label_smoothing=0.1)
        grads = L.autograd.grad(loss, list(m.parameters()), create_graph=True)
        penalty = L.stack([g.pow(2).sum() for g in grads]).sum().sqrt()
        (loss + penalty).backward()
        return [p.grad for p in m.parameters()]

    for ga, gt in zip(run(ampgrad), run(torch)):
        assert_close(ga, gt, rtol=1e-4, atol=1e-5)
