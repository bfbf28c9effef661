"""RNN, LSTM, GRU and their cells: torch's gate layouts (weight_ih [G*H, I], gates i|f|g|o for LSTM and
r|z|n for GRU), parameter names (weight_ih_l0, weight_hh_l0_reverse, ...), U(-1/sqrt(H), 1/sqrt(H))
init and checks. The cells' math is in ampgrad/_rnn.py (fused cell ops of the engine, Note [Fused RNN
cells]); the modules loop over time steps here."""
import math
import numbers
import warnings
import weakref

from ... import _C
from ... import _rnn
from ..._autocast_state import is_autocast_enabled
from ..._creation import empty, zeros
from ..._op_gate import engine_op
from ...autograd.function import Function
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .._packed_sequence import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


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
        ret = _rnn.rnn_tanh_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh) \
            if self.nonlinearity == "tanh" else \
            _rnn.rnn_relu_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh) \
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
        h1, c1 = _rnn.lstm_cell(input, (h, c), self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
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
        ret = _rnn.gru_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return ret if batched else ret.squeeze(0)


# ---------------------------------------------------------------- the time loop
# A layer computes its input gates for all time steps in one GEMM, then loops over the steps (packed
# layout: step t holds the next batch_sizes[t] rows), as torch's CPU implementation does.
class _SplitRows(Function):
    """Rows of a 2-D tensor in consecutive pieces, with ONE backward node that concatenates the
    pieces' gradients (per-piece narrow views would each scatter into a full-size zero gradient:
    quadratic in the sequence length)."""

    @staticmethod
    def forward(ctx, x, sizes):
        ctx.sizes = sizes
        return _SplitRows._split(x, sizes)

    @staticmethod
    def _split(x, sizes):
        out, s = [], 0
        for n in sizes:
            out.append(x.narrow(0, s, n))
            s += n
        return tuple(out)

    @staticmethod
    def backward(ctx, *grads):
        return _C.cat(list(grads), 0), None

    @staticmethod
    def jvp(ctx, tx, _):
        return _SplitRows._split(tx, ctx.sizes)


class _WeightGradSink:
    """The (grad, h) pairs a layer's steps file in one backward pass (Note [Deferred recurrent weight grad])."""

    def __init__(self, w):
        self.items, self.task = [], None
        # W_hh^T made contiguous once per layer and direction (detached: no graph): every step's
        # h @ W^T then reads it in place, where the GEMM repacked a transposed W at each of the T steps
        # (64 GF/s at batch 32)
        self.wt = w.detach().t().contiguous()

    def file(self, g, h):
        task = _C._current_graph_task_id()
        if task != self.task:  # a new backward pass: drop what an earlier pass filed and did not use
            self.items, self.task = [], task
        self.items.append((g, h))


# Note [Deferred recurrent weight grad]: the recurrent product h_{t-1} @ W_hh^T of every step would give
# W_hh a [G, H] gradient per step from a GEMM over the batch only (K = B: slow), summed step by step. Its
# steps instead file (grad, h) with the layer's sink, and one node that runs after all the steps (a
# zero joined to the layer's input gates) forms dW_hh = cat(grads)^T @ cat(h) with one GEMM. Under
# create_graph every step returns its own (differentiable) weight gradient.
class _RecurrentMM(Function):
    @staticmethod
    def forward(ctx, h, w, sink):
        ctx.save_for_backward(h, w)
        ctx.save_for_forward(h, w)
        ctx.sink = sink
        return _C.mm(h, sink.wt)

    @staticmethod
    def backward(ctx, g):
        h, w = ctx.saved_tensors
        dh = _C.mm(g, w) if ctx.needs_input_grad[0] else None
        dw = None
        if ctx.needs_input_grad[1]:
            if _C.is_grad_enabled():
                dw = _C.mm(g.t(), h)
            else:
                ctx.sink.file(g, h)
        return dh, dw, None

    @staticmethod
    def jvp(ctx, th, tw, _):
        h, w = ctx.saved_tensors
        return _C.mm(th, w.t()) + _C.mm(h, tw.t())


class _DeferredWeightGrad(Function):
    @staticmethod
    def forward(ctx, w, sink):
        ctx.sink = sink
        return zeros((), dtype=w.dtype, device=w.device)

    @staticmethod
    def backward(ctx, g):
        sink = ctx.sink
        if not sink.items or sink.task != _C._current_graph_task_id():
            return None, None
        gs, hs = zip(*sink.items)
        sink.items = []
        return _C.mm(_C.cat(list(gs), 0).t(), _C.cat(list(hs), 0)), None

    @staticmethod
    def jvp(ctx, tw, _):
        return None


def _split_rows(x, sizes):
    if len(sizes) == 1:
        return (x,)
    return _SplitRows.apply(x, sizes)


def _step_fn(mode, w_hh, b_hh, w_hr, sink):
    """The step (gi, h, c) -> (h', c'); with a sink, the recurrent product defers its weight gradient
    and the LSTM / RNN hidden bias is already in gi."""
    if sink is not None:
        def rec(h):
            return _RecurrentMM.apply(h, w_hh, sink)
        rec_b = rec if b_hh is None or mode != "GRU" else (lambda h: rec(h) + b_hh)
    else:
        def rec_b(h):
            return _rnn._linear(h, w_hh, b_hh)
    if mode == "LSTM":
        w_hr_t = w_hr.t() if w_hr is not None else None

        def step(gi, h, c):
            h, c = _C._lstm_cell_fused(rec_b(h) + gi, c)
            if w_hr_t is not None:
                h = _C.matmul(h, w_hr_t)
            return h, c
    elif mode == "GRU":
        def step(gi, h, c):
            return _C._gru_cell_fused(gi, rec_b(h), h), None
    else:
        act = _C.tanh if mode == "RNN_TANH" else _C.relu

        def step(gi, h, c):
            return act(rec_b(h) + gi), None
    return step


def _run_direction(mode, x, sizes, h0, c0, w, reverse, gated=False):
    """One layer, one direction over packed rows x [N, I] (step t: the next sizes[t] rows). Returns
    (output [N, H_out], h_n [B, H_out], c_n [B, H] or None); h0 / c0 are [B, *] with B = sizes[0]."""
    w_ih, w_hh, b_ih, b_hh, w_hr = w
    # Note [Deferred recurrent weight grad]; autocast (outside the LSTM's gate, which has cast everything
    # already: `gated`) casts each linear instead
    defer = _C.is_grad_enabled() and w_hh.requires_grad and (gated or not _autocast_on())
    sink = _WeightGradSink(w_hh) if defer else None
    step = _step_fn(mode, w_hh, b_hh, w_hr, sink)
    if defer and mode != "GRU" and b_hh is not None:
        gi = _rnn._linear(x, w_ih, b_ih + b_hh)
    else:
        gi = _rnn._linear(x, w_ih, b_ih)
    if defer:
        gi = gi + _DeferredWeightGrad.apply(w_hh, sink)
    gis = _split_rows(gi, sizes)
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


def _rnn_layers(mode, x, sizes, hx, cx, weights, num_layers, num_directions, dropout, training, gated=False):
    """x [N, I] packed rows; hx [L*D, B, H_out], cx [L*D, B, H] (LSTM) or None; weights: per layer and
    direction (w_ih, w_hh, b_ih, b_hh, w_hr). Returns (output [N, D*H_out], h_n, c_n or None)."""
    hs, cs = [], []
    for layer in range(num_layers):
        outs = []
        for d in range(num_directions):
            k = layer * num_directions + d
            out, h, c = _run_direction(mode, x, sizes, hx[k], cx[k] if cx is not None else None, weights[k], d == 1, gated)
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
                       dropout, training, gated=True)


