// CUDA reductions, scans and softmax over the [A, R, B] layout of ops/reduce.cpp (Note [Reduce
// plan]), mirroring kernels/cpu/reduce.cpp. Deterministic: each output is combined in a fixed tree
// (per-thread strided partials, warp shuffles, then shared memory), never with atomics.
// Accumulation follows torch's CUDA kernels: fp32 for fp16/bf16/fp32, fp64 for fp64, int64 for
// integers (the CPU kernels sum fp32 in fp64, so fp32 results differ in the last bits).
// The finishing math (mean, var, norm, logsumexp) and the NaN-propagating max are shared with the
// CPU kernels through kernels/common/scalar_math.h. Compile-checked only: not yet run on a GPU.
#include "kernels/common/scalar_math.h"
#include "kernels/cuda/loops.cuh"

namespace ampgrad::cuda {
namespace {

template <typename D> using racc_t = std::conditional_t<std::is_floating_point_v<dacc_t<D>>, dacc_t<D>, int64_t>;

// Shuffles any trivially copyable accumulator word by word.
template <typename T>
__device__ __forceinline__ T shfl_down(const T& v, int delta) {
  static_assert(sizeof(T) % 4 == 0, "accumulators are multiples of 4 bytes");
  T r;
  const int* src = reinterpret_cast<const int*>(&v);
  int* dst = reinterpret_cast<int*>(&r);
#pragma unroll
  for (int w = 0; w < static_cast<int>(sizeof(T) / 4); ++w) dst[w] = __shfl_down_sync(0xffffffffu, src[w], delta);
  return r;
}
template <typename R, typename Acc>
__device__ __forceinline__ Acc warp_reduce(const R& red, Acc a) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) a = red.combine(a, shfl_down(a, d));
  return a;  // valid in lane 0
}

// B == 1, one warp per output row (8 rows per block of 32 x 8 threads).
template <typename R, typename D>
__global__ void reduce_rows_warp(const D* x, D* y, int64_t* idx, int64_t A, int64_t Rn, R red) {
  using Acc = typename R::acc;
  for (int64_t a = static_cast<int64_t>(blockIdx.x) * blockDim.y + threadIdx.y; a < A; a += static_cast<int64_t>(gridDim.x) * blockDim.y) {
    const D* row = x + a * Rn;
    Acc acc = red.init();
    for (int64_t k = threadIdx.x; k < Rn; k += 32) acc = red.step(acc, cvt<dacc_t<D>>(row[k]), k);
    acc = warp_reduce(red, acc);
    if (threadIdx.x == 0) red.write(y, idx, a, acc, Rn);
  }
}

// B == 1 with long rows: one block of 256 threads per row.
template <typename R, typename D>
__global__ void reduce_rows_block(const D* x, D* y, int64_t* idx, int64_t A, int64_t Rn, R red) {
  using Acc = typename R::acc;
  __shared__ Acc part[kThreads / 32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int64_t a = blockIdx.x; a < A; a += gridDim.x) {
    const D* row = x + a * Rn;
    Acc acc = red.init();
    for (int64_t k = threadIdx.x; k < Rn; k += kThreads) acc = red.step(acc, cvt<dacc_t<D>>(row[k]), k);
    acc = warp_reduce(red, acc);
    if (lane == 0) part[warp] = acc;
    __syncthreads();
    if (warp == 0) {
      acc = lane < kThreads / 32 ? part[lane] : red.init();
      acc = warp_reduce(red, acc);
      if (lane == 0) red.write(y, idx, a, acc, Rn);
    }
    __syncthreads();
  }
}

// B > 1: 32 consecutive columns per block (coalesced), 8 threads along R per column, combined in
// shared memory in a fixed order.
template <typename R, typename D>
__global__ void reduce_cols(const D* x, D* y, int64_t* idx, int64_t A, int64_t Rn, int64_t B, R red) {
  using Acc = typename R::acc;
  __shared__ Acc part[8][32];
  const int64_t col_blocks = (B + 31) / 32;
  for (int64_t t = blockIdx.x; t < A * col_blocks; t += gridDim.x) {
    const int64_t a = t / col_blocks, b = (t % col_blocks) * 32 + threadIdx.x;
    Acc acc = red.init();
    if (b < B)
      for (int64_t k = threadIdx.y; k < Rn; k += 8) acc = red.step(acc, cvt<dacc_t<D>>(x[(a * Rn + k) * B + b]), k);
    part[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && b < B) {
      for (int j = 1; j < 8; ++j) acc = red.combine(acc, part[j][threadIdx.x]);
      red.write(y, idx, a * B + b, acc, Rn);
    }
    __syncthreads();
  }
}

