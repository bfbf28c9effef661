"""CUDA backend tests beyond the op database: kernels at sizes the op db misses, matmul layouts,
the runtime (allocator statistics, OOM error type, events, device errors, RNG), multi-tensor
kernels and training steps. Device tests carry @pytest.mark.cuda and skip without a device; the
no-device behaviour of ampgrad.cuda is checked everywhere.

Every op of the op database runs on CUDA through the device axis of tests/test_ops.py and
tests/test_forward_ad.py (same samples, argument building from tests/op_db.py, torch as the oracle).

Written without a GPU: until they have run on one, treat failures here as bugs in either the
tests or the backend."""
import numpy as np
import pytest

import ampgrad
from op_db import to_device_keep_strides
from test_ops import CUDA_TOL, HAS_CUDA, builtin_exc

cuda = pytest.mark.cuda
needs_cuda = pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device")

CUDA_DTYPES = ("float32", "float16", "bfloat16")


def _dt(t):
    return str(t.dtype).split(".")[-1]


def _np(t):
    t = t.detach()
    if t.is_cuda:
        t = t.cpu()
    if _dt(t) in ("bfloat16", "float16"):
        t = t.float()
    return np.array(t.numpy())


def _flat(o):
    if isinstance(o, (tuple, list)):
        return [x for item in o for x in _flat(item)]
    return [o]


def assert_close_cpu(actual, expected, tol, what):
    acts, exps = _flat(actual), _flat(expected)
    assert len(acts) == len(exps), f"{what}: {len(acts)} outputs on CUDA, {len(exps)} on CPU"
    for k, (a, e) in enumerate(zip(acts, exps)):
        where = f"{what} output {k}"
        if not isinstance(e, ampgrad.Tensor):
            assert not isinstance(a, ampgrad.Tensor) and (a == e or (a != a and e != e)), f"{where}: {a!r} != {e!r}"
            continue
        assert isinstance(a, ampgrad.Tensor), f"{where}: expected a Tensor"
        assert a.is_cuda, f"{where}: result is on {a.device}, expected cuda"
        assert a.dtype == e.dtype, f"{where}: dtype {a.dtype} != CPU's {e.dtype}"
        assert tuple(a.shape) == tuple(e.shape), f"{where}: shape {tuple(a.shape)} != CPU's {tuple(e.shape)}"
        atol, rtol = tol(_dt(e)) if e.dtype.is_floating_point else (0, 0)
        np.testing.assert_allclose(_np(a), _np(e), atol=atol, rtol=rtol, equal_nan=True, err_msg=where)


# ---------------------------------------------------------------- kernels at sizes the op db misses
def _cpu_cuda(fn, *arrays, dtype="float32"):
    cpu = [ampgrad.tensor(a).to(getattr(ampgrad, dtype)) for a in arrays]
    return fn(*cpu), fn(*[t.cuda() for t in cpu])


@cuda
@needs_cuda
@pytest.mark.parametrize("dtype", CUDA_DTYPES)
@pytest.mark.parametrize("n", [1, 7, 8, 9, 1023, 4097, 1 << 20])
def test_cuda_elementwise_sizes(n, dtype):
    """Vector path, its tail and the unaligned fallback (a view starting at element 1)."""
    rng = np.random.RandomState(n)
    a, b = rng.randn(n + 1), rng.randn(n + 1)
    for fn in (lambda x, y: x + y, lambda x, y: (x * y).exp(), lambda x, y: x > y, lambda x, y: x[1:] - y[:-1]):
        c, g = _cpu_cuda(fn, a, b, dtype=dtype)
        assert_close_cpu(g, c, lambda d: CUDA_TOL[d], f"elementwise n={n} {dtype}")


