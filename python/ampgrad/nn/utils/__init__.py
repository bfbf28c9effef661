"""nn.utils: gradient clipping and flat parameter vectors."""
from .clip_grad import clip_grad_norm_, clip_grad_norm, clip_grad_value_, get_total_norm, clip_grads_with_norm_
from .convert_parameters import parameters_to_vector, vector_to_parameters
from . import rnn  # noqa: E402  (PackedSequence, pack_padded_sequence, ...)
