// The arguments of the matrix decomposition kernels (Note [Linalg kernels] in kernels/kernels.h).
#pragma once
#include <cstdint>

namespace ampgrad {

// One slot (Op::linalg_decomp), the mode picks the decomposition. Every matrix operand is a contiguous
// row-major [batch, rows, cols] float32 / float64 tensor; pivots and info are int32. Shapes:
//   kLuFactor  in A [b, m, n]           out LU [b, m, n], pivots [b, min(m, n)] (1-based, LAPACK's), info [b]
//   kLuSolve   in LU [b, n, n], pivots [b, n], B [b, n, k]   out X [b, n, k] (adjoint: solves A^H X = B)
//   kCholesky  in A [b, n, n] (lower triangle read)          out L [b, n, n] (upper part zero), info [b]
//   kTriSolve  in A [b, n, n], B [b, n, k]                   out X [b, n, k] (upper, unit; left side only)
//   kQr        in A [b, m, n]           out Q [b, m, mq], R [b, mq', n] (qr_mode 0 reduced, 1 complete, 2 r)
//   kEigh      in A [b, n, n] (lower triangle read)          out w [b, n] ascending, V [b, n, n] if compute
//   kSvd       in A [b, m, n]           out U [b, m, ku], S [b, k], Vh [b, kv, n] if compute (full: ku = m, kv = n)
//   kMatrixExp in A [b, n, n]           out exp(A) [b, n, n]
// info: LAPACK's convention (0 ok, i > 0: the i-th leading pivot / minor failed).
struct LinalgArgs {
  enum Mode : int { kLuFactor, kLuSolve, kCholesky, kTriSolve, kQr, kEigh, kSvd, kMatrixExp };
  Mode mode = kLuFactor;
  int64_t batch = 0, m = 0, n = 0, k = 0;
  bool upper = false, unit = false, adjoint = false, full = false, compute = true;
  int qr_mode = 0;
};

}  // namespace ampgrad
