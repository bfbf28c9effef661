// torch.linalg's decompositions and solvers (ops/linalg_decomp.cpp): the front ends, whose backward
// formulas are torch's (FunctionsManual.cpp) written with ampgrad's differentiable ops.
#pragma once
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include "ops/ops.h"

namespace ampgrad {

// torch.linalg.LinAlgError (a RuntimeError subclass in Python): singular or non-positive-definite input.
struct LinAlgError : std::runtime_error { using std::runtime_error::runtime_error; };

std::pair<Tensor, Tensor> linalg_inv_ex(const Tensor& A, bool check_errors, const char* name = "linalg.inv");
Tensor linalg_det(const Tensor& A, const char* name = "linalg.det");
std::pair<Tensor, Tensor> linalg_slogdet(const Tensor& A, const char* name = "linalg.slogdet");
std::pair<Tensor, Tensor> linalg_solve_ex(const Tensor& A, const Tensor& B, bool left, bool check_errors, const char* name = "linalg.solve");
Tensor linalg_solve(const Tensor& A, const Tensor& B, bool left = true);
std::pair<Tensor, Tensor> linalg_cholesky_ex(const Tensor& A, bool upper, bool check_errors, const char* node = "LinalgCholeskyExBackward0",
                                             const char* name = "linalg.cholesky");
Tensor linalg_solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left, bool unitriangular);
std::pair<Tensor, Tensor> linalg_qr(const Tensor& A, const std::string& mode);
std::pair<Tensor, Tensor> linalg_eigh(const Tensor& A, const std::string& uplo, bool compute_v, const char* name = "linalg.eigh");
std::tuple<Tensor, Tensor, Tensor> linalg_svd(const Tensor& A, bool full_matrices, bool compute_uv, const char* name = "linalg.svd");
std::tuple<Tensor, Tensor, Tensor> linalg_lu_factor_ex(const Tensor& A, bool pivot, bool check_errors, const char* name = "linalg.lu_factor");
std::tuple<Tensor, Tensor, Tensor> lu_unpack(const Tensor& LU, const Tensor& pivots, bool unpack_data, bool unpack_pivots);
std::tuple<Tensor, Tensor, Tensor> linalg_lu(const Tensor& A, bool pivot);
Tensor linalg_lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left, bool adjoint);
Tensor linalg_matrix_exp(const Tensor& A);
Tensor cholesky_inverse(const Tensor& L, bool upper);
Tensor linalg_pinv(const Tensor& A, std::optional<double> atol, std::optional<double> rtol, bool hermitian);

}  // namespace ampgrad
