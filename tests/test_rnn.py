"""RNN / LSTM / GRU against torch: the fused cell ops (torch.lstm_cell, gru_cell, rnn_tanh_cell,
rnn_relu_cell: values, gradients, gradcheck and double backward in float64), the modules with torch's
weights loaded through state_dict (outputs, final states, input and parameter gradients; layers,
directions, batch_first, proj_size, unbatched input, packed sequences; float32, float64 and CPU bf16
autocast), nn.utils.rnn's packing helpers, and torch's errors."""
import numpy as np
import pytest

import ampgrad
import ampgrad.nn as nn
from ampgrad.nn.utils import rnn as arnn

torch = pytest.importorskip("torch")
trnn = torch.nn.utils.rnn

TOL = {np.float32: dict(rtol=2e-5, atol=2e-5), np.float64: dict(rtol=1e-10, atol=1e-10)}
ADT = {np.float32: ampgrad.float32, np.float64: ampgrad.float64}
TDT = {np.float32: torch.float32, np.float64: torch.float64}


def npy(t):
    return t.detach().double().cpu().numpy()


def close(a, t, what="", rtol=2e-5, atol=2e-5):
    a, t = npy(a), npy(t)
    assert a.shape == t.shape, f"{what}: shape {a.shape} vs torch {t.shape}"
    np.testing.assert_allclose(a, t, rtol=rtol, atol=atol, err_msg=what)


def pair(rng, shape, dtype=np.float32, grad=True, scale=1.0):
    x = (rng.standard_normal(shape) * scale).astype(dtype)
    return ampgrad.tensor(x, requires_grad=grad), torch.tensor(x, requires_grad=grad)


def modules(kind, dtype=np.float32, **kw):
    torch.manual_seed(0)
    tm = getattr(torch.nn, kind)(**kw).to(TDT[dtype])
    am = getattr(nn, kind)(**kw).to(ADT[dtype])
    sd = tm.state_dict()
    assert list(am.state_dict().keys()) == list(sd.keys())
    for k, v in am.state_dict().items():
        assert tuple(v.shape) == tuple(sd[k].shape), k
    am.load_state_dict({k: ampgrad.tensor(v.detach().numpy()) for k, v in sd.items()})
    return am, tm


def flat_outputs(out):
    """(output tensor, [state tensors]) of a module call (PackedSequence output: its data)."""
    o, h = out
    if isinstance(o, (arnn.PackedSequence, trnn.PackedSequence)):
        o = o.data
    return o, list(h) if isinstance(h, tuple) else [h]


def run_both(am, tm, xa, xt, rng, ha=None, ht=None, dtype=np.float32, tol=None):
    """Forward both, compare outputs and states, backward a random projection of all, compare the
    input / state / parameter gradients."""
    tol = tol or TOL[dtype]
    oa, sa = flat_outputs(am(xa, ha) if ha is not None else am(xa))
    ot, st = flat_outputs(tm(xt, ht) if ht is not None else tm(xt))
    close(oa, ot, "output", **tol)
    for i, (a, t) in enumerate(zip(sa, st)):
        close(a, t, f"state {i}", **tol)
    la, lt = 0, 0
    for a, t in zip([oa] + sa, [ot] + st):
        w = rng.standard_normal(tuple(t.shape)).astype(dtype)
        la = la + (a * ampgrad.tensor(w)).sum()
        lt = lt + (t * torch.tensor(w)).sum()
    la.backward()
    lt.backward()
    for (na, pa), (nt, pt) in zip(am.named_parameters(), tm.named_parameters()):
        assert na == nt
        close(pa.grad, pt.grad, f"grad of {na}", **tol)
    return oa, ot


# ---------------------------------------------------------------- the cell ops
def _cell_args(rng, kind, B, I, H, dtype=np.float64, bias=True):
    G = {"lstm": 4, "gru": 3, "tanh": 1, "relu": 1}[kind] * H
    shapes = [(B, I), (B, H)] + ([(B, H)] if kind == "lstm" else []) + [(G, I), (G, H)] + ([(G,), (G,)] if bias else [])
    return [pair(rng, s, dtype, scale=0.7) for s in shapes]


