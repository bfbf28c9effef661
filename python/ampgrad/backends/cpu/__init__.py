"""ampgrad.backends.cpu: get_cpu_capability() as torch's (ampgrad's kernels are compiled for the host)."""

__all__ = ["get_cpu_capability"]


def get_cpu_capability():
    return "DEFAULT"
