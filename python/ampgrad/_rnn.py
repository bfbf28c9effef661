"""torch's recurrent cells (lstm_cell, gru_cell, rnn_tanh_cell, rnn_relu_cell) and the time loop of
nn.RNN / nn.LSTM / nn.GRU: the gates GEMMs are linear / addmm, the pointwise part of an LSTM or GRU
cell one fused engine op (csrc/ops/rnn.cpp, Note [Fused RNN cells]). A layer computes its input
gates for all time steps in one GEMM, then loops over the steps (packed layout: step t holds the
first batch_sizes[t] rows), as torch's CPU implementation does."""
from . import _C
from ._op_gate import engine_op
from .autograd.function import Function

__all__ = ["lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell"]


def _linear(x, w, b=None):
    return _C._linear(x, w, b)


def _check_cell(input, hiddens, w_ih, w_hh, gates, order):
    # torch 2.13's checks, in its order per cell (order: "w" weights' first dims, "i" input_size, "h" hidden states)
    def weights():
        hidden_size = w_hh.size(1)
        for name, w in (("weight_ih", w_ih), ("weight_hh", w_hh)):
            if w.size(0) != gates * hidden_size:
                raise RuntimeError(f"{name} first dim must be {gates} * hidden_size = {gates * hidden_size}, but got {w.size(0)}")

    def inputs():
        if input.size(1) != w_ih.size(1):
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected {w_ih.size(1)}")

    def hidden():
        hidden_size = w_hh.size(1)
        for i, h in enumerate(hiddens):
            if input.size(0) != h.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{i} batch size {h.size(0)}")
            if h.size(1) != hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {h.size(1)}, expected {hidden_size}")

    if gates != 3:
        w_hh.size(1)  # read before anything else (its IndexError first)
    for step in order:
        {"w": weights, "i": inputs, "h": hidden}[step]()


def _check_types(name, input, hx, w_ih, w_hh, b_ih, b_hh, hx_list=False):
    # torch's argument parser: TypeError naming the argument
    args = (("input", input), ("hx", hx), ("w_ih", w_ih), ("w_hh", w_hh), ("b_ih", b_ih), ("b_hh", b_hh))
    for pos, (arg, v) in enumerate(args, 1):
        if arg == "hx" and hx_list:
            if not isinstance(v, (list, tuple)):
                raise TypeError(f"{name}(): argument 'hx' (position 2) must be tuple of Tensors, not {type(v).__name__}")
            for i, h in enumerate(v):
                if not isinstance(h, _C.Tensor):
                    raise TypeError(f"expected Tensor as element {i} in argument 1, but got {type(h).__name__}")
        elif not isinstance(v, _C.Tensor) and not (v is None and pos > 4):
            raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not {type(v).__name__}")


# The cells keep their rows' autocast policies (lower precision on CUDA; on the CPU their linears are
# cast one by one, as torch's composite cells are).
@engine_op("LSTMCell")
def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    _check_types("lstm_cell", input, hx, w_ih, w_hh, b_ih, b_hh, hx_list=True)
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    h, c = hx
    _check_cell(input, (h, c), w_ih, w_hh, 4, "iwh")
    gates = _linear(h, w_hh, b_hh) + _linear(input, w_ih, b_ih)
    return _C._lstm_cell_fused(gates, c)


@engine_op("GRUCell")
def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    _check_types("gru_cell", input, hx, w_ih, w_hh, b_ih, b_hh)
    _check_cell(input, (hx,), w_ih, w_hh, 3, "ihw")
    return _C._gru_cell_fused(_linear(input, w_ih, b_ih), _linear(hx, w_hh, b_hh), hx)


@engine_op("RNNCell")
def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    _check_types("rnn_tanh_cell", input, hx, w_ih, w_hh, b_ih, b_hh)
    _check_cell(input, (hx,), w_ih, w_hh, 1, "wih")
    return _C.tanh(_linear(hx, w_hh, b_hh) + _linear(input, w_ih, b_ih))


@engine_op("RNNCell")
def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    _check_types("rnn_relu_cell", input, hx, w_ih, w_hh, b_ih, b_hh)
    _check_cell(input, (hx,), w_ih, w_hh, 1, "wih")
    return _C.relu(_linear(hx, w_hh, b_hh) + _linear(input, w_ih, b_ih))


# ---------------------------------------------------------------- the time loop
class _SplitRows(Function):
    """Rows of a 2-D tensor in consecutive pieces, with ONE backward node that concatenates the
    pieces' gradients (per-piece narrow views would each scatter into a full-size zero gradient:
    quadratic in the sequence length)."""

    @staticmethod
    def forward(ctx, x, sizes):
        ctx.shape = x.shape
        out, s = [], 0
        for n in sizes:
            out.append(x.narrow(0, s, n))
            s += n
        return tuple(out)

    @staticmethod
    def backward(ctx, *grads):
        return _C.cat(list(grads), 0), None


