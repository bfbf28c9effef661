// CUDA elementwise loops over a TensorIter: a vectorised path (16-byte loads and stores) when every
// operand is contiguous and aligned, a strided path (per-operand byte strides, broadcast = stride 0)
// otherwise; both grid-stride. fp16/bf16 load as __half/__nv_bfloat16 and compute in fp32.
// Compile-checked only so far: written without a GPU, not yet run on one.
#pragma once
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda/std/tuple>
#include <utility>
#include "kernels/cuda/runtime.h"

namespace ampgrad::cuda {

// Storage types on the device: ampgrad::Half / BFloat16 are host structs with the same bits.
template <typename T> struct DevType { using type = T; };
template <> struct DevType<Half> { using type = __half; };
template <> struct DevType<BFloat16> { using type = __nv_bfloat16; };
template <typename T> using dev_t = typename DevType<T>::type;
// The type arithmetic runs in (fp32 for fp16/bf16, as torch's CUDA kernels do).
template <typename T> struct DevAcc { using type = T; };
template <> struct DevAcc<__half> { using type = float; };
template <> struct DevAcc<__nv_bfloat16> { using type = float; };
template <typename T> using dacc_t = typename DevAcc<T>::type;

template <typename To, typename From>
__device__ __forceinline__ To cvt(From v) {
  if constexpr (std::is_same_v<To, From>) return v;
  else if constexpr (std::is_same_v<From, __half>) return cvt<To>(__half2float(v));
  else if constexpr (std::is_same_v<From, __nv_bfloat16>) return cvt<To>(__bfloat162float(v));
  else if constexpr (std::is_same_v<To, __half>) return __float2half_rn(static_cast<float>(v));
  else if constexpr (std::is_same_v<To, __nv_bfloat16>) return __float2bfloat16_rn(static_cast<float>(v));
  else return static_cast<To>(v);
}
template <typename T>
__device__ __forceinline__ dacc_t<T> ld(const char* p) { return cvt<dacc_t<T>>(*reinterpret_cast<const T*>(p)); }

constexpr int kMaxDims = 32;  // TensorIter's capacity
constexpr int kThreads = 256;

template <int N>
struct IterParams {
  char* data[N];
  int ndim;
  int64_t sizes[kMaxDims];
  int64_t strides[kMaxDims][N];  // bytes
};

template <typename T, int N>
struct alignas(sizeof(T) * N) AVec { T v[N]; };

template <typename Out, typename... Ins, typename F, size_t... I>
__device__ __forceinline__ void apply_at(char* const* data, const int64_t* off, const F& f, std::index_sequence<I...>) {
  *reinterpret_cast<Out*>(data[0] + off[0]) = cvt<Out>(f(ld<Ins>(data[I + 1] + off[I + 1])...));
}

template <typename F, typename Out, typename... Ins>
__global__ void strided_kernel(IterParams<1 + sizeof...(Ins)> p, int64_t n, F f) {
  constexpr int N = 1 + sizeof...(Ins);
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[N] = {};
    int64_t rem = i;
    for (int d = p.ndim - 1; d >= 0; --d) {
      const int64_t sz = p.sizes[d], idx = rem % sz;
      rem /= sz;
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] += idx * p.strides[d][k];
    }
    apply_at<Out, Ins...>(p.data, off, f, std::index_sequence_for<Ins...>{});
  }
}

template <int VEC, typename Out, typename... Ins, typename F, size_t... I>
__device__ __forceinline__ void apply_vec(char* const* data, int64_t v, const F& f, std::index_sequence<I...>) {
  ::cuda::std::tuple<AVec<Ins, VEC>...> in{reinterpret_cast<const AVec<Ins, VEC>*>(data[I + 1])[v]...};
  AVec<Out, VEC> out;
#pragma unroll
  for (int j = 0; j < VEC; ++j) out.v[j] = cvt<Out>(f(cvt<dacc_t<Ins>>(::cuda::std::get<I>(in).v[j])...));
  reinterpret_cast<AVec<Out, VEC>*>(data[0])[v] = out;
}

