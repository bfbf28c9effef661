"""torch's own CPU autocast test list (torch.testing._internal.autocast_test_lists.AutocastCPUTestLists,
shipped in the wheel) run against ampgrad (issue 13 point 5): every entry, under autocast("cpu") in
bfloat16 and float16, gives torch's output dtype, torch's values (to a few ulps of the output dtype),
and torch's exception where torch raises. The nn entries call aten's nn ops as torch's test does
(torch._C._nn: ampgrad._C._nn)."""
import os
import sys

import numpy as np
import pytest

import ampgrad

torch = pytest.importorskip("torch")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opinfo_harness as H  # noqa: E402

H.load_op_db()  # stubs expecttest, which torch.testing._internal imports
from torch.testing._internal.autocast_test_lists import AutocastCPUTestLists  # noqa: E402

KINDS = ["torch_expect_builtin_promote", "methods_expect_builtin_promote", "torch_16", "torch_fp32", "nn_16",
         "nn_fp32", "torch_need_autocast_promote"]
_LISTS = AutocastCPUTestLists(torch.device("cpu"))
CASES = [(kind, i, e[0]) for kind in KINDS for i, e in enumerate(getattr(_LISTS, kind))]


def _fn(lib, kind, name):
    if kind.startswith("nn"):
        return getattr(lib._C._nn, name)
    if kind.startswith("methods"):
        return lambda self, *a, **k: getattr(self, name)(*a, **k)
    return getattr(lib, name)


def _call(lib, dtype, fn, args, kwargs):
    try:
        with lib.autocast("cpu", dtype=getattr(lib, dtype)):
            out = fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 -- compared with torch's exception
        return e
    return out if isinstance(out, (tuple, list)) else (out,)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("kind,index,name", CASES, ids=[f"{k}-{n}" for k, _, n in CASES])
def test_autocast_cpu_list_entry(kind, index, name, dtype):
    entry = getattr(_LISTS, kind)[index]
    args = entry[1]
    kwargs = entry[2] if len(entry) > 2 and isinstance(entry[2], dict) else {}
    ref = _call(torch, dtype, _fn(torch, kind, name), args, kwargs)
    got = _call(ampgrad, dtype, _fn(ampgrad, kind, name), H.to_ag(args, {}), H.to_ag(kwargs, {}))
    if isinstance(ref, Exception):
        assert type(got) is type(ref) and str(got) == str(ref), (got, ref)
        return
    assert not isinstance(got, Exception), got
    assert len(got) == len(ref)
    for k, (g, r) in enumerate(zip(got, ref)):
        assert str(g.dtype).split(".")[-1] == str(r.dtype).split(".")[-1], (g.dtype, r.dtype)
        assert tuple(g.shape) == tuple(r.shape)
        if r.numel() == 0:
            continue
        gv, rv = g.detach().float().numpy(), r.detach().float().numpy()
        # a few ulps of the output dtype, relative to the output's scale: the low-precision ops round
        # a float32 accumulation once (ampgrad's is never further from float64 than torch's here)
        eps = {"bfloat16": 2 ** -8, "float16": 2 ** -11}.get(str(r.dtype).split(".")[-1], 2 ** -22)
        scale = float(np.abs(rv).max())
        if np.allclose(gv, rv, rtol=4 * eps, atol=8 * eps * scale + 1e-30):
            continue
        # Where the two differ by more, ampgrad must be the closer to the exact result of the rounded
        # inputs (float64): torch's float16 CPU convolutions accumulate in float16, ampgrad's in float32.
        assert kind.endswith("_16"), f"{name}: values differ (max {np.abs(gv - rv).max()})"
        exact = _fn(torch, kind, name)(*[a.to(getattr(torch, dtype)).double()
                                         if isinstance(a, torch.Tensor) and a.is_floating_point() else a
                                         for a in args], **kwargs)
        exact = (exact if isinstance(exact, (tuple, list)) else (exact,))[k].detach().numpy()
        err_got, err_ref = np.abs(gv - exact), np.abs(rv - exact)
        assert np.all(err_got <= err_ref + 8 * eps * scale), (name, float((err_got - err_ref).max()))
