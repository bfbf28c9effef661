// hardshrink, softshrink, threshold(_), rrelu(_) front ends and their backward ops: one elementwise
// kernel each (kernels/cpu/activation_more.cpp), torch's node names (HardshrinkBackward0,
// SoftshrinkBackward0, ThresholdBackward0/1, RreluWithNoiseBackward0/1 and the *BackwardBackward0 of the
// backward ops), double backward and jvp through the backward closures.
#include "ops/activation_more.h"
#include <cfloat>
#include <cstdio>
#include "core/overlap.h"
#include "core/promotion.h"
#include "ops/internal.h"

namespace ampgrad {

namespace {
// out = op(a; s), the node `bw_name` saving a (the backward closure reads c.get(0) = a).
Tensor unary_act(Op op, const Tensor& a, const double* s, const char* bw_name, autograd::BackwardFn bw) {
  Tensor out = elementwise(op, a.sizes(), a.dtype(), {&a}, s);
  if (!is_floating(out.dtype())) return out;
  fw_rule(out, {&a}, [&](const variable_list& t) { return jvp_from_backward(bw, t, {a}); });
  if (auto node = autograd::make_node(bw_name, {&a}, std::move(bw))) {
    autograd::set_history(node, {&out});
    node->save(a);
  }
  return out;
}

// grad masked by x (op: shrink_backward or threshold_backward, s[0] the bound): the node `name` saves g and x;
// its own gradient is the same mask applied to the incoming grad (none for x).
Tensor masked_backward(Op op, const char* name, const Tensor& g, const Tensor& x, double bound) {
  check_same_device(g, x, op_name(op));
  const Tensor* gx[2] = {&g, &x};
  ScalarType dt = float_dtype(result_type(gx, 2));
  Shape shape = broadcast_shapes(g.sizes(), x.sizes());
  Tensor ge = expand(to_dtype(g, dt), shape), xe = expand(to_dtype(x, dt), shape);
  double s[1] = {bound};
  Tensor out = elementwise(op, shape, dt, {&ge, &xe}, s);
  autograd::BackwardFn bw = AG_BW {
    Tensor xx = c.get(1);
    return {c.needs_input_grad(0) ? masked_backward(op, name, g[0], xx, bound) : Tensor(),
            c.needs_input_grad(1) ? zeros_like(xx) : Tensor()};
  };
  fw_rule(out, {&g, &x}, [&](const variable_list& t) { return jvp_from_backward(bw, t, {g, x}); });
  if (auto node = autograd::make_node(name, {&g, &x}, std::move(bw))) {
    autograd::set_history(node, {&out});
    node->saved.reserve(2);
    node->save(g);
    node->save(x);
  }
  return out;
}

// In place: the kernel over self when no history is recorded, else the out-of-place result written back.
template <typename Fn>
Tensor& act_inplace(Tensor& a, Op op, const double* s, const char* name, Fn out_of_place) {
  if ((!autograd::GradMode::is_enabled() || !a.requires_grad()) && !fw_has(a)) {
    assert_no_internal_overlap(a);
    autograd::before_mutation(a);
    run_elementwise(op, a, {&a}, s);
    a.bump_version();
    return a;
  }
  return apply_inplace(a, [&] { return out_of_place(); }, name);
}

Tensor threshold_impl(const Tensor& a, double th, double value, const char* bw_name) {
  double s[2] = {th, value};
  return unary_act(Op::threshold, a, s, bw_name, AG_BW { return {threshold_backward(g[0], c.get(0), th)}; });
}

// rrelu's slopes: U(lower, upper) (training) or (lower + upper) / 2 where a <= 0, 1 elsewhere.
Tensor rrelu_noise(const Tensor& a, double lower, double upper, bool training) {
  double s[2] = {(lower + upper) / 2, training ? 1.0 : 0.0};
  if (!training) return elementwise(Op::rrelu_noise, a.sizes(), a.dtype(), {&a, &a}, s);
  // torch's draws: a double uniform in [lower, upper) for each element <= 0 in element order, none
  // for the others (so the stream advances by the count of non-positive elements)
  Tensor flat = reshape(a, {-1});
  Tensor pos = reshape(nonzero(compare(Op::le, flat, wrap_scalar(Scalar(0.0)))), {-1});
  Tensor u = full({pos.sizes()[0]}, 0.0, ScalarType::Float64, a.device());
  uniform_(u, lower, upper);
  Tensor r = full({flat.sizes()[0]}, 0.0, ScalarType::Float64, a.device());
  r = reshape(index_put(r, {std::optional<Tensor>(pos)}, u, false), a.sizes());
  r = to_dtype(to_dtype(r, is_reduced_float(a.dtype()) ? ScalarType::Float32 : a.dtype()), a.dtype());
  return elementwise(Op::rrelu_noise, a.sizes(), a.dtype(), {&a, &r}, s);
}

Tensor rrelu_impl(const Tensor& a, const Tensor& noise, const char* bw_name) {
  double s[2] = {0.0, 0.0};
  Tensor out = elementwise(Op::mul, a.sizes(), a.dtype(), {&a, &noise}, s);
  autograd::BackwardFn bw = AG_BW { return {g[0] * c.get(0)}; };
  fw_rule(out, {&a}, [&](const variable_list& t) { return jvp_from_backward(bw, t, {noise}); });
  if (auto node = autograd::make_node(bw_name, {&a}, std::move(bw))) {
    autograd::set_history(node, {&out});
    node->save(noise);
  }
  return out;
}

void check_float(const Tensor& a, const char* kernel) {
  AG_CHECK_NOT_IMPL(is_floating(a.dtype()), "\"", kernel, "\" not implemented for '", scalar_type_name(a.dtype()), "'");
}
}  // namespace

Tensor hardshrink_backward(const Tensor& g, const Tensor& x, double lambd) {
  return masked_backward(Op::shrink_backward, "HardshrinkBackwardBackward0", g, x, lambd);
}
Tensor softshrink_backward(const Tensor& g, const Tensor& x, double lambd) {
  return masked_backward(Op::shrink_backward, "SoftshrinkBackwardBackward0", g, x, lambd);
}
Tensor threshold_backward(const Tensor& g, const Tensor& x, double th) {
  return masked_backward(Op::threshold_backward, "ThresholdBackwardBackward0", g, x, th);
}

Tensor hardshrink(const Tensor& a, double lambd) {
  check_float(a, "hardshrink_cpu");
  double s[1] = {lambd};
  return unary_act(Op::hardshrink, a, s, "HardshrinkBackward0", AG_BW { return {hardshrink_backward(g[0], c.get(0), lambd)}; });
}

Tensor softshrink(const Tensor& a, double lambd) {
  check_float(a, "softshrink_check");
  if (!(lambd >= 0 && lambd <= (a.dtype() == ScalarType::Float64 ? DBL_MAX : FLT_MAX))) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", a.dtype() == ScalarType::Float64 ? DBL_MAX : static_cast<double>(FLT_MAX));
    char lb[64];
    std::snprintf(lb, sizeof lb, "%g", lambd);
    const char* tn = a.dtype() == ScalarType::Float64 ? "Double" : a.dtype() == ScalarType::Float32 ? "Float"
                     : a.dtype() == ScalarType::Float16 ? "Half" : "BFloat16";
    AG_THROW(RuntimeError, "lambda must be in range [0, ", buf, "] for input dtype ", tn, ", but found ", lb);
  }
  double s[1] = {lambd};
  return unary_act(Op::softshrink, a, s, "SoftshrinkBackward0", AG_BW { return {softshrink_backward(g[0], c.get(0), lambd)}; });
}

