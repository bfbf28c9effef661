// CPU elementwise kernels: one functor per op, instantiated over dtypes by the dispatch macros;
// fp16/bf16 compute in fp32 registers and round once on store.
#include <cmath>
#include "kernels/cpu/loops.h"

namespace ampgrad::cpu {

namespace {

template <typename T> T calc_erfinv(T y) {
  constexpr T a[4] = {0.886226899, -1.645349621, 0.914624893, -0.140543331};
  constexpr T b[4] = {-2.118377725, 1.442710462, -0.329097515, 0.012229801};
  constexpr T c[4] = {-1.970840454, -1.624906493, 3.429567803, 1.641345311};
  constexpr T d[2] = {3.543889200, 1.637067800};
  T ya = std::abs(y);
  if (ya > T(1)) return std::numeric_limits<T>::quiet_NaN();
  if (ya == T(1)) return std::copysign(std::numeric_limits<T>::infinity(), y);
  T x;
  if (ya <= T(0.7)) {
    T z = y * y;
    x = y * (((a[3] * z + a[2]) * z + a[1]) * z + a[0]) / ((((b[3] * z + b[2]) * z + b[1]) * z + b[0]) * z + T(1));
  } else {
    T z = std::sqrt(-std::log((T(1) - ya) / T(2)));
    x = std::copysign(((c[3] * z + c[2]) * z + c[1]) * z + c[0], y) / ((d[1] * z + d[0]) * z + T(1));
  }
  const T k = T(1.12837916709551257390);
  x = x - (std::erf(x) - y) / (k * std::exp(-x * x));
  x = x - (std::erf(x) - y) / (k * std::exp(-x * x));
  return x;
}

template <typename T> T round_decimals(T x, double dec) {
  if (dec == 0) return std::nearbyint(x);
  T p = static_cast<T>(std::pow(10.0, std::abs(dec)));
  return dec > 0 ? std::nearbyint(x * p) / p : std::nearbyint(x / p) * p;
}

template <typename T> T floor_div(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (b == 0) return a / b;
    T mod = std::fmod(a, b);
    T div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= T(1);
    if (div != 0) {
      T fl = std::floor(div);
      if (div - fl > T(0.5)) fl += T(1);
      return fl;
    }
    return std::copysign(T(0), a / b);
  } else {
    T q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
    return q;
  }
}

template <typename T> T int_pow(T a, T b) {
  if (b < 0) { if (a == 1) return 1; if (a == -1) return (b % 2 == 0) ? 1 : -1; return 0; }
  T r = 1;
  while (b) { if (b & 1) r *= a; a *= a; b >>= 1; }
  return r;
}

template <typename T> T fmod_op(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return std::fmod(a, b); else return static_cast<T>(a % b);
}
template <typename T> T remainder_op(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    T m = std::fmod(a, b);
    if (m != 0 && ((b < 0) != (m < 0))) m += b;
    return m;
  } else {
    T r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  }
}
template <typename T> T trunc_div(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return std::trunc(a / b); else return static_cast<T>(a / b);
}
template <typename T> T pow_op(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return std::pow(a, b); else return int_pow<T>(a, b);
}
template <int Kind, typename T> T bit_op(T a, T b) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(Kind == 0 ? (a & b) : Kind == 1 ? (a | b) : (a ^ b));
  else AG_THROW(NotImplementedError, "bitwise ops are only implemented for integral and boolean tensors");
}
template <typename T> T bit_not(T x) {
  if constexpr (std::is_same_v<T, bool>) return !x;
  else if constexpr (std::is_integral_v<T>) return static_cast<T>(~x);
  else AG_THROW(NotImplementedError, "\"bitwise_not_cpu\" not implemented for floating types");
}

template <typename T> T nan_max(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) { if (a != a) return a; if (b != b) return b; }
  return a > b ? a : b;
}
template <typename T> T nan_min(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) { if (a != a) return a; if (b != b) return b; }
  return a < b ? a : b;
}

// Binary loop with the scalar operand modes of ops/elementwise.cpp: s[1] = 0 (two tensors),
// 1 (b is the scalar s[0]), 2 (a is the scalar s[0]).
template <typename Out, typename T, typename F>
void binary_loop(TensorIter& it, const double* s, F f) {
  using A = acc_t<T>;
  if (it.nops == 3) { cpu_kernel2<Out, T>(it, f); return; }
  A v = static_cast<A>(s[0]);
  if (s[1] == 1) cpu_kernel<Out, T>(it, [&](A a) { return f(a, v); });
  else cpu_kernel<Out, T>(it, [&](A b) { return f(v, b); });
}

}  // namespace

