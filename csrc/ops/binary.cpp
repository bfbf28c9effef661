// Elementwise binary front ends (prepare / run_binary / record2), their backward formulas, and
// the in-place binary_.
#include "ops/internal.h"

namespace ampgrad {

// ---------------------------------------------------------------- binary
namespace {
// Prepares operands in the compute dtype. A 0-dim CPU operand of a floating op is passed to the
// kernel as a scalar in fp32/fp64 registers, as torch's CPU kernels do (no rounding to fp16).
struct Binary {
  Tensor a, b;
  ScalarType dt;
  Shape shape;
  double s[4] = {0, 0, 1, 0};  // scalar value, scalar position (0 none, 1 b, 2 a), alpha, extra
  bool weak = false;           // both operands are wrapped numbers
};

// torch casts a 0-d operand to the common dtype before the kernel computes in float (2**40 becomes
// inf in float16); only mul and div read the original scalar in opmath precision.
static double scalar_operand(Op op, const Tensor& t, ScalarType dt) {
  double v = item_double(t);
  if (op == Op::mul || op == Op::div) return v;
  if (dt == ScalarType::Float16) return static_cast<float>(Half(static_cast<float>(v)));
  if (dt == ScalarType::BFloat16) return static_cast<float>(BFloat16(static_cast<float>(v)));
  return v;
}

Binary prepare(Op op, const Tensor& a, const Tensor& b, bool want_float) {
  check_same_device(a, b, op_name(op));
  Binary r;
  const Tensor* ab[2] = {&a, &b};
  r.dt = result_type(ab, 2);
  // Two Python numbers (this happens in backward formulas, e.g. `e - 1.0` for a scalar exponent)
  // are combined in double and stay a weak wrapped number, as Python arithmetic would: rounding
  // to the default dtype here would cost float64 gradients their precision.
  r.weak = a.impl()->wrapped_number && b.impl()->wrapped_number;
  if (r.weak) r.dt = promote_types(a.dtype(), b.dtype());
  if (want_float && !is_floating(r.dt)) r.dt = r.weak ? ScalarType::Float64 : default_dtype();
  r.shape = broadcast_shapes(a.sizes(), b.sizes());
  if (is_floating(r.dt) && b.dim() == 0 && a.dim() > 0 && b.device().is_cpu()) {
    r.s[0] = scalar_operand(op, b, r.dt); r.s[1] = 1;
    r.a = to_dtype(a, r.dt);
  } else if (is_floating(r.dt) && a.dim() == 0 && b.dim() > 0 && a.device().is_cpu()) {
    r.s[0] = scalar_operand(op, a, r.dt); r.s[1] = 2;
    r.b = to_dtype(b, r.dt);
  } else {
    r.a = expand(to_dtype(a, r.dt), r.shape);
    r.b = expand(to_dtype(b, r.dt), r.shape);
  }
  return r;
}

Tensor run_binary(Op op, Binary& p, ScalarType out_dt) {
  Shape st = p.s[1] == 1 ? output_strides(p.shape, {&p.a}) : p.s[1] == 2 ? output_strides(p.shape, {&p.b})
                                                                          : output_strides(p.shape, {&p.a, &p.b});
  Tensor out = empty_strided(std::move(p.shape), std::move(st), out_dt, (p.s[1] == 2 ? p.b : p.a).device());
  if (p.weak && out_dt == p.dt) out.impl()->wrapped_number = true;
  if (p.s[1] == 1) run_elementwise(op, out, {&p.a}, p.s);
  else if (p.s[1] == 2) run_elementwise(op, out, {&p.b}, p.s);
  else run_elementwise(op, out, {&p.a, &p.b}, p.s);
  return out;
}

// `own_jvp`: the op sets its tangent itself; otherwise it comes from the backward (elementwise).
void record2(const char* name, const Tensor& a, const Tensor& b, Tensor& out, bool save_a, bool save_b,
             std::function<variable_list(FunctionNode&, const variable_list&)> bw, bool save_out = false, bool own_jvp = false) {
  if (!is_floating(out.dtype())) return;
  if (!own_jvp) fw_rule(out, {&a, &b}, [&](const variable_list& t) { return jvp_from_backward(bw, t, {a, b, out}); });
  if (auto node = autograd::make_node(name, {&a, &b}, std::move(bw))) {
    autograd::set_history(node, {&out});
    if (!save_a && !save_b && !save_out) return;  // get(i) of an unsaved slot is undefined anyway
    node->saved.reserve(3);
    node->save(save_a ? a : Tensor());
    node->save(save_b ? b : Tensor());
    if (save_out) node->save(out, true);
  }
}
}  // namespace

// torch's alpha_check: a bool alpha needs a bool result, a float alpha a floating one.
static void check_alpha(ScalarType dt, Scalar alpha) {
  AG_CHECK(alpha.kind != Scalar::Bool || dt == ScalarType::Bool, "Boolean alpha only supported for Boolean results.");
  AG_CHECK(is_floating(dt) || alpha.kind != Scalar::Float,
           "For integral input tensors, argument alpha must not be a floating point number.");
  check_scalar_fits(alpha, dt);
}

Tensor add(const Tensor& a, const Tensor& b, Scalar alpha) {
  Binary p = prepare(Op::add, a, b, false);
  check_alpha(p.dt, alpha);
  p.s[2] = alpha.to_double();
  Tensor out = run_binary(Op::add, p, p.dt);
  double al = alpha.to_double();
  record2("AddBackward0", a, b, out, false, false, AG_BW {
    return {g[0], c.needs_input_grad(1) ? (al == 1.0 ? g[0] : g[0] * al) : Tensor()};
  });
  return out;
}

Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha) {
  AG_CHECK(a.dtype() != ScalarType::Bool || b.dtype() != ScalarType::Bool,
           "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead.");
  AG_CHECK(a.dtype() != ScalarType::Bool && b.dtype() != ScalarType::Bool,
           "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, "
           "use the `~` or `logical_not()` operator instead.");
  Binary p = prepare(Op::sub, a, b, false);
  check_alpha(p.dt, alpha);
  p.s[2] = alpha.to_double();
  Tensor out = run_binary(Op::sub, p, p.dt);
  double al = alpha.to_double();
  record2("SubBackward0", a, b, out, false, false, AG_BW {
    return {g[0], c.needs_input_grad(1) ? (al == 1.0 ? -g[0] : g[0] * -al) : Tensor()};
  });
  return out;
}

