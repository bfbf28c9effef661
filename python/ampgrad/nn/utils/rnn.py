"""torch.nn.utils.rnn: PackedSequence and the packing / padding helpers. They live in nn._packed_sequence,
below nn.modules (whose RNN layers take a PackedSequence); this module is their public name."""
from .._packed_sequence import *  # noqa: F401,F403
from .._packed_sequence import __all__, _packed_sequence_init, _packed_sequence_init_args, bind  # noqa: F401
from .._packed_sequence import PackedSequence as _PS

_PS.__module__ = __name__
