"""The AMP inspector (issue 18 point 1): per-op dtype counts and reasons from the autocast gate's
seam, the first inf/NaN in forward and backward with its module path, per-module statistics, the
text / JSON / figure reports; models built to overflow at a known layer."""
import json

import numpy as np
import pytest

import ampgrad as ag
from ampgrad.amp import debug

nn = ag.nn


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc1 = nn.Linear(d, d)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(d, d)

    def forward(self, x):
        return x + self.fc2(self.act(self.fc1(x)))


class Gain(nn.Module):
    def __init__(self, g):
        super().__init__()
        self.g = g

    def forward(self, x):
        return x * self.g


class Encoder(nn.Module):
    def __init__(self, d, n):
        super().__init__()
        self.layers = nn.ModuleList([Block(d) for _ in range(n)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class Net(nn.Module):
    def __init__(self, d=16, n=4):
        super().__init__()
        self.encoder = Encoder(d, n)
        self.head = nn.Linear(d, 1)

    def forward(self, x):
        return self.head(self.encoder(x))


def _net(seed=0, **kw):
    ag.manual_seed(seed)
    return Net(**kw)


def test_op_table_counts_dtypes_reasons_and_cache():
    net = _net()
    x = ag.randn(8, 16)
    with debug.inspect(net) as insp:
        with ag.autocast("cpu", dtype=ag.bfloat16):
            for _ in range(2):  # the second forward reuses the cached bf16 weights
                net(x).float().sum().backward()
            with ag.autocast("cpu", enabled=False):
                net(x)  # autocast off: not recorded
            y = ag.randn(4, 4, dtype=ag.float64) @ ag.randn(4, 4, dtype=ag.float64)  # not eligible
    rep = insp.report()
    n_linear = 2 * 9
    ops = rep.ops
    mm_name = [k for k in ops if k in ("linear", "addmm")]
    assert mm_name, ops
    lin = ops[mm_name[0]]
    assert lin.get("bfloat16") == n_linear, ops
    assert ops["matmul"] == {"float64": 1}, ops
    reasons = rep.reasons[mm_name[0]]
    # first forward: the weights and biases are cast (and the fp32 inputs of the 4 fc1 and the head,
    # the fc2 inputs are already bf16); second forward: weight and bias come from the cast cache
    first = sum(n for why, n in reasons.items() if "cast cache" not in why)
    cached = sum(n for why, n in reasons.items() if "2 from the cast cache" in why)
    assert first == 9 and cached == 9, reasons
    assert sum(n for why, n in reasons.items() if "cast 3 of 3" in why) == 2 * 5, reasons
    assert sum(n for why, n in reasons.items() if "cast 2 of 3" in why) == 2 * 4, reasons
    assert any("no eligible input" in why for why in rep.reasons["matmul"])
    assert y.dtype == ag.float64
    # off: nothing is recorded by the seam
    with ag.autocast("cpu", dtype=ag.bfloat16):
        net(x)
    assert ag._C._amp_inspect_take() == []


def test_first_inf_forward_at_known_layer_fp16():
    net = _net()
    with ag.no_grad():
        net.encoder.layers[2].fc2.weight.mul_(1e5)
    x = ag.randn(8, 16)
    with debug.inspect(net) as insp:
        with ag.autocast("cpu", dtype=ag.float16):
            out = net(x)
    assert not bool(out.isfinite().all())
    rep = insp.report()
    f = rep.first_nonfinite_forward
    assert f is not None
    assert f["module"] == "encoder.layers.2.fc2"
    assert f["op"] in ("addmm", "linear", "mm")  # the kernel that overflowed (fp16 linear: mm, then the bias add)
    assert f["kind"] == "inf"
    # the op's own inputs (the kernel watch): activation, weight, bias, all float16 under autocast
    assert f["inputs_finite"] and set(f["input_dtypes"]) == {"float16"} and len(f["input_dtypes"]) >= 2
    assert f["output_dtype"] == "float16"
    assert 0 < f["input_max_abs"][0] < 65504
    # per-module statistics: the layer before is finite and in range; the overflowing one counts values
    st = rep.modules
    assert st["encoder.layers.1.fc2"]["activation"]["nonfinite"] == 0
    assert st["encoder.layers.2.fc2"]["activation"]["nonfinite"] > 0
    assert st["encoder.layers.1.fc2"]["activation"]["dtypes"] == ["float16"]
    assert rep.first_nonfinite_backward is None


def test_fp16_range_fractions_match_numpy():
    net = _net()
    with ag.no_grad():
        net.encoder.layers[0].fc1.weight.mul_(1e5)  # large but finite in float32
    x = ag.randn(32, 16)
    with debug.inspect(net) as insp:
        h = net.encoder.layers[0].fc1(x)
    a = np.abs(h.detach().numpy().astype(np.float64))
    st = insp.report().modules["encoder.layers.0.fc1"]["activation"]
    np.testing.assert_allclose(st["max_abs"], a.max(), rtol=1e-6)
    np.testing.assert_allclose(st["frac_above_fp16_max"], (a > 65504).mean())
    np.testing.assert_allclose(st["frac_below_fp16_tiny"], ((a < 2.0**-14) & (a > 0)).mean())
    assert st["frac_above_fp16_max"] > 0.1
    assert insp.report().first_nonfinite_forward is None


def test_first_inf_backward_at_known_layer():
    """Forward finite (tiny activations times a 1e5 gain); backward: the gain multiplies the fp16
    gradient flowing back through it past the fp16 maximum, while the weight gradients of the layer
    after it stay in range: the first non-finite gradient comes from the gain's mul."""
    from collections import OrderedDict
    ag.manual_seed(0)
    net = nn.Sequential(OrderedDict(fc1=nn.Linear(16, 16), gain=Gain(1e5), fc2=nn.Linear(16, 4)))
    with ag.no_grad():
        net.fc1.bias.zero_()
        net.fc1.weight.mul_(0.1)
    x = ag.randn(8, 16) * 1e-3
    with debug.inspect(net) as insp:
        with ag.autocast("cpu", dtype=ag.float16):
            out = net(x)
        assert bool(out.isfinite().all())
        (out.float().sum() * 100).backward()
    rep = insp.report()
    assert rep.first_nonfinite_forward is None
    b = rep.first_nonfinite_backward
    assert b is not None, rep.table()
    assert b["module"] == "gain", rep.table()
    assert b["grad_fn"] == "MulBackward0" and b["op"] == "mul"
    assert b["inputs_finite"] and b["input_dtypes"] == ["float16"]
    g = rep.modules["fc2"]["gradient"]
    assert g["calls"] == 1 and g["nonfinite"] == 0 and g["max_abs"] == 100.0
    assert not bool(net.fc1.weight.grad.isfinite().all())
    assert bool(net.fc2.weight.grad.isfinite().all())


def test_reports_text_json_figure(tmp_path):
    net = _net()
    with ag.no_grad():
        net.encoder.layers[3].fc1.weight.mul_(1e5)
    x = ag.randn(8, 16)
    with debug.inspect(net) as insp:
        with ag.autocast("cpu", dtype=ag.float16):
            net(x).float().sum().backward()
    rep = insp.report()
    text = rep.table()
    assert "encoder.layers.3.fc1" in text and "First inf/NaN in forward: inf in module 'encoder.layers.3.fc1'" in text
    d = json.loads(rep.to_json(tmp_path / "r.json"))
    assert d["first_nonfinite_forward"]["module"] == "encoder.layers.3.fc1"
    assert json.loads((tmp_path / "r.json").read_text()) == d
    assert str(rep) == text
    pytest.importorskip("matplotlib")
    fig = rep.plot(tmp_path / "r.png")
    assert (tmp_path / "r.png").stat().st_size > 0
    assert fig is not None


def test_wrapper_hooks_removed_and_single_active():
    net = _net()
    w = debug.wrap(net)
    x = ag.randn(4, 16)
    with ag.autocast("cpu", dtype=ag.bfloat16):
        y = w(x)
    assert y.dtype == ag.bfloat16
    rep = w.report()
    assert "encoder.layers.0.fc1" in rep.modules
    with pytest.raises(RuntimeError, match="already active"):
        debug.inspect(net).start()
    assert w.remove() is net
    assert all(len(m._forward_hooks) == 0 and len(m._forward_pre_hooks) == 0 for m in net.modules())
    with debug.inspect() as insp:  # no model: the op table only
        with ag.autocast("cpu", dtype=ag.bfloat16):
            net(x)
    assert insp.report().modules == {}
    assert sum(insp.report().ops[k].get("bfloat16", 0) for k in insp.report().ops) >= 9


class Squash(nn.Module):
    """Overflows inside (two multiplies) but returns a finite output (tanh(inf) = 1): only an op-level
    watch can name the op; a module-level check sees nothing."""

    def forward(self, x):
        h = x * 1e30
        h = h * 1e30
        return h.tanh()


def test_first_inf_forward_inside_a_module_with_finite_output():
    from collections import OrderedDict
    ag.manual_seed(0)
    net = nn.Sequential(OrderedDict(fc=nn.Linear(8, 8), squash=Squash(), out=nn.Linear(8, 2)))
    x = ag.randn(4, 8)
    with debug.inspect(net) as insp:
        y = net(x)
    assert bool(y.isfinite().all())
    f = insp.report().first_nonfinite_forward
    assert f is not None, insp.report().table()
    assert f["module"] == "squash" and f["op"] == "mul" and f["kind"] == "inf"
    assert f["input_dtypes"] == ["float32"] and f["output_dtype"] == "float32"
    # the input of the second mul: |fc(x)| * 1e30, finite in float32
    h = net.fc(x).detach().numpy().astype(np.float64)
    np.testing.assert_allclose(f["input_max_abs"][0], np.abs(h).max() * 1e30, rtol=1e-6)
    assert f["inputs_finite"]
    assert "op mul" in insp.report().table()


def test_nan_from_finite_inputs_and_ops_outside_modules():
    x = ag.tensor([1.0, -1.0, 4.0])
    with debug.inspect() as insp:
        a = x.exp()            # finite
        b = (a - 10).log()     # log of negatives: NaN, produced here
        c = b * 0              # NaN propagates: not the first
    assert bool(c.isnan().any())
    f = insp.report().first_nonfinite_forward
    assert f["op"] == "log" and f["kind"] == "nan" and f["module"] is None
    assert f["input_dtypes"] == ["float32"]
    np.testing.assert_allclose(f["input_max_abs"][0], np.abs(np.exp([1.0, -1.0, 4.0]) - 10).max(), rtol=1e-6)
    assert "no module (outside the model)" in insp.report().table()


def test_masks_of_minus_inf_are_not_overflows():
    """full(-inf) + triu (a causal mask), masked_fill(-inf), softmax over -inf: fills with the caller's
    value, not overflows; the first inf that an op makes from finite inputs is still found after them."""
    T = 5
    x = ag.randn(2, T, T)
    with debug.inspect() as insp:
        mask = ag.full((T, T), float("-inf")).triu(1)
        att = (x + mask).softmax(-1)
        att2 = x.masked_fill(ag.ones(T, T, dtype=ag.bool).triu(1), float("-inf")).softmax(-1)
        assert bool(att.isfinite().all()) and bool(att2.isfinite().all())
    assert insp.report().first_nonfinite_forward is None, insp.report().table()
    with debug.inspect() as insp:
        ag.full((T, T), float("-inf")).triu(1)
        (x * 1e38).exp()
    f = insp.report().first_nonfinite_forward
    assert f is not None and f["op"] in ("mul", "exp"), f


def test_policy_less_ops_counted_by_dtype():
    net = _net()
    x = ag.randn(8, 16)
    with debug.inspect(net) as insp:
        with ag.autocast("cpu", dtype=ag.bfloat16):
            net(x)
        net(x)  # outside autocast: float32
    rep = insp.report()
    # 4 blocks: one relu and one residual add each, per forward. relu runs in bf16 under autocast (its
    # input is a bf16 linear), float32 after; the residual adds float32 x to a bf16 output: float32 both times
    assert rep.ops["relu"] == {"bfloat16": 4, "float32": 4}, rep.ops.get("relu")
    assert rep.ops["add"] == {"float32": 8}, rep.ops.get("add")
    # nothing else ran (the inspector's own statistics are not counted) but the copies: the gate's casts to
    # bf16 (3 per linear, 2 where the cast cache held the weight) and the linears' own layout copies
    assert set(rep.ops) == {"relu", "add", "linear", "copy"}, sorted(rep.ops)
    casts = sum(n * int(why.split("cast ")[1][0]) for why, n in rep.reasons["linear"].items() if "cast " in why)
    assert casts == 5 * 3 + 4 * 2 and rep.ops["copy"]["bfloat16"] >= casts, (rep.reasons["linear"], rep.ops["copy"])
    assert any("no autocast policy" in why for why in rep.reasons["relu"])
    # ops with a policy are still counted once, by the gate (not again by the watch)
    lin = [k for k in rep.ops if k in ("linear", "addmm")]
    assert lin and sum(rep.ops[lin[0]].values()) == 9, rep.ops
    assert "Ops (calls per dtype the op ran in, and why):" in rep.table()


def test_watch_off_costs_nothing_and_backward_is_not_counted():
    net = _net()
    x = ag.randn(8, 16)
    net(x).sum().backward()  # no inspector: nothing recorded
    assert ag._C._amp_watch_take() == ([], None)
    with debug.inspect(net) as insp:
        net(x).sum().backward()
    rep = insp.report()
    assert rep.ops["relu"] == {"float32": 4}  # threshold_backward etc. are backward kernels: not forward calls
    assert not any("backward" in k for k in rep.ops), sorted(rep.ops)
