// CUDA gather / put by element offsets (Note [Offset indexing]) and nonzero (random fills: random.cu).
// Compile-checked only: not yet run on a GPU.
#include "kernels/cuda/loops.cuh"

namespace ampgrad::cuda {
namespace {

template <typename T>
__global__ void gather_kernel(const T* src, const int64_t* off, const int64_t* roff, T* out, int64_t n, int64_t nr) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < n * nr; j += step)
    out[j] = src[off[j / nr] + roff[j % nr]];
}

template <int Bytes> struct Word;
template <> struct Word<1> { using type = uint8_t; };
template <> struct Word<2> { using type = uint16_t; };
template <> struct Word<4> { using type = uint32_t; };
template <> struct Word<8> { using type = uint64_t; };

template <int Bytes>
void gather(const Tensor& src, const Tensor& off, const Tensor& roff, Tensor& out, cudaStream_t st) {
  using W = typename Word<Bytes>::type;
  const int64_t n = off.numel(), nr = roff.numel();
  gather_kernel<W><<<grid_size(n * nr), kThreads, 0, st>>>(reinterpret_cast<const W*>(src.data_ptr()), off.data<int64_t>(),
                                                         roff.data<int64_t>(), reinterpret_cast<W*>(out.data_ptr()), n, nr);
  AG_CUDA_KERNEL_LAUNCH_CHECK();
}

void k_index(const Tensor& src, const Tensor& off, const Tensor& roff, Tensor& out) {
  if (off.numel() == 0 || roff.numel() == 0) return;
  const int dev = src.device().norm();
  DeviceGuard g(dev);
  cudaStream_t st = current_stream(dev);
  switch (itemsize(src.dtype())) {
    case 1: gather<1>(src, off, roff, out, st); break;
    case 2: gather<2>(src, off, roff, out, st); break;
    case 4: gather<4>(src, off, roff, out, st); break;
    default: gather<8>(src, off, roff, out, st); break;
  }
}
AG_REGISTER_KERNEL(index, CUDA, k_index);

// One thread per rest offset r, walking the indices i in order: duplicate indices accumulate (or
// overwrite, last one wins) deterministically, as on the CPU. Parallel over the rest dims only, so a
// 1-d index_put runs on one thread (slow, correct; a sort-based kernel is the follow-up).
template <typename D>
__global__ void put_kernel(D* dst, const int64_t* off, const int64_t* roff, const D* vals, int64_t n, int64_t nr, bool acc) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < nr; r += step)
    for (int64_t i = 0; i < n; ++i) {
      D& t = dst[off[i] + roff[r]];
      const D v = vals[i * nr + r];
      if (!acc) t = v;
      else if constexpr (std::is_same_v<D, bool>) t = t || v;
      else t = cvt<D>(cvt<dacc_t<D>>(t) + cvt<dacc_t<D>>(v));
    }
}

void k_index_put(Tensor& dst, const Tensor& off, const Tensor& roff, const Tensor& vals, bool accumulate) {
  const int64_t n = off.numel(), nr = roff.numel();
  if (n == 0 || nr == 0) return;
  const int dev = dst.device().norm();
  DeviceGuard g(dev);
  AG_DISPATCH_ALL(dst.dtype(), "index_put_cuda", [&] {
    using D = dev_t<scalar_t>;
    put_kernel<D><<<grid_size(nr), kThreads, 0, current_stream(dev)>>>(reinterpret_cast<D*>(dst.data_ptr()), off.data<int64_t>(),
                                                                     roff.data<int64_t>(), reinterpret_cast<const D*>(vals.data_ptr()),
                                                                     n, nr, accumulate);
    AG_CUDA_KERNEL_LAUNCH_CHECK();
  });
}
AG_REGISTER_KERNEL(index_put, CUDA, k_index_put);

// The size of nonzero's result is data-dependent, so it syncs (as torch's does): copy to the host,
// run the CPU kernel, copy the indices back.
Tensor k_nonzero(const Tensor& a) {
  Tensor host = empty(a.sizes(), a.dtype(), Device());
  memcpy_device(host.data_ptr(), Device(), a.data_ptr(), a.device(), static_cast<size_t>(a.numel() * itemsize(a.dtype())));
  Tensor idx = kernel<NonzeroKernel>(Op::nonzero, Device())(host);
  Tensor out = empty(idx.sizes(), idx.dtype(), a.device());
  memcpy_device(out.data_ptr(), out.device(), idx.data_ptr(), Device(), static_cast<size_t>(idx.numel() * 8));
  return out;
}
AG_REGISTER_KERNEL(nonzero, CUDA, k_nonzero);

}  // namespace
}  // namespace ampgrad::cuda
