"""ampgrad.nn: modules, parameters, functional ops, init and utils (mirrors torch.nn)."""
from .parameter import Parameter, Buffer
from .parameter import UninitializedParameter, UninitializedBuffer  # lazy modules (nn/modules/lazy.py)
from .modules import *  # noqa: F401,F403
from . import functional
from . import init
from . import utils
from . import parallel  # noqa: E402
