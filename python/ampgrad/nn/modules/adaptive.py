"""torch.nn.modules.adaptive's names (Note [torch's module paths] in nn/modules/__init__.py); defined in loss_more.py."""
from .loss_more import (AdaptiveLogSoftmaxWithLoss)

__all__ = ["AdaptiveLogSoftmaxWithLoss"]
