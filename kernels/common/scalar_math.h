// Per-element math shared by the CPU kernels (kernels/cpu) and the CUDA kernels (kernels/cuda):
// scalar helpers with torch's semantics and one functor per elementwise op, so the CPU test suite
// exercises the exact code the CUDA kernels run. Plain C++17 for g++, or nvcc; no engine headers.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#ifdef __CUDACC__
#define AG_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define AG_HOST_DEVICE inline
#endif

// Note [Scalar math ABI]: g++ (kernels/cpu, -march=native) and nvcc's host pass (kernels/cuda, no
// -march) both compile these inline templates. The inline namespace gives each compiler's copies
// their own mangled names, so the linker never merges an out-of-line instantiation from a .cu file
// into the CPU kernels (or the reverse).
#ifdef __CUDACC__
#define AG_MATH_ABI_NS nvcc
#else
#define AG_MATH_ABI_NS host
#endif

namespace ampgrad::math {
inline namespace AG_MATH_ABI_NS {

// Unqualified calls after these resolve to the float / double overloads on the host (<cmath>'s
// std:: overloads) and to CUDA's math library on the device (nvcc maps std:: math to it).
using std::abs; using std::acos; using std::acosh; using std::asin; using std::asinh; using std::atanh; using std::erfc; using std::atan; using std::atan2; using std::ceil;
using std::copysign; using std::cos; using std::cosh; using std::erf; using std::exp; using std::exp2;
using std::expm1; using std::floor; using std::fma; using std::hypot; using std::fmod; using std::isfinite; using std::isinf; using std::isnan;
using std::log; using std::log10; using std::log1p; using std::log2; using std::nearbyint; using std::pow;
using std::sin; using std::sinh; using std::sqrt; using std::tan; using std::tanh; using std::trunc;

// std::numeric_limits is constexpr, so the device may call it (nvcc --expt-relaxed-constexpr).
template <typename T> AG_HOST_DEVICE T inf() { return std::numeric_limits<T>::infinity(); }
template <typename T> AG_HOST_DEVICE T quiet_nan() { return std::numeric_limits<T>::quiet_NaN(); }
template <typename T> constexpr bool is_float_v = std::is_floating_point_v<T>;

// ---- scalar helpers (torch's semantics)

// The host's libm has no erfinv: a rational approximation refined by two Newton steps. The device
// calls CUDA's erfinvf / erfinv (what torch's CUDA kernel does), so the two differ in the last bits.
template <typename T> AG_HOST_DEVICE T calc_erfinv(T y) {
#ifdef __CUDA_ARCH__
  if constexpr (std::is_same_v<T, float>) return ::erfinvf(y); else return ::erfinv(y);
#else
  constexpr T a[4] = {0.886226899, -1.645349621, 0.914624893, -0.140543331};
  constexpr T b[4] = {-2.118377725, 1.442710462, -0.329097515, 0.012229801};
  constexpr T c[4] = {-1.970840454, -1.624906493, 3.429567803, 1.641345311};
  constexpr T d[2] = {3.543889200, 1.637067800};
  T ya = abs(y);
  if (ya > T(1)) return quiet_nan<T>();
  if (ya == T(1)) return copysign(inf<T>(), y);
  T x;
  if (ya <= T(0.7)) {
    T z = y * y;
    x = y * (((a[3] * z + a[2]) * z + a[1]) * z + a[0]) / ((((b[3] * z + b[2]) * z + b[1]) * z + b[0]) * z + T(1));
  } else {
    T z = sqrt(-log((T(1) - ya) / T(2)));
    x = copysign(((c[3] * z + c[2]) * z + c[1]) * z + c[0], y) / ((d[1] * z + d[0]) * z + T(1));
  }
  const T k = T(1.12837916709551257390);
  x = x - (erf(x) - y) / (k * exp(-x * x));
  x = x - (erf(x) - y) / (k * exp(-x * x));
  return x;
#endif
}

template <typename T> AG_HOST_DEVICE T round_decimals(T x, double dec) {
  if (dec == 0) return nearbyint(x);
  T p = static_cast<T>(pow(10.0, abs(dec)));
  return dec > 0 ? nearbyint(x * p) / p : nearbyint(x / p) * p;
}

// Signed int32 / int64 arithmetic done in the unsigned type, so it wraps (two's complement, what
// torch's results show) where the signed operation would overflow, which is undefined behaviour
// (UBSan: tools/SANITIZERS.md). Narrower integers promote to int and cannot overflow there, and
// floats keep their operators: wrap_t is T for them.
template <typename T, bool = std::is_integral_v<T> && std::is_signed_v<T> && (sizeof(T) >= sizeof(int))>
struct wrap_type { using type = T; };
template <typename T> struct wrap_type<T, true> { using type = std::make_unsigned_t<T>; };
template <> struct wrap_type<uint16_t, false> { using type = uint32_t; };  // uint16 * uint16 would overflow int
template <typename T> using wrap_t = typename wrap_type<T>::type;
template <typename T> AG_HOST_DEVICE T wrap_add(T a, T b) { return static_cast<T>(static_cast<wrap_t<T>>(a) + static_cast<wrap_t<T>>(b)); }
template <typename T> AG_HOST_DEVICE T wrap_sub(T a, T b) { return static_cast<T>(static_cast<wrap_t<T>>(a) - static_cast<wrap_t<T>>(b)); }
template <typename T> AG_HOST_DEVICE T wrap_mul(T a, T b) { return static_cast<T>(static_cast<wrap_t<T>>(a) * static_cast<wrap_t<T>>(b)); }
template <typename T> AG_HOST_DEVICE T wrap_neg(T x) {
  if constexpr (std::is_same_v<wrap_t<T>, T>) return static_cast<T>(-x); else return static_cast<T>(-static_cast<wrap_t<T>>(x));
}
// Integer a / b and a % b (b != 0: the front ends raise ZeroDivisionError): b == -1 is negation and
// 0, because INT_MIN / -1 overflows (x86 traps: SIGFPE). torch's floor_divide gives INT_MIN there,
// its fmod / remainder 0.
template <typename T> AG_HOST_DEVICE T int_div(T a, T b) {
  if constexpr (std::is_signed_v<T>) { if (b == T(-1)) return wrap_neg(a); }
  return static_cast<T>(a / b);
}
template <typename T> AG_HOST_DEVICE T int_mod(T a, T b) {
  if constexpr (std::is_signed_v<T>) { if (b == T(-1)) return T(0); }
  return static_cast<T>(a % b);
}

template <typename T> AG_HOST_DEVICE T floor_div(T a, T b) {
  if constexpr (is_float_v<T>) {
    if (b == 0) return a / b;
    T mod = fmod(a, b);
    T div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= T(1);
    if (div != 0) {
      T fl = floor(div);
      if (div - fl > T(0.5)) fl += T(1);
      return fl;
    }
    return copysign(T(0), a / b);
  } else {
    T q = int_div(a, b);
    if ((int_mod(a, b) != 0) && ((a < 0) != (b < 0))) q -= 1;
    return q;
  }
}

template <typename T> AG_HOST_DEVICE T int_pow(T a, T b) {
  if (b < 0) { if (a == 1) return 1; if (a == -1) return (b % 2 == 0) ? 1 : -1; return 0; }
  T r = 1;
  while (b) { if (b & 1) r = wrap_mul(r, a); a = wrap_mul(a, a); b >>= 1; }
  return r;
}

template <typename T> AG_HOST_DEVICE T fmod_op(T a, T b) {
  if constexpr (is_float_v<T>) return fmod(a, b); else return int_mod(a, b);
}
template <typename T> AG_HOST_DEVICE T remainder_op(T a, T b) {
  if constexpr (is_float_v<T>) {
    T m = fmod(a, b);
    if (m != 0 && ((b < 0) != (m < 0))) m += b;
    return m;
  } else {
    T r = int_mod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  }
}
template <typename T> AG_HOST_DEVICE T trunc_div(T a, T b) {
  if constexpr (is_float_v<T>) return trunc(a / b); else return int_div(a, b);
}
template <typename T> AG_HOST_DEVICE T pow_op(T a, T b) {
  if constexpr (is_float_v<T>) return pow(a, b); else return int_pow<T>(a, b);
}

// Kind 0 and, 1 or, 2 xor. Floating dtypes never get here: both backends refuse them before the
// dtype dispatch (NotImplementedError), the branch only keeps the instantiation compiling.
template <int Kind, typename T> AG_HOST_DEVICE T bit_op(T a, T b) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(Kind == 0 ? (a & b) : Kind == 1 ? (a | b) : (a ^ b));
  else return a;
}
template <typename T> AG_HOST_DEVICE T bit_not(T x) {
  if constexpr (std::is_same_v<T, bool>) return !x;
  else if constexpr (std::is_integral_v<T>) return static_cast<T>(~x);
  else return x;  // never reached, as bit_op
}

// NaN-propagating max / min (torch.maximum / minimum).
template <typename T> AG_HOST_DEVICE T nan_max(T a, T b) {
  if constexpr (is_float_v<T>) { if (a != a) return a; if (b != b) return b; }
  return a > b ? a : b;
}
template <typename T> AG_HOST_DEVICE T nan_min(T a, T b) {
  if constexpr (is_float_v<T>) { if (a != a) return a; if (b != b) return b; }
  return a < b ? a : b;
}
// Running max / min for reductions: m = nan_max_step(m, v). NaN wins and stays; ties keep m.
template <typename T> AG_HOST_DEVICE T nan_max_step(T m, T v) { return (v > m || v != v) ? v : m; }
template <typename T> AG_HOST_DEVICE T nan_min_step(T m, T v) { return (v < m || v != v) ? v : m; }

// ---- elementwise functors
// T is the compute type (acc_t on the CPU, dacc_t on CUDA: fp32 for fp16/bf16). Ops with scalar
// arguments take the kernel's `const double* s` in a host constructor; make_op builds either kind.
template <typename F> F make_op(const double* s) {
  if constexpr (std::is_constructible_v<F, const double*>) return F(s); else return F{};
}

// Unary op with no scalar arguments: struct NAME { T operator()(T x) }.
#define AG_MATH_UNARY(NAME, EXPR) \
  struct NAME { template <typename T> AG_HOST_DEVICE T operator()(T x) const { return EXPR; } };

AG_MATH_UNARY(Neg, wrap_neg(x))
AG_MATH_UNARY(Exp, exp(x))
AG_MATH_UNARY(Exp2, exp2(x))
AG_MATH_UNARY(Expm1, expm1(x))
AG_MATH_UNARY(Log, log(x))
AG_MATH_UNARY(Log2, log2(x))
AG_MATH_UNARY(Log10, log10(x))
AG_MATH_UNARY(Log1p, log1p(x))
AG_MATH_UNARY(Sqrt, sqrt(x))
AG_MATH_UNARY(Reciprocal, T(1) / x)
// abs(-0.0) is +0.0 (a plain x < 0 ? -x : x keeps the sign of -0.0); relu(-0.0) is -0.0 and
// relu(nan) nan, as torch's clamp_min(x, 0). Integers negate with wrap (abs(INT_MIN) is INT_MIN).
AG_MATH_UNARY(Abs, x < T(0) ? wrap_neg(x) : (x == T(0) ? T(0) : x))
AG_MATH_UNARY(Sign, T((T(0) < x) - (x < T(0))))
AG_MATH_UNARY(Sin, sin(x))
AG_MATH_UNARY(Cos, cos(x))
AG_MATH_UNARY(Tan, tan(x))
AG_MATH_UNARY(Asin, asin(x))
AG_MATH_UNARY(Acos, acos(x))
AG_MATH_UNARY(Atan, atan(x))
AG_MATH_UNARY(Sinh, sinh(x))
AG_MATH_UNARY(Cosh, cosh(x))
AG_MATH_UNARY(Asinh, asinh(x))
AG_MATH_UNARY(Acosh, acosh(x))
AG_MATH_UNARY(Atanh, atanh(x))
AG_MATH_UNARY(Erfc, erfc(x))
// torch's sinc: 1 at 0, else sin(pi x) / (pi x) in the compute type.
AG_MATH_UNARY(Sinc, x == T(0) ? T(1) : sin(T(3.14159265358979323846) * x) / (T(3.14159265358979323846) * x))
// torch multiplies by the constant rounded to the compute type (its scalar operand of mul).
AG_MATH_UNARY(Deg2rad, x * T(0.017453292519943295))
AG_MATH_UNARY(Rad2deg, x * T(57.295779513082323))
AG_MATH_UNARY(Tanh, tanh(x))
AG_MATH_UNARY(Sigmoid, T(1) / (T(1) + exp(-x)))
AG_MATH_UNARY(Relu, x < T(0) ? T(0) : x)
// gelu(+-inf) is the limit (inf, 0), not -inf * 0 = nan: better than torch, whose gelu returns nan
// there (pytorch#185770, #187293).
AG_MATH_UNARY(Gelu, isinf(x) ? (x > T(0) ? x : T(0)) : T(0.5) * x * (T(1) + erf(x * T(0.70710678118654752440))))
AG_MATH_UNARY(GeluTanh, isinf(x) ? (x > T(0) ? x : T(0))
                                 : T(0.5) * x * (T(1) + tanh(T(0.79788456080286535588) * (x + T(0.044715) * x * x * x))))
AG_MATH_UNARY(Silu, x / (T(1) + exp(-x)))
AG_MATH_UNARY(Erf, erf(x))
AG_MATH_UNARY(Erfinv, calc_erfinv<T>(x))
AG_MATH_UNARY(Frac, x - trunc(x))
AG_MATH_UNARY(BitwiseNot, bit_not<T>(x))

// The device has a hardware rsqrt (what torch's CUDA kernel calls, within 2 ulp); the host's libm
// has none, so the CPU divides (correctly rounded sqrt, then one rounding for the quotient).
struct Rsqrt {
  template <typename T> AG_HOST_DEVICE T operator()(T x) const {
#ifdef __CUDA_ARCH__
    return ::rsqrt(x);
#else
    return T(1) / sqrt(x);
#endif
  }
};

// Rounding ops are the identity on integers.
#define AG_MATH_ROUNDING(NAME, FN) \
  struct NAME { template <typename T> AG_HOST_DEVICE T operator()(T x) const { if constexpr (is_float_v<T>) return FN(x); else return x; } };
AG_MATH_ROUNDING(Floor, floor)
AG_MATH_ROUNDING(Ceil, ceil)
AG_MATH_ROUNDING(Trunc, trunc)

struct Round {
  double decimals = 0;
  Round() = default;
  explicit Round(const double* s) : decimals(s ? s[0] : 0) {}
  template <typename T> AG_HOST_DEVICE T operator()(T x) const {
    if constexpr (is_float_v<T>) return round_decimals<T>(x, decimals); else return x;
  }
};

struct Softplus {
  double beta = 1, threshold = 20;
  Softplus() = default;
  explicit Softplus(const double* s) : beta(s[0]), threshold(s[1]) {}
  template <typename T> AG_HOST_DEVICE T operator()(T x) const {
    return x * T(beta) > T(threshold) ? x : log1p(exp(x * T(beta))) / T(beta);
  }
};

// torch's elu(x, alpha, scale, input_scale), which is also celu (input_scale = 1 / alpha) and selu.
struct Elu {
  double alpha = 1, scale = 1, input_scale = 1;
  Elu() = default;
  explicit Elu(const double* s) : alpha(s[0]), scale(s[1]), input_scale(s[2]) {}
  template <typename T> AG_HOST_DEVICE T operator()(T x) const {
    return x < T(0) ? expm1(x * T(input_scale)) * T(alpha * scale) : x * T(scale);   // +-0: x * scale, as torch (alpha = inf gives 0, not nan)
  }
};
struct LeakyRelu {
  double slope = 0.01;
  LeakyRelu() = default;
  explicit LeakyRelu(const double* s) : slope(s[0]) {}
  template <typename T> AG_HOST_DEVICE T operator()(T x) const { return x > T(0) ? x : x * T(slope); }
};
// min(max(x + 3, 0), 6) written so a NaN passes through, as torch's std::min/std::max order does.
template <typename T> AG_HOST_DEVICE T relu6_of_shifted(T x) {
  T y = x + T(3);
  y = y < T(0) ? T(0) : y;
  return y > T(6) ? T(6) : y;
}
AG_MATH_UNARY(Hardsigmoid, relu6_of_shifted(x) / T(6))
AG_MATH_UNARY(Hardswish, x * relu6_of_shifted(x) / T(6))
AG_MATH_UNARY(Mish, x * tanh(log1p(exp(x))))
// log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)): finite for every finite x.
AG_MATH_UNARY(LogSigmoid, (x < T(0) ? x : T(0)) - log1p(exp(-(x < T(0) ? -x : x))))

struct Clamp {  // an infinite bound is no bound
  double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
  Clamp() = default;
  explicit Clamp(const double* s) : lo(s[0]), hi(s[1]) {}
  template <typename T> AG_HOST_DEVICE T operator()(T x) const {
    if constexpr (is_float_v<T>) {  // nan_min(nan_max(x, lo), hi)
      // Plain ternaries (x86 max / min semantics), then the NaN selects: this vectorizes tightly.
      const T l = T(lo), h = T(hi);
      T v = x > l ? x : l;
      v = v < h ? v : h;
      return x != x ? x : (l != l ? l : (h != h ? h : v));
    } else {  // torch converts integer bounds to the tensor's type first (C-cast wrap: -1 -> 255 for uint8)
      T v = x;
      if (!isinf(lo)) { T l = static_cast<T>(static_cast<int64_t>(lo)); v = v < l ? l : v; }
      if (!isinf(hi)) { T h = static_cast<T>(static_cast<int64_t>(hi)); v = v > h ? h : v; }
      return v;
    }
  }
};

struct NanToNum {  // the replacements, already resolved by the front end
  double nan = 0, posinf = 0, neginf = 0;
  NanToNum() = default;
  explicit NanToNum(const double* s) : nan(s[0]), posinf(s[1]), neginf(s[2]) {}
  template <typename T> AG_HOST_DEVICE T operator()(T x) const {
    return x != x ? T(nan) : (x == inf<T>() ? T(posinf) : (x == -inf<T>() ? T(neginf) : x));
  }
};

// ---- predicates: T -> bool
#define AG_MATH_PRED(NAME, FLOAT_EXPR, OTHER) \
  struct NAME { template <typename T> AG_HOST_DEVICE bool operator()(T x) const { if constexpr (is_float_v<T>) return FLOAT_EXPR; else return OTHER; } };
AG_MATH_PRED(IsNan, isnan(x), (static_cast<void>(x), false))
AG_MATH_PRED(IsInf, isinf(x), (static_cast<void>(x), false))
AG_MATH_PRED(IsFinite, isfinite(x), (static_cast<void>(x), true))
AG_MATH_PRED(LogicalNot, !static_cast<bool>(x), !static_cast<bool>(x))

// ---- binary: (T, T) -> T, or bool for comparisons and logical ops
#define AG_MATH_BINARY(NAME, R, EXPR) \
  struct NAME { template <typename T> AG_HOST_DEVICE R operator()(T a, T b) const { return EXPR; } };

// add / sub: b is scaled by alpha (s[2]); bool add is logical or. A floating alpha * b + a is one fused
// multiply-add, as torch's vectorized CPU kernel computes it (inf - 1e300 * 1e300 is inf, not nan).
struct Add {
  double alpha = 1;
  Add() = default;
  explicit Add(const double* s) : alpha(s ? s[2] : 1) {}
  template <typename T> AG_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return static_cast<bool>(a || (alpha != 0 && b));
    else if constexpr (std::is_floating_point_v<T>) return alpha == 1 ? a + b : fma(T(alpha), b, a);
    else return alpha == 1 ? wrap_add(a, b) : wrap_add(a, wrap_mul(T(alpha), b));
  }
};
struct Sub {
  double alpha = 1;
  Sub() = default;
  explicit Sub(const double* s) : alpha(s ? s[2] : 1) {}
  template <typename T> AG_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) return alpha == 1 ? a - b : fma(T(-alpha), b, a);
    else return alpha == 1 ? wrap_sub(a, b) : wrap_sub(a, wrap_mul(T(alpha), b));
  }
};
struct Mul {
  template <typename T> AG_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return static_cast<bool>(a && b); else return wrap_mul(a, b);
  }
};
AG_MATH_BINARY(Div, T, a / b)
// fp16/bf16 quotients stay in fp32 before truncating, as torch's scalar path does (its vectorized
// path rounds them to the storage type first, so torch's own result depends on the tensor size).
AG_MATH_BINARY(DivTrunc, T, trunc_div<T>(a, b))
AG_MATH_BINARY(DivFloor, T, floor_div<T>(a, b))
AG_MATH_BINARY(Pow, T, pow_op<T>(a, b))
AG_MATH_BINARY(Atan2, T, atan2(a, b))
AG_MATH_BINARY(Hypot, T, hypot(a, b))
AG_MATH_BINARY(Copysign, T, copysign(a, b))
// NaN-ignoring max / min (torch.fmax / fmin): a NaN operand gives the other; ties (0, -0) give a.
AG_MATH_BINARY(Fmax, T, a != a ? b : (b != b ? a : (a < b ? b : a)))
// torch's: NaN where b is NaN, else 0 where a is 0, else a * log(b).
AG_MATH_BINARY(Xlogy, T, b != b ? b : (a == T(0) ? T(0) : a * log(b)))
AG_MATH_BINARY(Fmin, T, a != a ? b : (b != b ? a : (b < a ? b : a)))
// torch's: equal infinities give themselves (not inf - inf); otherwise max + log1p(exp(-|a - b|)).
AG_MATH_BINARY(Logaddexp, T, (isinf(a) && a == b) ? a : (a < b ? b : a) + log1p(exp(-abs(a - b))))
AG_MATH_BINARY(Logaddexp2, T, (isinf(a) && a == b) ? a : (a < b ? b : a) + log1p(exp2(-abs(a - b))) * T(1.4426950408889634))
AG_MATH_BINARY(Maximum, T, nan_max<T>(a, b))
AG_MATH_BINARY(Minimum, T, nan_min<T>(a, b))
AG_MATH_BINARY(Fmod, T, fmod_op<T>(a, b))
AG_MATH_BINARY(Remainder, T, remainder_op<T>(a, b))
AG_MATH_BINARY(ReluBackward, T, b <= T(0) ? T(0) : a)  // a: grad, b: the relu result (torch's threshold_backward)
AG_MATH_BINARY(Eq, bool, a == b)
AG_MATH_BINARY(Ne, bool, a != b)
AG_MATH_BINARY(Lt, bool, a < b)
AG_MATH_BINARY(Le, bool, a <= b)
AG_MATH_BINARY(Gt, bool, a > b)
AG_MATH_BINARY(Ge, bool, a >= b)
AG_MATH_BINARY(LogicalAnd, bool, static_cast<bool>(a) && static_cast<bool>(b))
AG_MATH_BINARY(LogicalOr, bool, static_cast<bool>(a) || static_cast<bool>(b))
AG_MATH_BINARY(LogicalXor, bool, static_cast<bool>(a) != static_cast<bool>(b))
// ---- activation backward (torch's aten::*_backward): a is the incoming gradient, b the saved
// result (sigmoid, tanh) or input (the others); one pass instead of a chain of elementwise ops.
AG_MATH_BINARY(SigmoidBackward, T, a * ((T(1) - b) * b))
AG_MATH_BINARY(TanhBackward, T, a * (T(1) - b * b))
AG_MATH_BINARY(GeluBackward, T, a * (T(0.5) * (T(1) + erf(b * T(0.70710678118654752440))) +
                                     b * exp(T(-0.5) * b * b) * T(0.39894228040143267794)))
