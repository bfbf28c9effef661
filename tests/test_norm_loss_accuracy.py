"""bfloat16 accuracy of the fused norms, softmax backward and cross_entropy (csrc/ops/norm.cpp,
csrc/ops/loss.cpp): on the same bf16 inputs, ampgrad's error against a float64 reference (torch in
float64 on the bf16 values) must not exceed torch's own bf16 error by more than one bf16 rounding of
the result. Outputs and gradients are both checked; float32 weights with a bf16 input (the mixed
dtypes torch's CPU norms accept) are covered too."""
import numpy as np
import pytest

import ampgrad as ag

torch = pytest.importorskip("torch")

BF16_ULP = 2.0 ** -8  # one rounding of a bfloat16 value, relative


def _round_bf16(a):
    return torch.tensor(a, dtype=torch.float32).bfloat16().double().numpy()


def _run(lib, fn, arrays, dtypes, gout):
    ts = [lib.tensor(a).to(getattr(lib, dt)).requires_grad_(dt != "int64") if dt != "int64" else lib.tensor(a)
          for a, dt in zip(arrays, dtypes)]
    y = fn(lib, *ts)
    g = lib.tensor(gout).to(y.dtype) if y.dim() else lib.tensor(float(gout)).to(y.dtype)
    grads = lib.autograd.grad([y], [t for t in ts if t.requires_grad], [g])
    to_np = lambda t: t.detach().double().numpy() if lib is torch else np.asarray(t.detach().double().numpy())
    return [to_np(y)] + [to_np(x) for x in grads]


def _errors(outs, refs):
    return [(float(np.abs(o - r).max()) if o.size else 0.0, float(np.abs(o - r).mean()) if o.size else 0.0,
             float(np.abs(r).max()) if r.size else 0.0) for o, r in zip(outs, refs)]


CASES = {
    "layer_norm": (lambda m, x, w, b: m.nn.functional.layer_norm(x, (256,), w, b), [(16, 256), (256,), (256,)], 3.0),
    "layer_norm mixed fp32 weight": (lambda m, x, w, b: m.nn.functional.layer_norm(x, (96,), w, b), [(24, 96), (96,), (96,)], 3.0),
    "rms_norm": (lambda m, x, w: m.nn.functional.rms_norm(x, (128,), w), [(16, 128), (128,)], 3.0),
    "group_norm": (lambda m, x, w, b: m.nn.functional.group_norm(x, 4, w, b), [(4, 8, 6, 5), (8,), (8,)], 3.0),
    "batch_norm": (lambda m, x, w, b: m.nn.functional.batch_norm(x, None, None, w, b, training=True), [(8, 6, 7), (6,), (6,)], 3.0),
    "softmax": (lambda m, x: m.softmax(x, -1), [(32, 128)], 4.0),
    "log_softmax": (lambda m, x: m.log_softmax(x, -1), [(32, 128)], 4.0),
    "softmax dim 1": (lambda m, x: m.softmax(x, 1), [(4, 64, 6)], 4.0),
    "cross_entropy": (lambda m, x, t: m.nn.functional.cross_entropy(x, t), [(64, 65), "labels"], 4.0),
    "cross_entropy sum": (lambda m, x, t: m.nn.functional.cross_entropy(x, t, reduction="sum"), [(64, 65), "labels"], 4.0),
}


@pytest.mark.parametrize("name", list(CASES))
def test_bf16_error_not_worse_than_torch(name):
    fn, shapes, scale = CASES[name]
    rng = np.random.default_rng(abs(hash(name)) % 2 ** 31)
    arrays, dtypes = [], []
    for i, s in enumerate(shapes):
        if s == "labels":
            arrays.append(rng.integers(0, shapes[0][1], shapes[0][0]))
            dtypes.append("int64")
            continue
        a = rng.uniform(-scale, scale, s) + (0.5 if i == 0 else 1.0 if i == 1 else 0.0)
        arrays.append(_round_bf16(a))
        dtypes.append("float32" if "mixed" in name and i > 0 else "bfloat16")
    ref_in = [torch.tensor(a) if dt == "int64" else torch.tensor(a, dtype=torch.float64) for a, dt in zip(arrays, dtypes)]
    y_ref = fn(torch, *[t.requires_grad_(True) if t.is_floating_point() else t for t in ref_in])
    gout = _round_bf16(rng.uniform(-1, 1, tuple(y_ref.shape))) if y_ref.dim() else np.float64(0.75)
    ref_grads = torch.autograd.grad([y_ref], [t for t in ref_in if t.requires_grad],
                                    [torch.tensor(gout, dtype=torch.float64)])
    refs = [y_ref.detach().numpy()] + [g.numpy() for g in ref_grads]
    e_ag = _errors(_run(ag, fn, arrays, dtypes, gout), refs)
    e_t = _errors(_run(torch, fn, arrays, dtypes, gout), refs)
    for k, ((amax, amean, mag), (tmax, tmean, _)) in enumerate(zip(e_ag, e_t)):
        what = "output" if k == 0 else f"grad {k - 1}"
        slack = BF16_ULP * max(mag, 1e-30)
        assert amax <= tmax + slack, f"{name} {what}: max error {amax:.3g} vs torch {tmax:.3g} (|ref| <= {mag:.3g})"
        assert amean <= tmean * 1.1 + slack * 0.1, f"{name} {what}: mean error {amean:.3g} vs torch {tmean:.3g}"
