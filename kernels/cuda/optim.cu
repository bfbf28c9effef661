// CUDA kernels of the multi-tensor optimizer steps (Note [Fused optimizer steps]): one
// multi-tensor launch per pack of parameters (kernels/cuda/multi_tensor.cuh), with the per-element
// arithmetic of kernels/cpu/optim.cpp. found_inf and grad_scale are read on the device; Adam's step
// counts live on the device too (as torch's fused Adam keeps them), so no step syncs the host.
// Compile-checked only: not yet run on a GPU.
#include "kernels/cuda/multi_tensor.cuh"

namespace ampgrad::cuda {
namespace {

template <typename A> __device__ __forceinline__ A d_lerp(A self, A end, A w) {
  return fabs(w) < A(0.5) ? self + w * (end - self) : end - (end - self) * (A(1) - w);
}
template <typename D> __device__ __forceinline__ dacc_t<D> rd(dacc_t<D> x) { return cvt<dacc_t<D>>(cvt<D>(x)); }  // round through D

__device__ __forceinline__ bool skip(const float* found_inf) { return found_inf && *found_inf != 0.0f; }

// ---- SGD: lists p, g (and the momentum buffer b when momentum != 0).
template <typename D, int Depth>
struct SgdOp {
  using A = dacc_t<D>;
  A scale, wd, mom, damp1, neg_lr;
  bool unscale, first, maximize, decay, nesterov;
  __device__ __forceinline__ void operator()(A* x) const {
    A gi = x[1];
    if (unscale) { gi = gi / scale; x[1] = gi; }
    if (maximize) gi = -gi;
    if (decay) gi = gi + wd * x[0];
    if constexpr (Depth == 3) {
      const A bi = rd<D>(first ? gi : rd<D>(x[2] * mom) + damp1 * gi);
      x[2] = bi;
      gi = nesterov ? gi + mom * bi : bi;
    }
    x[0] = x[0] + neg_lr * gi;
  }
  __device__ __forceinline__ bool writes(int d) const { return d != 1 || unscale; }
};

template <typename D, int Depth>
struct SgdFunctor {
  using A = dacc_t<D>;
  const float *grad_scale, *found_inf;
  A wd, mom, damp1, neg_lr;
  bool maximize, decay, nesterov;
  __device__ __forceinline__ void operator()(const MtaMeta<Depth>& m, int slot, int64_t lo, int64_t hi) const {
    if (skip(found_inf)) return;
    const SgdOp<D, Depth> op{grad_scale ? static_cast<A>(*grad_scale) : A(1), wd, mom, damp1, neg_lr, grad_scale != nullptr,
                             (m.flags[slot] & kSlotFresh) != 0, maximize, decay, nesterov};
    for_chunk<D>(m, slot, lo, hi, op);
  }
};

template <typename D, int Depth>
void sgd_group(int device, const std::vector<MtaTensor<Depth>>& list, const SgdArgs& a, const float* gs, const float* fi) {
  using A = dacc_t<D>;
  const SgdFunctor<D, Depth> f{gs, fi, static_cast<A>(a.weight_decay), static_cast<A>(a.momentum),
                               static_cast<A>(1 - a.dampening), static_cast<A>(-a.lr), a.maximize, a.weight_decay != 0,
                               a.nesterov};
  multi_tensor_apply<Depth>(device, list, f);
}

void k_sgd_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& bufs,
                const std::vector<bool>& fresh, const SgdArgs& a, const Tensor* grad_scale, const Tensor* found_inf) {
  const float* gs = grad_scale ? grad_scale->data<float>() : nullptr;
  const float* fi = found_inf ? found_inf->data<float>() : nullptr;
  const bool use_mom = a.momentum != 0;
  for (const MtaGroup& grp : group_by_device_dtype(params)) {
    AG_DISPATCH_FLOAT(grp.dtype, "_sgd_step_cuda", [&] {
      using D = dev_t<scalar_t>;
      if (use_mom) {
        std::vector<MtaTensor<3>> list;
        for (size_t i : grp.index)
          list.push_back(MtaTensor<3>{{params[i].data_ptr(), grads[i].data_ptr(), bufs[i].data_ptr()}, params[i].numel(),
                                      nullptr, static_cast<uint8_t>(fresh[i] ? kSlotFresh : 0)});
        sgd_group<D, 3>(grp.device, list, a, gs, fi);
      } else {
        std::vector<MtaTensor<2>> list;
        for (size_t i : grp.index) list.push_back(MtaTensor<2>{{params[i].data_ptr(), grads[i].data_ptr()}, params[i].numel()});
        sgd_group<D, 2>(grp.device, list, a, gs, fi);
      }
    });
  }
}

// ---- Adam / AdamW: lists p, g, exp_avg, exp_avg_sq (and max_exp_avg_sq with amsgrad); each
// tensor's extra pointer is its float32 step count on the device.
template <typename D, int Depth>
struct AdamOp {
  using A = dacc_t<D>;
  A scale, wd, decay, w1, beta2, w2, bc2s, eps, neg_step;
  bool unscale, maximize, use_decay, decoupled;
  __device__ __forceinline__ void operator()(A* x) const {
    A gi = x[1];
    if (unscale) { gi = gi / scale; x[1] = gi; }
    if (maximize) gi = -gi;
    A pi = x[0];
    if (use_decay) {
      if (decoupled) pi = rd<D>(pi * decay);
      else gi = gi + wd * pi;
    }
    const A mi = rd<D>(d_lerp<A>(x[2], gi, w1));
    A vi = rd<D>(x[3] * beta2);
    vi = rd<D>(vi + w2 * gi * gi);
    x[2] = mi;
    x[3] = vi;
    A vd = vi;
    if constexpr (Depth == 5) {
      vd = x[4] > vi ? x[4] : vi;
      x[4] = vd;
    }
    const A denom = rd<D>(sqrt(vd) / bc2s) + eps;
    x[0] = pi + neg_step * mi / rd<D>(denom);
  }
  __device__ __forceinline__ bool writes(int d) const { return d != 1 || unscale; }
};

template <typename D, int Depth>
struct AdamFunctor {
  using A = dacc_t<D>;
  const float *grad_scale, *found_inf;
  double lr, beta1, beta2, weight_decay, eps;
  bool maximize, decoupled;
  __device__ __forceinline__ void operator()(const MtaMeta<Depth>& m, int slot, int64_t lo, int64_t hi) const {
    if (skip(found_inf)) return;
    // StepFunctor has already counted this step; bias corrections in double, as on the CPU.
    const double step = *static_cast<const float*>(m.extra[slot]);
    const double bc1 = 1 - ::pow(beta1, step), bc2 = 1 - ::pow(beta2, step);
    const AdamOp<D, Depth> op{grad_scale ? static_cast<A>(*grad_scale) : A(1),
                              static_cast<A>(weight_decay),
                              static_cast<A>(1 - lr * weight_decay),
                              static_cast<A>(1 - beta1),
                              static_cast<A>(beta2),
                              static_cast<A>(1 - beta2),
                              static_cast<A>(::sqrt(bc2)),
                              static_cast<A>(eps),
                              static_cast<A>(-(lr / bc1)),
                              grad_scale != nullptr,
                              maximize,
                              weight_decay != 0,
                              decoupled};
    for_chunk<D>(m, slot, lo, hi, op);
  }
};

// step += 1 for every step count unless found_inf is set (torch's fused Adam adds 1, then subtracts
// found_inf: the same counts). Launched before the update kernels, which then read the new count.
struct StepOp {
  __device__ __forceinline__ void operator()(float* x) const { x[0] += 1.0f; }
  __device__ __forceinline__ bool writes(int) const { return true; }
};
struct StepFunctor {
  const float* found_inf;
  __device__ __forceinline__ void operator()(const MtaMeta<1>& m, int slot, int64_t lo, int64_t hi) const {
    if (skip(found_inf)) return;
    StepOp op;
    for_chunk<float>(m, slot, lo, hi, op);
  }
};

template <typename D, int Depth>
void adam_group(int device, const std::vector<size_t>& index, const std::vector<Tensor>& params,
                const std::vector<Tensor>& grads, const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                const std::vector<Tensor>& max_sqs, const std::vector<Tensor>& steps, const AdamArgs& a, const float* gs,
                const float* fi) {
  std::vector<MtaTensor<Depth>> list;
  for (size_t i : index) {
    MtaTensor<Depth> t;
    t.ptrs[0] = params[i].data_ptr();
    t.ptrs[1] = grads[i].data_ptr();
    t.ptrs[2] = exp_avgs[i].data_ptr();
    t.ptrs[3] = exp_avg_sqs[i].data_ptr();
    if constexpr (Depth == 5) t.ptrs[4] = max_sqs[i].data_ptr();
    t.numel = params[i].numel();
    t.extra = steps[i].data_ptr();
    list.push_back(t);
  }
  const AdamFunctor<D, Depth> f{gs, fi, a.lr, a.beta1, a.beta2, a.weight_decay, a.eps, a.maximize, a.decoupled};
  multi_tensor_apply<Depth>(device, list, f);
}

void k_adam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& exp_avgs,
                 const std::vector<Tensor>& exp_avg_sqs, const std::vector<Tensor>& max_sqs,
                 const std::vector<Tensor>& steps, const AdamArgs& a, const Tensor* grad_scale, const Tensor* found_inf) {
  if (params.empty()) return;
  const float* gs = grad_scale ? grad_scale->data<float>() : nullptr;
  const float* fi = found_inf ? found_inf->data<float>() : nullptr;
  // Every step count moves first (also for empty params, as on the CPU), then the updates read them.
  for (const MtaGroup& grp : group_by_device_dtype(steps)) {
    std::vector<MtaTensor<1>> list;
    for (size_t i : grp.index) list.push_back(MtaTensor<1>{{steps[i].data_ptr()}, 1});
    multi_tensor_apply<1>(grp.device, list, StepFunctor{fi});
  }
  for (const MtaGroup& grp : group_by_device_dtype(params)) {
    AG_DISPATCH_FLOAT(grp.dtype, "_adam_step_cuda", [&] {
      using D = dev_t<scalar_t>;
      if (a.amsgrad) adam_group<D, 5>(grp.device, grp.index, params, grads, exp_avgs, exp_avg_sqs, max_sqs, steps, a, gs, fi);
      else adam_group<D, 4>(grp.device, grp.index, params, grads, exp_avgs, exp_avg_sqs, max_sqs, steps, a, gs, fi);
    });
  }
}

}  // namespace

AG_REGISTER_KERNEL(sgd_step, CUDA, k_sgd_step);
AG_REGISTER_KERNEL(adam_step, CUDA, k_adam_step);

}  // namespace ampgrad::cuda
