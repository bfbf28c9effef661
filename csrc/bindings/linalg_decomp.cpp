// Bindings of torch.linalg's decompositions (ops/linalg_decomp.h): private _C._linalg_* functions that
// python/ampgrad/linalg/ wraps into torch's signatures and named tuples; LinAlgError's Python class.
#include "bindings/convert.h"
#include "ops/linalg_decomp.h"

namespace ampgrad::bind {

void init_linalg_decomp(py::module_& m) {
  py::register_exception<LinAlgError>(m, "_LinAlgError", PyExc_RuntimeError);
  m.def("_linalg_inv_ex", [](const Tensor& A, bool check) { return linalg_inv_ex(A, check); });
  m.def("_linalg_det", [](const Tensor& A) { return linalg_det(A); });
  m.def("_linalg_slogdet", [](const Tensor& A) { return linalg_slogdet(A); });
  m.def("_linalg_solve_ex", [](const Tensor& A, const Tensor& B, bool left, bool check) { return linalg_solve_ex(A, B, left, check); });
  m.def("_linalg_cholesky_ex", [](const Tensor& A, bool upper, bool check, bool legacy) {
    return legacy ? linalg_cholesky_ex(A, upper, check, "CholeskyBackward0", "cholesky") : linalg_cholesky_ex(A, upper, check);
  });
  m.def("_linalg_solve_triangular", [](const Tensor& A, const Tensor& B, bool upper, bool left, bool unit) {
    return linalg_solve_triangular(A, B, upper, left, unit);
  });
  m.def("_linalg_qr", [](const Tensor& A, const std::string& mode) { return linalg_qr(A, mode); });
  m.def("_linalg_eigh", [](const Tensor& A, const std::string& uplo, bool compute_v) { return linalg_eigh(A, uplo, compute_v); });
  m.def("_linalg_svd", [](const Tensor& A, bool full, bool compute_uv) { return linalg_svd(A, full, compute_uv); });
  m.def("_linalg_lu_factor_ex", [](const Tensor& A, bool pivot, bool check) { return linalg_lu_factor_ex(A, pivot, check); });
  m.def("_lu_unpack", [](const Tensor& LU, const Tensor& piv, bool data, bool pivots) { return lu_unpack(LU, piv, data, pivots); });
  m.def("_linalg_lu", [](const Tensor& A, bool pivot) { return linalg_lu(A, pivot); });
  m.def("_linalg_lu_solve", [](const Tensor& LU, const Tensor& piv, const Tensor& B, bool left, bool adjoint) {
    return linalg_lu_solve(LU, piv, B, left, adjoint);
  });
  m.def("_linalg_matrix_exp", [](const Tensor& A) { return linalg_matrix_exp(A); });
  m.def("_cholesky_inverse", [](const Tensor& L, bool upper) { return cholesky_inverse(L, upper); });
  m.def("_linalg_pinv", [](const Tensor& A, std::optional<double> atol, std::optional<double> rtol, bool hermitian) {
    return linalg_pinv(A, atol, rtol, hermitian);
  });
}

}  // namespace ampgrad::bind
