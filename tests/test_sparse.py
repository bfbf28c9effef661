"""Sparse COO tensors (Note [Sparse COO]) against torch: construction and its errors, repr, coalesce,
to_dense / to_sparse, mm in both orders with gradients to the dense operand and to the values, add, scalar
ops, sums, and pytorch/examples' GCN (gcn/main.py: its normalization and GraphConv on a synthetic graph)
giving torch's losses and weights."""
import warnings

import numpy as np
import pytest

import ampgrad

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sparse invariant checks")
        yield


IDX = np.array([[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]], dtype=np.int32)  # (0, 2) twice: uncoalesced
VAL = np.array([3., -4., 5., 1., 0.5], dtype=np.float32)


def _both(fn):
    return fn(torch), fn(ampgrad)


def _eq(a, b, tol=0.0):
    if isinstance(a, torch.Tensor) and a.is_sparse:
        assert b.is_sparse and tuple(a.shape) == tuple(b.shape) and a._nnz() == b._nnz()
        np.testing.assert_array_equal(a._indices().numpy(), b._indices().numpy())
        a, b = a._values(), b._values()
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=tol, atol=tol)


def test_construct_repr_and_metadata():
    for kw in ({}, {"dtype": "int64"}, {"dtype": "float64", "requires_grad": True}):
        def make(L):
            k = {n: (getattr(L, v) if n == "dtype" else v) for n, v in kw.items()}
            return L.sparse_coo_tensor(IDX, L.tensor(VAL), (3, 3), **k)
        t, a = _both(make)
        assert repr(a).replace("ampgrad.", "torch.") == repr(t)
        assert a.is_sparse and not a.is_coalesced() and a.layout is ampgrad.sparse_coo
        assert (a.sparse_dim(), a.dense_dim(), a._nnz(), a.dim(), tuple(a.shape)) == (2, 0, 5, 2, (3, 3))
        _eq(t._indices(), a._indices())
        _eq(t._values(), a._values())
    # size inferred, hybrid values, empty
    t, a = _both(lambda L: L.sparse_coo_tensor(L.tensor([[0, 3]]), L.ones(2, 2)))
    assert repr(a).replace("ampgrad.", "torch.") == repr(t) and tuple(a.shape) == (4, 2)
    t, a = _both(lambda L: L.sparse_coo_tensor(L.zeros(2, 0, dtype=L.int64), L.zeros(0), (2, 2)))
    assert repr(a).replace("ampgrad.", "torch.") == repr(t)
    # no sparse dims: every value at the one dense position
    t, a = _both(lambda L: L.sparse_coo_tensor(L.zeros(0, 2, dtype=L.int64), L.tensor([[1., 2, 3], [4, 5, 6]]), (3,)))
    _eq(t.to_dense(), a.to_dense())
    _eq(t.coalesce(), a.coalesce())
    assert ampgrad.ones(2).layout is ampgrad.strided and not ampgrad.ones(2).is_sparse
    assert repr(ampgrad.sparse_coo) == "ampgrad.sparse_coo"


