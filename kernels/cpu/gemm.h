// Raw-pointer entry points of the CPU GEMM (kernels/cpu/gemm.cpp) for kernels that multiply their own
// buffers (convolution's im2col products): C (M x N, row stride ldc) = alpha * A (M x K) @ B (K x N) +
// beta * C, A and B at any element strides. They thread internally unless called from inside a
// parallel region (then they run serially on the calling thread).
#pragma once
#include <cstdint>

namespace ampgrad::cpu {
void gemm_f32(const float* a, int64_t ars, int64_t acs, const float* b, int64_t brs, int64_t bcs, float* c, int64_t ldc,
              int64_t M, int64_t N, int64_t K, float beta, float alpha);
void gemm_f64(const double* a, int64_t ars, int64_t acs, const double* b, int64_t brs, int64_t bcs, double* c,
              int64_t ldc, int64_t M, int64_t N, int64_t K, double beta, double alpha);
}  // namespace ampgrad::cpu
