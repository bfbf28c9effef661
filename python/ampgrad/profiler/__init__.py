"""ampgrad.profiler: the parts of torch.profiler that the autograd profiler covers.

torch.profiler.profile (activities, schedules, Kineto) is not provided; use
ampgrad.autograd.profiler.profile.
"""
from ..autograd.profiler import record_function

__all__ = ["record_function"]
