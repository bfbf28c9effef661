"""torch.nn.modules.fold's names (Note [torch's module paths] in nn/modules/__init__.py); defined in spatial.py."""
from .spatial import (Fold, Unfold)

__all__ = ["Fold", "Unfold"]
