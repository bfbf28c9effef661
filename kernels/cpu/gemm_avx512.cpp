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
#if defined(__linux__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#define AG_HAVE_AMX 1
#define AG_TARGET_AMX __attribute__((target("avx512f,avx512bw,avx512vl,amx-tile,amx-bf16")))
#endif
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

// The lanes m of a bf16 row at dst = alpha * acc + beta * dst, summed in fp32 and rounded once: the
// epilogue of both bf16 kernels (vdpbf16ps tiles, AMX blocks).
AG_TARGET inline void store_bf16_lanes(__m512 acc, const Out<uint16_t>& o, uint16_t* dst, __mmask16 m) {
  if (!m) return;
  __m512 v = _mm512_mul_ps(acc, _mm512_set1_ps(o.alpha));
  if (o.beta != 0.f) {
    const __m256i old = _mm256_maskz_loadu_epi16(m, dst);
    v = _mm512_fmadd_ps(_mm512_set1_ps(o.beta), _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(old), 16)), v);
  }
  _mm256_mask_storeu_epi16(dst, m, round_bf16(v));
}

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
  const __mmask16 m0 = lanes(cols, 0), m1 = lanes(cols, 16);
  for (int r = 0; r < rows; ++r)
    for (int h = 0; h < 2; ++h) store_bf16_lanes(acc[r][h], o, o.c + r * o.ldc + 16 * h, h ? m1 : m0);
}


#ifdef AG_HAVE_AMX
// ---------------------------------------------------------------------------------------------
// Note [AMX bf16 GEMM]: on CPUs with AMX (Sapphire Rapids and later) bf16 products run on the tile
// unit: `tdpbf16ps` multiplies a 16x32 bf16 tile of A by a 32x16 tile of B (k pairs interleaved,
// the same VNNI layout as pack_bf16's B panels) into a 16x16 fp32 tile, eight times the work of
// one vdpbf16ps. Each block of C is 32x32: tiles 0-3 accumulate it, 4-5 hold two 16-row A tiles,
// 6-7 the two 16-column halves of a B panel. K runs whole in the tiles (fp32 accumulation, rounded
// once on the way out, as the vdpbf16ps kernel does); K is zero-padded to a multiple of 32. The
// tile unit flushes denormal inputs and results as vdpbf16ps does (torch's oneDNN GEMM uses the
// same unit here). The OS must grant the tile state first (arch_prctl ARCH_REQ_XCOMP_PERM), and
// each thread loads the tile configuration before its blocks and releases it after.
// AMPGRAD_AMX=0 turns the path off (tests run both kernels).

// An A panel for the tile unit: 16 rows of Kp bf16 each, k contiguous (Kp = K rounded up to 32,
// zero padded; rows past `lines` zero). Element (l, k) is at p[l * ls + k * ks].
AG_TARGET
void pack_rows_bf16(const uint16_t* p, int64_t ls, int64_t ks, int64_t lines, int64_t K, int64_t Kp, uint16_t* out) {
  if (ks == 1 || lines == 0) {
    for (int64_t l = 0; l < 16; ++l) {
      uint16_t* o = out + l * Kp;
      if (l >= lines) { std::memset(o, 0, sizeof(uint16_t) * Kp); continue; }
      const uint16_t* s = p + l * ls;
      for (int64_t k0 = 0; k0 < Kp; k0 += 32) {
        const int64_t n = std::min<int64_t>(std::max<int64_t>(K - k0, 0), 32);
        const __mmask32 m = n >= 32 ? ~__mmask32{0} : (__mmask32{1} << n) - 1;
        _mm512_storeu_si512(o + k0, _mm512_maskz_loadu_epi16(m, s + k0));
      }
    }
    return;
  }
  if (ls == 1) {  // lines contiguous: pairs of k rows interleaved into dwords, then 16x16 dword transposes
    const __mmask16 ml = lanes(lines, 0);
    for (int64_t k0 = 0; k0 < Kp; k0 += 32) {
      __m512 r[16];
      for (int q = 0; q < 16; ++q) {
        const int64_t ka = k0 + 2 * q;
        const __m256i x0 = ka < K ? _mm256_maskz_loadu_epi16(ml, p + ka * ks) : _mm256_setzero_si256();
        const __m256i x1 = ka + 1 < K ? _mm256_maskz_loadu_epi16(ml, p + (ka + 1) * ks) : _mm256_setzero_si256();
        r[q] = _mm512_castsi512_ps(_mm512_or_si512(_mm512_cvtepu16_epi32(x0), _mm512_slli_epi32(_mm512_cvtepu16_epi32(x1), 16)));
      }
      transpose16(r);  // r[l]: line l's 16 pairs
      for (int l = 0; l < 16; ++l) _mm512_storeu_ps(reinterpret_cast<float*>(out + l * Kp + k0), r[l]);
    }
    return;
  }
  for (int64_t l = 0; l < 16; ++l)
    for (int64_t k = 0; k < Kp; ++k) out[l * Kp + k] = l < lines && k < K ? p[l * ls + k * ks] : uint16_t(0);
}


