// CPU kernels of the special-function and integer elementwise rows (ops/special.cpp is the front end):
// floating ops compute in double (kernels/cpu/special_math.h) and round once to the storage dtype; the
// integer ops (gcd, lcm, shifts) follow torch's semantics for out-of-range shifts.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <type_traits>
#include "kernels/cpu/loops.h"
#include "kernels/cpu/special_math.h"

namespace ampgrad::cpu {
namespace sp = ::ampgrad::special;

namespace {
// out = f(x) for floating inputs (the front end promoted integers already).
template <typename F>
void unary_float(TensorIter& it, const char* name, F f) {
  AG_DISPATCH_FLOAT(it.dtype(1), name, [&] {
    using A = acc_t<scalar_t>;
    cpu_kernel<scalar_t, scalar_t>(it, [&](A x) { return static_cast<A>(f(static_cast<double>(x))); });
  });
}
template <typename F>
void binary_float(TensorIter& it, const char* name, F f) {
  AG_DISPATCH_FLOAT(it.dtype(1), name, [&] {
    using A = acc_t<scalar_t>;
    cpu_kernel2<scalar_t, scalar_t>(it, [&](A a, A b) { return static_cast<A>(f(static_cast<double>(a), static_cast<double>(b))); });
  });
}
}  // namespace

#define AG_SPECIAL_UNARY(OP, EXPR)                                                   \
  static void k_##OP(TensorIter& it, const double*) {                                \
    unary_float(it, #OP "_cpu", [](double x) { return EXPR; });                      \
  }                                                                                  \
  AG_REGISTER_KERNEL(OP, CPU, k_##OP);

AG_SPECIAL_UNARY(digamma, sp::digamma(x))
AG_SPECIAL_UNARY(lgamma, std::lgamma(x))
AG_SPECIAL_UNARY(erfcx, sp::erfcx(x))
AG_SPECIAL_UNARY(i0, sp::bessel_i(0, x))
AG_SPECIAL_UNARY(i1, sp::bessel_i(1, x))
AG_SPECIAL_UNARY(i0e, sp::bessel_ie(0, x))
AG_SPECIAL_UNARY(i1e, sp::bessel_ie(1, x))
AG_SPECIAL_UNARY(ndtr, sp::ndtr(x))
AG_SPECIAL_UNARY(ndtri, sp::ndtri(x))
AG_SPECIAL_UNARY(log_ndtr, sp::log_ndtr(x))
AG_SPECIAL_UNARY(entr, std::isnan(x) ? x : x > 0 ? -x * std::log(x) : x == 0 ? 0.0 : -sp::kInf)
AG_SPECIAL_UNARY(bessel_j0, sp::bessel_j(0, x))
AG_SPECIAL_UNARY(bessel_j1, sp::bessel_j(1, x))
AG_SPECIAL_UNARY(bessel_y0, sp::bessel_y(0, x))
AG_SPECIAL_UNARY(bessel_y1, sp::bessel_y(1, x))
AG_SPECIAL_UNARY(modified_bessel_k0, x > 745 ? 0.0 : sp::bessel_ke(0, x) * std::exp(-x))
AG_SPECIAL_UNARY(modified_bessel_k1, x > 745 ? 0.0 : sp::bessel_ke(1, x) * std::exp(-x))
AG_SPECIAL_UNARY(scaled_modified_bessel_k0, sp::bessel_ke(0, x))
AG_SPECIAL_UNARY(scaled_modified_bessel_k1, sp::bessel_ke(1, x))
AG_SPECIAL_UNARY(spherical_bessel_j0, sp::spherical_bessel_j0(x))
AG_SPECIAL_UNARY(airy_ai, sp::airy_ai(x))
#undef AG_SPECIAL_UNARY

// s[0] = n
static void k_polygamma(TensorIter& it, const double* s) {
  const int64_t n = static_cast<int64_t>(s[0]);
  unary_float(it, "polygamma", [n](double x) { return sp::polygamma(n, x); });
}
AG_REGISTER_KERNEL(polygamma, CPU, k_polygamma);

// s[0] = eps (negative: none). torch's logit kernel: clamp to [eps, 1 - eps], then log(x / (1 - x)).
static void k_logit(TensorIter& it, const double* s) {
  const double eps = s[0];
  AG_DISPATCH_FLOAT(it.dtype(1), "logit_cpu", [&] {
    using A = acc_t<scalar_t>;
    const A lo = static_cast<A>(eps), hi = static_cast<A>(1 - eps);
    if (eps < 0) cpu_kernel<scalar_t, scalar_t>(it, [](A x) { return x == A(1) ? std::numeric_limits<A>::infinity() : std::log(x / (A(1) - x)); });
    else cpu_kernel<scalar_t, scalar_t>(it, [lo, hi](A x) {
      const A z = x < lo ? lo : (x > hi ? hi : x);
      return z == A(1) ? std::numeric_limits<A>::infinity() : std::log(z / (A(1) - z));
    });
  });
}
AG_REGISTER_KERNEL(logit, CPU, k_logit);

static void k_signbit(TensorIter& it, const double*) {
  AG_DISPATCH_ALL(it.dtype(1), "signbit_cpu", [&] {
    using A = acc_t<scalar_t>;
    cpu_kernel<bool, scalar_t>(it, [](A x) {
      return static_cast<bool>(std::signbit(static_cast<double>(x)));  // -0.0 and negative NaN included
    });
  });
}
AG_REGISTER_KERNEL(signbit, CPU, k_signbit);

// s[0] = 0: the mantissa (input dtype); 1: the exponent (int32 output).
static void k_frexp(TensorIter& it, const double* s) {
  const bool want_exp = s[0] != 0;
  AG_DISPATCH_FLOAT(it.dtype(1), "frexp_cpu", [&] {
    using A = acc_t<scalar_t>;
    if (want_exp) cpu_kernel<int32_t, scalar_t>(it, [](A x) { int e = 0; std::frexp(x, &e); return static_cast<int32_t>(e); });
    else cpu_kernel<scalar_t, scalar_t>(it, [](A x) { int e = 0; return static_cast<A>(std::frexp(x, &e)); });
  });
}
AG_REGISTER_KERNEL(frexp, CPU, k_frexp);

// ---- binary floating
static void k_xlog1py(TensorIter& it, const double*) {
  binary_float(it, "xlog1py_cpu", [](double x, double y) { return std::isnan(y) ? y : x == 0 ? 0.0 : x * std::log1p(y); });
}
AG_REGISTER_KERNEL(xlog1py, CPU, k_xlog1py);
static void k_zeta(TensorIter& it, const double*) { binary_float(it, "zeta_cpu", [](double x, double q) { return sp::zeta(x, q); }); }
AG_REGISTER_KERNEL(zeta, CPU, k_zeta);
static void k_igamma(TensorIter& it, const double*) {
  binary_float(it, "igamma_cpu", [](double a, double x) { return sp::igamma(a, x, false); });
}
AG_REGISTER_KERNEL(igamma, CPU, k_igamma);
static void k_igammac(TensorIter& it, const double*) {
  binary_float(it, "igammac_cpu", [](double a, double x) { return sp::igamma(a, x, true); });
}
AG_REGISTER_KERNEL(igammac, CPU, k_igammac);

namespace {
// One step of the representable neighbours of a 16-bit float (fp16 / bf16 share the layout rule).
template <typename T>
T nextafter16(T a, T b) {
  const float fa = static_cast<float>(a), fb = static_cast<float>(b);
  if (std::isnan(fa) || std::isnan(fb)) return static_cast<T>(std::numeric_limits<float>::quiet_NaN());
  if (fa == fb) return b;
  uint16_t bits;
  std::memcpy(&bits, &a, 2);
  if (fa == 0) bits = static_cast<uint16_t>((fb < 0 ? 0x8000 : 0) | 1);
  else if ((fa < fb) == (fa > 0)) bits += 1;
  else bits -= 1;
  T r;
  std::memcpy(&r, &bits, 2);
  return r;
}
}  // namespace

static void k_nextafter(TensorIter& it, const double*) {
  AG_DISPATCH_FLOAT(it.dtype(1), "nextafter_cpu", [&] {
    if constexpr (std::is_same_v<scalar_t, float> || std::is_same_v<scalar_t, double>) {
      cpu_kernel2<scalar_t, scalar_t>(it, [](scalar_t a, scalar_t b) { return std::nextafter(a, b); });
    } else {
      for_each(it, [&](char** p, const int64_t* st, int64_t n) {
        for (int64_t i = 0; i < n; ++i)
          *reinterpret_cast<scalar_t*>(p[0] + i * st[0]) =
              nextafter16(*reinterpret_cast<const scalar_t*>(p[1] + i * st[1]), *reinterpret_cast<const scalar_t*>(p[2] + i * st[2]));
      });
    }
  });
}
AG_REGISTER_KERNEL(nextafter, CPU, k_nextafter);

static void k_heaviside(TensorIter& it, const double*) {
  AG_DISPATCH_ALL(it.dtype(1), "heaviside_cpu", [&] {
    using A = acc_t<scalar_t>;
    cpu_kernel2<scalar_t, scalar_t>(it, [](A x, A v) { return x == A(0) ? v : static_cast<A>(x > A(0)); });
  });
}
AG_REGISTER_KERNEL(heaviside, CPU, k_heaviside);

// ---- integer ops (the front end refuses floating and bool operands with torch's messages)
#define AG_INT_BINARY(OP, NAME, ...)                                                                   \
  static void k_##OP(TensorIter& it, const double*) {                                                   \
    switch (it.dtype(1)) {                                                                              \
      AG_DISPATCH_INT(it.dtype(1), NAME, [&] {                                                          \
        using T = scalar_t;                                                                             \
        using U = std::make_unsigned_t<T>;                                                              \
        constexpr int64_t kBits = sizeof(T) * 8;                                                        \
        (void)kBits; (void)sizeof(U);                                                                                    \
        cpu_kernel2<T, T>(it, [](T a, T b) -> T __VA_ARGS__);                                               \
      })                                                                                                \
      default: AG_THROW(NotImplementedError, "\"", NAME, "\" not implemented for '", scalar_type_name(it.dtype(1)), "'"); \
    }                                                                                                   \
  }                                                                                                     \
  AG_REGISTER_KERNEL(OP, CPU, k_##OP);

AG_INT_BINARY(gcd, "gcd_cpu", {
  U x = a < 0 ? U(0) - U(a) : U(a), y = b < 0 ? U(0) - U(b) : U(b);
  while (x != 0) { U c = x; x = y % x; y = c; }
  return static_cast<T>(y);
})
AG_INT_BINARY(lcm, "lcm_cpu", {
  U x = a < 0 ? U(0) - U(a) : U(a), y = b < 0 ? U(0) - U(b) : U(b), p = x, q = y;
  while (p != 0) { U c = p; p = q % p; q = c; }
  if (q == 0) return T(0);
  return static_cast<T>(x / q * y);
})
AG_INT_BINARY(bitwise_left_shift, "lshift_cpu", {
  if ((std::is_signed_v<T> && b < 0) || static_cast<int64_t>(b) >= kBits) return T(0);
  return static_cast<T>(static_cast<U>(a) << b);
})
AG_INT_BINARY(bitwise_right_shift, "rshift_cpu", {
  if ((std::is_signed_v<T> && b < 0) || static_cast<int64_t>(b) >= kBits) {
    if constexpr (std::is_signed_v<T>) return a < 0 ? T(-1) : T(0);
    else return T(0);
  }
  return static_cast<T>(a >> b);
})
#undef AG_INT_BINARY

// isin: out[i] = elements[i] in test (s[0]: the bits of a pointer to the sorted, NaN-free, contiguous test
// values in the elements' dtype; s[1]: their count; s[2]: invert).
static void k_isin(TensorIter& it, const double* s) {
  const void* base;
  std::memcpy(&base, &s[0], sizeof base);
  const int64_t n = static_cast<int64_t>(s[1]);
  const bool invert = s[2] != 0;
  AG_DISPATCH_ALL(it.dtype(1), "isin_cpu", [&] {
    using A = acc_t<scalar_t>;
    const scalar_t* t = static_cast<const scalar_t*>(base);
    cpu_kernel<bool, scalar_t>(it, [&](A x) {
      bool found = false;
      if constexpr (std::is_floating_point_v<A>) {
        if (x != x) return invert;
      }
      const scalar_t* p = std::lower_bound(t, t + n, x, [](const scalar_t& e, A v) { return static_cast<A>(e) < v; });
      found = p != t + n && static_cast<A>(*p) == x;
      return found != invert;
    });
  });
}
AG_REGISTER_KERNEL(isin, CPU, k_isin);

// ---- orthogonal polynomials P_n(x), n read as an integer (torch's static_cast<int64_t>(n)); s[0] = kind:
// 0..3 Chebyshev T U V W, 4 Hermite H, 5 Hermite He, 6 Laguerre L, 7 Legendre P, 8..11 shifted Chebyshev T U V W.
namespace {
double orth_poly(int kind, double x, double nd) {
  if (std::isnan(nd)) return std::numeric_limits<double>::quiet_NaN();
  const int64_t n = static_cast<int64_t>(nd);
  if (n < 0) return 0;
  if (kind >= 8) { kind -= 8; x = x + x - 1; }
  const bool odd = n % 2;
  const double dn = static_cast<double>(n);
  switch (kind) {
    case 0:  // T
      if (std::fabs(x) == 1) return (x > 0 || !odd) ? 1.0 : -1.0;
      if (n > 6 && std::fabs(x) < 1) return std::cos(dn * std::acos(x));
      break;
    case 1:  // U
      if (std::fabs(x) == 1) return (x > 0 || !odd) ? dn + 1 : -(dn + 1);
      if (n > 8 && std::fabs(x) < 1) {
        const double t = std::acos(x);
        if (std::sin(t) != 0) return std::sin((dn + 1) * t) / std::sin(t);
        return (dn + 1) * std::cos((dn + 1) * t) / x;
      }
      break;
    case 2:  // V
      if (std::fabs(x) == 1) return x > 0 ? 1.0 : (!odd ? dn + dn + 1 : -(dn + dn + 1));
      if (n > 8 && std::fabs(x) < 1) {
        const double t = std::acos(x);
        if (std::sin(t / 2) != 1) return std::cos((dn + 0.5) * t) / std::cos(t / 2);
        return !odd ? dn + dn + 1 : -(dn + dn + 1);
      }
      break;
    case 3:  // W
      if (std::fabs(x) == 1) return x > 0 ? dn + dn + 1 : (!odd ? 1.0 : -1.0);
      if (n > 8 && std::fabs(x) < 1) {
        const double t = std::acos(x);
        if (std::cos(t / 2) != 1) return std::sin((dn + 0.5) * t) / std::sin(t / 2);
        return x > 0 ? dn + dn + 1 : (!odd ? 1.0 : -1.0);
      }
      break;
    case 6:  // Laguerre
      if (x == 0) return 1;
      break;
    case 7:  // Legendre
      if (std::fabs(x) == 1) return (x > 0 || n == 0 || !odd) ? 1.0 : -1.0;
      break;
    default: break;
  }
  if (n == 0) return 1;
  double p = 1, q;
  switch (kind) {
    case 0: q = x; break;
    case 1: q = x + x; break;
    case 2: q = x + x - 1; break;
    case 3: q = x + x + 1; break;
    case 4: q = x + x; break;
    case 5: q = x; break;
    case 6: q = 1 - x; break;
    default: q = x; break;
  }
  for (int64_t k = 1; k < n; ++k) {
    const double dk = static_cast<double>(k);
    double r;
    switch (kind) {
      case 4: r = 2 * x * q - 2 * dk * p; break;
      case 5: r = x * q - dk * p; break;
      case 6: r = ((2 * dk + 1 - x) * q - dk * p) / (dk + 1); break;
      case 7: r = ((2 * dk + 1) * x * q - dk * p) / (dk + 1); break;
      default: r = (x + x) * q - p; break;
    }
    p = q;
    q = r;
  }
  return q;
}
}  // namespace

static void k_orthogonal_polynomial(TensorIter& it, const double* s) {
  const int kind = static_cast<int>(s[0]);
  binary_float(it, "orthogonal_polynomial", [kind](double x, double n) { return orth_poly(kind, x, n); });
}
AG_REGISTER_KERNEL(orthogonal_polynomial, CPU, k_orthogonal_polynomial);

}  // namespace ampgrad::cpu
