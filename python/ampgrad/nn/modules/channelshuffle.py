"""torch.nn.modules.channelshuffle's names (Note [torch's module paths] in nn/modules/__init__.py); defined in spatial.py."""
from .spatial import (ChannelShuffle)

__all__ = ["ChannelShuffle"]
