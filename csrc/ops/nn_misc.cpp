// Fused front ends of the elementwise losses (mse, smooth_l1, huber, binary_cross_entropy{,_with_logits}),
// dropout and embedding. The forward and the first backward are one kernel each; under create_graph
// the backward is written in differentiable ops instead, so double backward works, and the jvp
// comes from the same elementwise derivatives.
#include <cmath>
#include <limits>
#include "ops/internal.h"

namespace ampgrad {

namespace {
Op loss_backward_op(LossKind k) {
  switch (k) {
    case LossKind::MSE: return Op::mse_loss_backward;
    case LossKind::SMOOTH_L1: return Op::smooth_l1_loss_backward;
    case LossKind::HUBER: return Op::huber_loss_backward;
    case LossKind::BCE: return Op::binary_cross_entropy_backward;
    default: return Op::binary_cross_entropy_with_logits_backward;
  }
}
Op loss_op(LossKind k) {
  switch (k) {
    case LossKind::MSE: return Op::mse_loss;
    case LossKind::SMOOTH_L1: return Op::smooth_l1_loss;
    case LossKind::HUBER: return Op::huber_loss;
    case LossKind::BCE: return Op::binary_cross_entropy;
    default: return Op::binary_cross_entropy_with_logits;
  }
}
const char* loss_node(LossKind k) {
  switch (k) {
    case LossKind::MSE: return "MseLossBackward0";
    case LossKind::SMOOTH_L1: return "SmoothL1LossBackward0";
    case LossKind::HUBER: return "HuberLossBackward0";
    case LossKind::BCE: return "BinaryCrossEntropyBackward0";
    default: return "BinaryCrossEntropyWithLogitsBackward0";
  }
}

// d loss / d input and d loss / d target per element, in differentiable ops (w, pw may be undefined).
std::pair<Tensor, Tensor> loss_derivs(LossKind k, const Tensor& x, const Tensor& t, const Tensor& w, const Tensor& pw, double beta) {
  Tensor dx, dt;
  switch (k) {
    case LossKind::MSE: dx = (x - t) * 2.0; dt = -dx; break;
    case LossKind::SMOOTH_L1:
      dx = beta == 0.0 ? sign(x - t) : clamp((x - t) / beta, Scalar(-1.0), Scalar(1.0));
      dt = -dx;
      break;
    case LossKind::HUBER: dx = clamp(x - t, Scalar(-beta), Scalar(beta)); dt = -dx; break;
    case LossKind::BCE:
      dx = (x - t) / clamp((1.0 - x) * x, Scalar(1e-12), std::nullopt);
      dt = clamp(log1p(-x), Scalar(-100.0), std::nullopt) - clamp(log(x), Scalar(-100.0), std::nullopt);
      if (w.defined()) { dx = dx * w; dt = dt * w; }
      break;
    case LossKind::BCE_LOGITS: {
      Tensor sig = sigmoid(x);
      if (pw.defined()) {
        dx = ((pw - 1.0) * t + 1.0) * sig - pw * t;
        dt = -x + (pw - 1.0) * softplus(-x);
      } else {
        dx = sig - t;
        dt = -x;
      }
      if (w.defined()) { dx = dx * w; dt = dt * w; }
      break;
    }
  }
  return {dx, dt};
}

Tensor reduce_loss(const Tensor& l, int64_t reduction) {
  if (reduction == 0) return l;
  return reduction == 1 ? mean(l, std::nullopt, false, std::nullopt) : sum(l, std::nullopt, false, std::nullopt);
}
}  // namespace

Tensor fused_loss(int64_t kind_i, const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight0,
                  const std::optional<Tensor>& pos_weight0, int64_t reduction, double beta) {
  AG_CHECK(kind_i >= 0 && kind_i <= static_cast<int64_t>(LossKind::BCE_LOGITS), "fused_loss: no loss kind ", kind_i);
  const LossKind kind = static_cast<LossKind>(kind_i);
  AG_CHECK(reduction >= 0 && reduction <= 2, reduction, " is not a valid value for reduction");
  Tensor w0 = weight0 ? *weight0 : Tensor(), pw0 = pos_weight0 ? *pos_weight0 : Tensor();
  Shape shape = broadcast_shapes(input.sizes(), target.sizes());  // torch checks shapes before dtypes
  if (w0.defined()) shape = broadcast_shapes(shape, w0.sizes());
  if (pw0.defined()) shape = broadcast_shapes(shape, pw0.sizes());
  ScalarType ct = result_type({&input, &target, &w0, &pw0});
  static const char* kernel_names[] = {"mse_cpu", "smooth_l1_cpu", "huber_cpu", "binary_cross_entropy", "log_sigmoid_cpu"};  // torch's
  AG_CHECK_NOT_IMPL(is_floating(ct), "\"", kernel_names[kind_i], "\" not implemented for '", scalar_type_name(ct), "'");
  ScalarType out_dt = ct;
  if (kind == LossKind::HUBER && is_floating(input.dtype())) out_dt = input.dtype();  // torch's huber keeps the input's dtype
  if (kind == LossKind::BCE_LOGITS && is_floating(target.dtype())) out_dt = target.dtype();  // ... and bce_with_logits the target's
  auto prep = [&](const Tensor& t) { return t.defined() ? contiguous(expand(to_dtype(detach(t), ct), shape)) : Tensor(); };
  Tensor x = prep(input), t = prep(target), w = prep(w0), pw = prep(pw0);
  const LossArgs args{kind, static_cast<int>(reduction), beta};
  Tensor out = empty(reduction == 0 ? shape : Shape{}, ct, input.device());
  kernel<LossKernel>(loss_op(kind), input.device())(x, t, w, pw, out, args);
  if (out_dt != ct) out = to_dtype(out, out_dt);

  fw_rule(out, {&input, &target}, [&](const variable_list& tg) {
    auto [dx, dt] = loss_derivs(kind, x, t, w, pw, beta);
    Tensor r;
    if (tg[0].defined()) r = dx * tg[0];
    if (tg[1].defined()) r = r.defined() ? r + dt * tg[1] : dt * tg[1];
    return r.defined() ? to_dtype(reduce_loss(r, reduction), out_dt) : r;
  });
  if (auto node = autograd::make_node(loss_node(kind), {&input, &target}, AG_BW {
        Tensor x = c.get(0), t = c.get(1), w = c.get(2), pw = c.get(3);
        Tensor go = to_dtype(c.grad_or_zeros(g, 0), x.dtype());
        const int64_t n = x.numel();
        variable_list r(2);
        const bool create = autograd::GradMode::is_enabled();
        if (create || c.needs_input_grad(1)) {
          Tensor gfull = reduction == 0 ? go : expand_op(reduction == 1 ? go / static_cast<double>(n) : go, x.sizes());
          if (create) {  // the saved inputs themselves, so that the gradient is differentiable in them
            x = expand_op(to_dtype(c.get(4), x.dtype()), x.sizes());
            t = expand_op(to_dtype(c.get(5), x.dtype()), x.sizes());
          }
          auto [dx, dt] = loss_derivs(kind, x, t, w, pw, beta);
          if (create) r[0] = gfull * dx;
          if (c.needs_input_grad(1)) r[1] = gfull * dt;
        }
        if (!create && c.needs_input_grad(0)) {
          Tensor gi = empty(x.sizes(), x.dtype(), x.device());
          Tensor gc = contiguous(go);
          kernel<LossBackwardKernel>(loss_backward_op(kind), x.device())(gc, x, t, w, pw, gi, LossArgs{kind, static_cast<int>(reduction), beta});
          r[0] = gi;
        }
        return r;
      })) {
    autograd::set_history(node, {&out});
    node->save(x);
    node->save(t);
    node->save(w);
    node->save(pw);
    node->save(input);
    node->save(target);
  }
  return out;
}

// ---------------------------------------------------------------- dropout
Tensor dropout_mask(const Shape& shape, ScalarType dtype, Device device, double p) {
  Tensor mask = empty(shape, dtype, device);
  Tensor none;
  kernel<DropoutKernel>(Op::dropout, device)(none, none, mask, p);
  return mask;
}

// input * mask in one pass (0 < p <= 1, floating input); records torch's CPU node, MulBackward0.
Tensor fused_dropout(const Tensor& input, double p) {
  AG_CHECK_NOT_IMPL(is_floating(input.dtype()), "\"dropout\" not implemented for '", scalar_type_name(input.dtype()), "'");
  Tensor x = contiguous(detach(input));
  Tensor out = empty(input.sizes(), input.dtype(), input.device());
  Tensor mask = empty(input.sizes(), input.dtype(), input.device());
  kernel<DropoutKernel>(Op::dropout, input.device())(x, out, mask, p);
  fw_rule(out, {&input}, [&](const variable_list& t) { return t[0] * mask; });
  if (auto node = autograd::make_node("MulBackward0", {&input}, AG_BW { return {c.grad_or_zeros(g, 0) * c.get(0)}; })) {
    autograd::set_history(node, {&out});
    node->save(mask);
  }
  return out;
}

// ---------------------------------------------------------------- embedding
Tensor fused_embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool scale_grad_by_freq) {
  AG_CHECK(weight.dim() == 2, "'weight' must be 2-D");
  AG_CHECK(indices.dtype() == ScalarType::Int64 || indices.dtype() == ScalarType::Int32,
           "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got ",
           scalar_type_name(indices.dtype()), " instead (while checking arguments for embedding)");
  const int64_t V = weight.sizes()[0], D = weight.sizes()[1];
  Tensor idx = contiguous(detach(indices));
  const int64_t n = idx.numel();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = idx.dtype() == ScalarType::Int64 ? idx.data<int64_t>()[i] : idx.data<int32_t>()[i];
    AG_CHECK_INDEX(r >= 0 && r < V, "index out of range in self");
  }
  Shape shape = indices.sizes();
  shape.push_back(D);
  Tensor out = empty(shape, weight.dtype(), weight.device());
  kernel<EmbeddingKernel>(Op::embedding, weight.device())(weight, idx, out);
  fw_rule(out, {&weight}, [&](const variable_list& t) { return fused_embedding(t[0], idx, -1, false); });
  if (is_floating(weight.dtype()))
    if (auto node = autograd::make_node("EmbeddingBackward0", {&weight}, AG_BW {
          Tensor idx = c.get(0);
          Tensor go = reshape(c.grad_or_zeros(g, 0), {n, D});
          if (autograd::GradMode::is_enabled()) {  // create_graph: index_add, differentiable in the grad
            Tensor i64 = reshape(to_dtype(idx, ScalarType::Int64), {n});
            Tensor gg = go;
            if (padding_idx >= 0) gg = where(unsqueeze(compare(Op::eq, i64, wrap_scalar(padding_idx)), 1), wrap_scalar(0.0), gg);
            if (scale_grad_by_freq) {
              Tensor cnt = index_add(full({V}, Scalar(0.0), go.dtype(), go.device()), 0, i64, full({n}, Scalar(1.0), go.dtype(), go.device()));
              gg = gg / unsqueeze(index_select(cnt, 0, i64), 1);
            }
            return {index_add(full({V, D}, Scalar(0.0), go.dtype(), go.device()), 0, i64, gg)};
          }
          Tensor gw = full({V, D}, Scalar(0.0), go.dtype(), go.device());
          Tensor gc = contiguous(go);
          kernel<EmbeddingBackwardKernel>(Op::embedding_backward, gw.device())(gc, idx, gw, padding_idx, scale_grad_by_freq);
          return {gw};
        })) {
      autograd::set_history(node, {&out});
      node->save(idx);
    }
  return out;
}

}  // namespace ampgrad
