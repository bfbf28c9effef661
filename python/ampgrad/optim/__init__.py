"""ampgrad.optim: optimizers (SGD/Adam/AdamW over C++ multi-tensor update steps; the others with
torch's single-tensor updates in tensor ops), and learning-rate schedulers."""
from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam
from .adamw import AdamW
from .adadelta import Adadelta
from .adagrad import Adagrad
from .rmsprop import RMSprop
from .adamax import Adamax
from .nadam import NAdam
from .radam import RAdam
from .rprop import Rprop
from .asgd import ASGD
from .lbfgs import LBFGS
from .adafactor import Adafactor
from .sparse_adam import SparseAdam
from .muon import Muon
from . import lr_scheduler
from . import swa_utils

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "Adadelta", "Adagrad", "RMSprop", "Adamax", "NAdam", "RAdam",
           "Rprop", "ASGD", "LBFGS", "Adafactor", "SparseAdam", "Muon", "lr_scheduler", "swa_utils"]