def group_weights(flat, bias, proj):
    """torch's _flat_weights (per layer and direction: w_ih, w_hh[, b_ih, b_hh][, w_hr]) as
    (w_ih, w_hh, b_ih, b_hh, w_hr) tuples with None for the absent ones."""
    n = 2 + 2 * bool(bias) + bool(proj)
    out = []
    for i in range(0, len(flat), n):
        g = flat[i:i + n]
        out.append((g[0], g[1], g[2] if bias else None, g[3] if bias else None, g[-1] if proj else None))
    return out


# ---------------------------------------------------------------- RNN, LSTM, GRU
def _apply_permutation(tensor, permutation, dim=1):
    return tensor.index_select(dim, permutation)


def _autocast_on():
    return is_autocast_enabled("cpu") or is_autocast_enabled("cuda")


class RNNBase(Module):
    """Base class of RNN, LSTM and GRU (torch's parameters, flat weights, checks and extra_repr)."""

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
                     "bidirectional", "proj_size"]
    __jit_unused_properties__ = ["all_weights"]

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        self._flat_weight_refs = []
        num_directions = 2 if bidirectional else 1

        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout expects "
                          f"num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(f"batch_first should be of type bool, got: {type(batch_first).__name__}")
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")

        if mode == "LSTM":
            gate_size = 4 * hidden_size
        elif mode == "GRU":
            gate_size = 3 * hidden_size
        elif mode in ("RNN_TANH", "RNN_RELU"):
            gate_size = hidden_size
        else:
            raise ValueError("Unrecognized RNN mode: " + mode)

        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                real_hidden_size = proj_size if proj_size > 0 else hidden_size
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                w_ih = Parameter(empty((gate_size, layer_input_size), **factory_kwargs))
                w_hh = Parameter(empty((gate_size, real_hidden_size), **factory_kwargs))
                b_ih = Parameter(empty(gate_size, **factory_kwargs))
                b_hh = Parameter(empty(gate_size, **factory_kwargs))
                if self.proj_size == 0:
                    layer_params = (w_ih, w_hh, b_ih, b_hh) if bias else (w_ih, w_hh)
                else:
                    w_hr = Parameter(empty((proj_size, hidden_size), **factory_kwargs))
                    layer_params = (w_ih, w_hh, b_ih, b_hh, w_hr) if bias else (w_ih, w_hh, w_hr)
                suffix = "_reverse" if direction == 1 else ""
                param_names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    param_names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if self.proj_size > 0:
                    param_names += ["weight_hr_l{}{}"]
                param_names = [x.format(layer, suffix) for x in param_names]
                for name, param in zip(param_names, layer_params):
                    setattr(self, name, param)
                self._flat_weights_names.extend(param_names)
                self._all_weights.append(param_names)
        self._init_flat_weights()
        self.reset_parameters()

    def _init_flat_weights(self):
        self._flat_weights = [getattr(self, wn) if hasattr(self, wn) else None for wn in self._flat_weights_names]
        self._flat_weight_refs = [weakref.ref(w) if w is not None else None for w in self._flat_weights]
        self.flatten_parameters()

    def __setattr__(self, attr, value):
        if hasattr(self, "_flat_weights_names") and attr in self._flat_weights_names:
            idx = self._flat_weights_names.index(attr)
            self._flat_weights[idx] = value
        super().__setattr__(attr, value)

    def flatten_parameters(self):
        """A no-op: ampgrad's RNNs need no packed weight buffer (torch's is for cuDNN)."""

    def _apply(self, fn, recurse=True):
        self._flat_weight_refs = []
        ret = super()._apply(fn, recurse)
        self._init_flat_weights()
        return ret

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def check_input(self, input, batch_sizes):
        if input.dtype != self._flat_weights[0].dtype and not _autocast_on():
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({self._flat_weights[0].dtype}). "
                             f"Convert input: input.to({self._flat_weights[0].dtype}), or convert model: model.to({input.dtype})")
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        h = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, h)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def _weights_have_changed(self):
        for ref, name in zip(self._flat_weight_refs, self._flat_weights_names):
            weight = getattr(self, name) if hasattr(self, name) else None
            if weight is not None and ref is not None and ref() is not weight:
                return True
        return False

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx, permutation)

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    def _update_flat_weights(self):
        if self._weights_have_changed():
            self._init_flat_weights()

    def __getstate__(self):
        self._update_flat_weights()
        state = self.__dict__.copy()
        state.pop("_flat_weight_refs", None)
        return state

    def __setstate__(self, d):
        super().__setstate__(d)
        self._flat_weights = [getattr(self, wn) if hasattr(self, wn) else None for wn in self._flat_weights_names]
        self._flat_weight_refs = [weakref.ref(w) if w is not None else None for w in self._flat_weights]

    @property
    def all_weights(self):
        return [[getattr(self, weight) for weight in weights] for weights in self._all_weights]

    # ---- the shared forward
    def _run(self, input, hx, cx, batch_sizes):
        """input: [T, B, I] (time-major) or packed rows [N, I]; returns (output, h_n, c_n)."""
        num_directions = 2 if self.bidirectional else 1
        if batch_sizes is not None:
            x, sizes, shape = input, [int(b) for b in batch_sizes.tolist()], None
        else:
            if self.batch_first:
                input = input.transpose(0, 1)
            T, B = input.size(0), input.size(1)
            x, sizes, shape = input.reshape(T * B, input.size(2)), [B] * T, (T, B)
        if not sizes or x.size(0) == 0:
            raise RuntimeError("RNN: the input sequence must not be empty")
        flat = [w for w in self._flat_weights if w is not None]
        if self.mode == "LSTM" and self.proj_size == 0 and batch_sizes is None:
            out, h, c = _lstm_mkldnn_layers(x, sizes, hx, cx, flat, self.bias, self.num_layers, num_directions,
                                                 self.dropout, self.training)
        else:
            weights = group_weights(flat, self.bias, self.proj_size > 0)
            out, h, c = _rnn_layers(self.mode, x, sizes, hx, cx, weights, self.num_layers, num_directions,
                                         self.dropout, self.training)
        if shape is not None:
            out = out.reshape(shape[0], shape[1], out.size(-1))
            if self.batch_first:
                out = out.transpose(0, 1)
        return out, h, c

    def _forward_plain(self, input, hx):
        # RNN and GRU: one hidden state
        self._update_flat_weights()
        num_directions = 2 if self.bidirectional else 1
        orig_input = input
        if isinstance(orig_input, PackedSequence):
            input, batch_sizes, sorted_indices, unsorted_indices = input
            max_batch_size = int(batch_sizes[0])
            if hx is None:
                hx = zeros(self.num_layers * num_directions, max_batch_size, self.hidden_size, dtype=input.dtype,
                           device=input.device)
            else:
                hx = self.permute_hidden(hx, sorted_indices)
        else:
            batch_sizes = None
            name = "RNN" if self.mode.startswith("RNN") else self.mode
            if input.dim() not in (2, 3):
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D "
                                 f"{'tensor ' if name == 'RNN' else ''}instead")
            is_batched = input.dim() == 3
            batch_dim = 0 if self.batch_first else 1
            if not is_batched:
                input = input.unsqueeze(batch_dim)
                if hx is not None:
                    if hx.dim() != 2:
                        raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor")
                    hx = hx.unsqueeze(1)
            else:
                if hx is not None and hx.dim() != 3:
                    raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
            max_batch_size = input.size(0) if self.batch_first else input.size(1)
            sorted_indices = unsorted_indices = None
            if hx is None:
                hx = zeros(self.num_layers * num_directions, max_batch_size, self.hidden_size, dtype=input.dtype,
                           device=input.device)
        self.check_forward_args(input, hx, batch_sizes)
        output, hidden, _ = self._run(input, hx, None, batch_sizes)
        if isinstance(orig_input, PackedSequence):
            return PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices), \
                self.permute_hidden(hidden, unsorted_indices)
        if not is_batched:
            output = output.squeeze(batch_dim)
            hidden = hidden.squeeze(1)
        return output, self.permute_hidden(hidden, unsorted_indices)