Tensor mul(const Tensor& a, const Tensor& b) {
  Binary p = prepare(Op::mul, a, b, false);
  Tensor out = run_binary(Op::mul, p, p.dt);
  bool ga = a.requires_grad(), gb = b.requires_grad();
  record2("MulBackward0", a, b, out, gb, ga, AG_BW {
    return {c.needs_input_grad(0) ? g[0] * c.get(1) : Tensor(), c.needs_input_grad(1) ? g[0] * c.get(0) : Tensor()};
  });
  return out;
}

Tensor relu_backward(const Tensor& g, const Tensor& out) {
  Binary p = prepare(Op::relu_backward, g, out, false);
  Tensor r = run_binary(Op::relu_backward, p, p.dt);
  record2("ThresholdBackwardBackward0", g, out, r, false, true, AG_BW {
    return {c.needs_input_grad(0) ? relu_backward(g[0], c.get(1)) : Tensor(), Tensor()};
  });
  return r;
}

Tensor div(const Tensor& a, const Tensor& b, const std::string& mode) {
  if (mode.empty()) {
    Binary p = prepare(Op::div, a, b, true);
    Tensor out = run_binary(Op::div, p, p.dt);
    record2("DivBackward0", a, b, out, b.requires_grad(), true, AG_BW {
      Tensor bb = c.get(1);
      return {c.needs_input_grad(0) ? g[0] / bb : Tensor(), c.needs_input_grad(1) ? -g[0] * c.get(0) / (bb * bb) : Tensor()};
    });
    return out;
  }
  AG_CHECK(mode == "trunc" || mode == "floor",
           "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '", mode, "'");
  Op op = mode == "trunc" ? Op::div_trunc : Op::div_floor;
  Binary p = prepare(op, a, b, false);
  AG_CHECK_NOT_IMPL(p.dt != ScalarType::Bool, "\"", op_name(op), "_cpu\" not implemented for 'Bool'");
  if (!is_floating(p.dt) && p.b.defined()) {  // integer division by zero
    Tensor zero = compare(Op::eq, p.b, wrap_scalar(int64_t(0)));
    AG_CHECK(item_double(any(zero, std::nullopt, false)) == 0, "ZeroDivisionError");
  }
  Tensor out = run_binary(op, p, p.dt);
  record2("DivBackward2", a, b, out, false, false, AG_BW {
    return {zeros_like(g[0]), c.needs_input_grad(1) ? zeros_like(g[0]) : Tensor()};
  });
  return out;
}

