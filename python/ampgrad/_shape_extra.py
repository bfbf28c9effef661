"""Thin torch wrappers over ampgrad's engine ops (views, splits, copies, real-dtype identities) that
torch's OpInfo database names and ampgrad lacked (issue 13). Each is a composition of existing engine
ops, so gradients, double backward and dtypes follow from those. install() sets only names that
nothing else defines, so an engine op of the same name always wins."""
import builtins
import math
import numbers

from . import _C
from ._C import Tensor
from . import _functions as _fn
from ._tensor import _check_empty_reduction
from ._creation import _check_layout
from ._creation import empty as _empty, _dtype_name


def _seq(tensors):
    return tuple(tensors[0]) if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors


def _atleast(n, tensors):
    def one(t):
        if t.dim() >= n:
            return t
        if n == 1 or t.dim() == 0:
            t = t.reshape([1] * n) if t.dim() == 0 else t
            return t
        if n == 2:
            return t.unsqueeze(0)
        return t.unsqueeze(0).unsqueeze(-1) if t.dim() == 1 else t.unsqueeze(-1)
    seq = _seq(tensors)
    out = tuple(one(t) for t in seq)
    return out[0] if len(tensors) == 1 and isinstance(tensors[0], Tensor) else out


def atleast_1d(*tensors):
    return _atleast(1, tensors)


def atleast_2d(*tensors):
    return _atleast(2, tensors)


def atleast_3d(*tensors):
    return _atleast(3, tensors)


def ravel(input):
    return input.reshape(-1)


def fliplr(input):
    if input.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return _C.flip(input, [1])


def flipud(input):
    if input.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return _C.flip(input, [0])


def tensor_split(input, indices_or_sections, dim=0):
    if input.dim() == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = dim % input.dim()
    size = input.shape[d]
    if isinstance(indices_or_sections, Tensor):
        if indices_or_sections.dim() > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                               f"one-dimensional tensor, but got a tensor with {indices_or_sections.dim()} dims")
        if indices_or_sections.dtype != _C.int64:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                               f"{_C._scalar_type_name(indices_or_sections.dtype)}")
        if indices_or_sections.dim() == 0:
            indices_or_sections = indices_or_sections.item()
        else:
            indices_or_sections = indices_or_sections.tolist()
    if isinstance(indices_or_sections, numbers.Integral):
        n = int(indices_or_sections)
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        if n > builtins.max(size, 1) * 1024 + 65536:  # (torch would build that many empty views: not a real call)
            raise RuntimeError(f"tensor_split: {n} sections for a dimension of size {size} is not supported")
        q, r = divmod(size, n)
        bounds, start = [], 0
        for i in builtins.range(n):
            stop = start + q + (1 if i < r else 0)
            bounds.append((start, stop))
            start = stop
    else:
        pts = [builtins.min(builtins.max(int(i) if i >= 0 else int(i) + size, 0), size) for i in indices_or_sections]
        edges = [0] + pts + [size]
        bounds = [(edges[i], builtins.max(edges[i], edges[i + 1])) for i in builtins.range(len(edges) - 1)]
    return tuple(input.narrow(d, a, b - a) for a, b in bounds)


def _dir_split(name, input, sections, dim, min_dim):
    if input.dim() < min_dim:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dim} dimension, but got a tensor with "
                           f"{input.dim()} dimensions!")
    if isinstance(sections, numbers.Integral):
        if sections == 0 or input.shape[dim] % sections:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the dimension "
                               f"{input.shape[dim]} is not divisible by the split_size {sections}!")
    return tensor_split(input, sections, dim)


def _split_arg(name, indices_or_sections, sections, indices):
    """torch's overloads: name(input, int sections) and name(input, int[] indices), positional or by keyword."""
    given = [a for a in (indices_or_sections, sections, indices) if a is not None]
    if len(given) != 1:
        raise TypeError(f"{name}() received an invalid combination of arguments")
    return given[0]


def hsplit(input, indices_or_sections=None, *, sections=None, indices=None):
    indices_or_sections = _split_arg("hsplit", indices_or_sections, sections, indices)
    return _dir_split("hsplit", input, indices_or_sections, 1 if input.dim() > 1 else 0, 1)


