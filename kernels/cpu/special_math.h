// Scalar special functions for the CPU kernels of kernels/cpu/special_math.cpp (computed in double;
// float, fp16 and bf16 kernels call them and round once). Algorithms: recurrence + asymptotic series
// (digamma, polygamma), Euler-Maclaurin (Hurwitz zeta), power series + Hankel asymptotics (Bessel I, J,
// Y), trapezoid rule on the integral representation (Bessel K, Airy), series / continued fraction
// (incomplete gamma), Newton on log_ndtr (ndtri).
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>

namespace ampgrad::special {

constexpr double kPi = 3.14159265358979323846, kEulerGamma = 0.57721566490153286061;
constexpr double kSqrt2 = 1.41421356237309504880, kSqrtPi = 1.77245385090551602730;
constexpr double kSqrt2Pi = 2.50662827463100050242;
constexpr double kInf = std::numeric_limits<double>::infinity(), kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kEps = 1.1102230246251565e-16;

// exp(x * x) with x * x split so that the rounding of the square does not cost x^2 ulps.
inline double exp_sq(double x) {
  const double hi = static_cast<float>(x), lo = x - hi;  // hi has 24 bits: hi * hi is exact in double
  return std::exp(hi * hi) * std::exp(lo * (hi + x));
}

inline double digamma(double x) {
  if (x == 0) return std::copysign(kInf, -x);  // torch: digamma(+-0) = -+inf
  if (std::isnan(x)) return x;
  if (x == -kInf) return kNaN;
  if (x < 0) {
    if (x == std::trunc(x)) return kNaN;  // poles
    double q, r = std::modf(x, &q);       // reflection with the fractional part keeps tan's argument small
    return digamma(1 - x) - kPi / std::tan(kPi * r);
  }
  double res = 0;
  while (x < 10) { res -= 1 / x; x += 1; }
  if (x == kInf) return kInf;
  const double z = 1 / (x * x);
  // Bernoulli terms B_2k / (2k x^2k)
  const double s = z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132 - z * (691.0 / 32760 - z / 12))))));
  return res + std::log(x) - 0.5 / x - s;
}

// Hurwitz zeta(x, q) = sum_k (k + q)^-x (Euler-Maclaurin; the correction coefficients are (2k)! / B_2k).
inline double zeta(double x, double q) {
  static const double A[] = {12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
                             -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
                             1.8152105401943546773e17, -7.1661652561756670113e18};
  if (std::isnan(x) || std::isnan(q)) return kNaN;
  if (x == 1) return kInf;
  if (x < 1) return kNaN;
  if (q <= 0) {
    if (q == std::floor(q)) return kInf;
    if (x != std::floor(x)) return kNaN;  // q^-x is not real
  }
  double s = std::pow(q, -x), a = q, b = 0;
  int i = 0;
  while (i < 9 || a <= 9) {
    i += 1; a += 1;
    b = std::pow(a, -x);
    s += b;
    if (std::fabs(b / s) < kEps) return s;
  }
  const double w = a;
  s += b * w / (x - 1);
  s -= 0.5 * b;
  double fa = 1, k = 0;
  for (int j = 0; j < 12; ++j) {
    fa *= x + k;
    b /= w;
    const double t = fa * b / A[j];
    s += t;
    if (std::fabs(t / s) < kEps) return s;
    k += 1;
    fa *= x + k;
    b /= w;
    k += 1;
  }
  return s;
}

inline double trigamma(double x) {
  double sign = 1, res = 0;
  // A pole at 0, -1, -2, ...: +inf from both sides (torch returns sin(pi x) rounding noise, ~1e15 in float32).
  if (x <= 0 && x == std::floor(x)) return kInf;
  if (x < 0.5) {
    sign = -1;
    const double s = std::sin(kPi * x);
    res -= kPi * kPi / (s * s);
    x = 1 - x;
  }
  for (int i = 0; i < 6; ++i) { res += 1 / (x * x); x += 1; }
  const double z = 1 / (x * x);
  res += (1 + 1 / (2 * x) + z * (1.0 / 6 - z * (1.0 / 30 - z * (1.0 / 42 - z * (1.0 / 30))))) / x;
  return sign * res;
}

