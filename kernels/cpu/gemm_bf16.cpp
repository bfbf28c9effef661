// bf16 GEMM on AVX512-BF16 (`vdpbf16ps`: 16 fp32 lanes, each += the dot product of a bf16 pair,
// twice the fp32 FMA rate). Used for bf16 matmuls when the CPU has the instruction; otherwise
// gemm.cpp widens the operands to fp32.
//
// Napkin math (Zen 4, 2 cores): one zmm vdpbf16ps per cycle = 64 FLOP/cycle/core, ~2x the fp32
// FMA peak. The micro-kernel keeps a 12x32 fp32 tile of C in 24 zmm accumulators; per k-pair it
// loads 2 zmm of B (128 B) and 12 broadcast dwords of A (48 B) for 24 vdpbf16ps, ~7 B/cycle:
// L2 serves that easily, so K is not blocked: each tile runs the whole K in registers and is
// stored once (alpha, beta and the rounding to bf16 applied on the way out).
//
// Packing: both operands are rearranged into k-pair-interleaved panels, A as [K/2][MR][2] and
// B as [K/2][NR][2] (a zero pads an odd K and the ragged panel edges), so the inner loop reads
// both streams contiguously. Products of bf16 pairs are exact in fp32; the instruction treats
// bf16 denormal inputs as zero and flushes denormal sums (as torch's oneDNN kernels do).
#include <cstring>
#include "kernels/cpu/loops.h"
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define AG_HAVE_BF16_KERNEL 1
#endif

namespace ampgrad::cpu {

#ifdef AG_HAVE_BF16_KERNEL
namespace {

constexpr int MR = 12, NR = 32;

// Packs `lines` lines (rows of A or columns of B) of K elements into [ceil(K/2)][P][2] bf16
// (P = MR or NR; lines < P pad with zeros). Element (l, k) is at p[l * ls + k * ks].
template <int P>
__attribute__((target("avx512f,avx512bw,avx512vl")))
void pack_panel(const uint16_t* p, int64_t ls, int64_t ks, int64_t lines, int64_t K, uint32_t* out) {
  static_assert(P <= 32);
  const int64_t kp = (K + 1) / 2;
  uint16_t* o = reinterpret_cast<uint16_t*>(out);
  if (ls == 1) {  // lines contiguous: interleave two k rows of the panel per pair
    alignas(64) uint16_t lo_idx[32], hi_idx[32];
    for (int i = 0; i < 16; ++i) { lo_idx[2 * i] = i; lo_idx[2 * i + 1] = 32 + i; hi_idx[2 * i] = 16 + i; hi_idx[2 * i + 1] = 48 + i; }
    const __m512i lo = _mm512_load_si512(lo_idx), hi = _mm512_load_si512(hi_idx);
    const __mmask32 in = lines >= 32 ? ~__mmask32{0} : (__mmask32{1} << lines) - 1;
    const __mmask32 out0 = P >= 16 ? ~__mmask32{0} : (__mmask32{1} << (2 * P)) - 1;
    const __mmask32 out1 = P > 16 ? (P >= 32 ? ~__mmask32{0} : (__mmask32{1} << (2 * (P - 16))) - 1) : 0;
    for (int64_t q = 0; q < kp; ++q) {
      const uint16_t* r0 = p + 2 * q * ks;
      const __m512i x0 = _mm512_maskz_loadu_epi16(in, r0);
      const __m512i x1 = 2 * q + 1 < K ? _mm512_maskz_loadu_epi16(in, r0 + ks) : _mm512_setzero_si512();
      _mm512_mask_storeu_epi16(o + 2 * q * P, out0, _mm512_permutex2var_epi16(x0, lo, x1));
      if (out1) _mm512_mask_storeu_epi16(o + 2 * q * P + 32, out1, _mm512_permutex2var_epi16(x0, hi, x1));
    }
    return;
  }
  if (ks == 1 && (P - 1) * ls < (int64_t{1} << 30)) {  // a pair is one dword: gather a panel row
    alignas(64) int32_t idx[32];
    for (int l = 0; l < 32; ++l) idx[l] = static_cast<int32_t>(std::min<int64_t>(l, P - 1) * ls);
    const __m512i i0 = _mm512_load_si512(idx), i1 = _mm512_load_si512(idx + 16);
    const __mmask16 m0 = lines >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << lines) - 1);
    const __mmask16 m1 = lines >= 32 ? 0xFFFF : lines <= 16 ? 0 : static_cast<__mmask16>((1u << (lines - 16)) - 1);
    const __mmask16 s0 = P >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << P) - 1);
    for (int64_t q = 0; q < K / 2; ++q) {
      const void* base = p + 2 * q;
      _mm512_mask_storeu_epi32(out + q * P, s0, _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m0, i0, base, 2));
      if (P > 16) _mm512_storeu_si512(out + q * P + 16, _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m1, i1, base, 2));
    }
    if (K % 2) {
      std::memset(out + (K / 2) * P, 0, sizeof(uint32_t) * P);
      for (int64_t l = 0; l < lines; ++l) o[2 * ((K / 2) * P + l)] = p[l * ls + K - 1];
    }
    return;
  }
  std::memset(out, 0, sizeof(uint32_t) * kp * P);  // anything else: element by element
  for (int64_t q = 0; q < kp; ++q)
    for (int64_t l = 0; l < lines; ++l) {
      o[2 * (q * P + l)] = p[l * ls + 2 * q * ks];
      if (2 * q + 1 < K) o[2 * (q * P + l) + 1] = p[l * ls + (2 * q + 1) * ks];
    }
}

