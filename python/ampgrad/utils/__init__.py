"""ampgrad.utils: torch.utils' data loading (ampgrad.utils.data)."""
from . import data  # noqa: F401