// tmp [32 x 32] fp32 = (A tiles at a0, a1: 16 rows each, row stride lda bytes) . (B panel b: Kp/2 pair rows of 32 dwords).
AG_TARGET_AMX
void amx_block(int64_t chunks, const uint16_t* a0, const uint16_t* a1, int64_t lda, const uint32_t* b, float* tmp) {
  asm volatile("" ::: "memory");
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  for (int64_t c = 0; c < chunks; ++c) {
    _tile_loadd(4, a0 + 32 * c, lda);
    _tile_loadd(5, a1 + 32 * c, lda);
    _tile_loadd(6, b + 16 * NR * c, NR * 4);
    _tile_loadd(7, b + 16 * NR * c + 16, NR * 4);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, tmp, 128);
  _tile_stored(1, tmp + 16, 128);
  _tile_stored(2, tmp + 16 * 32, 128);
  _tile_stored(3, tmp + 16 * 32 + 16, 128);
  asm volatile("" ::: "memory");
}

// The 64-byte tile configuration (palette 1; tiles 0-7 of 16 rows x 64 bytes), written as bytes:
// ldtilecfg's intrinsic reads it through its own struct type, and a struct of ours filled field by
// field was, by type-based alias analysis, dead stores to GCC (the x86-64-v4 module loaded a config of
// zeros and faulted on the first tile instruction). The memory clobber keeps the stores before it.
AG_TARGET_AMX void amx_begin() {
  alignas(64) unsigned char cfg[64] = {};
  cfg[0] = 1;
  for (int t = 0; t < 8; ++t) {
    cfg[16 + 2 * t] = 64;  // colsb[t], little-endian uint16
    cfg[48 + t] = 16;      // rows[t]
  }
  asm volatile("" : : "r"(cfg) : "memory");
  _tile_loadconfig(cfg);
}
AG_TARGET_AMX void amx_end() { _tile_release(); }

// C[rows x cols] (rows, cols <= 32) = alpha * acc + beta * C, rounded to bf16 once.
AG_TARGET
void store_bf16_block(const float* acc, const Out<uint16_t>& o, int64_t rows, int64_t cols) {
  const __mmask16 m0 = lanes(cols, 0), m1 = lanes(cols, 16);
  for (int64_t r = 0; r < rows; ++r)
    for (int h = 0; h < 2; ++h) store_bf16_lanes(_mm512_load_ps(acc + r * 32 + 16 * h), o, o.c + r * o.ldc + 16 * h, h ? m1 : m0);
}
#endif

