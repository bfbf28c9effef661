// Front ends of the multi-tensor optimizer steps (Note [Fused optimizer steps]): argument checks,
// lazily created momentum buffers, contiguous staging; the kernel does every update.
#include "ops/internal.h"

namespace ampgrad {

namespace {
void check_flag(const std::optional<Tensor>& t, const char* name, Device dev) {
  if (!t) return;
  AG_CHECK(t->numel() == 1 && t->dtype() == ScalarType::Float32, "[", name, "] expected a 1-element float32 tensor, got ",
           dtype_name(t->dtype()), " of shape ", shape_str(t->sizes()));
  AG_CHECK(t->device() == dev, "[", name, "] expected a tensor on ", dev.str(), ", got one on ", t->device().str());
}

void check_like(const Tensor& p, const Tensor& t, const char* what, const char* op) {
  AG_CHECK(t.defined(), op, ": ", what, " is missing");
  AG_CHECK(t.sizes() == p.sizes(), op, ": ", what, " of shape ", shape_str(t.sizes()), " does not match the param's shape ",
           shape_str(p.sizes()));
  AG_CHECK(t.dtype() == p.dtype(), op, ": ", what, " has dtype ", dtype_name(t.dtype()), " but the param has dtype ",
           dtype_name(p.dtype()));
  AG_CHECK(t.device() == p.device(), op, ": ", what, " is on ", t.device().str(), " but the param is on ", p.device().str());
}

// The kernels walk dense memory: non-contiguous operands are staged through contiguous copies
// and written back afterwards.
struct Staging {
  std::vector<std::pair<Tensor, Tensor>> back;  // (original, staged)
  Tensor stage(const Tensor& t) {
    if (!t.defined() || t.is_contiguous()) return t;
    autograd::AutoGradMode off(false);
    Tensor c = contiguous(detach(t));
    back.emplace_back(t, c);
    return c;
  }
  void finish() {
    autograd::AutoGradMode off(false);
    for (auto& [orig, c] : back) {
      Tensor o = detach(orig);
      run_elementwise(Op::copy, o, {&c});
    }
  }
};

void bump(const std::vector<Tensor>& ts) {
  for (const Tensor& t : ts)
    if (t.defined()) t.bump_version();
}
}  // namespace

std::vector<Tensor> sgd_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                             const std::vector<Tensor>& momentum_buffers, double lr, double momentum, double dampening,
                             bool nesterov, double weight_decay, bool maximize, const std::optional<Tensor>& grad_scale,
                             const std::optional<Tensor>& found_inf) {
  const size_t n = params.size();
  AG_CHECK(grads.size() == n && momentum_buffers.size() == n, "_sgd_step: expected lists of equal length, got ", n, " params, ",
           grads.size(), " grads and ", momentum_buffers.size(), " momentum buffers");
  AG_CHECK(!nesterov || (momentum > 0 && dampening == 0), "Nesterov momentum requires a momentum and zero dampening");
  std::vector<Tensor> bufs(n);
  std::vector<bool> fresh(n, false);
  if (n == 0) return bufs;
  check_flag(grad_scale, "_sgd_step grad_scale", params[0].device());
  check_flag(found_inf, "_sgd_step found_inf", params[0].device());
  Staging st;
  std::vector<Tensor> p(n), g(n), b(n);
  for (size_t i = 0; i < n; ++i) {
    AG_CHECK_TYPE(is_floating(params[i].dtype()), "_sgd_step: params must be floating point, got ", dtype_name(params[i].dtype()));
    check_like(params[i], grads[i], "grad", "_sgd_step");
    if (momentum != 0) {
      if (momentum_buffers[i].defined()) {
        check_like(params[i], momentum_buffers[i], "momentum buffer", "_sgd_step");
        bufs[i] = momentum_buffers[i];
      } else {
        // Zeros, not empty: a first step skipped by found_inf must leave a harmless buffer.
        bufs[i] = full(params[i].sizes(), Scalar(0.0), params[i].dtype(), params[i].device());
        fresh[i] = true;
      }
    }
    p[i] = st.stage(params[i]); g[i] = st.stage(grads[i]); b[i] = st.stage(bufs[i]);
  }
  SgdArgs a{lr, momentum, dampening, weight_decay, nesterov, maximize};
  const Tensor* gs = grad_scale ? &*grad_scale : nullptr;
  const Tensor* fi = found_inf ? &*found_inf : nullptr;
  kernel<SgdStepKernel>(Op::sgd_step, params[0].device())(p, g, b, fresh, a, gs, fi);
  st.finish();
  bump(params); bump(bufs);
  if (gs) bump(grads);
  return bufs;
}

void adam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& exp_avgs,
               const std::vector<Tensor>& exp_avg_sqs, const std::vector<Tensor>& max_exp_avg_sqs,
               const std::vector<Tensor>& state_steps, double lr, double beta1, double beta2, double eps,
               double weight_decay, bool decoupled, bool amsgrad, bool maximize, const std::optional<Tensor>& grad_scale,
               const std::optional<Tensor>& found_inf) {
  const size_t n = params.size();
  AG_CHECK(grads.size() == n && exp_avgs.size() == n && exp_avg_sqs.size() == n && state_steps.size() == n &&
               (!amsgrad || max_exp_avg_sqs.size() == n),
           "_adam_step: expected lists of equal length (", n, " params)");
  if (n == 0) return;
  check_flag(grad_scale, "_adam_step grad_scale", params[0].device());
  check_flag(found_inf, "_adam_step found_inf", params[0].device());
  Staging st;
  std::vector<Tensor> p(n), g(n), m(n), v(n), vmax(n), steps(n);
  for (size_t i = 0; i < n; ++i) {
    AG_CHECK_TYPE(is_floating(params[i].dtype()), "_adam_step: params must be floating point, got ", dtype_name(params[i].dtype()));
    check_like(params[i], grads[i], "grad", "_adam_step");
    check_like(params[i], exp_avgs[i], "exp_avg", "_adam_step");
    check_like(params[i], exp_avg_sqs[i], "exp_avg_sq", "_adam_step");
    if (amsgrad) check_like(params[i], max_exp_avg_sqs[i], "max_exp_avg_sq", "_adam_step");
    const Tensor& s = state_steps[i];
    // On the param's device, as torch's fused Adam keeps it: a CUDA step then needs no host sync.
    AG_CHECK(s.defined() && s.numel() == 1 && s.dtype() == ScalarType::Float32 && s.is_contiguous(),
             "_adam_step: each state step must be a 1-element float32 tensor");
    AG_CHECK(s.device() == params[i].device(), "_adam_step: a state step is on ", s.device().str(),
             " but its param is on ", params[i].device().str(), " (steps live on the params' device)");
    p[i] = st.stage(params[i]); g[i] = st.stage(grads[i]); m[i] = st.stage(exp_avgs[i]); v[i] = st.stage(exp_avg_sqs[i]);
    if (amsgrad) vmax[i] = st.stage(max_exp_avg_sqs[i]);
    steps[i] = s;
  }
  AdamArgs a{lr, beta1, beta2, eps, weight_decay, decoupled, amsgrad, maximize};
  const Tensor* gs = grad_scale ? &*grad_scale : nullptr;
  const Tensor* fi = found_inf ? &*found_inf : nullptr;
  kernel<AdamStepKernel>(Op::adam_step, params[0].device())(p, g, m, v, vmax, steps, a, gs, fi);
  st.finish();
  bump(params); bump(exp_avgs); bump(exp_avg_sqs); bump(steps);
  if (amsgrad) bump(max_exp_avg_sqs);
  if (gs) bump(grads);
}

}  // namespace ampgrad