// Rounds 16 floats to bf16 exactly as BFloat16::from_float (nearest-even, NaN -> 0x7FC0,
// denormals kept), unlike vcvtneps2bf16 which flushes them.
__attribute__((target("avx512f,avx512bw,avx512vl"))) inline __m256i round_bf16(__m512 v) {
  const __m512i u = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  __m512i r = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7FFF)), lsb), 16);
  const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  r = _mm512_mask_mov_epi32(r, nan, _mm512_set1_epi32(0x7FC0));
  return _mm512_cvtepi32_epi16(r);
}

struct Out { uint16_t* c; int64_t ldc; float alpha, beta; };

// C[rows x cols] (rows <= MR, cols <= NR) = alpha * (A panel . B panel) + beta * C.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))
void micro_kernel(int64_t kp, const uint32_t* a, const uint32_t* b, const Out& o, int64_t rows, int64_t cols) {
  __m512 acc[MR][2];
#pragma GCC unroll 12
  for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t q = 0; q < kp; ++q, a += MR, b += NR) {
    const __m512bh b0 = (__m512bh)_mm512_loadu_si512(b), b1 = (__m512bh)_mm512_loadu_si512(b + 16);
#pragma GCC unroll 12
    for (int r = 0; r < MR; ++r) {
      const __m512bh av = (__m512bh)_mm512_set1_epi32(static_cast<int>(a[r]));
      acc[r][0] = _mm512_dpbf16_ps(acc[r][0], av, b0);
      acc[r][1] = _mm512_dpbf16_ps(acc[r][1], av, b1);
    }
  }
  const __m512 al = _mm512_set1_ps(o.alpha), be = _mm512_set1_ps(o.beta);
  const __mmask16 m0 = cols >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << cols) - 1);
  const __mmask16 m1 = cols >= 32 ? 0xFFFF : cols <= 16 ? 0 : static_cast<__mmask16>((1u << (cols - 16)) - 1);
  for (int r = 0; r < rows; ++r) {
    uint16_t* row = o.c + r * o.ldc;
    for (int h = 0; h < 2; ++h) {
      const __mmask16 m = h ? m1 : m0;
      if (!m) continue;
      __m512 v = _mm512_mul_ps(acc[r][h], al);
      if (o.beta != 0.f) {
        const __m256i old = _mm256_maskz_loadu_epi16(m, row + 16 * h);
        v = _mm512_fmadd_ps(be, _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(old), 16)), v);
      }
      _mm256_mask_storeu_epi16(row + 16 * h, m, round_bf16(v));
    }
  }
}

}  // namespace

bool has_avx512_bf16() {
  static const bool ok = __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512bw") &&
                         __builtin_cpu_supports("avx512vl");
  return ok;
}

// C (M x N, row stride ldc) = alpha * A (M x K) . B (K x N) + beta * C, all bf16 (as raw bits),
// operands at any strides. Callers check has_avx512_bf16() first and handle K == 0.
void gemm_bf16_avx512(const uint16_t* a, int64_t ars, int64_t acs, const uint16_t* b, int64_t brs, int64_t bcs,
                      uint16_t* c, int64_t ldc, int64_t M, int64_t N, int64_t K, float beta, float alpha) {
  const int64_t kp = (K + 1) / 2, mp = (M + MR - 1) / MR, np = (N + NR - 1) / NR;
  std::vector<uint32_t> pa(mp * kp * MR), pb(np * kp * NR);
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(K, 1));
  parallel_for(mp + np, grain, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      if (p < mp) pack_panel<MR>(a + p * MR * ars, ars, acs, std::min<int64_t>(MR, M - p * MR), K, pa.data() + p * kp * MR);
      else { const int64_t j = p - mp; pack_panel<NR>(b + j * NR * bcs, bcs, brs, std::min<int64_t>(NR, N - j * NR), K, pb.data() + j * kp * NR); }
    }
  });
  // Split C by panel columns (or rows, whichever has more panels) between threads; within a
  // thread, A panels are taken in chunks that stay in L2 while every B panel passes over them.
  const bool split_cols = np >= mp;
  const int64_t chunk = std::max<int64_t>(1, (256 * 1024) / std::max<int64_t>(kp * MR * 4, 1));
  const bool big = M * N * K >= (int64_t{1} << 20);
  parallel_for(split_cols ? np : mp, big ? 2 : (split_cols ? np : mp) + 1, [&](int64_t t0, int64_t t1) {
    const int64_t j0 = split_cols ? t0 : 0, j1 = split_cols ? t1 : np;
    const int64_t i0 = split_cols ? 0 : t0, i1 = split_cols ? mp : t1;
    for (int64_t ic = i0; ic < i1; ic += chunk)
      for (int64_t j = j0; j < j1; ++j)
        for (int64_t i = ic; i < std::min(i1, ic + chunk); ++i) {
          Out o{c + i * MR * ldc + j * NR, ldc, alpha, beta};
          micro_kernel(kp, pa.data() + i * kp * MR, pb.data() + j * kp * NR, o,
                       std::min<int64_t>(MR, M - i * MR), std::min<int64_t>(NR, N - j * NR));
        }
  });
}

#else
bool has_avx512_bf16() { return false; }
void gemm_bf16_avx512(const uint16_t*, int64_t, int64_t, const uint16_t*, int64_t, int64_t, uint16_t*, int64_t, int64_t,
                      int64_t, int64_t, float, float) {}
#endif

}  // namespace ampgrad::cpu
