// CUDA GradScaler kernels: unscale each grad in place and raise found_inf on the device (no host
// sync), and the scale update as a one-thread kernel. Mirrors kernels/cpu/amp.cpp.
// Compile-checked only: not yet run on a GPU.
#include "kernels/cuda/loops.cuh"

namespace ampgrad::cuda {
namespace {

struct Unscale {
  const float* inv;
  float* found;
  template <typename T> __device__ T operator()(T v) const {
    if (!isfinite(v)) *found = 1.0f;  // every writer stores the same value: the race is benign
    return v * static_cast<T>(*inv);
  }
};

void k_amp_unscale(std::vector<Tensor>& grads, Tensor& found_inf, const Tensor& inv_scale) {
  Unscale f{inv_scale.data<float>(), found_inf.data<float>()};
  for (auto& g : grads) {
    TensorIter it;
    it.build({&g, &g});
    AG_DISPATCH_FLOAT(g.dtype(), "_amp_foreach_non_finite_check_and_unscale_cuda", [&] {
      using D = dev_t<scalar_t>;
      launch<D, D>(it, f);
    });
  }
}

__global__ void update_scale_kernel(float* s, int32_t* t, const float* found_inf, float growth, float backoff, int64_t interval) {
  if (*found_inf != 0.0f) {
    *s *= backoff;
    *t = 0;
    return;
  }
  const int32_t successful = *t + 1;
  if (successful == interval) {
    const float grown = *s * growth;
    if (isfinite(grown)) *s = grown;
    *t = 0;
  } else {
    *t = successful;
  }
}

void k_amp_update_scale(Tensor& scale, Tensor& tracker, const Tensor& found_inf, double growth, double backoff, int64_t interval) {
  const int dev = scale.device().norm();
  DeviceGuard g(dev);
  update_scale_kernel<<<1, 1, 0, current_stream(dev)>>>(scale.data<float>(), tracker.data<int32_t>(), found_inf.data<float>(),
                                                        static_cast<float>(growth), static_cast<float>(backoff), interval);
  AG_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

AG_REGISTER_KERNEL(amp_unscale, CUDA, k_amp_unscale);
AG_REGISTER_KERNEL(amp_update_scale, CUDA, k_amp_update_scale);

}  // namespace ampgrad::cuda