template <typename D, typename R>
void run_reduce(const Tensor& in, Tensor& out, Tensor* indices, const ReduceArgs& r, const R& red) {
  const int64_t nout = r.A * r.B;
  if (nout == 0) return;
  const int dev = in.device().norm();
  DeviceGuard g(dev);
  cudaStream_t st = current_stream(dev);
  const D* x = reinterpret_cast<const D*>(in.data_ptr());
  D* y = reinterpret_cast<D*>(out.data_ptr());
  int64_t* ix = indices ? indices->data<int64_t>() : nullptr;
  auto blocks = [](int64_t n) { return grid_size(n * kThreads) ; };
  if (r.B == 1 && r.R > 4096) reduce_rows_block<R, D><<<blocks(r.A), kThreads, 0, st>>>(x, y, ix, r.A, r.R, red);
  else if (r.B == 1) reduce_rows_warp<R, D><<<blocks((r.A + 7) / 8), dim3(32, 8), 0, st>>>(x, y, ix, r.A, r.R, red);
  else reduce_cols<R, D><<<blocks(r.A * ((r.B + 31) / 32)), dim3(32, 8), 0, st>>>(x, y, ix, r.A, r.R, r.B, red);
  AG_CUDA_KERNEL_LAUNCH_CHECK();
}

// ---- reducers: init / step(acc, x, k) / combine(earlier, later) / write(y, idx, o, acc, R)
template <typename D, typename Acc, int Kind>  // Kind 0 sum, 1 prod
struct SumProd {
  using acc = Acc;
  __device__ Acc init() const { return Kind == 0 ? Acc(0) : Acc(1); }
  template <typename V> __device__ Acc step(Acc a, V v, int64_t) const { return Kind == 0 ? Acc(a + static_cast<Acc>(v)) : Acc(a * static_cast<Acc>(v)); }
  __device__ Acc combine(Acc a, Acc b) const { return Kind == 0 ? Acc(a + b) : Acc(a * b); }
  __device__ void write(D* y, int64_t*, int64_t o, Acc a, int64_t) const { y[o] = cvt<D>(a); }
};

template <typename D>
struct Mean {
  using acc = dacc_t<D>;
  double scale;
  __device__ acc init() const { return acc(0); }
  __device__ acc step(acc a, acc v, int64_t) const { return a + v; }
  __device__ acc combine(acc a, acc b) const { return a + b; }
  __device__ void write(D* y, int64_t*, int64_t o, acc a, int64_t n) const {
    y[o] = cvt<D>(math::mean_finish(a, n, scale));
  }
};

template <typename A>
struct ValIdx { A v; int32_t pad; int64_t i; };  // explicit padding: shuffled word by word
template <typename D, bool IsMax>
struct MinMax {
  using A = dacc_t<D>;
  using acc = ValIdx<std::conditional_t<sizeof(A) < 4, int32_t, A>>;  // bool / 8-, 16-bit ints widen
  using V = decltype(acc::v);
  __device__ acc init() const { return acc{V(0), 0, -1}; }  // i == -1: empty
  __device__ static bool isnan_(V v) { if constexpr (std::is_floating_point_v<V>) return v != v; else return false; }
  __device__ acc combine(acc a, acc b) const {
    if (a.i < 0) return b;
    if (b.i < 0) return a;
    const bool na = isnan_(a.v), nb = isnan_(b.v);
    if (na || nb) return (na && nb) ? (a.i <= b.i ? a : b) : (na ? a : b);  // NaN wins, first occurrence
    if (a.v == b.v) return a.i <= b.i ? a : b;
    return (IsMax ? b.v > a.v : b.v < a.v) ? b : a;
  }
  template <typename X> __device__ acc step(acc a, X v, int64_t k) const { return combine(a, acc{static_cast<V>(v), 0, k}); }
  __device__ void write(D* y, int64_t* idx, int64_t o, acc a, int64_t) const {
    y[o] = cvt<D>(static_cast<A>(a.v));
    if (idx) idx[o] = a.i < 0 ? 0 : a.i;
  }
};

