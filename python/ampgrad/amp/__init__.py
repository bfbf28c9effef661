"""ampgrad.amp: automatic mixed precision (autocast + GradScaler), as torch.amp."""
from .autocast_mode import autocast, custom_fwd, custom_bwd, is_autocast_available
from .grad_scaler import GradScaler

__all__ = ["autocast", "custom_fwd", "custom_bwd", "is_autocast_available", "GradScaler"]
from . import debug  # noqa: E402,F401  (amptools: the AMP inspector, ampgrad's own)
