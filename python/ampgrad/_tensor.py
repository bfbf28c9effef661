"""Python-side methods of ampgrad.Tensor: argument parsing that torch does with overloads,
conversions (to, numpy, tolist), printing, indexing and autograd entry points. The hot ops are
bound directly in C++ (csrc/bindings).

Layering (tests/test_import_layers.py): this module imports only _C and the leaf modules below it
(_argparse, _creation, _indexing, _tensor_str). Tensor.backward calls ampgrad.autograd, a layer above, so that
package installs it (ampgrad/autograd/_backward.py)."""
import builtins
import collections
import numbers

import numpy as np

from . import _C
from . import _argparse
from . import _creation
from . import _argparse
from . import _indexing
from . import _tensor_str
from ._creation import tensor, full, _check_bernoulli_p

Tensor = _C.Tensor

_max_t = collections.namedtuple("max", ["values", "indices"])
_min_t = collections.namedtuple("min", ["values", "indices"])


class Size(tuple):
    """torch.Size: a tuple of ints with numel()."""

    def __repr__(self):
        return "ampgrad.Size([" + ", ".join(str(s) for s in self) + "])"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, k):
        r = tuple.__getitem__(self, k)
        return Size(r) if isinstance(k, slice) else r


_C._set_size_class(Size)


class RemovableHandle:
    """Handle returned by register_hook; remove() unregisters the hook."""

    def __init__(self, tensor, key):
        self._tensor = tensor
        self._key = key

    def remove(self):
        if self._tensor is not None:
            self._tensor._remove_hook(*self._key)
            self._tensor = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _dims(dim):
    if dim is None:
        return None
    if isinstance(dim, numbers.Integral):
        return int(dim)   # one int: the engine's int64 cast (ValueError beyond int64, as torch's int[1] dim)
    if isinstance(dim, (str, bytes)) or not builtins.all(isinstance(d, numbers.Integral) for d in dim):
        raise TypeError(f"dim must be an int or a tuple of ints, but got {builtins.type(dim).__name__}")
    return [int(d) for d in dim]


def _method(name):
    def deco(fn):
        setattr(Tensor, name, fn)
        return fn
    return deco


# ---- autograd (Tensor.backward is installed by ampgrad.autograd)
@_method("register_hook")
def register_hook(self, hook):
    return RemovableHandle(self, self._register_hook(hook))


@_method("register_post_accumulate_grad_hook")
def register_post_accumulate_grad_hook(self, hook):
    return RemovableHandle(self, self._register_post_accumulate_grad_hook(hook))


def _zero_grad(params, set_to_none=True):
    """Clears the .grad of every tensor in `params` (Module.zero_grad and Optimizer.zero_grad)."""
    for p in params:
        if p.grad is None:
            continue
        if set_to_none:
            p.grad = None
            continue
        if p.grad.grad_fn is not None:
            p.grad.detach_()
        else:
            p.grad.requires_grad_(False)
        p.grad.zero_()


# ---- reductions
@_method("sum")
def sum(self, dim=None, keepdim=False, *, dtype=None):
    return _C._sum(self, _dims(dim), keepdim, dtype)


@_method("nansum")
def nansum(self, dim=None, keepdim=False, *, dtype=None):
    return _C._sum(_C.where(self.isnan(), 0, self), _dims(dim), keepdim, dtype)


@_method("mean")
def mean(self, dim=None, keepdim=False, *, dtype=None):
    return _C._mean(self, _dims(dim), keepdim, dtype)


@_method("prod")
def prod(self, dim=None, keepdim=False, *, dtype=None):
    if isinstance(dim, bool):   # the parser's int check (a bool is not an int there)
        raise TypeError("prod(): argument 'dim' (position 1) must be int, not bool")
    return _C._prod(self, dim, keepdim, dtype)


