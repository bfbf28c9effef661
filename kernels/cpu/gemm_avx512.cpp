// GEMM micro-kernels on AVX-512 for fp32 (FMA) and bf16 (AVX512-BF16 `vdpbf16ps`: 16 fp32
// lanes, each += the dot product of a bf16 pair, twice the fp32 rate), one driver for both.
// gemm.cpp uses them when the CPU has the instructions; otherwise Eigen (fp32) or fp32 widening
// (bf16).
//
// Napkin math (Zen 4, 2 cores): one zmm FMA per cycle = 32 FLOP/cycle/core; one zmm vdpbf16ps
// = 64. The micro-kernel keeps a 12x32 fp32 tile of C in 24 zmm accumulators; per k step it
// loads 2 zmm of B (128 B) and 12 broadcasts of A (48 B) for 24 FMAs, ~7 B/cycle: L2 serves
// that easily, so K is not blocked: each tile runs the whole K in registers and is stored once
// (alpha, beta and, for bf16, the rounding applied on the way out).
//
// Packing: both operands are rearranged into panels read contiguously by the inner loop, A as
// [K][MR] and B as [K][NR] (bf16: k pairs interleaved, [K/2][MR][2]); zeros pad an odd K and
// the ragged panel edges. bf16 products are exact in fp32; vdpbf16ps treats denormal inputs as
// zero and flushes denormal partial sums (torch's oneDNN bf16 GEMM does the same).
#include <cstdlib>
#include <cstring>
#include <memory>
#include <limits>
#include "kernels/cpu/loops.h"
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define AG_HAVE_AVX512_GEMM 1
// The kernels carry their own target, so a build without -march=native still has them (they run
// only where has_avx512_*() says the CPU can).
#define AG_TARGET __attribute__((target("avx512f,avx512bw,avx512vl")))
#define AG_TARGET_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))
#endif

namespace ampgrad::cpu {

#ifdef AG_HAVE_AVX512_GEMM
namespace {

constexpr int MR = 12, NR = 32;

// The mask of the lanes [from, from + 16) that lie below n, as a 16-lane mask.
inline __mmask16 lanes(int64_t n, int64_t from) {
  const int64_t k = std::min<int64_t>(std::max<int64_t>(n - from, 0), 16);
  return static_cast<__mmask16>((1u << k) - 1);
}

// In-register transpose of 16 rows of 16 32-bit elements: r[j][i] becomes r[i][j]. Pairs of
// rows interleave (unpack), then 4x4 element blocks (shuffle_ps), then 128-bit lanes.
AG_TARGET inline void transpose16(__m512 r[16]) {
  __m512 t[16], u[16];
  for (int i = 0; i < 16; i += 2) { t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]); t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]); }
  // u[4b + c] holds, in lane L, column 4L + c of rows 4b..4b+3.
  for (int b = 0; b < 4; ++b) {
    u[4 * b + 0] = _mm512_shuffle_ps(t[4 * b], t[4 * b + 2], 0x44);
    u[4 * b + 1] = _mm512_shuffle_ps(t[4 * b], t[4 * b + 2], 0xEE);
    u[4 * b + 2] = _mm512_shuffle_ps(t[4 * b + 1], t[4 * b + 3], 0x44);
    u[4 * b + 3] = _mm512_shuffle_ps(t[4 * b + 1], t[4 * b + 3], 0xEE);
  }
  for (int c = 0; c < 4; ++c) {  // 4x4 transpose of lanes among u[c], u[4 + c], u[8 + c], u[12 + c]
    const __m512 v0 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x44), v1 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xEE);
    const __m512 v2 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x44), v3 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xEE);
    r[c] = _mm512_shuffle_f32x4(v0, v2, 0x88);
    r[4 + c] = _mm512_shuffle_f32x4(v0, v2, 0xDD);
    r[8 + c] = _mm512_shuffle_f32x4(v1, v3, 0x88);
    r[12 + c] = _mm512_shuffle_f32x4(v1, v3, 0xDD);
  }
}

