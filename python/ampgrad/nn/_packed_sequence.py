"""nn.utils.rnn: PackedSequence and the packing / padding helpers, as torch's (time-major packed rows:
step t holds the first batch_sizes[t] sequences of the batch sorted by decreasing length)."""
from collections import namedtuple
from collections.abc import Iterable

from .. import _C
from .._creation import tensor as _tensor, as_tensor, arange, empty_like, full
from .._sorting import sort

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]

PackedSequence_ = namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


def bind(optional, fn):
    if optional is None:
        return None
    return fn(optional)


class PackedSequence(PackedSequence_):
    """Holds the data and list of batch_sizes of a packed sequence (build it with pack_padded_sequence
    or pack_sequence, not by hand)."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        return super().__new__(cls, *_packed_sequence_init_args(data, batch_sizes, sorted_indices, unsorted_indices))

    def pin_memory(self):
        return type(self)(self.data.pin_memory(), self.batch_sizes, bind(self.sorted_indices, lambda t: t.pin_memory()),
                          bind(self.unsorted_indices, lambda t: t.pin_memory()))

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        sorted_indices = bind(self.sorted_indices, lambda t: t.to(data.device))
        unsorted_indices = bind(self.unsorted_indices, lambda t: t.to(data.device))
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted_indices)

    def cuda(self, *args, **kwargs):
        kwargs["device"] = "cuda"
        return self.to(*args, **kwargs)

    def cpu(self, *args, **kwargs):
        kwargs["device"] = "cpu"
        return self.to(*args, **kwargs)

    def double(self):
        return self.to(dtype=_C.float64)

    def float(self):
        return self.to(dtype=_C.float32)

    def half(self):
        return self.to(dtype=_C.float16)

    def long(self):
        return self.to(dtype=_C.int64)

    def int(self):
        return self.to(dtype=_C.int32)

    def short(self):
        return self.to(dtype=_C.int16)

    def char(self):
        return self.to(dtype=_C.int8)

    def byte(self):
        return self.to(dtype=_C.uint8)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return self.data.is_pinned()


def _packed_sequence_init_args(data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
    if unsorted_indices is None:
        unsorted_indices = invert_permutation(sorted_indices)
    if batch_sizes is not None:
        if batch_sizes.device.type != "cpu":
            raise ValueError("batch_sizes should always be on CPU. Instances of PackedSequence should never be created "
                             "manually. They should be instantiated by functions like pack_sequence and "
                             "pack_padded_sequences in nn.utils.rnn. "
                             "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        return data, batch_sizes, sorted_indices, unsorted_indices
    if not (isinstance(data, (list, tuple)) and len(data) == 2):
        raise AssertionError("Expected data to be a list or tuple of length 2")
    return data[0], data[1], sorted_indices, unsorted_indices


def _packed_sequence_init(data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
    return PackedSequence(*_packed_sequence_init_args(data, batch_sizes, sorted_indices, unsorted_indices))


def invert_permutation(permutation):
    if permutation is None:
        return None
    output = empty_like(permutation)
    output.scatter_(0, permutation, arange(0, permutation.numel(), device=permutation.device))
    return output


def _pack_padded(input, lengths, batch_first):
    lens = [int(n) for n in lengths.tolist()]
    B = input.size(0) if batch_first else input.size(1)
    if len(lens) != B:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lens)} (batch_size={B})")
    if any(n <= 0 for n in lens):
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0")
    if any(lens[i] < lens[i + 1] for i in range(len(lens) - 1)):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can "
                           "pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    T = input.size(1) if batch_first else input.size(0)
    if lens[0] > T:
        raise RuntimeError(f"Expected the longest sequence to be at most {T} long (the padded input's time "
                           f"dimension), but got a length of {lens[0]}")
    batch_sizes = [sum(1 for n in lens if n > t) for t in range(lens[0])]
    # row t * B + b of a [T, B, *] input, b * T + t of a [B, T, *] one
    idx = [(b * T + t if batch_first else t * B + b) for t in range(lens[0]) for b in range(batch_sizes[t])]
    flat = input.reshape((input.size(0) * input.size(1),) + tuple(input.shape[2:]))
    data = flat.index_select(0, _tensor(idx, dtype=_C.int64, device=input.device))
    return data, _tensor(batch_sizes, dtype=_C.int64)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch of variable-length sequences ([T, B, *], or [B, T, *] when batch_first)."""
    if not isinstance(lengths, _C.Tensor):
        lengths = as_tensor(lengths, dtype=_C.int64, device="cpu")
    else:
        lengths = lengths.to(dtype=_C.int64)
    if enforce_sorted:
        sorted_indices = None
    else:
        lengths, sorted_indices = sort(lengths, descending=True)
        sorted_indices = sorted_indices.to(input.device)
        batch_dim = 0 if batch_first else 1
        input = input.index_select(batch_dim, sorted_indices)
    data, batch_sizes = _pack_padded(input, lengths, batch_first)
    return _packed_sequence_init(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Pads a packed batch back: returns (padded [T, B, *] or [B, T, *], lengths)."""
    max_seq_length = sequence.batch_sizes.size(0)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, but got "
                             f"total_length={total_length} and max sequence length being {max_seq_length}")
        max_seq_length = total_length
    data = sequence.data
    batch_sizes = [int(b) for b in sequence.batch_sizes.tolist()]
    B = batch_sizes[0]
    T = max_seq_length
    lengths = [sum(1 for bs in batch_sizes if bs > b) for b in range(B)]
    rest = tuple(data.shape[1:])
    if batch_first:
        idx = [b * T + t for t in range(len(batch_sizes)) for b in range(batch_sizes[t])]
    else:
        idx = [t * B + b for t in range(len(batch_sizes)) for b in range(batch_sizes[t])]
    out = full((T * B,) + rest, padding_value, dtype=data.dtype, device=data.device)
    out = out.index_put((_tensor(idx, dtype=_C.int64, device=data.device),), data)
    out = out.reshape(((B, T) if batch_first else (T, B)) + rest)
    lengths = _tensor(lengths, dtype=_C.int64)
    unsorted_indices = sequence.unsorted_indices
    if unsorted_indices is not None:
        batch_dim = 0 if batch_first else 1
        return out.index_select(batch_dim, unsorted_indices), lengths[unsorted_indices.cpu()]
    return out, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stacks variable-length sequences [L_i, *] into [T, B, *] (or [B, T, *]) padded with padding_value."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg of type: {type(sequences)}")
    sequences = tuple(sequences)
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if len(sequences) == 0:
        raise RuntimeError("received an empty list of sequences")
    max_len = max(s.size(0) for s in sequences)
    padded = []
    for s in sequences:
        n = max_len - s.size(0)
        if n:
            pad = full((n,) + tuple(s.shape[1:]), padding_value, dtype=s.dtype, device=s.device)
            s = _C.cat([s, pad] if padding_side == "right" else [pad, s], 0)
        padded.append(s)
    return _C.stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of sequences of a padded batch, each cut to its length."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(n)] for seq, n in zip(padded_sequences, lengths)]


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of variable-length sequences [L_i, *]."""
    lengths = as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences of a PackedSequence."""
    padded_sequences, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded_sequences, lengths, batch_first=True)
