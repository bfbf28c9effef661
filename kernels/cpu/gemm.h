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

// Convolution's weight gradient on the same micro-kernel (Note [Implicit GEMM weight gradient]), only where
// has_avx512_f32(), for one image: ct [Kdim x Og] (row stride Og) = (accumulate ? ct : 0) + sum over output rows
// q < rows and positions j < out2 of xp[row_off[q] + koff[k] + j * stride2] * B(q * out2 + j, o), xp the image's
// padded input planes and B its gy^T [L x Og] packed by f32_pack_b (f32_packed_b_size(L, Og) floats). `koff` holds
// conv_wgrad_koff_size(Kdim) entries (the padding repeats a valid offset); stride2 is 1 or 2. One call computes
// tile `tile` of conv_wgrad_tiles(Kdim, Og), serially: the tiles are disjoint.
int64_t f32_packed_b_size(int64_t K, int64_t N);
void f32_pack_b(const float* b, int64_t brs, int64_t bcs, int64_t K, int64_t N, float* out);
int64_t conv_wgrad_tiles(int64_t Kdim, int64_t Og);
int64_t conv_wgrad_koff_size(int64_t Kdim);
void conv_wgrad_f32(const float* xp, const int64_t* row_off, int64_t rows, int64_t out2, int64_t stride2, const int64_t* koff,
                    int64_t Kdim, const float* pb, int64_t Og, float* ct, int64_t tile, bool accumulate);
}  // namespace ampgrad::cpu