// C[rows x cols] (rows <= MR, cols <= NR) = alpha * (A panel . B panel) + beta * C, fp32. Step k
// reads MR floats at a + k * as and NR at b + k * bs: a packed panel (as = MR, bs = NR) or, for
// full panels, the operand itself (column-major A, row-major B; Note [Direct panels]).
// R rows and H 16-column halves of the tile are computed: a ragged edge panel (M = 32 is panels of
// 12, 12 and 8 rows; N = 16 one half) does not pay for the full 12x32 tile.
// With OFF, B's row k starts at b + koff[k] and its columns are S floats apart (S = 2: the even lanes
// of two loads, a stride-2 convolution's taps).
// R up to 24 takes rows 12..R-1 from a second A panel at a2 (same step): a 24x16 tile, for products
// only 16 columns wide (a stride-2 convolution's 16-wide output rows).
template <int R, int H, bool OFF = false, int S = 1>
AG_TARGET void micro_f32_tile(int64_t K, const float* a, int64_t as, const float* b, int64_t bs, const Out<float>& o,
                              int64_t rows, int64_t cols, const int64_t* koff = nullptr, const float* a2 = nullptr) {
  __m512 acc[R][H];
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r)
    for (int h = 0; h < H; ++h) acc[r][h] = _mm512_setzero_ps();
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  for (int64_t k = 0; k < K; ++k, a += as, a2 += (R > MR ? as : 0), b += bs) {
    __m512 bv[H];
    const float* bk = OFF ? b + koff[k] : b;
    for (int h = 0; h < H; ++h)
      bv[h] = S == 1 ? _mm512_loadu_ps(bk + 16 * h)
                     : _mm512_permutex2var_ps(_mm512_loadu_ps(bk + 32 * h), even, _mm512_loadu_ps(bk + 32 * h + 16));
#pragma GCC unroll 24
    for (int r = 0; r < R; ++r) {
      const __m512 av = _mm512_set1_ps(r < MR ? a[r] : a2[r - MR]);
      for (int h = 0; h < H; ++h) acc[r][h] = _mm512_fmadd_ps(av, bv[h], acc[r][h]);
    }
  }
  const __m512 al = _mm512_set1_ps(o.alpha), be = _mm512_set1_ps(o.beta);
  const __mmask16 m0 = lanes(cols, 0), m1 = lanes(cols, 16);
  for (int r = 0; r < rows; ++r) {
    float* row = o.c + r * o.ldc;
    for (int h = 0; h < H; ++h) {
      const __mmask16 m = h ? m1 : m0;
      if (!m) continue;
      __m512 v = o.alpha == 1.f ? acc[r][h] : _mm512_mul_ps(acc[r][h], al);
      if (o.beta != 0.f) v = _mm512_fmadd_ps(be, _mm512_maskz_loadu_ps(m, row + 16 * h), v);
      _mm512_mask_storeu_ps(row + 16 * h, m, v);
    }
  }
}

// The tile shape for a ragged edge (R rows of 4/8/12, H halves of 16 columns).
template <bool OFF = false, int S = 1>
void micro_f32_any(int64_t K, const float* a, int64_t as, const float* b, int64_t bs, const Out<float>& o, int64_t rows,
                   int64_t cols, const int64_t* koff = nullptr) {
  if (cols > 16) {
    if (rows > 8) micro_f32_tile<MR, 2, OFF, S>(K, a, as, b, bs, o, rows, cols, koff);
    else if (rows > 4) micro_f32_tile<8, 2, OFF, S>(K, a, as, b, bs, o, rows, cols, koff);
    else micro_f32_tile<4, 2, OFF, S>(K, a, as, b, bs, o, rows, cols, koff);
  } else {
    if (rows > 8) micro_f32_tile<MR, 1, OFF, S>(K, a, as, b, bs, o, rows, cols, koff);
    else if (rows > 4) micro_f32_tile<8, 1, OFF, S>(K, a, as, b, bs, o, rows, cols, koff);
    else micro_f32_tile<4, 1, OFF, S>(K, a, as, b, bs, o, rows, cols, koff);
  }
}

void micro_f32(int64_t K, const float* a, int64_t as, const float* b, int64_t bs, const Out<float>& o, int64_t rows,
               int64_t cols) {
  micro_f32_any(K, a, as, b, bs, o, rows, cols);
}

