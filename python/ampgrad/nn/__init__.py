"""ampgrad.nn: modules, parameters, functional ops, init and utils (mirrors torch.nn)."""
from .parameter import Parameter, Buffer
from .parameter import UninitializedParameter, UninitializedBuffer  # lazy modules (nn/modules/lazy.py)
from .modules import *  # noqa: F401,F403
from . import functional
from . import init
from . import utils
from . import parallel  # noqa: E402
from ._linear_cross_entropy import LinearCrossEntropyOptions  # noqa: E402  (F.linear_cross_entropy's chunked path)
