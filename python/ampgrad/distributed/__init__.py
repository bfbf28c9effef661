"""ampgrad.distributed: the names single-process scripts import (nanoGPT's train.py imports
init_process_group and destroy_process_group and calls them only when launched by torchrun).

ampgrad has no process-group backend yet: is_available() is True as in torch's Linux builds (so
scripts take their usual imports), is_initialized() is False, and every collective or query of the
default group raises torch's ValueError for an uninitialized group; init_process_group raises
RuntimeError naming the missing backend."""
import enum as _enum

_NOT_INIT = "Default process group has not been initialized, please make sure to call init_process_group."


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


def is_available():
    return True


def is_initialized():
    return False


def is_torchelastic_launched():
    import os
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def is_gloo_available():
    return False


def is_nccl_available():
    return False


def is_mpi_available():
    return False


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    raise RuntimeError(f"ampgrad.distributed: no process-group backend is available (asked for backend {backend!r}); "
                       "ampgrad runs in a single process")


def destroy_process_group(group=None):
    raise AssertionError("Process group cannot be None")


def _uninit(*args, **kwargs):
    raise ValueError(_NOT_INIT)


get_rank = get_world_size = get_backend = barrier = all_reduce = all_gather = all_gather_object = _uninit
broadcast = broadcast_object_list = reduce = reduce_scatter = scatter = gather = send = recv = _uninit
new_group = monitored_barrier = all_to_all = _uninit
