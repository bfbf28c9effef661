"""ampgrad.backends.cpu: get_cpu_capability() as torch's."""
from ... import _C

__all__ = ["get_cpu_capability"]


def get_cpu_capability():
    """The CPU capability of the engine module in use: "DEFAULT", "AVX2" or "AVX512" (Note [CPU dispatch];
    AMPGRAD_CPU_CAPABILITY=default|avx2|avx512 asks for a lower one, as ATEN_CPU_CAPABILITY does for torch)."""
    return _C._cpu_capability()