@cuda
@needs_cuda
def test_cuda_broadcast_and_mixed_dtypes():
    rng = np.random.RandomState(0)
    c, g = _cpu_cuda(lambda x, y: x[:, None, :] * y[None, :, None], rng.randn(5, 7), rng.randn(3, 1))
    assert_close_cpu(g, c, lambda d: CUDA_TOL[d], "broadcast")
    x = ampgrad.tensor(rng.randn(4, 6)).float()
    # (no uint8: negative float -> uint8 is undefined in C++, and CPUs and GPUs disagree, as in torch)
    for dt in (ampgrad.float16, ampgrad.bfloat16, ampgrad.int32, ampgrad.int64, ampgrad.bool, ampgrad.float64):
        assert_close_cpu(x.cuda().to(dt), x.to(dt), lambda d: (0, 0), f"cast to {dt}")
        assert_close_cpu(x.cuda().t().to(dt), x.t().to(dt), lambda d: (0, 0), f"strided cast to {dt}")


@cuda
@needs_cuda
@pytest.mark.parametrize("dtype", CUDA_DTYPES)
@pytest.mark.parametrize("shape,dim", [((3, 5000), 1), ((2, 9000, 3), 1), ((70, 33), 0), ((4, 1), 1), ((1000, 40), 1),
                                       ((0, 4), 1), ((4, 0), 1)])
def test_cuda_reductions(shape, dim, dtype):
    rng = np.random.RandomState(1)
    a = rng.randn(*shape)
    for name, fn in [("sum", lambda x: x.sum(dim)), ("mean", lambda x: x.mean(dim)), ("amax", lambda x: x.amax(dim)),
                     ("max", lambda x: x.max(dim)), ("argmin", lambda x: x.argmin(dim)), ("var", lambda x: x.var(dim)),
                     ("norm", lambda x: x.norm(dim=dim)), ("logsumexp", lambda x: x.logsumexp(dim)),
                     ("softmax", lambda x: x.softmax(dim)), ("log_softmax", lambda x: x.log_softmax(dim)),
                     ("cumsum", lambda x: x.cumsum(dim))]:
        try:
            c = fn(ampgrad.tensor(a).to(getattr(ampgrad, dtype)))
        except Exception as e:
            with pytest.raises(builtin_exc(e)):
                fn(ampgrad.tensor(a).to(getattr(ampgrad, dtype)).cuda())
            continue
        g = fn(ampgrad.tensor(a).to(getattr(ampgrad, dtype)).cuda())
        scale = max(1.0, float(np.sqrt(shape[dim]))) if name in ("sum", "cumsum") else 1.0
        assert_close_cpu(g, c, lambda d: (CUDA_TOL[d][0] * scale, CUDA_TOL[d][1]), f"{name}{shape} dim={dim} {dtype}")


@cuda
@needs_cuda
def test_cuda_reductions_deterministic():
    x = ampgrad.tensor(np.random.RandomState(2).randn(1 << 20)).float().cuda()
    assert float(x.sum()) == float(x.sum())
    y = x.reshape(1024, 1024)
    assert bool((y.sum(0) == y.sum(0)).all()) and bool((y.sum(1) == y.sum(1)).all())


@cuda
@needs_cuda
def test_cuda_argmax_first_occurrence_and_nan():
    x = ampgrad.tensor([1.0, 3.0, 3.0, 0.0] * 300).cuda()
    assert int(x.argmax()) == 1
    x = ampgrad.tensor([1.0, float("nan"), 5.0, float("nan")]).cuda()
    assert int(x.argmax()) == 1 and bool(x.max().isnan())


@cuda
@needs_cuda
@pytest.mark.parametrize("dtype", CUDA_DTYPES + ("float64",))
@pytest.mark.parametrize("m,k,n,layout", [(64, 32, 48, "nn"), (33, 65, 17, "tn"), (16, 8, 24, "nt"), (1, 40, 1, "nn"),
                                          (5, 0, 3, "nn"), (7, 9, 11, "strided")])
