"""ampgrad.masked: torch.masked's reductions and normalizations of strided tensors under a boolean mask."""
from ._ops import (_canonical_dim, _combine_input_and_mask, _input_mask, _output_mask, _reduction_identity,  # noqa: F401
                   amax, amin, argmax, argmin, cumprod, cumsum, log_softmax, logaddexp, logsumexp, mean, median, norm,
                   normalize, prod, softmax, softmin, std, sum, var)

__all__ = ["amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "log_softmax", "logaddexp", "logsumexp", "mean",
           "median", "norm", "normalize", "prod", "softmax", "softmin", "std", "sum", "var"]
