// CUDA kernels of the multi-tensor optimizer steps (Note [Fused optimizer steps]), one launch per
// parameter for now (a multi-tensor launch is the obvious next step). Same per-element arithmetic
// as kernels/cpu/optim.cpp; found_inf and grad_scale are read on the device, so SGD needs no host
// sync. Adam's step counts are CPU tensors, so with found_inf it reads the flag once on the host.
// Compile-checked only: not yet run on a GPU.
#include <cmath>
#include "kernels/cuda/loops.cuh"

namespace ampgrad::cuda {
namespace {

template <typename A> __device__ __forceinline__ A d_lerp(A self, A end, A w) {
  return fabs(w) < A(0.5) ? self + w * (end - self) : end - (end - self) * (A(1) - w);
}
template <typename D> __device__ __forceinline__ dacc_t<D> rd(dacc_t<D> x) { return cvt<dacc_t<D>>(cvt<D>(x)); }  // round through D

template <typename D>
struct SgdParams {
  D *p, *g, *b;
  int64_t n;
  const float *grad_scale, *found_inf;
  dacc_t<D> wd, mom, damp1, neg_lr;
  bool first, maximize, decay, use_mom, nesterov;
};

template <typename D>
__global__ void sgd_kernel(SgdParams<D> a) {
  using A = dacc_t<D>;
  if (a.found_inf && *a.found_inf != 0.0f) return;
  const A scale = a.grad_scale ? static_cast<A>(*a.grad_scale) : A(1);
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.n; i += step) {
    A gi = cvt<A>(a.g[i]);
    if (a.grad_scale) { gi = gi / scale; a.g[i] = cvt<D>(gi); }
    if (a.maximize) gi = -gi;
    if (a.decay) gi = gi + a.wd * cvt<A>(a.p[i]);
    if (a.use_mom) {
      A bi = a.first ? gi : rd<D>(cvt<A>(a.b[i]) * a.mom) + a.damp1 * gi;
      a.b[i] = cvt<D>(bi);
      bi = cvt<A>(a.b[i]);
      gi = a.nesterov ? gi + a.mom * bi : bi;
    }
    a.p[i] = cvt<D>(cvt<A>(a.p[i]) + a.neg_lr * gi);
  }
}

void k_sgd_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& bufs,
                const std::vector<bool>& fresh, const SgdArgs& a, const Tensor* grad_scale, const Tensor* found_inf) {
  for (size_t t = 0; t < params.size(); ++t) {
    AG_DISPATCH_FLOAT(params[t].dtype(), "_sgd_step_cuda", [&] {
      using D = dev_t<scalar_t>;
      using A = dacc_t<D>;
      SgdParams<D> k;
      k.p = reinterpret_cast<D*>(params[t].data_ptr());
      k.g = reinterpret_cast<D*>(grads[t].data_ptr());
      k.b = bufs[t].defined() ? reinterpret_cast<D*>(bufs[t].data_ptr()) : nullptr;
      k.n = params[t].numel();
      k.grad_scale = grad_scale ? grad_scale->data<float>() : nullptr;
      k.found_inf = found_inf ? found_inf->data<float>() : nullptr;
      k.wd = static_cast<A>(a.weight_decay);
      k.mom = static_cast<A>(a.momentum);
      k.damp1 = static_cast<A>(1 - a.dampening);
      k.neg_lr = static_cast<A>(-a.lr);
      k.first = fresh[t];
      k.maximize = a.maximize;
      k.decay = a.weight_decay != 0;
      k.use_mom = a.momentum != 0;
      k.nesterov = a.nesterov;
      if (k.n == 0) return;
      const int dev = params[t].device().norm();
      DeviceGuard g(dev);
      sgd_kernel<D><<<grid_size(k.n), kThreads, 0, current_stream(dev)>>>(k);
      AG_CUDA_KERNEL_LAUNCH_CHECK();
    });
  }
}

template <typename D>
struct AdamParams {
  D *p, *g, *m, *v, *vmax;
  int64_t n;
  const float* grad_scale;
  dacc_t<D> wd, decay, w1, beta2, w2, bc2s, eps, neg_step;
  bool maximize, use_decay, decoupled;
};

