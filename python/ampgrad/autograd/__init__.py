"""ampgrad.autograd: reverse-mode automatic differentiation (mirrors torch.autograd)."""
import warnings  # noqa: F401  (unused since backward/grad moved to _backward; kept among ampgrad.autograd's names)

from .. import _C
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import (no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled,
                        is_inference_mode_enabled, set_multithreading_enabled)
from .gradcheck import gradcheck, gradgradcheck, GradcheckError
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .variable import Variable, variable
from . import forward_ad
from . import functional
from . import graph
from .graph import GradientEdge
from . import profiler
from ._backward import backward, grad


def _profiler_enabled():
    return _C._profiler_enabled()


__all__ = ["backward", "grad", "Function", "once_differentiable", "no_grad", "enable_grad", "set_grad_enabled",
           "inference_mode", "gradcheck", "gradgradcheck", "GradcheckError", "functional", "graph", "forward_ad",
           "detect_anomaly", "set_detect_anomaly", "Variable", "variable", "set_multithreading_enabled", "profiler"]