def _minmax(self, dim, keepdim, which):
    if dim is None:
        if keepdim:
            raise TypeError(f"{which}() received an invalid combination of arguments")
        return _C._max_all(self) if which == "max" else _C._min_all(self)
    if isinstance(dim, Tensor):
        return _C.maximum(self, dim) if which == "max" else _C.minimum(self, dim)
    v, i = (_C._max_dim if which == "max" else _C._min_dim)(self, int(dim), keepdim)
    return (_max_t if which == "max" else _min_t)(v, i)


@_method("max")
def max(self, dim=None, keepdim=False):
    return _minmax(self, dim, keepdim, "max")


@_method("min")
def min(self, dim=None, keepdim=False):
    return _minmax(self, dim, keepdim, "min")


def _check_empty_reduction(self, dims, name):
    """torch's check of a reduction without identity over an empty tensor, dim by dim in the given order: each
    dim wrapped (IndexError out of range), then refused where its size is 0 (named as given)."""
    n = self.dim()
    lim = builtins.max(n, 1)
    for d in [dims] if isinstance(dims, int) else dims:
        if not -lim <= d < lim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-lim}, {lim - 1}], but got {d})")
        if n and self.shape[d % lim] == 0:
            raise IndexError(f"{name}: Expected reduction dim {d} to have non-zero size.")


@_method("amax")
def amax(self, dim=(), keepdim=False):
    dims = _dims(dim)
    if dims not in (None, []) and self.numel() == 0:
        _check_empty_reduction(self, dims, "amax()")
    return _C._amax(self, dims, keepdim)


@_method("amin")
def amin(self, dim=(), keepdim=False):
    dims = _dims(dim)
    if dims not in (None, []) and self.numel() == 0:
        _check_empty_reduction(self, dims, "amin()")
    return _C._amin(self, dims, keepdim)


@_method("argmax")
def argmax(self, dim=None, keepdim=False):
    return _C._argmax(self, dim, keepdim)


@_method("argmin")
def argmin(self, dim=None, keepdim=False):
    return _C._argmin(self, dim, keepdim)


def _correction(unbiased, correction):
    if correction is not None:
        return builtins.float(correction)
    if unbiased is None:
        return 1.0
    return 1.0 if unbiased else 0.0


