// scaled_dot_product_attention's fused path (torch's _scaled_dot_product_flash_attention_for_cpu):
// the argument checks, the choice between the fused kernel and the composed math path (taken in
// python/ampgrad/nn/functional.py, as torch's CPU dispatcher does), and the autograd record.
#include <cmath>
#include <limits>
#include "ops/internal.h"

namespace ampgrad {

namespace {
ScalarType compute_dtype(ScalarType t) { return t == ScalarType::Float64 ? ScalarType::Float64 : ScalarType::Float32; }

// [B, Hk, S, E] -> [B, Hk * rep, S, E], each key head repeated for its rep query heads.
Tensor repeat_heads(const Tensor& t, int64_t rep) {
  if (rep == 1) return t;
  const Shape& s = t.sizes();
  return reshape(expand_op(unsqueeze(t, 2), {s[0], s[1], rep, s[2], s[3]}), {s[0], s[1] * rep, s[2], s[3]});
}
Tensor sum_heads(const Tensor& g, int64_t rep) {
  if (rep == 1) return g;
  const Shape& s = g.sizes();
  return sum(reshape(g, {s[0], s[1] / rep, rep, s[2], s[3]}), IntList{2}, false, std::nullopt);
}

struct SdpaState { bool causal; double scale; int64_t rep; };

// softmax(q k^T * scale + masks) from differentiable ops; rows that see no key are 0 (lse = +inf).
Tensor attention_probs(const Tensor& q, const Tensor& kk, const Tensor& mask, const Tensor& lse, const SdpaState& st) {
  const double inf = std::numeric_limits<double>::infinity();
  Tensor s = matmul(q, transpose(kk, -2, -1)) * st.scale;
  if (st.causal) {
    Tensor keep = tril(full({q.sizes()[2], kk.sizes()[2]}, Scalar(true), ScalarType::Bool, q.device()), 0);
    s = where(keep, s, wrap_scalar(-inf));
  }
  if (mask.defined()) s = mask.dtype() == ScalarType::Bool ? where(mask, s, wrap_scalar(-inf)) : s + to_dtype(mask, s.dtype());
  Tensor p = softmax(s, -1, std::nullopt);
  Tensor dead = unsqueeze(compare(Op::eq, lse, wrap_scalar(inf)), -1);
  return where(dead, wrap_scalar(0.0), p);
}

// The backward from differentiable ops: used under create_graph, so that double backward works
// (torch's fused CPU backward has no derivative and raises there).
variable_list sdpa_backward_composed(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, const Tensor& lse,
                                     const Tensor& go, const SdpaState& st) {
  Tensor kk = repeat_heads(k, st.rep), vv = repeat_heads(v, st.rep);
  Tensor p = attention_probs(q, kk, mask, lse, st);
  Tensor dv = sum_heads(matmul(transpose(p, -2, -1), go), st.rep);
  Tensor dp = matmul(go, transpose(vv, -2, -1));
  Tensor ds = p * (dp - sum(dp * p, IntList{-1}, true, std::nullopt));
  Tensor dq = matmul(ds, kk) * st.scale;
  Tensor dk = sum_heads(matmul(transpose(ds, -2, -1), q), st.rep) * st.scale;
  return {dq, dk, dv};
}

bool dense_last(const Tensor& t) { return t.sizes()[3] == 1 || t.strides()[3] == 1; }
}  // namespace

// Returns nullopt where torch's CPU dispatcher takes the math path (python composes it then).
std::optional<Tensor> sdpa_flash(const Tensor& q, const Tensor& k, const Tensor& v, const std::optional<Tensor>& mask0,
                                 double dropout_p, bool is_causal, std::optional<double> scale, bool enable_gqa) {
  AG_CHECK(q.dtype() == k.dtype() && q.dtype() == v.dtype(), "Expected query, key, and value to have the same dtype, but got query.dtype: ",
           cpp_type_name(q.dtype()), " key.dtype: ", cpp_type_name(k.dtype()), " and value.dtype: ", cpp_type_name(v.dtype()), " instead.");
  if (mask0 && mask0->defined()) {
    ScalarType md = mask0->dtype();
    AG_CHECK(md == ScalarType::Bool || md == ScalarType::Float32 || md == q.dtype(),
             "Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: ", cpp_type_name(md),
             " and  query.dtype: ", cpp_type_name(q.dtype()), " instead.");
  }
  if (dropout_p > 0.0 || q.dim() != 4 || k.dim() != 4 || v.dim() != 4 || !is_floating(q.dtype())) return std::nullopt;
  if (q.device().type != DeviceType::CPU || k.device() != q.device() || v.device() != q.device()) return std::nullopt;
  const int64_t B = q.sizes()[0], Hq = q.sizes()[1], L = q.sizes()[2], E = q.sizes()[3];
  const int64_t Hk = k.sizes()[1], S = k.sizes()[2];
  if (k.sizes()[0] != B || v.sizes()[0] != B || v.sizes()[1] != Hk || v.sizes()[2] != S) return std::nullopt;
  if (Hk == 0 || (Hq != Hk && !(enable_gqa && Hq % Hk == 0))) return std::nullopt;
  if (k.sizes()[3] != E || v.sizes()[3] != E || L == 0 || S == 0 || E == 0 || B == 0 || Hq == 0) return std::nullopt;
  if (!dense_last(q) || !dense_last(k) || !dense_last(v)) return std::nullopt;
  Tensor mask;
  if (mask0 && mask0->defined()) {
    if (autograd::GradMode::is_enabled() && mask0->requires_grad()) return std::nullopt;
    const Shape full_shape{B, Hq, L, S};
    if (mask0->dim() > 4) return std::nullopt;
    for (int64_t d = 0; d < mask0->dim(); ++d) {
      int64_t ms = mask0->sizes()[mask0->dim() - 1 - d], fs = full_shape[3 - d];
      if (ms != 1 && ms != fs) return std::nullopt;
    }
    mask = detach(*mask0);
    if (mask.dtype() != ScalarType::Bool) mask = to_dtype(mask, compute_dtype(q.dtype()));
    mask = expand(mask, full_shape);
  }
  // The kernel reads the last dim densely; a size-1 last dim may carry any stride.
  auto dense = [](const Tensor& t) { return t.strides()[3] == 1 ? t : contiguous(t); };
  Tensor qd = dense(q), kd = dense(k), vd = dense(v);
  const SdpaState st{is_causal, scale ? *scale : 1.0 / std::sqrt(static_cast<double>(E)), Hq / Hk};
  const SdpaArgs args{st.scale, st.causal};
  Tensor out = empty({B, Hq, L, E}, q.dtype(), q.device());
  Tensor lse = empty({B, Hq, L}, compute_dtype(q.dtype()), q.device());
  kernel<SdpaKernel>(Op::scaled_dot_product_attention, q.device())(qd, kd, vd, mask, out, lse, args);

  fw_rule(out, {&q, &k, &v}, [&](const variable_list& t) {
    Tensor kk = repeat_heads(k, st.rep), vv = repeat_heads(v, st.rep);
    Tensor p = attention_probs(q, kk, mask, lse, st);
    Tensor ds;
    if (t[0].defined()) ds = matmul(t[0], transpose(kk, -2, -1));
    if (t[1].defined()) {
      Tensor term = matmul(q, transpose(repeat_heads(t[1], st.rep), -2, -1));
      ds = ds.defined() ? ds + term : term;
    }
    Tensor r;
    if (ds.defined()) {
      ds = ds * st.scale;
      r = matmul(p * (ds - sum(p * ds, IntList{-1}, true, std::nullopt)), vv);
    }
    if (t[2].defined()) {
      Tensor term = matmul(p, repeat_heads(t[2], st.rep));
      r = r.defined() ? r + term : term;
    }
    return r;
  });
  if (auto node = autograd::make_node("ScaledDotProductFlashAttentionForCpuBackward0", {&q, &k, &v}, AG_BW {
        Tensor q = c.get(0), k = c.get(1), v = c.get(2), out = c.get(3), lse = c.get(4), mask = c.get(5);
        Tensor go = c.grad_or_zeros(g, 0);
        if (autograd::GradMode::is_enabled()) return sdpa_backward_composed(q, k, v, mask, lse, go, st);
        auto dense = [](const Tensor& t) { return t.strides()[3] == 1 ? t : contiguous(t); };
        Tensor qd = dense(q), kd = dense(k), vd = dense(v), gd = dense(go);
        Tensor dq = empty(q.sizes(), q.dtype(), q.device()), dk = empty(k.sizes(), k.dtype(), k.device()),
               dv = empty(v.sizes(), v.dtype(), v.device());
        kernel<SdpaBackwardKernel>(Op::scaled_dot_product_attention_backward, q.device())(gd, qd, kd, vd, mask, out, lse, dq, dk, dv,
                                                                                         SdpaArgs{st.scale, st.causal});
        return {dq, dk, dv};
      })) {
    autograd::set_history(node, {&out});
    node->save(q);
    node->save(k);
    node->save(v);
    node->save(out, true);
    node->save(lse);
    node->save(mask);
  }
  return out;
}

}  // namespace ampgrad
