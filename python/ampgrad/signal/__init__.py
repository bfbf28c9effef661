"""ampgrad.signal: torch.signal (its window functions)."""
from . import windows  # noqa: F401

__all__ = ["windows"]
