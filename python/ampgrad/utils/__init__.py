"""ampgrad.utils: torch.utils' data loading (ampgrad.utils.data) and DLPack (ampgrad.utils.dlpack)."""
from . import data  # noqa: F401
from . import dlpack  # noqa: F401
