"""Sparse COO tensors (torch.sparse_coo_tensor, Tensor.to_sparse, torch.sparse.mm / sum / addmm).

Note [Sparse COO]: a SparseCooTensor holds two engine tensors, `indices` (int64, sparse_dim x nnz) and
`values` (nnz x dense dims), and the logical size, as torch's COO layout does. What it computes is done
by engine ops on those two tensors, so autograd reaches both the dense operands and `values`:
- sparse @ dense is values[:, None] * dense[col] summed into the rows by one index_add (torch's
  sparse addmm kernel does the same products), dense @ sparse is the transposed product;
- coalesce sorts the linear indices with `unique` and sums duplicates with index_add;
- to_dense is one accumulating index_put; Tensor.to_sparse gathers the nonzeros.
Unlike torch, a SparseCooTensor is not an ampgrad.Tensor: a dense op handed one raises TypeError (torch:
NotImplementedError for the ops its sparse backend lacks), never reads it as dense memory. The ops below are
the ones the torch programs that use COO tensors call (graph convolutions, sparse features); others:
`to_dense()` first.
"""
import builtins
import math
import numbers
import operator

from .. import _C
from .._tensor import Size, Tensor, tensor as _tensor, _method, _to_numpy
from .._creation import zeros as _zeros, _dtype_name
from .._tensor_str import sparse_repr
from .._dtype_info import layout, strided, sparse_coo

__all__ = ["SparseCooTensor", "sparse_coo_tensor", "mm", "sum", "addmm", "layout", "strided", "sparse_coo"]


def _not_sparse(what):
    return NotImplementedError(f"Could not run 'aten::{what}' with arguments from the 'SparseCPU' backend. "
                               "ampgrad's sparse COO tensors support construction, coalesce, to_dense, mm/matmul "
                               "with dense matrices, add, scalar mul, neg, sum and t(); call to_dense() first.")


def _linear_index(indices, sizes):
    lin = indices[0]
    for d in range(1, indices.shape[0]):
        lin = lin * sizes[d] + indices[d]
    return lin