inline double polygamma(int64_t n, double x) {
  if (n == 0) return digamma(x);
  if (n == 1) return trigamma(x);
  const double f = std::exp(std::lgamma(n + 1.0));
  return ((n % 2) ? 1.0 : -1.0) * f * zeta(static_cast<double>(n + 1), x);
}

inline double erfcx(double x) {
  if (std::isnan(x)) return x;
  if (x < 0) {
    if (x < -26.7) return kInf;
    return 2 * exp_sq(x) - erfcx(-x);
  }
  if (x < 26) return exp_sq(x) * std::erfc(x);
  // asymptotic: 1 / (x sqrt(pi)) * sum (-1)^k (2k-1)!! / (2 x^2)^k
  if (x > 1e150) return 1 / (x * kSqrtPi);
  const double z = 1 / (2 * x * x);
  double t = 1, s = 1;
  for (int k = 1; k < 30; ++k) {
    t *= -(2 * k - 1) * z;
    s += t;
    if (std::fabs(t) < 1e-17 * std::fabs(s)) break;
  }
  return s / (x * kSqrtPi);
}

inline double ndtr(double x) { return 0.5 * std::erfc(-x / kSqrt2); }

inline double log_ndtr(double x) {
  const double t = x / kSqrt2;
  if (x < -1) return std::log(erfcx(-t) / 2) - t * t;
  return std::log1p(-std::erfc(t) / 2);
}

// The inverse of ndtr on (0, 0.5]: Abramowitz-Stegun 26.2.23 then Newton steps on log_ndtr (no underflow
// of the density in the far tail).
inline double ndtri_lower(double p) {
  const double t = std::sqrt(-2 * std::log(p));
  double x = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) / (1 + t * (1.432788 + t * (0.189269 + t * 0.001308))));
  const double lp = std::log(p);
  for (int i = 0; i < 8; ++i) {
    // d log_ndtr / dx = pdf / cdf; for x < -1 written through erfcx so nothing underflows
    const double d = x < -1 ? 1 / (kSqrt2Pi * 0.5 * erfcx(-x / kSqrt2))
                            : std::exp(-0.5 * x * x) / kSqrt2Pi / ndtr(x);
    const double step = (log_ndtr(x) - lp) / d;
    x -= step;
    if (std::fabs(step) <= 1e-16 * std::fabs(x)) break;
  }
  return x;
}

inline double ndtri(double p) {
  if (std::isnan(p) || p < 0 || p > 1) return kNaN;
  if (p == 0) return -kInf;
  if (p == 1) return kInf;
  if (p >= 0.25 && p <= 0.75) {
    // Newton on ndtr from the middle: ndtr(x) - p = erf(x / sqrt2) / 2 - (p - 0.5), p - 0.5 exact
    const double h = p - 0.5;
    double x = 0;  // start from the A-S guess of the nearer tail
    x = h < 0 ? ndtri_lower(p) : -ndtri_lower(1 - p);
    for (int i = 0; i < 3; ++i) {
      const double f = 0.5 * std::erf(x / kSqrt2) - h;
      x -= f / (std::exp(-0.5 * x * x) / kSqrt2Pi);
    }
    return x;
  }
  if (p < 0.5) return ndtri_lower(p);
  return -ndtri_lower(1 - p);  // 1 - p is exact for p in [0.5, 1]
}

