"""Autocast: the policy table against the reference lists, output dtypes against torch, bitwise
equality with hand casts, nesting/decorator/thread-locality, the cast cache, and errors."""
import threading
import warnings

import numpy as np
import pytest

import ampgrad as ag
from ampgrad import _C

import amp_lists as L


def _policies():
    return {name: (cpu, cuda) for name, _, cpu, cuda, _ in _C._op_table()}


def test_policy_table_matches_reference_lists():
    pol = _policies()
    expected = {}
    for dev, lists in (("cuda", [(L.CUDA_LOWER, "lower_precision_fp"), (L.CUDA_FP32, "fp32"),
                                 (L.CUDA_PROMOTE, "promote"), (L.CUDA_BANNED, "banned")]),
                       ("cpu", [(L.CPU_LOWER, "lower_precision_fp"), (L.CPU_FP32, "fp32"),
                                (L.CPU_PROMOTE, "promote")])):
        for names, kind in lists:
            for n in names:
                expected[(dev, L.ALIASES.get(n, n))] = kind
    for n in L.CUDA_SET_OPT:
        expected[("cuda", n)] = "fp32_set_opt_dtype"
    for n in L.CUDA_APPEND:
        expected[("cuda", n)] = "fp32_append_dtype"
    checked = 0
    for (dev, name), kind in expected.items():
        if name not in pol:
            continue
        got = pol[name][0 if dev == "cpu" else 1]
        assert got == kind, f"{dev} {name}: op table says {got}, reference list says {kind}"
        checked += 1
    # Every op with a policy in the table must be in a list (no invented policies).
    for name, (cpu, cuda) in pol.items():
        if cpu != "none":
            assert expected.get(("cpu", name)) == cpu, f"cpu {name} has policy {cpu} not in the reference lists"
        if cuda != "none":
            assert expected.get(("cuda", name)) == cuda, f"cuda {name} has policy {cuda} not in the reference lists"
    listed = {n for (_, n) in expected}
    print(f"\nautocast lists: {len(listed & set(pol))} of {len(listed)} listed ops exist in ampgrad; {checked} policies checked")
    assert checked >= 60


def _pair(shape=(4, 4), seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape).astype(np.float32), rng.standard_normal(shape).astype(np.float32)


CPU_CASES = {
    "mm": lambda m, a, b: m.mm(a, b),
    "matmul": lambda m, a, b: a @ b,
    "bmm": lambda m, a, b: m.bmm(a.unsqueeze(0), b.unsqueeze(0)),
    "addmm": lambda m, a, b: m.addmm(a, a, b),
    "baddbmm": lambda m, a, b: m.baddbmm(a.unsqueeze(0), a.unsqueeze(0), b.unsqueeze(0)),
    "addbmm": lambda m, a, b: m.addbmm(a, a.unsqueeze(0), b.unsqueeze(0)),
    "linear": lambda m, a, b: m.nn.functional.linear(a, b),
    "prod": lambda m, a, b: m.prod(a),
    "cat": lambda m, a, b: m.cat([a, b.to(m.bfloat16)]),
    "stack": lambda m, a, b: m.stack([a.to(m.bfloat16), b.to(m.bfloat16)]),
    "add (not listed)": lambda m, a, b: a + b.to(m.bfloat16),
    "exp (not listed on cpu)": lambda m, a, b: m.exp(a.to(m.bfloat16)),
    "softmax": lambda m, a, b: m.softmax(a, 1),
    "sum": lambda m, a, b: a.to(m.bfloat16).sum(),
}


