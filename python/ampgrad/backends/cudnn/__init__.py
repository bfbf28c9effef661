"""ampgrad.backends.cudnn: torch.backends.cudnn's flags. ampgrad does not use cuDNN (its CUDA kernels
are its own), so is_available() is False and version() None; the flags are kept and read back as
torch's (enabled, benchmark, deterministic, allow_tf32, benchmark_limit), and `flags(...)` sets them
for a `with` block. deterministic is tied to use_deterministic_algorithms as in torch only in that
ampgrad's kernels are deterministic whatever the flag says."""
import sys as _sys
import types as _types
from contextlib import contextmanager as _contextmanager

__all__ = ["is_available", "version", "is_acceptable", "flags", "enabled", "benchmark", "deterministic",
           "allow_tf32", "benchmark_limit"]


def is_available():
    return False


def version():
    return None


def is_acceptable(tensor):
    return False


class _CudnnModule(_types.ModuleType):
    enabled = True
    benchmark = False
    benchmark_limit = 10
    deterministic = False
    allow_tf32 = True

    @_contextmanager
    def flags(self, enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
        saved = (self.enabled, self.benchmark, self.benchmark_limit, self.deterministic, self.allow_tf32)
        self.enabled, self.benchmark, self.benchmark_limit = enabled, benchmark, benchmark_limit
        self.deterministic, self.allow_tf32 = deterministic, allow_tf32
        try:
            yield
        finally:
            (self.enabled, self.benchmark, self.benchmark_limit, self.deterministic, self.allow_tf32) = saved


_sys.modules[__name__].__class__ = _CudnnModule
