"""The process-wide surface that scripts touch first, against torch: torch.accelerator,
backends.cudnn / mps / cpu, use_deterministic_algorithms and friends, float32 matmul precision, and
torch.compile (ampgrad's returns the callable itself: eager execution, same results)."""
import warnings

import numpy as np
import pytest

import ampgrad

torch = pytest.importorskip("torch")


@pytest.fixture
def restore_flags():
    det = (ampgrad.are_deterministic_algorithms_enabled(), ampgrad.is_deterministic_algorithms_warn_only_enabled())
    prec = ampgrad.get_float32_matmul_precision()
    tprec = torch.get_float32_matmul_precision()
    cud = ampgrad.backends.cudnn
    saved = (cud.enabled, cud.benchmark, cud.deterministic, cud.allow_tf32)
    yield
    ampgrad.use_deterministic_algorithms(det[0], warn_only=det[1])
    ampgrad.set_float32_matmul_precision(prec)
    torch.set_float32_matmul_precision(tprec)
    cud.enabled, cud.benchmark, cud.deterministic, cud.allow_tf32 = saved


def _cpu_only():
    return not ampgrad.cuda.is_available()


def test_accelerator_cpu_only():
    if not _cpu_only():
        pytest.skip("CUDA present")
    a, t = ampgrad.accelerator, torch.accelerator
    assert a.current_accelerator() is None and t.current_accelerator() is None
    assert a.current_accelerator(check_available=True) is None
    assert a.is_available() is False and a.device_count() == 0 == t.device_count()
    for fn in ("current_device_index", "synchronize", "empty_cache", "memory_allocated", "max_memory_allocated",
               "memory_reserved", "max_memory_reserved", "memory_stats", "reset_peak_memory_stats",
               "get_memory_info", "current_stream", "get_device_capability"):
        with pytest.raises(RuntimeError) as et:
            getattr(t, fn)()
        with pytest.raises(RuntimeError) as ea:
            getattr(a, fn)()
        assert str(ea.value) == str(et.value)
    with a.device_index(None):
        pass
    # the mnist example's idiom
    use_accel = a.is_available()
    device = a.current_accelerator() if use_accel else ampgrad.device("cpu")
    assert device.type == "cpu"


def test_accelerator_with_cuda():
    if _cpu_only():
        pytest.skip("no CUDA")
    a = ampgrad.accelerator
    assert a.current_accelerator() == ampgrad.device("cuda")
    assert a.is_available() and a.device_count() == ampgrad.cuda.device_count()
    assert a.current_device_index() == ampgrad.cuda.current_device()
    a.synchronize()


def test_backends_flags(restore_flags):
    c, tc = ampgrad.backends.cudnn, torch.backends.cudnn
    assert (c.enabled, c.benchmark, c.deterministic, c.allow_tf32) == (True, False, False, True)
    assert c.is_available() is False and c.version() is None
    c.benchmark = True
    c.allow_tf32 = False
    c.deterministic = True
    assert (c.benchmark, c.allow_tf32, c.deterministic) == (True, False, True)
    with c.flags(enabled=False, benchmark=False, deterministic=False, allow_tf32=True):
        assert (c.enabled, c.benchmark, c.deterministic, c.allow_tf32) == (False, False, False, True)
    assert (c.enabled, c.benchmark, c.allow_tf32, c.deterministic) == (True, True, False, True)
    assert tc.is_available() is False  # the oracle is a CPU build too
    assert ampgrad.backends.mps.is_available() is False is torch.backends.mps.is_available()
    assert ampgrad.backends.mps.is_built() is False
    assert isinstance(ampgrad.backends.cpu.get_cpu_capability(), str)
    # nanoGPT's preamble
    ampgrad.backends.cuda.matmul.allow_tf32 = True
    ampgrad.backends.cudnn.allow_tf32 = True
    assert ampgrad.backends.cuda.matmul.allow_tf32 is True
    ampgrad.backends.cuda.matmul.allow_tf32 = False


