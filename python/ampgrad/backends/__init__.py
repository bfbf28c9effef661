"""ampgrad.backends: backend flags with torch.backends' names."""
from . import cuda  # noqa: F401
