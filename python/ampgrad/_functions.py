"""Module-level functions of ampgrad that need Python-side argument handling: reductions with
torch's overloads, stacking, broadcasting and comparisons. The creation and random functions
(ampgrad._creation) and finfo / iinfo (ampgrad._dtype_info) are imported here too, so that
`from ._functions import *` in ampgrad/__init__.py exports them as before."""
# `from ._functions import *` in ampgrad/__init__.py has always exported these modules too (ampgrad.math,
# ampgrad.np, ...): math and np are unused here but stay, so that ampgrad's names do not change.
import builtins
import math  # noqa: F401
import numbers

import numpy as np  # noqa: F401

from . import _C, _argparse
from ._creation import (tensor, as_tensor, asarray, scalar_tensor, full, zeros, ones, empty, zeros_like,  # noqa: F401
                        ones_like, empty_like, full_like, arange, range, linspace, logspace, eye, Generator,
                        default_generator, manual_seed, seed, initial_seed, rand, randn, rand_like, randn_like,
                        randint, randint_like, randperm, normal, bernoulli, multinomial)
from ._dtype_info import finfo, iinfo  # noqa: F401
from ._tensor import (Tensor, _dims, _minmax, _softmax_bool_dim, Size, isclose, allclose,  # noqa: F401
                      _index_put as _index_put_op)


# ---- reductions with overloads
def sum(input, dim=None, keepdim=False, *, dtype=None):
    return _C._sum(input, _dims(dim), keepdim, dtype)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    return _C._mean(input, _dims(dim), keepdim, dtype)


def max(input, dim=None, keepdim=False):
    return _minmax(input, dim, keepdim, "max")


def min(input, dim=None, keepdim=False):
    return _minmax(input, dim, keepdim, "min")


def where(condition, input=None, other=None):
    if input is None and other is None:
        return tuple(_C._where_nonzero(condition))
    return _C.where(condition, input, other)


def movedim(input, source, destination):
    return input.movedim(source, destination)


moveaxis = movedim


def index_put(input, indices, values, accumulate=False):
    return _index_put_op("fn", input, indices, values, accumulate, False)


def nonzero(input, *, as_tuple=False):
    return input.nonzero(as_tuple=as_tuple)


def softmax(input, dim, dtype=None):
    _softmax_bool_dim("fn", "softmax", (input, dim), dim, dtype)
    return _C._softmax(input, dim, dtype)


def log_softmax(input, dim, dtype=None):
    _softmax_bool_dim("fn", "log_softmax", (input, dim), dim, dtype)
    return _C._log_softmax(input, dim, dtype)


def hstack(tensors):
    ts = [t if t.dim() > 0 else t.reshape(1) for t in tensors]
    return _C.cat(ts, 0 if ts[0].dim() == 1 else 1)


def vstack(tensors):
    return _C.cat([t.reshape(1, -1) if t.dim() < 2 else t for t in tensors], 0)


row_stack = vstack


def dstack(tensors):
    ts = []
    for t in tensors:
        if t.dim() == 0:
            t = t.reshape(1, 1, 1)
        elif t.dim() == 1:
            t = t.reshape(1, -1, 1)
        elif t.dim() == 2:
            t = t.unsqueeze(-1)
        ts.append(t)
    return _C.cat(ts, 2)


def tile(input, dims):
    if isinstance(dims, numbers.Integral):   # int[] without a size: torch's parser refuses a lone int here
        raise TypeError(f"tile(): argument 'dims' (position 2) must be tuple of ints, not {type(dims).__name__}")
    return input.tile(dims)


def broadcast_shapes(*shapes):
    out = ()
    for s in shapes:
        s = (s,) if isinstance(s, numbers.Integral) else tuple(s)
        if builtins.any(d < 0 for d in s):
            raise ValueError("Attempting to broadcast a dimension with negative length!")
        out = _C.broadcast_shapes_(out, s)
    return Size(out)


def broadcast_to(input, size):
    return input.expand(tuple(size))


def broadcast_tensors(*tensors):
    shape = broadcast_shapes(*[t.shape for t in tensors])
    return tuple(t.expand(tuple(shape)) for t in tensors)


def numel(input):
    return input.numel()


def is_tensor(obj):
    return isinstance(obj, Tensor)


def is_floating_point(input):
    return input.is_floating_point()


def is_nonzero(input):
    if input.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return builtins.bool(input.item())


def result_type(tensor, other):  # torch's argument names (result_type(tensor, other=2))
    return _C._result_type(tensor, other)


def equal(input, other):
    return input.equal(other)


def clone(input, *, memory_format=None):
    return input.clone()


def square(input):
    if input.dtype == _C.bool:  # torch's square is pow(input, 2): bool promotes to int64
        input = input.to(_C.int64)
    return input * input


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    return input.norm(p, dim, keepdim, dtype)


def flatten(input, start_dim=0, end_dim=-1):
    return input.flatten(start_dim, end_dim)


def prod(input, dim=None, keepdim=False, *, dtype=None):
    return input.prod(dim, keepdim, dtype=dtype)


for _n in ("amax", "amin", "argmax", "argmin", "var", "std", "logsumexp", "cumsum", "cumprod", "all", "any",
           "count_nonzero", "nansum"):
    def _fn(input, *args, _n=_n, **kwargs):
        return getattr(Tensor, _n)(input, *args, **kwargs)
    _fn.__name__ = _n
    globals()[_n] = _fn


def _bool_first(dim, unbiased):
    """torch's var/std(input, unbiased) overload: a bool in the dim position is `unbiased`."""
    return (None, dim) if isinstance(dim, builtins.bool) else (dim, unbiased)


_UNSET = object()  # an argument the caller did not pass (torch's parser message lists only the given ones)


def _var_std_args(name, input, dim, unbiased, keepdim, correction):
    """torch's overloads take `unbiased` as a bool only: anything else (var_mean(x, 0, 1)) is its parser's
    TypeError. Returns (dim, unbiased, keepdim, correction) with the defaults filled in."""
    if unbiased is not None and not isinstance(unbiased, (builtins.bool, np.bool_)):
        args = (input, dim, unbiased) + (() if keepdim is _UNSET else (keepdim,))
        err = _argparse.parse_error("fn", name, args, {} if correction is _UNSET else {"correction": correction})
        if err is not None:
            raise err
    dim, unbiased = _bool_first(dim, unbiased)
    return dim, unbiased, False if keepdim is _UNSET else keepdim, None if correction is _UNSET else correction


def var_mean(input, dim=None, unbiased=None, keepdim=_UNSET, *, correction=_UNSET):
    dim, unbiased, keepdim, correction = _var_std_args("var_mean", input, dim, unbiased, keepdim, correction)
    return input.var(dim, unbiased, keepdim, correction=correction), input.mean(dim, keepdim)


def std_mean(input, dim=None, unbiased=None, keepdim=_UNSET, *, correction=_UNSET):
    dim, unbiased, keepdim, correction = _var_std_args("std_mean", input, dim, unbiased, keepdim, correction)
    return input.std(dim, unbiased, keepdim, correction=correction), input.mean(dim, keepdim)


def clamp_min(input, min):
    return input.clamp(min=min)


def clamp_max(input, max):
    return input.clamp(max=max)


def zero_(input):
    """torch.zero_(t): fills t with zeros in place and returns it."""
    return input.zero_()