template <typename A>
struct Welford { A mean, m2; int64_t n; };
template <typename D>
struct Var {
  using A = dacc_t<D>;
  using acc = Welford<A>;
  double correction;
  bool take_sqrt;
  __device__ acc init() const { return acc{A(0), A(0), 0}; }
  __device__ acc step(acc a, A v, int64_t) const {
    a.n += 1;
    A d = v - a.mean;
    a.mean += d / static_cast<A>(a.n);
    a.m2 += d * (v - a.mean);
    return a;
  }
  __device__ acc combine(acc a, acc b) const {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    const int64_t n = a.n + b.n;
    const A d = b.mean - a.mean, fb = static_cast<A>(b.n) / static_cast<A>(n);
    return acc{a.mean + d * fb, a.m2 + b.m2 + d * d * static_cast<A>(a.n) * fb, n};
  }
  __device__ void write(D* y, int64_t*, int64_t o, acc a, int64_t) const {
    y[o] = cvt<D>(math::var_finish(a.m2, a.n, correction, take_sqrt));
  }
};

template <typename D>
struct Norm {
  using A = dacc_t<D>;
  using acc = A;
  math::NormOp<A> op;
  __device__ acc init() const { return op.init(); }
  __device__ acc combine(acc a, acc b) const { return op.combine(a, b); }
  __device__ acc step(acc a, A x, int64_t) const { return op.step(a, x); }
  __device__ void write(D* y, int64_t*, int64_t o, acc a, int64_t) const { y[o] = cvt<D>(op.finish(a)); }
};

template <typename A>
struct MaxSum { A m, s; };
template <typename D>
struct LogSumExp {
  using A = dacc_t<D>;
  using acc = MaxSum<A>;
  __device__ acc init() const { return acc{-math::inf<A>(), A(0)}; }
  __device__ acc combine(acc a, acc b) const {
    if (a.m != a.m || b.m != b.m) return acc{math::quiet_nan<A>(), A(0)};  // nan wins
    if (a.m == -math::inf<A>()) return b;
    if (b.m == -math::inf<A>()) return a;
    if (a.m == math::inf<A>() || b.m == math::inf<A>()) return acc{math::inf<A>(), A(1)};
    A m = a.m > b.m ? a.m : b.m;
    return acc{m, a.s * exp(a.m - m) + b.s * exp(b.m - m)};
  }
  __device__ acc step(acc a, A v, int64_t) const { return combine(a, acc{v, A(1)}); }
  __device__ void write(D* y, int64_t*, int64_t o, acc a, int64_t) const { y[o] = cvt<D>(math::lse_finish(a.m, a.s)); }
};

template <typename D, bool IsAll>
struct AllAny {
  using acc = int32_t;
  __device__ acc init() const { return IsAll ? 1 : 0; }
  template <typename V> __device__ acc step(acc a, V v, int64_t) const { return combine(a, v != V(0) ? 1 : 0); }
  __device__ acc combine(acc a, acc b) const { return IsAll ? (a & b) : (a | b); }
  __device__ void write(D* y, int64_t*, int64_t o, acc a, int64_t) const { y[o] = static_cast<D>(a != 0); }
};

void k_sum(const Tensor& in, Tensor& out, Tensor*, const ReduceArgs& r) {
  AG_DISPATCH_ALL(in.dtype(), "sum_cuda", [&] {
    using D = dev_t<scalar_t>;
    run_reduce<D>(in, out, nullptr, r, SumProd<D, racc_t<D>, 0>{});
  });
}
AG_REGISTER_KERNEL(sum, CUDA, k_sum);

void k_prod(const Tensor& in, Tensor& out, Tensor*, const ReduceArgs& r) {
  AG_DISPATCH_ALL(in.dtype(), "prod_cuda", [&] {
    using D = dev_t<scalar_t>;
    run_reduce<D>(in, out, nullptr, r, SumProd<D, racc_t<D>, 1>{});
  });
}
AG_REGISTER_KERNEL(prod, CUDA, k_prod);

void k_mean(const Tensor& in, Tensor& out, Tensor*, const ReduceArgs& r) {
  AG_DISPATCH_FLOAT(in.dtype(), "mean_cuda", [&] { using D = dev_t<scalar_t>; run_reduce<D>(in, out, nullptr, r, Mean<D>{r.s[0]}); });
}
AG_REGISTER_KERNEL(mean, CUDA, k_mean);

