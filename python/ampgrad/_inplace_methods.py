"""torch's in-place Tensor methods that ampgrad composes from their out-of-place op or names as an alias.

Composed ones run the out-of-place op inside the engine's in-place machinery (`_C._inplace`, Note [In-place
from out of place] in csrc/bindings/ops.cpp): torch's leaf, overlap and result-dtype checks, the saved self
protected from the write, history rebased onto the result."""
import builtins

from . import _C
from ._C import Tensor
from ._creation import _cpp_type_name, tensor

# name -> the out-of-place method (looked up when called: some are installed by later modules)
_COMPOSED = {
    "addbmm_": "addbmm", "addmm_": "addmm", "addmv_": "addmv", "addr_": "addr", "baddbmm_": "baddbmm",
    "cumsum_": "cumsum", "cumprod_": "cumprod", "index_fill_": "index_fill", "masked_scatter_": "masked_scatter",
    "put_": "put", "renorm_": "renorm", "floor_divide_": "floor_divide", "conj_physical_": "conj_physical",
}

# torch's aliases of in-place methods ampgrad has
_ALIASES = {
    "absolute_": "abs_", "arccos_": "acos_", "arccosh_": "acosh_", "arcsin_": "asin_", "arcsinh_": "asinh_",
    "arctan_": "atan_", "arctan2_": "atan2_", "arctanh_": "atanh_", "fix_": "trunc_", "negative_": "neg_",
    "greater_": "gt_", "greater_equal_": "ge_", "less_": "lt_", "less_equal_": "le_", "not_equal_": "ne_",
}


def _composed(name, op):
    def method(self, *args, **kwargs):
        def compute():
            if name in ("cumsum_", "cumprod_"):   # after the leaf check, as torch's
                _check_cum(self, name, args, kwargs)
                if self.numel() == 0:
                    return self.clone()
            return getattr(self, op)(*args, **kwargs)
        return _C._inplace(self, compute, name)
    method.__name__ = method.__qualname__ = name
    return method




def _check_cum(self, name, args, kwargs):
    """cumsum_ / cumprod_ (torch's cumsum_out into self): dim, then the dtype, then the kernel's dtype."""
    dim = args[0] if args else kwargs.get("dim")
    if not isinstance(dim, int) or isinstance(dim, bool):
        pos = " (position 1)" if args else ""
        raise TypeError(f"{name}(): argument 'dim'{pos} must be int, not {type(dim).__name__}")
    n = builtins.max(self.dim(), 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    dt = kwargs.get("dtype", args[1] if len(args) > 1 else None)
    if dt is not None and not isinstance(dt, _C.dtype):
        raise TypeError(f"{name}(): argument 'dtype' must be torch.dtype, not {type(dt).__name__}")
    if dt is not None and dt != self.dtype:
        raise RuntimeError(f"Bad in-place call: input tensor dtype {_cpp_type_name(self.dtype)} and output tensor dtype "
                           f"{_cpp_type_name(dt)} should match")
    if self.dtype == _C.bool and self.numel() > 0:   # an empty one never reaches the kernel
        raise NotImplementedError(f"\"{name[:-1]}_out_cpu\" not implemented for 'Bool'")


def fill_diagonal_(self, fill_value, wrap=False):
    """torch's fill_diagonal_: the main diagonal of a 2-D tensor (restarting every ncols + 1 rows of a tall one
    when wrap), or of an N-D tensor whose dims are all equal, written through diagonal views (so an expanded
    self is written through, as torch's as_strided fill)."""
    if not isinstance(wrap, bool):
        raise TypeError(f"fill_diagonal_(): argument 'wrap' (position 2) must be bool, not {type(wrap).__name__}")
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    n = self.shape[0]
    if self.dim() > 2 and builtins.any(s != n for s in self.shape):
        raise RuntimeError("all dimensions of input must be of equal length")
    if self.dim() == 2:
        rows, cols = self.shape
        self.diagonal().fill_(fill_value)   # also when empty: the leaf and value checks
        start = cols + 1
        while wrap and start < rows:
            self[start:].diagonal().fill_(fill_value)
            start += cols + 1
        return self
    self.as_strided((n,), (builtins.sum(self.stride()),), self.storage_offset()).fill_(fill_value)
    return self


def _python_map(self, name, others, fn):
    if _C.is_grad_enabled() and (self.requires_grad or builtins.any(o.requires_grad for o in others)):
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() instead.")
    if self.device.type != "cpu":
        raise TypeError(f"{name} is only implemented on CPU tensors")
    cols = [self.reshape(-1).tolist()] + [o.expand(self.shape).reshape(-1).tolist() for o in others]
    vals = [fn(*xs) for xs in zip(*cols)]
    if vals:
        prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)
        try:
            self.copy_(tensor(vals, dtype=self.dtype).reshape(self.shape))
        finally:
            _C._set_grad_enabled(prev)
    return self


def apply_(self, callable):
    """torch's apply_: callable on every element, in place (CPU, no autograd)."""
    return _python_map(self, "apply_", (), callable)


def map_(self, tensor, callable):
    """torch's map_: callable(self's element, tensor's element broadcast to self), in place."""
    return _python_map(self, "map_", (tensor,), callable)


def map2_(self, x, y, callable):
    return _python_map(self, "map2_", (x, y), callable)


# torch's Tensor methods that are the function of the same name with self first
_FUNCTION_METHODS = ["absolute", "arccos", "arcsin", "arctan", "bernoulli", "broadcast_to", "diagonal_scatter", "fix",
                     "greater", "greater_equal", "is_nonzero", "less", "less_equal", "narrow_copy", "not_equal",
                     "prelu", "select_scatter", "slice_scatter", "trace", "vdot"]


def _function_method(name, fn):
    def method(self, *args, **kwargs):
        if name == "broadcast_to" and (builtins.len(args) > 1 or args and isinstance(args[0], builtins.int)):
            args = (args,)  # torch's parser takes an int[] as varargs too, and one int as a 1-element list
        return fn(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = fn.__doc__
    return method


def is_signed(self):
    """Whether the tensor's dtype is signed (torch.Tensor.is_signed): False for bool, uint8 and uint16/32/64."""
    return self.dtype.is_signed


def install(namespace):
    """The in-place methods above, and the methods that forward to a function of `namespace` (ampgrad's)."""
    for name in _FUNCTION_METHODS:
        if not hasattr(Tensor, name) and name in namespace:
            setattr(Tensor, name, _function_method(name, namespace[name]))
    for name, op in _COMPOSED.items():
        if not hasattr(Tensor, name):
            setattr(Tensor, name, _composed(name, op))
    for name, base in _ALIASES.items():
        if not hasattr(Tensor, name) and hasattr(Tensor, base):
            setattr(Tensor, name, getattr(Tensor, base))
    for f in (fill_diagonal_, apply_, map_, map2_, is_signed):
        if not hasattr(Tensor, f.__name__):
            setattr(Tensor, f.__name__, f)