def vsplit(input, indices_or_sections=None, *, sections=None, indices=None):
    indices_or_sections = _split_arg("vsplit", indices_or_sections, sections, indices)
    return _dir_split("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input, indices_or_sections=None, *, sections=None, indices=None):
    indices_or_sections = _split_arg("dsplit", indices_or_sections, sections, indices)
    return _dir_split("dsplit", input, indices_or_sections, 2, 3)


def split_with_sizes(input, split_sizes, dim=0):
    return tuple(_C.split(input, list(split_sizes), dim))


def unsafe_chunk(input, chunks, dim=0):
    return tuple(_C.chunk(input, chunks, dim))


def unsafe_split(input, split_size_or_sections, dim=0):
    return tuple(_C.split(input, split_size_or_sections, dim))


def positive(input):
    if input.dtype == _C.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def resolve_conj(input):
    return input


def resolve_neg(input):
    return input


def conj(input):  # real dtypes: conjugation is the identity (a view of input)
    return input


def conj_physical(input):
    return input.clone()


def real(input):
    if not isinstance(input, Tensor):
        raise TypeError(f"real(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input


def isreal(input):
    return _fn.ones_like(input, dtype=_C.bool)


def isposinf(input):
    return input == math.inf if input.is_floating_point() else _fn.zeros_like(input, dtype=_C.bool)


def isneginf(input):
    return input == -math.inf if input.is_floating_point() else _fn.zeros_like(input, dtype=_C.bool)


def fill(input, value):
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError(f"fill only supports 0-dimension value tensor but got tensor with {value.dim()} dimensions.")
    # torch's FillBackward: input's history is kept with a zero gradient, a tensor value gets the sum
    v = value if isinstance(value, Tensor) else _fn.full_like(input, value)
    return _C.where(_fn.ones_like(input, dtype=_C.bool), v.to(input.dtype), input)


def rot90(input, k=1, dims=(0, 1)):
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.dim() < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.dim()}")
    d0, d1 = dims[0] % input.dim(), dims[1] % input.dim()
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
    k %= 4
    if k == 1:
        return _C.flip(input, [d1]).transpose(d0, d1)
    if k == 2:
        return _C.flip(input, [d0, d1])
    if k == 3:
        return _C.flip(input, [d0]).transpose(d0, d1)
    return input.clone()


def column_stack(tensors):
    return _fn.hstack([t.reshape(-1, 1) if t.dim() <= 1 else t for t in tensors])


def take(input, index):
    if isinstance(index, Tensor):
        if index.dtype != _C.int64:
            raise RuntimeError(f"take(): Expected a long tensor for index, but got {_C._scalar_type_name(index.dtype)}")
        _check_flat_index(index, input.numel())
    return input.reshape(-1)[index]


def _check_flat_index(index, n):
    """take / put's range check of a flat long index into n elements (torch's IndexError, first bad index)."""
    if not index.numel():
        return
    bad = ((index >= n) | (index < -n)).reshape(-1)
    if bool(bad.any()):
        i = int(index.reshape(-1)[bad.nonzero()[0, 0]])
        raise IndexError(f"out of range: tried to access index {i} on a tensor of {n} elements.")


def take_along_dim(input, indices, dim=None):
    if dim is not None and indices.dtype != _C.int64:   # aten's first check (without dim, gather's)
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got {_dtype_name(indices.dtype)}")
    if dim is None:
        flat = indices.reshape(-1)
        return _C.gather(input.reshape(-1), 0, _C.where(flat < 0, flat + input.numel(), flat))
    d = dim % builtins.max(input.dim(), 1)
    indices = _C.where(indices < 0, indices + input.shape[d], indices)  # torch wraps negative indices
    shape_i, shape_x = list(indices.shape), list(input.shape)
    shape_i[d] = shape_x[d] = 1
    b = list(_fn.broadcast_shapes(tuple(shape_i), tuple(shape_x)))
    bi, bx = list(b), list(b)
    bi[d], bx[d] = indices.shape[d], input.shape[d]
    return _C.gather(input.expand(bx), d, indices.expand(bi))


def rsub(input, other, alpha=1):
    if isinstance(other, Tensor):
        return _C.sub(other, input, alpha=alpha)
    return other - input * alpha if alpha != 1 else other - input


def sgn(input):
    return _C.sign(input)


def meshgrid(*tensors, indexing=None):
    ts = _seq(tensors)
    if not ts:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    if indexing is None:
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    for t in ts:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    ts = [t.reshape(-1) for t in ts]
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = [t.shape[0] for t in ts]
    out = []
    for i, t in enumerate(ts):
        view = [1] * len(ts)
        view[i] = -1
        out.append(t.reshape(view).expand(shape))
    if swap:  # grids of shape (len(y), len(x), ...): x varies along dim 1
        out[0], out[1] = out[1], out[0]
    return tuple(out)


def cartesian_prod(*tensors):
    for i, t in enumerate(tensors):   # the parser's TensorList check
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    for t in tensors:   # aten's cartesian_prod: 1-D inputs only
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return _C.stack([g.reshape(-1) for g in grids], 1)


def _sum_to_size(self, *size):
    size = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (list, tuple)) else size
    for v in size:   # the parser's int list
        if not isinstance(v, numbers.Integral) or isinstance(v, bool):
            raise TypeError(f"sum_to_size(): argument 'size' (position 1) must be tuple of ints, not {type(v).__name__}")
    shape = list(self.shape)   # aten's is_expandable_to(size, self.sizes())
    if len(size) > len(shape) or builtins.any(s != shape[len(shape) - len(size) + i] and s != 1
                                             for i, s in enumerate(size)):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{shape}}}.")
    if not size:
        return self.sum()  # torch's sum_to with an empty shape: the full sum (integers promote to int64)
    lead = self.dim() - len(size)
    dims = list(builtins.range(lead)) + [lead + i for i, s in enumerate(size) if s == 1 and self.shape[lead + i] != 1]
    return self.sum(dims, keepdim=True).reshape(size) if dims else self


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    if layout is not None:
        _check_layout(layout)
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of strides ({len(stride)})")
    return _empty(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad=False,
                   pin_memory=False):
    if layout is not None:
        _check_layout(layout)
    return _empty(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def argwhere(input):
    return _fn.nonzero(input)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    if not input.is_floating_point():
        raise RuntimeError(f"nanmean(): expected input to have floating point dtype but got {input.dtype}")
    if dim is None and keepdim:
        dim = list(builtins.range(input.dim()))   # every dim, kept as size 1 (torch: nanmean(x, None, True))
    count = (~_C.isnan(input)).sum(dim, keepdim=keepdim) if dim is not None else (~_C.isnan(input)).sum()
    total = _fn.nansum(input, dim, keepdim=keepdim, dtype=dtype) if dim is not None else _fn.nansum(input, dtype=dtype)
    return total / count


def _tril_count(row, col, k):
    """How many (r, c) with 0 <= r < row, 0 <= c < col and c <= r + k (row r holds clamp(r + k + 1, 0, col))."""
    r0 = builtins.max(0, -k)                                  # the first row with an element
    if r0 >= row or col <= 0:
        return 0
    r1 = builtins.min(row, builtins.max(r0, col - k - 1))     # rows before r1 are partial, from r1 on full
    return (r1 - r0) * (r0 + r1 + 2 * k + 1) // 2 + (row - r1) * col


def _tri_indices(row, col, offset, dtype, device, lower):
    # aten's order: the sizes, the (2, count) allocation (whose size the engine checks: a huge count is its
    # RuntimeError), then the kernel's dtype dispatch (int32 / int64 only)
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    dt = dtype or _C.int64
    count = _tril_count(row, col, offset) if lower else row * col - _tril_count(row, col, offset - 1)
    out = _empty((2, count), dtype=dt)
    if dt not in (_C.int32, _C.int64):
        raise NotImplementedError(f'"{"tril" if lower else "triu"}_indices" not implemented for '
                                  f"'{_dtype_name(dt)}'")
    if count == 0:
        return out
    import numpy as np
    # row r holds columns [start_r, start_r + n_r): [0, clamp(r + k + 1)) below the diagonal k, [clamp(r + k), col)
    # above it; only the rows that hold one are generated
    r_lo = builtins.max(0, -offset) if lower else 0
    r_hi = row if lower else builtins.min(row, builtins.max(0, col - offset))
    rs = np.arange(r_lo, r_hi, dtype=np.int64)
    if lower:
        start, n = np.zeros_like(rs), np.clip(rs + offset + 1, 0, col)
    else:
        start = np.clip(rs + offset, 0, col)
        n = col - start
    first = np.cumsum(n) - n
    rows = np.repeat(rs, n)
    cols = np.arange(count, dtype=np.int64) - np.repeat(first, n) + np.repeat(start, n)
    out.copy_(_C.from_numpy(np.stack([rows, cols])))
    return out


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    if layout is not None:
        _check_layout(layout)
    return _tri_indices(row, col, offset, dtype, device, True)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    if layout is not None:
        _check_layout(layout)
    return _tri_indices(row, col, offset, dtype, device, False)


def unravel_index(indices, shape):
    if not isinstance(indices, Tensor):
        indices = _C.from_numpy(__import__("numpy").asarray(indices, dtype="int64"))
    if indices.is_floating_point() or indices.dtype == _C.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = [int(shape)] if isinstance(shape, numbers.Integral) else [int(s) for s in shape]
    numel = math.prod(shape)
    if builtins.any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got " + str(tuple(shape)))
    flat = indices.cpu().numpy().astype("int64").reshape(-1)  # (compared as Python ints: no wrap-around)
    if flat.size and (int(flat.min()) < -numel or int(flat.max()) >= numel):
        raise ValueError("'indices' must be in range [-{0}, {1})".format(numel, numel) if numel else
                         "'indices' must be in range")
    import numpy as np
    idx = np.where(flat < 0, flat + np.int64(numel) if numel < 2 ** 63 else flat, flat)  # integers: computed on the host
    out = []
    for s in reversed(shape):
        out.append(idx % np.int64(s) if s else idx * 0)
        idx = idx // np.int64(s) if s else idx
    return tuple(_C.from_numpy(o.reshape(tuple(indices.shape)).astype(np.int64)) for o in reversed(out))


def diff(input, n=1, dim=-1, prepend=None, append=None):
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = dim % input.dim()
    if n == 0:
        return input.clone()   # torch: order 0 is a copy of the input, prepend / append unused
    parts = [p for p in (prepend, input, append) if p is not None]
    if len(parts) > 1:
        parts = [p if isinstance(p, Tensor) else _fn.full_like(input.narrow(d, 0, 1), p) for p in parts]
        input = _C.cat([p.expand(list(input.shape[:d]) + [p.shape[d] if p.dim() else 1] + list(input.shape[d + 1:]))
                        if p.dim() == input.dim() else p for p in parts], d)
    for _ in builtins.range(n):
        size = input.shape[d]
        if size == 0:
            break
        a, b = input.narrow(d, 1, size - 1), input.narrow(d, 0, size - 1)
        input = (a != b) if input.dtype == _C.bool else a - b
    return input


def trapezoid(y, x=None, *, dx=None, dim=-1):
    if y.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if y.dtype == _C.bool:
        raise RuntimeError("trapezoid: received a bool input for `y`, but bool is not supported")
    if not -y.dim() <= dim < y.dim():
        raise IndexError(f"Dimension out of range (expected to be in range of [{-y.dim()}, {y.dim() - 1}], but got {dim})")
    d = dim % builtins.max(y.dim(), 1)
    n = y.shape[d]
    if n == 0:   # torch: zeros of y's dtype without dim (dx and x unused)
        return _fn.zeros([s for i, s in enumerate(y.shape) if i != d], dtype=y.dtype)
    left, right = y.narrow(d, 0, n - 1), y.narrow(d, 1, n - 1)
    if x is not None:
        if isinstance(x, Tensor):
            dxs = diff(x, dim=dim if x.dim() > 1 else -1)
            if x.dim() == 1:
                dxs = dxs.reshape([-1] + [1] * (y.dim() - 1 - d))
            return ((left + right) * dxs).sum(d) / 2
        dx = x
    dx = 1 if dx is None else dx
    return (left + right).sum(d) * (dx / 2)


def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    d = dim % builtins.max(y.dim(), 1)
    n = y.shape[d]
    if n == 0:
        return y.narrow(d, 0, 0)
    left, right = y.narrow(d, 0, n - 1), y.narrow(d, 1, n - 1)
    if x is not None and isinstance(x, Tensor):
        dxs = diff(x, dim=dim if x.dim() > 1 else -1)
        if x.dim() == 1:
            dxs = dxs.reshape([-1] + [1] * (y.dim() - 1 - d))
        return ((left + right) * dxs / 2).cumsum(d)
    dx = x if x is not None else (1 if dx is None else dx)
    return ((left + right) * (dx / 2)).cumsum(d)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    import numpy as np
    if repeats is None:  # torch.repeat_interleave(repeats): indices repeated by their counts
        # torch dispatches on the index dtype before the kernel checks the dim
        if input.dtype not in (_C.int32, _C.int64):
            raise NotImplementedError(f'"repeat_interleave_cpu" not implemented for '
                                      f"'{_C._scalar_type_name(input.dtype)}'")
        if input.dim() != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        r = input.cpu().numpy()
        if (r < 0).any():
            raise RuntimeError("repeats can not be negative")
        out = _C.from_numpy(np.repeat(np.arange(r.shape[0], dtype=np.int64), r))
        return out.to(input.dtype).to(input.device)
    if dim is None:
        input = input.reshape(-1)
        d = 0
    else:
        d = dim % builtins.max(input.dim(), 1)
    size = input.shape[d] if input.dim() else 1
    r = repeats.cpu().numpy().reshape(-1) if isinstance(repeats, Tensor) else np.array([int(repeats)])
    if r.size == 1:
        r = np.full(size, int(r[0]))
    if r.size != size:
        raise RuntimeError("repeats must have the same size as input along dim, but got repeats.size(0) = "
                           f"{r.size} and input.size({d}) = {size}")
    if (r < 0).any():
        raise RuntimeError("repeats can not be negative")
    idx = _C.from_numpy(np.repeat(np.arange(size, dtype=np.int64), r))
    return input.index_select(d, idx) if input.dim() else input.reshape(1).index_select(0, idx)


def _new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                       pin_memory=False):
    if layout is not None:
        _check_layout(layout)
    return _empty(*size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """input's last dim on the offset diagonal of new dims dim1, dim2 (an index_put into zeros)."""
    nd = input.dim() + 1
    d1, d2 = _wrap_dim(dim1, nd), _wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = input.shape[-1] if input.dim() else 1
    if input.dim() == 0:
        input = input.reshape(1)
    m = n + builtins.abs(offset)
    batch = list(input.shape[:-1])
    r = _fn.arange(n) + builtins.max(-offset, 0)
    c = _fn.arange(n) + builtins.max(offset, 0)
    out = _C._index_put(_fn.zeros(batch + [m, m], dtype=input.dtype, device=input.device),
                        [None] * len(batch) + [r, c], input, False)
    return out.movedim([nd - 2, nd - 1], [d1, d2])


def diag(input, diagonal=0):
    if input.dim() == 1:
        return diag_embed(input, diagonal)
    if input.dim() == 2:
        return input.diagonal(diagonal).clone()
    raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + f"{input.dim()}D")


