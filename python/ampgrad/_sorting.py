"""Sorting and order statistics (torch.sort, argsort, msort, topk, kthvalue, median, nanmedian): thin
fronts over the engine's sort op (csrc/ops/sort.cpp), as functions and Tensor methods."""
from . import _C
from . import _argparse
from . import return_types as _rt
from ._C import Tensor

__all__ = ["sort", "argsort", "msort", "topk", "kthvalue", "median", "nanmedian"]


def _idx(v, what):
    if isinstance(v, Tensor):
        if v.numel() != 1 or v.dtype.is_floating_point:
            raise TypeError(f"{what} must be int, not Tensor")
        return int(v.item())
    if isinstance(v, bool) or not hasattr(v, "__index__"):
        raise TypeError(f"{what} must be int, not {type(v).__name__}")
    return int(v)


def sort(input, dim=-1, descending=False, *, stable=False):
    if not _argparse._is_bool(descending):   # the parser's bool: no int
        err = _argparse.parse_error("fn", "sort", (input,), {"dim": dim, "descending": descending})
        if err is not None:
            raise err
    v, i = _C._sort(input, _idx(dim, "dim"), bool(descending), bool(stable))
    return _rt.sort(v, i)


def argsort(input, dim=-1, descending=False, *, stable=False):
    return _C._argsort(input, _idx(dim, "dim"), bool(descending), bool(stable))


def msort(input):
    return _C._sort(input, 0, False, False)[0]


def topk(input, k, dim=-1, largest=True, sorted=True):
    v, i = _C._topk(input, _idx(k, "k"), _idx(dim, "dim"), bool(largest), bool(sorted))
    return _rt.topk(v, i)


def kthvalue(input, k, dim=-1, keepdim=False):
    k, dim = _idx(k, "k"), _idx(dim, "dim")
    if input.dim() > 0 and input.size(dim) == 0:   # size(dim): the dim's range check comes first, as torch's
        # torch's zero_numel_check_dims precedes the k range check
        raise IndexError(f"kthvalue(): Expected reduction dim {dim % input.dim()} to have non-zero size.")
    v, i = _C._kthvalue(input, k, dim, bool(keepdim))
    return _rt.kthvalue(v, i)


class _Unset:
    """median's defaults, told apart from explicit arguments (an explicit None dim, or a keepdim without a dim, is
    torch's parser's TypeError)."""
    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text

    def __bool__(self):
        return False


_ALL, _NO_KEEPDIM = _Unset("None"), _Unset("False")


def median(input, dim=_ALL, keepdim=_NO_KEEPDIM):
    if dim is _ALL or dim is None:
        if dim is None or keepdim is not _NO_KEEPDIM:
            # torch's signatures are () and (int dim, bool keepdim=False): a None dim, or a keepdim without a dim,
            # is its parser's TypeError (the parsed wrapper raises torch's text)
            raise TypeError("median(): incompatible function arguments: dim must be int")
        return _C._median_all(input, False)
    v, i = _C._median_dim(input, _idx(dim, "dim"), bool(keepdim), False)
    return _rt.median(v, i)


def nanmedian(input, dim=_ALL, keepdim=_NO_KEEPDIM):
    if dim is _ALL or dim is None:
        if dim is None or keepdim is not _NO_KEEPDIM:
            # torch's signatures are () and (int dim, bool keepdim=False): a None dim, or a keepdim without a dim,
            # is its parser's TypeError (the parsed wrapper raises torch's text)
            raise TypeError("nanmedian(): incompatible function arguments: dim must be int")
        return _C._median_all(input, True)
    v, i = _C._median_dim(input, _idx(dim, "dim"), bool(keepdim), True)
    return _rt.nanmedian(v, i)


for _name in __all__:
    setattr(Tensor, _name, globals()[_name])