// Packs a panel whose k direction is contiguous (row-major A, column-major B: the usual x @ W^T)
// by 16x16 transposes of 32-bit units: `units` per line (k for fp32, k pairs for bf16, the last
// pair's missing half read as zero), into [units][P]. `load(line, u0, n)` gives 16 units of a line
// from unit u0, the first n of them valid, the rest zero.
template <int P, typename Load>
AG_TARGET inline void pack_transposed(int64_t lines, int64_t units, float* out, Load load) {
  const __mmask16 s0 = lanes(P, 0);
  for (int64_t u0 = 0; u0 < units; u0 += 16) {
    const int64_t n = std::min<int64_t>(16, units - u0);
    for (int h = 0; h * 16 < P; ++h) {
      __m512 r[16];
      for (int i = 0; i < 16; ++i) r[i] = h * 16 + i < lines ? load(h * 16 + i, u0, n) : _mm512_setzero_ps();
      transpose16(r);
      for (int64_t j = 0; j < n; ++j) _mm512_mask_storeu_ps(out + (u0 + j) * P + 16 * h, h ? 0xFFFF : s0, r[j]);
    }
  }
}

// Packs `lines` lines (rows of A or columns of B) of K elements into [ceil(K/2)][P][2] bf16
// (P = MR or NR; lines < P pad with zeros). Element (l, k) is at p[l * ls + k * ks].
template <int P>
AG_TARGET
void pack_bf16(const uint16_t* p, int64_t ls, int64_t ks, int64_t lines, int64_t K, uint32_t* out) {
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
  if (ks == 1) {  // a pair is one dword: transpose dwords
    pack_transposed<P>(lines, kp, reinterpret_cast<float*>(out), [&](int64_t l, int64_t u0, int64_t n) AG_TARGET {
      const int64_t e = std::min<int64_t>(2 * n, K - 2 * u0);  // bf16 elements left in this block
      const __mmask32 m = e >= 32 ? ~__mmask32{0} : (__mmask32{1} << e) - 1;
      return _mm512_castsi512_ps(_mm512_maskz_loadu_epi16(m, p + l * ls + 2 * u0));
    });
    return;
  }
  std::memset(out, 0, sizeof(uint32_t) * kp * P);  // anything else: element by element
  for (int64_t q = 0; q < kp; ++q)
    for (int64_t l = 0; l < lines; ++l) {
      o[2 * (q * P + l)] = p[l * ls + 2 * q * ks];
      if (2 * q + 1 < K) o[2 * (q * P + l) + 1] = p[l * ls + (2 * q + 1) * ks];
    }
}

// fp32: packs `lines` lines of K elements into [K][P] (lines < P pad with zeros).
template <int P>
AG_TARGET void pack_f32(const float* p, int64_t ls, int64_t ks, int64_t lines, int64_t K, float* out) {
  static_assert(P <= 32);
  const __mmask16 m0 = lanes(lines, 0), m1 = lanes(lines, 16);
  const __mmask16 s0 = lanes(P, 0);
  if (ls == 1) {  // lines contiguous: copy a row per k
    for (int64_t k = 0; k < K; ++k) {
      const float* src = p + k * ks;
      _mm512_mask_storeu_ps(out + k * P, s0, _mm512_maskz_loadu_ps(m0, src));
      if (P > 16) _mm512_storeu_ps(out + k * P + 16, _mm512_maskz_loadu_ps(m1, src + 16));
    }
    return;
  }
  if (ks == 1) {  // k contiguous: transpose
    pack_transposed<P>(lines, K, out, [&](int64_t l, int64_t k0, int64_t n) AG_TARGET {
      return _mm512_maskz_loadu_ps(lanes(n, 0), p + l * ls + k0);
    });
    return;
  }
  for (int64_t k = 0; k < K; ++k)
    for (int64_t l = 0; l < P; ++l) out[k * P + l] = l < lines ? p[l * ls + k * ks] : 0.f;
}

// Rounds 16 floats to bf16 exactly as BFloat16::from_float (nearest-even, NaN -> 0x7FC0,
// denormals kept), unlike vcvtneps2bf16 which flushes them.
AG_TARGET inline __m256i round_bf16(__m512 v) {
  const __m512i u = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  __m512i r = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7FFF)), lsb), 16);
  const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  r = _mm512_mask_mov_epi32(r, nan, _mm512_set1_epi32(0x7FC0));
  return _mm512_cvtepi32_epi16(r);
}

template <typename T> struct Out { T* c; int64_t ldc; float alpha, beta; };