// ---- modified Bessel functions of the first kind: power series for |x| <= 25, asymptotic above
// (all terms positive for I0; the series has no cancellation).
inline double bessel_i_series(int n, double x) {  // I_n(x), n in {0, 1}, x >= 0
  const double q = x * x / 4;
  double t = n == 0 ? 1.0 : x / 2, s = t;
  for (int k = 1; k < 500; ++k) {
    t *= q / (k * static_cast<double>(k + n));
    s += t;
    if (t < 1e-17 * s) break;
  }
  return s;
}
// I_n(x) e^-x sqrt(2 pi x) for large x: sum_k prod (mu - (2j-1)^2) / (k! (8x)^k) with alternating sign
inline double bessel_i_asym(int n, double x) {
  const double mu = 4.0 * n * n;
  double t = 1, s = 1;
  for (int k = 1; k < 60; ++k) {
    const double nt = t * -(mu - (2.0 * k - 1) * (2.0 * k - 1)) / (k * 8 * x);
    if (std::fabs(nt) > std::fabs(t)) break;
    t = nt;
    s += t;
    if (std::fabs(t) < 1e-17 * std::fabs(s)) break;
  }
  return s / std::sqrt(2 * kPi * x);
}
// scaled: I_n(x) e^-|x|
inline double bessel_ie(int n, double x) {
  if (std::isnan(x)) return x;
  const double a = std::fabs(x);
  double r = a <= 25 ? bessel_i_series(n, a) * std::exp(-a) : bessel_i_asym(n, a);
  return (n == 1 && x < 0) ? -r : r;
}
inline double bessel_i(int n, double x) {
  if (std::isnan(x)) return x;
  const double a = std::fabs(x);
  double r;
  if (a <= 25) r = bessel_i_series(n, a);
  else if (a > 713) r = kInf;
  else {
    const double e = std::exp(a / 2);  // split so that e^a is not overflowed before the scale is applied
    r = bessel_i_asym(n, a) * e * e;
  }
  return (n == 1 && x < 0) ? -r : r;
}

// ---- modified Bessel functions of the second kind: K_nu(x) e^x = int_0^inf exp(-x (cosh t - 1)) cosh(nu t) dt
// by the trapezoid rule (the integrand is analytic and decays doubly exponentially: spectral accuracy).
inline double bessel_ke(double nu, double x) {
  if (std::isnan(x)) return x;
  if (x < 0) return kNaN;
  if (x == 0) return kInf;
  if (x == kInf) return 0;
  const double h = std::fmin(0.25, 0.4 / std::sqrt(x));
  double s = 0.5;  // t = 0 term: exp(0) * cosh(0) / 2
  for (int j = 1; j < 100000; ++j) {
    const double t = j * h, sh = std::sinh(t / 2);
    const double e = x * 2 * sh * sh;  // x (cosh t - 1) without cancellation
    if (e > 745 + nu * t) break;
    const double term = std::exp(-e) * std::cosh(nu * t);
    s += term;
    if (term < 1e-18 * s && e > 40) break;
  }
  return s * h;
}

// ---- Bessel functions of the first and second kind, orders 0 and 1
inline void bessel_jy_series(double x, double& j0, double& j1, double& y0, double& y1) {  // 0 < x <= 2
  const double q = -x * x / 4, L = std::log(x / 2) + kEulerGamma;
  double t0 = 1, t1 = x / 2, sj0 = 1, sj1 = x / 2, h = 0, sy0 = 0;
  // psi(k+1) + psi(k+2) = 2 H_k + 1/(k+1) - 2 gamma; start k = 0: -2 gamma + 1
  double sy1 = t1 * (1 - 2 * kEulerGamma);
  for (int k = 1; k < 60; ++k) {
    t0 *= q / (static_cast<double>(k) * k);
    t1 *= q / (static_cast<double>(k) * (k + 1));
    h += 1.0 / k;
    sj0 += t0; sj1 += t1;
    sy0 += -t0 * h;
    sy1 += t1 * (2 * h + 1.0 / (k + 1) - 2 * kEulerGamma);
    if (std::fabs(t0) < 1e-18 && std::fabs(t1) < 1e-18) break;
  }
  j0 = sj0; j1 = sj1;
  y0 = 2 / kPi * (L * sj0 + sy0);
  y1 = -2 / (kPi * x) + 2 / kPi * (std::log(x / 2)) * sj1 - sy1 / kPi;
}

