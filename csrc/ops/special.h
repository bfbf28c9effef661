// Front ends of the special-function and integer elementwise ops (ops/special.cpp; kernels in
// kernels/cpu/special_math.cpp). Declared here rather than in ops/ops.h so the op table's users do not
// recompile when this family grows.
#pragma once
#include <optional>
#include <tuple>
#include "ops/ops.h"

namespace ampgrad {

// unary, floating (integers promote to the default dtype); torch's backward node names
Tensor digamma(const Tensor& a);
Tensor lgamma(const Tensor& a);
Tensor polygamma(int64_t n, const Tensor& a);
Tensor mvlgamma(const Tensor& a, int64_t p);
Tensor erfcx(const Tensor& a);
Tensor logit(const Tensor& a, std::optional<double> eps);
Tensor i0(const Tensor& a);
Tensor i0e(const Tensor& a);
Tensor i1(const Tensor& a);
Tensor i1e(const Tensor& a);
Tensor ndtr(const Tensor& a);
Tensor ndtri(const Tensor& a);
Tensor log_ndtr(const Tensor& a);
Tensor entr(const Tensor& a);
Tensor sgn(const Tensor& a);
Tensor signbit(const Tensor& a);
std::tuple<Tensor, Tensor> frexp(const Tensor& a);
// no derivative in torch: bessel_j0 ... airy_ai (op picks which)
Tensor special_unary_nograd(Op op, const Tensor& a);
// binary
Tensor xlog1py(const Tensor& a, const Tensor& b);
Tensor zeta(const Tensor& a, const Tensor& b);
Tensor igamma(const Tensor& a, const Tensor& b);
Tensor igammac(const Tensor& a, const Tensor& b);
Tensor gcd(const Tensor& a, const Tensor& b);
Tensor lcm(const Tensor& a, const Tensor& b);
Tensor bitwise_left_shift(const Tensor& a, const Tensor& b);
Tensor bitwise_right_shift(const Tensor& a, const Tensor& b);
Tensor nextafter(const Tensor& a, const Tensor& b);
Tensor heaviside(const Tensor& a, const Tensor& b);
Tensor rsub(const Tensor& a, const Tensor& b, Scalar alpha);
Tensor isin(const Tensor& elements, const Tensor& test, bool invert);
// kind: 0..3 Chebyshev T U V W, 4 Hermite H, 5 Hermite He, 6 Laguerre L, 7 Legendre P, 8..11 shifted Chebyshev
Tensor orthogonal_polynomial(int kind, const Tensor& x, const Tensor& n);
// in place: computes op(self) and writes it back (torch's cast check first)
Tensor& special_inplace(Tensor& self, const std::function<Tensor(const Tensor&)>& f, const char* name);

}  // namespace ampgrad