class SparseCooTensor:
    """A COO tensor: `_indices()` (sparse_dim x nnz, int64), `_values()` (nnz x dense dims), `shape`."""
    __slots__ = ("_idx", "_val", "_size", "_coalesced", "__weakref__")
    layout = sparse_coo
    is_sparse = True
    is_sparse_csr = False

    def __init__(self, indices, values, size, coalesced=False):
        self._idx, self._val, self._size, self._coalesced = indices, values, tuple(int(s) for s in size), coalesced

    # ---- metadata
    @property
    def shape(self):
        return Size(self._size)

    def size(self, dim=None):
        return self.shape if dim is None else self._size[dim]

    def dim(self):
        return len(self._size)

    ndim = property(dim)

    @property
    def dtype(self):
        return self._val.dtype

    @property
    def device(self):
        return self._val.device

    @property
    def is_cuda(self):
        return self._val.is_cuda

    @property
    def requires_grad(self):
        return self._val.requires_grad

    def requires_grad_(self, requires_grad=True):
        self._val.requires_grad_(requires_grad)
        return self

    @property
    def grad(self):
        # torch's gradient of a sparse leaf: the dense gradient at the coalesced pattern. Duplicate entries of
        # one position each got that position's gradient, so their mean is it.
        g = self._val.grad
        if g is None or self._coalesced:
            return None if g is None else SparseCooTensor(self._idx, g, self._size, True)
        total = SparseCooTensor(self._idx, g, self._size).coalesce()
        count = SparseCooTensor(self._idx, g.detach() * 0 + 1, self._size).coalesce()
        return SparseCooTensor(total._idx, total._val / count._val, self._size, True)

    @property
    def is_leaf(self):
        return self._val.is_leaf

    @property
    def grad_fn(self):
        return self._val.grad_fn

    def sparse_dim(self):
        return self._idx.shape[0]

    def dense_dim(self):
        return self._val.dim() - 1

    def _nnz(self):
        return self._val.shape[0]

    def numel(self):
        n = 1
        for s in self._size:
            n *= s
        return n

    def element_size(self):
        return self._val.element_size()

    def is_floating_point(self):
        return self._val.is_floating_point()

    def is_coalesced(self):
        return self._coalesced

    def _indices(self):
        return self._idx

    def _values(self):
        return self._val

    def indices(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return self._idx

    def values(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
        return self._val

    def __len__(self):
        if not self._size:
            raise TypeError("len() of a 0-d tensor")
        return self._size[0]

    def __repr__(self):
        return sparse_repr(self, _to_numpy)

    # ---- conversions
    def coalesce(self):
        if self._coalesced:
            return self
        if self._nnz() == 0 or self.sparse_dim() == 0:
            idx = self._idx
            val = self._val.sum(0, keepdim=True) if self.sparse_dim() == 0 and self._nnz() > 1 else self._val
            return SparseCooTensor(idx[:, :val.shape[0]], val, self._size, True)
        lin = _linear_index(self._idx, self._size)
        uniq, inverse = lin.unique(sorted=True, return_inverse=True)
        val = _zeros((uniq.shape[0],) + tuple(self._val.shape[1:]), dtype=self._val.dtype, device=self._val.device)
        val = val.index_add(0, inverse, self._val)
        rows, rest = [], uniq
        for d in range(self.sparse_dim() - 1, -1, -1):
            rows.append(rest % self._size[d])
            rest = rest.div(self._size[d], rounding_mode="floor")
        idx = _C.stack(rows[::-1], 0) if rows else self._idx
        return SparseCooTensor(idx, val, self._size, True)

    def to_dense(self, dtype=None, *, masked_grad=None):
        out = _zeros(self._size, dtype=self._val.dtype, device=self._val.device)
        if self._nnz() and self.sparse_dim() == 0:  # every value sits at the one (dense) position
            out = out + self._val.sum(0)
        elif self._nnz():
            out = out.index_put(tuple(self._idx[d] for d in range(self.sparse_dim())), self._val, accumulate=True)
        return out if dtype is None else out.to(dtype)

    def to_sparse(self, *args, **kwargs):
        return self

    def to(self, *args, **kwargs):
        val = self._val.to(*args, **kwargs)
        idx = self._idx.to(device=val.device)
        return self if val is self._val and idx is self._idx else SparseCooTensor(idx, val, self._size, self._coalesced)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        return self.to("cuda" if device is None else device)

    def type_as(self, other):
        return self.to(other.dtype)

    def detach(self):
        return SparseCooTensor(self._idx, self._val.detach(), self._size, self._coalesced)

    def clone(self):
        return SparseCooTensor(self._idx.clone(), self._val.clone(), self._size, self._coalesced)

    def numpy(self, *, force=False):
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() first.")

    # ---- math
    def t(self):
        if self.sparse_dim() != 2 or self.dense_dim() != 0:
            raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but got "
                               f"{self.sparse_dim()} sparse and {self.dense_dim()} dense dimensions")
        return SparseCooTensor(self._idx.flip(0), self._val, self._size[::-1], False)

    def transpose(self, dim0, dim1):
        n = self.sparse_dim()
        d0, d1 = dim0 % max(self.dim(), 1), dim1 % max(self.dim(), 1)
        if d0 >= n or d1 >= n:
            raise RuntimeError("transpose of a dense dim of a hybrid sparse tensor is not supported")
        order = list(range(n))
        order[d0], order[d1] = order[d1], order[d0]
        size = list(self._size)
        size[d0], size[d1] = size[d1], size[d0]
        return SparseCooTensor(self._idx[order], self._val, size, False)

    def __neg__(self):
        return SparseCooTensor(self._idx, -self._val, self._size, self._coalesced)

    neg = __neg__

    def _scaled(self, other, op, name):  # by a Python number or a 0-d tensor: the stored values alone
        if isinstance(other, numbers.Number) or (isinstance(other, Tensor) and other.dim() == 0):
            return SparseCooTensor(self._idx, op(self._val, other), self._size, self._coalesced)
        raise _not_sparse(name)

    def __mul__(self, other):
        return self._scaled(other, operator.mul, "mul")

    __rmul__ = mul = __mul__

    def __truediv__(self, other):
        return self._scaled(other, operator.truediv, "div")

    div = __truediv__

    def add(self, other, *, alpha=1):
        if isinstance(other, SparseCooTensor):
            _check_same_size(self, other, "add")
            val_o = other._val if alpha == 1 else other._val * alpha
            idx = _C.cat([self._idx, other._idx], 1)
            val = _C.cat([self._val, val_o.to(self._val.dtype) if val_o.dtype != self._val.dtype else val_o], 0)
            return SparseCooTensor(idx, val, self._size, False)
        if isinstance(other, Tensor):
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
        return NotImplemented

    def __add__(self, other):
        return self.add(other)

    def __radd__(self, other):  # dense + sparse: a dense result
        if isinstance(other, Tensor):
            return _dense_add(other, self, 1)
        return NotImplemented

    def __sub__(self, other):
        if isinstance(other, SparseCooTensor):
            return self.add(other, alpha=-1)
        return self.add(other)

    def __rsub__(self, other):
        if isinstance(other, Tensor):
            return _dense_add(other, self, -1)
        return NotImplemented

    def sum(self, dim=None, keepdim=False, dtype=None):
        if dim is None:
            return self._val.sum(dtype=dtype)
        return self.to_dense().sum(dim, keepdim=keepdim, dtype=dtype)

    def mm(self, mat2):
        return mm(self, mat2)

    def matmul(self, other):
        return mm(self, other)

    def __matmul__(self, other):
        return mm(self, other)

    def __rmatmul__(self, other):
        return mm(other, self)

    def __getattr__(self, name):
        # Everything else a dense tensor has: torch's "not for the SparseCPU backend".
        if hasattr(Tensor, name) and not name.startswith("__"):
            raise _not_sparse(name)
        raise AttributeError(f"'SparseCooTensor' object has no attribute '{name}'")


def _check_same_size(a, b, what):
    if tuple(a.shape) != tuple(b.shape):
        raise RuntimeError(f"{what}: expected 'self' and 'other' to have same size, but self has size "
                           f"{list(a.shape)} while other has size {list(b.shape)} (FYI: dense-sparse addition "
                           "does not currently support broadcasting)")


def _dense_add(dense, sp, alpha):
    _check_same_size(dense, sp, "add")
    val = sp._val if alpha == 1 else sp._val * alpha
    idx = tuple(sp._idx[d] for d in range(sp.sparse_dim()))
    dtype = _C.promote_types(dense.dtype, val.dtype)
    out = dense.to(dtype) if dense.dtype != dtype else dense.clone()
    return out.index_put(idx, val.to(dtype), accumulate=True)


def _as_indices(indices):
    if isinstance(indices, Tensor):
        idx = indices
    else:
        idx = _tensor(indices)
    if idx.is_floating_point() or idx.dtype == _C.bool:
        idx = idx.to(_C.int64)
    elif idx.dtype != _C.int64:
        idx = idx.to(_C.int64)
    return idx


_NO_VALUES = object()


def sparse_coo_tensor(indices, values=_NO_VALUES, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """torch.sparse_coo_tensor: a COO tensor from `indices` (sparse_dim x nnz) and `values` (nnz x dense dims), or
    sparse_coo_tensor(size): an empty one of that size (no stored elements)."""
    if dtype is not None and not isinstance(dtype, _C.dtype):
        raise TypeError(f"sparse_coo_tensor(): argument 'dtype' must be torch.dtype, not {type(dtype).__name__}")
    def _int(v):
        return isinstance(v, numbers.Integral) and not isinstance(v, bool)
    if _int(indices) and (values is _NO_VALUES or (_int(values) and _int(size))):
        # sparse_coo_tensor(2, 0, 2): torch's size overload takes the ints as varargs
        indices = tuple(v for v in (indices, values, size) if v is not _NO_VALUES and v is not None)
        values = _NO_VALUES
    if values is _NO_VALUES:
        if not isinstance(indices, (tuple, list)) or not all(isinstance(s, numbers.Integral) and
                                                             not isinstance(s, bool) for s in indices):
            raise TypeError(f"sparse_coo_tensor(): argument 'size' (position 1) must be tuple of ints, not "
                            f"{type(indices).__name__}")
        for i, v in enumerate(indices):
            if not -2 ** 63 <= v < 2 ** 63:
                raise TypeError(f"sparse_coo_tensor(): argument 'size' failed to unpack the object at pos {i + 1} with "
                                f"error \"Overflow when unpacking long long\"")
        size = tuple(int(s) for s in indices)
        if builtins.any(s < 0 for s in size):
            raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {list(size)}")
        if math.prod(size) >= 2 ** 63:
            raise RuntimeError("numel: integer multiplication overflow")
        return sparse_coo_tensor(_C._empty([len(size), 0], _C.int64, _C.device("cpu")),
                                 _C._empty([0], dtype or _C.get_default_dtype(), _C.device("cpu")), size,
                                 device=device, requires_grad=requires_grad, is_coalesced=True)
    if size is not None and not isinstance(size, (tuple, list)):
        raise TypeError(f"sparse_coo_tensor(): argument 'size' (position 3) must be tuple of ints, not "
                        f"{type(size).__name__}")
    idx = _as_indices(indices)
    val = values if isinstance(values, Tensor) else _tensor(values)
    if dtype is not None or device is not None:
        val = val.to(dtype=dtype, device=device)
    if idx.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(idx.shape)}")
    if idx.shape[1] != val.shape[0] if val.dim() else True:
        n_val = val.shape[0] if val.dim() else 1
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {idx.shape[1]}, "
                           f"nnz from values: {n_val}")
    sparse_dim, dense_dim = idx.shape[0], val.dim() - 1
    if idx.numel() and int(idx.min()) < 0:
        d = int((idx.amin(1) < 0).int().argmax())
        raise RuntimeError(f"found negative index {int(idx[d].min())} for dim {d}")
    if size is None:
        sizes = ([int(m) + 1 for m in idx.amax(1).tolist()] if idx.shape[1] else [0] * sparse_dim)
        size = tuple(sizes) + tuple(val.shape[1:])
    size = tuple(int(s) for s in size)
    if len(size) != sparse_dim + dense_dim:
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
                           f"sparse_dim = {sparse_dim}, dense_dim = {dense_dim}")
    if tuple(val.shape[1:]) != size[sparse_dim:]:
        raise RuntimeError(f"values has incorrect size, expected {list((val.shape[0],) + size[sparse_dim:])}, got "
                           f"{list(val.shape)}")
    if idx.shape[1]:
        mx = idx.amax(1).tolist()
        for d in range(sparse_dim):
            if mx[d] >= size[d]:
                raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {size[d]} but found "
                                   f"index {mx[d]}")
    idx = idx.to(device=val.device)
    if requires_grad:
        val = val.detach().requires_grad_(True)
    coalesced = bool(is_coalesced) if is_coalesced is not None else idx.shape[1] <= 1
    return SparseCooTensor(idx, val, size, coalesced)