// C[rows x cols] (rows <= MR, cols <= NR) = alpha * (A panel . B panel) + beta * C.
AG_TARGET_BF16
void micro_bf16(int64_t kp, const uint32_t* a, const uint32_t* b, const Out<uint16_t>& o, int64_t rows, int64_t cols) {
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
  const __mmask16 m0 = lanes(cols, 0), m1 = lanes(cols, 16);
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

// C[rows x cols] (rows <= MR, cols <= NR) = alpha * (A panel . B panel) + beta * C, fp32.
AG_TARGET
void micro_f32(int64_t K, const float* a, const float* b, const Out<float>& o, int64_t rows, int64_t cols) {
  __m512 acc[MR][2];
#pragma GCC unroll 12
  for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t k = 0; k < K; ++k, a += MR, b += NR) {
    const __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
#pragma GCC unroll 12
    for (int r = 0; r < MR; ++r) {
      const __m512 av = _mm512_set1_ps(a[r]);
      acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
    }
  }
  const __m512 al = _mm512_set1_ps(o.alpha), be = _mm512_set1_ps(o.beta);
  const __mmask16 m0 = lanes(cols, 0), m1 = lanes(cols, 16);
  for (int r = 0; r < rows; ++r) {
    float* row = o.c + r * o.ldc;
    for (int h = 0; h < 2; ++h) {
      const __mmask16 m = h ? m1 : m0;
      if (!m) continue;
      __m512 v = o.alpha == 1.f ? acc[r][h] : _mm512_mul_ps(acc[r][h], al);
      if (o.beta != 0.f) v = _mm512_fmadd_ps(be, _mm512_maskz_loadu_ps(m, row + 16 * h), v);
      _mm512_mask_storeu_ps(row + 16 * h, m, v);
    }
  }
}

struct Bf16Kernel {  // bf16 bits in and out, k pairs packed as dwords
  using T = uint16_t;
  using Packed = uint32_t;
  static constexpr int64_t kstep = 2;
  template <int P> static void pack(const T* p, int64_t ls, int64_t ks, int64_t lines, int64_t K, Packed* out) {
    pack_bf16<P>(p, ls, ks, lines, K, out);
  }
  static void micro(int64_t steps, const Packed* a, const Packed* b, const Out<T>& o, int64_t rows, int64_t cols) {
    micro_bf16(steps, a, b, o, rows, cols);
  }
};

struct F32Kernel {
  using T = float;
  using Packed = float;
  static constexpr int64_t kstep = 1;
  template <int P> static void pack(const T* p, int64_t ls, int64_t ks, int64_t lines, int64_t K, Packed* out) {
    pack_f32<P>(p, ls, ks, lines, K, out);
  }
  static void micro(int64_t steps, const Packed* a, const Packed* b, const Out<T>& o, int64_t rows, int64_t cols) {
    micro_f32(steps, a, b, o, rows, cols);
  }
};

// The packing buffers: kept per calling thread and reused (a fresh std::vector per call cost a
// zero-fill and, past malloc's mmap threshold, page faults: ~10% of a 1 ms bf16 GEMM). The packers
// write every element, padding included, so nothing needs zeroing. A buffer above 64 MB is not kept:
// it lives in `hold`, the caller's, for this call only.
struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<void, FreeDeleter>;

inline void* alloc64(size_t bytes) {
  void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!p) throw std::bad_alloc();
  return p;
}

template <typename P> P* scratch(int slot, size_t n, Buffer& hold) {
  constexpr size_t kKeep = size_t{64} << 20;
  thread_local Buffer kept[2];
  thread_local size_t cap[2] = {0, 0};
  const size_t bytes = n * sizeof(P);
  if (bytes <= cap[slot]) return static_cast<P*>(kept[slot].get());
  if (bytes <= kKeep) {
    kept[slot].reset(alloc64(bytes));
    cap[slot] = bytes;
    return static_cast<P*>(kept[slot].get());
  }
  hold.reset(alloc64(bytes));
  return static_cast<P*>(hold.get());
}