@_method("var")
def var(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(dim, builtins.bool):  # var(unbiased)
        dim, unbiased = None, dim
    return _C._var(self, _dims(dim), _correction(unbiased, correction), keepdim)


@_method("std")
def std(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(dim, builtins.bool):
        dim, unbiased = None, dim
    return _C._std(self, _dims(dim), _correction(unbiased, correction), keepdim)


@_method("norm")
def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
    if p == "fro" or p is None:
        p = 2.0
    if p == "nuc":  # torch.norm(p='nuc'): linalg.matrix_norm over dim (all dims when None): sum of singular values
        if self.dim() < 2:
            raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
        dims = list(range(self.dim())) if dim is None else [dim] if isinstance(dim, numbers.Integral) else list(dim)
        if len(dims) != 2:
            raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got " + " ".join(str(d) for d in dims))
        d0, d1 = (d % self.dim() for d in dims)
        a = self if dtype is None else self.to(dtype)
        r = _C._linalg_svd(a.movedim((d0, d1), (-2, -1)), False, False)[1].sum(-1)
        if keepdim:
            for d in sorted((d0, d1)):
                r = r.unsqueeze(d)
        return r
    return _C._norm(self, builtins.float(p), _dims(dim), keepdim, dtype)


@_method("logsumexp")
def logsumexp(self, dim, keepdim=False):
    return _C._logsumexp(self, _dims(dim), keepdim)


@_method("cumsum")
def cumsum(self, dim, *, dtype=None):
    return _C._cumsum(self, dim, dtype)


@_method("cumprod")
def cumprod(self, dim, *, dtype=None):
    return _C._cumprod(self, dim, dtype)


def _no_dim_truth(self):
    """all / any over dim=(): torch reduces over no dim, an elementwise truth test (uint8 stays uint8)."""
    t = self != 0
    return t.to(_C.uint8) if self.dtype == _C.uint8 else t


@_method("all")
def all(self, dim=None, keepdim=False):
    if isinstance(dim, (tuple, list)) and len(dim) == 0:
        return _no_dim_truth(self)
    return _C._all(self, _dims(dim), keepdim)


@_method("any")
def any(self, dim=None, keepdim=False):
    if isinstance(dim, (tuple, list)) and len(dim) == 0:
        return _no_dim_truth(self)
    return _C._any(self, _dims(dim), keepdim)


def _softmax_bool_dim(kind, name, args, dim, dtype):
    """torch's parser never takes a bool for an int dim (the binding would take it as 0 / 1)."""
    if _argparse._is_bool(dim):
        raise _argparse.parse_error(kind, name, args, {} if dtype is None else {"dtype": dtype})


@_method("softmax")
def softmax(self, dim, dtype=None):
    _softmax_bool_dim("method", "softmax", (dim,), dim, dtype)
    return _C._softmax(self, dim, dtype)


@_method("log_softmax")
def log_softmax(self, dim, dtype=None):
    _softmax_bool_dim("method", "log_softmax", (dim,), dim, dtype)
    return _C._log_softmax(self, dim, dtype)


@_method("nonzero")
def nonzero(self, *, as_tuple=False):
    if as_tuple:
        return tuple(_C._where_nonzero(self))
    return _C._nonzero(self)


@_method("movedim")
def movedim(self, source, destination):
    """Moves dims `source` to positions `destination`, the others keeping their order (a permute)."""
    src = [source] if isinstance(source, numbers.Integral) else list(source)
    dst = [destination] if isinstance(destination, numbers.Integral) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) should contain the same "
                           f"number of dims as destination ({dst} dims)")
    n = self.dim()

    def wrap(d):
        lim = builtins.max(n, 1)
        if not -lim <= d < lim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-lim}, {lim - 1}], but got {d})")
        return d % lim

    src, dst = [wrap(d) for d in src], [wrap(d) for d in dst]
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({src})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({dst})")
    if n == 0:
        return self.view(())
    order = [None] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in builtins.range(n) if d not in src)
    return self.permute([d if d is not None else next(rest) for d in order])


Tensor.moveaxis = movedim


def _check_inplace_leaf(self):
    """autograd's check before an in-place op runs: a leaf (or a view of one) that requires grad refuses it."""
    if self.requires_grad and _C.is_grad_enabled():
        if self.is_leaf:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        base = self._base
        if base is not None and base.is_leaf and base.requires_grad:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")


def _index_put_parse(kind, self, indices, values, accumulate):
    """torch's parser for index_put(_): indices a list or tuple of Tensors (None is refused at the Python level,
    unlike the engine's slice placeholder), values a Tensor, accumulate a bool."""
    if (isinstance(indices, (list, tuple)) and builtins.all(isinstance(i, Tensor) for i in indices)
            and isinstance(values, Tensor) and isinstance(accumulate, bool)):
        return
    args = (indices, values, accumulate) if kind == "method" else (self, indices, values, accumulate)
    err = _argparse.parse_error(kind, "index_put", args, {})
    if err is not None:
        raise err


def _check_mask_shape(self, mask, start, nd):
    """torch's index checks for a bool / uint8 mask covering self's dims start, start + 1, ...: each in range and
    of the indexed dim's size."""
    for j in builtins.range(mask.dim()):
        at = start + j
        if at >= nd:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {at})")
        if mask.shape[j] != self.shape[at]:
            raise IndexError(f"The shape of the mask {list(mask.shape)} at index {j} does not match the shape "
                             f"of the indexed tensor {list(self.shape)} at index {at}")