template <int VEC, typename F, typename Out, typename... Ins>
__global__ void contiguous_kernel(IterParams<1 + sizeof...(Ins)> p, int64_t n, F f) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t nvec = n / VEC;
  for (int64_t v = tid; v < nvec; v += step) apply_vec<VEC, Out, Ins...>(p.data, v, f, std::index_sequence_for<Ins...>{});
  for (int64_t i = nvec * VEC + tid; i < n; i += step) {  // the tail, fewer than VEC elements
    int64_t off[1 + sizeof...(Ins)];
    off[0] = i * static_cast<int64_t>(sizeof(Out));
    int k = 1;
    ((off[k++] = i * static_cast<int64_t>(sizeof(Ins))), ...);
    apply_at<Out, Ins...>(p.data, off, f, std::index_sequence_for<Ins...>{});
  }
}

int grid_size(int64_t work);  // blocks of kThreads for `work` items, capped (the loops are grid-stride)
// The device of the iterator's operands: the current device on a one-GPU machine, else the output
// pointer's device (cudaPointerGetAttributes).
int iter_device(const TensorIter& it);

template <typename T> constexpr int max_size() { return sizeof(T); }
template <typename T, typename U, typename... R> constexpr int max_size() {
  return sizeof(T) > max_size<U, R...>() ? sizeof(T) : max_size<U, R...>();
}

// out = f(in...): Out and Ins are device storage types; f receives dacc_t<In> values and its
// result is converted to Out. The iterator's operand 0 is the output, then the inputs in order.
template <typename Out, typename... Ins, typename F>
void launch(TensorIter& it, const F& f) {
  constexpr int N = 1 + sizeof...(Ins);
  AG_CHECK(it.nops == N, "internal error: CUDA elementwise kernel expects ", N, " operands, got ", it.nops);
  const int64_t n = it.numel;
  if (n == 0) return;
  const int device = iter_device(it);
  DeviceGuard guard(device);
  IterParams<N> p;
  for (int k = 0; k < N; ++k) p.data[k] = it.data[k];
  bool contiguous = true;
  for (int k = 0; k < N; ++k) contiguous &= it.contiguous(k);
  cudaStream_t stream = current_stream(device);
  constexpr int kVec0 = 16 / max_size<Out, Ins...>();
  constexpr int kVec = kVec0 > 8 ? 8 : kVec0;  // >= 2: no operand is wider than 8 bytes
  if (contiguous) {
    constexpr int kSizes[N] = {static_cast<int>(sizeof(Out)), static_cast<int>(sizeof(Ins))...};
    bool aligned = true;
    for (int k = 0; k < N; ++k) aligned &= reinterpret_cast<uintptr_t>(p.data[k]) % (kSizes[k] * kVec) == 0;
    if (aligned) {
      contiguous_kernel<kVec, F, Out, Ins...><<<grid_size(n / kVec + 1), kThreads, 0, stream>>>(p, n, f);
      AG_CUDA_KERNEL_LAUNCH_CHECK();
      return;
    }
    // Unaligned views (e.g. x[1:]) take the strided kernel: one fewer instantiation per op and dtype.
  }
  p.ndim = static_cast<int>(it.shape.size());
  AG_CHECK(p.ndim <= kMaxDims, "CUDA elementwise kernels support at most ", kMaxDims, " dimensions");
  for (int d = 0; d < p.ndim; ++d) {
    p.sizes[d] = it.shape[d];
    for (int k = 0; k < N; ++k) p.strides[d][k] = it.strides[d][k];
  }
  strided_kernel<F, Out, Ins...><<<grid_size(n), kThreads, 0, stream>>>(p, n, f);
  AG_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace ampgrad::cuda