// C (M x N, row stride ldc) = alpha * A (M x K) . B (K x N) + beta * C, operands at any strides.
// Both operands are packed whole first (the threads share the panels), then C's tiles are split
// between threads by panel columns (or rows, whichever has more panels); within a thread, A
// panels are taken in chunks that stay in L2 while every B panel passes over them.
template <typename Kr>
void gemm_driver(const typename Kr::T* a, int64_t ars, int64_t acs, const typename Kr::T* b, int64_t brs, int64_t bcs,
                 typename Kr::T* c, int64_t ldc, int64_t M, int64_t N, int64_t K, float beta, float alpha) {
  using P = typename Kr::Packed;
  const int64_t steps = (K + Kr::kstep - 1) / Kr::kstep, mp = (M + MR - 1) / MR, np = (N + NR - 1) / NR;
  Buffer hold_a, hold_b;
  P* pa = scratch<P>(0, static_cast<size_t>(mp * steps * MR), hold_a);
  P* pb = scratch<P>(1, static_cast<size_t>(np * steps * NR), hold_b);
  // A's and B's panels are packed in two balanced splits (a B panel is 32 lines, an A panel 12), in
  // parallel once the operands hold 32K elements (a serial pack cost 10-20% of a 2-thread bf16 GEMM
  // of the GPT benchmark's shapes).
  const int64_t grain = (M + N) * K >= 32768 ? 2 : std::numeric_limits<int64_t>::max();
  parallel_for(mp, grain, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p)
      Kr::template pack<MR>(a + p * MR * ars, ars, acs, std::min<int64_t>(MR, M - p * MR), K, pa + p * steps * MR);
  });
  parallel_for(np, grain, [&](int64_t p0, int64_t p1) {
    for (int64_t j = p0; j < p1; ++j)
      Kr::template pack<NR>(b + j * NR * bcs, bcs, brs, std::min<int64_t>(NR, N - j * NR), K, pb + j * steps * NR);
  });
  const bool split_cols = np >= mp;
  const int64_t chunk = std::max<int64_t>(1, (256 * 1024) / std::max<int64_t>(steps * MR * int64_t(sizeof(P)), 1));
  const bool big = M * N * K >= (int64_t{1} << 20);
  const int64_t tiles = split_cols ? np : mp;
  parallel_for(tiles, big ? 2 : tiles + 1, [&](int64_t t0, int64_t t1) {
    const int64_t j0 = split_cols ? t0 : 0, j1 = split_cols ? t1 : np;
    const int64_t i0 = split_cols ? 0 : t0, i1 = split_cols ? mp : t1;
    // equal chunks of A panels (43 panels as 42 + 1 would pass every B panel over one A panel)
    const int64_t nck = (i1 - i0 + chunk - 1) / chunk, ck = std::max<int64_t>(1, (i1 - i0 + nck - 1) / std::max<int64_t>(nck, 1));
    for (int64_t ic = i0; ic < i1; ic += ck)
      for (int64_t j = j0; j < j1; ++j)
        for (int64_t i = ic; i < std::min(i1, ic + ck); ++i) {
          const Out<typename Kr::T> o{c + i * MR * ldc + j * NR, ldc, alpha, beta};
          Kr::micro(steps, pa + i * steps * MR, pb + j * steps * NR, o, std::min<int64_t>(MR, M - i * MR),
                    std::min<int64_t>(NR, N - j * NR));
        }
  });
}

}  // namespace

bool has_avx512_bf16() {
  static const bool ok = __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512bw") &&
                         __builtin_cpu_supports("avx512vl");
  return ok;
}

bool has_avx512_f32() {
  static const bool ok = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                         __builtin_cpu_supports("avx512vl");
  return ok;
}

// Callers check has_avx512_*() first and handle K == 0; bf16 travels as raw bits.
void gemm_bf16_avx512(const uint16_t* a, int64_t ars, int64_t acs, const uint16_t* b, int64_t brs, int64_t bcs,
                      uint16_t* c, int64_t ldc, int64_t M, int64_t N, int64_t K, float beta, float alpha) {
  gemm_driver<Bf16Kernel>(a, ars, acs, b, brs, bcs, c, ldc, M, N, K, beta, alpha);
}

void gemm_f32_avx512(const float* a, int64_t ars, int64_t acs, const float* b, int64_t brs, int64_t bcs, float* c,
                     int64_t ldc, int64_t M, int64_t N, int64_t K, float beta, float alpha) {
  gemm_driver<F32Kernel>(a, ars, acs, b, brs, bcs, c, ldc, M, N, K, beta, alpha);
}

#else
bool has_avx512_bf16() { return false; }
bool has_avx512_f32() { return false; }
void gemm_f32_avx512(const float*, int64_t, int64_t, const float*, int64_t, int64_t, float*, int64_t, int64_t, int64_t,
                     int64_t, float, float) {}
void gemm_bf16_avx512(const uint16_t*, int64_t, int64_t, const uint16_t*, int64_t, int64_t, uint16_t*, int64_t, int64_t,
                      int64_t, int64_t, float, float) {}
#endif

}  // namespace ampgrad::cpu