struct GeluTanhBackward {
  template <typename T> AG_HOST_DEVICE T operator()(T a, T b) const {
    const T k = T(0.79788456080286535588), k1 = T(0.044715);
    const T t = tanh(k * (b + k1 * b * b * b));
    return a * (T(0.5) * (T(1) + t) + T(0.5) * b * (T(1) - t * t) * (k * (T(1) + T(3) * k1 * b * b)));
  }
};
// erf'(x) g = 2 / sqrt(pi) e^(-x^2) g
struct ErfBackward {
  template <typename T> AG_HOST_DEVICE T operator()(T a, T b) const { return a * (T(1.12837916709551257390) * exp(-b * b)); }
};
struct SiluBackward {
  template <typename T> AG_HOST_DEVICE T operator()(T a, T b) const {
    const T sg = T(1) / (T(1) + exp(-b));
    return a * (sg * (T(1) + b * (T(1) - sg)));
  }
};
struct SoftplusBackward {  // s[2] = beta, s[3] = threshold (s[0], s[1]: the binary scalar-operand slots)
  double beta = 1, threshold = 20;
  SoftplusBackward() = default;
  explicit SoftplusBackward(const double* s) : beta(s[2]), threshold(s[3]) {}
  template <typename T> AG_HOST_DEVICE T operator()(T a, T b) const {
    const T z = b * T(beta);
    return z > T(threshold) ? a : a / (T(1) + exp(-z));
  }
};
struct EluBackward {  // s[2..4] = alpha, scale, input_scale; b is the input
  double alpha = 1, scale = 1, input_scale = 1;
  EluBackward() = default;
  explicit EluBackward(const double* s) : alpha(s[2]), scale(s[3]), input_scale(s[4]) {}
  template <typename T> AG_HOST_DEVICE T operator()(T a, T b) const {
    return b > T(0) ? a * T(scale) : a * T(input_scale * alpha * scale) * exp(b * T(input_scale));
  }
};
struct LeakyReluBackward {  // s[2] = negative slope
  double slope = 0.01;
  LeakyReluBackward() = default;
  explicit LeakyReluBackward(const double* s) : slope(s[2]) {}
  template <typename T> AG_HOST_DEVICE T operator()(T a, T b) const { return b > T(0) ? a : a * T(slope); }
};
AG_MATH_BINARY(HardsigmoidBackward, T, (b > T(-3) && b < T(3)) ? a / T(6) : T(0))
AG_MATH_BINARY(HardswishBackward, T, b < T(-3) ? T(0) : (b <= T(3) ? a * (b / T(3) + T(0.5)) : a))
struct MishBackward {
  template <typename T> AG_HOST_DEVICE T operator()(T a, T b) const {
    const T sg = T(1) / (T(1) + exp(-b));
    const T ts = tanh(log1p(exp(b)));
    return a * (ts + b * sg * (T(1) - ts * ts));
  }
};
struct LogSigmoidBackward {  // torch's log_sigmoid_backward: g * (max_deriv - sign * z / (1 + z)), z = exp(-|x|)
  template <typename T> AG_HOST_DEVICE T operator()(T a, T b) const {
    const bool neg = b < T(0);
    const T z = exp(neg ? b : -b);
    return a * ((neg ? T(1) : T(0)) - (neg ? T(1) : T(-1)) * (z / (T(1) + z)));
  }
};
template <int Kind> struct Bitwise {  // Kind as bit_op
  template <typename T> AG_HOST_DEVICE T operator()(T a, T b) const { return bit_op<Kind, T>(a, b); }
};