Tensor pow(const Tensor& a, const Tensor& b) {
  Binary p = prepare(Op::pow, a, b, false);
  // Only a Python-number exponent is checked (a tensor exponent, even 0-dim, gives 0 like torch).
  if (!is_floating(p.dt) && b.impl()->wrapped_number && is_integral(b.dtype(), true))
    AG_CHECK(item_double(b) >= 0, "Integers to negative integer powers are not allowed.");
  // A scalar exponent of +-0.5 or -1 runs torch's sqrt/rsqrt/reciprocal kernels (pow(-0., -0.5) is
  // -inf and pow(-inf, 0.5) nan there, unlike std::pow).
  Op kop = Op::pow;
  if (p.s[1] == 1 && is_floating(p.dt) && b.impl()->wrapped_number)  // a 0-d tensor exponent takes std::pow, as in torch
    kop = p.s[0] == 0.5 ? Op::sqrt : p.s[0] == -0.5 ? Op::rsqrt : p.s[0] == -1.0 ? Op::reciprocal : Op::pow;
  Tensor out;
  if (kop == Op::pow) {
    out = run_binary(Op::pow, p, p.dt);
  } else {
    out = empty_strided(p.shape, output_strides(p.shape, {&p.a}), p.dt, p.a.device());
    run_elementwise(kop, out, {&p.a});
  }
  const bool scalar_exp = b.impl()->wrapped_number;
  const char* name = scalar_exp ? "PowBackward0" : "PowBackward1";
  // The result is saved only for the exponent's gradient (torch's PowBackward0 saves self alone).
  record2(name, a, b, out, true, true, AG_BW {
    Tensor x = c.get(0), e = c.get(1), y = c.get(2);
    Tensor ga, gb;
    if (c.needs_input_grad(0)) {
      ga = g[0] * e * pow(x, e - 1.0);
      ga = where(compare(Op::eq, e, wrap_scalar(0.0)), zeros_like(ga), ga);
    }
    if (c.needs_input_grad(1)) {
      // torch's pow_backward_exponent: grad * where(x == 0 & e >= 0, 0, y * log(x)) (the sign of a zero follows grad)
      Tensor zero_base = logical(Op::logical_and, compare(Op::eq, x, wrap_scalar(0.0)), compare(Op::ge, e, wrap_scalar(0.0)));
      Tensor ylog = y * log(x);
      gb = g[0] * where(zero_base, zeros_like(ylog), ylog);
    }
    return {ga, gb};
  }, !scalar_exp);
  return out;
}

// A binary op whose gradient is one formula per operand (Note [Op table]): x, y are the operands, out
// the result, g the incoming gradient; the jvp is derived from the formulas. to_float: integer
// operands compute in the default float dtype (torch's float ops).
#define AG_BINARY_GRAD(name, to_float, bw_name, formula_x, formula_y)                                  \
  Tensor name(const Tensor& a, const Tensor& b) {                                                     \
    Binary p = prepare(Op::name, a, b, to_float);                                                     \
    Tensor out = run_binary(Op::name, p, p.dt);                                                       \
    record2(bw_name, a, b, out, true, true, AG_BW {                                                   \
      Tensor x = c.get(0), y = c.get(1), out = c.get(2);                                              \
      (void)x; (void)y; (void)out;                                                                    \
      return {c.needs_input_grad(0) ? Tensor(formula_x) : Tensor(), c.needs_input_grad(1) ? Tensor(formula_y) : Tensor()}; \
    }, true);                                                                                         \
    return out;                                                                                       \
  }

AG_BINARY_GRAD(hypot, false, "HypotBackward0", g[0] * x / out, g[0] * y / out)
// torch's copysign_tensor_self_backward: out / x, 0 where x is 0; the sign operand gets zeros.
AG_BINARY_GRAD(copysign, true, "CopysignBackward0", g[0] * where(compare(Op::eq, x, wrap_scalar(0.0)), zeros_like(x), out / x),
               zeros_like(g[0]))
