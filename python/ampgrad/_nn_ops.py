"""torch-level names of nn ops (torch.conv2d, torch.layer_norm, torch.dropout, ...), with the
signatures those names have in torch; the implementations live in nn.functional."""
from .nn import functional as F
from .nn.functional import (conv1d, conv2d, conv_transpose1d, conv_transpose2d, prelu, bilinear, cosine_similarity,
                            pairwise_distance, pdist, selu, celu, selu_, celu_, relu_)

__all__ = ["conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "prelu", "bilinear", "cosine_similarity",
           "pairwise_distance", "pdist", "selu", "celu", "selu_", "celu_", "relu_", "dropout", "layer_norm", "group_norm", "embedding"]


def dropout(input, p, train):
    return F.dropout(input, p, train)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    return F.group_norm(input, num_groups, weight, bias, eps)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    # torch.embedding takes (weight, indices) and -1 for "no padding index".
    return F.embedding(indices, weight, None if padding_idx == -1 else padding_idx, None, 2.0, scale_grad_by_freq,
                       sparse)