template <bool IsMax>
void k_minmax(const Tensor& in, Tensor& out, Tensor* idx, const ReduceArgs& r) {
  AG_DISPATCH_ALL(in.dtype(), IsMax ? "max_cuda" : "min_cuda", [&] {
    using D = dev_t<scalar_t>;
    run_reduce<D>(in, out, idx, r, MinMax<D, IsMax>{});
  });
}
AG_REGISTER_KERNEL(max, CUDA, k_minmax<true>);
AG_REGISTER_KERNEL(min, CUDA, k_minmax<false>);
AG_REGISTER_KERNEL(amax, CUDA, k_minmax<true>);
AG_REGISTER_KERNEL(amin, CUDA, k_minmax<false>);
AG_REGISTER_KERNEL(argmax, CUDA, k_minmax<true>);
AG_REGISTER_KERNEL(argmin, CUDA, k_minmax<false>);

void k_var(const Tensor& in, Tensor& out, Tensor*, const ReduceArgs& r) {
  AG_DISPATCH_FLOAT(in.dtype(), "var_cuda", [&] {
    using D = dev_t<scalar_t>;
    run_reduce<D>(in, out, nullptr, r, Var<D>{r.s[0], r.s[1] != 0});
  });
}
AG_REGISTER_KERNEL(var, CUDA, k_var);
AG_REGISTER_KERNEL(std, CUDA, k_var);  // s[1] asks for the square root

void k_norm(const Tensor& in, Tensor& out, Tensor*, const ReduceArgs& r) {
  AG_DISPATCH_FLOAT(in.dtype(), "norm_cuda", [&] { using D = dev_t<scalar_t>; run_reduce<D>(in, out, nullptr, r, Norm<D>{{r.s[0]}}); });
}
AG_REGISTER_KERNEL(norm, CUDA, k_norm);

void k_logsumexp(const Tensor& in, Tensor& out, Tensor*, const ReduceArgs& r) {
  AG_DISPATCH_FLOAT(in.dtype(), "logsumexp_cuda", [&] { using D = dev_t<scalar_t>; run_reduce<D>(in, out, nullptr, r, LogSumExp<D>{}); });
}
AG_REGISTER_KERNEL(logsumexp, CUDA, k_logsumexp);

template <bool IsAll>
void k_allany(const Tensor& in, Tensor& out, Tensor*, const ReduceArgs& r) {
  if (in.dtype() == ScalarType::UInt8) run_reduce<uint8_t>(in, out, nullptr, r, AllAny<uint8_t, IsAll>{});
  else run_reduce<bool>(in, out, nullptr, r, AllAny<bool, IsAll>{});
}
AG_REGISTER_KERNEL(all, CUDA, k_allany<true>);
AG_REGISTER_KERNEL(any, CUDA, k_allany<false>);

// ---- scans: one thread per (a, b) line, serial along R (coalesced across b when B > 1).
template <typename D, typename Acc, bool IsSum>
__global__ void scan_kernel(const D* x, D* y, int64_t A, int64_t Rn, int64_t B) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; o < A * B; o += step) {
    const int64_t base = (o / B) * Rn * B + o % B;
    Acc acc = IsSum ? Acc(0) : Acc(1);
    for (int64_t k = 0; k < Rn; ++k) {
      Acc v = static_cast<Acc>(cvt<dacc_t<D>>(x[base + k * B]));
      acc = IsSum ? acc + v : acc * v;
      y[base + k * B] = cvt<D>(static_cast<dacc_t<D>>(acc));
    }
  }
}
template <bool IsSum>
void k_scan(const Tensor& in, Tensor& out, Tensor*, const ReduceArgs& r) {
  AG_DISPATCH_NUMERIC(in.dtype(), IsSum ? "cumsum_cuda" : "cumprod_cuda", [&] {
    using D = dev_t<scalar_t>;
    using Acc = std::conditional_t<std::is_floating_point_v<dacc_t<D>>, dacc_t<D>, int64_t>;
    if (r.A * r.B == 0 || r.R == 0) return;
    const int dev = in.device().norm();
    DeviceGuard g(dev);
    scan_kernel<D, Acc, IsSum><<<grid_size(r.A * r.B), kThreads, 0, current_stream(dev)>>>(
        reinterpret_cast<const D*>(in.data_ptr()), reinterpret_cast<D*>(out.data_ptr()), r.A, r.R, r.B);
    AG_CUDA_KERNEL_LAUNCH_CHECK();
  });
}
AG_REGISTER_KERNEL(cumsum, CUDA, k_scan<true>);
AG_REGISTER_KERNEL(cumprod, CUDA, k_scan<false>);

