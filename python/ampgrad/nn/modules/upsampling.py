"""torch.nn.modules.upsampling's names (Note [torch's module paths] in nn/modules/__init__.py); defined in spatial.py."""
from .spatial import (Upsample, UpsamplingBilinear2d, UpsamplingNearest2d)

__all__ = ["Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"]