def _index_put_check(self, indices, values):
    """torch's checks of index_put(_), in its order, before the engine's kernel (which checks the index bounds):
    the index count, index dtypes, bool / byte masks against self's shape, the indices' broadcast, an index into
    an empty dim, values against the indexing result's shape, then values' dtype."""
    nd = self.dim()
    if len(indices) > nd:
        raise IndexError(f"too many indices for tensor of dimension {nd} (got {len(indices)})")
    if not indices:
        return
    for ix in indices:
        if ix.dtype not in (_C.int64, _C.int32, _C.uint8, _C.bool):
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        if ix.dtype in (_C.uint8, _C.bool) and ix.dim() == 0:
            return   # a 0-dim mask: the engine's case
    shapes = []
    for ix in indices:
        if ix.dtype in (_C.uint8, _C.bool):
            _check_mask_shape(self, ix, len(shapes), nd)
            shapes.extend([[int(ix.count_nonzero())]] * ix.dim())
        else:
            shapes.append(list(ix.shape))
    k = len(shapes)
    if k > nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {nd})")
    rank = builtins.max(len(s) for s in shapes)
    bshape = [1] * rank
    for s in shapes:
        for i, n in enumerate(s, rank - len(s)):
            if n != bshape[i] and 1 not in (n, bshape[i]):
                raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                                 + ", ".join(str(x) for x in shapes))
            if bshape[i] == 1:
                bshape[i] = n
    if 0 in self.shape[:k] and 0 not in bshape:
        raise IndexError("index is out of bounds for dimension with size 0")
    _value_fits(values, bshape + list(self.shape[k:]))
    _index_put_dtype(self, values)


def _index_put_dtype(self, values):
    if values.dtype != self.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{_C._scalar_type_name(self.dtype)} for the destination and "
                           f"{_C._scalar_type_name(values.dtype)} for the source.")


def _value_fits(values, target):
    vs = list(values.shape)
    if len(vs) > len(target) or builtins.any(v not in (1, t) for v, t in zip(vs[::-1], target[::-1])):
        raise RuntimeError(f"shape mismatch: value tensor of shape {vs} cannot be broadcast to indexing result of "
                           f"shape {list(target)}")


def _index_put(kind, self, indices, values, accumulate, inplace):
    _index_put_parse(kind, self, indices, values, accumulate)
    if inplace:
        _check_inplace_leaf(self)
    nd = self.dim()
    if not accumulate and values.numel() == 1 and not indices:
        # torch's masked_fill dispatch (one value, no index other than a mask) with no mask at all
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype nullptr (uninitialized)")
    if not indices:
        # torch indexes nothing: the result is all of self (its kernel fails on a non-empty one)
        _value_fits(values, list(self.shape))
        if self.numel():
            raise RuntimeError("index_put: an empty index list writes to no indexed dimension (torch's kernel "
                               "refuses it for a non-empty tensor)")
        _index_put_dtype(self, values)
        # nothing to write; adding the (empty) broadcast values keeps autograd's link to them, as torch's result has
        vals = values.expand(self.shape)
        return self.add_(vals) if inplace else self + vals
    if (not accumulate and values.numel() == 1 and len(indices) == 1 and len(indices) <= nd
            and indices[0].dtype in (_C.bool, _C.uint8)):
        # torch's masked_fill dispatch: one mask and one value (checked against self's shape; no dtype check)
        mask = indices[0]
        _check_mask_shape(self, mask, 0, nd)
        if mask.dtype != _C.bool:
            raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype unsigned char")
        mask = mask.reshape(list(mask.shape) + [1] * (nd - mask.dim()))
        # torch fills value.item() (its overflow check); a value that requires grad stays a tensor for autograd
        value = values.reshape(()).to(self.dtype) if values.requires_grad and _C.is_grad_enabled() else values.item()
        return self.masked_fill_(mask, value) if inplace else self.masked_fill(mask, value)
    _index_put_check(self, indices, values)
    if inplace:
        return self._index_put_(list(indices), values, accumulate)
    return _C._index_put(self, list(indices), values, accumulate)


@_method("index_put_")
def index_put_(self, indices, values, accumulate=False):
    return _index_put("method", self, indices, values, accumulate, True)


@_method("index_put")
def index_put(self, indices, values, accumulate=False):
    return _index_put("method", self, indices, values, accumulate, False)