def diagflat(input, offset=0):
    return diag_embed(input.reshape(-1), offset)


def index_fill(input, dim, index, value):
    """Fills the slices of input at `index` along dim (an index_copy of the value broadcast to them)."""
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.dim()} dimension(s).")
    # aten's order: the dim, the index's dtype and rank, then the value's conversion and the bounds
    d = _wrap_dim(dim, input.dim())
    if index.dtype != _C.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if index.dim() > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    import numpy as np
    n = input.shape[d] if input.dim() else 1
    raw = index.cpu().numpy().reshape(-1).astype(np.int64)
    if raw.size and (raw.min() < -n or raw.max() >= n):
        bad = int(raw[(raw < -n) | (raw >= n)][0])
        raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {n}")
    # each filled position once: a repeated index must not count the value's gradient twice
    idx = _C.from_numpy(np.unique(np.where(raw < 0, raw + n, raw)))
    shape = list(input.shape) if input.dim() else [1]
    shape[d] = idx.numel()
    v = value.to(input.dtype) if isinstance(value, Tensor) else _fn.scalar_tensor(value, dtype=input.dtype)
    src = v.expand(shape) if input.dim() else v.expand([idx.numel()]).reshape(())
    if not input.dim():
        return _C.index_copy(input.reshape(1), 0, idx, v.expand([idx.numel()])).reshape(())
    return _C.index_copy(input, d, idx, src.contiguous())


