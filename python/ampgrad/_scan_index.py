"""Scans, index reductions and binning (torch.scatter_reduce, index_reduce, cummax, cummin,
logcumsumexp, searchsorted, bucketize, bincount, histc): thin fronts over the engine ops of
csrc/ops/scan_index.cpp, as functions and Tensor methods."""
from . import _C
from . import return_types as _rt
from ._C import Tensor

__all__ = ["scatter_reduce", "index_reduce", "cummax", "cummin", "logcumsumexp", "searchsorted", "bucketize",
           "bincount", "histc"]


def _int(v, fn, what, pos):
    if isinstance(v, bool) or not hasattr(v, "__index__"):
        raise TypeError(f"{fn}(): argument '{what}' (position {pos}) must be int, not {type(v).__name__}")
    return int(v)


def _tensor(v, fn, what, pos):
    if not isinstance(v, Tensor):
        raise TypeError(f"{fn}(): argument '{what}' (position {pos}) must be Tensor, not {type(v).__name__}")
    return v


def _str(v, fn, what, pos):
    if not isinstance(v, str):
        raise TypeError(f"{fn}(): argument '{what}' (position {pos}) must be str, not {type(v).__name__}")
    return v


def _copy_out(out, r):
    if out is None:
        return r
    if isinstance(out, (tuple, list)):
        for o, v in zip(out, r):
            o.resize_(v.shape)
            o.copy_(v)
        return out
    out.resize_(r.shape)
    out.copy_(r)
    return out


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True, out=None):
    fn = "scatter_reduce"
    r = _C._scatter_reduce(_tensor(input, fn, "input", 1), _int(dim, fn, "dim", 2), _tensor(index, fn, "index", 3),
                           _tensor(src, fn, "src", 4), _str(reduce, fn, "reduce", 5), bool(include_self))
    return _copy_out(out, r)


def _scatter_reduce_method(self, dim, index, src, reduce, *, include_self=True):
    return scatter_reduce(self, dim, index, src, reduce, include_self=include_self)


def _scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    fn = "scatter_reduce_"
    return _C._scatter_reduce_(self, _int(dim, fn, "dim", 1), _tensor(index, fn, "index", 2), _tensor(src, fn, "src", 3),
                               _str(reduce, fn, "reduce", 4), bool(include_self))


def index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None):
    fn = "index_reduce"
    r = _C._index_reduce(_tensor(input, fn, "input", 1), _int(dim, fn, "dim", 2), _tensor(index, fn, "index", 3),
                         _tensor(source, fn, "source", 4), _str(reduce, fn, "reduce", 5), bool(include_self))
    return _copy_out(out, r)


def _index_reduce_method(self, dim, index, source, reduce, *, include_self=True):
    return index_reduce(self, dim, index, source, reduce, include_self=include_self)


def _index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    fn = "index_reduce_"
    return _C._index_reduce_(self, _int(dim, fn, "dim", 1), _tensor(index, fn, "index", 2), _tensor(source, fn, "source", 3),
                             _str(reduce, fn, "reduce", 4), bool(include_self))


def cummax(input, dim, *, out=None):
    v, i = _C._cummax(_tensor(input, "cummax", "input", 1), _int(dim, "cummax", "dim", 2))
    return _copy_out(out, _rt.cummax(v, i)) if out is not None else _rt.cummax(v, i)


def cummin(input, dim, *, out=None):
    v, i = _C._cummin(_tensor(input, "cummin", "input", 1), _int(dim, "cummin", "dim", 2))
    return _copy_out(out, _rt.cummin(v, i)) if out is not None else _rt.cummin(v, i)


def logcumsumexp(input, dim, *, out=None):
    return _copy_out(out, _C._logcumsumexp(_tensor(input, "logcumsumexp", "input", 1), _int(dim, "logcumsumexp", "dim", 2)))


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, out=None, sorter=None):
    fn = "searchsorted"
    _tensor(sorted_sequence, fn, "sorted_sequence", 1)
    if not isinstance(input, Tensor) and (isinstance(input, bool) or not isinstance(input, (int, float))):
        raise TypeError(f"{fn}(): argument 'input' (position 2) must be Tensor, not {type(input).__name__}")
    if side is not None:
        _str(side, fn, "side", 5)
    if sorter is not None:
        _tensor(sorter, fn, "sorter", 7)
    return _copy_out(out, _C._searchsorted(sorted_sequence, input, bool(out_int32), bool(right), side, sorter))


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    fn = "bucketize"
    if not isinstance(input, Tensor) and (isinstance(input, bool) or not isinstance(input, (int, float))):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    _tensor(boundaries, fn, "boundaries", 2)
    return _copy_out(out, _C._bucketize(input, boundaries, bool(out_int32), bool(right)))


def bincount(input, weights=None, minlength=0):
    fn = "bincount"
    _tensor(input, fn, "input", 1)
    if weights is not None:
        _tensor(weights, fn, "weights", 2)
    return _C._bincount(input, weights, _int(minlength, fn, "minlength", 3))


def _number(v, fn, what, pos):
    if isinstance(v, Tensor):
        if v.numel() != 1:
            raise TypeError(f"{fn}(): argument '{what}' (position {pos}) must be Number, not Tensor")
        return v.item()
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"{fn}(): argument '{what}' (position {pos}) must be Number, not {type(v).__name__}")
    return v


def histc(input, bins=100, min=0, max=0, *, out=None):
    fn = "histc"
    r = _C._histc(_tensor(input, fn, "input", 1), _int(bins, fn, "bins", 2), float(_number(min, fn, "min", 3)),
                  float(_number(max, fn, "max", 4)))
    return _copy_out(out, r)


def _self_first(f):
    def method(self, *args, **kwargs):
        return f(self, *args, **kwargs)
    method.__name__ = f.__name__
    return method


Tensor.scatter_reduce = _scatter_reduce_method
Tensor.scatter_reduce_ = _scatter_reduce_
Tensor.index_reduce = _index_reduce_method
Tensor.index_reduce_ = _index_reduce_
for _name in ("cummax", "cummin", "logcumsumexp", "bincount", "histc"):
    setattr(Tensor, _name, _self_first(globals()[_name]))
