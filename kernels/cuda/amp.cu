// CUDA GradScaler kernels: unscale every grad in place and raise found_inf on the device (no host
// sync) with one multi-tensor launch per pack of contiguous grads (kernels/cuda/multi_tensor.cuh),
// and the scale update as a one-thread kernel. Mirrors kernels/cpu/amp.cpp.
// Compile-checked only: not yet run on a GPU.
#include "kernels/cuda/multi_tensor.cuh"

namespace ampgrad::cuda {
namespace {

// x *= inv; notes a non-finite input. Each thread raises found_inf at most once, after its loop.
template <typename A>
struct UnscaleOp {
  A inv;
  bool bad = false;
  __device__ __forceinline__ void operator()(A* x) {
    if (!isfinite(x[0])) bad = true;
    x[0] = x[0] * inv;
  }
  __device__ __forceinline__ bool writes(int) const { return true; }
};

template <typename D>
struct UnscaleFunctor {
  const float* inv;
  float* found;
  __device__ __forceinline__ void operator()(const MtaMeta<1>& m, int slot, int64_t lo, int64_t hi) const {
    UnscaleOp<dacc_t<D>> op{static_cast<dacc_t<D>>(*inv)};
    for_chunk<D>(m, slot, lo, hi, op);
    if (op.bad) *found = 1.0f;  // every writer stores the same value: the race is benign
  }
};

// The strided fallback (non-contiguous grads), one launch per grad.
struct Unscale {
  const float* inv;
  float* found;
  template <typename T> __device__ T operator()(T v) const {
    if (!isfinite(v)) *found = 1.0f;
    return v * static_cast<T>(*inv);
  }
};

void k_amp_unscale(std::vector<Tensor>& grads, Tensor& found_inf, const Tensor& inv_scale) {
  const float* inv = inv_scale.data<float>();
  float* found = found_inf.data<float>();
  std::vector<Tensor> dense;
  for (auto& g : grads) {
    if (g.is_contiguous()) { dense.push_back(g); continue; }
    TensorIter it;
    it.build({&g, &g});
    AG_DISPATCH_FLOAT(g.dtype(), "_amp_foreach_non_finite_check_and_unscale_cuda", [&] {
      using D = dev_t<scalar_t>;
      launch<D, D>(it, Unscale{inv, found});
    });
  }
  for (const MtaGroup& grp : group_by_device_dtype(dense)) {
    std::vector<MtaTensor<1>> list;
    for (size_t i : grp.index) list.push_back(MtaTensor<1>{{dense[i].data_ptr()}, dense[i].numel()});
    AG_DISPATCH_FLOAT(grp.dtype, "_amp_foreach_non_finite_check_and_unscale_cuda", [&] {
      multi_tensor_apply<1>(grp.device, list, UnscaleFunctor<dev_t<scalar_t>>{inv, found});
    });
  }
}

// The factors are doubles and the product is rounded once to float, as torch's kernels do.
__global__ void update_scale_kernel(float* s, int32_t* t, const float* found_inf, double growth, double backoff, int64_t interval) {
  if (*found_inf != 0.0f) {
    *s = static_cast<float>(static_cast<double>(*s) * backoff);
    *t = 0;
    return;
  }
  const int32_t successful = *t + 1;
  if (successful == interval) {
    const float grown = static_cast<float>(static_cast<double>(*s) * growth);
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
                                                        growth, backoff, interval);
  AG_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

AG_REGISTER_KERNEL(amp_unscale, CUDA, k_amp_unscale);
AG_REGISTER_KERNEL(amp_update_scale, CUDA, k_amp_update_scale);

}  // namespace ampgrad::cuda
