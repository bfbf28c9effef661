// Elementwise ternary front ends: where, lerp, addcmul, addcdiv.
#include "ops/internal.h"

namespace ampgrad {

// ---------------------------------------------------------------- ternary
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  AG_CHECK(cond.dtype() == ScalarType::Bool || cond.dtype() == ScalarType::UInt8,
           "where expected condition to be a boolean tensor, but got a tensor with dtype ", dtype_name(cond.dtype()));
  check_same_device(a, b, "where");
  ScalarType dt = result_type({&a, &b});
  Shape shape = broadcast_shapes(cond.sizes(), broadcast_shapes(a.sizes(), b.sizes()));
  Tensor cc = expand(to_dtype(cond, ScalarType::Bool), shape);
  Tensor x = expand(to_dtype(a, dt), shape), y = expand(to_dtype(b, dt), shape);
  Tensor out = elementwise(Op::where, shape, dt, {&cc, &x, &y});
  fw_rule(out, {&a, &b}, [&](const variable_list& t) { return where(cond, or_zeros(t[0], a), or_zeros(t[1], b)); });
  if (is_floating(dt))
    // torch's WhereBackward0 has two edges (self, other): the condition is not an input of the node
    if (auto node = autograd::make_node("WhereBackward0", {&a, &b}, AG_BW {
          Tensor m = c.get(0), z = zeros_like(g[0]);
          return {c.needs_input_grad(0) ? where(m, g[0], z) : Tensor(), c.needs_input_grad(1) ? where(m, z, g[0]) : Tensor()};
        })) {
      autograd::set_history(node, {&out});
      node->save(cond);
    }
  return out;
}

Tensor lerp(const Tensor& a, const Tensor& b, const Tensor& w) {
  // torch does not promote here: end, and a weight tensor with dims, must have input's dtype
  AG_CHECK(b.dtype() == a.dtype(), "expected dtype ", cpp_type_name(a.dtype()), " for `end` but got dtype ", cpp_type_name(b.dtype()));
  AG_CHECK(w.dim() == 0 || w.dtype() == a.dtype(), "expected dtype ", cpp_type_name(a.dtype()), " for `weight` but got dtype ",
           cpp_type_name(w.dtype()));
  ScalarType dt = result_type({&a, &b});
  Shape shape = broadcast_shapes(broadcast_shapes(a.sizes(), b.sizes()), w.sizes());  // (shapes are checked first)
  AG_CHECK_NOT_IMPL(is_floating(dt), "\"", w.impl()->wrapped_number ? "lerp_kernel_scalar" : "lerp_kernel_tensor",
                    "\" not implemented for '", scalar_type_name(dt), "'");
  // A Python-number weight stays at float32 for bf16/fp16 ends (torch's opmath: 0.3 is not rounded to
  // bf16 first); the result is rounded once.
  const bool scalar_w = w.impl()->wrapped_number;
  const ScalarType kt = scalar_w && (dt == ScalarType::BFloat16 || dt == ScalarType::Float16) ? ScalarType::Float32 : dt;
  Tensor x = expand(to_dtype(a, kt), shape), y = expand(to_dtype(b, kt), shape), ww = expand(to_dtype(w, kt), shape);
  Tensor out = elementwise(Op::lerp, shape, kt, {&x, &y, &ww});
  if (kt != dt) out = to_dtype(out, dt);
  autograd::BackwardFn bw = AG_BW {
    Tensor x = c.get(0), y = c.get(1), w = c.get(2);
    return {c.needs_input_grad(0) ? g[0] * (1.0 - w) : Tensor(), c.needs_input_grad(1) ? g[0] * w : Tensor(),
            c.needs_input_grad(2) ? g[0] * (y - x) : Tensor()};
  };
  fw_rule(out, {&a, &b, &w}, [&](const variable_list& t) { return jvp_from_backward(bw, t, {a, b, w}); });
  if (auto node = autograd::make_node(scalar_w ? "LerpBackward0" : "LerpBackward1", {&a, &b, &w}, std::move(bw))) {
    autograd::set_history(node, {&out});
    node->save(a); node->save(b); node->save(w);
  }
  return out;
}

static Tensor addc(Op op, const char* name, const Tensor& s0, const Tensor& t10, const Tensor& t20, Scalar value) {
  Tensor s = s0, t1 = t10, t2 = t20;
  ScalarType dt = result_type({&s, &t1, &t2});
  if (op == Op::addcdiv)
    AG_CHECK(is_floating(dt), "Integer division with addcdiv is no longer supported, and in a future release addcdiv will "
             "perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as "
             "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
             "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter "
             "implementation: (input + value * tensor1 / tensor2), for all dtypes.");
  Shape shape = broadcast_shapes(broadcast_shapes(s.sizes(), t1.sizes()), t2.sizes());
  Tensor x = expand(to_dtype(s, dt), shape), y = expand(to_dtype(t1, dt), shape), z = expand(to_dtype(t2, dt), shape);
  double sc[1] = {value.to_double()};
  Tensor out = elementwise(op, shape, dt, {&x, &y, &z}, sc);
  double v = value.to_double();
  bool is_mul = op == Op::addcmul;
  autograd::BackwardFn bw = AG_BW {
    Tensor a = c.get(0), b = c.get(1);
    Tensor gs = c.needs_input_grad(0) ? g[0] : Tensor();
    if (is_mul) return {gs, c.needs_input_grad(1) ? g[0] * b * v : Tensor(), c.needs_input_grad(2) ? g[0] * a * v : Tensor()};
    return {gs, c.needs_input_grad(1) ? g[0] * v / b : Tensor(), c.needs_input_grad(2) ? -g[0] * v * a / (b * b) : Tensor()};
  };
  fw_rule(out, {&s, &t1, &t2}, [&](const variable_list& t) { return jvp_from_backward(bw, t, {t1, t2}); });
  if (is_floating(dt))
    if (auto node = autograd::make_node(name, {&s, &t1, &t2}, std::move(bw))) {
      autograd::set_history(node, {&out});
      node->save(t1); node->save(t2);
    }
  return out;
}
Tensor addcmul(const Tensor& s, const Tensor& t1, const Tensor& t2, Scalar v) { return addc(Op::addcmul, "AddcmulBackward0", s, t1, t2, v); }
Tensor addcdiv(const Tensor& s, const Tensor& t1, const Tensor& t2, Scalar v) { return addc(Op::addcdiv, "AddcdivBackward0", s, t1, t2, v); }

}  // namespace ampgrad