struct Bf16Kernel {  // bf16 bits in and out, k pairs packed as dwords
  using T = uint16_t;
  using Packed = uint32_t;
  static constexpr int64_t kstep = 2;
  template <int P> static void pack(const T* p, int64_t ls, int64_t ks, int64_t lines, int64_t K, Packed* out) {
    pack_bf16<P>(p, ls, ks, lines, K, out);
  }
  static constexpr bool direct = false;
  static void micro(int64_t steps, const Packed* a, int64_t, const Packed* b, int64_t, const Out<T>& o, int64_t rows,
                    int64_t cols) {
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
  static constexpr bool direct = true;
  static void micro(int64_t steps, const Packed* a, int64_t as, const Packed* b, int64_t bs, const Out<T>& o, int64_t rows,
                    int64_t cols) {
    micro_f32(steps, a, as, b, bs, o, rows, cols);
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
  // Note [Direct panels]: fp32 reads a full panel straight from the operand when its MR (NR) lines
  // are contiguous at each k (column-major A, row-major B) and the panel is used by at most 4 panels
  // of the other operand: packing such a panel only copied it (convolution's forward GEMM, 32 output
  // channels by a 1.2 MB im2col matrix, wrote the matrix twice: 1.53x torch's time, now 0.9x). A
  // panel reused more often is packed: its 4 KB-strided rows read from L2 again and again ran the
  // weight-gradient shapes up to 2x slower. Ragged edge panels and other layouts are packed.
  const bool a_direct = Kr::direct && ars == 1 && np <= 4, b_direct = Kr::direct && bcs == 1 && mp <= 4;
  const int64_t mp_pack0 = a_direct ? M / MR : 0, np_pack0 = b_direct ? N / NR : 0;
  parallel_for(mp - mp_pack0, grain, [&](int64_t p0, int64_t p1) {
    for (int64_t p = mp_pack0 + p0; p < mp_pack0 + p1; ++p)
      Kr::template pack<MR>(a + p * MR * ars, ars, acs, std::min<int64_t>(MR, M - p * MR), K, pa + p * steps * MR);
  });
  parallel_for(np - np_pack0, grain, [&](int64_t p0, int64_t p1) {
    for (int64_t j = np_pack0 + p0; j < np_pack0 + p1; ++j)
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
          const bool ad = i < mp_pack0, bd = j < np_pack0;
          const P* ap = ad ? reinterpret_cast<const P*>(a + i * MR) : pa + i * steps * MR;
          const P* bp = bd ? reinterpret_cast<const P*>(b + j * NR) : pb + j * steps * NR;
          Kr::micro(steps, ap, ad ? acs : MR, bp, bd ? brs : NR, o, std::min<int64_t>(MR, M - i * MR),
                    std::min<int64_t>(NR, N - j * NR));
        }
  });
}

#ifdef AG_HAVE_AMX
// Note [AMX bf16 GEMM]: A packed as 16-row panels (k contiguous), B as pack_bf16's 32-column panels
// (pair rows padded with zeros to Kp / 2), both in parallel; then 32x32 blocks of C split between
// threads by block columns or rows, whichever has more.
void gemm_bf16_amx(const uint16_t* a, int64_t ars, int64_t acs, const uint16_t* b, int64_t brs, int64_t bcs, uint16_t* c,
                   int64_t ldc, int64_t M, int64_t N, int64_t K, float beta, float alpha) {
  const int64_t Kp = (K + 31) / 32 * 32, pairs = Kp / 2, kp = (K + 1) / 2;
  const int64_t mb = (M + 31) / 32, np = (N + NR - 1) / NR;
  Buffer hold_a, hold_b;
  uint16_t* pa = scratch<uint16_t>(0, static_cast<size_t>(mb * 32 * Kp), hold_a);
  uint32_t* pb = scratch<uint32_t>(1, static_cast<size_t>(np * pairs * NR), hold_b);
  const int64_t grain = (M + N) * K >= 32768 ? 2 : std::numeric_limits<int64_t>::max();
  // A row-major with K a multiple of 32: the tiles read full 32-row blocks in place (row stride
  // ars * 2 bytes); only a ragged last block is packed.
  const bool a_direct = acs == 1 && K % 32 == 0;
  const int64_t mb_direct = a_direct ? M / 32 : 0;
  parallel_for(2 * (mb - mb_direct), grain, [&](int64_t p0, int64_t p1) {
    for (int64_t p = 2 * mb_direct + p0; p < 2 * mb_direct + p1; ++p) {
      const int64_t lines = std::min<int64_t>(std::max<int64_t>(M - p * 16, 0), 16);
      pack_rows_bf16(lines ? a + p * 16 * ars : a, ars, acs, lines, K, Kp, pa + p * 16 * Kp);
    }
  });
  parallel_for(np, grain, [&](int64_t p0, int64_t p1) {
    for (int64_t j = p0; j < p1; ++j) {
      uint32_t* panel = pb + j * pairs * NR;
      pack_bf16<NR>(b + j * NR * bcs, bcs, brs, std::min<int64_t>(NR, N - j * NR), K, panel);
      std::memset(panel + kp * NR, 0, sizeof(uint32_t) * (pairs - kp) * NR);
    }
  });
  const bool split_cols = np >= mb;
  const int64_t tiles = split_cols ? np : mb;
  const bool big = M * N * K >= (int64_t{1} << 21);
  parallel_for(tiles, big ? 1 : tiles + 1, [&](int64_t t0, int64_t t1) {
    const int64_t j0 = split_cols ? t0 : 0, j1 = split_cols ? t1 : np;
    const int64_t i0 = split_cols ? 0 : t0, i1 = split_cols ? mb : t1;
    alignas(64) float acc[32 * 32];
    amx_begin();
    for (int64_t j = j0; j < j1; ++j)
      for (int64_t i = i0; i < i1; ++i) {
        if (i < mb_direct)
          amx_block(Kp / 32, a + i * 32 * ars, a + (i * 32 + 16) * ars, ars * 2, pb + j * pairs * NR, acc);
        else
          amx_block(Kp / 32, pa + 2 * i * 16 * Kp, pa + (2 * i + 1) * 16 * Kp, Kp * 2, pb + j * pairs * NR, acc);
        const Out<uint16_t> o{c + i * 32 * ldc + j * NR, ldc, alpha, beta};
        store_bf16_block(acc, o, std::min<int64_t>(32, M - i * 32), std::min<int64_t>(NR, N - j * NR));
      }
    amx_end();
  });
}
#endif

// Note [Implicit GEMM convolution]: C (M x N, row stride ldc) = A . B + beta * C with A
// packed once by f32_pack_a and B(k, n) = b[koff[k] + n * bstride] read in place (a zero-padded input
// image: no im2col matrix), bstride 1 or 2. Loads run up to 32 * bstride - 1 floats past the last
// column of a ragged panel; the caller's buffer has that slack, and the extra lanes are never stored.
template <int S>
AG_TARGET void gemm_f32_koff_serial(const float* pa, int64_t M, int64_t K, const float* b, const int64_t* koff, float* c,
                                    int64_t ldc, int64_t N, float beta) {
  const int64_t mp = (M + MR - 1) / MR;
  for (int64_t j = 0; j < N; j += NR) {
    const int64_t cols = std::min<int64_t>(NR, N - j);
    const float* bj = b + j * S;
    for (int64_t i = 0; i < mp; ++i) {
      const int64_t rows = std::min<int64_t>(MR, M - i * MR);
      const Out<float> o{c + i * MR * ldc + j, ldc, 1.f, beta};
      const float* ap = pa + i * K * MR;
      if (cols <= 16 && i + 1 < mp && M - i * MR > 2 * MR - 4) {  // two panels, the second with > 8 rows
        micro_f32_tile<2 * MR, 1, true, S>(K, ap, MR, bj, 0, o, std::min<int64_t>(2 * MR, M - i * MR), cols, koff, ap + K * MR);
        ++i;
        continue;
      }
      micro_f32_any<true, S>(K, ap, MR, bj, 0, o, rows, cols, koff);
    }
  }
}

// Note [Implicit GEMM weight gradient]: a convolution's weight gradient gw[o, k] = sum over images n and
// output positions l of gy[n, o, l] . x[n, k-th tap at l]. As the product C^T [Kdim x Og] = X [Kdim x L] .
// gy^T [L x Og] the big operand X is the im2col matrix; here it is read in place from the zero-padded
// input: row k of X at output row q starts at xp + img + row_off[q] + koff[k], step S. gy^T is packed
// once per image into 32-column panels ([L][32], pack_f32's B layout). A 12 x 32 tile of C^T stays in
// registers across every position of an image, each step an FMA of 12 broadcast taps by two
// loaded halves of a gy^T row, as the GEMM's micro-kernel. im2col's matrix (written, then packed:
// each element used by only Og = 32 products) cost 2-3x the products themselves.
template <int H, int S>
AG_TARGET void wgrad_tile(const float* xp, const int64_t* row_off, int64_t rows, int64_t out2, const int64_t* koff,
                          const float* panel, float* c, int64_t ldc, int64_t nrows, int64_t ncols, bool accumulate) {
  __m512 acc[MR][H];
#pragma GCC unroll 12
  for (int r = 0; r < MR; ++r)
    for (int h = 0; h < H; ++h) acc[r][h] = _mm512_setzero_ps();
  for (int64_t q = 0; q < rows; ++q) {
    const float* base = xp + row_off[q];
    const float* ap[MR];
    for (int r = 0; r < MR; ++r) ap[r] = base + koff[r];
    const float* b = panel + q * out2 * NR;
    for (int64_t j = 0; j < out2; ++j, b += NR) {
      __m512 bv[H];
      for (int h = 0; h < H; ++h) bv[h] = _mm512_loadu_ps(b + 16 * h);
#pragma GCC unroll 12
      for (int r = 0; r < MR; ++r) {
        const __m512 av = _mm512_set1_ps(ap[r][j * S]);
        for (int h = 0; h < H; ++h) acc[r][h] = _mm512_fmadd_ps(av, bv[h], acc[r][h]);
      }
    }
  }
  const __mmask16 m0 = lanes(ncols, 0), m1 = lanes(ncols, 16);
  for (int r = 0; r < nrows; ++r)
    for (int h = 0; h < H; ++h) {
      const __mmask16 m = h ? m1 : m0;
      float* dst = c + r * ldc + 16 * h;
      __m512 v = acc[r][h];
      if (accumulate) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, dst));
      _mm512_mask_storeu_ps(dst, m, v);
    }
}

}  // namespace

