// Front ends of nll_loss (NllLossBackward0 / NllLoss2DBackward0, one kernel each way) and of the
// fused softmax / log_softmax backward (torch's _softmax_backward_data / _log_softmax_backward_data).
// cross_entropy is log_softmax then nll_loss, the two nodes torch records (nn/functional.py).
#include "ops/internal.h"

namespace ampgrad {

namespace {
int reduction_enum(const std::string& r) {
  if (r == "none") return 0;
  if (r == "mean") return 1;
  if (r == "sum") return 2;
  AG_THROW(ValueError, r, " is not a valid value for reduction");
}

// A device without the nll kernels (CUDA today): gather, weights and reductions in ampgrad ops.
Tensor nll_composite(const Tensor& logp, const Tensor& target, const Tensor& weight, int red, int64_t ignore_index) {
  const int64_t cdim = logp.dim() == 1 ? 0 : 1, C = logp.sizes()[cdim];
  Tensor t = to_dtype(target, ScalarType::Int64);
  Tensor valid = compare(Op::ne, t, wrap_scalar(ignore_index));
  Tensor bad = logical(Op::logical_and, valid, logical(Op::logical_or, compare(Op::lt, t, wrap_scalar(int64_t(0))),
                                                       compare(Op::ge, t, wrap_scalar(C))));
  if (t.numel() && item_double(any(bad, std::nullopt, false)) != 0)  // a host sync, as torch's device assert
    AG_THROW(IndexError, "Target ", static_cast<int64_t>(item_double(narrow(masked_select(t, bad), 0, 0, 1))), " is out of bounds.");
  Tensor tz = where(valid, t, zeros_like(t));
  Tensor picked = squeeze(gather(logp, cdim, unsqueeze(tz, cdim)), IntList{cdim});
  Tensor w = to_dtype(valid, logp.dtype());
  if (weight.defined()) w = w * reshape(index_select(to_dtype(weight, logp.dtype()), 0, reshape(tz, {-1})), tz.sizes());
  Tensor loss = -picked * w;
  if (red == 0) return loss;
  if (red == 2) return sum(loss, std::nullopt, false, std::nullopt);
  return sum(loss, std::nullopt, false, std::nullopt) / sum(w, std::nullopt, false, std::nullopt);
}

// nll_loss over logp [N, C] / [C] (NllLossBackward0) or [N, C, H, W] (NllLoss2DBackward0).
Tensor nll_core(const Tensor& logp0, const Tensor& target, const Tensor& weight0, int red, int64_t ignore_index) {
  const bool is2d = logp0.dim() == 4;
  if (!has_kernel(Op::nll_loss, logp0.device().type)) return nll_composite(logp0, target, weight0, red, ignore_index);
  NllArgs a{};
  a.N = logp0.dim() <= 1 ? 1 : logp0.sizes()[0];
  a.C = logp0.dim() == 0 ? 1 : logp0.sizes()[logp0.dim() == 1 ? 0 : 1];
  a.S = is2d ? logp0.sizes()[2] * logp0.sizes()[3] : 1;
  a.ignore_index = ignore_index;
  a.reduction = red;
  Tensor logp, tgt, weight;
  {
    autograd::AutoGradMode off(false);
    logp = contiguous(detach(logp0));
    tgt = contiguous(to_dtype(target, ScalarType::Int64));
    weight = weight0.defined() ? contiguous(to_dtype(detach(weight0), logp.dtype())) : Tensor();
  }
  Shape out_shape;
  if (red == 0 && logp0.dim() > 1) {
    out_shape.push_back(a.N);
    if (is2d) { out_shape.push_back(logp0.sizes()[2]); out_shape.push_back(logp0.sizes()[3]); }
  }
  Tensor out = empty(out_shape, logp.dtype(), logp.device());
  Tensor total_weight = empty({}, logp.dtype(), logp.device());
  int64_t bad = kernel<NllKernel>(Op::nll_loss, logp.device())(logp, tgt, weight, out, total_weight, a);
  if (bad >= 0) AG_THROW(IndexError, "Target ", tgt.data<int64_t>()[bad], " is out of bounds.");
  Shape in_shape = logp0.sizes();
  ScalarType dt = logp.dtype();
  fw_rule(out, {&logp0}, [&](const variable_list& t) { return nll_core(t[0], tgt, weight, red, ignore_index); });
  if (!autograd::records({&logp0})) return out;
  auto node = autograd::make_node(is2d ? "NllLoss2DBackward0" : "NllLossBackward0", {&logp0}, AG_BW {
    Tensor tg = c.get(0), w = c.get(1), tw = c.get(2);
    Tensor gin = empty(in_shape, dt, tg.device());
    if (autograd::GradMode::is_enabled() || autograd::fw::on()) {
      // Linear in the incoming gradient: the kernel's pattern for a gradient of ones, times it.
      Tensor ones = red == 0 ? full(g[0].sizes(), Scalar(1.0), dt, tg.device()) : full({}, Scalar(1.0), dt, tg.device());
      kernel<NllBackwardKernel>(Op::nll_loss_backward, tg.device())(ones, tg, w, tw, gin, a);
      Tensor gg = g[0];
      if (red == 0 && in_shape.size() > 1) gg = unsqueeze(gg, 1);
      return {gin * gg};
    }
    Tensor gc = contiguous(g[0]);
    kernel<NllBackwardKernel>(Op::nll_loss_backward, tg.device())(gc, tg, w, tw, gin, a);
    return {gin};
  });
  autograd::set_history(node, {&out});
  node->save(tgt);
  node->save(weight);
  node->save(total_weight);
  return out;
}
}  // namespace

Tensor nll_loss(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight, const std::string& reduction,
                int64_t ignore_index) {
  int red = reduction_enum(reduction);
  AG_CHECK_NOT_IMPL(is_floating(input.dtype()), "\"nll_loss_out_frame\" not implemented for '", scalar_type_name(input.dtype()), "'");
  Tensor w = weight ? *weight : Tensor();
  if (input.dim() <= 2 || input.dim() == 4) return nll_core(input, target, w, red, ignore_index);
  // torch views other N-d inputs as [N, C, S, 1] (NllLoss2DBackward0 behind a ViewBackward0).
  const int64_t N = input.sizes()[0], C = input.sizes()[1];
  const int64_t S = C && N ? input.numel() / (N * C) : shape_numel(Shape(input.sizes().begin() + 2, input.sizes().end()));
  Tensor out = nll_core(reshape(input, {N, C, S, 1}), reshape(target, {N, S, 1}), w, red, ignore_index);
  if (red != 0) return out;
  return reshape(out, target.sizes());
}

// torch's _softmax_backward_data / _log_softmax_backward_data: one kernel, unless the gradient itself
// must be differentiable (create_graph, forward AD): then the same formula in ampgrad ops.
Tensor softmax_backward_data(const Tensor& g, const Tensor& y, int64_t d, bool is_log) {
  IntList dd = y.dim() ? IntList{d} : IntList{};
  if (autograd::GradMode::is_enabled() || autograd::fw::on() || y.dim() == 0 || y.dtype() != g.dtype() ||
      !has_kernel(is_log ? Op::log_softmax_backward : Op::softmax_backward, y.device().type)) {
    if (is_log) return g - exp(y) * sum(g, dd, true, std::nullopt);
    return y * (g - sum(g * y, dd, true, std::nullopt));
  }
  Tensor gc = contiguous(g), yc = contiguous(y);
  ReduceArgs r{};
  r.A = 1; r.R = y.sizes()[d]; r.B = 1;
  for (int64_t i = 0; i < d; ++i) r.A *= y.sizes()[i];
  for (int64_t i = d + 1; i < y.dim(); ++i) r.B *= y.sizes()[i];
  Tensor out = empty(y.sizes(), y.dtype(), y.device());
  if (y.numel() == 0) return out;
  kernel<SoftmaxBackwardKernel>(is_log ? Op::log_softmax_backward : Op::softmax_backward, y.device())(gc, yc, out, r);
  return out;
}

}  // namespace ampgrad