@pytest.mark.parametrize("args", [
    ([[0, 5]], [1., 1.], (3,)),
    ([0, 1], [1., 1.], (3,)),
    ([[0, 1]], [1., 1., 1.], (3,)),
    ([[0, -1]], [1., 1.], (3,)),
    ([[0, 1]], [1., 1.], (3, 3)),
])
def test_construction_errors_as_torch(args):
    idx, val, size = args
    msgs = []
    for L in (torch, ampgrad):
        with pytest.raises(RuntimeError) as e:
            L.sparse_coo_tensor(L.tensor(idx), L.tensor(val), size, check_invariants=True)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_coalesce_to_dense_to_sparse():
    t, a = _both(lambda L: L.sparse_coo_tensor(IDX, L.tensor(VAL), (3, 3)))
    with pytest.raises(RuntimeError, match="Cannot get indices on an uncoalesced tensor"):
        a.indices()
    tc, ac = t.coalesce(), a.coalesce()
    assert ac.is_coalesced()
    _eq(tc, ac)
    _eq(tc.indices(), ac.indices())
    _eq(t.to_dense(), a.to_dense())
    d = np.array([[0, 1.5, 0], [0, 0, 0], [-2, 0, 7]], dtype=np.float32)
    for sd in (None, 1, 2):
        ts, as_ = _both(lambda L: L.tensor(d).to_sparse() if sd is None else L.tensor(d).to_sparse(sd))
        _eq(ts, as_)
        assert as_.is_coalesced() and repr(as_).replace("ampgrad.", "torch.") == repr(ts)
    x = ampgrad.tensor(d)
    assert x.to_dense() is x
    with pytest.raises(TypeError, match="can't convert Sparse layout tensor to numpy"):
        a.numpy()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mm_both_orders_and_gradients(dtype):
    rng = np.random.default_rng(0)
    dense = rng.standard_normal((3, 4))
    left = rng.standard_normal((5, 3))
    mask = np.zeros((3, 3))
    mask[IDX[0], IDX[1]] = 1
    res = {}
    for L in (torch, ampgrad):
        dt = getattr(L, dtype)
        out = []
        for order in ("sparse @ dense", "dense @ sparse"):
            s = L.sparse_coo_tensor(IDX, L.tensor(VAL, dtype=dt), (3, 3), requires_grad=True)
            d = L.tensor(dense if order == "sparse @ dense" else left, dtype=dt, requires_grad=True)
            if order == "sparse @ dense":
                outs = [L.mm(s, d), L.spmm(s, d), L.sparse.mm(s, d), s @ d, s.matmul(d), s.mm(d)]
            else:
                outs = [d @ s, L.mm(d, s)]
            sum(((o * o).sum() for o in outs), L.zeros((), dtype=dt)).backward()
            # torch's gradient of the sparse operand: masked to its pattern when it is mat1, dense when it is
            # mat2 (entries where s stores nothing); ampgrad's is the gradient of the stored values in both orders
            out += outs + [d.grad, s.grad.to_dense() * L.tensor(mask, dtype=dt)]
        res[L] = out
    tol = 1e-5 if dtype == "float32" else 1e-12
    for a, b in zip(res[torch], res[ampgrad]):
        _eq(a, b, tol)


def test_mm_errors_as_torch():
    s_t, s_a = _both(lambda L: L.sparse_coo_tensor(IDX, L.tensor(VAL), (3, 3)))
    for fn in (lambda L, s: L.mm(s, L.ones(4, 2)), lambda L, s: L.mm(s, L.ones(3, 2, dtype=L.float64))):
        msgs = []
        for L, s in ((torch, s_t), (ampgrad, s_a)):
            with pytest.raises(RuntimeError) as e:
                fn(L, s)
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]


def test_add_mul_sum_t():
    t, a = _both(lambda L: L.sparse_coo_tensor(IDX, L.tensor(VAL), (3, 3)))
    ti, ai = _both(lambda L: L.sparse_coo_tensor(IDX, L.ones(5), (3, 3), dtype=L.int64))
    _eq(torch.eye(3) + ti, ampgrad.eye(3) + ai)  # dense + int sparse: a float dense result
    _eq(torch.ones(3, 3) - t, ampgrad.ones(3, 3) - a)
    _eq((t + t * 2).coalesce(), (a + a * 2).coalesce())
    _eq((t - t).coalesce(), (a - a).coalesce())
    _eq((-t).coalesce(), (-a).coalesce())
    _eq((t / 4).to_dense(), (a / 4).to_dense())
    _eq(t.t().to_dense(), a.t().to_dense())
    _eq(t.transpose(0, 1).to_dense(), a.transpose(0, 1).to_dense())
    _eq(t.sum(), a.sum(), 1e-6)
    _eq(torch.sparse.sum(t), ampgrad.sparse.sum(a), 1e-6)
    _eq(torch.sparse.addmm(torch.ones(3, 2), t, torch.ones(3, 2), beta=0.5, alpha=2),
        ampgrad.sparse.addmm(ampgrad.ones(3, 2), a, ampgrad.ones(3, 2), beta=0.5, alpha=2), 1e-6)
    msgs = []
    for L, s in ((torch, t), (ampgrad, a)):
        with pytest.raises(RuntimeError) as e:
            s + L.ones(3, 3)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_dense_ops_refuse_a_sparse_tensor():
    a = ampgrad.sparse_coo_tensor(IDX, ampgrad.tensor(VAL), (3, 3))
    with pytest.raises(NotImplementedError, match="'aten::exp' with arguments from the 'SparseCPU' backend"):
        a.exp()
    with pytest.raises(TypeError):
        ampgrad.exp(a)
    with pytest.raises(NotImplementedError):
        a.view(9)