int64_t f32_packed_a_size(int64_t M, int64_t K) { return (M + MR - 1) / MR * MR * K; }

void f32_pack_a(const float* a, int64_t ars, int64_t acs, int64_t M, int64_t K, float* out) {
  for (int64_t p = 0; p * MR < M; ++p) pack_f32<MR>(a + p * MR * ars, ars, acs, std::min<int64_t>(MR, M - p * MR), K, out + p * K * MR);
}

void gemm_f32_koff(const float* pa, int64_t M, int64_t K, const float* b, const int64_t* koff, int64_t bstride, float* c,
                   int64_t ldc, int64_t N, float beta) {
  if (bstride == 2) gemm_f32_koff_serial<2>(pa, M, K, b, koff, c, ldc, N, beta);
  else gemm_f32_koff_serial<1>(pa, M, K, b, koff, c, ldc, N, beta);
}

int64_t f32_packed_b_size(int64_t K, int64_t N) { return (N + NR - 1) / NR * NR * K; }

void f32_pack_b(const float* b, int64_t brs, int64_t bcs, int64_t K, int64_t N, float* out) {
  for (int64_t j = 0; j * NR < N; ++j) pack_f32<NR>(b + j * NR * bcs, bcs, brs, std::min<int64_t>(NR, N - j * NR), K, out + j * K * NR);
}