def _wrap_dim(dim, nd):
    """torch's maybe_wrap_dim: IndexError outside [-nd, nd - 1] (a 0-d tensor counts as 1-d)."""
    n = builtins.max(nd, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


def _check_slice_src(src, want):
    """select_scatter / slice_scatter: src must have the shape of the slice it replaces."""
    if list(src.shape) != want:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {want}")


def select_scatter(input, src, dim, index):
    d = _wrap_dim(dim, input.dim())
    size = input.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at dimension {d}")
    i = index + size if index < 0 else index
    _check_slice_src(src, list(input.shape[:d]) + list(input.shape[d + 1:]))
    return _C.index_copy(input, d, _fn.tensor([i]), src.unsqueeze(d).to(input.dtype))


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    d = _wrap_dim(dim, input.dim())
    if step is not None and step <= 0:
        raise RuntimeError("slice step must be positive")
    idx = _fn.arange(*slice(start, end, step).indices(input.shape[d]))
    _check_slice_src(src, list(input.shape[:d]) + [idx.numel()] + list(input.shape[d + 1:]))
    return _C.index_copy(input, d, idx, src.to(input.dtype))


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    # aten: the slice is input.diagonal(offset, dim1, dim2) (its dim checks), and src must have its size
    _check_slice_src(src, list(input.diagonal(offset, dim1, dim2).shape))
    nd = input.dim()
    d1, d2 = dim1 % nd, dim2 % nd
    moved = input.movedim([d1, d2], [nd - 2, nd - 1])
    rows, cols = moved.shape[-2], moved.shape[-1]
    n = builtins.max(0, builtins.min(rows + builtins.min(offset, 0), cols - builtins.max(offset, 0)))
    r = _fn.arange(n) + builtins.max(-offset, 0)
    c = _fn.arange(n) + builtins.max(offset, 0)
    out = _C._index_put(moved, [None] * (nd - 2) + [r, c], src.to(input.dtype), False)
    return out.movedim([nd - 2, nd - 1], [d1, d2])


def masked_scatter(input, mask, source):
    if input.dtype != source.dtype:   # checked first by aten (no space after "got": torch's message)
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{_dtype_name(input.dtype)} and {_dtype_name(source.dtype)}")
    if mask.dtype != _C.bool:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype {mask.dtype}")
    shape = _fn.broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    base = input.expand(shape)
    pos = _fn.nonzero(mask.expand(shape))
    k = pos.shape[0]
    if k > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    vals = source.reshape(-1)[:k].to(input.dtype)
    return _C._index_put(base, list(pos.unbind(1)) if base.dim() else [], vals, False) if base.dim() else \
        (vals.reshape(()) if k else base.clone())


def put(input, index, source, accumulate=False):
    if index.dtype != _C.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {_C._scalar_type_name(index.dtype)}")
    if source.dtype != input.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{_C._scalar_type_name(input.dtype)} and source.dtype = {_C._scalar_type_name(source.dtype)}")
    if source.numel() != index.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    _check_flat_index(index, input.numel())
    flat = input.reshape(-1)
    idx = index.reshape(-1)
    idx = _C.where(idx < 0, idx + flat.numel(), idx)
    return _C._index_put(flat, [idx], source.reshape(-1).to(input.dtype), accumulate).reshape(input.shape)


def _unfold(self, dimension, size, step):
    """Tensor.unfold: a view of the size-long windows along dimension, step apart (a new last dim)."""
    nd = builtins.max(self.dim(), 1)
    if not -nd <= dimension < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dimension})")
    if self.dim() == 0:
        if size > 1:
            raise RuntimeError(f"maximum size for tensor at dimension 0 is 1 but size is {size}")
        return self.reshape(1)
    d = dimension % self.dim()
    if size > self.shape[d]:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {self.shape[d]} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    shape, stride = list(self.shape), list(self.stride())
    shape[d] = (shape[d] - size) // step + 1
    shape.append(size)
    stride.append(stride[d])
    stride[d] *= step
    return self.as_strided(shape, stride, self.storage_offset())