def test_deterministic_algorithms(restore_flags):
    # torch's answers, written out: calling torch.use_deterministic_algorithms costs seconds (it
    # imports its compiler stack the first time)
    L = ampgrad
    assert not L.are_deterministic_algorithms_enabled() and L.get_deterministic_debug_mode() == 0
    L.use_deterministic_algorithms(True)
    assert L.are_deterministic_algorithms_enabled() and not L.is_deterministic_algorithms_warn_only_enabled()
    assert L.get_deterministic_debug_mode() == 2
    L.use_deterministic_algorithms(True, warn_only=True)
    assert L.is_deterministic_algorithms_warn_only_enabled() and L.get_deterministic_debug_mode() == 1
    L.set_deterministic_debug_mode("default")
    assert not L.are_deterministic_algorithms_enabled() and L.get_deterministic_debug_mode() == 0
    L.set_deterministic_debug_mode(2)
    assert L.are_deterministic_algorithms_enabled()
    L.set_deterministic_debug_mode("warn")
    assert L.is_deterministic_algorithms_warn_only_enabled()
    L.use_deterministic_algorithms(False)
    assert not L.is_deterministic_algorithms_warn_only_enabled()
    with pytest.raises(TypeError, match=r"^_set_deterministic_algorithms\(\): argument 'mode' \(position 1\) must be "
                       "bool, not int$"):
        ampgrad.use_deterministic_algorithms(1)
    with pytest.raises(TypeError, match="must be bool, not NoneType"):
        ampgrad.use_deterministic_algorithms(None)
    with pytest.raises(RuntimeError, match="invalid value of debug_mode, expected one of `default`, `warn`, `error`, "
                       "but got x"):
        ampgrad.set_deterministic_debug_mode("x")
    with pytest.raises(RuntimeError, match="invalid value of debug_mode, expected 0, 1, or 2, but got 3"):
        ampgrad.set_deterministic_debug_mode(3)


def test_float32_matmul_precision(restore_flags):
    for p in ("medium", "high", "highest", "high"):
        torch.set_float32_matmul_precision(p)
        ampgrad.set_float32_matmul_precision(p)
        assert ampgrad.get_float32_matmul_precision() == torch.get_float32_matmul_precision() == p
        assert ampgrad.backends.cuda.matmul.allow_tf32 == (p != "highest")
    with pytest.warns(UserWarning, match="is not one of 'highest', 'high', or 'medium'"):
        ampgrad.set_float32_matmul_precision("bogus")
    assert ampgrad.get_float32_matmul_precision() == "high"
    ampgrad.backends.cuda.matmul.allow_tf32 = False
    assert ampgrad.get_float32_matmul_precision() == "highest"


def test_compile_returns_the_callable():
    m = ampgrad.nn.Linear(3, 2)
    assert ampgrad.compile(m) is m
    assert ampgrad.compile(m, mode="max-autotune", fullgraph=True, dynamic=False, backend="inductor") is m
    assert ampgrad.compile(m, options={"triton.cudagraphs": False}, disable=True) is m

    def f(x):
        return (x * 2).sin()
    assert ampgrad.compile(f) is f

    @ampgrad.compile
    def g(x):
        return x + 1

    @ampgrad.compile(mode="reduce-overhead")
    def h(x):
        return x * 3
    x = ampgrad.ones(2, requires_grad=True)
    assert g(x).tolist() == [2.0, 2.0]
    h(x).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    # nanoGPT: model = torch.compile(model); the compiled model trains as the model
    y = m(ampgrad.ones(1, 3)).sum()
    y.backward()
    assert m.weight.grad is not None
    # torch's message (torch.compile itself is not called here: its first call imports for seconds)
    with pytest.raises(RuntimeError, match=r"^Either mode or options can be specified, but both can't be specified at "
                       r"the same time\.$"):
        ampgrad.compile(f, mode="default", options={})
    with pytest.raises(RuntimeError, match="Model can't be None"):
        ampgrad.compile()(None)


def test_num_threads_round_trip():
    n = ampgrad.get_num_threads()
    try:
        ampgrad.set_num_threads(1)
        assert ampgrad.get_num_threads() == 1
    finally:
        ampgrad.set_num_threads(n)