@_method("count_nonzero")
def count_nonzero(self, dim=None):
    return _C._sum(self != 0, _dims(dim), False, None)


@_method("square")
def square(self):
    if self.dtype == _C.bool:  # torch's square is pow(self, 2): bool promotes to int64
        return self.to(_C.int64) * self.to(_C.int64)
    return self * self


@_method("square_")
def square_(self):
    if self.dtype == _C.bool:   # torch's square_ is pow_(2): bool's int64 result cannot be written back
        raise RuntimeError("result type Long can't be cast to the desired output type Bool")
    return self.mul_(self)


@_method("clamp_min")
def clamp_min(self, min):
    return self.clamp(min=min)


@_method("clamp_max")
def clamp_max(self, max):
    return self.clamp(max=max)


# isclose / allclose: the functions ampgrad.isclose / ampgrad.allclose (re-exported by _functions) and the methods.
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """torch.isclose: |input - other| <= atol + rtol * |other|, where the difference is finite (an
    infinity is close only to the same infinity); integers and bools are compared as floats."""
    for name, v in (("input", input), ("other", other)):
        if not isinstance(v, Tensor):
            raise TypeError(f"isclose(): argument '{name}' (position {1 if name == 'input' else 2}) must be Tensor, "
                            f"not {builtins.type(v).__name__}")
    if not isinstance(equal_nan, (builtins.bool, np.bool_)):
        raise TypeError(f"isclose(): argument 'equal_nan' must be bool, not {_argparse._tp_name(equal_nan)}")
    if input.dtype != other.dtype:
        raise RuntimeError(f"{_C._scalar_type_name(input.dtype)} did not match {_C._scalar_type_name(other.dtype)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    close = input == other
    if input.is_floating_point() and equal_nan:
        close = close | (input.isnan() & other.isnan())
    if rtol == 0 and atol == 0:
        return close
    # torch computes the errors in the inputs' dtype (integers and bools in the default dtype)
    if input.is_floating_point():
        a, b = input.detach(), other.detach()
    else:
        a, b = input.to(_C.get_default_dtype()), other.to(_C.get_default_dtype())
    err = (a - b).abs()
    return close | (err.isfinite() & (err <= atol + (rtol * b).abs()))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return builtins.bool(isclose(input, other, rtol, atol, equal_nan).all())


Tensor.isclose = isclose
Tensor.allclose = allclose


@_method("equal")
def equal(self, other):
    return self.shape == other.shape and builtins.bool((self == other).all())


# ---- conversions
def _parse_to(args, kwargs):
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = kwargs.pop("non_blocking", False)
    copy = kwargs.pop("copy", False)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    rest = []
    for a in args:
        if isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, _C.dtype) or a in (builtins.float, builtins.int, builtins.bool):
            dtype = a
        elif isinstance(a, (str, _C.device)) or (isinstance(a, numbers.Integral) and not isinstance(a, builtins.bool)):
            device = a
        else:
            rest.append(a)
    if 1 <= len(rest) <= 2 and builtins.all(isinstance(r, builtins.bool) for r in rest):
        non_blocking = rest[0]  # to(..., non_blocking, copy): torch's positional overloads
        copy = rest[1] if len(rest) == 2 else copy
    elif rest:
        raise TypeError(f"to() received an invalid combination of arguments: {args}")
    if device is not None and not isinstance(device, _C.device):
        device = _C.device(device) if not isinstance(device, numbers.Integral) else _C.device("cuda", device)
    if dtype is not None and not isinstance(dtype, _C.dtype):
        dtype = {builtins.float: _C.float64, builtins.int: _C.int64, builtins.bool: _C.bool}[dtype]
    return device, dtype, non_blocking, copy


@_method("to")
def to(self, *args, **kwargs):
    device, dtype, _, copy = _parse_to(args, dict(kwargs))
    if device is not None and device.type == "cuda" and not _C._cuda_is_available():
        raise AssertionError("Torch not compiled with CUDA enabled")
    return _C._to(self, device, dtype, copy)


