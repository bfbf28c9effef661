"""ampgrad.nn: functional ops (modules arrive with the training kit)."""
from . import functional
