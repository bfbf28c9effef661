"""nn modules added by engineer nnmods (re-exported by nn.modules): activations, losses, normalisation,
EmbeddingBag, lazy modules, Container / SyncBatchNorm / DataParallel."""
from .activation_more import Hardshrink, Softshrink, Threshold, RReLU, Softmax2d, FeatureAlphaDropout
from .loss_more import GaussianNLLLoss, MultiLabelSoftMarginLoss, TripletMarginWithDistanceLoss, AdaptiveLogSoftmaxWithLoss
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LocalResponseNorm, CrossMapLRN2d
from .embedding_bag import EmbeddingBag
from .lazy import (LazyModuleMixin, LazyLinear, LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d,
                   LazyConvTranspose2d, LazyConvTranspose3d, LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d,
                   LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d)
from .parallel_more import Container, SyncBatchNorm, DataParallel

__all__ = ["Hardshrink", "Softshrink", "Threshold", "RReLU", "Softmax2d", "FeatureAlphaDropout", "GaussianNLLLoss",
           "MultiLabelSoftMarginLoss", "TripletMarginWithDistanceLoss", "AdaptiveLogSoftmaxWithLoss", "InstanceNorm1d",
           "InstanceNorm2d", "InstanceNorm3d", "LocalResponseNorm", "CrossMapLRN2d", "EmbeddingBag", "LazyLinear",
           "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
           "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d", "Container", "SyncBatchNorm", "DataParallel"]
