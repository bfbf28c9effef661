// Matrix products. Everything lands on one batched GEMM kernel ([batch, m, k] @ [batch, k, n]
// into a contiguous [batch, m, n] with beta/alpha); composite ops fold their batch dims into it.
#include "amp/gate.h"
#include "ops/internal.h"

namespace ampgrad {

namespace {
void check_mm_dtypes(const Tensor& a, const Tensor& b, const char* what) {
  check_same_device(a, b, what);
  AG_CHECK(a.dtype() == b.dtype(), "expected ", what, " to have the same dtype, but got: ", cpp_type_name(a.dtype()), " != ", cpp_type_name(b.dtype()));
  AG_CHECK_NOT_IMPL(is_floating(a.dtype()) || a.device().is_cpu(), "\"addmm_cuda\" not implemented for '", scalar_type_name(a.dtype()), "'");
}

// out = beta * out + alpha * a @ b over 3-d (batched) or 2-d operands (out already holds the bias
// when beta != 0).
void gemm(const Tensor& a, const Tensor& b, Tensor& out, double beta, double alpha) {
  if (out.numel() == 0) return;
  kernel<GemmKernel>(Op::mm, a.device())(a, b, out, beta, alpha);
}

Tensor mm_raw(const Tensor& a, const Tensor& b) {
  Tensor out = empty({a.sizes()[0], b.sizes()[1]}, a.dtype(), a.device());
  gemm(a, b, out, 0.0, 1.0);
  return out;
}

Tensor mT(const Tensor& t) { return transpose(t, -2, -1); }

// A column-major matrix (a transposed view of a row-major one, e.g. linear's weight.t()).
bool col_major(const Tensor& t) { return t.strides()[0] == 1 && t.strides()[1] >= std::max<int64_t>(t.sizes()[0], 1) && t.sizes()[1] > 1; }

// torch's mm_mat1_backward / mm_mat2_backward: the gradient of a column-major operand is computed
// transposed, so it reaches a transposed parameter already in the parameter's own layout and
// AccumulateGrad can keep it without a copy.
Tensor mm_grad_a(const Tensor& g, const Tensor& b, bool a_col_major) { return a_col_major ? mT(mm(b, mT(g))) : mm(g, mT(b)); }
Tensor mm_grad_b(const Tensor& a, const Tensor& g, bool b_col_major) { return b_col_major ? mT(mm(mT(g), a)) : mm(mT(a), g); }

// torch computes integer results with beta/alpha converted to the integer type (2.6 -> 2).
// The product rule for a bilinear f: f(ta, b) + f(a, tb), skipping absent tangents.
template <typename F>
Tensor bilinear_jvp(F f, const Tensor& a, const Tensor& b, const variable_list& t) {
  return sum_defined({t[0].defined() ? f(t[0], b) : Tensor(), t[1].defined() ? f(a, t[1]) : Tensor()});
}

Scalar result_scalar(Scalar s, ScalarType dt) { return is_floating(dt) ? s : Scalar(static_cast<int64_t>(s.to_double())); }

// beta * self + alpha * prod; with beta == 0 self is ignored, so its nan/inf do not propagate.
Tensor add_scaled(const Tensor& self, const Tensor& prod, Scalar beta, Scalar alpha) {
  ScalarType dt = prod.dtype();
  Tensor p = alpha.to_double() == 1.0 ? prod : mul(prod, wrap_scalar(result_scalar(alpha, dt)));
  if (beta.to_double() == 0) return p;
  return add(beta.to_double() == 1.0 ? self : mul(self, wrap_scalar(result_scalar(beta, dt))), p);
}
}  // namespace

Tensor mm(const Tensor& a0, const Tensor& b0) {
  Tensor a = a0, b = b0;
  AG_CHECK(a.dim() == 2, "self must be a matrix");
  AG_CHECK(b.dim() == 2, "mat2 must be a matrix");
  AG_CHECK(a.sizes()[1] == b.sizes()[0], "mat1 and mat2 shapes cannot be multiplied (", a.sizes()[0], "x", a.sizes()[1], " and ",
           b.sizes()[0], "x", b.sizes()[1], ")");
  check_mm_dtypes(a, b, "mat1 and mat2");
  Tensor out = mm_raw(a, b);
  const bool a_cm = col_major(a), b_cm = col_major(b);
  fw_rule(out, {&a, &b}, [&](const variable_list& t) { return bilinear_jvp(mm, a, b, t); });
  if (auto node = autograd::make_node("MmBackward0", {&a, &b}, AG_BW {
        return {c.needs_input_grad(0) ? mm_grad_a(g[0], c.get(1), a_cm) : Tensor(),
                c.needs_input_grad(1) ? mm_grad_b(c.get(0), g[0], b_cm) : Tensor()};
      })) {
    autograd::set_history(node, {&out});
    node->save(b.requires_grad() ? a : Tensor());
    node->save(a.requires_grad() ? b : Tensor());
  }
  return out;
}

Tensor bmm(const Tensor& a0, const Tensor& b0) {
  Tensor a = a0, b = b0;
  AG_CHECK(a.dim() == 3, "batch1 must be a 3D tensor");
  AG_CHECK(b.dim() == 3, "batch2 must be a 3D tensor");
  AG_CHECK(a.sizes()[0] == b.sizes()[0] && a.sizes()[2] == b.sizes()[1], "Expected size for first two dimensions of batch2 tensor to be: [",
           a.sizes()[0], ", ", a.sizes()[2], "] but got: [", b.sizes()[0], ", ", b.sizes()[1], "].");
  check_same_device(a, b, "bmm");
  AG_CHECK(a.dtype() == b.dtype(), "expected scalar type ", scalar_type_name(a.dtype()), " but found ", scalar_type_name(b.dtype()));
  Tensor out = empty({a.sizes()[0], a.sizes()[1], b.sizes()[2]}, a.dtype(), a.device());
  gemm(detach(a), detach(b), out, 0.0, 1.0);
  fw_rule(out, {&a, &b}, [&](const variable_list& t) { return bilinear_jvp(bmm, a, b, t); });
  if (auto node = autograd::make_node("BmmBackward0", {&a, &b}, AG_BW {
        return {c.needs_input_grad(0) ? bmm(g[0], mT(c.get(1))) : Tensor(), c.needs_input_grad(1) ? bmm(mT(c.get(0)), g[0]) : Tensor()};
      })) {
    autograd::set_history(node, {&out});
    node->save(b.requires_grad() ? a : Tensor());
    node->save(a.requires_grad() ? b : Tensor());
  }
  return out;
}

Tensor mv(const Tensor& a0, const Tensor& v0) {
  Tensor a = a0, v = v0;
  AG_CHECK(a.dim() == 2 && v.dim() == 1, "vector + matrix @ vector expected, got ", a.dim(), ", ", v.dim());
  AG_CHECK(a.sizes()[1] == v.sizes()[0], "size mismatch, got input (", a.sizes()[0], "), mat (", a.sizes()[0], "x", a.sizes()[1],
           "), vec (", v.sizes()[0], ")");
  check_mm_dtypes(a, v, "mat and vec");
  Tensor out;
  {
    autograd::AutoGradMode off(false);
    out = reshape(mm_raw(a, unsqueeze(v, 1)), {a.sizes()[0]});
  }
  fw_rule(out, {&a, &v}, [&](const variable_list& t) { return bilinear_jvp(mv, a, v, t); });
  if (auto node = autograd::make_node("MvBackward0", {&a, &v}, AG_BW {
        return {c.needs_input_grad(0) ? outer(g[0], c.get(1)) : Tensor(), c.needs_input_grad(1) ? mv(mT(c.get(0)), g[0]) : Tensor()};
      })) {
    autograd::set_history(node, {&out});
    node->save(a); node->save(v);
  }
  return out;
}

Tensor dot(const Tensor& a0, const Tensor& b0) {
  Tensor a = a0, b = b0;
  AG_CHECK(a.dim() == 1 && b.dim() == 1, "1D tensors expected, but got ", a.dim(), "D and ", b.dim(), "D tensors");
  AG_CHECK(a.sizes()[0] == b.sizes()[0], "inconsistent tensor size, expected tensor [", a.sizes()[0], "] and src [", b.sizes()[0],
           "] to have the same number of elements, but got ", a.sizes()[0], " and ", b.sizes()[0], " elements respectively");
  AG_CHECK(a.dtype() == b.dtype(), "dot : expected both vectors to have same dtype, but found ", cpp_type_name(a.dtype()), " and ", cpp_type_name(b.dtype()));
  Tensor out;
  {
    autograd::AutoGradMode off(false);
    out = reshape(mm_raw(unsqueeze(a, 0), unsqueeze(b, 1)), {});
  }
  fw_rule(out, {&a, &b}, [&](const variable_list& t) { return bilinear_jvp(dot, a, b, t); });
  if (auto node = autograd::make_node("DotBackward0", {&a, &b}, AG_BW {
        return {c.needs_input_grad(0) ? g[0] * c.get(1) : Tensor(), c.needs_input_grad(1) ? g[0] * c.get(0) : Tensor()};
      })) {
    autograd::set_history(node, {&out});
    node->save(a); node->save(b);
  }
  return out;
}

Tensor outer(const Tensor& a, const Tensor& b) {
  AG_CHECK(a.dim() == 1 && b.dim() == 1, "outer: expected 1D tensors, got ", a.dim(), "D and ", b.dim(), "D");
  return mul(unsqueeze(a, 1), b);
}

Tensor matmul(const Tensor& a0, const Tensor& b0) {
  Tensor a = a0, b = b0;
  int64_t da = a.dim(), db = b.dim();
  AG_CHECK(da > 0 && db > 0, "both arguments to matmul need to be at least 1D, but they are ", da, "D and ", db, "D");
  if (da == 1 && db == 1) return dot(a, b);
  if (da == 2 && db == 1) return mv(a, b);
  if (da == 1 && db == 2) return squeeze(mm(unsqueeze(a, 0), b), IntList{0});
  if (da == 2 && db == 2) return mm(a, b);
  if (da >= 3 && db <= 2) {  // fold the batch into rows: one GEMM
    Tensor bb = db == 1 ? unsqueeze(b, 1) : b;
    int64_t k = a.sizes()[da - 1];
    AG_CHECK(k == bb.sizes()[0], "mat1 and mat2 shapes cannot be multiplied (", a.numel() / std::max<int64_t>(k, 1), "x", k, " and ",
             bb.sizes()[0], "x", bb.sizes()[1], ")");
    int64_t rows = shape_numel(Shape(a.sizes().begin(), a.sizes().end() - 1));  // not numel / k: k may be 0
    Tensor r = mm(reshape(a, {rows, k}), bb);
    IntList shape(a.sizes().begin(), a.sizes().end() - 1);
    if (db == 2) shape.push_back(bb.sizes()[1]);
    return reshape(r, shape);
  }
  // General batched case with broadcasting of batch dims.
  Tensor x = da == 1 ? unsqueeze(a, 0) : a;
  Tensor y = db == 1 ? unsqueeze(b, 1) : b;
  int64_t m = x.sizes()[x.dim() - 2], k = x.sizes()[x.dim() - 1], k2 = y.sizes()[y.dim() - 2], n = y.sizes()[y.dim() - 1];
  AG_CHECK(k == k2, "Expected size for first two dimensions of batch2 tensor to be: [", 1, ", ", k, "] but got: [", 1, ", ", k2, "].");
  Shape ba(x.sizes().begin(), x.sizes().end() - 2), bb(y.sizes().begin(), y.sizes().end() - 2);
  Shape batch = broadcast_shapes(ba, bb);
  int64_t B = shape_numel(batch);
  IntList ea(batch.begin(), batch.end()), eb(batch.begin(), batch.end());
  ea.push_back(m); ea.push_back(k); eb.push_back(k); eb.push_back(n);
  Tensor r = bmm(reshape(expand_op(x, ea), {B, m, k}), reshape(expand_op(y, eb), {B, k, n}));
  IntList shape(batch.begin(), batch.end());
  if (da > 1) shape.push_back(m);
  if (db > 1) shape.push_back(n);
  return reshape(r, shape);
}

Tensor addmm(const Tensor& s0, const Tensor& a0, const Tensor& b0, Scalar beta, Scalar alpha) {
  Tensor s = s0, a = a0, b = b0;
  AG_CHECK(a.dim() == 2, "mat1 must be a matrix, got ", a.dim(), "-D tensor");
  AG_CHECK(b.dim() == 2, "mat2 must be a matrix, got ", b.dim(), "-D tensor");
  AG_CHECK(a.sizes()[1] == b.sizes()[0], "mat1 and mat2 shapes cannot be multiplied (", a.sizes()[0], "x", a.sizes()[1], " and ",
           b.sizes()[0], "x", b.sizes()[1], ")");
  check_mm_dtypes(a, b, "mat1 and mat2");
  AG_CHECK(s.dtype() == a.dtype(), "self and mat2 must have the same dtype, but got ", cpp_type_name(s.dtype()), " and ", cpp_type_name(a.dtype()));
  Shape shape{a.sizes()[0], b.sizes()[1]};
  expand(s, shape);  // raises torch's "The expanded size of the tensor ..." when self does not broadcast
  double be = beta.to_double(), al = alpha.to_double();
  Tensor out = empty(shape, a.dtype(), a.device());
  // A bias vector rides in the GEMM's epilogue where the backend has one (Note [GEMM epilogues]).
  const bool fused = be == 1 && s.dim() == 1 && out.numel() > 0 && has_kernel(Op::addmm, a.device().type) &&
                     kernel<GemmBiasKernel>(Op::addmm, a.device())(a, b, s, out, al, GemmEpilogue::kBias);
  if (!fused) {
    if (be != 0) {
      Tensor src = expand(detach(s), shape);
      run_elementwise(Op::copy, out, {&src});
    }
    gemm(a, b, out, be, al);
  }
  const bool a_cm = col_major(a), b_cm = col_major(b);
  fw_rule(out, {&s, &a, &b}, [&](const variable_list& t) {
    Tensor p = bilinear_jvp(mm, a, b, {t[1], t[2]});
    return sum_defined({t[0].defined() && be != 0 ? t[0] * be : Tensor(), p.defined() ? p * al : Tensor()});
  });
  if (auto node = autograd::make_node("AddmmBackward0", {&s, &a, &b}, AG_BW {
        Tensor ga, gb;
        if (c.needs_input_grad(1)) ga = mm_grad_a(g[0], c.get(1), a_cm);
        if (c.needs_input_grad(2)) gb = mm_grad_b(c.get(0), g[0], b_cm);
        if (al != 1.0) { if (ga.defined()) ga = ga * al; if (gb.defined()) gb = gb * al; }
        return {c.needs_input_grad(0) ? (be == 1.0 ? g[0] : g[0] * be) : Tensor(), ga, gb};
      })) {
    autograd::set_history(node, {&out});
    node->save(b.requires_grad() ? a : Tensor());
    node->save(a.requires_grad() ? b : Tensor());
  }
  return out;
}

// torch._addmm_activation: relu(beta * self + alpha * mat1 @ mat2) as one op (Note [GEMM epilogues]:
// one cublasLtMatmul with a bias + ReLU epilogue on CUDA). The backward needs only the output
// (relu' = output > 0), so nothing extra is kept. GELU would need the pre-activation: composed.
Tensor addmm_activation(const Tensor& s0, const Tensor& a0, const Tensor& b0, Scalar beta, Scalar alpha, bool use_gelu) {
  if (use_gelu) return gelu(addmm(s0, a0, b0, beta, alpha), "tanh");
  Tensor s = s0, a = a0, b = b0;
  const double be = beta.to_double(), al = alpha.to_double();
  Tensor out;
  {
    autograd::AutoGradMode off(false);
    const Tensor sd = detach(s), ad = detach(a), bd = detach(b);  // no tangents: the rule below sets them
    bool fused = false;
    if (be == 1 && s.dim() == 1 && a.dim() == 2 && b.dim() == 2 && a.sizes()[1] == b.sizes()[0] &&
        s.sizes()[0] == b.sizes()[1] && a.dtype() == b.dtype() && s.dtype() == a.dtype() && a.device() == b.device() &&
        s.device() == a.device() && has_kernel(Op::addmm, a.device().type)) {
      out = empty({a.sizes()[0], b.sizes()[1]}, a.dtype(), a.device());
      fused = out.numel() > 0 && kernel<GemmBiasKernel>(Op::addmm, a.device())(ad, bd, sd, out, al, GemmEpilogue::kBiasRelu);
    }
    if (!fused) out = relu(addmm(sd, ad, bd, beta, alpha));
  }
  const bool a_cm = col_major(a), b_cm = col_major(b);
  fw_rule(out, {&s, &a, &b}, [&](const variable_list& t) {
    Tensor p = bilinear_jvp(mm, a, b, {t[1], t[2]});
    Tensor lin = sum_defined({t[0].defined() && be != 0 ? t[0] * be : Tensor(), p.defined() ? p * al : Tensor()});
    return lin.defined() ? lin * compare(Op::gt, out, wrap_scalar(0.0)) : Tensor();
  });
  if (auto node = autograd::make_node("AddmmActivationBackward0", {&s, &a, &b}, AG_BW {
        Tensor gp = g[0] * compare(Op::gt, c.get(2), wrap_scalar(0.0));  // threshold_backward(grad, result, 0)
        Tensor ga, gb;
        if (c.needs_input_grad(1)) ga = mm_grad_a(gp, c.get(1), a_cm);
        if (c.needs_input_grad(2)) gb = mm_grad_b(c.get(0), gp, b_cm);
        if (al != 1.0) { if (ga.defined()) ga = ga * al; if (gb.defined()) gb = gb * al; }
        return {c.needs_input_grad(0) ? (be == 1.0 ? gp : gp * be) : Tensor(), ga, gb};
      })) {
    autograd::set_history(node, {&out});
    node->save(b.requires_grad() ? a : Tensor());
    node->save(a.requires_grad() ? b : Tensor());
    node->save(out, true);
  }
  return out;
}

// Note [One rounding in GEMM epilogues]: addmv, addr and baddbmm are beta * self + alpha * (a @ b)
// computed by one GEMM whose output starts as self, so a bf16/fp16 result is formed in float32 and
// rounded once (torch's opmath), not rounded after the product and again after the scaled add. addbmm
// sums its batch of products in float32 before rounding. Each records torch's node.
namespace {
Tensor gemm_into(const Tensor& s, const Tensor& a, const Tensor& b, const Shape& shape, double be, double al) {
  autograd::AutoGradMode off(false);
  Tensor out = empty(shape, a.dtype(), a.device());
  if (out.numel() == 0) return out;
  if (be != 0) {
    Tensor src = expand(detach(s), shape);
    run_elementwise(Op::copy, out, {&src});
  }
  gemm(detach(a), detach(b), out, be, al);
  return out;
}

void check_same_dtypes3(const Tensor& s, const Tensor& a, const Tensor& b, const char* what) {
  AG_CHECK(s.dtype() == a.dtype() && a.dtype() == b.dtype(), what, " input tensors must have the same dtype, but got ",
           scalar_type_name(s.dtype()), ", ", scalar_type_name(a.dtype()), ", and ", scalar_type_name(b.dtype()));
}

// baddbmm's and addbmm's shared checks: two 3-d batches of compatible products, one device.
void check_batched_operands(const Tensor& s, const Tensor& a, const Tensor& b, const char* what) {
  // torch reads batch1.size(1) and batch2.size(2) (the result's shape) before its 3-d checks: IndexError first
  (void)wrap_dim(1, a.dim());
  (void)wrap_dim(2, b.dim());
  AG_CHECK(a.dim() == 3, "batch1 must be a 3D tensor");
  AG_CHECK(b.dim() == 3, "batch2 must be a 3D tensor");
  AG_CHECK(a.sizes()[0] == b.sizes()[0], "batch1 and batch2 must have same number of batches, got ", a.sizes()[0], " and ",
           b.sizes()[0]);
  AG_CHECK(a.sizes()[2] == b.sizes()[1], "Incompatible matrix sizes for bmm (", a.sizes()[1], "x", a.sizes()[2], " and ",
           b.sizes()[1], "x", b.sizes()[2], ")");
  check_same_device(a, b, what);
  check_same_device(s, a, what);
}

// beta * ds + alpha * (da @ b + a @ db): the jvp shared by the GEMM-epilogue ops (f is the plain product).
template <typename F>
Tensor epilogue_jvp(F f, const Tensor& a, const Tensor& b, const variable_list& t, double be, double al) {
  Tensor p = bilinear_jvp(f, a, b, {t[1], t[2]});
  return sum_defined({t[0].defined() && be != 0 ? t[0] * be : Tensor(), p.defined() ? p * al : Tensor()});
}

Tensor scaled(const Tensor& t, double k) { return k == 1.0 ? t : t * k; }
}  // namespace

Tensor addmv(const Tensor& s0, const Tensor& a0, const Tensor& v0, Scalar beta, Scalar alpha) {
  Tensor s = s0, a = a0, v = v0;
  AG_CHECK(a.dim() == 2 && v.dim() == 1, "vector + matrix @ vector expected, got ", s.dim(), ", ", a.dim(), ", ", v.dim());
  AG_CHECK(a.sizes()[1] == v.sizes()[0] && (s.dim() <= 1) &&
               (s.dim() == 0 || s.sizes()[0] == a.sizes()[0] || s.sizes()[0] == 1),
           "size mismatch, got input (", s.dim() ? s.sizes()[0] : 1, "), mat (", a.sizes()[0], "x", a.sizes()[1], "), vec (",
           v.sizes()[0], ")");
  check_same_device(a, v, "addmv");
  check_same_device(s, a, "addmv");
  check_same_dtypes3(s, a, v, "addmv");
  const double be = result_scalar(beta, a.dtype()).to_double(), al = result_scalar(alpha, a.dtype()).to_double();
  const int64_t m = a.sizes()[0];
  Tensor out = gemm_into(s.dim() == 1 ? unsqueeze(s, 1) : s, a, unsqueeze(v, 1), {m, 1}, be, al);
  out = reshape(out, {m});
  fw_rule(out, {&s, &a, &v}, [&](const variable_list& t) { return epilogue_jvp(mv, a, v, t, be, al); });
  const Shape ss(s0.sizes().begin(), s0.sizes().end());
  if (auto node = autograd::make_node("AddmvBackward0", {&s, &a, &v}, AG_BW {
        return {c.needs_input_grad(0) ? sum_to(scaled(g[0], be), ss) : Tensor(),
                c.needs_input_grad(1) ? scaled(outer(g[0], c.get(1)), al) : Tensor(),
                c.needs_input_grad(2) ? scaled(mv(mT(c.get(0)), g[0]), al) : Tensor()};
      })) {
    autograd::set_history(node, {&out});
    node->save(a); node->save(v);
  }
  return out;
}

Tensor addr(const Tensor& s0, const Tensor& a0, const Tensor& b0, Scalar beta, Scalar alpha) {
  AG_CHECK(a0.dim() == 1, "addr: Expected 1-d argument vec1, but got ", a0.dim(), "-d");
  AG_CHECK(b0.dim() == 1, "addr: Expected 1-d argument vec2, but got ", b0.dim(), "-d");
  const ScalarType dt = promote_types(promote_types(s0.dtype(), a0.dtype()), b0.dtype());
  if (!is_floating(dt)) {  // integer and bool: exact in any order
    Tensor p = outer(a0, b0);
    AG_CHECK(beta.kind != Scalar::Float, "For integral input tensors, argument beta must not be a floating point number.");
    AG_CHECK(alpha.kind != Scalar::Float, "For integral input tensors, argument alpha must not be a floating point number.");
    if (dt == ScalarType::Bool) {  // torch: (beta && self) || (alpha && vec1 * vec2), a bool result
      expand(s0, Shape{a0.sizes()[0], b0.sizes()[0]});
      return logical(Op::logical_or, beta.to_double() != 0 ? s0 : zeros_like(s0), alpha.to_double() != 0 ? p : zeros_like(p));
    }
    return add_scaled(s0, p, beta, alpha);
  }
  Tensor s = s0, a = a0, b = b0;
  check_same_device(a, b, "addr");
  check_same_device(s, a, "addr");
  const Shape shape{a.sizes()[0], b.sizes()[0]};
  expand(s, shape);  // torch's broadcast error when self does not fit
  const double be = beta.to_double(), al = alpha.to_double();
  Tensor out = gemm_into(to_dtype(s, dt), unsqueeze(to_dtype(a, dt), 1), unsqueeze(to_dtype(b, dt), 0), shape, be, al);
  fw_rule(out, {&s, &a, &b}, [&](const variable_list& t) {
    auto outer_dt = [dt](const Tensor& x, const Tensor& y) { return outer(to_dtype(x, dt), to_dtype(y, dt)); };
    return epilogue_jvp(outer_dt, a, b, t, be, al);
  });
  const Shape ss(s0.sizes().begin(), s0.sizes().end());
  if (auto node = autograd::make_node("AddrBackward0", {&s, &a, &b}, AG_BW {
        return {c.needs_input_grad(0) ? sum_to(scaled(g[0], be), ss) : Tensor(),
                c.needs_input_grad(1) ? scaled(mv(g[0], c.get(1)), al) : Tensor(),
                c.needs_input_grad(2) ? scaled(mv(mT(g[0]), c.get(0)), al) : Tensor()};
      })) {
    autograd::set_history(node, {&out});
    node->save(to_dtype(a, dt)); node->save(to_dtype(b, dt));
  }
  return out;
}

Tensor baddbmm(const Tensor& s0, const Tensor& a0, const Tensor& b0, Scalar beta, Scalar alpha) {
  Tensor s = s0, a = a0, b = b0;
  check_batched_operands(s, a, b, "baddbmm");
  AG_CHECK(s.dtype() == a.dtype() && a.dtype() == b.dtype(), "Input dtypes must be the same, got: input ",
           cpp_type_name(s.dtype()), ", batch1: ", cpp_type_name(a.dtype()), ", batch2: ", cpp_type_name(b.dtype()));
  AG_CHECK_NOT_IMPL(is_floating(a.dtype()) || a.device().is_cpu(), "\"baddbmm_cuda\" not implemented for '", scalar_type_name(a.dtype()), "'");
  const Shape shape{a.sizes()[0], a.sizes()[1], b.sizes()[2]};
  expand(s, shape);
  const double be = result_scalar(beta, a.dtype()).to_double(), al = result_scalar(alpha, a.dtype()).to_double();
  Tensor out = gemm_into(s, a, b, shape, be, al);
  fw_rule(out, {&s, &a, &b}, [&](const variable_list& t) { return epilogue_jvp(bmm, a, b, t, be, al); });
  const Shape ss(s0.sizes().begin(), s0.sizes().end());
  if (auto node = autograd::make_node("BaddbmmBackward0", {&s, &a, &b}, AG_BW {
        return {c.needs_input_grad(0) ? sum_to(scaled(g[0], be), ss) : Tensor(),
                c.needs_input_grad(1) ? scaled(bmm(g[0], mT(c.get(1))), al) : Tensor(),
                c.needs_input_grad(2) ? scaled(bmm(mT(c.get(0)), g[0]), al) : Tensor()};
      })) {
    autograd::set_history(node, {&out});
    node->save(b.requires_grad() ? a : Tensor()); node->save(a.requires_grad() ? b : Tensor());
  }
  return out;
}

Tensor addbmm(const Tensor& s0, const Tensor& a0, const Tensor& b0, Scalar beta, Scalar alpha) {
  Tensor s = s0, a = a0, b = b0;
  check_batched_operands(s, a, b, "addbmm");
  AG_CHECK(s.dtype() == a.dtype() && a.dtype() == b.dtype(), "self and mat2 must have the same dtype, but got ",
           scalar_type_name(s.dtype() != a.dtype() ? s.dtype() : a.dtype()), " and ",
           scalar_type_name(s.dtype() != a.dtype() ? a.dtype() : b.dtype()));
  const Shape shape{a.sizes()[1], b.sizes()[2]};
  expand(s, shape);
  const ScalarType dt = a.dtype();
  const double be = result_scalar(beta, dt).to_double(), al = result_scalar(alpha, dt).to_double();
  Tensor out;
  {
    autograd::AutoGradMode off(false);
    const bool low = dt == ScalarType::Float16 || dt == ScalarType::BFloat16;
    const ScalarType acc = low ? ScalarType::Float32 : dt;  // sum the batch of products before rounding
    Tensor p = sum(bmm(to_dtype(detach(a), acc), to_dtype(detach(b), acc)), IntList{0}, false, std::nullopt);
    out = to_dtype(add_scaled(to_dtype(detach(s), acc), p, Scalar(be), Scalar(al)), dt);
  }
  fw_rule(out, {&s, &a, &b}, [&](const variable_list& t) {
    auto f = [](const Tensor& x, const Tensor& y) { return sum(bmm(x, y), IntList{0}, false, std::nullopt); };
    return epilogue_jvp(f, a, b, t, be, al);
  });
  const Shape ss(s0.sizes().begin(), s0.sizes().end());
  if (auto node = autograd::make_node("AddbmmBackward0", {&s, &a, &b}, AG_BW {
        const int64_t n = c.get(0).sizes()[0];
        Tensor ge = c.needs_input_grad(1) || c.needs_input_grad(2) ? expand_op(unsqueeze(g[0], 0), {n, g[0].sizes()[0], g[0].sizes()[1]}) : Tensor();
        return {c.needs_input_grad(0) ? sum_to(scaled(g[0], be), ss) : Tensor(),
                c.needs_input_grad(1) ? scaled(bmm(ge, mT(c.get(1))), al) : Tensor(),
                c.needs_input_grad(2) ? scaled(bmm(mT(c.get(0)), ge), al) : Tensor()};
      })) {
    autograd::set_history(node, {&out});
    node->save(a); node->save(b);
  }
  return out;
}

Tensor linear(const Tensor& x0, const Tensor& w0, const std::optional<Tensor>& bias0) {
  Tensor x = x0, w = w0, bias = bias0 ? *bias0 : Tensor();
  AG_CHECK(w.dim() == 2 || w.dim() == 1, "linear: weight must be 1-D or 2-D");
  if (x.dim() == 2 && w.dim() == 2 && bias.defined()) return addmm(bias, x, transpose(w, 0, 1));
  // torch's _flatten_nd_linear: a contiguous 1-d or N-d input with a bias vector folds into one addmm
  // (one rounding of product + bias in low precision; ViewBackward0 over AddmmBackward0).
  if ((x.dim() == 1 || x.dim() > 2) && w.dim() == 2 && bias.defined() && bias.dim() == 1 && x.is_contiguous()) {
    const int64_t k = x.sizes()[x.dim() - 1];
    const int64_t rows = shape_numel(Shape(x.sizes().begin(), x.sizes().end() - 1));
    IntList shape(x.sizes().begin(), x.sizes().end() - 1);
    shape.push_back(w.sizes()[0]);
    return reshape(addmm(bias, reshape(x, {rows, k}), transpose(w, 0, 1)), shape);
  }
  Tensor r = matmul(x, w.dim() == 2 ? transpose(w, 0, 1) : w);
  return bias.defined() ? add(r, bias) : r;
}

// torch's inner: a product with a 0-d operand, otherwise the last dims contracted (any batch shapes).
Tensor inner(const Tensor& a, const Tensor& b) {
  if (a.dim() == 0 || b.dim() == 0) return mul(a, b);
  AG_CHECK(a.sizes().back() == b.sizes().back(), "inner() the last dimension must match on both input tensors but got shapes ",
           shape_str(a.sizes()), " and ", shape_str(b.sizes()));
  // torch decomposes inner into dot / matmul, which its autocast then casts (Note [Autocast gate]).
  if (a.dim() == 1 && b.dim() == 1) return amp::gated<Op::dot>([](const Tensor& x, const Tensor& y) { return dot(x, y); })(a, b);
  const int64_t k = a.sizes().back();
  IntList as(a.sizes().begin(), a.sizes().end() - 1), bs(b.sizes().begin(), b.sizes().end() - 1);
  auto mm2 = amp::gated<Op::matmul>([](const Tensor& x, const Tensor& y) { return matmul(x, y); });
  Tensor r = mm2(reshape(a, {shape_numel(Shape(as.begin(), as.end())), k}),
                    transpose(reshape(b, {shape_numel(Shape(bs.begin(), bs.end())), k}), 0, 1));
  as.insert(as.end(), bs.begin(), bs.end());
  return reshape(r, as);
}

}  // namespace ampgrad
