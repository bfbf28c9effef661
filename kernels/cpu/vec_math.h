// Vectorized float32 math for the CPU elementwise kernels (Note [Vector math]): exp, expm1, log,
// log1p, tanh, sigmoid, erf and the activations built on them, on GCC vector types as wide as the
// target's registers (16 lanes with AVX-512, 8 with AVX2, 4 below). No engine headers: tests/cpp-style
// harnesses can include it alone.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#if defined(__AVX512F__) || defined(__AVX__)
#include <immintrin.h>
#endif

// Note [Vector math]: the float32 / fp16 / bf16 loops of the unary rows whose functor has a
// VecUnary specialization, and of the activation backward rows (VecBinary), run these instead of
// the scalar functor (kernels/cpu/elementwise.cpp): chunks of 256 elements, converted to float32,
// computed kW lanes at a time, rounded once on store. float64 and strided inner loops keep the
// scalar functor. Max error vs float64 (tests/test_vec_math.py): exp 0.55 (Note [Float exp]), tanh
// 0.7 (Note [Float tanh]), sin and cos 0.9 (Note [Float sin]), log 1, expm1 1.5, log1p, sigmoid,
// silu, softplus 3, erf and gelu 6 ulp. The special points (0, -0, +-inf, nan, overflow, underflow, denormals) give the
// scalar functors' results.
namespace ampgrad::cpu::vec {

// The vector width follows the target (Note [CPU dispatch]): 64 bytes (16 floats) with AVX-512, 32 with
// AVX / AVX2, 16 below. Wider GCC vectors than the registers are lowered piecewise through the stack
// (an AVX2 build of 16-lane code ran its sums 4x and its exp 4x slower than 8-lane code).
#if defined(__AVX512F__)
#define AG_VEC_BYTES 64
#elif defined(__AVX__)
#define AG_VEC_BYTES 32
#else
#define AG_VEC_BYTES 16
#endif
constexpr int kW = AG_VEC_BYTES / 4;
typedef float vf __attribute__((vector_size(AG_VEC_BYTES)));
typedef int32_t vi __attribute__((vector_size(AG_VEC_BYTES)));

inline vf splat(float v) { return vf{} + v; }
inline vi splati(int32_t v) { return vi{} + v; }
inline vf load(const float* p) { vf v; std::memcpy(&v, p, sizeof v); return v; }
inline void store(float* p, vf v) { std::memcpy(p, &v, sizeof v); }
inline vi bits(vf v) { return (vi)v; }  // vector casts of equal size reinterpret the bits
inline vf from_bits(vi v) { return (vf)v; }
inline vf sel(vi m, vf a, vf b) { return m ? a : b; }
inline vf vabs(vf x) { return from_bits(bits(x) & 0x7fffffff); }
inline vf vmin(vf a, vf b) { return a < b ? a : b; }
inline vf vmax(vf a, vf b) { return a > b ? a : b; }
// a * b - p exactly, for p = a * b rounded: one fused multiply-subtract (written as an intrinsic: with
// `a * b - p` GCC may reuse p's product and fold the difference to zero), or Dekker's product
// without FMA.
inline vf mul_err(vf a, vf b, vf p) {
#if AG_VEC_BYTES == 64
  __m512 x, y, z;
  std::memcpy(&x, &a, sizeof x), std::memcpy(&y, &b, sizeof y), std::memcpy(&z, &p, sizeof z);
  const __m512 r = _mm512_fmsub_ps(x, y, z);
#elif AG_VEC_BYTES == 32 && defined(__FMA__)
  __m256 x, y, z;
  std::memcpy(&x, &a, sizeof x), std::memcpy(&y, &b, sizeof y), std::memcpy(&z, &p, sizeof z);
  const __m256 r = _mm256_fmsub_ps(x, y, z);
#else
  const vf c = splat(4097.0f);  // 2^12 + 1: splits into 12-bit halves
  const vf ta = c * a, tb = c * b;
  const vf ah = ta - (ta - a), al = a - ah, bh = tb - (tb - b), bl = b - bh;
  const vf r = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
#endif
  vf out;
  std::memcpy(&out, &r, sizeof out);
  return out;
}
inline vf copysign(vf mag, vf sgn) { return from_bits((bits(mag) & 0x7fffffff) | (bits(sgn) & int32_t(0x80000000u))); }
inline vi isnan(vf x) { return x != x; }
inline bool any(vi m) {  // some lane set
#if AG_VEC_BYTES == 64
  __m512i v;
  std::memcpy(&v, &m, sizeof v);
  return _mm512_test_epi32_mask(v, v) != 0;
#elif AG_VEC_BYTES == 32
  __m256i v;
  std::memcpy(&v, &m, sizeof v);
  return !_mm256_testz_si256(v, v);
#else
  typedef uint64_t vq __attribute__((vector_size(AG_VEC_BYTES)));
  const vq b = (vq)m;
  uint64_t r = 0;
  for (int i = 0; i < AG_VEC_BYTES / 8; ++i) r |= b[i];
  return r != 0;
#endif
}
// Round to nearest (ties to even) for |x| < 2^22: the magic-number trick, exact in float.
inline vf round_nearest(vf x) {
  const vf m = splat(12582912.0f);
  return (x + m) - m;
}
inline vi to_int(vf x) { return __builtin_convertvector(x, vi); }
inline vf to_float(vi x) { return __builtin_convertvector(x, vf); }
// 2^n for n in [-126, 127]
inline vf pow2i(vi n) { return from_bits((n + 127) << 23); }

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kLog2e = 1.44269504088896341f, kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;

// exp: Cody-Waite reduction x = n ln2 + r, |r| <= ln2 / 2, Cephes' degree-7 polynomial (1 ulp);
// 2^n applied in two halves so results down to the smallest denormal round once. The activations
// use it; torch.exp itself takes exp_acc below.
inline vf exp(vf x) {
  const vf xc = vmin(vmax(x, splat(-104.0f)), splat(88.8f));
  const vf n = round_nearest(xc * kLog2e);
  vf r = xc - n * kLn2Hi;
  r = r - n * kLn2Lo;
  const vf z = r * r;
  vf p = splat(1.9875691500E-4f);
  p = p * r + 1.3981999507E-3f;
  p = p * r + 8.3334519073E-3f;
  p = p * r + 4.1665795894E-2f;
  p = p * r + 1.6666665459E-1f;
  p = p * r + 5.0000001201E-1f;
  p = p * z + r + 1.0f;
  const vi ni = to_int(n), n1 = ni >> 1, n2 = ni - n1;
  const vf y = p * pow2i(n1) * pow2i(n2);
  return sel(isnan(x), x, y);
}

// exp correctly rounded but for ~1.5e-6 of the inputs (libm's expf is, and torch's MKL exp nearly):
// x = (8m + j) ln2/8 + r with |r| <= ln2/16 in double (ln2/8 in a 32-bit high part, so n * hi is
// exact), exp(r) by its Taylor series to r^5 (error < 1e-11), 2^(j/8) from an 8-entry table and 2^m
// in the exponent bits, rounded once to float (which also gives the denormals and the overflow to
// inf). Measured over every float in [-104, 89]: 989 of 6.4e8 sampled inputs differ from the
// correctly rounded value, each by the last bit.
// The double-precision kernels work on half a vf at a time: kW / 2 floats <-> as many doubles (one register).
typedef double vd __attribute__((vector_size(AG_VEC_BYTES)));
typedef int64_t vl __attribute__((vector_size(AG_VEC_BYTES)));
typedef float vfh __attribute__((vector_size(AG_VEC_BYTES / 2)));
constexpr int kWd = kW / 2;
inline void split(vf x, vfh& lo, vfh& hi) {
  std::memcpy(&lo, &x, sizeof lo);
  std::memcpy(&hi, reinterpret_cast<const char*>(&x) + sizeof lo, sizeof hi);
}
inline vf join(vfh lo, vfh hi) {
  vf y;
  std::memcpy(&y, &lo, sizeof lo);
  std::memcpy(reinterpret_cast<char*>(&y) + sizeof lo, &hi, sizeof hi);
  return y;
}
// 2^(j/8) for j = q & 7 in each lane.
inline vd pow2_eighths(vl q) {
  static constexpr double t[8] = {1.0, 1.0905077326652577, 1.189207115002721, 1.2968395546510096,
                                  1.4142135623730951, 1.5422108254079407, 1.681792830507429, 1.8340080864093424};
  if constexpr (kWd == 8) {  // (memcpy, not initializer lists: every branch must compile at every width)
    vd tab;
    std::memcpy(&tab, t, sizeof tab);
    return __builtin_shuffle(tab, q & 7);
  } else if constexpr (kWd == 4) {
    vd lo, hi;
    std::memcpy(&lo, t, sizeof lo);
    std::memcpy(&hi, t + 4, sizeof hi);
    return __builtin_shuffle(lo, hi, q & 7);
  } else {
    vd s;
    for (int i = 0; i < kWd; ++i) s[i] = t[q[i] & 7];
    return s;
  }
}
inline vfh exp_cr_half(vfh xf) {
  const vd x = __builtin_convertvector(xf, vd);
  const vd mg = vd{} + 6755399441055744.0;  // 1.5 * 2^52: round to nearest, n in the low bits
  const vd t = x * (8 * 1.4426950408889634074) + mg;
  const vl q = (vl)t;
  const vd n = t - mg;
  const vd r = (x - n * 0.08664339757524431) - n * -5.251143840851356e-12;
  vd p = vd{} + 1.0 / 120;
  p = p * r + 1.0 / 24;
  p = p * r + 1.0 / 6;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  const vd s = pow2_eighths(q);
  const vl e = ((q >> 3) + 1023) << 52;  // x clamped to [-104, 100]: m in [-151, 145], 2^m a normal double
  return __builtin_convertvector(p * s * (vd)e, vfh);
}
inline vf exp_cr(vf x) {
  const vf xc = vmin(vmax(x, splat(-104.0f)), splat(100.0f));
  vfh lo, hi;
  split(xc, lo, hi);
  vf y = join(exp_cr_half(lo), exp_cr_half(hi));
  y = sel(x < -104.0f, splat(0.0f), y);
  y = sel(x > 100.0f, splat(kInf), y);
  return sel(isnan(x), x, y);
}

// Note [Float exp]: torch.exp in float arithmetic within 0.55 ulp (every float in [-87, 89] checked:
// 0.07% of results differ from the correctly rounded one, by the last bit; torch's MKL exp: 0.6%),
// at twice exp_cr's speed. x = (16m + j) ln2/16 + r, |r| <= ln2/32 (ln2/16 in a 12-bit high part:
// n * hi exact for |n| < 2^12), e^r - 1 = p(r) by its Taylor series to r^4, 2^(j/16) = th + tl from
// two 16-entry tables, and e^x = (th + (th p + tl)) 2^m: one rounding of a sum whose second term is
// within 0.01 ulp. Results below FLT_MIN (x < -87.3) would round twice (at 24 bits, then at the
// denormal's position): those lanes take exp_cr.
alignas(64) inline constexpr float kExp16Hi[16] = {
    1.0f, 1.0442737340927124f, 1.0905077457427979f, 1.1387885808944702f, 1.1892070770263672f, 1.2418577671051025f,
    1.2968395948410034f, 1.3542555570602417f, 1.4142135381698608f, 1.4768261909484863f, 1.5422108173370361f,
    1.610490322113037f, 1.6817928552627563f, 1.7562521696090698f, 1.8340080976486206f, 1.9152065515518188f};
alignas(64) inline constexpr float kExp16Lo[16] = {
    0.0f, 4.8334701574503924e-08f, -1.3077539939843064e-08f, 5.386222312608879e-08f, 3.797635272917432e-08f,
    4.496838101886169e-08f, -4.018999533172973e-08f, -1.0123349269974824e-08f, 2.4203234971764687e-08f,
    -4.500898853621038e-08f, 8.070904833346049e-09f, 9.836217174097328e-09f, -2.4755326677450284e-08f,
    -9.235770370707996e-09f, -1.1239277952768134e-08f, 9.845328108326612e-09f};
// t[j] for j in [0, 16) in each lane
inline vf lookup16(const float* t, vi j) {
  if constexpr (kW == 16) {
    vf tab;
    std::memcpy(&tab, t, sizeof tab);
    return __builtin_shuffle(tab, j);
  } else if constexpr (kW == 8) {
    vf a, b;
    std::memcpy(&a, t, sizeof a);
    std::memcpy(&b, t + 8, sizeof b);
    return __builtin_shuffle(a, b, j);
  } else {
    vf s;
    for (int i = 0; i < kW; ++i) s[i] = t[j[i]];
    return s;
  }
}
// e^x = (hi + lo) 2^e, unrounded sum, |lo| <= 0.03 hi, for x in [-104, 89]
inline void exp_parts(vf x, vf& hi, vf& lo, vi& e) {
  const vf m = splat(12582912.0f);  // 1.5 * 2^23: round to nearest, k in the low bits
  const vf t = x * 23.083120346069336f + m;
  const vi k = bits(t) - bits(m);
  const vf n = t - m;
  vf r = x - n * 0.0433197021484375f;
  r = r - n * 1.9966364561696537e-06f;
  vf c = splat(1.0f / 24);
  c = c * r + 1.0f / 6;
  c = c * r + 0.5f;
  const vf p = (r * r) * c + r;
  const vi j = k & 15;
  hi = lookup16(kExp16Hi, j);
  lo = hi * p + lookup16(kExp16Lo, j);
  e = k >> 4;
}
[[gnu::noinline]] inline vf exp_cr_lanes(vf x) { return exp_cr(x); }
inline vf exp_acc(vf x) {
  vf hi, lo;
  vi e;
  exp_parts(vmin(vmax(x, splat(-104.0f)), splat(89.0f)), hi, lo, e);
  const vi e1 = e >> 1, e2 = e - e1;
  vf y = (hi + lo) * pow2i(e1) * pow2i(e2);
  const vi sub = x < -87.33654475f;  // below FLT_MIN
  if (any(sub)) y = sel(sub, exp_cr_lanes(x), y);
  return sel(isnan(x), x, y);
}

// sin / cos: x = k pi/2 + r in double (pi/2 in three 33-bit parts: exact products for |k| < 2^20),
// FreeBSD's float kernels __kernel_sindf / __kernel_cosdf on |r| <= pi/4 in double, rounded once to
// float (within 1 ulp, nearly always the correctly rounded value as libm's sinf). Lanes with
// |x| > 2^19 pi/2, inf or NaN take libm per lane.
template <bool IsCos> inline vfh sincos_half(vfh xf) {
  const vd x = __builtin_convertvector(xf, vd);
  const vd m = vd{} + 6755399441055744.0;  // 1.5 * 2^52: round to nearest, k in the low bits
  const vd t = x * 6.36619772367581382433e-01 + m;
  const vl q = (vl)t;
  const vd k = t - m;
  const vd r = ((x - k * 1.57079632673412561417e+00) - k * 6.07710050630396597660e-11) - k * 2.02226624879595063154e-21;
  const vd z = r * r, w = z * z, s = z * r;
  const vd sn = (r + s * (-0.166666666416265235595 + z * 0.0083333293858894631756)) +
                s * w * (-0.000198393348360966317347 + z * 0.0000027183114939898219064);
  const vd cs = ((1.0 + z * -0.499999997251031003120) + w * 0.0416666233237390631894) +
                (w * z) * (-0.00138867637746099294692 + z * 0.0000243904487962774090654);
  const vl n = (q + (IsCos ? 1 : 0)) & 3;  // cos(x) = sin(x + pi/2)
  vd y = (n & 1) != 0 ? cs : sn;
  y = (n & 2) != 0 ? -y : y;
  return __builtin_convertvector(y, vfh);
}
template <bool IsCos> [[gnu::noinline]] inline vf sincos_dbl(vf x) {
  vfh lo, hi;
  split(x, lo, hi);
  vf y = join(sincos_half<IsCos>(lo), sincos_half<IsCos>(hi));
  if (!IsCos) y = sel(x == 0.0f, x, y);  // sin(-0) = -0
  const vi big = !(vabs(x) <= 823549.6f);  // 2^19 pi / 2; NaN too
  if (any(big))
    for (int i = 0; i < kW; ++i)
      if (big[i]) y[i] = IsCos ? std::cos(x[i]) : std::sin(x[i]);
  return y;
}
// Note [Float sin]: with FMA, sin and cos of |x| <= 25000 in float arithmetic within 0.88 ulp (every
// float checked: 0.24% of results differ from the correctly rounded one; torch's MKL sin: 0.6 ulp,
// 2%), 1.5x sincos_dbl's speed. x = k pi/2 + r: k pi/2 in three parts (pi/2 = P1 + P2 + P3), r1 =
// x - k P1 exact in one FMA (both are multiples of 2^-23 and |r1| < 2), k P2 as an exact product of
// two floats, r = rh + rl to ~2^-48 |r| (for |k| < 2^14 no float lies closer to a multiple of pi/2
// than that allows); sin r = rh + (rh^3 S(rh^2) + rl) and cos r = (1 - rh^2/2) + rh^4 C(rh^2) - rh rl
// with 1 - rh^2/2 carried in two parts, S and C minimax polynomials fitted for float. Larger |x|,
// inf, NaN, and builds without FMA (where r1 would round) take sincos_dbl.
template <bool IsCos> inline vf sincos(vf x) {
#if AG_VEC_BYTES == 64 || defined(__FMA__)
  const vf m = splat(12582912.0f);  // 1.5 * 2^23: round to nearest, k in the low bits
  const vf t = x * 0.63661975f + m;
  const vi q = bits(t) - bits(m);
  const vf k = t - m;
  const vf r1 = x - k * 1.5707964f;  // exact (one FMA)
  const vf th = k * -4.371139e-08f;
  const vf tl = mul_err(k, splat(-4.371139e-08f), th);
  const vf rh = r1 - th;
  const vf rl = (((r1 - rh) - th) - tl) - k * -1.7151245e-15f;
  const vf u = rh * rh;
  vf s = splat(2.7183048e-06f);
  s = s * u - 0.00019839335f;
  s = s * u + 0.008333329f;
  s = s * u - 0.16666667f;
  const vf sn = rh + ((rh * u) * s + rl);
  vf c = splat(2.4438374e-05f);
  c = c * u - 0.0013887367f;
  c = c * u + 0.041666646f;
  const vf hr = 0.5f * rh;
  const vf hh = hr * rh, hl = mul_err(hr, rh, hh);
  const vf w = 1.0f - hh;
  const vf cs = w + ((((1.0f - w) - hh) - hl) + ((u * u) * c - rh * rl));
  const vi n = (q + (IsCos ? 1 : 0)) & 3;  // cos(x) = sin(x + pi/2)
  vf y = sel((n & 1) != 0, cs, sn);
  y = sel((n & 2) != 0, -y, y);
  if (!IsCos) y = sel(x == 0.0f, x, y);  // sin(-0) = -0
  const vi big = !(vabs(x) <= 25000.0f);  // NaN too
  if (any(big)) y = sel(big, sincos_dbl<IsCos>(x), y);
  return y;
#else
  return sincos_dbl<IsCos>(x);
#endif
}
inline vf sin(vf x) { return sincos<false>(x); }
inline vf cos(vf x) { return sincos<true>(x); }

// expm1: the same reduction, expm1(r) by its Taylor series to r^8 (|r| <= 0.35: < 0.01 ulp left),
// then 2^n expm1(r) + (2^n - 1), which loses no accuracy: n = 0 is expm1(r) itself.
inline vf expm1(vf x) {
  const vf xc = vmin(vmax(x, splat(-88.0f)), splat(88.0f));
  const vf n = round_nearest(xc * kLog2e);
  vf r = xc - n * kLn2Hi;
  r = r - n * kLn2Lo;
  const vf z = r * r;
  vf q = splat(1.0f / 40320);
  q = q * r + 1.0f / 5040;
  q = q * r + 1.0f / 720;
  q = q * r + 1.0f / 120;
  q = q * r + 1.0f / 24;
  q = q * r + 1.0f / 6;
  q = q * r + 0.5f;
  const vf em = r + z * q;
  const vf s = pow2i(to_int(n));
  vf y = s * em + (s - 1.0f);
  if (const vi big = x > 88.0f; any(big)) y = sel(big, exp(x), y);
  y = sel(vabs(x) < 1e-9f, x, y);  // keeps -0 and denormals exact
  return sel(isnan(x), x, y);
}

// log: Cephes' logf (frexp, a degree-9 polynomial on [sqrt(.5) - 1, sqrt(2) - 1]); denormal inputs
// are scaled by 2^23 first.
inline vf log(vf x) {
  const vi tiny = x < 1.17549435e-38f;
  const vf xs = sel(tiny, x * 8388608.0f, x);
  const vi b = bits(xs);
  vi e = ((b >> 23) & 0xff) - 126;
  e = e - (tiny & 23);
  vf m = from_bits((b & 0x007fffff) | 0x3f000000);  // [0.5, 1)
  const vi lt = m < 0.707106781186547524f;
  e = e + lt;  // lt is -1 where true
  m = sel(lt, m + m - 1.0f, m - 1.0f);
  const vf fe = to_float(e);
  const vf z = m * m;
  vf p = splat(7.0376836292E-2f);
  p = p * m - 1.1514610310E-1f;
  p = p * m + 1.1676998740E-1f;
  p = p * m - 1.2420140846E-1f;
  p = p * m + 1.4249322787E-1f;
  p = p * m - 1.6668057665E-1f;
  p = p * m + 2.0000714765E-1f;
  p = p * m - 2.4999993993E-1f;
  p = p * m + 3.3333331174E-1f;
  vf y = p * m * z;
  y = y + fe * kLn2Lo;
  y = y - 0.5f * z;
  vf r = m + y;
  r = r + fe * kLn2Hi;
  r = sel(x == kInf, x, r);
  r = sel(x == 0.0f, splat(-kInf), r);
  r = sel(x < 0.0f, splat(std::numeric_limits<float>::quiet_NaN()), r);
  return sel(isnan(x), x, r);
}

// log1p: log(u) * x / (u - 1) with u = 1 + x (Goldberg's correction of u's rounding).
inline vf log1p(vf x) {
  const vf u = x + 1.0f;
  const vf d = u - 1.0f;
  vf y = log(u) * (x / d);
  y = sel(d == 0.0f, x, y);  // u == 1: log1p(x) = x to float precision (and keeps -0)
  y = sel(u == kInf, u, y);
  return y;
}

// Note [Float tanh]: tanh within 0.68 ulp (every float checked: 0.07% of results differ from the
// correctly rounded one; torch's MKL tanh: 0.56 ulp, 0.2%) in 25 vector operations, no exp and no
// division. |x| in [2^-4, 9.02] falls in one of 29 intervals, four per octave (the exponent and the
// two leading mantissa bits of |x| index them), where tanh(c + d) = c0 + d (c1 + d c2 + ... + d^5 c6)
// about the interval's center c: the coefficients (fitted for minimal error in ulps, rounded to
// float) are lanes of 32-entry tables, one permute each, and c0 = tanh(c) is a high and a low part
// so the sum rounds once. Below 2^-4, x + x^3 p(x^2) with p to x^4; above 9.02, +-1.
alignas(64) inline constexpr float kTanhC[8][32] = {
    // tanh(center), high part
    {0.07019685953855515f, 0.08572656661272049f, 0.10121472924947739f, 0.11665398627519608f, 0.13970530033111572f,
     0.1702023148536682f, 0.2003767192363739f, 0.2301757037639618f, 0.2740615904331207f, 0.33082112669944763f,
     0.3852839767932892f, 0.4371887743473053f, 0.5098299980163574f, 0.5963735580444336f, 0.6709671020507812f,
     0.7340714931488037f, 0.8093010783195496f, 0.8798267245292664f, 0.9253461956977844f, 0.9540452361106873f,
     0.9780260920524597f, 0.9918597340583801f, 0.9969976544380188f, 0.998894453048706f, 0.9997532367706299f,
     0.9999666213989258f, 0.9999954700469971f, 0.9999994039535522f, 0.9999999403953552f, 0.0f, 0.0f, 0.0f},
    // its low part
    {-2.2853321457461107e-09f, -2.677100763293083e-10f, 1.8210033481125265e-09f, 2.395552867184847e-09f,
     2.4971984480259835e-09f, -6.4472058802778065e-09f, -7.159639547893448e-10f, 7.268171398067125e-09f,
     -1.472354349552063e-09f, -9.205819218038869e-09f, -1.0523816484919735e-08f, 1.0794407145908735e-08f,
     -2.4281101573819797e-08f, -2.565191170589287e-09f, -2.784390673582493e-08f, 2.6455538204572804e-08f,
     -8.117768679483106e-09f, -2.487728245625931e-08f, 2.961395750844531e-08f, 2.406926213893712e-08f,
     2.268635412860931e-08f, -9.490172203641123e-09f, -1.8951492819496707e-08f, -1.0322553478658847e-08f,
     -2.5922602731043298e-08f, -2.424262213196471e-08f, 9.304407022625583e-09f, -1.57580064552576e-08f,
     2.914468488768307e-08f, 0.0f, 0.0f, 0.0f},
    // c1
    {0.9950724244117737f, 0.9926509261131287f, 0.9897555708885193f, 0.9863918423652649f, 0.9804823994636536f,
     0.9710311889648438f, 0.9598491787910461f, 0.9470191597938538f, 0.9248902201652527f, 0.8905574083328247f,
     0.8515562415122986f, 0.8088659644126892f, 0.7400733828544617f, 0.6443386077880859f, 0.5498031973838806f,
     0.4611389935016632f, 0.3450317680835724f, 0.22590497136116028f, 0.14373436570167542f, 0.08979763835668564f,
     0.043464917689561844f, 0.016214288771152496f, 0.00599571643397212f, 0.002209892962127924f,
     0.0004935277393087745f, 6.68059874442406e-05f, 9.041468729265034e-06f, 1.2236345128258108e-06f,
     6.090262871794039e-08f, 0.0f, 0.0f, 0.0f},
    // c2
    {-0.06985095888376236f, -0.0850965604186058f, -0.10017784684896469f, -0.1150665432214737f, -0.13697859644889832f,
     -0.16527174413204193f, -0.1923314332962036f, -0.21798080205917358f, -0.2534768879413605f, -0.2946151793003082f,
     -0.32809096574783325f, -0.35362711548805237f, -0.3773116171360016f, -0.3842664957046509f, -0.3688998222351074f,
     -0.3385090231895447f, -0.2792345881462097f, -0.19875723123550415f, -0.1330040544271469f, -0.08567101508378983f,
     -0.042509812861680984f, -0.016082298010587692f, -0.00597771443426609f, -0.0022074496373534203f,
     -0.0004934031167067587f, -6.680338992737234e-05f, -9.041377779794857e-06f, -1.2236270094945212e-06f,
     -6.124409424046462e-08f, 0.0f, 0.0f, 0.0f},
    // c3
    {-0.32678747177124023f, -0.32358860969543457f, -0.31977903842926025f, -0.31537431478500366f, -0.30769082903862f,
     -0.2955474257469177f, -0.28141099214553833f, -0.26549917459487915f, -0.23882846534252167f, -0.1993875354528427f,
     -0.15744391083717346f, -0.11502019315958023f, -0.05432672053575516f, 0.01438649371266365f, 0.06425169855356216f,
     0.09477673470973969f, 0.11097478866577148f, 0.09957127273082733f, 0.07516396045684814f, 0.05180172994732857f,
     0.027087757363915443f, 0.010546261444687843f, 0.003960983362048864f, 0.0014682888286188245f,
     0.0003284291597083211f, 4.448538675205782e-05f, 6.021126409905264e-06f, 8.148833785526222e-07f,
     3.8602387064656796e-08f, 0.0f, 0.0f, 0.0f},
    // c4
    {0.04622308164834976f, 0.056105658411979675f, 0.06575895100831985f, 0.0751451924443245f, 0.0886455625295639f,
     0.1053934320807457f, 0.12049867957830429f, 0.13377171754837036f, 0.149945929646492f, 0.1641666293144226f,
     0.17002424597740173f, 0.16816122829914093f, 0.15346990525722504f, 0.11950907111167908f, 0.07985592633485794f,
     0.04326356574892998f, 0.0032678560819476843f, -0.02135232277214527f, -0.025217795744538307f,
     -0.020864179357886314f, -0.012323188595473766f, -0.00509998993948102f, -0.001956663327291608f,
     -0.0007309037027880549f, -0.00016407639486715198f, -2.2242722479859367e-05f, -3.0109106319287093e-06f,
     -4.074949799814931e-07f, -2.5960222416188117e-08f, 0.0f, 0.0f, 0.0f},
    // c5
    {0.12779153883457184f, 0.12510618567466736f, 0.12192711979150772f, 0.11827313899993896f, 0.11195075511932373f,
     0.10214193910360336f, 0.09097737818956375f, 0.07874561101198196f, 0.05905558541417122f, 0.03195440396666527f,
     0.0059282914735376835f, -0.017158744856715202f, -0.0434880405664444f, -0.061568483710289f,
     -0.06266877055168152f, -0.05305999889969826f, -0.032037779688835144f, -0.009513963013887405f,
     0.001395100844092667f, 0.0046010855585336685f, 0.003977056592702866f, 0.0019148150458931923f,
     0.0007704805466346443f, 0.0002926402084995061f, 6.828682671766728e-05f, 9.277361641579773e-06f,
     1.256209770872374e-06f, 1.7002152219447453e-07f, 3.3160499346429617e-10f, 0.0f, 0.0f, 0.0f},
    // c6
    {-0.025617098435759544f, -0.03130544722080231f, -0.03634864464402199f, -0.041494593024253845f,
     -0.048185642808675766f, -0.056174855679273605f, -0.06265667825937271f, -0.0675463005900383f,
     -0.0717109814286232f, -0.07178100198507309f, -0.06619704514741898f, -0.05636662617325783f,
     -0.037645481526851654f, -0.01161965262144804f, 0.007216758094727993f, 0.016964342445135117f,
     0.01846092753112316f, 0.010972590185701847f, 0.00412075687199831f, 0.0006519213784486055f,
     -0.0007159924134612083f, -0.0005454939673654735f, -0.0002436074719298631f, -9.568511450197548e-05f,
     -2.261078952869866e-05f, -3.0836747555440525e-06f, -4.1776362991186033e-07f, -5.654610291117024e-08f,
     -7.56913820509908e-09f, 0.0f, 0.0f, 0.0f},
};
// t[j] for j in [0, 32) in each lane
inline vf lookup32(const float* t, vi j) {
  if constexpr (kW == 16) {
    vf a, b;
    std::memcpy(&a, t, sizeof a);
    std::memcpy(&b, t + 16, sizeof b);
    return __builtin_shuffle(a, b, j);
  } else if constexpr (kW == 8) {
#if defined(__AVX2__)
    // four in-register permutes and three blends (vgatherdps gave wrong lanes and faults under qemu's
    // Haswell emulation, the CI's older-CPU check, though not on hardware)
    __m256i i;
    std::memcpy(&i, &j, sizeof i);
    const __m256 b3 = _mm256_castsi256_ps(_mm256_slli_epi32(i, 28)), b4 = _mm256_castsi256_ps(_mm256_slli_epi32(i, 27));
    const __m256 lo = _mm256_blendv_ps(_mm256_permutevar8x32_ps(_mm256_loadu_ps(t), i),
                                       _mm256_permutevar8x32_ps(_mm256_loadu_ps(t + 8), i), b3);
    const __m256 hi = _mm256_blendv_ps(_mm256_permutevar8x32_ps(_mm256_loadu_ps(t + 16), i),
                                       _mm256_permutevar8x32_ps(_mm256_loadu_ps(t + 24), i), b3);
    const __m256 r = _mm256_blendv_ps(lo, hi, b4);
    vf y;
    std::memcpy(&y, &r, sizeof y);
    return y;
#else
    vf s;
    for (int k = 0; k < kW; ++k) s[k] = t[j[k]];
    return s;
#endif
  } else {
    vf s;
    for (int i = 0; i < kW; ++i) s[i] = t[j[i]];
    return s;
  }
}
inline vf tanh(vf x) {
  const vf ax = vabs(x);
  const vf ac = vmin(ax, splat(9.02f));
  const vi b = bits(vmax(vmin(ac, splat(9.0f)), splat(0.0625f)));
  const vi idx = (b >> 21) - (0x3d800000 >> 21);  // 0x3d800000: 2^-4
  const vf center = from_bits(b & ~((1 << 21) - 1)) + from_bits(b & 0x7f800000) * 0.125f;
  const vf d = ac - center;  // exact (Sterbenz)
  vf p = lookup32(kTanhC[7], idx);
  for (int k = 6; k >= 2; --k) p = p * d + lookup32(kTanhC[k], idx);
  const vf mid = lookup32(kTanhC[0], idx) + (d * p + lookup32(kTanhC[1], idx));
  const vf u = x * x;
  const vf q = (u * -0.053968254f + 0.13333334f) * u - 0.33333334f;
  const vf small = (x * u) * q + x;
  const vf y = sel(ax < 0.0625f, sel(x == 0.0f, x, small), copysign(sel(ax >= 9.02f, splat(1.0f), mid), x));  // tanh(-0) = -0
  return sel(isnan(x), x, y);
}

// sigmoid = 1 / (1 + e^-x) = e^x / (1 + e^x): with e = exp(-|x|), one division of (1 or e) by 1 + e,
// accurate also where the result is tiny (down to the denormals).
inline vf sigmoid(vf x) {
  const vf e = exp(-vabs(x));
  return sel(x >= 0.0f, splat(1.0f), e) / (e + 1.0f);
}

// erf: Eigen's rational approximation (generic_fast_erf_float), +-1 beyond 3.8325.
inline vf erf(vf x) {
  const vf x2 = x * x;
  vf p = splat(-2.72614225801306e-10f);
  p = p * x2 + 2.77068142495902e-08f;
  p = p * x2 - 2.10102402082508e-06f;
  p = p * x2 - 5.69250639462346e-05f;
  p = p * x2 - 7.34990630326855e-04f;
  p = p * x2 - 2.95459980854025e-03f;
  p = p * x2 - 1.60960333262415e-02f;
  p = p * x;
  vf q = splat(-1.45660718464996e-05f);
  q = q * x2 - 2.13374055278905e-04f;
  q = q * x2 - 1.68282697438203e-03f;
  q = q * x2 - 7.37332916720468e-03f;
  q = q * x2 - 1.42647390514189e-02f;
  vf r = p / q;
  r = sel(vabs(x) < 1e-4f, x * 1.12837916709551257390f, r);  // x * p underflows for tiny x
  return sel(vabs(x) >= 3.832506856900711f, copysign(splat(1.0f), x), r);
}

// The activations, with the scalar functors' values at +-inf (kernels/common/scalar_math.h).
inline vf gelu(vf x) {
  vf y = 0.5f * x * (1.0f + erf(x * 0.70710678118654752440f));
  return sel(x == -kInf, splat(0.0f), y);
}
// 0.5 x (1 + tanh(u)) = x sigmoid(2u) = x / (1 + e^(-2u)): one exp, and no cancellation for x < 0.
inline vf gelu_tanh(vf x) {
  const vf u = 0.79788456080286535588f * (x + 0.044715f * x * x * x);
  vf y = x / (1.0f + exp(-(u + u)));
  return sel(x == -kInf, splat(0.0f), y);
}
inline vf silu(vf x) { return x / (1.0f + exp(-x)); }
inline vf softplus(vf x, float beta, float threshold) {
  const vf z = x * beta;
  return sel(z > threshold, x, log1p(exp(z)) / beta);
}
inline vf elu(vf x, float alpha, float scale, float input_scale) {
  return sel(x < 0.0f, expm1(x * input_scale) * (alpha * scale), x * scale);   // +-0 is x * scale (alpha = inf: 0)
}
inline vf leaky_relu(vf x, float slope) { return sel(x > 0.0f, x, x * slope); }
inline vf relu6_of_shifted(vf x) {  // NaN passes through, as the scalar functor
  vf y = x + 3.0f;
  y = sel(y < 0.0f, splat(0.0f), y);
  return sel(y > 6.0f, splat(6.0f), y);
}
inline vf hardsigmoid(vf x) { return relu6_of_shifted(x) / 6.0f; }
inline vf hardswish(vf x) { return x * relu6_of_shifted(x) / 6.0f; }
inline vf mish(vf x) { return x * tanh(softplus(x, 1.0f, 20.0f)); }
inline vf log_sigmoid(vf x) { return vmin(x, splat(0.0f)) - log1p(exp(-vabs(x))); }

// ---- fp16 / bf16 storage <-> float32, kW at a time (the bits as uint16_t)
typedef uint16_t vh __attribute__((vector_size(AG_VEC_BYTES / 2)));
typedef uint32_t vu __attribute__((vector_size(AG_VEC_BYTES)));
inline vf load_bf16(const uint16_t* p) {
  vh h;
  std::memcpy(&h, p, sizeof h);
  return (vf)(__builtin_convertvector(h, vu) << 16);
}
// Round to nearest even, NaN -> 0x7FC0 (as BFloat16::from_float).
inline void store_bf16(uint16_t* p, vf v) {
  const vu u = (vu)v;
  vu r = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
  r = (vi)isnan(v) ? vu{} + 0x7FC0u : r;
  const vh h = __builtin_convertvector(r, vh);
  std::memcpy(p, &h, sizeof h);
}

// ---- backward formulas (grad g, input x or output y)
inline vf sigmoid_backward(vf g, vf y) { return g * ((1.0f - y) * y); }
inline vf tanh_backward(vf g, vf y) { return g * (1.0f - y * y); }
inline vf gelu_backward(vf g, vf x) {
  const vf cdf = 0.5f * (1.0f + erf(x * 0.70710678118654752440f));
  const vf pdf = exp(-0.5f * x * x) * 0.39894228040143267794f;
  return g * (cdf + x * pdf);
}
inline vf gelu_tanh_backward(vf g, vf x) {
  const float k = 0.79788456080286535588f, k1 = 0.044715f;
  const vf x2 = x * x;
  const vf t = tanh(k * (x + k1 * x2 * x));
  const vf left = 0.5f * x * (1.0f - t * t) * (k * (1.0f + 3.0f * k1 * x2));
  return g * (0.5f * (1.0f + t) + left);
}
// 2 / sqrt(pi) e^(-x^2) g, x^2 carried in two parts: e^-(h + l) = e^-h (1 - l). (Rounding x^2 once
// would cost up to x^2 2^-24 of relative error in the result: 8 ulp at x = 3; torch's
// exp(-x.pow(2)) has it.)
inline vf erf_backward(vf g, vf x) {
  const vf h = x * x;
  const vf l = sel(h < 200.0f, mul_err(x, x, h), splat(0.0f));  // (x = +-inf: inf - inf)
  const vf e = exp(-h);
  return g * (1.12837916709551257390f * (e - e * l));
}
inline vf silu_backward(vf g, vf x) {
  const vf s = 1.0f / (1.0f + exp(-x));
  return g * (s * (1.0f + x * (1.0f - s)));
}
inline vf softplus_backward(vf g, vf x, float beta, float threshold) {
  const vf z = x * beta;
  return sel(z > threshold, g, g * sigmoid(z));
}
inline vf elu_backward(vf g, vf x, float alpha, float scale, float input_scale) {
  return sel(x > 0.0f, g * scale, g * (input_scale * alpha * scale) * exp(x * input_scale));
}
inline vf leaky_relu_backward(vf g, vf x, float slope) { return sel(x > 0.0f, g, g * slope); }
inline vf hardsigmoid_backward(vf g, vf x) { return sel((x > -3.0f) & (x < 3.0f), g / 6.0f, splat(0.0f)); }
inline vf hardswish_backward(vf g, vf x) {
  return sel(x < -3.0f, splat(0.0f), sel(x <= 3.0f, g * (x / 3.0f + 0.5f), g));
}
inline vf mish_backward(vf g, vf x) {
  const vf sg = sigmoid(x);
  const vf ts = tanh(softplus(x, 1.0f, 20.0f));
  return g * (ts + x * sg * (1.0f - ts * ts));
}
inline vf log_sigmoid_backward(vf g, vf x) {  // d/dx log sigmoid(x) = sigmoid(-x)
  return g * sigmoid(-x);
}

}  // namespace ampgrad::cpu::vec