def mm(mat1, mat2):
    """Sparse x dense or dense x sparse (torch.sparse.mm / torch.mm / torch.spmm): a dense result."""
    if isinstance(mat1, SparseCooTensor) and isinstance(mat2, SparseCooTensor):
        return mm(mat1, mat2.to_dense()).to_sparse()
    if isinstance(mat2, SparseCooTensor):
        return mm(mat2.t(), mat1.t()).t()
    if not isinstance(mat1, SparseCooTensor):
        return _C.mm(mat1, mat2)
    if mat1.sparse_dim() != 2 or mat1.dense_dim() != 0:
        raise RuntimeError(f"addmm: matrices expected, got {mat1.dim()}D tensor")
    if not isinstance(mat2, Tensor):
        raise TypeError(f"mm(): argument 'mat2' (position 2) must be Tensor, not {type(mat2).__name__}")
    if mat2.dim() != 2:
        raise RuntimeError(f"addmm: matrices expected, got {mat2.dim()}D tensor")
    if mat1._size[1] != mat2.shape[0]:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {mat1._size[1]}, got {mat2.shape[0]}")
    if mat1.dtype != mat2.dtype:
        raise RuntimeError(f"expected scalar type {_dtype_name(mat1.dtype)} but found {_dtype_name(mat2.dtype)}")
    rows, cols = mat1._idx[0], mat1._idx[1]
    out = _zeros(mat1._size[0], mat2.shape[1], dtype=mat2.dtype, device=mat2.device)
    if mat1._nnz() == 0:
        return out + 0 * mat2.sum() if mat2.requires_grad else out
    return out.index_add(0, rows, mat2.index_select(0, cols) * mat1._val.unsqueeze(1))