// ---- ternary
struct Lerp {  // two formulas, each exact at its end: w = 0 gives a, w = 1 gives b
  template <typename T> AG_HOST_DEVICE T operator()(T a, T b, T w) const {
    return abs(w) < T(0.5) ? a + w * (b - a) : b - (b - a) * (T(1) - w);
  }
};
struct Addcmul {
  double value = 1;
  Addcmul() = default;
  explicit Addcmul(const double* s) : value(s[0]) {}
  template <typename T> AG_HOST_DEVICE T operator()(T a, T b, T c) const { return wrap_add(a, wrap_mul(wrap_mul(T(value), b), c)); }
};
struct Addcdiv {
  double value = 1;
  Addcdiv() = default;
  explicit Addcdiv(const double* s) : value(s[0]) {}
  template <typename T> AG_HOST_DEVICE T operator()(T a, T b, T c) const { return a + T(value) * (b / c); }
};

// ---- index -> value: element i of arange / linspace (A: the compute type)
template <typename A> struct Arange {
  double start, step;
  AG_HOST_DEVICE A operator()(int64_t i) const { return static_cast<A>(start + step * static_cast<double>(i)); }
};
// Fills from both ends (start + step * k below `half`, end - step * (steps - 1 - k) above), so
// both endpoints are exact, as torch does.
template <typename St> struct Linspace {
  St start, end, step;
  int64_t steps, half;
  AG_HOST_DEVICE St operator()(int64_t k) const {
    return k < half ? start + step * static_cast<St>(k) : end - step * static_cast<St>(steps - k - 1);
  }
};