_AminmaxResult = __import__("collections").namedtuple("aminmax", ["min", "max"])
_AminmaxResult.__module__ = "ampgrad.return_types"


def aminmax(input, *, dim=None, keepdim=False):
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
        lo, hi = input.amin(), input.amax()
        if keepdim:
            lo, hi = lo.reshape([1] * input.dim()), hi.reshape([1] * input.dim())
        return _AminmaxResult(lo, hi)
    if isinstance(dim, int) and input.numel() == 0 and input.dim():
        _check_empty_reduction(input, dim % input.dim() if -input.dim() <= dim < input.dim() else dim, "aminmax")
    return _AminmaxResult(input.amin(dim, keepdim), input.amax(dim, keepdim))


def _copy_of(fn):
    def copy(input, *args, **kwargs):
        out = fn(input, *args, **kwargs)
        return tuple(o.clone() for o in out) if isinstance(out, (tuple, list)) else out.clone()
    return copy


def _narrow_copy(x, dim, start, length):
    if isinstance(dim, int) and dim >= x.dim():   # torch's narrow_copy kernel checks this before wrapping dim
        raise RuntimeError("Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, but got false.  "
                           "(Could this error message be improved?  If so, please report an enhancement request "
                           "to PyTorch.)")
    return x.narrow(dim, start, length)


