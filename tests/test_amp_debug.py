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
    assert f["op"] in ("addmm", "linear")
    assert f["kind"] == "inf"
    assert f["inputs_finite"] and f["input_dtypes"] == ["float16"]
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
