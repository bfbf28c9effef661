// One-kernel activation backward ops (torch's aten::sigmoid_backward, tanh_backward, gelu_backward,
// silu_backward, softplus_backward): the backward closures of the forward activations call these, and
// each records its own backward (torch's *BackwardBackward0), so double backward and jvp still work.
#include "ops/internal.h"

namespace ampgrad {

namespace {
// grad and the saved tensor (same shape in practice; broadcast anyway) in their common float dtype.
Tensor run_act_backward(Op op, const Tensor& g, const Tensor& x, const double* s = nullptr) {
  check_same_device(g, x, op_name(op));
  const Tensor* gx[2] = {&g, &x};
  ScalarType dt = float_dtype(result_type(gx, 2));
  Shape shape = broadcast_shapes(g.sizes(), x.sizes());
  Tensor ge = expand(to_dtype(g, dt), shape), xe = expand(to_dtype(x, dt), shape);
  return elementwise(op, shape, dt, {&ge, &xe}, s);
}

// Records the node of out = op(g, x): bw reads c.get(0) = g and c.get(1) = x.
void record_act_backward(const char* name, const Tensor& g, const Tensor& x, Tensor& out, autograd::BackwardFn bw) {
  fw_rule(out, {&g, &x}, [&](const variable_list& t) { return jvp_from_backward(bw, t, {g, x}); });
  if (auto node = autograd::make_node(name, {&g, &x}, std::move(bw))) {
    autograd::set_history(node, {&out});
    node->saved.reserve(2);
    node->save(g);
    node->save(x);
  }
}
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
}  // namespace

Tensor sigmoid_backward(const Tensor& g, const Tensor& y) {
  Tensor out = run_act_backward(Op::sigmoid_backward, g, y);
  record_act_backward("SigmoidBackwardBackward0", g, y, out, AG_BW {
    Tensor go = c.get(0), yy = c.get(1);
    return {c.needs_input_grad(0) ? sigmoid_backward(g[0], yy) : Tensor(),
            c.needs_input_grad(1) ? g[0] * go * (yy * -2.0 + 1.0) : Tensor()};
  });
  return out;
}

Tensor tanh_backward(const Tensor& g, const Tensor& y) {
  Tensor out = run_act_backward(Op::tanh_backward, g, y);
  record_act_backward("TanhBackwardBackward0", g, y, out, AG_BW {
    Tensor go = c.get(0), yy = c.get(1);
    return {c.needs_input_grad(0) ? tanh_backward(g[0], yy) : Tensor(),
            c.needs_input_grad(1) ? g[0] * go * yy * -2.0 : Tensor()};
  });
  return out;
}

// torch's gelu_double_backward for the self term.
Tensor gelu_backward(const Tensor& g, const Tensor& x, const std::string& approximate) {
  const bool tanh_form = approximate == "tanh";
  Tensor out = run_act_backward(tanh_form ? Op::gelu_tanh_backward : Op::gelu_backward, g, x);
  record_act_backward("GeluBackwardBackward0", g, x, out, AG_BW {
    Tensor go = c.get(0), xx = c.get(1);
    Tensor gx;
    if (c.needs_input_grad(1)) {
      if (!tanh_form) {  // d/dx (cdf + x pdf) = pdf (2 - x^2)
        Tensor pdf = exp(xx * xx * -0.5) * kInvSqrt2Pi;
        gx = g[0] * go * pdf * (2.0 - xx * xx);
      } else {  // u = k (x + k1 x^3), t = tanh(u): f'' = (1 - t^2) (u' - x t u'^2 + x u'' / 2)
        const double k = 0.79788456080286535588, k1 = 0.044715;
        Tensor x2 = xx * xx;
        Tensor t = tanh((xx + x2 * xx * k1) * k);
        Tensor du = (x2 * (3.0 * k1) + 1.0) * k;
        Tensor ddu = xx * (6.0 * k * k1);
        gx = g[0] * go * (1.0 - t * t) * (du - xx * t * du * du + xx * ddu * 0.5);
      }
    }
    return {c.needs_input_grad(0) ? gelu_backward(g[0], xx, tanh_form ? "tanh" : "none") : Tensor(), gx};
  });
  return out;
}

// Only run without grad mode: under create_graph, SiluBackward0 composes differentiable ops, as
// torch's infinitely_differentiable_silu_backward does (so the second-order graph matches torch's).
Tensor silu_backward(const Tensor& g, const Tensor& x) { return run_act_backward(Op::silu_backward, g, x); }

// torch's softplus_double_backward for the self term: 0 where beta * x > threshold.
Tensor softplus_backward(const Tensor& g, const Tensor& x, double beta, double threshold) {
  double s[4] = {0, 0, beta, threshold};
  Tensor out = run_act_backward(Op::softplus_backward, g, x, s);
  record_act_backward("SoftplusBackwardBackward0", g, x, out, AG_BW {
    Tensor go = c.get(0), xx = c.get(1);
    Tensor gx;
    if (c.needs_input_grad(1)) {
      Tensor z = xx * beta;
      Tensor sg = sigmoid(z);
      Tensor d = g[0] * go * sg * (1.0 - sg) * beta;
      gx = where(compare(Op::gt, z, wrap_scalar(threshold)), zeros_like(d), d);
    }
    return {c.needs_input_grad(0) ? softplus_backward(g[0], xx, beta, threshold) : Tensor(), gx};
  });
  return out;
}

Tensor elu_backward(const Tensor& g, const Tensor& x, double alpha, double scale, double input_scale) {
  double s[5] = {0, 0, alpha, scale, input_scale};
  Tensor out = run_act_backward(Op::elu_backward, g, x, s);
  record_act_backward("EluBackwardBackward0", g, x, out, AG_BW {
    Tensor go = c.get(0), xx = c.get(1);
    Tensor gx;
    if (c.needs_input_grad(1)) {  // alpha scale is^2 e^(is x) for x < 0 (0 at x = 0, torch's elu_double_backward)
      Tensor d = g[0] * go * exp(xx * input_scale) * (input_scale * input_scale * alpha * scale);
      gx = where(compare(Op::lt, xx, wrap_scalar(0.0)), d, zeros_like(d));
    }
    return {c.needs_input_grad(0) ? elu_backward(g[0], xx, alpha, scale, input_scale) : Tensor(), gx};
  });
  return out;
}

Tensor leaky_relu_backward(const Tensor& g, const Tensor& x, double slope) {
  double s[3] = {0, 0, slope};
  Tensor out = run_act_backward(Op::leaky_relu_backward, g, x, s);
  record_act_backward("LeakyReluBackwardBackward0", g, x, out, AG_BW {
    Tensor xx = c.get(1);
    return {c.needs_input_grad(0) ? leaky_relu_backward(g[0], xx, slope) : Tensor(),
            c.needs_input_grad(1) ? zeros_like(g[0] * xx) : Tensor()};
  });
  return out;
}

Tensor hardsigmoid_backward(const Tensor& g, const Tensor& x) {
  Tensor out = run_act_backward(Op::hardsigmoid_backward, g, x);
  record_act_backward("HardsigmoidBackwardBackward0", g, x, out, AG_BW {
    Tensor xx = c.get(1);
    return {c.needs_input_grad(0) ? hardsigmoid_backward(g[0], xx) : Tensor(),
            c.needs_input_grad(1) ? zeros_like(g[0] * xx) : Tensor()};
  });
  return out;
}

// torch's hardswish double backward: g gg / 3 inside (-3, 3), else 0.
Tensor hardswish_backward(const Tensor& g, const Tensor& x) {
  Tensor out = run_act_backward(Op::hardswish_backward, g, x);
  record_act_backward("HardswishBackwardBackward0", g, x, out, AG_BW {
    Tensor go = c.get(0), xx = c.get(1);
    Tensor gx;
    if (c.needs_input_grad(1)) {
      Tensor d = g[0] * go / 3.0;
      Tensor inside = logical(Op::logical_and, compare(Op::gt, xx, wrap_scalar(-3.0)), compare(Op::lt, xx, wrap_scalar(3.0)));
      gx = where(inside, d, zeros_like(d));
    }
    return {c.needs_input_grad(0) ? hardswish_backward(g[0], xx) : Tensor(), gx};
  });
  return out;
}

// Only run without grad mode (ErfBackward0 composes differentiable ops under create_graph).
Tensor erf_backward(const Tensor& g, const Tensor& x) { return run_act_backward(Op::erf_backward, g, x); }

// Only run without grad mode (MishBackward0 composes differentiable ops under create_graph).
Tensor mish_backward(const Tensor& g, const Tensor& x) { return run_act_backward(Op::mish_backward, g, x); }

// torch's log_sigmoid_double_backward for the self term: g gg (z - 1) z, z = sigmoid(x).
Tensor log_sigmoid_backward(const Tensor& g, const Tensor& x) {
  Tensor out = run_act_backward(Op::log_sigmoid_backward, g, x);
  record_act_backward("LogSigmoidBackwardBackward0", g, x, out, AG_BW {
    Tensor go = c.get(0), xx = c.get(1);
    Tensor gx;
    if (c.needs_input_grad(1)) {
      Tensor z = sigmoid(xx);
      gx = g[0] * go * (z - 1.0) * z;
    }
    return {c.needs_input_grad(0) ? log_sigmoid_backward(g[0], xx) : Tensor(), gx};
  });
  return out;
}

}  // namespace ampgrad
