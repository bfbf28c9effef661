"""Scans, index reductions and binning (torch.scatter_reduce, index_reduce, cummax, cummin,
logcumsumexp, searchsorted, bucketize, bincount, histc): thin fronts over the engine ops of
csrc/ops/scan_index.cpp, as functions and Tensor methods."""
from . import _C
from . import return_types as _rt
from ._C import Tensor

__all__ = ["scatter_reduce", "index_reduce", "cummax", "cummin", "logcumsumexp", "searchsorted", "bucketize",
           "bincount", "histc"]


_I64 = (-(1 << 63), (1 << 63) - 1)


# torch's argument parser checks every argument's type before any value: the type checks return the
# value, _fits / _scalar_fits then raise its overflow errors.
def _int(v, fn, what, pos):
    if isinstance(v, bool) or not hasattr(v, "__index__") or isinstance(v, Tensor) and v.dtype.is_floating_point:
        raise TypeError(f"{fn}(): argument '{what}' (position {pos}) must be int, not {type(v).__name__}")
    return int(v)


def _fits(*vals):
    for v in vals:
        if not _I64[0] <= v <= _I64[1]:
            raise ValueError("Overflow when unpacking long long")


def _bool(v, fn, what):
    if not isinstance(v, bool):
        raise TypeError(f"{fn}(): argument '{what}' must be bool, not {type(v).__name__}")
    return v


def _tensor(v, fn, what, pos):
    if not isinstance(v, Tensor):
        raise TypeError(f"{fn}(): argument '{what}' (position {pos}) must be Tensor, not {type(v).__name__}")
    return v


def _str(v, fn, what, pos):
    if not isinstance(v, str):
        raise TypeError(f"{fn}(): argument '{what}' (position {pos}) must be str, not {type(v).__name__}")
    return v


def _number(v, fn, what, pos):
    if isinstance(v, Tensor):
        if v.numel() != 1:
            raise TypeError(f"{fn}(): argument '{what}' (position {pos}) must be Number, not Tensor")
        return v.item()
    if not isinstance(v, (int, float)):
        raise TypeError(f"{fn}(): argument '{what}' (position {pos}) must be Number, not {type(v).__name__}")
    return v


def _scalar_fits(*vals):
    for v in vals:
        if isinstance(v, int) and v < _I64[0]:
            raise OverflowError("can't convert negative int to unsigned")
        if isinstance(v, int) and v >= 1 << 64:
            raise OverflowError("int too big to convert")


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


def _reduce_args(fn, input, dim, index, src, reduce, include_self, src_name, first):
    args = (_tensor(input, fn, "input", 1), _int(dim, fn, "dim", first), _tensor(index, fn, "index", first + 1),
            _tensor(src, fn, src_name, first + 2), _str(reduce, fn, "reduce", first + 3), _bool(include_self, fn, "include_self"))
    _fits(args[1])
    return args


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True, out=None):
    return _copy_out(out, _C._scatter_reduce(*_reduce_args("scatter_reduce", input, dim, index, src, reduce, include_self, "src", 2)))


def _scatter_reduce_method(self, dim, index, src, reduce, *, include_self=True):
    return _C._scatter_reduce(*_reduce_args("scatter_reduce", self, dim, index, src, reduce, include_self, "src", 1))


def _scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    return _C._scatter_reduce_(*_reduce_args("scatter_reduce_", self, dim, index, src, reduce, include_self, "src", 1))


def index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None):
    return _copy_out(out, _C._index_reduce(*_reduce_args("index_reduce", input, dim, index, source, reduce, include_self, "source", 2)))


def _index_reduce_method(self, dim, index, source, reduce, *, include_self=True):
    return _C._index_reduce(*_reduce_args("index_reduce", self, dim, index, source, reduce, include_self, "source", 1))


def _index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    return _C._index_reduce_(*_reduce_args("index_reduce_", self, dim, index, source, reduce, include_self, "source", 1))


def _dim_args(fn, input, dim):
    input, dim = _tensor(input, fn, "input", 1), _int(dim, fn, "dim", 2)
    _fits(dim)
    return input, dim


def cummax(input, dim, *, out=None):
    r = _rt.cummax(*_C._cummax(*_dim_args("cummax", input, dim)))
    return r if out is None else _copy_out(out, r)


def cummin(input, dim, *, out=None):
    r = _rt.cummin(*_C._cummin(*_dim_args("cummin", input, dim)))
    return r if out is None else _copy_out(out, r)


def logcumsumexp(input, dim, *, out=None):
    return _copy_out(out, _C._logcumsumexp(*_dim_args("logcumsumexp", input, dim)))


def _value(v, fn, pos):
    if not isinstance(v, (Tensor, int, float)):
        raise TypeError(f"{fn}(): argument 'input' (position {pos}) must be Tensor, not {type(v).__name__}")
    return v


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, out=None, sorter=None):
    fn = "searchsorted"
    _tensor(sorted_sequence, fn, "sorted_sequence", 1)
    _value(input, fn, 2)
    if side is not None:
        _str(side, fn, "side", 5)
    if sorter is not None:
        _tensor(sorter, fn, "sorter", 7)
    _bool(out_int32, fn, "out_int32"), _bool(right, fn, "right")
    if not isinstance(input, Tensor):
        _scalar_fits(input)
    return _copy_out(out, _C._searchsorted(sorted_sequence, input, out_int32, right, side, sorter))


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    fn = "bucketize"
    _value(input, fn, 1)
    _tensor(boundaries, fn, "boundaries", 2)
    _bool(out_int32, fn, "out_int32"), _bool(right, fn, "right")
    if not isinstance(input, Tensor):
        _scalar_fits(input)
    return _copy_out(out, _C._bucketize(input, boundaries, out_int32, right))


def bincount(input, weights=None, minlength=0):
    fn = "bincount"
    _tensor(input, fn, "input", 1)
    if weights is not None:
        _tensor(weights, fn, "weights", 2)
    minlength = _int(minlength, fn, "minlength", 3)
    _fits(minlength)
    return _C._bincount(input, weights, minlength)


def histc(input, bins=100, min=0, max=0, *, out=None):
    fn = "histc"
    input, bins = _tensor(input, fn, "input", 1), _int(bins, fn, "bins", 2)
    lo, hi = _number(min, fn, "min", 3), _number(max, fn, "max", 4)
    _scalar_fits(hi, lo)  # torch's binding converts its arguments last to first
    _fits(bins)
    return _copy_out(out, _C._histc(input, bins, float(lo), float(hi)))


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