@_method("cpu")
def cpu(self):
    return _C._to(self, _C.device("cpu"), None, False)


@_method("cuda")
def cuda(self, device=None, non_blocking=False):
    if not _C._cuda_is_available():
        raise AssertionError("Torch not compiled with CUDA enabled")
    d = _C.device("cuda" if device is None else device if not isinstance(device, numbers.Integral) else f"cuda:{device}")
    return _C._to(self, d, None, False)


for _name, _dt in [("float", "float32"), ("double", "float64"), ("half", "float16"), ("bfloat16", "bfloat16"),
                   ("long", "int64"), ("int", "int32"), ("short", "int16"), ("char", "int8"), ("byte", "uint8"),
                   ("bool", "bool")]:
    def _conv(self, *args, memory_format=None, _dt=getattr(_C, _dt), _name=_name):
        if args:   # torch's binding: memory_format is keyword-only
            raise TypeError(f"{_name}() takes 0 positional arguments but {len(args)} "
                            f"{'was' if len(args) == 1 else 'were'} given")
        return _C._to(self, None, _dt, False)
    _conv.__name__ = _name
    setattr(Tensor, _name, _conv)


@_method("type")
def type(self, dtype=None, *args, **kwargs):
    # torch's parser takes `bool non_blocking=False` (positionally after dtype, or as a keyword) before the dtype
    for k in kwargs:
        if k != "non_blocking":
            raise TypeError(f"type() got an unexpected keyword argument '{k}'")
    if builtins.len(args) + builtins.len(kwargs) > 1:
        raise TypeError(f"type() takes at most 2 arguments ({2 + builtins.len(args)} given)")
    non_blocking = args[0] if args else kwargs.get("non_blocking", False)
    if not isinstance(non_blocking, bool):
        where = " (position 2)" if args else ""
        raise TypeError(f"type(): argument 'non_blocking'{where} must be bool, not {builtins.type(non_blocking).__name__}")
    names = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor", "bfloat16": "BFloat16Tensor",
             "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor", "int8": "CharTensor",
             "uint8": "ByteTensor", "bool": "BoolTensor", "uint16": "UInt16Tensor", "uint32": "UInt32Tensor",
             "uint64": "UInt64Tensor"}
    if dtype is None:
        prefix = "torch.cuda." if self.is_cuda else "torch."
        return prefix + names[repr(self.dtype).split(".")[-1]]
    if isinstance(dtype, str):
        rev = {v: k for k, v in names.items()}
        if dtype.split(".")[-1] not in rev:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = getattr(_C, rev[dtype.split(".")[-1]])
    elif not isinstance(dtype, _C.dtype):
        raise TypeError("dtype must be a type, str, or dtype object")
    return self.to(dtype)


@_method("type_as")
def type_as(self, other):
    return self.to(other.dtype)


def _to_numpy(t):
    """Values as NumPy (bf16 widened to float32, which holds every bf16 value exactly)."""
    if t.device.type != "cpu":
        t = t.cpu()
    if t.dtype == _C.bfloat16:
        t = _C._to(t, None, _C.float32, False)
    return t._numpy()


@_method("numpy")
def numpy(self, *, force=False):
    if self.requires_grad and _C.is_grad_enabled() and not force:  # torch checks grad mode too
        raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
    if self.dtype == _C.bfloat16:
        raise TypeError("Got unsupported ScalarType BFloat16")
    if self.device.type != "cpu" and not force:
        raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.")
    return _to_numpy(self.detach())


@_method("tolist")
def tolist(self):
    a = _to_numpy(self.detach())
    return a.tolist()


@_method("__iter__")
def __iter__(self):
    if self.dim() == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(self.unbind(0))


@_method("__contains__")
def __contains__(self, element):
    if isinstance(element, (Tensor, numbers.Number)):
        return builtins.bool((self == element).any().item())
    raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a {builtins.type(element)}.")


@_method("__reversed__")
def __reversed__(self):
    return self.flip(0) if self.dim() > 0 else self


