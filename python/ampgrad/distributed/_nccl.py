"""The NCCL engine behind ampgrad.distributed for CUDA tensors: NVIDIA's libnccl (the `nvidia-nccl-cu13`
wheel, which torch's CUDA wheels also install, or a system one), loaded at run time through ctypes, so
that neither the build nor `import ampgrad` needs it. The library is found by, in order:
AMPGRAD_NCCL_LIBRARY (a path), the nvidia/nccl or nvidia/cu1x wheels on sys.path, the loader's search
(ctypes.util.find_library("nccl"), "libnccl.so.2").

Note [NCCL streams]: ampgrad has one stream per device (the current stream, ampgrad.cuda.Stream), and
every NCCL call is enqueued on it. A collective is therefore ordered after the kernels that produced its
input and before the ones that read its output, with no host wait: Work.wait() returns once the call is
enqueued (torch's wait() makes the current stream wait on NCCL's stream, which is the same thing here),
and Work.is_completed() queries a CUDA event recorded after the call. With TORCH_NCCL_BLOCKING_WAIT=1
(torch's variable) wait() blocks the host until the event completes or the group's timeout passes; a
timeout aborts the communicator (ncclCommAbort) and raises DistBackendError, as torch's watchdog does.

The communicator of a (process group, device) pair is created on its first CUDA collective, as torch
creates NCCL communicators lazily: group rank 0 draws the ncclUniqueId and the group's MPI communicator
broadcasts it (the bootstrap that torch does through its store)."""
import ctypes
import ctypes.util
import glob
import os
import sys

NCCL_UNIQUE_ID_BYTES = 128

# nccl.h's enums (checked against the header in tests/test_distributed_nccl.py)
SUCCESS, IN_PROGRESS = 0, 7
RED_OPS = {"SUM": 0, "PRODUCT": 1, "MAX": 2, "MIN": 3, "AVG": 4}
DTYPES = {"int8": 0, "uint8": 1, "bool": 1, "int32": 2, "uint32": 3, "int64": 4, "uint64": 5, "float16": 6,
          "float32": 7, "float64": 8, "bfloat16": 9, "float8_e4m3fn": 10, "float8_e5m2": 11}

_lib = None
_load_error = None


class _UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * NCCL_UNIQUE_ID_BYTES)]


def _candidates():
    env = os.environ.get("AMPGRAD_NCCL_LIBRARY")
    if env:
        yield env
    for p in sys.path:
        if not p or not os.path.isdir(os.path.join(p, "nvidia")):
            continue
        for d in ["nccl"] + sorted(os.path.basename(x) for x in glob.glob(os.path.join(p, "nvidia", "cu1*"))):
            yield from sorted(glob.glob(os.path.join(p, "nvidia", d, "lib", "libnccl.so*")))
    found = ctypes.util.find_library("nccl")
    if found:
        yield found
    yield "libnccl.so.2"


def load():
    """The loaded library (ctypes.CDLL) or None; the reason of a failure is kept for error messages."""
    global _lib, _load_error
    if _lib is not None or _load_error is not None:
        return _lib
    errors = []
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
            lib.ncclGetVersion  # noqa: B018  (a libnccl, not another library of that name)
        except (OSError, AttributeError) as e:
            errors.append(f"{path}: {e}")
            continue
        _declare(lib)
        _lib = lib
        return lib
    _load_error = "; ".join(errors[-3:]) or "no libnccl found"
    return None


def _declare(lib):
    c_int, c_size_t, vp = ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p
    lib.ncclGetErrorString.restype = ctypes.c_char_p
    lib.ncclGetErrorString.argtypes = [c_int]
    lib.ncclGetLastError.restype = ctypes.c_char_p
    lib.ncclGetLastError.argtypes = [vp]
    lib.ncclGetVersion.argtypes = [ctypes.POINTER(c_int)]
    lib.ncclGetUniqueId.argtypes = [ctypes.POINTER(_UniqueId)]
    lib.ncclCommInitRank.argtypes = [ctypes.POINTER(vp), c_int, _UniqueId, c_int]
    lib.ncclCommDestroy.argtypes = [vp]
    lib.ncclCommAbort.argtypes = [vp]
    lib.ncclCommGetAsyncError.argtypes = [vp, ctypes.POINTER(c_int)]
    lib.ncclAllReduce.argtypes = [vp, vp, c_size_t, c_int, c_int, vp, vp]
    lib.ncclReduce.argtypes = [vp, vp, c_size_t, c_int, c_int, c_int, vp, vp]
    lib.ncclBroadcast.argtypes = [vp, vp, c_size_t, c_int, c_int, vp, vp]
    lib.ncclAllGather.argtypes = [vp, vp, c_size_t, c_int, vp, vp]
    lib.ncclReduceScatter.argtypes = [vp, vp, c_size_t, c_int, c_int, vp, vp]
    lib.ncclSend.argtypes = [vp, c_size_t, c_int, c_int, vp, vp]
    lib.ncclRecv.argtypes = [vp, c_size_t, c_int, c_int, vp, vp]
    lib.ncclGroupStart.argtypes = []
    lib.ncclGroupEnd.argtypes = []
    for f in ("ncclGetVersion", "ncclGetUniqueId", "ncclCommInitRank", "ncclCommDestroy", "ncclCommAbort",
              "ncclCommGetAsyncError", "ncclAllReduce", "ncclReduce", "ncclBroadcast", "ncclAllGather",
              "ncclReduceScatter", "ncclSend", "ncclRecv", "ncclGroupStart", "ncclGroupEnd"):
        getattr(lib, f).restype = c_int