_COPIES = {
    "alias_copy": lambda x: x, "expand_copy": lambda x, size, implicit=False: x.expand(size),
    "permute_copy": lambda x, dims: x.permute(dims), "t_copy": lambda x: x.t(),
    "transpose_copy": lambda x, dim0, dim1: x.transpose(dim0, dim1), "unsqueeze_copy": lambda x, dim: x.unsqueeze(dim),
    "squeeze_copy": lambda x, *dim: x.squeeze(*dim), "view_copy": lambda x, size: x.view(size),
    "unbind_copy": lambda x, dim=0: x.unbind(dim), "diagonal_copy": lambda x, offset=0, dim1=0, dim2=1:
    x.diagonal(offset, dim1, dim2), "narrow_copy": lambda x, dim, start, length: _narrow_copy(x, dim, start, length),
    "split_with_sizes_copy": lambda x, split_sizes, dim=0: split_with_sizes(x, split_sizes, dim),
    "unfold_copy": lambda x, dimension, size, step: _unfold(x, dimension, size, step),
}

_FUNCTIONS = ["atleast_1d", "atleast_2d", "atleast_3d", "ravel", "fliplr", "flipud", "tensor_split", "hsplit",
              "vsplit", "dsplit", "split_with_sizes", "unsafe_chunk", "unsafe_split", "positive", "resolve_conj",
              "resolve_neg", "conj", "conj_physical", "real", "isreal", "isposinf", "isneginf", "fill", "rot90",
              "column_stack", "take", "take_along_dim", "rsub", "sgn", "meshgrid", "cartesian_prod", "empty_strided",
              "empty_permuted", "argwhere", "nanmean", "tril_indices", "triu_indices", "unravel_index", "diff",
              "trapezoid", "trapz", "cumulative_trapezoid", "repeat_interleave", "diag_embed", "diag", "diagflat",
              "index_fill", "select_scatter", "slice_scatter", "diagonal_scatter", "masked_scatter", "put",
              "aminmax"]
