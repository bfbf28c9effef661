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


# ---- torch.linalg's decompositions (python/ampgrad/linalg)
def _rt_fields(name, fields):
    t = collections.namedtuple(name, fields)
    t.__module__ = "ampgrad.return_types"
    t.__qualname__ = name
    return t


linalg_inv_ex = _rt_fields("linalg_inv_ex", ["inverse", "info"])
linalg_slogdet = _rt_fields("linalg_slogdet", ["sign", "logabsdet"])
slogdet = _rt_fields("slogdet", ["sign", "logabsdet"])
linalg_solve_ex = _rt_fields("linalg_solve_ex", ["result", "info"])
linalg_cholesky_ex = _rt_fields("linalg_cholesky_ex", ["L", "info"])
linalg_qr = _rt_fields("linalg_qr", ["Q", "R"])
qr = _rt_fields("qr", ["Q", "R"])
linalg_eigh = _rt_fields("linalg_eigh", ["eigenvalues", "eigenvectors"])
linalg_svd = _rt_fields("linalg_svd", ["U", "S", "Vh"])
svd = _rt_fields("svd", ["U", "S", "V"])
linalg_lstsq = _rt_fields("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
linalg_lu_factor = _rt_fields("linalg_lu_factor", ["LU", "pivots"])
linalg_lu_factor_ex = _rt_fields("linalg_lu_factor_ex", ["LU", "pivots", "info"])
linalg_lu = _rt_fields("linalg_lu", ["P", "L", "U"])
lu_unpack = _rt_fields("lu_unpack", ["P", "L", "U"])
triangular_solve = _rt_fields("triangular_solve", ["solution", "cloned_coefficient"])
__all__ += ["linalg_inv_ex", "linalg_slogdet", "slogdet", "linalg_solve_ex", "linalg_cholesky_ex", "linalg_qr", "qr", "linalg_eigh",
            "linalg_svd", "svd", "linalg_lstsq", "linalg_lu_factor", "linalg_lu_factor_ex", "linalg_lu", "lu_unpack",
            "triangular_solve"]

# ---- scans (python/ampgrad/_scan_index.py)
cummax = _rt("cummax")
cummin = _rt("cummin")
__all__ += ["cummax", "cummin"]

# ---- histogram (python/ampgrad/_aten_ops.py)
histogram = _rt_fields("histogram", ["hist", "bin_edges"])
__all__ += ["histogram"]
