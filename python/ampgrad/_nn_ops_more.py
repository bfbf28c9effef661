"""torch-level names of the nn additions (torch.hardshrink, torch.threshold(_), torch.rrelu(_), torch.instance_norm,
torch.feature_alpha_dropout, torch.norm_except_dim, torch._weight_norm) and Tensor.hardshrink."""
from . import _C
from .nn import functional as F
from .nn._functional_more import _instance_norm
from .nn.utils.weight_norm import _weight_norm, norm_except_dim

__all__ = ["hardshrink", "threshold", "threshold_", "rrelu", "rrelu_", "instance_norm", "feature_alpha_dropout",
           "norm_except_dim", "_weight_norm"]


def hardshrink(input, lambd=0.5):
    return F.hardshrink(input, lambd)


def threshold(input, threshold, value):
    return F.threshold(input, threshold, value)


def threshold_(input, threshold, value):
    return F.threshold_(input, threshold, value)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return F.rrelu(input, lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return F.rrelu_(input, lower, upper, training)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    return _instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled)


def feature_alpha_dropout(input, p, train):
    if not 0.0 <= p <= 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    return F.feature_alpha_dropout(input, p, train)


_C.Tensor.hardshrink = lambda self, lambd=0.5: F.hardshrink(self, lambd)