_METHODS = ["ravel", "fliplr", "flipud", "tensor_split", "hsplit", "vsplit", "dsplit", "split_with_sizes",
            "unsafe_chunk", "unsafe_split", "positive", "resolve_conj", "resolve_neg", "conj", "conj_physical",
            "isreal", "isposinf", "isneginf", "rot90", "take", "take_along_dim", "sgn", "argwhere", "nanmean", "diff",
            "repeat_interleave", "diag_embed", "diag", "diagflat", "index_fill", "masked_scatter", "put", "aminmax"]


def install(namespace):
    """Define the names nothing else defines, as ampgrad.<name> and (where torch has one) Tensor.<name>."""
    g = globals()
    for name in _FUNCTIONS:
        namespace.setdefault(name, g[name])
    for name, fn in _COPIES.items():
        namespace.setdefault(name, _copy_of(fn))
    for name in _METHODS:
        if not hasattr(Tensor, name):
            setattr(Tensor, name, g[name])
    if not hasattr(Tensor, "unfold"):
        Tensor.unfold = _unfold
    if not hasattr(Tensor, "new_empty_strided"):
        Tensor.new_empty_strided = _new_empty_strided
    if not hasattr(Tensor, "sum_to_size"):
        Tensor.sum_to_size = _sum_to_size
    if not hasattr(Tensor, "__div__"):
        Tensor.__div__ = Tensor.__truediv__
    if not hasattr(Tensor, "__rdiv__"):
        Tensor.__rdiv__ = Tensor.__rtruediv__
    if not hasattr(Tensor, "__idiv__"):
        Tensor.__idiv__ = Tensor.__itruediv__