def _split_rows(x, sizes):
    if len(sizes) == 1:
        return (x,)
    return _SplitRows.apply(x, sizes)


def _step_fn(mode, w_hh, b_hh, w_hr):
    if mode == "LSTM":
        w_hr_t = w_hr.t() if w_hr is not None else None

        def step(gi, h, c):
            h, c = _C._lstm_cell_fused(_linear(h, w_hh, b_hh) + gi, c)
            if w_hr_t is not None:
                h = _C.matmul(h, w_hr_t)
            return h, c
    elif mode == "GRU":
        def step(gi, h, c):
            return _C._gru_cell_fused(gi, _linear(h, w_hh, b_hh), h), None
    else:
        act = _C.tanh if mode == "RNN_TANH" else _C.relu

        def step(gi, h, c):
            return act(_linear(h, w_hh, b_hh) + gi), None
    return step


def _run_direction(mode, x, sizes, h0, c0, w, reverse):
    """One layer, one direction over packed rows x [N, I] (step t: the next sizes[t] rows). Returns
    (output [N, H_out], h_n [B, H_out], c_n [B, H] or None); h0 / c0 are [B, *] with B = sizes[0]."""
    w_ih, w_hh, b_ih, b_hh, w_hr = w
    step = _step_fn(mode, w_hh, b_hh, w_hr)
    gis = _split_rows(_linear(x, w_ih, b_ih), sizes)
    T = len(sizes)
    outs = [None] * T
    lstm = mode == "LSTM"
    if not reverse:
        h, c, last = h0, c0, sizes[0]
        done_h, done_c = [], []
        for t in range(T):
            bs = sizes[t]
            if bs < last:  # sequences that ended: their final states
                done_h.append(h[bs:last])
                h = h[:bs]
                if lstm:
                    done_c.append(c[bs:last])
                    c = c[:bs]
                last = bs
            h, c = step(gis[t], h, c)
            outs[t] = h
        if done_h:
            h = _C.cat([h] + done_h[::-1], 0)
            if lstm:
                c = _C.cat([c] + done_c[::-1], 0)
    else:
        last = sizes[-1]
        full = h0.size(0)
        h = h0 if last == full else h0[:last]
        c = (c0 if last == full else c0[:last]) if lstm else None
        for t in range(T - 1, -1, -1):
            bs = sizes[t]
            if bs > last:  # sequences that start here (from the end)
                h = _C.cat([h, h0[last:bs]], 0)
                if lstm:
                    c = _C.cat([c, c0[last:bs]], 0)
                last = bs
            h, c = step(gis[t], h, c)
            outs[t] = h
    return _C.cat(outs, 0), h, c


def _rnn_layers(mode, x, sizes, hx, cx, weights, num_layers, num_directions, dropout, training):
    """x [N, I] packed rows; hx [L*D, B, H_out], cx [L*D, B, H] (LSTM) or None; weights: per layer and
    direction (w_ih, w_hh, b_ih, b_hh, w_hr). Returns (output [N, D*H_out], h_n, c_n or None)."""
    from .nn import functional as F
    hs, cs = [], []
    for layer in range(num_layers):
        outs = []
        for d in range(num_directions):
            k = layer * num_directions + d
            out, h, c = _run_direction(mode, x, sizes, hx[k], cx[k] if cx is not None else None, weights[k], d == 1)
            outs.append(out)
            hs.append(h)
            cs.append(c)
        x = outs[0] if num_directions == 1 else _C.cat(outs, 1)
        if dropout != 0 and training and layer < num_layers - 1:
            x = F.dropout(x, dropout, True)
    h_n = _C.stack(hs, 0)
    return x, h_n, (_C.stack(cs, 0) if cx is not None else None)


# torch's CPU LSTM runs on oneDNN (mkldnn_rnn_layer, lower precision under CPU autocast) for float32 /
# bfloat16 input without projections or packing: everything, states included, is cast to bf16.
@engine_op("mkldnn_rnn_layer")
def _lstm_mkldnn_layers(x, sizes, hx, cx, flat_weights, bias, num_layers, num_directions, dropout, training):
    return _rnn_layers("LSTM", x, sizes, hx, cx, group_weights(flat_weights, bias, False), num_layers, num_directions,
                       dropout, training)


def group_weights(flat, bias, proj):
    """torch's _flat_weights (per layer and direction: w_ih, w_hh[, b_ih, b_hh][, w_hr]) as
    (w_ih, w_hh, b_ih, b_hh, w_hr) tuples with None for the absent ones."""
    n = 2 + 2 * bool(bias) + bool(proj)
    out = []
    for i in range(0, len(flat), n):
        g = flat[i:i + n]
        out.append((g[0], g[1], g[2] if bias else None, g[3] if bias else None, g[-1] if proj else None))
    return out