# --------------------------------------------------------------------------------- pytorch/examples gcn
def _gcn_run(L, feats, edges, labels, epochs=6):
    nn, F = L.nn, L.nn.functional

    class GraphConv(nn.Module):
        def __init__(self, i, o):
            super().__init__()
            self.kernel = nn.Parameter(L.Tensor(i, o))
            self.bias = nn.Parameter(L.Tensor(o))
            with L.no_grad():
                g = np.random.default_rng(i * 31 + o)
                self.kernel.copy_(L.tensor(g.uniform(-0.3, 0.3, (i, o)).astype(np.float32)))
                self.bias.copy_(L.tensor(g.uniform(-0.3, 0.3, o).astype(np.float32)))

        def forward(self, x, adj):
            support = L.mm(x, self.kernel)
            return L.spmm(adj, support) + self.bias

    class GCN(nn.Module):
        def __init__(self, i, h, o):
            super().__init__()
            self.gc1, self.gc2, self.dropout = GraphConv(i, h), GraphConv(h, o), nn.Dropout(0.0)

        def forward(self, x, adj):
            return F.log_softmax(self.gc2(self.dropout(F.relu(self.gc1(x, adj))), adj), dim=1)

    # load_cora's preprocessing, as written there
    features = L.FloatTensor(feats)
    scale = 1 / L.sum(features, dim=1)
    scale[scale == float("inf")] = 0
    features = L.diag(scale).to_sparse() @ features
    V, E = feats.shape[0], edges.shape[0]
    adj = L.sparse_coo_tensor(edges.T, L.ones(E), (V, V), dtype=L.int64)
    adj = L.eye(V) + adj
    deg = L.sqrt(1 / L.sum(adj, dim=1))
    deg[deg == float("inf")] = 0
    deg = L.diag(deg).to_sparse()
    adj = deg @ adj @ deg
    features, adj = features.to_sparse(), adj.to_sparse()
    model = GCN(feats.shape[1], 8, 3)
    opt = L.optim.Adam(model.parameters(), lr=0.05, weight_decay=5e-4)
    y = L.LongTensor(labels)
    losses = []
    for _ in range(epochs):
        model.train()
        opt.zero_grad()
        loss = nn.NLLLoss()(model(features, adj)[:20], y[:20])
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().numpy().copy() for p in model.parameters()]


def test_gcn_example_matches_torch():
    g = np.random.default_rng(3)
    feats = (g.random((40, 12)) < 0.3).astype(np.int32)
    feats[5] = 0  # a node without features: its scale is inf -> 0
    edges = g.integers(0, 40, (90, 2)).astype(np.int32)
    labels = g.integers(0, 3, 40)
    lt, wt = _gcn_run(torch, feats, edges, labels)
    la, wa = _gcn_run(ampgrad, feats, edges, labels)
    np.testing.assert_allclose(la, lt, rtol=1e-5)
    assert lt[-1] < lt[0]
    for a, b in zip(wa, wt):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_factory_layout_argument():
    assert ampgrad.zeros(2, layout=ampgrad.strided).shape == (2,)
    assert ampgrad.strided is ampgrad.sparse.strided and isinstance(ampgrad.sparse_coo, ampgrad.layout)
    for make in (lambda L: L.zeros(2, 2, layout=L.sparse_coo), lambda L: L.ones_like(L.ones(2), layout=L.sparse_coo),
                 lambda L: L.hann_window(4, layout=L.sparse_coo)):
        with pytest.raises(NotImplementedError, match="sparse_coo_tensor"):
            make(ampgrad)  # torch makes a sparse tensor here; ampgrad says so instead of returning a dense one
    msgs = []
    for L in (torch, ampgrad):
        with pytest.raises(TypeError) as e:
            L.ones(2, layout=3)
        msgs.append(str(e.value))
    assert msgs[1] in msgs[0]  # torch: "ones(): argument 'layout' must be torch.layout, not int"