void conv_wgrad_f32(const float* xp, const int64_t* row_off, int64_t rows, int64_t out2, int64_t stride2, const int64_t* koff,
                    int64_t Kdim, const float* pb, int64_t Og, float* ct, int64_t tile, bool accumulate) {
  const int64_t kt = (Kdim + MR - 1) / MR, L = rows * out2;
  const int64_t i = tile % kt, j = tile / kt;
  const int64_t nrows = std::min<int64_t>(MR, Kdim - i * MR), ncols = std::min<int64_t>(NR, Og - j * NR);
  const float* panel = pb + j * L * NR;
  float* c = ct + i * MR * Og + j * NR;
  koff += i * MR;
  if (ncols > 16) {
    if (stride2 == 2) wgrad_tile<2, 2>(xp, row_off, rows, out2, koff, panel, c, Og, nrows, ncols, accumulate);
    else wgrad_tile<2, 1>(xp, row_off, rows, out2, koff, panel, c, Og, nrows, ncols, accumulate);
  } else {
    if (stride2 == 2) wgrad_tile<1, 2>(xp, row_off, rows, out2, koff, panel, c, Og, nrows, ncols, accumulate);
    else wgrad_tile<1, 1>(xp, row_off, rows, out2, koff, panel, c, Og, nrows, ncols, accumulate);
  }
}

