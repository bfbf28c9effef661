"""torch's recurrent cells (lstm_cell, gru_cell, rnn_tanh_cell, rnn_relu_cell): the gates GEMMs are
linear ops, the pointwise part of an LSTM or GRU cell one fused engine op (csrc/ops/rnn.cpp, Note
[Fused RNN cells]). nn.RNN / LSTM / GRU (nn/modules/rnn.py) loop over time steps on the same ops."""
from . import _C
from ._op_gate import engine_op

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
