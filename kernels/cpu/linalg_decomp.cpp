// CPU matrix decompositions (Note [Linalg kernels]): each batch matrix is mapped into Eigen (row-major)
// and factored on its own; the batch is split across threads. LU and Cholesky are written out here so
// that pivots and info follow LAPACK's getrf / potrf exactly (torch's CPU results).
#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <Eigen/QR>
#include <Eigen/SVD>
#include <unsupported/Eigen/MatrixFunctions>
#include <algorithm>
#include <cmath>
#include "kernels/cpu/loops.h"
#include "kernels/linalg_args.h"

namespace ampgrad::cpu {

namespace {
template <typename T> using RowMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T> using Map = Eigen::Map<RowMat<T>>;
template <typename T> using CMap = Eigen::Map<const RowMat<T>>;
template <typename T> using Vec = Eigen::Matrix<T, Eigen::Dynamic, 1>;

// Batches large enough to split: one matrix of n^3 flops is worth a thread at n ~ 16.
int64_t batch_grain(int64_t m, int64_t n) { return std::max<int64_t>(1, 4096 / std::max<int64_t>(1, m * n)); }

// getrf: partial pivoting on the largest |a| (first one on ties), rank-1 updates; a zero pivot sets
// info (the first one) and the column is skipped, as LAPACK does.
template <typename T> void lu_one(T* a, int32_t* piv, int32_t* info, int64_t m, int64_t n) {
  const int64_t k = std::min(m, n);
  *info = 0;
  for (int64_t j = 0; j < k; ++j) {
    int64_t p = j;
    T best = std::abs(a[j * n + j]);
    for (int64_t i = j + 1; i < m; ++i) {
      const T v = std::abs(a[i * n + j]);
      if (v > best || (std::isnan(v) && !std::isnan(best))) { best = v; p = i; }
    }
    piv[j] = static_cast<int32_t>(p + 1);
    if (a[p * n + j] != T(0)) {
      if (p != j) std::swap_ranges(a + j * n, a + j * n + n, a + p * n);
      const T inv = T(1) / a[j * n + j];
      for (int64_t i = j + 1; i < m; ++i) a[i * n + j] *= inv;
    } else if (*info == 0) {
      *info = static_cast<int32_t>(j + 1);
    }
    for (int64_t i = j + 1; i < m; ++i) {
      const T l = a[i * n + j];
      if (l == T(0)) continue;
      T* ri = a + i * n;
      const T* rj = a + j * n;
      for (int64_t c = j + 1; c < n; ++c) ri[c] -= l * rj[c];
    }
  }
}

// potrf (lower): info = i for the first leading minor of order i that is not positive definite.
template <typename T> void chol_one(T* a, int32_t* info, int64_t n) {
  *info = 0;
  for (int64_t j = 0; j < n; ++j) {
    T d = a[j * n + j];
    for (int64_t c = 0; c < j; ++c) d -= a[j * n + c] * a[j * n + c];
    if (!(d > T(0))) { *info = static_cast<int32_t>(j + 1); break; }
    d = std::sqrt(d);
    a[j * n + j] = d;
    for (int64_t i = j + 1; i < n; ++i) {
      T s = a[i * n + j];
      for (int64_t c = 0; c < j; ++c) s -= a[i * n + c] * a[j * n + c];
      a[i * n + j] = s / d;
    }
  }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j) a[i * n + j] = T(0);
}

template <typename T> void run(const Tensor* in, Tensor* out, const LinalgArgs& a) {
  const int64_t B = a.batch, m = a.m, n = a.n, k = a.k;
  switch (a.mode) {
    case LinalgArgs::kLuFactor: {
      const int64_t mn = std::min(m, n);
      T* lu = out[0].data<T>();
      std::copy_n(in[0].data<T>(), B * m * n, lu);
      int32_t* piv = out[1].data<int32_t>();
      int32_t* info = out[2].data<int32_t>();
      parallel_for(B, batch_grain(m, n), [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) lu_one(lu + b * m * n, piv + b * mn, info + b, m, n);
      });
      break;
    }
    case LinalgArgs::kLuSolve: {
      const T* lu = in[0].data<T>();
      const int32_t* piv = in[1].data<int32_t>();
      const T* rhs = in[2].data<T>();
      T* x = out[0].data<T>();
      parallel_for(B, batch_grain(n, n), [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) {
          CMap<T> LU(lu + b * n * n, n, n);
          Map<T> X(x + b * n * k, n, k);
          X = CMap<T>(rhs + b * n * k, n, k);
          const int32_t* p = piv + b * n;
          if (!a.adjoint) {  // P L U X = B: permute, then L, then U
            for (int64_t i = 0; i < n; ++i)
              if (p[i] - 1 != i) X.row(i).swap(X.row(p[i] - 1));
            LU.template triangularView<Eigen::UnitLower>().solveInPlace(X);
            LU.template triangularView<Eigen::Upper>().solveInPlace(X);
          } else {  // U^T L^T P^T X = B
            LU.transpose().template triangularView<Eigen::Lower>().solveInPlace(X);
            LU.transpose().template triangularView<Eigen::UnitUpper>().solveInPlace(X);
            for (int64_t i = n - 1; i >= 0; --i)
              if (p[i] - 1 != i) X.row(i).swap(X.row(p[i] - 1));
          }
        }
      });
      break;
    }
    case LinalgArgs::kCholesky: {
      T* l = out[0].data<T>();
      std::copy_n(in[0].data<T>(), B * n * n, l);
      int32_t* info = out[1].data<int32_t>();
      parallel_for(B, batch_grain(n, n), [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) chol_one(l + b * n * n, info + b, n);
      });
      break;
    }
    case LinalgArgs::kTriSolve: {
      const T* A = in[0].data<T>();
      const T* rhs = in[1].data<T>();
      T* x = out[0].data<T>();
      parallel_for(B, batch_grain(n, n), [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) {
          CMap<T> M(A + b * n * n, n, n);
          Map<T> X(x + b * n * k, n, k);
          X = CMap<T>(rhs + b * n * k, n, k);
          if (a.upper) {
            if (a.unit) M.template triangularView<Eigen::UnitUpper>().solveInPlace(X);
            else M.template triangularView<Eigen::Upper>().solveInPlace(X);
          } else {
            if (a.unit) M.template triangularView<Eigen::UnitLower>().solveInPlace(X);
            else M.template triangularView<Eigen::Lower>().solveInPlace(X);
          }
        }
      });
      break;
    }
    case LinalgArgs::kQr: {
      const int64_t kk = std::min(m, n);
      const int64_t qc = a.qr_mode == 1 ? m : kk;   // Q's columns
      const int64_t rr = a.qr_mode == 1 ? m : kk;   // R's rows
      const T* A = in[0].data<T>();
      T* q = a.qr_mode == 2 ? nullptr : out[0].data<T>();
      T* r = out[1].data<T>();
      parallel_for(B, batch_grain(m, n), [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) {
          Eigen::HouseholderQR<RowMat<T>> qr(CMap<T>(A + b * m * n, m, n));
          Map<T> R(r + b * rr * n, rr, n);
          R.setZero();
          const int64_t rows = std::min(rr, m);
          R.topRows(rows) = qr.matrixQR().topRows(rows).template triangularView<Eigen::Upper>();
          if (q) {
            Map<T> Q(q + b * m * qc, m, qc);
            RowMat<T> I = RowMat<T>::Identity(m, qc);
            Q = qr.householderQ() * I;
          }
        }
      });
      break;
    }
    case LinalgArgs::kEigh: {
      const T* A = in[0].data<T>();
      T* w = out[0].data<T>();
      T* v = a.compute ? out[1].data<T>() : nullptr;
      parallel_for(B, batch_grain(n, n), [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) {
          RowMat<T> M = CMap<T>(A + b * n * n, n, n);
          if (a.upper) M = M.transpose().eval();  // the solver reads the lower triangle
          Eigen::SelfAdjointEigenSolver<RowMat<T>> es(M, a.compute ? Eigen::ComputeEigenvectors : Eigen::EigenvaluesOnly);
          Eigen::Map<Vec<T>>(w + b * n, n) = es.eigenvalues();
          if (v) Map<T>(v + b * n * n, n, n) = es.eigenvectors();
        }
      });
      break;
    }
    case LinalgArgs::kSvd: {
      const int64_t kk = std::min(m, n);
      const int64_t ku = a.full ? m : kk, kv = a.full ? n : kk;
      const T* A = in[0].data<T>();
      T* u = a.compute ? out[0].data<T>() : nullptr;
      T* s = out[1].data<T>();
      T* vh = a.compute ? out[2].data<T>() : nullptr;
      parallel_for(B, batch_grain(m, n), [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) {
          using ColMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
          ColMat M = CMap<T>(A + b * m * n, m, n);
          unsigned opts = !a.compute ? 0u : a.full ? (Eigen::ComputeFullU | Eigen::ComputeFullV) : (Eigen::ComputeThinU | Eigen::ComputeThinV);
          Eigen::BDCSVD<ColMat> svd(M, opts);
          Eigen::Map<Vec<T>>(s + b * kk, kk) = svd.singularValues();
          if (u) {
            Map<T>(u + b * m * ku, m, ku) = svd.matrixU();
            Map<T>(vh + b * kv * n, kv, n) = svd.matrixV().transpose();
          }
        }
      });
      break;
    }
    case LinalgArgs::kMatrixExp: {
      const T* A = in[0].data<T>();
      T* e = out[0].data<T>();
      parallel_for(B, batch_grain(n, n), [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) {
          RowMat<T> M = CMap<T>(A + b * n * n, n, n);
          Map<T>(e + b * n * n, n, n) = M.exp();
        }
      });
      break;
    }
  }
}

void k_linalg(const Tensor* in, Tensor* out, const LinalgArgs& a) {
  if (a.batch == 0) return;
  switch (in[0].dtype()) {
    case ScalarType::Float64: run<double>(in, out, a); break;
    case ScalarType::Float32: run<float>(in, out, a); break;
    default: AG_THROW(NotImplementedError, "linalg: not implemented for '", scalar_type_name(in[0].dtype()), "'");
  }
}
AG_REGISTER_KERNEL(linalg_decomp, CPU, k_linalg);
}  // namespace

}  // namespace ampgrad::cpu