@_method("__format__")
def __format__(self, spec):
    if self.dim() == 0:
        return self.item().__format__(spec)
    return object.__format__(self, spec)


def _repr(self):
    def values(t):
        a = _to_numpy(t.detach())
        return a.astype(np.float64) if t.dtype.is_floating_point else a
    return _tensor_str.tensor_repr(self, values)


Tensor.__repr__ = _repr
# NumPy scalars and arrays on the left defer to Tensor's reflected operators (np.float32(2) * t is a Tensor).
Tensor.__array_priority__ = 1000
Tensor.__str__ = _repr
Tensor.__getitem__ = _indexing.getitem
Tensor.__setitem__ = _indexing.setitem


@_method("__deepcopy__")
def __deepcopy__(self, memo):
    if not self.is_leaf:
        raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at "
                           "the moment.  If you were attempting to deepcopy a module, this may be because of a "
                           "torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001")
    if id(self) in memo:
        return memo[id(self)]
    prev = _C.is_grad_enabled()  # autograd.no_grad(), a layer above: the same two engine calls
    _C._set_grad_enabled(False)
    try:
        base = self._base
        if base is not None and base.is_leaf:
            # Views keep sharing memory in the copy (torch memoizes the storage): copy the base once,
            # then view the copy with this tensor's geometry.
            new = base.__deepcopy__(memo).detach().as_strided(self.size(), self.stride(), self.storage_offset())
        else:
            new = self.clone()
    finally:
        _C._set_grad_enabled(prev)
    new.requires_grad_(self.requires_grad)
    if self.grad is not None:
        new.grad = self.grad.__deepcopy__(memo)
    memo[id(self)] = new
    return new


def _rebuild(array, dtype_name, requires_grad):
    t = tensor(array).to(getattr(_C, dtype_name))
    t.requires_grad_(requires_grad)
    return t


@_method("__reduce_ex__")
def __reduce_ex__(self, proto):
    return (_rebuild, (_to_numpy(self.detach()).copy(), repr(self.dtype).split(".")[-1], self.requires_grad))