def addmm(mat, mat1, mat2, *, beta=1, alpha=1):
    """torch.sparse.addmm: beta * mat + alpha * (mat1 @ mat2), mat1 sparse."""
    prod = mm(mat1, mat2)
    return (mat * beta if beta != 1 else mat) + (prod * alpha if alpha != 1 else prod)


def sum(input, dim=None, dtype=None):
    """torch.sparse.sum: the sum of the stored values (over all dims), or along `dim` as a dense tensor."""
    if not isinstance(input, SparseCooTensor):
        return input.sum() if dim is None else input.sum(dim)
    return input.sum(dim, dtype=dtype) if dim is not None else input.sum(dtype=dtype)


def _dispatching(dense_fn):
    """torch.mm / spmm: a sparse operand goes to mm above, anything else to `dense_fn` unchanged."""
    def fn(*args, **kwargs):
        if len(args) == 2 and not kwargs and (type(args[0]) is SparseCooTensor or type(args[1]) is SparseCooTensor):
            return mm(*args)
        return dense_fn(*args, **kwargs)
    fn.__name__, fn.__qualname__, fn.__doc__ = dense_fn.__name__, dense_fn.__name__, dense_fn.__doc__
    fn.__wrapped__, fn.__ampgrad_out__ = dense_fn, True  # out= reaches dense_fn (Note [out= overloads])
    return fn