AG_BINARY_GRAD(logaddexp, false, "LogaddexpBackward0", g[0] / (exp(y - x) + 1.0), g[0] / (exp(x - y) + 1.0))
// torch's: x's side where x >= y (x <= y for fmin) or y is NaN, y's side elsewhere (ties go to x).
AG_BINARY_GRAD(fmax, false, "FmaxBackward0", where(logical_or(ge(x, y), isnan(y)), g[0], zeros_like(g[0])),
               where(logical_or(ge(x, y), isnan(y)), zeros_like(g[0]), g[0]))
AG_BINARY_GRAD(fmin, false, "FminBackward0", where(logical_or(le(x, y), isnan(y)), g[0], zeros_like(g[0])),
               where(logical_or(le(x, y), isnan(y)), zeros_like(g[0]), g[0]))
// torch's: xlogy(g, y), 0 where x == 0 and y <= 0; g * x / y.
AG_BINARY_GRAD(xlogy, true, "XlogyBackward0",
               where(logical_and(eq(x, wrap_scalar(0.0)), le(y, wrap_scalar(0.0))), zeros_like(g[0]), xlogy(g[0], y)),
               g[0] * x / y)
AG_BINARY_GRAD(logaddexp2, false, "Logaddexp2Backward0", g[0] / (exp2(y - x) + 1.0), g[0] / (exp2(x - y) + 1.0))

Tensor atan2(const Tensor& a0, const Tensor& b0) {
  Tensor a = a0, b = b0;
  Binary p = prepare(Op::atan2, a, b, true);
  Tensor out = run_binary(Op::atan2, p, p.dt);
  record2("Atan2Backward0", a, b, out, true, true, AG_BW {
    // torch's atan2_backward: 1 / (x^2 + y^2), 0 at the origin (a zero gradient there, not 0/0)
    Tensor x = c.get(0), y = c.get(1), r = x * x + y * y;
    Tensor rr = where(compare(Op::eq, r, wrap_scalar(0.0)), zeros_like(r), reciprocal(r));
    return {c.needs_input_grad(0) ? g[0] * y * rr : Tensor(), c.needs_input_grad(1) ? g[0] * -x * rr : Tensor()};
  });
  return out;
}

