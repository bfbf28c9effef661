"""ampgrad.cpu: CPU device module (amp aliases)."""
from . import amp