// 2 < x <= 25: Miller's backward recurrence for J_k (normalized by J0 + 2 sum J_2k = 1) and the Neumann
// series of Y0 and Y1 over them.
inline void bessel_jy_miller(double x, double& j0, double& j1, double& y0, double& y1) {
  const int M = 2 * (static_cast<int>(x / 2) + 30);  // x <= 25: M <= 84
  double J[96];
  J[M + 1] = 0; J[M] = 1e-30;
  for (int k = M; k >= 1; --k) {
    J[k - 1] = 2.0 * k / x * J[k] - J[k + 1];
    if (std::fabs(J[k - 1]) > 1e250)
      for (int i = k - 1; i <= M + 1; ++i) J[i] *= 1e-250;
  }
  double norm = J[0];
  for (int k = 2; k <= M; k += 2) norm += 2 * J[k];
  for (int k = 0; k <= M + 1; ++k) J[k] /= norm;
  const double L = std::log(x / 2) + kEulerGamma;
  double s0 = 0, s1 = 0;
  for (int k = 1; 2 * k + 1 <= M + 1; ++k) {
    const double sg = (k % 2) ? -1.0 : 1.0;
    s0 += sg * J[2 * k] / k;
    s1 += sg * (J[2 * k - 1] - J[2 * k + 1]) / k;
  }
  j0 = J[0]; j1 = J[1];
  y0 = 2 / kPi * L * j0 - 4 / kPi * s0;
  y1 = -2 / (kPi * x) * j0 + 2 / kPi * L * j1 + 2 / kPi * s1;
}

// x > 25: Hankel's asymptotic expansion, J_n = sqrt(2 / (pi x)) (P cos chi - Q sin chi), Y_n with sin / cos.
inline void bessel_jy_asym(int n, double x, double& j, double& y) {
  const double mu = 4.0 * n * n, z = 8 * x;
  double P = 1, Q = 0, t = 1;
  for (int k = 1; k < 80; ++k) {
    const double nt = t * (mu - (2.0 * k - 1) * (2.0 * k - 1)) / (k * z);
    if (std::fabs(nt) > std::fabs(t) && k > 2) break;
    t = nt;
    if (k % 2) Q += ((k / 2) % 2 ? -t : t);
    else P += ((k / 2) % 2 ? -t : t);
    if (std::fabs(t) < 1e-17) break;
  }
  // chi = x - (n / 2 + 1 / 4) pi: cos / sin of x combined exactly with those of the offset
  const double c = std::cos(x), s = std::sin(x);
  const double r = 0.70710678118654752440;
  double cc, sc;  // cos(chi), sin(chi)
  if (n == 0) { cc = r * (c + s); sc = r * (s - c); }
  else { cc = r * (s - c); sc = -r * (c + s); }
  const double f = std::sqrt(2 / (kPi * x));
  j = f * (P * cc - Q * sc);
  y = f * (P * sc + Q * cc);
}

inline double bessel_j(int n, double x) {
  if (std::isnan(x)) return x;
  const double a = std::fabs(x), sg = (n == 1 && x < 0) ? -1.0 : 1.0;
  if (a == kInf) return 0;
  if (a == 0) return n == 0 ? 1.0 : x;
  double j0, j1, y0, y1;
  if (a <= 2) bessel_jy_series(a, j0, j1, y0, y1);
  else if (a <= 25) bessel_jy_miller(a, j0, j1, y0, y1);
  else { double j, y; bessel_jy_asym(n, a, j, y); return sg * j; }
  return sg * (n == 0 ? j0 : j1);
}

inline double bessel_y(int n, double x) {
  if (std::isnan(x)) return x;
  if (x < 0) return kNaN;
  if (x == 0) return -kInf;
  if (x == kInf) return 0;
  double j0, j1, y0, y1;
  if (x <= 2) bessel_jy_series(x, j0, j1, y0, y1);
  else if (x <= 25) bessel_jy_miller(x, j0, j1, y0, y1);
  else { double j, y; bessel_jy_asym(n, x, j, y); return y; }
  return n == 0 ? y0 : y1;
}

inline double spherical_bessel_j0(double x) {
  if (std::isinf(x)) return 0;
  if (std::fabs(x) < 0.5) {
    const double z = x * x;
    return 1 + z * (-1.0 / 6 + z * (1.0 / 120 + z * (-1.0 / 5040 + z * (1.0 / 362880 + z * (-1.0 / 39916800 + z / 6227020800.0)))));
  }
  return std::sin(x) / x;
}