@pytest.mark.parametrize("name", list(CPU_CASES))
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_cpu_autocast_output_dtype_matches_torch(name, dtype):
    torch = pytest.importorskip("torch")
    a, b = _pair()
    fn = CPU_CASES[name]
    try:
        with torch.autocast("cpu", dtype=getattr(torch, dtype)):
            ref = fn(torch, torch.tensor(a), torch.tensor(b))
    except RuntimeError as e:  # torch refuses mixed low-precision inputs to promote ops
        with pytest.raises(RuntimeError, match=str(e)[:30]):
            with ag.autocast("cpu", dtype=getattr(ag, dtype)):
                fn(ag, ag.tensor(a), ag.tensor(b))
        return
    with ag.autocast("cpu", dtype=getattr(ag, dtype)):
        out = fn(ag, ag.tensor(a), ag.tensor(b))
    assert repr(out.dtype).split(".")[-1] == str(ref.dtype).split(".")[-1]
    np.testing.assert_allclose(out.float().numpy(), ref.float().numpy(), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("op", ["mm", "matmul", "addmm", "linear"])
def test_autocast_op_is_bitwise_the_hand_cast(op):
    a, b = _pair((8, 8), seed=1)
    x, y = ag.tensor(a), ag.tensor(b)
    f = {"mm": lambda p, q: ag.mm(p, q), "matmul": lambda p, q: p @ q, "addmm": lambda p, q: ag.addmm(p, p, q),
         "linear": lambda p, q: ag.nn.functional.linear(p, q)}[op]
    with ag.autocast("cpu"):
        out = f(x, y)
    ref = f(x.bfloat16(), y.bfloat16())
    assert out.dtype == ag.bfloat16
    assert np.array_equal(out.float().numpy(), ref.float().numpy())


def test_fp32_leaf_gets_fp32_grad_and_backward_runs_without_autocast():
    w = ag.randn(4, 4, requires_grad=True)
    x = ag.randn(3, 4)
    with ag.autocast("cpu"):
        y = x @ w
        assert y.dtype == ag.bfloat16
        loss = y.float().sum()
    loss.backward()
    assert w.grad.dtype == ag.float32
    # The gradient equals the bf16 computation's: x^T (bf16) @ ones.
    ref = (x.bfloat16().t() @ ag.ones(3, 4, dtype=ag.bfloat16)).float()
    assert np.array_equal(w.grad.numpy(), ref.numpy())


def test_integer_and_float64_pass_through():
    d = ag.randn(3, 3, dtype=ag.float64)
    with ag.autocast("cpu"):
        assert ag.mm(d, d).dtype == ag.float64
        i = ag.ones(3, 3, dtype=ag.int64)
        assert ag.mm(i, i).dtype == ag.int64


def test_inplace_ops_are_not_autocast():
    a = ag.randn(4, 4)
    with ag.autocast("cpu"):
        b = a.clone()
        b.add_(1.0)
        assert b.dtype == ag.float32


def test_nesting_restores_state_and_disabled_subregion():
    a = ag.randn(4, 4)
    assert not ag.is_autocast_enabled("cpu")
    with ag.autocast("cpu"):
        assert (a @ a).dtype == ag.bfloat16
        with ag.autocast("cpu", enabled=False):
            assert not ag.is_autocast_enabled("cpu")
            assert (a @ a).dtype == ag.float32
        with ag.autocast("cpu", dtype=ag.float16):
            assert (a @ a).dtype == ag.float16
        assert ag.get_autocast_dtype("cpu") == ag.bfloat16
        assert (a @ a).dtype == ag.bfloat16
    assert not ag.is_autocast_enabled("cpu")


def test_state_restored_on_exception():
    with pytest.raises(ValueError):
        with ag.autocast("cpu"):
            raise ValueError("x")
    assert not ag.is_autocast_enabled("cpu")
    assert _C._autocast_cache_size() == 0


def test_decorator():
    @ag.autocast("cpu")
    def f(x):
        return x @ x
    assert f(ag.randn(2, 2)).dtype == ag.bfloat16
    assert not ag.is_autocast_enabled("cpu")


def test_autocast_state_is_thread_local():
    seen = {}

    def worker():
        seen["enabled"] = ag.is_autocast_enabled("cpu")
        a = ag.randn(2, 2)
        seen["dtype"] = (a @ a).dtype

    with ag.autocast("cpu"):
        t = threading.Thread(target=worker)
        t.start()
        t.join()
    assert seen == {"enabled": False, "dtype": ag.float32}


def test_cast_cache_reuses_weight_cast_and_clears_on_exit():
    w = ag.randn(4, 4, requires_grad=True)
    x = ag.randn(2, 4)
    with ag.autocast("cpu"):
        x @ w
        assert _C._autocast_cache_size() == 1
        x @ w
        assert _C._autocast_cache_size() == 1
        with ag.autocast("cpu"):
            x @ w
        assert _C._autocast_cache_size() == 1  # inner exit is not the outermost
    assert _C._autocast_cache_size() == 0


def test_cast_cache_disabled_and_non_leaf_not_cached():
    w = ag.randn(4, 4, requires_grad=True)
    with ag.autocast("cpu", cache_enabled=False):
        w @ w
        assert _C._autocast_cache_size() == 0
    with ag.autocast("cpu"):
        v = w * 2  # not a leaf: its cast is never cached
        v @ v
        assert _C._autocast_cache_size() == 0
        w @ v
        assert _C._autocast_cache_size() == 1


def test_no_grad_cast_is_not_cached_without_history():
    """torch #158232: a weight first cast under no_grad was cached without history and the next
    forward in the same region silently produced no gradient."""
    w = ag.randn(4, 4, requires_grad=True)
    x = ag.randn(2, 4)
    with ag.autocast("cpu"):
        with ag.no_grad():
            x @ w
        assert _C._autocast_cache_size() == 0
        y = (x @ w).float().sum()
    y.backward()
    assert w.grad is not None and w.grad.abs().sum().item() > 0


def test_no_caching_in_inference_mode_and_no_memory_growth():
    w = ag.randn(8, 8, requires_grad=True)
    x = ag.randn(2, 8)
    with ag.autocast("cpu"):
        with ag.inference_mode():
            for _ in range(2000):
                x @ w
            assert _C._autocast_cache_size() == 0
        with ag.no_grad():
            for _ in range(2000):
                x @ w
        assert _C._autocast_cache_size() == 0


def test_bad_device_type_and_dtype():
    with pytest.raises(RuntimeError, match="device type"):
        ag.autocast("foo")
    with pytest.raises(ValueError, match="device_type"):
        ag.autocast(1)
    with pytest.warns(UserWarning, match="CPU Autocast only supports"):
        a = ag.autocast("cpu", dtype=ag.float64)
    with a:
        assert not ag.is_autocast_enabled("cpu")
    if not ag.cuda.is_available():
        with pytest.warns(UserWarning, match="CUDA is not available"):
            ag.autocast("cuda")


def test_deprecated_aliases_warn():
    with pytest.warns(FutureWarning, match="torch.cpu.amp.autocast"):
        ctx = ag.cpu.amp.autocast()
    with ctx:
        assert ag.is_autocast_enabled("cpu")
    with pytest.warns(FutureWarning):
        ag.cuda.amp.autocast()


def test_state_functions():
    assert ag.get_autocast_cpu_dtype() == ag.bfloat16
    assert ag.get_autocast_gpu_dtype() == ag.float16
    assert ag.amp.is_autocast_available("cpu") and ag.amp.is_autocast_available("cuda")
    assert not ag.amp.is_autocast_available("foo")
    ag.set_autocast_dtype("cpu", ag.float16)
    try:
        assert ag.get_autocast_dtype("cpu") == ag.float16
    finally:
        ag.set_autocast_dtype("cpu", ag.bfloat16)
    assert ag.is_autocast_cache_enabled()


def test_custom_fwd_cast_inputs_and_custom_bwd():
    seen = {}

    class MyMM(ag.autograd.Function):
        @staticmethod
        @ag.amp.custom_fwd(device_type="cpu", cast_inputs=ag.float32)
        def forward(ctx, a, b):
            seen["fwd"] = (a.dtype, b.dtype, ag.is_autocast_enabled("cpu"))
            ctx.save_for_backward(a, b)
            return a.mm(b)

        @staticmethod
        @ag.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            seen["bwd"] = ag.is_autocast_enabled("cpu")
            a, b = ctx.saved_tensors
            return g.mm(b.t()), a.t().mm(g)

    a = ag.randn(3, 3, dtype=ag.bfloat16, requires_grad=True)
    b = ag.randn(3, 3, requires_grad=True)
    with ag.autocast("cpu"):
        out = MyMM.apply(a, b)
    assert out.dtype == ag.float32
    assert seen["fwd"] == (ag.float32, ag.float32, False)
    out.sum().backward()
    assert seen["bwd"] is False
    assert a.grad.dtype == ag.bfloat16 and b.grad.dtype == ag.float32
    # Outside autocast, custom_fwd is a no-op.
    MyMM.apply(a.detach(), b.detach().bfloat16())
    assert seen["fwd"] == (ag.bfloat16, ag.bfloat16, False)


def test_custom_fwd_without_args_keeps_autocast_in_backward():
    seen = {}

    class F(ag.autograd.Function):
        @staticmethod
        @ag.amp.custom_fwd(device_type="cpu")
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a.mm(b)

        @staticmethod
        @ag.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            seen["bwd"] = ag.is_autocast_enabled("cpu")
            a, b = ctx.saved_tensors
            return g.mm(b.t()), a.t().mm(g)

    a = ag.randn(3, 3, requires_grad=True)
    b = ag.randn(3, 3, requires_grad=True)
    with ag.autocast("cpu"):
        out = F.apply(a, b)
        assert out.dtype == ag.bfloat16
    out.float().sum().backward()
    assert seen["bwd"] is True
    assert a.grad.dtype == ag.float32 and b.grad.dtype == ag.float32


def test_banned_op_raises_only_under_cuda_autocast():
    pol = _policies()
    assert pol["binary_cross_entropy"] == ("fp32", "banned")
