// Front ends of the special functions (torch.special and friends) and the integer elementwise ops:
// dtype promotion, torch's errors and backward node names; gradients are written with ampgrad ops so
// double backward and the jvp (derived from the backward) work.
#include "ops/special.h"
#include <cmath>
#include <cstring>
#include "core/overlap.h"
#include "ops/internal.h"

namespace ampgrad {

namespace {
constexpr double kSqrt2Pi = 2.50662827463100050242, kTwoOverSqrtPi = 1.12837916709551257390;
constexpr double kLogPi = 1.14472988584940017414;

Tensor wrap(double v) { return wrap_scalar(Scalar(v)); }
Tensor promote_float(const Tensor& a) { return is_floating(a.dtype()) ? a : to_dtype(a, default_dtype()); }

// out = op(a) (integers promoted to the default dtype); saves (x, out) for the backward (c.get(0), c.get(1)).
Tensor sp_unary(Op op, const Tensor& a0, const char* name, autograd::BackwardFn bw, const double* s = nullptr) {
  Tensor a = promote_float(a0);
  Tensor out = elementwise(op, a.sizes(), a.dtype(), {&a}, s);
  if (!bw) return out;
  fw_rule(out, {&a}, [&](const variable_list& t) { return jvp_from_backward(bw, t, {a, out}); });
  if (auto node = autograd::make_node(name, {&a}, std::move(bw))) {
    autograd::set_history(node, {&out});
    node->save(a);
    node->save(out, true);
  }
  return out;
}

struct Bin { Tensor x, y; ScalarType dt; Shape shape; };
Bin bin_prepare(const Tensor& a, const Tensor& b, bool to_float, const char* name) {
  check_same_device(a, b, name);
  ScalarType dt = result_type({&a, &b});
  if (to_float && !is_floating(dt)) dt = default_dtype();
  Shape sh = broadcast_shapes(a.sizes(), b.sizes());
  return {expand(to_dtype(a, dt), sh), expand(to_dtype(b, dt), sh), dt, sh};
}

// out = op(a, b); saves (a, b, out) for the backward.
Tensor sp_binary(Op op, const Tensor& a, const Tensor& b, bool to_float, const char* name, autograd::BackwardFn bw,
                 const double* s = nullptr) {
  Bin p = bin_prepare(a, b, to_float, op_name(op));
  Tensor out = elementwise(op, p.shape, p.dt, {&p.x, &p.y}, s);
  if (bw && is_floating(out.dtype())) {
    fw_rule(out, {&a, &b}, [&](const variable_list& t) { return jvp_from_backward(bw, t, {a, b, out}); });
    if (auto node = autograd::make_node(name, {&a, &b}, std::move(bw))) {
      autograd::set_history(node, {&out});
      node->save(a);
      node->save(b);
      node->save(out, true);
    }
  }
  return out;
}

[[noreturn]] void not_implemented_grad(const char* what) {
  AG_THROW(NotImplementedError, "the derivative for '", what, "' is not implemented.");
}
Tensor sgn_of(const Tensor& x) { return sign(x); }
Tensor full_like_value(const Tensor& t, double v) { return full(t.sizes(), Scalar(v), t.dtype(), t.device()); }
Tensor full_like_nan(const Tensor& t) { return full_like_value(t, std::numeric_limits<double>::quiet_NaN()); }
}  // namespace

// ---------------------------------------------------------------- unary
Tensor digamma(const Tensor& a) {
  return sp_unary(Op::digamma, a, "DigammaBackward0", AG_BW { return {g[0] * polygamma(1, c.get(0))}; });
}
Tensor lgamma(const Tensor& a) {
  return sp_unary(Op::lgamma, a, "LgammaBackward0", AG_BW { return {g[0] * digamma(c.get(0))}; });
}
Tensor polygamma(int64_t n, const Tensor& a) {
  AG_CHECK(n >= 0, "polygamma(n, x) does not support negative n.");
  double s[1] = {static_cast<double>(n)};
  return sp_unary(Op::polygamma, a, "PolygammaBackward0", AG_BW { return {g[0] * polygamma(n + 1, c.get(0))}; }, s);
}
Tensor mvlgamma(const Tensor& a0, int64_t p) {
  AG_CHECK(p >= 1, "p has to be greater than or equal to 1");
  Tensor a = promote_float(a0);
  Tensor out;
  {
    autograd::AutoGradMode off(false);
    out = lgamma(detach(a)) + static_cast<double>(p) * (p - 1) / 4 * kLogPi;
    for (int64_t j = 1; j < p; ++j) out = out + lgamma(detach(a) - static_cast<double>(j) / 2);
  }
  autograd::BackwardFn bw = AG_BW {
    Tensor x = c.get(0), d = digamma(x);
    for (int64_t j = 1; j < p; ++j) d = d + digamma(x - static_cast<double>(j) / 2);
    return {g[0] * d};
  };
  fw_rule(out, {&a}, [&](const variable_list& t) { return jvp_from_backward(bw, t, {a}); });
  if (auto node = autograd::make_node("MvlgammaBackward0", {&a}, std::move(bw))) {
    autograd::set_history(node, {&out});
    node->save(a);
  }
  return out;
}
Tensor erfcx(const Tensor& a) {
  return sp_unary(Op::erfcx, a, "SpecialErfcxBackward0", AG_BW {
    return {g[0] * (c.get(0) * c.get(1) * 2.0 - kTwoOverSqrtPi)};
  });
}
Tensor logit(const Tensor& a, std::optional<double> eps) {
  const double e = eps ? *eps : -1.0;
  double s[1] = {e};
  return sp_unary(Op::logit, a, "LogitBackward0", AG_BW {
    Tensor x = c.get(0), d = g[0] / (x * (1.0 - x));
    if (e < 0) {  // torch: NaN outside [0, 1]
      Tensor bad = logical_or(lt(x, wrap(0.0)), gt(x, wrap(1.0)));
      return {where(bad, full_like_nan(d), d)};
    }
    Tensor out_of = logical_or(lt(x, wrap(e)), gt(x, wrap(1.0 - e)));
    return {where(out_of, zeros_like(d), d)};
  }, s);
}
Tensor i0(const Tensor& a) {
  return sp_unary(Op::i0, a, "I0Backward0", AG_BW { return {g[0] * i1(c.get(0))}; });
}
Tensor i0e(const Tensor& a) {
  return sp_unary(Op::i0e, a, "SpecialI0EBackward0", AG_BW {
    Tensor x = c.get(0);
    return {g[0] * (i1e(x) - sgn_of(x) * c.get(1))};
  });
}
Tensor i1(const Tensor& a) {
  return sp_unary(Op::i1, a, "SpecialI1Backward0", AG_BW {
    Tensor x = c.get(0), y = c.get(1);
    Tensor d = i0(x) - y / x;
    return {g[0] * where(eq(x, wrap(0.0)), full_like_value(d, 0.5), d)};
  });
}
Tensor i1e(const Tensor& a) {
  return sp_unary(Op::i1e, a, "SpecialI1EBackward0", AG_BW {
    Tensor x = c.get(0), y = c.get(1);
    Tensor d = i0e(x) - y * (sgn_of(x) + reciprocal(x));
    return {g[0] * where(eq(x, wrap(0.0)), full_like_value(d, 0.5), d)};
  });
}
// torch's ndtr is composite ((1 + erf(x / sqrt 2)) * 0.5): its node is the final multiply's.
Tensor ndtr(const Tensor& a) {
  return sp_unary(Op::ndtr, a, "MulBackward1", AG_BW {
    Tensor x = c.get(0);
    return {g[0] * exp(x * x * -0.5) * (1.0 / kSqrt2Pi)};
  });
}
Tensor ndtri(const Tensor& a) {
  return sp_unary(Op::ndtri, a, "SpecialNdtriBackward0", AG_BW {
    Tensor y = c.get(1);
    return {g[0] * exp(y * y * 0.5) * kSqrt2Pi};
  });
}
Tensor log_ndtr(const Tensor& a) {
  return sp_unary(Op::log_ndtr, a, "SpecialLogNdtrBackward0", AG_BW {
    Tensor x = c.get(0), y = c.get(1);
    return {g[0] * exp(x * x * -0.5 - y) * (1.0 / kSqrt2Pi)};
  });
}
Tensor entr(const Tensor& a) {
  return sp_unary(Op::entr, a, "SpecialEntrBackward0", AG_BW { return {g[0] * -(log(c.get(0)) + 1.0)}; });
}
Tensor special_unary_nograd(Op op, const Tensor& a) { return sp_unary(op, a, "", nullptr); }

Tensor sgn(const Tensor& a) {
  Tensor out;
  {
    autograd::AutoGradMode off(false);
    out = sign(detach(a));
  }
  if (!is_floating(out.dtype())) return out;
  autograd::BackwardFn bw = AG_BW { return {zeros_like(g[0])}; };
  fw_rule(out, {&a}, [&](const variable_list& t) { return jvp_from_backward(bw, t, {a}); });
  if (auto node = autograd::make_node("SgnBackward0", {&a}, std::move(bw))) autograd::set_history(node, {&out});
  return out;
}

Tensor signbit(const Tensor& a) { return elementwise(Op::signbit, a.sizes(), ScalarType::Bool, {&a}); }

std::tuple<Tensor, Tensor> frexp(const Tensor& a) {
  AG_CHECK(is_floating(a.dtype()), "torch.frexp() only supports floating-point dtypes");
  double s0[1] = {0}, s1[1] = {1};
  Tensor m = elementwise(Op::frexp, a.sizes(), a.dtype(), {&a}, s0);
  Tensor e = elementwise(Op::frexp, a.sizes(), ScalarType::Int32, {&a}, s1);
  autograd::BackwardFn bw = AG_BW { return {g[0] / exp2(to_dtype(c.get(0), g[0].dtype()))}; };
  fw_rule(m, {&a}, [&](const variable_list& t) { return jvp_from_backward(bw, t, {e}); });
  if (auto node = autograd::make_node("FrexpBackward0", {&a}, std::move(bw))) {
    autograd::set_history(node, {&m});
    node->save(e);
  }
  return {m, e};
}

// ---------------------------------------------------------------- binary
Tensor xlog1py(const Tensor& a, const Tensor& b) {
  return sp_binary(Op::xlog1py, a, b, true, "SpecialXlog1PyBackward0", AG_BW {
    Tensor x = c.get(0), y = c.get(1), gx, gy;
    if (c.needs_input_grad(0))
      gx = where(logical_and(eq(x, wrap(0.0)), le(y, wrap(-1.0))), zeros_like(g[0]), xlog1py(g[0], y));
    if (c.needs_input_grad(1)) gy = g[0] * x / (y + 1.0);
    return {gx, gy};
  });
}
Tensor zeta(const Tensor& a, const Tensor& b) {
  return sp_binary(Op::zeta, a, b, true, "SpecialZetaBackward0", AG_BW {
    if (c.needs_input_grad(0)) not_implemented_grad("_special_zeta: self");
    Tensor x = c.get(0), q = c.get(1);
    return {Tensor(), g[0] * -x * zeta(x + 1.0, q)};
  });
}
static Tensor igamma_impl(Op op, const Tensor& a, const Tensor& b) {
  const bool upper = op == Op::igammac;
  return sp_binary(op, a, b, false, upper ? "IgammacBackward0" : "IgammaBackward0", AG_BW {
    if (c.needs_input_grad(0)) not_implemented_grad(upper ? "igammac: input" : "igamma: input");
    Tensor s = c.get(0), x = c.get(1);
    Tensor d = exp((s - 1.0) * log(x) - x - lgamma(s));
    return {Tensor(), upper ? -g[0] * d : g[0] * d};
  });
}
Tensor igamma(const Tensor& a, const Tensor& b) { return igamma_impl(Op::igamma, a, b); }
Tensor igammac(const Tensor& a, const Tensor& b) { return igamma_impl(Op::igammac, a, b); }

Tensor gcd(const Tensor& a, const Tensor& b) { return sp_binary(Op::gcd, a, b, false, "", nullptr); }
Tensor lcm(const Tensor& a, const Tensor& b) { return sp_binary(Op::lcm, a, b, false, "", nullptr); }
Tensor bitwise_left_shift(const Tensor& a, const Tensor& b) { return sp_binary(Op::bitwise_left_shift, a, b, false, "", nullptr); }
Tensor bitwise_right_shift(const Tensor& a, const Tensor& b) { return sp_binary(Op::bitwise_right_shift, a, b, false, "", nullptr); }
// torch's derivative (derivatives.yaml): self gets the gradient unchanged, other a zero.
Tensor nextafter(const Tensor& a, const Tensor& b) {
  return sp_binary(Op::nextafter, a, b, false, "NextafterBackward0", AG_BW {
    (void)c;
    return {g[0], zeros_like(g[0])};
  });
}
Tensor heaviside(const Tensor& a, const Tensor& b) {
  AG_CHECK(a.dtype() == b.dtype(), "heaviside is not yet implemented for tensors with different dtypes.");
  // torch records a NotImplemented node (derivatives.yaml has no formula): the result requires grad and
  // its backward raises.
  return sp_binary(Op::heaviside, a, b, false, "torch::autograd::NotImplemented", AG_BW {
    (void)c; (void)g;
    AG_THROW(RuntimeError, "derivative for aten::heaviside is not implemented");
    return {};
  });
}

// torch.rsub(input, other, alpha) = other - alpha * input
Tensor rsub(const Tensor& a, const Tensor& b, Scalar alpha) {
  Tensor out;
  {
    autograd::AutoGradMode off(false);
    out = sub(detach(b), detach(a), alpha);
  }
  if (!is_floating(out.dtype())) return out;
  const double al = alpha.to_double();
  const bool scalar_other = b.impl()->wrapped_number;
  autograd::BackwardFn bw = AG_BW {
    return {c.needs_input_grad(0) ? g[0] * -al : Tensor(), c.needs_input_grad(1) ? g[0] : Tensor()};
  };
  fw_rule(out, {&a, &b}, [&](const variable_list& t) { return jvp_from_backward(bw, t, {}); });
  if (auto node = autograd::make_node(scalar_other ? "RsubBackward1" : "RsubBackward0", {&a, &b}, std::move(bw)))
    autograd::set_history(node, {&out});
  return out;
}

Tensor isin(const Tensor& elements, const Tensor& test, bool invert) {
  check_same_device(elements, test, "isin");
  ScalarType dt = result_type({&elements, &test});
  Tensor x = to_dtype(elements, dt), t = contiguous(to_dtype(test, dt));
  // The kernel binary-searches the test values through a pointer carried in the scalar slots
  // (kernels/cpu/special_math.cpp): the caller passes them sorted and NaN-free (python/ampgrad/_special_ops.py).
  const void* ptr = t.numel() ? t.data_ptr() : nullptr;
  double s[3] = {0, static_cast<double>(t.numel()), invert ? 1.0 : 0.0};
  std::memcpy(&s[0], &ptr, sizeof ptr);
  return elementwise(Op::isin, x.sizes(), ScalarType::Bool, {&x}, s);
}

Tensor orthogonal_polynomial(int kind, const Tensor& x, const Tensor& n) {
  double s[1] = {static_cast<double>(kind)};
  return sp_binary(Op::orthogonal_polynomial, x, n, true, "", nullptr, s);
}

Tensor& special_inplace(Tensor& self, const std::function<Tensor(const Tensor&)>& f, const char* name) {
  return apply_inplace(self, [&] {
    Tensor r = f(self);
    AG_CHECK(can_cast(r.dtype(), self.dtype()), "result type ", scalar_type_name(r.dtype()),
             " can't be cast to the desired output type ", scalar_type_name(self.dtype()));
    return r;
  }, name);
}

}  // namespace ampgrad
