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

// Convolution's implicit GEMM on the AVX-512 fp32 micro-kernel (Note [Implicit GEMM convolution] in
// kernels/cpu/gemm_avx512.cpp), only where has_avx512_f32(): A (M x K) packed once into
// f32_packed_a_size(M, K) floats; then C (M x N, row stride ldc) = A . B + beta * C, serially, with
// B(k, n) = b[koff[k] + n * bstride], bstride 1 or 2 (up to 64 floats past the last one are read).
bool has_avx512_f32();
int64_t f32_packed_a_size(int64_t M, int64_t K);
void f32_pack_a(const float* a, int64_t ars, int64_t acs, int64_t M, int64_t K, float* out);
void gemm_f32_koff(const float* pa, int64_t M, int64_t K, const float* b, const int64_t* koff, int64_t bstride, float* c,
                   int64_t ldc, int64_t N, float beta);
}  // namespace ampgrad::cpu