// Airy Ai: Maclaurin series (long double) for -9 <= x <= 1, (1 / pi) sqrt(x / 3) K_{1/3}(zeta) above,
// the oscillating asymptotic expansion below -9.
inline double airy_ai(double x) {
  if (std::isnan(x)) return x;
  if (x == kInf) return 0;
  if (x == -kInf) return 0;
  if (x > 1) {
    const double zt = 2.0 / 3 * x * std::sqrt(x);
    if (zt > 745) return 0;
    return std::sqrt(x / 3) / kPi * bessel_ke(1.0 / 3, zt) * std::exp(-zt);
  }
  if (x >= -9) {
    const long double c1 = 0.355028053887817239260L, c2 = 0.258819403792806798405L;
    long double f = 1, g = x, tf = 1, tg = x, x3 = static_cast<long double>(x) * x * x;
    for (int k = 1; k < 200; ++k) {
      tf *= x3 / ((3.0L * k - 1) * (3.0L * k));
      tg *= x3 / ((3.0L * k) * (3.0L * k + 1));
      f += tf; g += tg;
      if (std::fabs(static_cast<double>(tf)) + std::fabs(static_cast<double>(tg)) < 1e-22) break;
    }
    return static_cast<double>(c1 * f - c2 * g);
  }
  const double a = -x, zt = 2.0 / 3 * a * std::sqrt(a);
  // u_k = u_{k-1} (6k-5)(6k-3)(6k-1) / ((2k-1) 216 k)
  double u = 1, se = 1, so = 0;
  for (int k = 1; k < 40; ++k) {
    const double nu = u * (6.0 * k - 5) * (6.0 * k - 3) * (6.0 * k - 1) / ((2.0 * k - 1) * 216.0 * k) / zt;
    if (std::fabs(nu) > std::fabs(u) && k > 2) break;
    u = nu;
    const double sg = ((k / 2) % 2) ? -1.0 : 1.0;
    if (k % 2) so += sg * u; else se += sg * u;
    if (std::fabs(u) < 1e-17) break;
  }
  const double r = 0.70710678118654752440, c = std::cos(zt), s = std::sin(zt);
  const double sp = r * (s + c), cp = r * (c - s);  // sin(zt + pi/4), cos(zt + pi/4)
  return (sp * se - cp * so) / (kSqrtPi * std::pow(a, 0.25));
}

// ---- regularized incomplete gamma: series for P when x < a + 1, Legendre's continued fraction for Q else
inline double igam_prefactor(double a, double x) { return std::exp(a * std::log(x) - x - std::lgamma(a)); }
inline double igam_series(double a, double x) {
  double ap = a, s = 1 / a, d = s;
  for (int n = 0; n < 100000; ++n) {
    ap += 1; d *= x / ap; s += d;
    if (std::fabs(d) < std::fabs(s) * kEps) break;
  }
  return s * igam_prefactor(a, x);
}
inline double igamc_cf(double a, double x) {
  const double tiny = 1e-300;
  double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
  for (int i = 1; i < 100000; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b; if (std::fabs(d) < tiny) d = tiny;
    c = b + an / c; if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    const double del = d * c;
    h *= del;
    if (std::fabs(del - 1) < kEps) break;
  }
  return igam_prefactor(a, x) * h;
}
inline double igamma(double a, double x, bool upper) {
  if (std::isnan(a) || std::isnan(x) || a < 0 || x < 0) return kNaN;
  if (a == 0) {
    if (x > 0) return upper ? 0.0 : 1.0;
    return kNaN;
  }
  if (x == 0) return upper ? 1.0 : 0.0;
  if (std::isinf(a)) {
    if (std::isinf(x)) return kNaN;
    return upper ? 1.0 : 0.0;
  }
  if (std::isinf(x)) return upper ? 0.0 : 1.0;
  if (x < a + 1) {
    const double p = igam_series(a, x);
    return upper ? 1 - p : p;
  }
  const double q = igamc_cf(a, x);
  return upper ? q : 1 - q;
}

}  // namespace ampgrad::special
