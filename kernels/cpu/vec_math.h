// Vectorized float32 math for the CPU elementwise kernels (Note [Vector math]): exp, expm1, log,
// log1p, tanh, sigmoid, erf and the activations built on them, on GCC vector types as wide as the
// target's registers (16 lanes with AVX-512, 8 with AVX2, 4 below). No engine headers: tests/cpp-style
// harnesses can include it alone.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

// Note [Vector math]: the float32 / fp16 / bf16 loops of the unary rows whose functor has a
// VecUnary specialization, and of the activation backward rows (VecBinary), run these instead of
// the scalar functor (kernels/cpu/elementwise.cpp): chunks of 256 elements, converted to float32,
// computed kW lanes at a time, rounded once on store. float64 and strided inner loops keep the
// scalar functor. Max error vs float64 (tests/test_vec_math.py): exp (exp_cr) correctly rounded but
// for ~1e-5 of the inputs, as libm's; log 1, expm1 1.5, log1p, tanh, sigmoid, silu, softplus 3, erf
// and gelu 6 ulp. The special points (0, -0, +-inf, nan, overflow, underflow, denormals) give the
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
inline vf copysign(vf mag, vf sgn) { return from_bits((bits(mag) & 0x7fffffff) | (bits(sgn) & int32_t(0x80000000u))); }
inline vi isnan(vf x) { return x != x; }
inline bool any(vi m) {  // some lane set
  typedef uint64_t vq __attribute__((vector_size(AG_VEC_BYTES)));
  const vq b = (vq)m;
  uint64_t r = 0;
  for (int i = 0; i < AG_VEC_BYTES / 8; ++i) r |= b[i];
  return r != 0;
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
// use it; torch.exp itself takes exp_cr below.
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
template <bool IsCos> inline vf sincos(vf x) {
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
  y = sel(x > 88.0f, exp(x), y);
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

// tanh from t = expm1(2|x|): t / (t + 2) near 0, 1 - 2 / (t + 2) beyond (no cancellation in either).
inline vf tanh(vf x) {
  const vf ax = vabs(x);
  const vf t = expm1(ax + ax);
  const vf r = sel(ax < 0.55f, t / (t + 2.0f), 1.0f - 2.0f / (t + 2.0f));
  return sel(isnan(x), x, copysign(r, x));
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
  return sel(x > 0.0f, x * scale, expm1(x * input_scale) * (alpha * scale));
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
