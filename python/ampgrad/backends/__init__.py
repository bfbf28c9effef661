"""ampgrad.backends: backend flags with torch.backends' names."""
from . import cuda  # noqa: F401
from . import cudnn  # noqa: F401
from . import mps  # noqa: F401
from . import cpu  # noqa: F401