def test_cuda_matmul(m, k, n, layout, dtype):
    rng = np.random.RandomState(3)
    a, b = rng.randn(m, k), rng.randn(k, n)
    dt = getattr(ampgrad, dtype)

    def mk(arr, transposed):
        t = ampgrad.tensor(arr.T if transposed else arr).to(dt)
        return t.t() if transposed else t

    A, B = mk(a, layout == "tn"), mk(b, layout == "nt")
    if layout == "strided":
        A = ampgrad.tensor(np.repeat(a, 2, axis=1)).to(dt)[:, ::2]
    c = A @ B
    g = A.cuda() @ B.cuda() if layout != "strided" else to_device_keep_strides(A, "cuda") @ B.cuda()
    tol = {"float32": (1e-4, 1e-4), "float64": (1e-10, 1e-10), "float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2)}
    assert_close_cpu(g, c, lambda d: tol[d], f"mm {m}x{k}x{n} {layout} {dtype}")
    # batched, with a broadcast operand
    bb = rng.randn(3, k, n)
    c = ampgrad.tensor(a).to(dt) @ ampgrad.tensor(bb).to(dt)
    g = ampgrad.tensor(a).to(dt).cuda() @ ampgrad.tensor(bb).to(dt).cuda()
    assert_close_cpu(g, c, lambda d: tol[d], f"bmm {dtype}")


@cuda
@needs_cuda
def test_cuda_integer_matmul_not_implemented():
    a = ampgrad.ones(2, 2, dtype=ampgrad.int64).cuda()
    with pytest.raises(NotImplementedError, match="addmm_cuda"):
        a @ a


@cuda
@needs_cuda
def test_cuda_allow_tf32_flag():
    assert ampgrad.backends.cuda.matmul.allow_tf32 is False
    a = ampgrad.tensor(np.random.RandomState(4).randn(256, 256)).float()
    exact = (a.double() @ a.double()).float()
    g = a.cuda() @ a.cuda()
    np.testing.assert_allclose(_np(g), _np(exact), rtol=1e-4, atol=1e-3)
    try:
        ampgrad.backends.cuda.matmul.allow_tf32 = True
        g = a.cuda() @ a.cuda()
        np.testing.assert_allclose(_np(g), _np(exact), rtol=2e-2, atol=0.5)  # TF32: ~1e-3 relative per product
    finally:
        ampgrad.backends.cuda.matmul.allow_tf32 = False


# ---------------------------------------------------------------- runtime
@cuda
@needs_cuda
def test_cuda_device_queries():
    assert ampgrad.cuda.device_count() >= 1
    assert 0 <= ampgrad.cuda.current_device() < ampgrad.cuda.device_count()
    p = ampgrad.cuda.get_device_properties(0)
    assert p.total_memory > 0 and p.multi_processor_count > 0 and isinstance(p.name, str)
    assert ampgrad.cuda.get_device_name() == p.name
    assert ampgrad.cuda.get_device_capability() == (p.major, p.minor)
    free, total = ampgrad.cuda.mem_get_info()
    assert 0 < free <= total
    ampgrad.cuda.synchronize()
    with pytest.raises(RuntimeError):
        ampgrad.cuda.set_device(ampgrad.cuda.device_count())


@cuda
@needs_cuda
def test_cuda_copies_round_trip():
    for dt in (ampgrad.float32, ampgrad.float16, ampgrad.bfloat16, ampgrad.int64, ampgrad.bool, ampgrad.float64):
        x = ampgrad.arange(1000).to(dt).reshape(10, 100)
        y = x.cuda()
        assert y.is_cuda and y.device == ampgrad.device("cuda:0") and y.dtype == dt
        assert bool((y.cpu() == x).all())
        assert bool((y.t().cpu() == x.t()).all())
        assert bool((x.to("cuda").to("cpu") == x).all())
    z = ampgrad.ones(3, requires_grad=True)
    (z.cuda() * 2).sum().backward()
    assert z.grad is not None and not z.grad.is_cuda and float(z.grad.sum()) == 6.0


@cuda
@needs_cuda
def test_cuda_allocator_stats():
    ampgrad.cuda.synchronize()
    ampgrad.cuda.empty_cache()
    base = ampgrad.cuda.memory_allocated()
    x = ampgrad.empty(1000, device="cuda")  # 4000 bytes -> one 512-byte-rounded block of 4096
    assert ampgrad.cuda.memory_allocated() - base == 4096
    assert ampgrad.cuda.memory_reserved() >= ampgrad.cuda.memory_allocated()
    y = ampgrad.empty(3 << 20, device="cuda")  # 12 MiB: a large-pool segment of its own
    peak = ampgrad.cuda.max_memory_allocated()
    assert peak >= base + 4096 + (12 << 20)
    del y
    assert ampgrad.cuda.memory_allocated() - base == 4096
    assert ampgrad.cuda.max_memory_allocated() == peak
    reserved = ampgrad.cuda.memory_reserved()
    y = ampgrad.empty(3 << 20, device="cuda")  # reused from the cache: nothing new reserved
    assert ampgrad.cuda.memory_reserved() == reserved
    del y
    ampgrad.cuda.reset_peak_memory_stats()
    assert ampgrad.cuda.max_memory_allocated() == ampgrad.cuda.memory_allocated()
    ampgrad.cuda.empty_cache()
    assert ampgrad.cuda.memory_reserved() < reserved
    del x
    stats = ampgrad.cuda.memory_stats()
    assert stats["allocated_bytes.all.current"] == base


@cuda
@needs_cuda
def test_cuda_out_of_memory():
    total = ampgrad.cuda.get_device_properties(0).total_memory
    with pytest.raises(ampgrad.cuda.OutOfMemoryError, match="CUDA out of memory. Tried to allocate") as info:
        ampgrad.empty(2 * total // 4 + (1 << 30), device="cuda")  # float32: 2x the device
    assert isinstance(info.value, RuntimeError)
    assert ampgrad.cuda.memory_stats()["num_ooms"] >= 1
    x = ampgrad.ones(10, device="cuda")  # the allocator still works
    assert float(x.sum()) == 10.0


@cuda
@needs_cuda
def test_cuda_mixed_device_error():
    a = ampgrad.ones(3).cuda()
    b = ampgrad.ones(3)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        a + b
    assert float((a + ampgrad.tensor(2.0)).sum()) == 9.0  # a 0-dim CPU tensor is a scalar: allowed
    assert int((a.long() + ampgrad.tensor(2)).sum()) == 9  # integer path: the scalar is moved, not read
    assert float(ampgrad.where(a > 0, ampgrad.tensor(5.0), a).sum()) == 15.0
    assert float((ampgrad.tensor(2.0).cuda() * ampgrad.tensor(3.0)).cpu()) == 6.0


@cuda
@needs_cuda
def test_cuda_events_time():
    start, end = ampgrad.cuda.Event(enable_timing=True), ampgrad.cuda.Event(enable_timing=True)
    x = ampgrad.ones(1 << 22, device="cuda")
    start.record()
    for _ in range(10):
        x = x * 1.0001
    end.record()
    end.synchronize()
    assert end.query()
    assert start.elapsed_time(end) > 0
    ampgrad.cuda.current_stream().synchronize()


# ---------------------------------------------------------------- without a device (run everywhere)
def test_cuda_api_without_device():
    if HAS_CUDA:
        pytest.skip("a device is present")
    assert ampgrad.cuda.device_count() == 0
    assert ampgrad.cuda.memory_allocated() == 0 and ampgrad.cuda.memory_reserved() == 0
    assert ampgrad.cuda.max_memory_allocated() == 0 and ampgrad.cuda.memory_stats() == {}
    ampgrad.cuda.empty_cache()
    ampgrad.cuda.reset_peak_memory_stats()
    ampgrad.cuda.synchronize()
    assert not ampgrad.cuda.is_bf16_supported()
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        ampgrad.cuda.current_device()
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        ampgrad.ones(2).cuda()
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        ampgrad.cuda.Event()  # noqa: B018
    ampgrad.cuda.manual_seed(1)  # no device to seed: a no-op, as torch's before CUDA initializes
    ampgrad.cuda.manual_seed_all(1)
    ampgrad.cuda.seed_all()
    for f in (ampgrad.cuda.initial_seed, ampgrad.cuda.get_rng_state):
        with pytest.raises(AssertionError, match="not compiled with CUDA"):
            f()
    assert ampgrad.cuda.get_rng_state_all() == []


def test_cuda_error_types_and_flags():
    assert issubclass(ampgrad.cuda.OutOfMemoryError, RuntimeError)
    assert ampgrad.backends.cuda.matmul.allow_tf32 is False
    ampgrad.backends.cuda.matmul.allow_tf32 = True
    try:
        assert ampgrad.backends.cuda.matmul.allow_tf32 is True
        assert ampgrad.get_float32_matmul_precision() == "high"
    finally:
        ampgrad.set_float32_matmul_precision("highest")
    assert ampgrad.backends.cuda.matmul.allow_tf32 is False
    with pytest.raises(AttributeError):
        ampgrad.backends.cuda.matmul.allow_tf33 = True
    assert isinstance(ampgrad.backends.cuda.is_built(), bool)


# ---------------------------------------------------------------- random fills, training steps
@cuda
@needs_cuda
def test_cuda_random_seeded_and_distributed():
    ampgrad.manual_seed(0)
    a = ampgrad.randn(10000, device="cuda")
    ampgrad.manual_seed(0)
    b = ampgrad.randn(10000, device="cuda")
    assert a.is_cuda and bool((a == b).all())
    assert abs(float(a.mean())) < 0.05 and abs(float(a.std()) - 1) < 0.05
    u = ampgrad.rand(100, 3, device="cuda").t()  # non-contiguous fill goes through a staging buffer
    assert 0 <= float(u.min()) and float(u.max()) < 1
    p = ampgrad.randperm(50, device="cuda")
    assert sorted(p.cpu().tolist()) == list(range(50))


def _philox_state():
    import struct
    return struct.unpack("<QQ", bytes(ampgrad.cuda.get_rng_state().tolist()))


@cuda
@needs_cuda
@pytest.mark.parametrize("kind,dtype", [("uniform", "float32"), ("uniform", "float64"), ("uniform", "float16"),
                                        ("uniform", "bfloat16"), ("normal", "float32"), ("normal", "float64"),
                                        ("normal", "float16"), ("randint", "int64"), ("randint", "int32"),
                                        ("randint", "float32")])
@pytest.mark.parametrize("n", [1, 7, 4097, 1 << 20])
def test_cuda_philox_matches_host_reference(kind, dtype, n):
    """Device fills reproduce the host Philox reference (Note [Philox streams]): uniform and randint
    bit for bit, normal to a few ulps (device and host libm differ)."""
    ampgrad.cuda.manual_seed(1234)
    seed, offset = _philox_state()
    assert (seed, offset) == (1234, 0)
    dt = getattr(ampgrad, dtype)
    t = ampgrad.empty(n, dtype=dt, device="cuda")
    a, b = {"uniform": (-1.0, 3.0), "normal": (0.5, 2.0), "randint": (-3, 1000)}[kind]
    if kind == "uniform":
        t.uniform_(a, b)
    elif kind == "normal":
        t.normal_(a, b)
    else:
        t = ampgrad.randint(a, b, (n,), dtype=dt, device="cuda")
    ref = ampgrad.empty(n, dtype=dt)
    used = ampgrad._C._philox_fill(ref, kind, seed, offset, a, b)
    assert _philox_state() == (seed, offset + used)  # the offset moved past the counters used
    got, exp = _np(t), _np(ref)
    if kind == "normal":
        # sin/cos/log are within 1-2 ulp on either side; fp16 may round the other way (1 half ulp)
        atol, rtol = {"float64": (1e-12, 1e-13), "float32": (1e-5, 2e-6), "float16": (2e-3, 1e-3)}[dtype]
        np.testing.assert_allclose(got, exp, rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(got, exp)


@cuda
@needs_cuda
def test_cuda_rng_state_api():
    ampgrad.cuda.manual_seed(7)
    assert ampgrad.cuda.initial_seed() == 7
    a = ampgrad.rand(1000, device="cuda")
    state = ampgrad.cuda.get_rng_state()
    assert state.dtype == ampgrad.uint8 and tuple(state.shape) == (16,) and not state.is_cuda
    b = ampgrad.rand(1000, device="cuda")
    ampgrad.cuda.set_rng_state(state)
    c = ampgrad.rand(1000, device="cuda")
    assert bool((b == c).all()) and not bool((a == b).all())
    ampgrad.cuda.manual_seed_all(7)
    assert bool((ampgrad.rand(1000, device="cuda") == a).all())
    states = ampgrad.cuda.get_rng_state_all()
    assert len(states) == ampgrad.cuda.device_count()
    ampgrad.cuda.set_rng_state_all(states)
    ampgrad.cuda.seed()
    assert ampgrad.cuda.initial_seed() != 7
    ampgrad.manual_seed(7)  # torch.manual_seed seeds every device too
    assert ampgrad.cuda.initial_seed() == 7
    # dropout / bernoulli draw through uniform_: seeded, so reproducible
    x = ampgrad.ones(4096, device="cuda")
    ampgrad.manual_seed(3)
    d1 = ampgrad.nn.functional.dropout(x, 0.5)
    ampgrad.manual_seed(3)
    d2 = ampgrad.nn.functional.dropout(x, 0.5)
    assert bool((d1 == d2).all()) and 0.4 < float((d1 == 0).float().mean()) < 0.6


# Sizes around the multi-tensor chunk (65536), empty tensors, and more tensors than one launch holds.
_MTA_SIZES = [0, 1, 3, 65535, 65536, 65537, 5, 0, 200_003] + [7] * 150


def _np_dt(dtype):
    return np.float64 if dtype == "float64" else np.float32


@cuda
@needs_cuda
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
def test_cuda_multi_tensor_unscale(dtype):
    """The multi-tensor unscale (several launches, vector and scalar paths, a strided and a
    misaligned grad) matches the CPU kernel, and one inf anywhere raises found_inf."""
    rng = np.random.RandomState(0)
    dt = getattr(ampgrad, dtype)
    vals = [rng.randn(n) * 100 for n in _MTA_SIZES]
    inv = ampgrad.tensor([1 / 64.0])
    for bad in (None, 0, 2, len(vals) - 1):  # tensor index that gets an inf
        if bad is not None:
            vals[bad] = vals[bad].copy()
            vals[bad][-1] = np.inf
        cpu = [ampgrad.tensor(v).to(dt) for v in vals]
        gpu = [t.cuda() for t in cpu]
        base = ampgrad.tensor(rng.randn(64, 33)).to(dt)
        cpu.append(base.t().contiguous())
        gpu.append(base.cuda().t())  # strided: the per-tensor fallback
        big = ampgrad.tensor(rng.randn(1001)).to(dt)
        cpu.append(big[1:].clone())
        gpu.append(big.cuda()[1:])  # misaligned: the scalar path of the multi-tensor kernel
        fc, fg = ampgrad.zeros(1), ampgrad.zeros(1, device="cuda")
        ampgrad._C._amp_foreach_non_finite_check_and_unscale_(cpu, fc, inv)
        ampgrad._C._amp_foreach_non_finite_check_and_unscale_(gpu, fg, inv.cuda())
        assert float(fg.cpu()) == float(fc) == (0.0 if bad is None else 1.0)
        for k, (a, b) in enumerate(zip(gpu, cpu)):
            np.testing.assert_array_equal(_np(a), _np(b), err_msg=f"grad {k}")


def _mta_params(dtype, device, seed):
    rng = np.random.RandomState(seed)
    return [ampgrad.nn.Parameter(ampgrad.tensor(rng.randn(n)).to(dtype).to(device)) for n in _MTA_SIZES]


@cuda
@needs_cuda
@pytest.mark.parametrize("name,kw", [("SGD", dict(lr=0.1)),
                                     ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
                                     ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01, maximize=True)),
                                     ("Adam", dict(lr=1e-2, weight_decay=0.1)),
                                     ("AdamW", dict(lr=1e-2, amsgrad=True))])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_cuda_multi_tensor_optimizers_match_cpu(name, kw, dtype):
    """Multi-tensor SGD/Adam/AdamW on CUDA (device grad_scale and found_inf, device step counts)
    track the CPU kernels over several steps, and a found_inf step changes nothing."""
    dt = getattr(ampgrad, dtype)
    rng = np.random.RandomState(1)
    grads = [[rng.randn(n) * 8 for n in _MTA_SIZES] for _ in range(3)]
    out = {}
    for dev in ("cpu", "cuda"):
        ps = _mta_params(dt, dev, 0)
        opt = getattr(ampgrad.optim, name)(ps, **kw)
        scale = ampgrad.tensor([8.0], device=dev)
        zero, one = ampgrad.zeros(1, device=dev), ampgrad.ones(1, device=dev)
        for step in grads:
            for p, g in zip(ps, step):
                p.grad = ampgrad.tensor(g).to(dt).to(dev)
            opt.step(grad_scale=scale, found_inf=zero)
        before = [p.detach().clone() for p in ps]
        opt.step(grad_scale=scale, found_inf=one)  # skipped on the device
        for p, b in zip(ps, before):
            assert bool((p.detach() == b).all())
        if name != "SGD":
            steps = [opt.state[p]["step"] for p in ps]
            assert all(s.device.type == dev for s in steps)
            assert {float(s) for s in steps} == {3.0}
        out[dev] = ps
    atol, rtol = (1e-5, 1e-5) if dtype == "float32" else (2e-3, 2e-3)
    for k, (a, b) in enumerate(zip(out["cuda"], out["cpu"])):
        np.testing.assert_allclose(_np(a), _np(b), atol=atol, rtol=rtol, err_msg=f"param {k}")


@cuda
@needs_cuda
def test_cuda_adam_step_counts_live_on_the_device():
    p = ampgrad.nn.Parameter(ampgrad.ones(3, device="cuda"))
    p.grad = ampgrad.ones(3, device="cuda")
    opt = ampgrad.optim.Adam([p])
    opt.step()
    assert opt.state[p]["step"].is_cuda
    sd = opt.state_dict()
    opt2 = ampgrad.optim.Adam([p])
    sd["state"][0]["step"] = sd["state"][0]["step"].cpu()
    opt2.load_state_dict(sd)  # moved back to the param's device
    assert opt2.state[p]["step"].is_cuda
    z = ampgrad.zeros(3, device="cuda")
    with pytest.raises(RuntimeError, match="params' device"):
        ampgrad._C._adam_step([p], [z], [z], [z], None, [ampgrad.zeros(())], 0.1, 0.9, 0.99, 1e-8, 0.0, False, False, False)


def _train(device, opt, amp):
    ampgrad.manual_seed(0)
    nn = ampgrad.nn
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)).to(device)
    o = (ampgrad.optim.SGD(model.parameters(), lr=0.1, momentum=0.9) if opt == "sgd"
         else ampgrad.optim.Adam(model.parameters(), lr=1e-2))
    scaler = ampgrad.amp.GradScaler(device, enabled=amp)
    x = ampgrad.tensor(np.random.RandomState(0).randn(32, 8)).float().to(device)
    y = ampgrad.tensor(np.random.RandomState(1).randint(0, 4, 32)).to(device)
    for _ in range(5):
        o.zero_grad()
        with ampgrad.autocast(device, dtype=ampgrad.float16 if device == "cuda" else ampgrad.bfloat16, enabled=amp):
            loss = nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(o)
        scaler.update()
    return [p.detach().cpu() for p in model.parameters()], float(loss)


@cuda
@needs_cuda
@pytest.mark.parametrize("opt", ["sgd", "adam"])
def test_cuda_training_matches_cpu(opt):
    """fp32 training steps (forward, backward, fused optimizer) on CUDA track the CPU run."""
    pc, lc = _train("cpu", opt, amp=False)
    pg, lg = _train("cuda", opt, amp=False)
    assert abs(lc - lg) < 1e-4
    for a, b in zip(pg, pc):
        np.testing.assert_allclose(_np(a), _np(b), atol=1e-4, rtol=1e-4)


@cuda
@needs_cuda
@pytest.mark.parametrize("opt", ["sgd", "adam"])
def test_cuda_amp_training_runs(opt):
    """fp16 autocast + GradScaler on CUDA: the loss goes down and parameters stay finite."""
    params, loss = _train("cuda", opt, amp=True)
    _, loss0 = _train("cuda", opt, amp=False)
    assert np.isfinite(loss) and all(np.isfinite(_np(p)).all() for p in params)
    assert abs(loss - loss0) < 0.05
