"""torch.return_types: the named tuples returned by ops with several outputs (values, indices)."""
import collections

__all__ = ["sort", "topk", "kthvalue", "median", "nanmedian"]


def _rt(name):
    t = collections.namedtuple(name, ["values", "indices"])
    t.__module__ = "ampgrad.return_types"
    t.__qualname__ = name
    return t


sort = _rt("sort")
topk = _rt("topk")
kthvalue = _rt("kthvalue")
median = _rt("median")
nanmedian = _rt("nanmedian")