def _call_cell(m, kind, args):
    fn = {"lstm": m.lstm_cell, "gru": m.gru_cell, "tanh": m.rnn_tanh_cell, "relu": m.rnn_relu_cell}[kind]
    if kind == "lstm":
        return fn(args[0], (args[1], args[2]), *args[3:])
    return fn(*args)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("kind", ["lstm", "gru", "tanh", "relu"])
def test_cell_ops_match_torch(kind, bias, dtype):
    rng = np.random.default_rng(0)
    args = _cell_args(rng, kind, 5, 3, 7, dtype, bias)
    oa = _call_cell(ampgrad, kind, [a for a, _ in args])
    ot = _call_cell(torch, kind, [t for _, t in args])
    oa = oa if isinstance(oa, tuple) else (oa,)
    ot = ot if isinstance(ot, tuple) else (ot,)
    la, lt = 0, 0
    for a, t in zip(oa, ot):
        close(a, t, **TOL[dtype])
        assert a.dtype == ADT[dtype]
        w = rng.standard_normal(tuple(t.shape)).astype(dtype)
        la, lt = la + (a * ampgrad.tensor(w)).sum(), lt + (t * torch.tensor(w)).sum()
    la.backward()
    lt.backward()
    for i, (a, t) in enumerate(args):
        close(a.grad, t.grad, f"grad of argument {i}", **TOL[dtype])