// ---- softmax / log_softmax: [A, R, B] -> [A, R, B]
struct MaxOp {
  template <typename A> __device__ A combine(A a, A b) const { return math::nan_max_step(a, b); }
};
struct SumOp {
  template <typename A> __device__ A combine(A a, A b) const { return a + b; }
};
template <typename Op, typename A>
__device__ A block_all_reduce(const Op& op, A v, A* shm) {  // every thread gets the result
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warp_reduce(op, v);
  if (lane == 0) shm[warp] = v;
  __syncthreads();
  A r = shm[0];
  for (int w = 1; w < kThreads / 32; ++w) r = op.combine(r, shm[w]);
  __syncthreads();
  return r;
}

template <typename D, bool IsLog>
__global__ void softmax_rows(const D* x, D* y, int64_t A, int64_t Rn) {  // B == 1: a block per row
  using T = dacc_t<D>;
  __shared__ T shm[kThreads / 32];
  for (int64_t a = blockIdx.x; a < A; a += gridDim.x) {
    const D* row = x + a * Rn;
    D* out = y + a * Rn;
    T m = -math::inf<T>();
    for (int64_t k = threadIdx.x; k < Rn; k += kThreads) m = MaxOp{}.combine(m, cvt<T>(row[k]));
    m = block_all_reduce(MaxOp{}, m, shm);
    T s = 0;
    for (int64_t k = threadIdx.x; k < Rn; k += kThreads) s += exp(cvt<T>(row[k]) - m);
    s = block_all_reduce(SumOp{}, s, shm);
    const T ls = log(s);
    for (int64_t k = threadIdx.x; k < Rn; k += kThreads) {
      T v = cvt<T>(row[k]) - m;
      out[k] = cvt<D>(IsLog ? v - ls : exp(v) / s);
    }
  }
}

template <typename D, bool IsLog>
__global__ void softmax_cols(const D* x, D* y, int64_t A, int64_t Rn, int64_t B) {  // B > 1: a thread per line
  using T = dacc_t<D>;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; o < A * B; o += step) {
    const int64_t base = (o / B) * Rn * B + o % B;
    T m = -math::inf<T>();
    for (int64_t k = 0; k < Rn; ++k) m = MaxOp{}.combine(m, cvt<T>(x[base + k * B]));
    T s = 0;
    for (int64_t k = 0; k < Rn; ++k) s += exp(cvt<T>(x[base + k * B]) - m);
    const T ls = log(s);
    for (int64_t k = 0; k < Rn; ++k) {
      T v = cvt<T>(x[base + k * B]) - m;
      y[base + k * B] = cvt<D>(IsLog ? v - ls : exp(v) / s);
    }
  }
}

template <bool IsLog>
void k_softmax(const Tensor& in, Tensor& out, Tensor*, const ReduceArgs& r) {
  AG_DISPATCH_FLOAT(in.dtype(), IsLog ? "log_softmax_cuda" : "softmax_cuda", [&] {
    using D = dev_t<scalar_t>;
    if (r.A * r.B == 0 || r.R == 0) return;
    const int dev = in.device().norm();
    DeviceGuard g(dev);
    const D* x = reinterpret_cast<const D*>(in.data_ptr());
    D* y = reinterpret_cast<D*>(out.data_ptr());
    if (r.B == 1) softmax_rows<D, IsLog><<<grid_size(r.A * kThreads), kThreads, 0, current_stream(dev)>>>(x, y, r.A, r.R);
    else softmax_cols<D, IsLog><<<grid_size(r.A * r.B), kThreads, 0, current_stream(dev)>>>(x, y, r.A, r.R, r.B);
    AG_CUDA_KERNEL_LAUNCH_CHECK();
  });
}
AG_REGISTER_KERNEL(softmax, CUDA, k_softmax<false>);
AG_REGISTER_KERNEL(log_softmax, CUDA, k_softmax<true>);

}  // namespace
}  // namespace ampgrad::cuda
