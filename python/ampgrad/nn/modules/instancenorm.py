"""InstanceNorm1d/2d/3d (torch.nn.modules.instancenorm: affine and track_running_stats off by default; the
running stats, when tracked, are used in eval), LocalResponseNorm and CrossMapLRN2d."""
import warnings
from types import SimpleNamespace as _NS

from ... import _C, _creation
from ..._dtype_info import finfo as _finfo

_ag = _NS(zeros=_creation.zeros, zeros_like=_creation.zeros_like, randn=_creation.randn, eye=_creation.eye,
          stack=_C.stack, cat=_C.cat, finfo=_finfo)

from ...autograd.function import Function
from .. import functional as F
from .batchnorm import _BatchNorm
from .module import Module

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LocalResponseNorm", "CrossMapLRN2d"]


class _InstanceNorm(_BatchNorm):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def _get_no_batch_dim(self):
        raise NotImplementedError

    def _handle_no_batch_input(self, input):
        return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)

    def _apply_instance_norm(self, input):
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                               self.training or not self.track_running_stats,
                               self.momentum if self.momentum is not None else 0.0, self.eps)

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.dim() - self._get_no_batch_dim()
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.size(feature_dim)}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this "
                          "warning by not passing in num_features, which is not used because affine=False",
                          stacklevel=2)
        if input.dim() == self._get_no_batch_dim():
            return self._handle_no_batch_input(input)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    def _get_no_batch_dim(self):
        return 2

    def _check_input_dim(self, input):
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class InstanceNorm2d(_InstanceNorm):
    def _get_no_batch_dim(self):
        return 3

    def _check_input_dim(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"expected 3D or 4D input (got {input.dim()}D input)")


class InstanceNorm3d(_InstanceNorm):
    def _get_no_batch_dim(self):
        return 4

    def _check_input_dim(self, input):
        if input.dim() not in (4, 5):
            raise ValueError(f"expected 4D or 5D input (got {input.dim()}D input)")


class LocalResponseNorm(Module):
    __constants__ = ["size", "alpha", "beta", "k"]

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


class _CrossMapLRN2dFn(Function):
    """torch's legacy cross-map LRN (torch.nn.modules._functions.CrossMapLRN2d): its channel-window recurrence in
    the forward and its hand-written backward, vectorised over the batch."""

    @staticmethod
    def forward(ctx, input, size, alpha=1e-4, beta=0.75, k=1):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        channels = input.size(1)
        sq = input * input
        pre_pad = int((size - 1) / 2 + 1)
        pre_pad_crop = min(pre_pad, channels)
        scales = [sq[:, :pre_pad_crop].sum(1)]
        for c in range(1, channels):
            cur = scales[-1]
            if c < channels - pre_pad + 1:
                cur = cur + sq[:, c + pre_pad - 1]
            if c > pre_pad:
                cur = cur - sq[:, c - pre_pad]
            scales.append(cur)
        scale = _ag.stack(scales, 1) * (alpha / size) + k
        output = scale.pow(-beta) * input
        ctx.size, ctx.alpha, ctx.beta, ctx.k = size, alpha, beta, k
        ctx.scale = scale
        ctx.save_for_backward(input, output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, output = ctx.saved_tensors
        size, alpha, beta = ctx.size, ctx.alpha, ctx.beta
        N, C, H, W = input.shape
        cache_ratio_value = 2 * alpha * beta / size
        inverse_pre_pad = int(size - (size - 1) / 2)
        grad_input = ctx.scale.pow(-beta) * grad_output
        ratio = grad_output * output / ctx.scale
        padded = _ag.zeros(N, C + size - 1, H, W, dtype=input.dtype)
        padded[:, inverse_pre_pad:inverse_pre_pad + C] = ratio
        # accum for channel c: padded[c] + ... + padded[c + size - 1]
        cs = _ag.cat([_ag.zeros(N, 1, H, W, dtype=input.dtype), padded.cumsum(1)], 1)
        accum = cs[:, size:size + C] - cs[:, 0:C]
        grad_input = grad_input - cache_ratio_value * input * accum
        return grad_input, None, None, None, None


class CrossMapLRN2d(Module):
    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return _CrossMapLRN2dFn.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)
