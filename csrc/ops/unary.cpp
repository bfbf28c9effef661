// Elementwise unary front ends (AG_UNARY and unary_impl) with their backward formulas, and clamp.
#include "core/overlap.h"
#include <cmath>
#include "ops/internal.h"

namespace ampgrad {

// ---------------------------------------------------------------- unary
namespace {
enum Save { IN, OUT, NONE_ };

// torch's dtype refusals that are not just a missing kernel.
void check_unary_dtype(Op op, ScalarType t) {
  if (t != ScalarType::Bool) return;
  AG_CHECK(op != Op::neg, "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, "
           "use the `~` or `logical_not()` operator instead.");
  AG_CHECK(op != Op::relu, "Boolean inputs not supported for relu");
}

Tensor unary_impl(Op op, const Tensor& a0, bool to_float, const char* bw_name, Save save,
                  std::function<variable_list(FunctionNode&, const variable_list&)> bw, const double* s = nullptr) {
  Tensor a = a0;
  check_unary_dtype(op, a.dtype());
  if (to_float && !is_floating(a.dtype())) a = to_dtype(a, default_dtype());
  Tensor out = elementwise(op, a.sizes(), a.dtype(), {&a}, s);
  if (bw) fw_rule(out, {&a}, [&](const variable_list& t) { return jvp_from_backward(bw, t, {save == OUT ? out : a}); });
  if (bw && is_floating(out.dtype()))
    if (auto node = autograd::make_node(bw_name, {&a}, std::move(bw))) {
      autograd::set_history(node, {&out});
      if (save == IN) node->save(a);
      if (save == OUT) node->save(out, true);
    }
  return out;
}
constexpr double kLn2 = 0.69314718055994530942, kLn10 = 2.30258509299404568402;
constexpr double kTwoOverSqrtPi = 1.12837916709551257390, kSqrtPiOver2 = 0.88622692545275801365;
constexpr double kPi = 3.14159265358979323846, kPiOver180 = 0.017453292519943295, k180OverPi = 57.295779513082323;
}  // namespace

// torch's threshold_backward(grad, result, 0) in one pass: grad where result > 0, else 0 (a NaN
// grad is dropped where the result is <= 0, as torch does; `grad * (result > 0)` would keep it).
Tensor relu_backward(const Tensor& g, const Tensor& out);
// One-kernel activation backward ops (ops/activation_backward.cpp).
Tensor sigmoid_backward(const Tensor& g, const Tensor& y);
Tensor tanh_backward(const Tensor& g, const Tensor& y);
Tensor gelu_backward(const Tensor& g, const Tensor& x, const std::string& approximate);
Tensor silu_backward(const Tensor& g, const Tensor& x);
Tensor softplus_backward(const Tensor& g, const Tensor& x, double beta, double threshold);
Tensor elu_backward(const Tensor& g, const Tensor& x, double alpha, double scale, double input_scale);
Tensor leaky_relu_backward(const Tensor& g, const Tensor& x, double slope);
Tensor hardsigmoid_backward(const Tensor& g, const Tensor& x);
Tensor hardswish_backward(const Tensor& g, const Tensor& x);
Tensor mish_backward(const Tensor& g, const Tensor& x);
Tensor log_sigmoid_backward(const Tensor& g, const Tensor& x);
Tensor erf_backward(const Tensor& g, const Tensor& x);

#define AG_UNARY_GRAD(name, to_float, bw_name, save, formula)                                              \
  Tensor name(const Tensor& a) { return unary_impl(Op::name, a, to_float, bw_name, save, AG_BW { Tensor x = c.get(0); (void)x; return {formula}; }); } \
  Tensor& name##_(Tensor& a) {                                                                        \
    check_unary_dtype(Op::name, a.dtype());                                                           \
    if ((!autograd::GradMode::is_enabled() || !a.requires_grad()) && !fw_has(a)) {                   \
      AG_CHECK(!(to_float) || is_floating(a.dtype()), "result type ", scalar_type_name(default_dtype()), " can't be cast to the desired output type ", scalar_type_name(a.dtype())); \
      assert_no_internal_overlap(a);                                                                   \
      autograd::before_mutation(a);                                                                   \
      run_elementwise(Op::name, a, {&a}); a.bump_version(); return a;                                 \
    }                                                                                                 \
    return apply_inplace(a, [&] { return name(a); }, #name "_");                                      \
  }
#define AG_UNARY_NOGRAD(name, bw_name) AG_UNARY_GRAD(name, false, bw_name, NONE_, zeros_like(g[0]))

AG_UNARY_GRAD(neg, false, "NegBackward0", NONE_, -g[0])
AG_UNARY_GRAD(exp, true, "ExpBackward0", OUT, g[0] * x)
AG_UNARY_GRAD(exp2, true, "Exp2Backward0", OUT, g[0] * x * kLn2)
AG_UNARY_GRAD(expm1, true, "Expm1Backward0", OUT, g[0] * (x + 1.0))
AG_UNARY_GRAD(log, true, "LogBackward0", IN, g[0] / x)
AG_UNARY_GRAD(log2, true, "Log2Backward0", IN, g[0] / (x * kLn2))
AG_UNARY_GRAD(log10, true, "Log10Backward0", IN, g[0] / (x * kLn10))
AG_UNARY_GRAD(log1p, true, "Log1PBackward0", IN, g[0] / (x + 1.0))
AG_UNARY_GRAD(sqrt, true, "SqrtBackward0", OUT, g[0] / (x * 2.0))
AG_UNARY_GRAD(rsqrt, true, "RsqrtBackward0", OUT, g[0] * x * x * x * -0.5)
AG_UNARY_GRAD(reciprocal, true, "ReciprocalBackward0", OUT, -g[0] * x * x)
AG_UNARY_GRAD(abs, false, "AbsBackward0", IN, g[0] * sign(x))
AG_UNARY_GRAD(sign, false, "SignBackward0", NONE_, zeros_like(g[0]))
AG_UNARY_GRAD(sin, true, "SinBackward0", IN, g[0] * cos(x))
AG_UNARY_GRAD(cos, true, "CosBackward0", IN, -g[0] * sin(x))
AG_UNARY_GRAD(tan, true, "TanBackward0", OUT, g[0] * (x * x + 1.0))
AG_UNARY_GRAD(asin, true, "AsinBackward0", IN, g[0] * rsqrt(1.0 - x * x))
AG_UNARY_GRAD(acos, true, "AcosBackward0", IN, -g[0] * rsqrt(1.0 - x * x))
AG_UNARY_GRAD(atan, true, "AtanBackward0", IN, g[0] / (x * x + 1.0))
AG_UNARY_GRAD(sinh, true, "SinhBackward0", IN, g[0] * cosh(x))
AG_UNARY_GRAD(cosh, true, "CoshBackward0", IN, g[0] * sinh(x))
AG_UNARY_GRAD(asinh, true, "AsinhBackward0", IN, g[0] * rsqrt(x * x + 1.0))
AG_UNARY_GRAD(acosh, true, "AcoshBackward0", IN, g[0] * rsqrt(x * x - 1.0))
AG_UNARY_GRAD(atanh, true, "AtanhBackward0", IN, g[0] / (1.0 - x * x))
AG_UNARY_GRAD(erfc, true, "ErfcBackward0", IN, -g[0] * exp(-x * x) * kTwoOverSqrtPi)
// torch's sinc_backward: zero (+0) where x * x * pi is 0 (x = 0, or x * x underflows)
AG_UNARY_GRAD(sinc, true, "SincBackward0", IN, where(compare(Op::eq, x * x * kPi, wrap_scalar(0.0)), zeros_like(g[0]),
                                                     g[0] * (x * kPi * cos(x * kPi) - sin(x * kPi)) / (x * x * kPi)))
AG_UNARY_GRAD(deg2rad, true, "Deg2RadBackward0", NONE_, g[0] * kPiOver180)
AG_UNARY_GRAD(rad2deg, true, "Rad2DegBackward0", NONE_, g[0] * k180OverPi)
AG_UNARY_GRAD(tanh, true, "TanhBackward0", OUT, tanh_backward(g[0], x))
AG_UNARY_GRAD(sigmoid, true, "SigmoidBackward0", OUT, sigmoid_backward(g[0], x))
AG_UNARY_GRAD(relu, false, "ReluBackward0", OUT, relu_backward(g[0], x))
// torch's: one kernel, or differentiable ops when the backward itself is recorded (create_graph).
AG_UNARY_GRAD(silu, false, "SiluBackward0", IN, autograd::GradMode::is_enabled()
              ? g[0] * sigmoid(x) * (x * (1.0 - sigmoid(x)) + 1.0) : silu_backward(g[0], x))
AG_UNARY_GRAD(erf, true, "ErfBackward0", IN, autograd::GradMode::is_enabled() ? g[0] * exp(-x * x) * kTwoOverSqrtPi : erf_backward(g[0], x))
AG_UNARY_GRAD(erfinv, true, "ErfinvBackward0", OUT, g[0] * exp(x * x) * kSqrtPiOver2)
AG_UNARY_NOGRAD(floor, "FloorBackward0")
AG_UNARY_NOGRAD(ceil, "CeilBackward0")
AG_UNARY_NOGRAD(trunc, "TruncBackward0")
AG_UNARY_GRAD(frac, false, "FracBackward0", NONE_, g[0])
AG_UNARY_GRAD(bitwise_not, false, "", NONE_, g[0])

// logical_not returns bool; in place it writes 0/1 in self's dtype.
Tensor logical_not(const Tensor& a) { return elementwise(Op::logical_not, a.sizes(), ScalarType::Bool, {&a}); }
Tensor& logical_not_(Tensor& a) {
  assert_no_internal_overlap(a);
  Tensor r = logical_not(a);
  autograd::before_mutation(a);
  run_elementwise(Op::copy, a, {&r});
  a.bump_version();
  return a;
}

Tensor round(const Tensor& a, int64_t decimals) {
  AG_CHECK_NOT_IMPL(decimals == 0 || is_floating(a.dtype()), "\"round_cpu\" not implemented for '", scalar_type_name(a.dtype()), "'");
  double s[1] = {static_cast<double>(decimals)};
  return unary_impl(Op::round, a, false, "RoundBackward0", NONE_, AG_BW { return {zeros_like(g[0])}; }, s);
}

Tensor gelu(const Tensor& a, const std::string& approximate) {
  AG_CHECK(approximate == "none" || approximate == "tanh", "approximate argument must be either none or tanh.");
  AG_CHECK_NOT_IMPL(is_floating(a.dtype()), "\"GeluKernelImpl\" not implemented for '", scalar_type_name(a.dtype()), "'");
  const bool tanh_form = approximate == "tanh";
  return unary_impl(tanh_form ? Op::gelu_tanh : Op::gelu, a, true, "GeluBackward0", IN, AG_BW {
    return {gelu_backward(g[0], c.get(0), tanh_form ? "tanh" : "none")};
  });
}

Tensor softplus(const Tensor& a, double beta, double threshold) {
  double s[2] = {beta, threshold};
  return unary_impl(Op::softplus, a, false, "SoftplusBackward0", IN, AG_BW {
    return {softplus_backward(g[0], c.get(0), beta, threshold)};
  }, s);
}

// ---- the parametrized activations of torch.nn.functional: one kernel forward, one kernel backward
// (ops/activation_backward.cpp), float dtypes only as torch's "<op>_cpu" kernels.
namespace {
void check_float_act(const Tensor& a, const char* kernel) {
  AG_CHECK_NOT_IMPL(is_floating(a.dtype()), "\"", kernel, "\" not implemented for '", scalar_type_name(a.dtype()), "'");
}
// The in-place form: written straight into self when no history is recorded, else computed out of
// place and rebased (Note [In-place ops]), so a failed check leaves self as it was.
// The overlap check comes first, as torch's TensorIterator runs it before the kernel's dtype check.
Tensor& act_inplace(Tensor& a, Op op, const double* s, const std::function<Tensor()>& compute, const char* name,
                    const char* kernel) {
  assert_no_internal_overlap(a);
  check_float_act(a, kernel);
  if ((!autograd::GradMode::is_enabled() || !a.requires_grad()) && !fw_has(a)) {
    autograd::before_mutation(a);
    run_elementwise(op, a, {&a}, s);
    a.bump_version();
    return a;
  }
  return apply_inplace(a, compute, name);
}
Tensor elu_impl(const Tensor& a, double alpha, double scale, double input_scale, const char* bw_name) {
  check_float_act(a, "elu_cpu");
  double s[3] = {alpha, scale, input_scale};
  return unary_impl(Op::elu, a, false, bw_name, IN, AG_BW {
    return {elu_backward(g[0], c.get(0), alpha, scale, input_scale)};
  }, s);
}
constexpr double kSeluAlpha = 1.6732632423543772848170429916717, kSeluScale = 1.0507009873554804934193349852946;
}  // namespace

Tensor elu(const Tensor& a, double alpha, double scale, double input_scale) {
  return elu_impl(a, alpha, scale, input_scale, "EluBackward0");
}
Tensor celu(const Tensor& a, double alpha) {
  AG_CHECK(alpha != 0.0, "ZeroDivisionError: alpha cannot be 0 for CELU");
  return elu_impl(a, alpha, 1.0, 1.0 / alpha, "CeluBackward0");
}
Tensor selu(const Tensor& a) { return elu_impl(a, kSeluAlpha, kSeluScale, 1.0, "EluBackward0"); }
Tensor leaky_relu(const Tensor& a, double slope) {
  check_float_act(a, "leaky_relu_cpu");
  double s[1] = {slope};
  return unary_impl(Op::leaky_relu, a, false, "LeakyReluBackward0", IN, AG_BW {
    return {leaky_relu_backward(g[0], c.get(0), slope)};
  }, s);
}
Tensor hardsigmoid(const Tensor& a) {
  check_float_act(a, "hardsigmoid_cpu");
  return unary_impl(Op::hardsigmoid, a, false, "HardsigmoidBackward0", IN, AG_BW { return {hardsigmoid_backward(g[0], c.get(0))}; });
}
Tensor hardswish(const Tensor& a) {
  check_float_act(a, "hardswish_cpu");
  return unary_impl(Op::hardswish, a, false, "HardswishBackward0", IN, AG_BW { return {hardswish_backward(g[0], c.get(0))}; });
}
// Under create_graph the backward composes differentiable ops (torch's infinitely_differentiable_mish_backward).
Tensor mish(const Tensor& a) {
  check_float_act(a, "mish_cpu");
  return unary_impl(Op::mish, a, false, "MishBackward0", IN, AG_BW {
    Tensor x = c.get(0);
    if (!autograd::GradMode::is_enabled()) return {mish_backward(g[0], x)};
    Tensor sg = sigmoid(x), ts = tanh(softplus(x));
    return {g[0] * (ts + x * sg * (1.0 - ts * ts))};
  });
}
Tensor log_sigmoid(const Tensor& a) {
  check_float_act(a, "log_sigmoid_cpu");
  return unary_impl(Op::log_sigmoid, a, false, "LogSigmoidBackward0", IN, AG_BW { return {log_sigmoid_backward(g[0], c.get(0))}; });
}
Tensor& elu_(Tensor& a, double alpha, double scale, double input_scale) {
  double s[3] = {alpha, scale, input_scale};
  return act_inplace(a, Op::elu, s, [&] { return elu(a, alpha, scale, input_scale); }, "elu_", "elu_cpu");
}
Tensor& celu_(Tensor& a, double alpha) {
  AG_CHECK(alpha != 0.0, "ZeroDivisionError: alpha cannot be 0 for CELU");
  double s[3] = {alpha, 1.0, 1.0 / alpha};
  return act_inplace(a, Op::elu, s, [&] { return celu(a, alpha); }, "celu_", "elu_cpu");
}
Tensor& selu_(Tensor& a) {
  double s[3] = {kSeluAlpha, kSeluScale, 1.0};
  return act_inplace(a, Op::elu, s, [&] { return selu(a); }, "selu_", "elu_cpu");
}
Tensor& leaky_relu_(Tensor& a, double slope) {
  double s[1] = {slope};
  return act_inplace(a, Op::leaky_relu, s, [&] { return leaky_relu(a, slope); }, "leaky_relu_", "leaky_relu_cpu");
}
Tensor& hardsigmoid_(Tensor& a) {
  return act_inplace(a, Op::hardsigmoid, nullptr, [&] { return hardsigmoid(a); }, "hardsigmoid_", "hardsigmoid_cpu");
}
Tensor& hardswish_(Tensor& a) {
  return act_inplace(a, Op::hardswish, nullptr, [&] { return hardswish(a); }, "hardswish_", "hardswish_cpu");
}
Tensor& mish_(Tensor& a) {
  return act_inplace(a, Op::mish, nullptr, [&] { return mish(a); }, "mish_", "mish_cpu");
}

Tensor isnan(const Tensor& a) { return elementwise(Op::isnan, a.sizes(), ScalarType::Bool, {&a}); }
Tensor isinf(const Tensor& a) { return elementwise(Op::isinf, a.sizes(), ScalarType::Bool, {&a}); }
Tensor isfinite(const Tensor& a) { return elementwise(Op::isfinite, a.sizes(), ScalarType::Bool, {&a}); }

Tensor nan_to_num(const Tensor& a, std::optional<double> nan, std::optional<double> posinf, std::optional<double> neginf) {
  double big = 0;
  AG_DISPATCH_ALL(a.dtype(), "nan_to_num", [&] {
    if constexpr (std::is_same_v<scalar_t, Half>) big = 65504.0;
    else if constexpr (std::is_same_v<scalar_t, BFloat16>) big = 3.3895313892515355e38;
    else if constexpr (std::is_same_v<scalar_t, bool>) big = 1;
    else big = static_cast<double>(std::numeric_limits<scalar_t>::max());
  });
  double s[3] = {nan.value_or(0.0), posinf.value_or(big), neginf.value_or(-big)};
  if (!is_floating(a.dtype())) return clone(a);
  return unary_impl(Op::nan_to_num, a, false, "NanToNumBackward0", IN, AG_BW {
    return {g[0] * isfinite(c.get(0))};
  }, s);
}

Tensor clamp(const Tensor& a, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  AG_CHECK(lo || hi, "torch.clamp: At least one of 'min' or 'max' must not be None");
  // The bounds take part in promotion as numbers: bool with int bounds -> int64, int with float -> float.
  Tensor wl = lo ? wrap_scalar(*lo) : Tensor(), wh = hi ? wrap_scalar(*hi) : Tensor();
  ScalarType dt = result_type({&a, &wl, &wh});
  if (lo) check_scalar_fits(*lo, dt);
  if (hi) check_scalar_fits(*hi, dt);
  Tensor x = to_dtype(a, dt);
  double inf = std::numeric_limits<double>::infinity();
  double s[2] = {lo ? lo->to_double() : -inf, hi ? hi->to_double() : inf};
  Tensor out = elementwise(Op::clamp, x.sizes(), dt, {&x}, s);
  autograd::BackwardFn bw = AG_BW {
    Tensor v = c.get(0);
    Tensor keep = logical(Op::logical_and, compare(Op::ge, v, wrap_scalar(s[0])), compare(Op::le, v, wrap_scalar(s[1])));
    return {where(keep, g[0], zeros_like(g[0]))};  // torch's where: a NaN grad of a clamped element gives 0
  };
  fw_rule(out, {&x}, [&](const variable_list& t) { return jvp_from_backward(bw, t, {x}); });
  if (is_floating(dt))
    if (auto node = autograd::make_node("ClampBackward1", {&x}, std::move(bw))) {
      autograd::set_history(node, {&out});
      node->save(x);
    }
  return out;
}

Tensor clamp(const Tensor& a, const std::optional<Tensor>& lo, const std::optional<Tensor>& hi) {
  AG_CHECK(lo || hi, "torch.clamp: At least one of 'min' or 'max' must not be None");
  Tensor r = detach(a);
  if (lo) r = maximum(r, detach(*lo));
  if (hi) r = minimum(r, detach(*hi));
  r = detach(r);
  if (!is_floating(r.dtype())) return r;
  // torch's clamp_backward / clamp_backward_min_max: a tie with a bound gives the whole gradient to
  // self; a bound gets it where it wins (min only where min < max, max where self > max or max < min).
  const bool has_lo = lo.has_value(), has_hi = hi.has_value();
  Tensor x = detach(a), l = has_lo ? detach(*lo) : Tensor(), h = has_hi ? detach(*hi) : Tensor();
  auto masks = [=]() {
    Tensor keep, to_lo, to_hi;
    if (has_lo && has_hi) {
      keep = logical(Op::logical_and, compare(Op::ge, x, l), compare(Op::le, x, h));
      to_lo = logical(Op::logical_and, compare(Op::lt, x, l), compare(Op::lt, l, h));
      to_hi = logical(Op::logical_or, compare(Op::gt, x, h), compare(Op::lt, h, l));
    } else if (has_lo) {
      keep = compare(Op::ge, x, l);
      to_lo = compare(Op::lt, x, l);
    } else {
      keep = compare(Op::le, x, h);
      to_hi = compare(Op::gt, x, h);
    }
    return std::array<Tensor, 3>{keep, to_lo, to_hi};
  };
  auto pick = [](const Tensor& m, const Tensor& v) { return m.defined() ? where(m, v, zeros_like(v)) : Tensor(); };
  fw_rule(r, {&a, has_lo ? &*lo : nullptr, has_hi ? &*hi : nullptr}, [&](const variable_list& t) {
    auto m = masks();
    variable_list terms;
    if (t[0].defined()) terms.push_back(pick(m[0], t[0]));
    if (t[1].defined()) terms.push_back(pick(m[1], t[1]));
    if (t[2].defined()) terms.push_back(pick(m[2], t[2]));
    return sum_defined(terms);
  });
  if (auto node = autograd::make_node("ClampBackward0", {&a, has_lo ? &*lo : nullptr, has_hi ? &*hi : nullptr}, AG_BW {
        auto m = masks();
        Tensor ga, gl, gh;
        if (c.needs_input_grad(0)) ga = pick(m[0], g[0]);
        if (c.needs_input_grad(1)) gl = pick(m[1], g[0]);
        if (c.needs_input_grad(2)) gh = pick(m[2], g[0]);
        return {ga, gl, gh};
      }))
    autograd::set_history(node, {&r});
  return r;
}

}  // namespace ampgrad