int64_t conv_wgrad_tiles(int64_t Kdim, int64_t Og) { return (Kdim + MR - 1) / MR * ((Og + NR - 1) / NR); }
int64_t conv_wgrad_koff_size(int64_t Kdim) { return (Kdim + MR - 1) / MR * MR; }

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
bool has_amx_bf16() {
#ifdef AG_HAVE_AMX
  static const bool ok = [] {
    if (const char* e = std::getenv("AMPGRAD_AMX"); e && e[0] == '0') return false;
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    if (!((d >> 22) & 1u) || !((d >> 24) & 1u) || !has_avx512_bf16()) return false;  // AMX-BF16, AMX-TILE
#ifdef SYS_arch_prctl
    return syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XFEATURE_XTILEDATA */) == 0;
#else
    return false;
#endif
  }();
  return ok;
#else
  return false;
#endif
}

void gemm_bf16_avx512(const uint16_t* a, int64_t ars, int64_t acs, const uint16_t* b, int64_t brs, int64_t bcs,
                      uint16_t* c, int64_t ldc, int64_t M, int64_t N, int64_t K, float beta, float alpha) {
#ifdef AG_HAVE_AMX
  if (M >= 16 && N >= 16 && K >= 16 && M * N * K >= 32768 && has_amx_bf16()) {
    gemm_bf16_amx(a, ars, acs, b, brs, bcs, c, ldc, M, N, K, beta, alpha);
    return;
  }
#endif
  gemm_driver<Bf16Kernel>(a, ars, acs, b, brs, bcs, c, ldc, M, N, K, beta, alpha);
}

void gemm_f32_avx512(const float* a, int64_t ars, int64_t acs, const float* b, int64_t brs, int64_t bcs, float* c,
                     int64_t ldc, int64_t M, int64_t N, int64_t K, float beta, float alpha) {
  gemm_driver<F32Kernel>(a, ars, acs, b, brs, bcs, c, ldc, M, N, K, beta, alpha);
}

#else
int64_t f32_packed_b_size(int64_t, int64_t) { return 0; }
void f32_pack_b(const float*, int64_t, int64_t, int64_t, int64_t, float*) {}
void conv_wgrad_f32(const float*, const int64_t*, int64_t, int64_t, int64_t, const int64_t*, int64_t, const float*, int64_t,
                    float*, int64_t, bool) {}
int64_t conv_wgrad_tiles(int64_t, int64_t) { return 0; }
int64_t conv_wgrad_koff_size(int64_t) { return 0; }
int64_t f32_packed_a_size(int64_t, int64_t) { return 0; }
void f32_pack_a(const float*, int64_t, int64_t, int64_t, int64_t, float*) {}
void gemm_f32_koff(const float*, int64_t, int64_t, const float*, const int64_t*, int64_t, float*, int64_t, int64_t, float) {}
bool has_avx512_bf16() { return false; }
bool has_amx_bf16() { return false; }
bool has_avx512_f32() { return false; }
void gemm_f32_avx512(const float*, int64_t, int64_t, const float*, int64_t, int64_t, float*, int64_t, int64_t, int64_t,
                     int64_t, float, float) {}
void gemm_bf16_avx512(const uint16_t*, int64_t, int64_t, const uint16_t*, int64_t, int64_t, uint16_t*, int64_t, int64_t,
                      int64_t, int64_t, float, float) {}
#endif

}  // namespace ampgrad::cpu
