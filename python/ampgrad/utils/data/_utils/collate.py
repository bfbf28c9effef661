"""default_collate / default_convert with torch's rules: tensors stack, NumPy arrays and scalars become
tensors (then stack), Python floats -> float64 tensor, ints -> int64, bools -> bool, strings and bytes
stay lists, mappings / namedtuples / sequences collate element-wise (a tuple batch gives a list)."""
import collections
import re

import numpy as np

from ...._C import Tensor, float64
from ...._creation import tensor, as_tensor
from ...._C import stack

__all__ = ["default_collate", "default_convert", "collate"]

np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
                                  "lists; found {}")


def default_convert(data):
    """NumPy arrays (not of strings/objects) and NumPy scalars -> tensors, recursively; the rest unchanged."""
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_", "bytes_"):
        if elem_type.__name__ == "ndarray" and np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = data.copy()
                clone.update({key: default_convert(data[key]) for key in data})
                return clone
            return elem_type({key: default_convert(data[key]) for key in data})
        except TypeError:
            return {key: default_convert(data[key]) for key in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]  # torch's backward compatibility: a list
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = data.copy()
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def _collate_tensor(batch):
    return stack(batch, 0)


def _collate_numpy_array(batch):
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return default_collate([as_tensor(b) for b in batch])


def collate(batch, *, collate_fn_map=None):
    """torch.utils.data._utils.collate.collate: the recursion behind default_collate."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = elem.copy()
                clone.update({key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem})
                return clone
            return elem_type({key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem})
        except TypeError:
            return {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = elem.copy()
                for i, samples in enumerate(transposed):
                    clone[i] = collate(samples, collate_fn_map=collate_fn_map)
                return clone
            return elem_type([collate(samples, collate_fn_map=collate_fn_map) for samples in transposed])
        except TypeError:
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    return _collate_tensor(batch)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    return _collate_numpy_array(batch)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return as_tensor(np.asarray(batch))


def collate_float_fn(batch, *, collate_fn_map=None):
    return tensor(batch, dtype=float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    return tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {Tensor: collate_tensor_fn, np.ndarray: collate_numpy_array_fn,
                          np.memmap: collate_numpy_array_fn,
                          (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
                          float: collate_float_fn, int: collate_int_fn, str: collate_str_fn, bytes: collate_str_fn}


def default_collate(batch):
    """Puts a list of samples together into a batch (see the module docstring for the rules)."""
    return collate(batch, collate_fn_map=default_collate_fn_map)