#define AG_UNARY_K(OP, DISPATCH, EXPR)                                                        \
  static void k_##OP(TensorIter& it, const double* s) {                                      \
    (void)s;                                                                                  \
    DISPATCH(it.dtype(1), #OP, [&] {                                                         \
      using T = acc_t<scalar_t>;                                                              \
      cpu_kernel<scalar_t, scalar_t>(it, [&](T x) -> T { return EXPR; });                    \
    });                                                                                       \
  }                                                                                           \
  AG_REGISTER_KERNEL(OP, CPU, k_##OP);

AG_UNARY_K(neg, AG_DISPATCH_NUMERIC, -x)
AG_UNARY_K(exp, AG_DISPATCH_FLOAT, std::exp(x))
AG_UNARY_K(exp2, AG_DISPATCH_FLOAT, std::exp2(x))
AG_UNARY_K(expm1, AG_DISPATCH_FLOAT, std::expm1(x))
AG_UNARY_K(log, AG_DISPATCH_FLOAT, std::log(x))
AG_UNARY_K(log2, AG_DISPATCH_FLOAT, std::log2(x))
AG_UNARY_K(log10, AG_DISPATCH_FLOAT, std::log10(x))
AG_UNARY_K(log1p, AG_DISPATCH_FLOAT, std::log1p(x))
AG_UNARY_K(sqrt, AG_DISPATCH_FLOAT, std::sqrt(x))
AG_UNARY_K(rsqrt, AG_DISPATCH_FLOAT, T(1) / std::sqrt(x))
AG_UNARY_K(reciprocal, AG_DISPATCH_FLOAT, T(1) / x)
AG_UNARY_K(abs, AG_DISPATCH_NUMERIC, x < T(0) ? T(-x) : x)
AG_UNARY_K(sign, AG_DISPATCH_ALL, T((T(0) < x) - (x < T(0))))
AG_UNARY_K(sin, AG_DISPATCH_FLOAT, std::sin(x))
AG_UNARY_K(cos, AG_DISPATCH_FLOAT, std::cos(x))
AG_UNARY_K(tan, AG_DISPATCH_FLOAT, std::tan(x))
AG_UNARY_K(asin, AG_DISPATCH_FLOAT, std::asin(x))
AG_UNARY_K(acos, AG_DISPATCH_FLOAT, std::acos(x))
AG_UNARY_K(atan, AG_DISPATCH_FLOAT, std::atan(x))
AG_UNARY_K(sinh, AG_DISPATCH_FLOAT, std::sinh(x))
AG_UNARY_K(cosh, AG_DISPATCH_FLOAT, std::cosh(x))
AG_UNARY_K(tanh, AG_DISPATCH_FLOAT, std::tanh(x))
AG_UNARY_K(sigmoid, AG_DISPATCH_FLOAT, T(1) / (T(1) + std::exp(-x)))
AG_UNARY_K(relu, AG_DISPATCH_NUMERIC, x > T(0) ? x : (x != x ? x : T(0)))
// gelu(+-inf) is the limit (inf, 0), not -inf * 0 = nan: better than torch, whose gelu returns nan
// there (pytorch#185770, #187293).
AG_UNARY_K(gelu, AG_DISPATCH_FLOAT,
           std::isinf(x) ? (x > T(0) ? x : T(0)) : T(0.5) * x * (T(1) + std::erf(x * T(0.70710678118654752440))))
AG_UNARY_K(gelu_tanh, AG_DISPATCH_FLOAT,
           std::isinf(x) ? (x > T(0) ? x : T(0))
                         : T(0.5) * x * (T(1) + std::tanh(T(0.79788456080286535588) * (x + T(0.044715) * x * x * x))))
AG_UNARY_K(silu, AG_DISPATCH_FLOAT, x / (T(1) + std::exp(-x)))
AG_UNARY_K(softplus, AG_DISPATCH_FLOAT,
           x * T(s[0]) > T(s[1]) ? x : std::log1p(std::exp(x * T(s[0]))) / T(s[0]))
AG_UNARY_K(erf, AG_DISPATCH_FLOAT, std::erf(x))
AG_UNARY_K(erfinv, AG_DISPATCH_FLOAT, calc_erfinv<T>(x))
AG_UNARY_K(floor, AG_DISPATCH_NUMERIC, [&] { if constexpr (std::is_floating_point_v<T>) return std::floor(x); else return x; }())
AG_UNARY_K(ceil, AG_DISPATCH_NUMERIC, [&] { if constexpr (std::is_floating_point_v<T>) return std::ceil(x); else return x; }())
AG_UNARY_K(trunc, AG_DISPATCH_NUMERIC, [&] { if constexpr (std::is_floating_point_v<T>) return std::trunc(x); else return x; }())
AG_UNARY_K(round, AG_DISPATCH_NUMERIC, [&] { if constexpr (std::is_floating_point_v<T>) return round_decimals<T>(x, s ? s[0] : 0); else return x; }())
AG_UNARY_K(frac, AG_DISPATCH_FLOAT, x - std::trunc(x))
AG_UNARY_K(clamp, AG_DISPATCH_NUMERIC, [&] {
  if constexpr (std::is_floating_point_v<T>) return nan_min<T>(nan_max<T>(x, T(s[0])), T(s[1]));
  else {
    // torch converts integer bounds to the tensor's type first (C-cast wrap: -1 -> 255 for uint8).
    T v = x;
    if (!std::isinf(s[0])) v = std::max<T>(v, static_cast<T>(static_cast<int64_t>(s[0])));
    if (!std::isinf(s[1])) v = std::min<T>(v, static_cast<T>(static_cast<int64_t>(s[1])));
    return v;
  }
}())
AG_UNARY_K(nan_to_num, AG_DISPATCH_FLOAT,
           x != x ? T(s[0]) : (x == std::numeric_limits<T>::infinity() ? T(s[1]) : (x == -std::numeric_limits<T>::infinity() ? T(s[2]) : x)))

#define AG_PRED_K(OP, EXPR)                                                                   \
  static void k_##OP(TensorIter& it, const double*) {                                        \
    AG_DISPATCH_ALL(it.dtype(1), #OP, [&] {                                                  \
      using T = acc_t<scalar_t>;                                                              \
      cpu_kernel<bool, scalar_t>(it, [&](T x) -> bool { (void)x; return EXPR; });            \
    });                                                                                       \
  }                                                                                           \
  AG_REGISTER_KERNEL(OP, CPU, k_##OP);

AG_PRED_K(isnan, [&] { if constexpr (std::is_floating_point_v<T>) return std::isnan(x); else return false; }())
AG_PRED_K(isinf, [&] { if constexpr (std::is_floating_point_v<T>) return std::isinf(x); else return false; }())
AG_PRED_K(isfinite, [&] { if constexpr (std::is_floating_point_v<T>) return std::isfinite(x); else return true; }())
AG_PRED_K(logical_not, !static_cast<bool>(x))

static void k_bitwise_not(TensorIter& it, const double*) {
  AG_CHECK_NOT_IMPL(!is_floating(it.dtype(1)), "\"bitwise_not_cpu\" not implemented for '", scalar_type_name(it.dtype(1)), "'");
  AG_DISPATCH_ALL(it.dtype(1), "bitwise_not_cpu", [&] {
    cpu_kernel<scalar_t, scalar_t>(it, [](acc_t<scalar_t> x) { return bit_not<acc_t<scalar_t>>(x); });
  });
}
AG_REGISTER_KERNEL(bitwise_not, CPU, k_bitwise_not);

static void k_copy(TensorIter& it, const double*) {
  AG_DISPATCH_ALL(it.dtype(0), "copy_", [&] {
    using O = scalar_t;
    AG_DISPATCH_ALL(it.dtype(1), "copy_", [&] {
      if constexpr (std::is_same_v<O, scalar_t>) {
        for_each(it, [&](char** p, const int64_t* s, int64_t n) {
          if (s[0] == sizeof(O) && s[1] == sizeof(O)) std::memcpy(p[0], p[1], n * sizeof(O));
          else for (int64_t i = 0; i < n; ++i) *reinterpret_cast<O*>(p[0] + i * s[0]) = *reinterpret_cast<const O*>(p[1] + i * s[1]);
        });
      } else {
        cpu_kernel<O, scalar_t>(it, [](acc_t<scalar_t> x) { return static_cast<acc_t<O>>(x); });
      }
    });
  });
}
AG_REGISTER_KERNEL(copy, CPU, k_copy);

static void k_fill(TensorIter& it, const double* s) {
  AG_DISPATCH_ALL(it.dtype(0), "fill_", [&] {
    scalar_t v = static_cast<scalar_t>(static_cast<acc_t<scalar_t>>(s[0]));
    for_each(it, [&](char** p, const int64_t* st, int64_t n) {
      for (int64_t i = 0; i < n; ++i) *reinterpret_cast<scalar_t*>(p[0] + i * st[0]) = v;
    });
  });
}
AG_REGISTER_KERNEL(fill, CPU, k_fill);

// arange / linspace write a contiguous 1-d output, so the element index is the byte offset.
static void k_arange(TensorIter& it, const double* s) {
  AG_DISPATCH_NUMERIC(it.dtype(0), "arange", [&] {
    scalar_t* base = reinterpret_cast<scalar_t*>(it.data[0]);
    for_each(it, [&](char** p, const int64_t*, int64_t n) {
      int64_t i0 = reinterpret_cast<scalar_t*>(p[0]) - base;
      for (int64_t i = 0; i < n; ++i) reinterpret_cast<scalar_t*>(p[0])[i] = static_cast<scalar_t>(static_cast<acc_t<scalar_t>>(s[0] + s[1] * static_cast<double>(i0 + i)));
    });
  });
}
AG_REGISTER_KERNEL(arange, CPU, k_arange);

static void k_linspace(TensorIter& it, const double* s) {
  AG_DISPATCH_NUMERIC(it.dtype(0), "linspace", [&] {
    using St = std::conditional_t<std::is_integral_v<scalar_t>, double, acc_t<scalar_t>>;
    scalar_t* base = reinterpret_cast<scalar_t*>(it.data[0]);
    const int64_t steps = it.numel, half = static_cast<int64_t>(s[2]);
    const St start = static_cast<St>(static_cast<scalar_t>(static_cast<acc_t<scalar_t>>(s[0])));
    const St end = static_cast<St>(static_cast<scalar_t>(static_cast<acc_t<scalar_t>>(s[3])));
    const St step = steps > 1 ? (end - start) / static_cast<St>(steps - 1) : St(0);
    for_each(it, [&](char** p, const int64_t*, int64_t n) {
      int64_t i0 = reinterpret_cast<scalar_t*>(p[0]) - base;
      for (int64_t i = 0; i < n; ++i) {
        int64_t k = i0 + i;
        St v = k < half ? start + step * static_cast<St>(k) : end - step * static_cast<St>(steps - k - 1);
        reinterpret_cast<scalar_t*>(p[0])[i] = static_cast<scalar_t>(v);
      }
    });
  });
}
AG_REGISTER_KERNEL(linspace, CPU, k_linspace);

// ---- binary
#define AG_BINARY_K(OP, DISPATCH, OUT, EXPR)                                                  \
  static void k_##OP(TensorIter& it, const double* s) {                                      \
    (void)s;                                                                                  \
    DISPATCH(it.dtype(1), #OP, [&] {                                                         \
      using T = acc_t<scalar_t>;                                                              \
      using Out = std::conditional_t<std::is_same_v<OUT, void>, scalar_t, OUT>;              \
      binary_loop<Out, scalar_t>(it, s, [&](T a, T b) { (void)a; (void)b; return EXPR; });   \
    });                                                                                       \
  }                                                                                           \
  AG_REGISTER_KERNEL(OP, CPU, k_##OP);

AG_BINARY_K(add, AG_DISPATCH_ALL, void, [&] {
  if constexpr (std::is_same_v<T, bool>) return static_cast<bool>(a || (s[2] != 0 && b));
  else return s[2] == 1 ? T(a + b) : T(a + T(s[2]) * b);
}())
AG_BINARY_K(sub, AG_DISPATCH_NUMERIC, void, s[2] == 1 ? T(a - b) : T(a - T(s[2]) * b))
AG_BINARY_K(mul, AG_DISPATCH_ALL, void, [&] {
  if constexpr (std::is_same_v<T, bool>) return static_cast<bool>(a && b); else return T(a * b);
}())
AG_BINARY_K(div, AG_DISPATCH_FLOAT, void, a / b)
// fp16/bf16 quotients stay in fp32 before truncating, as torch's scalar path does (its vectorized
// path rounds them to the storage type first, so torch's own result depends on the tensor size).
AG_BINARY_K(div_trunc, AG_DISPATCH_NUMERIC, void, trunc_div<T>(a, b))
AG_BINARY_K(div_floor, AG_DISPATCH_NUMERIC, void, floor_div<T>(a, b))
AG_BINARY_K(pow, AG_DISPATCH_NUMERIC, void, pow_op<T>(a, b))
AG_BINARY_K(atan2, AG_DISPATCH_FLOAT, void, std::atan2(a, b))
AG_BINARY_K(maximum, AG_DISPATCH_ALL, void, nan_max<T>(a, b))
AG_BINARY_K(minimum, AG_DISPATCH_ALL, void, nan_min<T>(a, b))
AG_BINARY_K(fmod, AG_DISPATCH_NUMERIC, void, fmod_op<T>(a, b))
AG_BINARY_K(remainder, AG_DISPATCH_NUMERIC, void, remainder_op<T>(a, b))
AG_BINARY_K(relu_backward, AG_DISPATCH_FLOAT, void, b <= T(0) ? T(0) : a)  // a: grad, b: relu result
AG_BINARY_K(eq, AG_DISPATCH_ALL, bool, a == b)
AG_BINARY_K(ne, AG_DISPATCH_ALL, bool, a != b)
AG_BINARY_K(lt, AG_DISPATCH_ALL, bool, a < b)
AG_BINARY_K(le, AG_DISPATCH_ALL, bool, a <= b)
AG_BINARY_K(gt, AG_DISPATCH_ALL, bool, a > b)
AG_BINARY_K(ge, AG_DISPATCH_ALL, bool, a >= b)
AG_BINARY_K(logical_and, AG_DISPATCH_ALL, bool, static_cast<bool>(a) && static_cast<bool>(b))
AG_BINARY_K(logical_or, AG_DISPATCH_ALL, bool, static_cast<bool>(a) || static_cast<bool>(b))
AG_BINARY_K(logical_xor, AG_DISPATCH_ALL, bool, static_cast<bool>(a) != static_cast<bool>(b))

#define AG_BITWISE_K(OP, KIND)                                                                \
  static void k_##OP(TensorIter& it, const double* s) {                                      \
    AG_CHECK_NOT_IMPL(!is_floating(it.dtype(1)), "\"" #OP "_cpu\" not implemented for '", scalar_type_name(it.dtype(1)), "'"); \
    AG_DISPATCH_ALL(it.dtype(1), #OP, [&] {                                                  \
      using T = acc_t<scalar_t>;                                                              \
      binary_loop<scalar_t, scalar_t>(it, s, [](T a, T b) { return bit_op<KIND, T>(a, b); }); \
    });                                                                                       \
  }                                                                                           \
  AG_REGISTER_KERNEL(OP, CPU, k_##OP);
AG_BITWISE_K(bitwise_and, 0)
AG_BITWISE_K(bitwise_or, 1)
AG_BITWISE_K(bitwise_xor, 2)

// ---- ternary
static void k_where(TensorIter& it, const double*) {
  AG_DISPATCH_ALL(it.dtype(0), "where", [&] {
    for_each(it, [&](char** p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<scalar_t*>(p[0] + i * s[0]) = *reinterpret_cast<const bool*>(p[1] + i * s[1])
            ? *reinterpret_cast<const scalar_t*>(p[2] + i * s[2]) : *reinterpret_cast<const scalar_t*>(p[3] + i * s[3]);
    });
  });
}
AG_REGISTER_KERNEL(where, CPU, k_where);

static void k_lerp(TensorIter& it, const double*) {
  AG_DISPATCH_FLOAT(it.dtype(0), "lerp", [&] {
    using T = acc_t<scalar_t>;
    cpu_kernel3<scalar_t, scalar_t>(it, [](T a, T b, T w) { return std::abs(w) < T(0.5) ? a + w * (b - a) : b - (b - a) * (T(1) - w); });
  });
}
AG_REGISTER_KERNEL(lerp, CPU, k_lerp);

static void k_addcmul(TensorIter& it, const double* s) {
  AG_DISPATCH_NUMERIC(it.dtype(0), "addcmul", [&] {
    using T = acc_t<scalar_t>;
    T v = static_cast<T>(s[0]);
    cpu_kernel3<scalar_t, scalar_t>(it, [v](T a, T b, T c) { return T(a + v * b * c); });
  });
}
AG_REGISTER_KERNEL(addcmul, CPU, k_addcmul);

static void k_addcdiv(TensorIter& it, const double* s) {
  AG_DISPATCH_FLOAT(it.dtype(0), "addcdiv", [&] {
    using T = acc_t<scalar_t>;
    T v = static_cast<T>(s[0]);
    cpu_kernel3<scalar_t, scalar_t>(it, [v](T a, T b, T c) { return a + v * (b / c); });
  });
}
AG_REGISTER_KERNEL(addcdiv, CPU, k_addcdiv);

}  // namespace ampgrad::cpu