static Tensor minmax(Op op, const char* name, const Tensor& a, const Tensor& b) {
  Binary p = prepare(op, a, b, false);
  Tensor out = run_binary(op, p, p.dt);
  Op lose = op == Op::maximum ? Op::lt : Op::gt;
  // torch's jvp: b's tangent unless a wins (half of each at ties); with a nan neither wins.
  fw_rule(out, {&a, &b}, [&](const variable_list& t) {
    Tensor ta = or_zeros(t[0], a), tb = or_zeros(t[1], b);
    Tensor wa = where(compare(Op::eq, a, b), full({}, Scalar(0.5), out.dtype()), to_dtype(compare(lose, b, a), out.dtype()));
    return tb + wa * (ta - tb);
  });
  record2(name, a, b, out, true, true, AG_BW {
    Tensor x = c.get(0), y = c.get(1);
    Tensor half_g = where(compare(Op::eq, x, y), g[0] * 0.5, g[0]);
    Tensor ga = where(compare(lose, x, y), zeros_like(half_g), half_g);
    Tensor gb = where(compare(lose, y, x), zeros_like(half_g), half_g);
    return {ga, gb};
  }, false, true);
  return out;
}
Tensor maximum(const Tensor& a, const Tensor& b) { return minmax(Op::maximum, "MaximumBackward0", a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return minmax(Op::minimum, "MinimumBackward0", a, b); }

static Tensor modop(Op op, const char* name, const Tensor& a, const Tensor& b) {
  Binary p = prepare(op, a, b, false);
  AG_CHECK_NOT_IMPL(p.dt != ScalarType::Bool, "\"", op_name(op), "_cpu\" not implemented for 'Bool'");
  if (!is_floating(p.dt) && p.b.defined()) {
    Tensor zero = compare(Op::eq, p.b, wrap_scalar(int64_t(0)));
    AG_CHECK(item_double(any(zero, std::nullopt, false)) == 0, "ZeroDivisionError");
  }
  Tensor out = run_binary(op, p, p.dt);
  bool is_fmod = op == Op::fmod;
  record2(name, a, b, out, true, true, AG_BW {
    Tensor q = c.needs_input_grad(1) ? div(c.get(0), c.get(1), is_fmod ? "trunc" : "floor") : Tensor();
    return {g[0], c.needs_input_grad(1) ? -g[0] * q : Tensor()};
  });
  return out;
}
Tensor fmod(const Tensor& a, const Tensor& b) { return modop(Op::fmod, "FmodBackward1", a, b); }
Tensor remainder(const Tensor& a, const Tensor& b) { return modop(Op::remainder, "RemainderBackward1", a, b); }

Tensor compare(Op op, const Tensor& a, const Tensor& b) {
  Binary p = prepare(op, a, b, false);
  return run_binary(op, p, ScalarType::Bool);
}

Tensor logical(Op op, const Tensor& a, const Tensor& b) {
  check_same_device(a, b, op_name(op));
  Shape shape = broadcast_shapes(a.sizes(), b.sizes());
  Tensor x = expand(to_dtype(a, ScalarType::Bool), shape), y = expand(to_dtype(b, ScalarType::Bool), shape);
  return elementwise(op, shape, ScalarType::Bool, {&x, &y});
}

Tensor bitwise(Op op, const Tensor& a, const Tensor& b) {
  Binary p = prepare(op, a, b, false);
  AG_CHECK_NOT_IMPL(!is_floating(p.dt), "\"", op_name(op), "_cpu\" not implemented for '", scalar_type_name(p.dt), "'");
  return run_binary(op, p, p.dt);
}

// The comparison and logical rows' functions (their front ends take the op).
Tensor eq(const Tensor& a, const Tensor& b) { return compare(Op::eq, a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return compare(Op::ne, a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return compare(Op::lt, a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return compare(Op::le, a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return compare(Op::gt, a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return compare(Op::ge, a, b); }
Tensor logical_and(const Tensor& a, const Tensor& b) { return logical(Op::logical_and, a, b); }
Tensor logical_or(const Tensor& a, const Tensor& b) { return logical(Op::logical_or, a, b); }
Tensor logical_xor(const Tensor& a, const Tensor& b) { return logical(Op::logical_xor, a, b); }

static Tensor binary_dispatch(Op op, const Tensor& a, const Tensor& b, Scalar alpha, const std::string& mode) {
  switch (op) {
    case Op::add: return add(a, b, alpha);
    case Op::sub: return sub(a, b, alpha);
    case Op::div: return div(a, b, mode);
    case Op::pow: return pow(a, b);
    case Op::bitwise_and: case Op::bitwise_or: case Op::bitwise_xor: return bitwise(op, a, b);
    // one case per generated binary row of the op table (Note [Op table])
#define AG_BINARY(name, cuda, cpu, dispatch, out, functor, api) AG_IF_GENERATED(api, case Op::name: return name(a, b);)
#define AG_OP(name, cuda, cpu, family)
#include "ops/op_list.def"
    default: AG_THROW(RuntimeError, "binary_: unsupported op ", op_name(op));
  }
}

Tensor& binary_(Op op, Tensor& self, const Tensor& other, Scalar alpha, const std::string& mode) {
  ScalarType rt = result_type({&self, &other});
  if (((op == Op::div && mode.empty()) || op == Op::atan2) && !is_floating(rt)) rt = default_dtype();  // float-valued ops
  bool is_cmp = op == Op::eq || op == Op::ne || op == Op::lt || op == Op::le || op == Op::gt || op == Op::ge ||
                op == Op::logical_and || op == Op::logical_or || op == Op::logical_xor;
  if (!is_cmp)
    AG_CHECK(can_cast(rt, self.dtype()), "result type ", scalar_type_name(rt), " can't be cast to the desired output type ",
             scalar_type_name(self.dtype()));
  Shape bs = broadcast_shapes(self.sizes(), other.sizes());
  AG_CHECK(bs == self.sizes(), "output with shape ", shape_str(self.sizes()), " doesn't match the broadcast shape ", shape_str(bs));
  check_inplace_operands(self, {&other});
  // logical_and_ / _or_ / _xor_ differ from torch on purpose: torch records nothing, so it writes a leaf that
  // requires grad and lets the old gradient flow through the overwritten values (a silently wrong gradient);
  // here the write is checked and recorded, and the overwritten values get zero gradient
  // (tests/test_ops.py::test_inplace_nondifferentiable_overwrite_gets_zero_grad).
  bool grad = autograd::GradMode::is_enabled() && (self.requires_grad() || other.requires_grad());
  const bool relational = op == Op::eq || op == Op::ne || op == Op::lt || op == Op::le || op == Op::gt || op == Op::ge;
  if (relational && grad && is_floating(self.dtype())) {
    // torch's gt_ & co. (derivatives.yaml): a node with zero gradients for both operands (GtBackward0 for a
    // number, GtBackward1 for a tensor), so the result requires grad and the operands get zeros.
    check_inplace(self, op_name(op), true);
    static const char* const names[6][2] = {{"EqBackward0", "EqBackward1"}, {"NeBackward0", "NeBackward1"},
                                             {"LtBackward0", "LtBackward1"}, {"LeBackward0", "LeBackward1"},
                                             {"GtBackward0", "GtBackward1"}, {"GeBackward0", "GeBackward1"}};
    const int k = op == Op::eq ? 0 : op == Op::ne ? 1 : op == Op::lt ? 2 : op == Op::le ? 3 : op == Op::gt ? 4 : 5;
    const char* name = names[k][other.impl()->wrapped_number ? 0 : 1];
    const Shape other_shape = other.sizes();
    const ScalarType other_dt = other.dtype();
    return apply_inplace(self, [&] {
      Tensor out;
      {
        autograd::AutoGradMode m(false);
        out = to_dtype(compare(op, detach(self), other), self.dtype(), true);
      }
      record2(name, self, other, out, false, false, AG_BW {
        (void)c;
        return {zeros_like(g[0]), full(other_shape, Scalar(0.0), other_dt, g[0].device())};
      });
      return out;
    }, op_name(op), {&other});
  }
  if (grad || fw_has(self) || fw_has(other)) {
    if (grad) check_inplace(self, op_name(op), true);
    return apply_inplace(self, [&] { return binary_dispatch(op, self, other, alpha, mode); }, op_name(op));
  }
  const bool arith = op == Op::add || op == Op::sub || op == Op::mul || (op == Op::div && mode.empty()) ||
                     op == Op::maximum || op == Op::minimum;
  const bool overlaps = other.storage() == self.storage() &&
                        !(other.storage_offset() == self.storage_offset() && other.strides() == self.strides());
  if (arith && rt == self.dtype() && !overlaps) {
    // The common optimizer/update case: write straight into self, one pass, no temporary.
    Binary p = prepare(op, self, other, op == Op::div);
    if (op == Op::add || op == Op::sub) check_alpha(p.dt, alpha);  // torch's alpha_check (bool, float alpha)
    p.s[2] = alpha.to_double();
    if (op == Op::sub && self.dtype() == ScalarType::Bool) AG_THROW(RuntimeError, "Subtraction, the `-` operator, with a bool tensor is not supported.");
    autograd::before_mutation(self);
    if (p.s[1] == 1) run_elementwise(op, self, {&p.a}, p.s);
    else run_elementwise(op, self, {&p.a, &p.b}, p.s);
    self.bump_version();
    return self;
  }
  // Otherwise the result is computed out of place then written back (Note [In-place ops]).
  Tensor result;
  {
    autograd::AutoGradMode m(false);
    result = binary_dispatch(op, detach(self), other, alpha, mode);
  }
  // Float-valued ops (xlogy, copysign, ...) on an integer self: torch's cast rule, before any write.
  AG_CHECK(is_cmp || can_cast(result.dtype(), self.dtype()), "result type ", scalar_type_name(result.dtype()),
           " can't be cast to the desired output type ", scalar_type_name(self.dtype()));
  autograd::before_mutation(self);
  Tensor src = result.dtype() == self.dtype() ? result : to_dtype(result, self.dtype());
  run_elementwise(Op::copy, self, {&src});
  self.bump_version();
  return self;
}

}  // namespace ampgrad