def available():
    return load() is not None


def load_error():
    load()
    return _load_error


class NcclError(RuntimeError):
    def __init__(self, what, code, lib):
        detail = lib.ncclGetErrorString(code).decode()
        last = lib.ncclGetLastError(None)
        if last:
            detail += f"\nLast error:\n{last.decode()}"
        super().__init__(f"NCCL error in {what}: {detail} (ncclResult {code}), NCCL version {version_string()}")
        self.code = code


def _check(code, what):
    if code != SUCCESS and code != IN_PROGRESS:
        raise NcclError(what, code, _lib)


def version():
    """(major, minor, patch) of the loaded libnccl, as torch.cuda.nccl.version()."""
    lib = load()
    if lib is None:
        raise RuntimeError(f"ampgrad.distributed: libnccl could not be loaded ({_load_error})")
    v = ctypes.c_int()
    _check(lib.ncclGetVersion(ctypes.byref(v)), "ncclGetVersion")
    code = v.value
    if code >= 10000:  # NCCL_VERSION(X,Y,Z) = X*10000 + Y*100 + Z since 2.9
        return code // 10000, code % 10000 // 100, code % 100
    return code // 1000, code % 1000 // 100, code % 100


def version_string():
    try:
        return ".".join(str(x) for x in version())
    except Exception:  # noqa: BLE001 (only for error text)
        return "unknown"


def unique_id():
    """A fresh ncclUniqueId as 128 bytes (drawn by group rank 0 and broadcast)."""
    uid = _UniqueId()
    _check(load().ncclGetUniqueId(ctypes.byref(uid)), "ncclGetUniqueId")
    return ctypes.string_at(ctypes.addressof(uid), NCCL_UNIQUE_ID_BYTES)


class Comm:
    """One NCCL communicator: nranks ranks, this process's rank, one CUDA device (current at creation)."""

    def __init__(self, uid_bytes, nranks, rank, device):
        lib = load()
        if len(uid_bytes) != NCCL_UNIQUE_ID_BYTES:
            raise ValueError("ncclUniqueId must be 128 bytes")
        uid = _UniqueId()
        ctypes.memmove(ctypes.addressof(uid), uid_bytes, NCCL_UNIQUE_ID_BYTES)
        h = ctypes.c_void_p()
        _check(lib.ncclCommInitRank(ctypes.byref(h), int(nranks), uid, int(rank)), "ncclCommInitRank")
        self.handle, self.nranks, self.rank, self.device = h, nranks, rank, device
        self.aborted = False

    def async_error(self):
        r = ctypes.c_int()
        _check(_lib.ncclCommGetAsyncError(self.handle, ctypes.byref(r)), "ncclCommGetAsyncError")
        return r.value

    def check_async(self, what):
        e = self.async_error()
        if e not in (SUCCESS, IN_PROGRESS):
            raise NcclError(what, e, _lib)

    def abort(self):
        if self.handle and not self.aborted:
            self.aborted = True
            _lib.ncclCommAbort(self.handle)
            self.handle = None

    def destroy(self):
        if self.handle and not self.aborted:
            _check(_lib.ncclCommDestroy(self.handle), "ncclCommDestroy")
            self.handle = None

    # every call enqueues on `stream` (Note [NCCL streams]); pointers are device addresses
    def all_reduce(self, send, recv, count, dtype, op, stream):
        _check(_lib.ncclAllReduce(send, recv, count, dtype, op, self.handle, stream), "ncclAllReduce")

    def reduce(self, send, recv, count, dtype, op, root, stream):
        _check(_lib.ncclReduce(send, recv, count, dtype, op, root, self.handle, stream), "ncclReduce")

    def broadcast(self, send, recv, count, dtype, root, stream):
        _check(_lib.ncclBroadcast(send, recv, count, dtype, root, self.handle, stream), "ncclBroadcast")

    def all_gather(self, send, recv, count, dtype, stream):
        _check(_lib.ncclAllGather(send, recv, count, dtype, self.handle, stream), "ncclAllGather")

    def reduce_scatter(self, send, recv, count, dtype, op, stream):
        _check(_lib.ncclReduceScatter(send, recv, count, dtype, op, self.handle, stream), "ncclReduceScatter")

    def send(self, buf, count, dtype, peer, stream):
        _check(_lib.ncclSend(buf, count, dtype, peer, self.handle, stream), "ncclSend")

    def recv(self, buf, count, dtype, peer, stream):
        _check(_lib.ncclRecv(buf, count, dtype, peer, self.handle, stream), "ncclRecv")


class group_calls:  # noqa: N801  (a context manager: ncclGroupStart / ncclGroupEnd around point-to-point calls)
    def __enter__(self):
        _check(_lib.ncclGroupStart(), "ncclGroupStart")

    def __exit__(self, tp, value, tb):
        code = _lib.ncclGroupEnd()
        if tp is None:
            _check(code, "ncclGroupEnd")
        return False
