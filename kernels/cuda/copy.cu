// CUDA copy / cast, fill, arange, linspace and the ternary kernels (where, lerp, addcmul, addcdiv),
// mirroring kernels/cpu/elementwise.cpp; arange, linspace and the ternary math are the functors of
// kernels/common/scalar_math.h. Compile-checked only: not yet run on a GPU.
#include "kernels/common/scalar_math.h"
#include "kernels/cuda/loops.cuh"

namespace ampgrad::cuda {
namespace {

struct Identity {
  template <typename T> __device__ T operator()(T x) const { return x; }
};

void k_copy(TensorIter& it, const double*) {
  AG_DISPATCH_ALL_U(it.dtype(0), "copy_", [&] {
    using O = dev_t<scalar_t>;
    AG_DISPATCH_ALL_U(it.dtype(1), "copy_", [&] {
      using I = dev_t<scalar_t>;
      if constexpr (std::is_same_v<O, I>) {
        if (it.numel > 0 && it.contiguous(0) && it.contiguous(1)) {  // same dtype, dense: a plain memcpy
          const int dev = iter_device(it);
          DeviceGuard g(dev);
          AG_CUDA_CHECK(cudaMemcpyAsync(it.data[0], it.data[1], it.numel * sizeof(O), cudaMemcpyDeviceToDevice, current_stream(dev)));
          return;
        }
      }
      launch<O, I>(it, Identity{});
    });
  });
}
AG_REGISTER_KERNEL(copy, CUDA, k_copy);

template <typename T>
struct Constant {
  T v;
  __device__ T operator()() const { return v; }
};
void k_fill(TensorIter& it, const double* s) {
  AG_DISPATCH_ALL_U(it.dtype(0), "fill_", [&] {
    using D = dev_t<scalar_t>;
    using A = dacc_t<D>;
    // Round through the storage type on the host, as the CPU kernel does (static_cast<scalar_t>(acc)).
    if constexpr (is_barebones_unsigned_v<scalar_t>) launch<D>(it, Constant<A>{float_to_unsigned<scalar_t>(s[0])});
    else launch<D>(it, Constant<A>{static_cast<A>(static_cast<acc_t<scalar_t>>(static_cast<scalar_t>(static_cast<acc_t<scalar_t>>(s[0]))))});
  });
}
AG_REGISTER_KERNEL(fill, CUDA, k_fill);

// arange / linspace write a contiguous 1-d output: element i gets f(i).
template <typename D, typename F>
__global__ void index_kernel(D* out, int64_t n, F f) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) out[i] = cvt<D>(f(i));
}
template <typename D, typename F>
void launch_index(TensorIter& it, const F& f) {
  if (it.numel == 0) return;
  AG_CHECK(it.contiguous(0), "internal error: arange/linspace expect a contiguous output");
  const int dev = iter_device(it);
  DeviceGuard g(dev);
  index_kernel<D><<<grid_size(it.numel), kThreads, 0, current_stream(dev)>>>(reinterpret_cast<D*>(it.data[0]), it.numel, f);
  AG_CUDA_KERNEL_LAUNCH_CHECK();
}

void k_arange(TensorIter& it, const double* s) {
  AG_DISPATCH_NUMERIC(it.dtype(0), "arange_cuda", [&] {
    using D = dev_t<scalar_t>;
    launch_index<D>(it, math::Arange<dacc_t<D>>{s[0], s[1]});
  });
}
AG_REGISTER_KERNEL(arange, CUDA, k_arange);

void k_linspace(TensorIter& it, const double* s) {
  AG_DISPATCH_NUMERIC(it.dtype(0), "linspace_cuda", [&] {
    using D = dev_t<scalar_t>;
    using St = std::conditional_t<std::is_integral_v<scalar_t>, double, acc_t<scalar_t>>;
    const int64_t steps = it.numel, half = static_cast<int64_t>(s[2]);
    const St start = static_cast<St>(static_cast<scalar_t>(static_cast<acc_t<scalar_t>>(s[0])));
    const St end = static_cast<St>(static_cast<scalar_t>(static_cast<acc_t<scalar_t>>(s[3])));
    const St step = steps > 1 ? (end - start) / static_cast<St>(steps - 1) : St(0);
    launch_index<D>(it, math::Linspace<St>{start, end, step, steps, half});
  });
}
AG_REGISTER_KERNEL(linspace, CUDA, k_linspace);

// ---- ternary
struct WhereF {
  template <typename T> __device__ T operator()(bool c, T a, T b) const { return c ? a : b; }
};
void k_where(TensorIter& it, const double*) {
  AG_DISPATCH_ALL_U(it.dtype(0), "where_cuda", [&] { using D = dev_t<scalar_t>; launch<D, bool, D, D>(it, WhereF{}); });
}
AG_REGISTER_KERNEL(where, CUDA, k_where);

#define AG_CUDA_TERNARY(OP, DISPATCH, FN)                                                      \
  void k_##OP(TensorIter& it, const double* s) {                                             \
    const auto f = math::make_op<math::FN>(s);                                               \
    DISPATCH(it.dtype(0), #OP "_cuda", [&] { using D = dev_t<scalar_t>; launch<D, D, D, D>(it, f); }); \
  }                                                                                          \
  AG_REGISTER_KERNEL(OP, CUDA, k_##OP);

// One kernel per ternary row of the op table (Note [Op table]).
#define AG_UNARY(name, cuda, cpu, dispatch, functor, api)
#define AG_PRED(name, cuda, cpu, functor)
#define AG_BINARY(name, cuda, cpu, dispatch, out, functor, api)
#define AG_TERNARY(name, cuda, cpu, dispatch, functor) AG_CUDA_TERNARY(name, AG_DISPATCH_##dispatch, functor)
#define AG_OP(name, cuda, cpu, family)
#include "ops/op_list.def"

}  // namespace
}  // namespace ampgrad::cuda