def test_cell_node_names():
    rng = np.random.default_rng(1)
    names = {"lstm": "ThnnFusedLstmCellBackward0", "gru": "ThnnFusedGruCellBackward0", "tanh": "TanhBackward0",
             "relu": "ReluBackward0"}
    for kind, name in names.items():
        out = _call_cell(ampgrad, kind, [a for a, _ in _cell_args(rng, kind, 2, 3, 4)])
        out = out if isinstance(out, tuple) else (out,)
        assert all(o.grad_fn.name() == name for o in out)


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_cell_gradcheck_and_double_backward(kind):
    rng = np.random.default_rng(2)
    args = [a for a, _ in _cell_args(rng, kind, 3, 2, 3)]

    def f(*xs):
        out = _call_cell(ampgrad, kind, list(xs))
        return out if isinstance(out, tuple) else (out,)

    assert ampgrad.autograd.gradcheck(f, args, eps=1e-6, atol=1e-7, rtol=1e-5)
    assert ampgrad.autograd.gradgradcheck(f, args, eps=1e-6, atol=1e-6, rtol=1e-4)


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_cell_double_backward_matches_torch(kind):
    rng = np.random.default_rng(3)
    args = _cell_args(rng, kind, 3, 2, 4)
    res = []
    for m, k in ((ampgrad, 0), (torch, 1)):
        xs = [p[k] for p in args]
        out = _call_cell(m, kind, xs)
        out = out if isinstance(out, tuple) else (out,)
        loss = sum((o * o).sum() for o in out)
        gs = m.autograd.grad(loss, xs, create_graph=True)
        gsum = sum((g * g).sum() for g in gs)
        res.append(m.autograd.grad(gsum, xs))
    for i, (a, t) in enumerate(zip(*res)):
        close(a, t, f"second derivative of argument {i}", rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_cell_special_points(kind):
    # zero input and state, large gates (saturated sigmoid / tanh), unused outputs
    rng = np.random.default_rng(4)
    args = _cell_args(rng, kind, 2, 3, 4, np.float32)
    for scale in (0.0, 40.0):
        xa = [ampgrad.tensor(npy(a) * scale, requires_grad=True) for a, _ in args]
        xt = [torch.tensor(npy(t).astype(np.float32) * scale, requires_grad=True) for _, t in args]
        oa, ot = _call_cell(ampgrad, kind, xa), _call_cell(torch, kind, xt)
        oa, ot = (oa if isinstance(oa, tuple) else (oa,)), (ot if isinstance(ot, tuple) else (ot,))
        for a, t in zip(oa, ot):
            close(a, t, f"scale {scale}")
        oa[0].sum().backward()  # the LSTM's c' unused: an undefined gradient for the second output
        ot[0].sum().backward()
        for i, (a, t) in enumerate(zip(xa, xt)):
            close(a.grad, t.grad, f"scale {scale}: grad of argument {i}", atol=1e-5)


def test_cell_errors():
    rng = np.random.default_rng(5)
    w_ih, w_hh = ampgrad.randn(32, 10), ampgrad.randn(32, 8)
    cases = [
        (lambda m, a, b: m.lstm_cell(a(3, 5), (a(3, 8), a(3, 8)), b(32, 10), b(32, 8)), "inconsistent input_size"),
        (lambda m, a, b: m.lstm_cell(a(3, 10), (a(2, 8), a(3, 8)), b(32, 10), b(32, 8)), "batch size"),
        (lambda m, a, b: m.lstm_cell(a(3, 10), (a(3, 8), a(3, 7)), b(32, 10), b(32, 8)), "hidden1 has inconsistent"),
        (lambda m, a, b: m.gru_cell(a(3, 10), a(3, 7), b(24, 10), b(24, 8)), "hidden0 has inconsistent"),
        (lambda m, a, b: m.lstm_cell(a(3, 10), [a(3, 8)], b(32, 10), b(32, 8)), "expects two hidden states"),
        (lambda m, a, b: m.lstm_cell(a(3, 10), (a(2, 8), a(3, 8)), b(31, 10), b(32, 8)), "weight_ih first dim"),
        (lambda m, a, b: m.gru_cell(a(3, 10), a(3, 8), b(24, 10), b(23, 8)), "weight_hh first dim"),
        (lambda m, a, b: m.rnn_tanh_cell(a(3, 10), a(3, 8), b(9, 10), b(9, 8)), "weight_ih first dim must be 1 *"),
        (lambda m, a, b: m.rnn_relu_cell(a(3, 5), a(3, 4), b(5, 2), b(4, 4)), "weight_ih first dim must be 1 *"),
        (lambda m, a, b: m.gru_cell(a(3, 5), a(3, 4), b(11, 2), b(12, 4)), "input has inconsistent"),
        (lambda m, a, b: m.gru_cell(a(3, 2), a(3, 3), b(11, 2), b(12, 4)), "hidden0 has inconsistent"),
        (lambda m, a, b: m.gru_cell(a(3, 5), a(3, 4), b(12, 2), b(())), "input has inconsistent"),
    ]
    del rng, w_ih, w_hh
    for fn, msg in cases:
        with pytest.raises(RuntimeError) as et:
            fn(torch, lambda *s: torch.zeros(*s), lambda *s: torch.zeros(*s))
        with pytest.raises(RuntimeError) as ea:
            fn(ampgrad, lambda *s: ampgrad.zeros(*s), lambda *s: ampgrad.zeros(*s))
        assert msg in str(et.value) and str(ea.value) == str(et.value)
    for fn in [lambda m: m.lstm_cell("abc", "abc", "abc", "abc"), lambda m: m.lstm_cell(m.zeros(3, 2), "abc", m.zeros(16, 2), m.zeros(16, 4)),
               lambda m: m.lstm_cell(m.zeros(3, 2), (m.zeros(3, 4), "a"), m.zeros(16, 2), m.zeros(16, 4)),
               lambda m: m.gru_cell(m.zeros(3, 2), m.zeros(3, 4), m.zeros(12, 2), m.zeros(12, 4), 3),
               lambda m: m.rnn_tanh_cell(m.zeros(3, 2), 5, m.zeros(4, 2), m.zeros(4, 4))]:
        with pytest.raises(TypeError) as et:
            fn(torch)
        with pytest.raises(TypeError) as ea:
            fn(ampgrad)
        assert str(ea.value) == str(et.value)
    for fn in [lambda m: m.rnn_tanh_cell(m.zeros(3, 5), m.zeros(3, 4), m.zeros(4, 2), m.zeros(())),  # w_hh read first
               lambda m: m.lstm_cell(m.zeros(3, 5), (m.zeros(3, 4), m.zeros(3, 4)), m.zeros(16, 2), m.zeros(())),
               lambda m: m.rnn_tanh_cell(m.zeros(3, 2), m.zeros(3, 4), m.zeros(()), m.zeros(4, 4)),
               lambda m: m.rnn_relu_cell(m.zeros(3), m.zeros(4), m.zeros(4, 3), m.zeros(4, 4))]:
        with pytest.raises(IndexError) as et:
            fn(torch)
        with pytest.raises(IndexError) as ea:
            fn(ampgrad)
        assert str(ea.value) == str(et.value)


# ---------------------------------------------------------------- the modules
CONFIGS = [(kind, layers, bi, bf) for kind in ("RNN", "LSTM", "GRU") for layers in (1, 2) for bi in (False, True)
           for bf in (False, True)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind,layers,bi,bf", CONFIGS)
def test_module_matches_torch(kind, layers, bi, bf, dtype):
    rng = np.random.default_rng(10)
    am, tm = modules(kind, dtype, input_size=4, hidden_size=5, num_layers=layers, bidirectional=bi, batch_first=bf)
    xa, xt = pair(rng, (3, 6, 4) if bf else (6, 3, 4), dtype)
    run_both(am, tm, xa, xt, rng, dtype=dtype)
    close(xa.grad, xt.grad, "input grad", **TOL[dtype])


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_module_with_initial_state_relu_nobias(kind):
    rng = np.random.default_rng(11)
    kw = dict(input_size=3, hidden_size=4, num_layers=2, bidirectional=True, bias=False)
    if kind == "RNN":
        kw["nonlinearity"] = "relu"
    am, tm = modules(kind, np.float64, **kw)
    xa, xt = pair(rng, (5, 2, 3), np.float64)
    ha, ht = pair(rng, (4, 2, 4), np.float64)
    if kind == "LSTM":
        ca, ct = pair(rng, (4, 2, 4), np.float64)
        ha, ht = (ha, ca), (ht, ct)
    run_both(am, tm, xa, xt, rng, ha, ht, dtype=np.float64)
    for a, t in zip(ha if kind == "LSTM" else (ha,), ht if kind == "LSTM" else (ht,)):
        close(a.grad, t.grad, "initial state grad", **TOL[np.float64])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layers,bi", [(1, False), (2, True)])
def test_lstm_proj_size(layers, bi, dtype):
    rng = np.random.default_rng(12)
    am, tm = modules("LSTM", dtype, input_size=4, hidden_size=6, proj_size=3, num_layers=layers, bidirectional=bi)
    xa, xt = pair(rng, (5, 2, 4), dtype)
    ha, ht = pair(rng, (layers * (1 + bi), 2, 3), dtype)
    ca, ct = pair(rng, (layers * (1 + bi), 2, 6), dtype)
    run_both(am, tm, xa, xt, rng, (ha, ca), (ht, ct), dtype=dtype)
    run_both(am, tm, xa.detach(), xt.detach(), rng, dtype=dtype)


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_module_unbatched(kind):
    rng = np.random.default_rng(13)
    am, tm = modules(kind, np.float64, input_size=3, hidden_size=4, num_layers=2, bidirectional=True)
    xa, xt = pair(rng, (5, 3), np.float64)
    oa, ot = run_both(am, tm, xa, xt, rng, dtype=np.float64)
    assert tuple(oa.shape) == (5, 8)
    ha, ht = pair(rng, (4, 4), np.float64)
    if kind == "LSTM":
        ha, ht = (ha, ha * 0.5), (ht, ht * 0.5)
    run_both(am, tm, xa.detach(), xt.detach(), rng, ha, ht, dtype=np.float64)


def _packed(rng, lengths, I, dtype, enforce_sorted):
    seqs = [rng.standard_normal((n, I)).astype(dtype) for n in lengths]
    sa = [ampgrad.tensor(s, requires_grad=True) for s in seqs]
    st = [torch.tensor(s, requires_grad=True) for s in seqs]
    return (arnn.pack_sequence(sa, enforce_sorted=enforce_sorted), trnn.pack_sequence(st, enforce_sorted=enforce_sorted),
            sa, st)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind,bi", [("RNN", False), ("LSTM", False), ("LSTM", True), ("GRU", True), ("RNN", True)])
def test_module_packed(kind, bi, dtype):
    rng = np.random.default_rng(14)
    am, tm = modules(kind, dtype, input_size=3, hidden_size=4, num_layers=2, bidirectional=bi)
    pa, pt, sa, st = _packed(rng, [2, 5, 1, 4, 4], 3, dtype, enforce_sorted=False)
    assert npy(pa.batch_sizes).tolist() == pt.batch_sizes.tolist()
    assert npy(pa.sorted_indices).tolist() == pt.sorted_indices.tolist()
    assert npy(pa.unsorted_indices).tolist() == pt.unsorted_indices.tolist()
    close(pa.data, pt.data)
    outa, outt = am(pa), tm(pt)
    assert isinstance(outa[0], arnn.PackedSequence)
    run_both(am, tm, pa, pt, rng, dtype=dtype)
    for a, t in zip(sa, st):
        close(a.grad, t.grad, "sequence grad", **TOL[dtype])
    # with initial states (permuted by sorted_indices), and sorted input
    D = 2 if bi else 1
    pa = arnn.PackedSequence(pa.data.detach(), pa.batch_sizes, pa.sorted_indices, pa.unsorted_indices)
    pt = trnn.PackedSequence(pt.data.detach(), pt.batch_sizes, pt.sorted_indices, pt.unsorted_indices)
    ha, ht = pair(rng, (2 * D, 5, 4), dtype)
    if kind == "LSTM":
        ca, ct = pair(rng, (2 * D, 5, 4), dtype)
        ha, ht = (ha, ca), (ht, ct)
    run_both(am, tm, pa, pt, rng, ha, ht, dtype=dtype)
    pa, pt, _, _ = _packed(rng, [5, 4, 4, 2, 1], 3, dtype, enforce_sorted=True)
    run_both(am, tm, pa, pt, rng, dtype=dtype)


def test_packed_output_padded_back_matches_torch():
    rng = np.random.default_rng(15)
    am, tm = modules("GRU", np.float32, input_size=3, hidden_size=4, batch_first=True)
    pa, pt, _, _ = _packed(rng, [3, 1, 2], 3, np.float32, enforce_sorted=False)
    (oa, _), (ot, _) = am(pa), tm(pt)
    for bf in (False, True):
        pa_, la = arnn.pad_packed_sequence(oa, batch_first=bf, padding_value=-1.0, total_length=4)
        pt_, lt = trnn.pad_packed_sequence(ot, batch_first=bf, padding_value=-1.0, total_length=4)
        close(pa_, pt_)
        assert npy(la).tolist() == lt.tolist()


def test_dropout_between_layers():
    am = nn.LSTM(3, 4, num_layers=2, dropout=0.5)
    x = ampgrad.randn(5, 2, 3)
    am.eval()
    o1, _ = am(x)
    o2, _ = am(x)
    close(o1, o2)
    am.train()
    o3, _ = am(x)
    assert not np.allclose(npy(o3), npy(o1))  # training: dropout on the first layer's output
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.GRU(3, 4, dropout=0.5)


# ---------------------------------------------------------------- autocast
@pytest.mark.parametrize("kind,kw", [("LSTM", {}), ("LSTM", dict(bidirectional=True, num_layers=2)),
                                     ("LSTM", dict(proj_size=2)), ("GRU", dict(num_layers=2)), ("RNN", {}),
                                     ("RNN", dict(nonlinearity="relu", bidirectional=True))])
def test_module_autocast_bf16(kind, kw):
    rng = np.random.default_rng(16)
    am, tm = modules(kind, np.float32, input_size=4, hidden_size=5, **kw)
    xa, xt = pair(rng, (6, 3, 4))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        ot, st = flat_outputs(tm(xt))
    with ampgrad.autocast("cpu", dtype=ampgrad.bfloat16):
        oa, sa = flat_outputs(am(xa))
    for a, t in zip([oa] + sa, [ot] + st):
        assert str(a.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        close(a, t, rtol=5e-2, atol=5e-2)
    oa.float().sum().backward()
    ot.float().sum().backward()
    for (n, pa), (_, pt) in zip(am.named_parameters(), tm.named_parameters()):
        assert pa.grad.dtype == ampgrad.float32
        close(pa.grad, pt.grad, f"grad of {n}", rtol=1e-1, atol=1e-1)


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_module_autocast_packed(kind):
    rng = np.random.default_rng(17)
    am, tm = modules(kind, np.float32, input_size=3, hidden_size=4)
    pa, pt, _, _ = _packed(rng, [2, 4, 3], 3, np.float32, enforce_sorted=False)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        ot, st = flat_outputs(tm(pt))
    with ampgrad.autocast("cpu", dtype=ampgrad.bfloat16):
        oa, sa = flat_outputs(am(pa))
    for a, t in zip([oa] + sa, [ot] + st):
        assert str(a.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        close(a, t, rtol=5e-2, atol=5e-2)


@pytest.mark.parametrize("kind", ["LSTMCell", "GRUCell", "RNNCell"])
def test_cells_autocast_bf16(kind):
    rng = np.random.default_rng(18)
    am, tm = modules(kind, np.float32, input_size=4, hidden_size=5)
    xa, xt = pair(rng, (3, 4))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        ot = tm(xt)
    with ampgrad.autocast("cpu", dtype=ampgrad.bfloat16):
        oa = am(xa)
    for a, t in zip(oa if isinstance(oa, tuple) else (oa,), ot if isinstance(ot, tuple) else (ot,)):
        assert str(a.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        close(a, t, rtol=3e-2, atol=3e-2)


# ---------------------------------------------------------------- the module API and errors
def test_parameters_and_api():
    for kw in [dict(num_layers=2, bidirectional=True, proj_size=2), dict(bias=False, num_layers=3)]:
        am, tm = modules("LSTM", input_size=3, hidden_size=4, **kw)
        assert [n for n, _ in am.named_parameters()] == [n for n, _ in tm.named_parameters()]
        assert am._flat_weights_names == tm._flat_weights_names
        assert [[tuple(p.shape) for p in ws] for ws in am.all_weights] == [[tuple(p.shape) for p in ws] for ws in tm.all_weights]
        assert repr(am) == repr(tm)
        am.flatten_parameters()
    for kind in ("RNN", "GRU"):
        am, tm = modules(kind, input_size=3, hidden_size=4, num_layers=2, batch_first=True, dropout=0.25)
        assert repr(am) == repr(tm)
    # torch's init: U(-1/sqrt(H), 1/sqrt(H))
    m = nn.GRU(3, 16)
    for p in m.parameters():
        assert float(p.abs().max()) <= 0.25 and float(p.abs().max()) > 0.2
    # the flat weights follow a replaced parameter
    am = nn.LSTM(3, 4)
    am.weight_ih_l0 = nn.Parameter(ampgrad.zeros(16, 3))
    assert am._flat_weights[0] is am.weight_ih_l0
    am.double()
    assert am._flat_weights[0].dtype == ampgrad.float64


def _raises_like(fa, ft):
    try:
        ft()
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)) as ea:
            fa()
        # dtypes print as ampgrad.float64 / torch.float64
        assert str(ea.value).replace("ampgrad.", "torch.") == str(e), (str(ea.value), str(e))
        return
    raise AssertionError("torch did not raise")


def test_module_errors():
    am, tm = modules("LSTM", input_size=10, hidden_size=8)
    cases = [
        lambda m, M: M(m.randn(5, 3, 5)),
        lambda m, M: M(m.randn(5, 10, 3, 2)),
        lambda m, M: M(m.randn(5, 3, 10), (m.randn(1, 4, 8), m.randn(1, 3, 8))),
        lambda m, M: M(m.randn(5, 3, 10), (m.randn(1, 3, 8), m.randn(1, 3, 7))),
        lambda m, M: M(m.randn(5, 3, 10), (m.randn(3, 8), m.randn(3, 8))),
        lambda m, M: M(m.randn(5, 3, 10).double()),
    ]
    for c in cases:
        _raises_like(lambda: c(ampgrad, am), lambda: c(torch, tm))
    ag, tg = modules("GRU", input_size=10, hidden_size=8)
    for c in [lambda m, M: M(m.randn(5, 3, 10), m.randn(2, 3, 8)), lambda m, M: M(m.randn(3, 10), m.randn(1, 3, 8)),
              lambda m, M: M(m.randn(5, 3, 10), m.randn(3, 8)), lambda m, M: M(m.randn(5, 3, 10, 1))]:
        _raises_like(lambda: c(ampgrad, ag), lambda: c(torch, tg))
    ar, tr = modules("RNN", input_size=10, hidden_size=8)
    _raises_like(lambda: ar(ampgrad.randn(5, 3, 10, 1)), lambda: tr(torch.randn(5, 3, 10, 1)))
    for kw in [dict(nonlinearity="x"), dict(proj_size=2), dict(dropout=2.0), dict(hidden_size=0), dict(num_layers=0)]:
        kind = "RNN" if "nonlinearity" in kw else "GRU"
        args = dict(input_size=3, hidden_size=4)
        args.update(kw)
        _raises_like(lambda: getattr(nn, kind)(**args), lambda: getattr(torch.nn, kind)(**args))
    _raises_like(lambda: nn.LSTM(3, 4, proj_size=4), lambda: torch.nn.LSTM(3, 4, proj_size=4))


# ---------------------------------------------------------------- nn.utils.rnn
def test_pack_pad_helpers_match_torch():
    rng = np.random.default_rng(20)
    seqs = [rng.standard_normal((n, 2)).astype(np.float32) for n in (3, 5, 1)]
    sa = [ampgrad.tensor(s, requires_grad=True) for s in seqs]
    st = [torch.tensor(s, requires_grad=True) for s in seqs]
    for bf in (False, True):
        for side in ("right", "left"):
            close(arnn.pad_sequence(sa, batch_first=bf, padding_value=2.5, padding_side=side),
                  trnn.pad_sequence(st, batch_first=bf, padding_value=2.5, padding_side=side))
    for bf in (False, True):
        pa = arnn.pack_padded_sequence(arnn.pad_sequence(sa, batch_first=bf), [3, 5, 1], batch_first=bf, enforce_sorted=False)
        pt = trnn.pack_padded_sequence(trnn.pad_sequence(st, batch_first=bf), [3, 5, 1], batch_first=bf, enforce_sorted=False)
        close(pa.data, pt.data)
        assert npy(pa.batch_sizes).tolist() == pt.batch_sizes.tolist() and pa.batch_sizes.dtype == ampgrad.int64
        (pa.data * ampgrad.arange(18.0).reshape(9, 2)).sum().backward()
        (pt.data * torch.arange(18.0).reshape(9, 2)).sum().backward()
        for a, t in zip(sa, st):
            close(a.grad, t.grad)
        pad_a, len_a = arnn.pad_packed_sequence(pa, batch_first=bf)
        pad_t, len_t = trnn.pad_packed_sequence(pt, batch_first=bf)
        close(pad_a, pad_t)
        assert npy(len_a).tolist() == len_t.tolist()
        for a, t in zip(arnn.unpad_sequence(pad_a, len_a, batch_first=bf), trnn.unpad_sequence(pad_t, len_t, batch_first=bf)):
            close(a, t)
    for a, t in zip(arnn.unpack_sequence(arnn.pack_sequence(sa, enforce_sorted=False)),
                    trnn.unpack_sequence(trnn.pack_sequence(st, enforce_sorted=False))):
        close(a, t)
    p = arnn.pack_sequence(sa, enforce_sorted=False)
    assert p._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
    q = p.double()
    assert q.data.dtype == ampgrad.float64 and q.batch_sizes is p.batch_sizes and p.to(ampgrad.float32) is p
    data, batch_sizes, sorted_indices, unsorted_indices = p
    assert npy(arnn.invert_permutation(sorted_indices)).tolist() == npy(unsorted_indices).tolist()


def test_pack_errors():
    x = (lambda m: m.zeros(4, 3, 2))
    for lengths, kw in [([4, 2, 3], {}), ([4, 3, 0], {}), ([4, 3], {}), ([4, 3, 1], dict(batch_first=True))]:
        _raises_like(lambda: arnn.pack_padded_sequence(x(ampgrad), lengths, **kw),
                     lambda: trnn.pack_padded_sequence(x(torch), lengths, **kw))
    _raises_like(lambda: arnn.pad_sequence([ampgrad.zeros(2)], padding_side="mid"),
                 lambda: trnn.pad_sequence([torch.zeros(2)], padding_side="mid"))
    _raises_like(lambda: arnn.pad_sequence([]), lambda: trnn.pad_sequence([]))
    pa = arnn.pack_sequence([ampgrad.zeros(3, 2), ampgrad.zeros(1, 2)])
    pt = trnn.pack_sequence([torch.zeros(3, 2), torch.zeros(1, 2)])
    _raises_like(lambda: arnn.pad_packed_sequence(pa, total_length=2), lambda: trnn.pad_packed_sequence(pt, total_length=2))


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_module_double_backward_and_forward_ad(kind):
    rng = np.random.default_rng(21)
    am, tm = modules(kind, np.float64, input_size=3, hidden_size=4, num_layers=2, bidirectional=True)
    xa, xt = pair(rng, (4, 2, 3), np.float64)
    res = []
    for m, mod, x in ((ampgrad, am, xa), (torch, tm, xt)):
        out, _ = mod(x)
        params = list(mod.parameters())
        gs = m.autograd.grad((out * out).sum(), [x] + params, create_graph=True)
        res.append(m.autograd.grad(sum((g * g).sum() for g in gs), [x] + params))
    for i, (a, t) in enumerate(zip(*res)):
        close(a, t, f"second derivative {i}", rtol=1e-9, atol=1e-9)
    import ampgrad.autograd.forward_ad as fwAD
    tx = ampgrad.tensor(rng.standard_normal((4, 2, 3)))
    with fwAD.dual_level():
        jt = fwAD.unpack_dual(am(fwAD.make_dual(xa.detach(), tx))[0]).tangent
    eps = 1e-6
    with ampgrad.no_grad():
        fd = (am(xa + eps * tx)[0] - am(xa - eps * tx)[0]) / (2 * eps)
    close(jt, fd, "jvp", rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_partial_backward_then_full_backward(kind):
    # Note [Deferred recurrent weight grad]: a pass that does not need W_hh's gradient (grad w.r.t. the
    # initial state only, graph retained) must not leak into the next pass's weight gradient
    rng = np.random.default_rng(22)
    am, tm = modules(kind, np.float64, input_size=3, hidden_size=4)
    xa, xt = pair(rng, (5, 2, 3), np.float64)
    ha, ht = pair(rng, (1, 2, 4), np.float64)
    hxa, hxt = ((ha, ha * 0.5), (ht, ht * 0.5)) if kind == "LSTM" else (ha, ht)
    oa, ot = am(xa, hxa)[0], tm(xt, hxt)[0]
    ga = ampgrad.autograd.grad(oa[2:].sum(), [ha], retain_graph=True)[0]
    gt = torch.autograd.grad(ot[2:].sum(), [ht], retain_graph=True)[0]
    close(ga, gt, "grad of h0", **TOL[np.float64])
    oa.sum().backward(retain_graph=True)
    ot.sum().backward(retain_graph=True)
    for (n, pa), (_, pt) in zip(am.named_parameters(), tm.named_parameters()):
        close(pa.grad, pt.grad, f"grad of {n}", **TOL[np.float64])
    oa.sum().backward()  # a second full pass accumulates the same again
    ot.sum().backward()
    for (n, pa), (_, pt) in zip(am.named_parameters(), tm.named_parameters()):
        close(pa.grad, pt.grad, f"grad of {n} after two passes", **TOL[np.float64])
