"""Tensor.__getitem__ / __setitem__: basic indexing (ints, slices, None, ...) makes views; tensors,
lists and bool masks make an advanced index handled by the engine's offset kernels."""
import numbers

from . import _C
from ._creation import tensor


def _is_int(x):
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def _to_index_tensor(x, device):
    if isinstance(x, _C.Tensor):
        return x
    if isinstance(x, bool):
        return tensor(x)
    t = tensor(x)
    if t.numel() == 0 or (isinstance(x, (list, tuple)) and t.dtype != _C.bool):
        t = t.long()  # torch reads a sequence index as int64 (floats truncate); bools stay a mask
    if t.is_floating_point():
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return t


def _treat_as_tuple(index):
    """torch's treatSequenceAsTuple: a short non-tuple sequence holding a sequence, slice, None,
    Ellipsis or tensor is a tuple of indices (x[[[0, 1], [2, 0]]] is x[[0, 1], [2, 0]]); a plain
    list of ints is one advanced index."""
    if isinstance(index, tuple):
        return True
    if not isinstance(index, list) or len(index) >= 32:
        return False
    return any(it is None or it is Ellipsis or isinstance(it, (list, tuple, slice, _C.Tensor)) for it in index)


def _normalize(index):
    return tuple(index) if _treat_as_tuple(index) else (index,)


def _apply(self, index):
    """Applies basic indexing; returns (view, advanced index list aligned to the view's dims)."""
    index = _normalize(index)
    n_used = 0
    for it in index:
        if it is None or it is Ellipsis:
            continue
        if isinstance(it, _C.Tensor) and it.dtype in (_C.bool, _C.uint8):
            n_used += max(it.dim(), 1) if it.dim() > 0 else 0
        elif isinstance(it, bool):
            continue
        else:
            n_used += 1
    if n_used > self.dim():
        raise IndexError(f"too many indices for tensor of dimension {self.dim()}")
    t = self
    dim = 0
    adv = []  # (dim in result, index tensor)
    seen_ellipsis = False
    for it in index:
        if it is Ellipsis:
            # torch: the first ellipsis spans the unindexed dims, any later one spans none
            if not seen_ellipsis:
                dim += self.dim() - n_used
            seen_ellipsis = True
            continue
        if it is None:
            t = t.unsqueeze(dim)
            dim += 1
            continue
        if isinstance(it, bool) or (isinstance(it, _C.Tensor) and it.dim() == 0 and it.dtype in (_C.bool, _C.uint8)):
            # a 0-dim mask adds a dim of size 1 (True) or 0 (False), like a Python bool
            t = t.unsqueeze(dim)
            if not bool(it):
                t = _C._slice(t, dim, 0, 0, 1)
            dim += 1
            continue
        if _is_int(it) or (isinstance(it, _C.Tensor) and it.dim() == 0 and not it.is_floating_point()
                           and it.dtype not in (_C.bool, _C.uint8)):
            i = int(it)
            size = t.shape[dim]
            if i < -size or i >= size:
                raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {size}")
            t = t.select(dim, i)
            continue
        if isinstance(it, slice):
            step = 1 if it.step is None else int(it.step)
            if step <= 0:
                raise ValueError("step must be greater than zero")
            start = None if it.start is None else int(it.start)
            stop = None if it.stop is None else int(it.stop)
            t = _C._slice(t, dim, start, stop, step)
            dim += 1
            continue
        if isinstance(it, (_C.Tensor, list, tuple, range)) or hasattr(it, "__array__"):
            idx = _to_index_tensor(list(it) if isinstance(it, range) else it, t.device)
            adv.append((dim, idx))
            dim += max(idx.dim(), 1) if idx.dtype in (_C.bool, _C.uint8) and idx.dim() > 0 else 1
            continue
        if isinstance(it, float):
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices (got float)")
        raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices (got {type(it).__name__})")
    return t, adv


def _adv_list(t, adv):
    idx = [None] * t.dim()
    out = []
    pos = 0
    for d, it in adv:
        while pos < d:
            out.append(None)
            pos += 1
        out.append(it)
        pos += max(it.dim(), 1) if it.dtype in (_C.bool, _C.uint8) and it.dim() > 0 else 1
    del idx
    return out


def getitem(self, index):
    t, adv = _apply(self, index)
    if not adv:
        return t if t is not self else self.view(tuple(self.shape))
    return t._index(_adv_list(t, adv))


def setitem(self, index, value):
    if isinstance(value, (list, tuple)):  # torch takes only a Tensor or a number here
        raise TypeError(f"can't assign a {type(value).__name__} to a {self.type()}")
    t, adv = _apply(self, index)
    if not isinstance(value, _C.Tensor):
        value = tensor(value, dtype=self.dtype, device=self.device)
    if not adv:
        t.copy_(value)
        return
    t._index_put_(_adv_list(t, adv), value.to(self.dtype), False)