# ---- the dense side: Tensor.to_sparse / to_dense / layout / is_sparse
def _to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    if layout is not None and layout is not sparse_coo:
        raise RuntimeError(f"to_sparse: ampgrad has no {layout!r} layout")
    n = self.dim() if sparse_dim is None else int(sparse_dim)
    if not 0 <= n <= self.dim():
        raise RuntimeError(f"sparse_dim must be in [0, {self.dim()}], got {n}")
    nz = self.detach() != 0
    if n < self.dim():
        nz = nz.flatten(n).any(-1) if n > 0 else nz.any().reshape(())
    idx = nz.nonzero().t() if n > 0 else _zeros(0, 1 if bool(nz) else 0, dtype=_C.int64)
    val = self[tuple(idx[d] for d in range(n))] if n > 0 else (self.unsqueeze(0) if bool(nz) else self.unsqueeze(0)[:0])
    return SparseCooTensor(idx.contiguous(), val, tuple(self.shape), True)


_method("to_sparse")(_to_sparse)
_method("to_sparse_coo")(lambda self: _to_sparse(self))
def _dense_to_dense(self, dtype=None, *, masked_grad=None):
    if masked_grad is not None and not isinstance(masked_grad, bool):
        raise TypeError(f"to_dense(): argument 'masked_grad' must be bool, not {type(masked_grad).__name__}")
    if dtype is not None and not isinstance(dtype, _C.dtype):
        raise TypeError(f"to_dense(): argument 'dtype' must be torch.dtype, not {type(dtype).__name__}")
    return self if dtype is None else self.to(dtype)


_method("to_dense")(_dense_to_dense)
Tensor.layout = property(lambda self: strided)
Tensor.is_sparse = property(lambda self: False)
Tensor.is_sparse_csr = property(lambda self: False)
