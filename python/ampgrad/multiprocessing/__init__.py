"""ampgrad.multiprocessing: Python's multiprocessing with tensors shared through memory (torch.multiprocessing).

Importing ampgrad registers the reductions (Note [Shared memory]): a CPU tensor put on a queue or passed to
a Process is moved into shared memory and the other process maps the same pages.
"""
import multiprocessing
import sys
from multiprocessing import *  # noqa: F401,F403

from .reductions import init_reductions
from .spawn import (ENV_VAR_PARALLEL_START, ProcessContext, ProcessException, ProcessExitedException,
                    ProcessRaisedException, SpawnContext, spawn, start_processes)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies", "spawn",
           "start_processes", "ProcessContext", "SpawnContext", "ProcessRaisedException", "ProcessExitedException"]
__all__ += multiprocessing.__all__

# Only the fd strategy: ampgrad has no shm manager daemon for torch's named-file ("file_system") strategy,
# so, as on a platform where torch has one strategy, the other is refused.
_sharing_strategy = "file_descriptor"
_all_sharing_strategies = {"file_descriptor"} if sys.platform.startswith("linux") else set()


def set_sharing_strategy(new_strategy):
    """Set the strategy for sharing CPU tensors (one of get_all_sharing_strategies())."""
    global _sharing_strategy
    if new_strategy not in _all_sharing_strategies:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}, expected one of {_all_sharing_strategies}")
    _sharing_strategy = new_strategy


def get_sharing_strategy():
    return _sharing_strategy


def get_all_sharing_strategies():
    return _all_sharing_strategies


init_reductions()
