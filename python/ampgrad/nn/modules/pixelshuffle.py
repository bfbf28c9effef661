"""torch.nn.modules.pixelshuffle's names (Note [torch's module paths] in nn/modules/__init__.py); defined in spatial.py."""
from .spatial import (PixelShuffle, PixelUnshuffle)

__all__ = ["PixelShuffle", "PixelUnshuffle"]
