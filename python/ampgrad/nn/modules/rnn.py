"""RNNCell, LSTMCell, GRUCell: torch's gate layouts (weight_ih [G*H, I], gates i|f|g|o for LSTM and
r|z|n for GRU), U(-1/sqrt(H), 1/sqrt(H)) init, and the autocast hook of their op rows."""
import math

from ... import _C
from ..._creation import empty, zeros
from ..._op_gate import engine_op
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


class RNNCellBase(Module):
    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(empty(num_chunks * hidden_size, input_size, device=device, dtype=dtype))
        self.weight_hh = Parameter(empty(num_chunks * hidden_size, hidden_size, device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, device=device, dtype=dtype))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _check_input(self, input, hx_list):
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        for h in hx_list:
            if h is not None and h.dim() not in (1, 2):
                raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {h.dim()}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[-1]} expected {self.input_size}")
        return input.dim() == 2

    def _zeros(self, input, batched):
        shape = (input.size(0), self.hidden_size) if batched else (self.hidden_size,)
        return zeros(*shape, dtype=input.dtype, device=input.device)


# The cells' math, one op each (torch's rnn_tanh_cell / rnn_relu_cell / lstm_cell / gru_cell), so that
# autocast casts at the cell (its RNNCell / LSTMCell / GRUCell row, Note [Autocast gate]).
def _gates(x, h, w_ih, w_hh, b_ih, b_hh):
    return F.linear(x, w_ih, b_ih), F.linear(h, w_hh, b_hh)


@engine_op("RNNCell")
def _rnn_tanh_cell(x, h, w_ih, w_hh, b_ih, b_hh):
    gi, gh = _gates(x, h, w_ih, w_hh, b_ih, b_hh)
    return _C.tanh(gi + gh)


@engine_op("RNNCell")
def _rnn_relu_cell(x, h, w_ih, w_hh, b_ih, b_hh):
    gi, gh = _gates(x, h, w_ih, w_hh, b_ih, b_hh)
    return _C.relu(gi + gh)


@engine_op("LSTMCell")
def _lstm_cell(x, hx, w_ih, w_hh, b_ih, b_hh):
    h, c = hx
    gi, gh = _gates(x, h, w_ih, w_hh, b_ih, b_hh)
    i, f, g, o = (gi + gh).chunk(4, 1)
    c1 = _C.sigmoid(f) * c + _C.sigmoid(i) * _C.tanh(g)
    h1 = _C.sigmoid(o) * _C.tanh(c1)
    return h1, c1


@engine_op("GRUCell")
def _gru_cell(x, h, w_ih, w_hh, b_ih, b_hh):
    gi, gh = _gates(x, h, w_ih, w_hh, b_ih, b_hh)
    i_r, i_z, i_n = gi.chunk(3, 1)
    h_r, h_z, h_n = gh.chunk(3, 1)
    r = _C.sigmoid(i_r + h_r)
    z = _C.sigmoid(i_z + h_z)
    n = _C.tanh(i_n + r * h_n)
    return (1 - z) * n + z * h


class RNNCell(RNNCellBase):
    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        batched = self._check_input(input, [hx])
        if hx is None:
            hx = self._zeros(input, batched)
        if not batched:
            input, hx = input.unsqueeze(0), hx.unsqueeze(0)
        ret = _rnn_tanh_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh) \
            if self.nonlinearity == "tanh" else \
            _rnn_relu_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh) \
            if self.nonlinearity == "relu" else None
        if ret is None:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return ret if batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        batched = self._check_input(input, [hx[0], hx[1]] if hx is not None else [])
        if hx is None:
            z = self._zeros(input, batched)
            hx = (z, z)
        h, c = hx
        if not batched:
            input, h, c = input.unsqueeze(0), h.unsqueeze(0), c.unsqueeze(0)
        h1, c1 = _lstm_cell(input, (h, c), self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return (h1, c1) if batched else (h1.squeeze(0), c1.squeeze(0))


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        batched = self._check_input(input, [hx])
        if hx is None:
            hx = self._zeros(input, batched)
        if not batched:
            input, hx = input.unsqueeze(0), hx.unsqueeze(0)
        ret = _gru_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return ret if batched else ret.squeeze(0)