// ---- reduction pieces (A: the accumulator type; the CPU accumulates in double, CUDA in dacc_t)

template <typename A> AG_HOST_DEVICE A mean_finish(A sum, int64_t n, double scale) {  // n == 0: sum * scale (nan)
  return n > 0 ? sum / static_cast<A>(n) : sum * static_cast<A>(scale);
}
template <typename A> AG_HOST_DEVICE A var_finish(A m2, int64_t n, double correction, bool take_sqrt) {
  A den = static_cast<A>(n) - static_cast<A>(correction);
  A v = m2 / (den > A(0) ? den : A(0));
  return take_sqrt ? sqrt(v) : v;
}
// log(sum(exp(x))) from the row max m and s = sum(exp(x - m)); an infinite or NaN max is the answer.
template <typename A> AG_HOST_DEVICE A lse_finish(A m, A s) { return (isinf(m) || m != m) ? m : m + log(s); }

// Vector p-norm: acc = init(); acc = step(acc, x) per element; combine(acc, acc) merges partial
// results (the inf-norms' NaN-propagating max / min, sums otherwise); finish(acc) is the norm.
template <typename A> struct NormOp {
  double p;
  AG_HOST_DEVICE A init() const { return (isinf(p) && p < 0) ? inf<A>() : A(0); }
  AG_HOST_DEVICE A combine(A a, A v) const {
    if (isinf(p)) return p > 0 ? nan_max_step(a, v) : nan_min_step(a, v);
    return a + v;
  }
  AG_HOST_DEVICE A step(A a, A x) const {
    A v = abs(x);
    if (p == 2) return a + v * v;
    if (p == 1) return a + v;
    if (p == 0) return a + A(v != A(0));
    if (isinf(p)) return combine(a, v);
    return a + static_cast<A>(pow(v, static_cast<A>(p)));
  }
  AG_HOST_DEVICE A finish(A a) const {
    return p == 2 ? sqrt(a) : (p == 1 || p == 0 || isinf(p)) ? a : static_cast<A>(pow(a, static_cast<A>(1.0 / p)));
  }
};

#undef AG_MATH_UNARY
#undef AG_MATH_ROUNDING
#undef AG_MATH_PRED
#undef AG_MATH_BINARY

}  // inline namespace AG_MATH_ABI_NS
}  // namespace ampgrad::math