template <typename D>
__global__ void adam_kernel(AdamParams<D> a) {
  using A = dacc_t<D>;
  const A scale = a.grad_scale ? static_cast<A>(*a.grad_scale) : A(1);
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.n; i += step) {
    A gi = cvt<A>(a.g[i]);
    if (a.grad_scale) { gi = gi / scale; a.g[i] = cvt<D>(gi); }
    if (a.maximize) gi = -gi;
    A pi = cvt<A>(a.p[i]);
    if (a.use_decay) {
      if (a.decoupled) pi = rd<D>(pi * a.decay);
      else gi = gi + a.wd * pi;
    }
    const A mi = rd<D>(d_lerp<A>(cvt<A>(a.m[i]), gi, a.w1));
    A vi = rd<D>(cvt<A>(a.v[i]) * a.beta2);
    vi = rd<D>(vi + a.w2 * gi * gi);
    a.m[i] = cvt<D>(mi);
    a.v[i] = cvt<D>(vi);
    A vd = vi;
    if (a.vmax) {
      const A old = cvt<A>(a.vmax[i]);
      vd = old > vi ? old : vi;
      a.vmax[i] = cvt<D>(vd);
    }
    const A denom = rd<D>(sqrt(vd) / a.bc2s) + a.eps;
    a.p[i] = cvt<D>(pi + a.neg_step * mi / rd<D>(denom));
  }
}

void k_adam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& exp_avgs,
                 const std::vector<Tensor>& exp_avg_sqs, const std::vector<Tensor>& max_sqs,
                 const std::vector<Tensor>& steps, const AdamArgs& a, const Tensor* grad_scale, const Tensor* found_inf) {
  if (params.empty()) return;
  if (found_inf) {  // the step counts live on the host: one sync to learn whether to skip
    float f = 0;
    memcpy_device(&f, Device(), found_inf->data_ptr(), found_inf->device(), sizeof(float));
    if (f != 0.0f) return;
  }
  for (size_t t = 0; t < params.size(); ++t) {
    float& step_ref = *steps[t].data<float>();
    step_ref += 1.0f;
    const double step = step_ref;
    const double bc1 = 1 - std::pow(a.beta1, step), bc2 = 1 - std::pow(a.beta2, step);
    const double step_size = a.lr / bc1, bc2_sqrt = std::sqrt(bc2);
    AG_DISPATCH_FLOAT(params[t].dtype(), "_adam_step_cuda", [&] {
      using D = dev_t<scalar_t>;
      using A = dacc_t<D>;
      AdamParams<D> k;
      k.p = reinterpret_cast<D*>(params[t].data_ptr());
      k.g = reinterpret_cast<D*>(grads[t].data_ptr());
      k.m = reinterpret_cast<D*>(exp_avgs[t].data_ptr());
      k.v = reinterpret_cast<D*>(exp_avg_sqs[t].data_ptr());
      k.vmax = a.amsgrad ? reinterpret_cast<D*>(max_sqs[t].data_ptr()) : nullptr;
      k.n = params[t].numel();
      k.grad_scale = grad_scale ? grad_scale->data<float>() : nullptr;
      k.wd = static_cast<A>(a.weight_decay);
      k.decay = static_cast<A>(1 - a.lr * a.weight_decay);
      k.w1 = static_cast<A>(1 - a.beta1);
      k.beta2 = static_cast<A>(a.beta2);
      k.w2 = static_cast<A>(1 - a.beta2);
      k.bc2s = static_cast<A>(bc2_sqrt);
      k.eps = static_cast<A>(a.eps);
      k.neg_step = static_cast<A>(-step_size);
      k.maximize = a.maximize;
      k.use_decay = a.weight_decay != 0;
      k.decoupled = a.decoupled;
      if (k.n == 0) return;
      const int dev = params[t].device().norm();
      DeviceGuard g(dev);
      adam_kernel<D><<<grid_size(k.n), kThreads, 0, current_stream(dev)>>>(k);
      AG_CUDA_KERNEL_LAUNCH_CHECK();
    });
  }
}

}  // namespace

AG_REGISTER_KERNEL(sgd_step, CUDA, k_sgd_step);
AG_REGISTER_KERNEL(adam_step, CUDA, k_adam_step);

}  // namespace ampgrad::cuda