class RNN(RNNBase):
    """Elman RNN with tanh or ReLU: h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward_plain(input, hx)


class GRU(RNNBase):
    """Multi-layer GRU (torch's gates: n = tanh(W_in x + b_in + r * (W_hn h + b_hn)))."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward_plain(input, hx)


class LSTM(RNNBase):
    """Multi-layer LSTM, with optional projections (proj_size)."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes), "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes), "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx[0], permutation), _apply_permutation(hx[1], permutation)

    def forward(self, input, hx=None):
        self._update_flat_weights()
        orig_input = input
        batch_sizes = None
        num_directions = 2 if self.bidirectional else 1
        real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        if isinstance(orig_input, PackedSequence):
            input, batch_sizes, sorted_indices, unsorted_indices = input
            max_batch_size = int(batch_sizes[0])
            if hx is None:
                hx = (zeros(self.num_layers * num_directions, max_batch_size, real_hidden_size, dtype=input.dtype,
                            device=input.device),
                      zeros(self.num_layers * num_directions, max_batch_size, self.hidden_size, dtype=input.dtype,
                            device=input.device))
            else:
                hx = self.permute_hidden(hx, sorted_indices)
            self.check_forward_args(input, hx, batch_sizes)
        else:
            if input.dim() not in (2, 3):
                raise ValueError(f"LSTM: Expected input to be 2D or 3D, got {input.dim()}D instead")
            is_batched = input.dim() == 3
            batch_dim = 0 if self.batch_first else 1
            if not is_batched:
                input = input.unsqueeze(batch_dim)
            max_batch_size = input.size(0) if self.batch_first else input.size(1)
            sorted_indices = unsorted_indices = None
            if hx is None:
                hx = (zeros(self.num_layers * num_directions, max_batch_size, real_hidden_size, dtype=input.dtype,
                            device=input.device),
                      zeros(self.num_layers * num_directions, max_batch_size, self.hidden_size, dtype=input.dtype,
                            device=input.device))
                self.check_forward_args(input, hx, batch_sizes)
            else:
                if is_batched:
                    if hx[0].dim() != 3 or hx[1].dim() != 3:
                        raise RuntimeError("For batched 3-D input, hx and cx should also be 3-D but got "
                                           f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                else:
                    if hx[0].dim() != 2 or hx[1].dim() != 2:
                        raise RuntimeError("For unbatched 2-D input, hx and cx should also be 2-D but got "
                                           f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                    hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
                self.check_forward_args(input, hx, batch_sizes)
                hx = self.permute_hidden(hx, sorted_indices)
        output, h, c = self._run(input, hx[0], hx[1], batch_sizes)
        hidden = (h, c)
        if isinstance(orig_input, PackedSequence):
            return PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices), \
                self.permute_hidden(hidden, unsorted_indices)
        if not is_batched:
            output = output.squeeze(batch_dim)
            hidden = (hidden[0].squeeze(1), hidden[1].squeeze(1))
        return output, self.permute_hidden(hidden, unsorted_indices)