Tensor threshold(const Tensor& a, double th, double value) {
  AG_CHECK_NOT_IMPL(a.dtype() != ScalarType::Bool, "\"threshold_cpu\" not implemented for 'Bool'");
  return threshold_impl(a, th, value, "ThresholdBackward0");
}

Tensor& threshold_(Tensor& a, double th, double value) {
  AG_CHECK_NOT_IMPL(a.dtype() != ScalarType::Bool, "\"threshold_cpu\" not implemented for 'Bool'");
  double s[2] = {th, value};
  return act_inplace(a, Op::threshold, s, "threshold_", [&] { return threshold_impl(a, th, value, "ThresholdBackward1"); });
}

Tensor rrelu(const Tensor& a, double lower, double upper, bool training) {
  check_float(a, training ? "rrelu_with_noise_out_cpu" : "leaky_relu_cpu");
  return rrelu_impl(a, rrelu_noise(a, lower, upper, training), "RreluWithNoiseBackward0");
}

Tensor& rrelu_(Tensor& a, double lower, double upper, bool training) {
  check_float(a, training ? "rrelu_with_noise_out_cpu" : "leaky_relu_cpu");
  Tensor noise = rrelu_noise(a, lower, upper, training);
  if ((!autograd::GradMode::is_enabled() || !a.requires_grad()) && !fw_has(a)) {
    assert_no_internal_overlap(a);
    autograd::before_mutation(a);
    double s[2] = {0.0, 0.0};
    run_elementwise(Op::mul, a, {&a, &noise}, s);
    a.bump_version();
    return a;
  }
  return apply_inplace(a, [&] { return rrelu_impl(a, noise, "RreluWithNoiseBackward1"); }, "rrelu_");
}

}  // namespace ampgrad
