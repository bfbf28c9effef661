"""ampgrad.optim: optimizers over C++ multi-tensor update steps, and learning-rate schedulers."""
from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam
from .adamw import AdamW
from . import lr_scheduler

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "lr_scheduler"]