# ---- new_* factories
@_method("new_tensor")
def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    return tensor(data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


for _name in ("zeros", "ones", "empty"):
    def _new(self, *size, dtype=None, device=None, requires_grad=False, _name=_name, **kwargs):
        # torch's `int[] size` is also a keyword (x.new_zeros(size=[1, 3])) and is required
        if not size or kwargs:
            err = _argparse.parse_error("method", "new_" + _name, size, kwargs)
            if err is not None:
                raise err
            if "size" not in kwargs:
                raise TypeError(f"new_{_name}() got an unexpected keyword argument '{next(iter(kwargs))}'")
            size = (kwargs.pop("size"),)
        return getattr(_creation, _name)(*size, dtype=dtype or self.dtype, device=device or self.device,
                                          requires_grad=requires_grad)
    setattr(Tensor, "new_" + _name, _new)


@_method("new_full")
def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    return full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


@_method("clamp_min_")
def clamp_min_(self, min):
    return self.clamp_(min=min)


@_method("clamp_max_")
def clamp_max_(self, max):
    return self.clamp_(max=max)



# ---- generator= on the random in-place methods (Note [Generator objects]) and random_
def _with_generator(name):
    orig = getattr(Tensor, name)

    def method(self, *args, generator=None, **kwargs):
        if generator is None:
            return orig(self, *args, **kwargs)
        with _creation._use_generator(generator, name):
            return orig(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = getattr(orig, "__doc__", None)
    setattr(Tensor, name, method)


for _name in ("uniform_", "normal_", "exponential_", "cauchy_", "log_normal_", "geometric_", "multinomial"):
    _with_generator(_name)


_uniform_bounds = Tensor.uniform_


@_method("uniform_")
def uniform_(self, *args, **kwargs):
    if not self.is_floating_point():
        # torch dispatches its bounds check (check_uniform_bounds) on the dtype before it reads the bounds
        raise NotImplementedError(f'"check_uniform_bounds" not implemented for \'{_creation._dtype_name(self.dtype)}\'')
    return _uniform_bounds(self, *args, **kwargs)


@_method("bernoulli_")
def bernoulli_(self, p=0.5, *, generator=None):
    if isinstance(p, Tensor) and not (p.is_floating_point() or p.is_complex()):
        # torch expands p to self's shape, then its kernel (run only on a non-empty self) dispatches on p's dtype
        # before it reads p's values
        p.expand(self.shape)
        if self.numel() == 0:
            return self
        raise NotImplementedError(f'"bernoulli_tensor_cpu_p_" not implemented for \'{_creation._dtype_name(p.dtype)}\'')
    _check_bernoulli_p(p)
    # torch's CPU draws (Note [Bernoulli draws]): a scalar or float64 p compares a double uniform, a
    # float / half / bf16 tensor p a float uniform, element by element
    wide = not isinstance(p, Tensor) or p.dtype == _C.float64
    u = _creation.rand(*self.shape, dtype=_C.float64 if wide else _C.float32, device=self.device, generator=generator)
    return self.copy_(u < p)


# torch's random_() with no bounds: [0, 2**digits] for floating types, [0, max] for integers, a
# 64-bit draw for int64 and float64 and a 32-bit draw otherwise (uniform_int_distribution)
_RANDOM_FULL = {"float64": 2 ** 53 + 1, "float32": 2 ** 24 + 1, "float16": 2 ** 11 + 1, "bfloat16": 2 ** 8 + 1,
                "int64": 2 ** 63, "int32": 2 ** 31, "int16": 2 ** 15, "int8": 2 ** 7, "uint8": 2 ** 8, "bool": 2}


@_method("random_")
def random_(self, *args, generator=None, **kwargs):
    """Fills with integers drawn uniformly from [from, to - 1] (torch's Tensor.random_: random_(),
    random_(to), random_(from, to), with from= / to= keywords)."""
    if len(args) > 2:
        raise TypeError("random_() received an invalid combination of arguments")
    from_, to = 0, None
    if len(args) == 1:
        to = args[0]
    elif len(args) == 2:
        from_, to = args
    from_ = kwargs.pop("from", from_)
    to = kwargs.pop("to", to)
    if kwargs:
        raise TypeError(f"random_() got an unexpected keyword argument '{next(iter(kwargs))}'")
    dt = str(self.dtype).split(".")[-1]
    if to is None:  # [from, the dtype's top]
        if dt not in _RANDOM_FULL:
            raise NotImplementedError(f"\"random_kernel_cpu\" not implemented for '{_C._scalar_type_name(self.dtype)}'")
        low, high = int(from_), _RANDOM_FULL[dt]
    else:
        low, high = int(from_), int(to)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    if to is not None and not self.dtype.is_floating_point and dt not in ("int64", "uint64"):
        _C._randint(low, high, (0,), self.dtype, self.device)  # torch's bounds check for the dtype
    shape = tuple(self.shape)
    if high > 2 ** 63 - 1 and low == 0:  # a 64-bit draw v, kept as v mod 2**63
        vals = _creation.randint(-2 ** 62, 2 ** 62, shape, dtype=_C.int64, device=self.device, generator=generator)
        vals = vals + 2 ** 62
    else:
        vals = _creation.randint(low, builtins.min(high, 2 ** 63 - 1), shape, dtype=_C.int64, device=self.device,
                                 generator=generator)
    return self.copy_(vals)


# Device and layout queries scripts make (dcgan: `input.is_cuda or input.is_xpu`): ampgrad has CPU
# and CUDA strided dense tensors only.
for _name in ("is_xpu", "is_mps", "is_meta", "is_sparse", "is_sparse_csr", "is_quantized", "is_mkldnn",
              "is_vulkan", "is_ipu", "is_hpu", "is_mtia", "is_nested", "is_maia"):
    if not hasattr(Tensor, _name):
        setattr(Tensor, _name, property(lambda self: False))
