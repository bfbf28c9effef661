// CUDA random fills drawn on the device from Philox4x32-10 with a (seed, offset) generator per device
// (Note [Philox streams]): uniform_, normal_, randint. randperm stays on the host (the CPU generator).
// Compile-checked only: not yet run on a GPU.
#include <mutex>
#include <vector>
#include "kernels/common/philox_fill.h"
#include "kernels/cuda/loops.cuh"

namespace ampgrad::cuda {

// ---- generator state (one per device)
namespace {
constexpr uint64_t kDefaultSeed = 67280421310721ULL;  // torch's default_rng_seed_val

struct PhiloxState { uint64_t seed = kDefaultSeed, offset = 0; };

std::mutex& gen_mutex() { static std::mutex mu; return mu; }
PhiloxState& gen_state(int device) {  // call with gen_mutex() held
  static std::vector<PhiloxState>* states = new std::vector<PhiloxState>(device_count());  // leaked: teardown order
  AG_CHECK(!states->empty(), "Found no NVIDIA driver on your system or no CUDA device is available.");
  AG_CHECK(device >= 0 && device < static_cast<int>(states->size()), "CUDA error: invalid device ordinal (device ", device,
           ", ", states->size(), " devices)");
  return (*states)[device];
}
int resolve(int device) { return device < 0 ? current_device() : device; }

// Reserves `counters` counters of the device's stream: returns (seed, first counter) and moves the
// offset past them, so the next fill draws fresh numbers.
PhiloxState reserve(int device, uint64_t counters) {
  std::lock_guard<std::mutex> g(gen_mutex());
  PhiloxState& s = gen_state(device);
  PhiloxState r = s;
  s.offset += counters;
  return r;
}
}  // namespace

void manual_seed(int device, uint64_t seed) {
  const int d = resolve(device);
  std::lock_guard<std::mutex> g(gen_mutex());
  gen_state(d) = PhiloxState{seed, 0};
}

void manual_seed_all(uint64_t seed) {
  if (device_count() == 0) return;  // nothing to seed
  std::lock_guard<std::mutex> g(gen_mutex());
  for (int d = 0; d < device_count(); ++d) gen_state(d) = PhiloxState{seed, 0};
}

uint64_t initial_seed(int device) {
  const int d = resolve(device);
  std::lock_guard<std::mutex> g(gen_mutex());
  return gen_state(d).seed;
}

std::pair<uint64_t, uint64_t> get_rng_state(int device) {
  const int d = resolve(device);
  std::lock_guard<std::mutex> g(gen_mutex());
  const PhiloxState& s = gen_state(d);
  return {s.seed, s.offset};
}

void set_rng_state(int device, uint64_t seed, uint64_t offset) {
  const int d = resolve(device);
  std::lock_guard<std::mutex> g(gen_mutex());
  gen_state(d) = PhiloxState{seed, offset};
}

// ---- kernels
namespace {

// One thread per counter g (grid-stride): values [g*per, g*per + per) of the output.
template <typename D, typename V, typename OpT>
__global__ void philox_fill_kernel(D* out, int64_t n, uint64_t seed, uint64_t offset, OpT op) {
  const int per = philox::per_counter(op);
  const uint64_t counters = philox::counters_for(n, per);
  const uint64_t step = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t g = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; g < counters; g += step) {
    V vals[4];
    op(philox::draw(seed, offset, g), vals);
    const int64_t base = static_cast<int64_t>(g) * per;
    for (int j = 0; j < per && base + j < n; ++j) out[base + j] = cvt<D>(vals[j]);
  }
}

template <typename D, typename V, typename OpT>
void launch_fill(Tensor& dense, const OpT& op) {
  const int64_t n = dense.numel();
  const int dev = dense.device().norm();
  const uint64_t counters = philox::counters_for(n, philox::per_counter(op));
  const PhiloxState s = reserve(dev, counters);
  DeviceGuard g(dev);
  const int blocks = grid_size(static_cast<int64_t>(counters));
  philox_fill_kernel<D, V, OpT><<<blocks, kThreads, 0, current_stream(dev)>>>(reinterpret_cast<D*>(dense.data_ptr()), n,
                                                                              s.seed, s.offset, op);
  AG_CUDA_KERNEL_LAUNCH_CHECK();
}

void copy_into(Tensor& dst, const Tensor& src) {
  TensorIter it;
  it.build({&dst, &src});
  kernel<ElementwiseKernel>(Op::copy, dst.device())(it, nullptr);
}

// Fills t: a non-contiguous t is filled through a dense buffer, so value i is the i-th element in
// logical order whatever the layout.
template <philox::Kind kind>
void k_philox(Tensor& t, double a, double b) {
  if (t.numel() == 0) return;
  Tensor dense = t.is_contiguous() ? t : empty(t.sizes(), t.dtype(), t.device());
  if constexpr (kind == philox::Kind::kRandint) {
    const philox::Randint op = philox::make_randint(t.dtype(), unpack_i64(a), unpack_i64(b));  // Note [Integer bounds of randint]
    AG_DISPATCH_ALL(t.dtype(), "random_from_to_cuda", [&] { launch_fill<dev_t<scalar_t>, int64_t>(dense, op); });
  } else {
    AG_DISPATCH_FLOAT(t.dtype(), kind == philox::Kind::kUniform ? "uniform_cuda" : "normal_cuda", [&] {
      philox::visit_float_op<scalar_t>(kind, a, b, [&](const auto& op) {
        launch_fill<dev_t<scalar_t>, philox::compute_t<scalar_t>>(dense, op);
      });
    });
  }
  if (!t.is_contiguous()) copy_into(t, dense);
}

// randperm (shuffle t, which holds 0..n-1) uses the CPU generator on a host copy.
void k_randperm(Tensor& t, double a, double b) {
  if (t.numel() == 0) return;
  const size_t nbytes = static_cast<size_t>(t.numel() * itemsize(t.dtype()));
  Tensor dense = t.is_contiguous() ? t : empty(t.sizes(), t.dtype(), t.device());
  if (!t.is_contiguous()) copy_into(dense, t);
  Tensor host = empty(t.sizes(), t.dtype(), Device());
  memcpy_device(host.data_ptr(), Device(), dense.data_ptr(), dense.device(), nbytes);
  kernel<RandomKernel>(Op::randperm, Device())(host, a, b);
  memcpy_device(dense.data_ptr(), dense.device(), host.data_ptr(), Device(), nbytes);
  if (!t.is_contiguous()) copy_into(t, dense);
}

}  // namespace

AG_REGISTER_KERNEL(uniform, CUDA, k_philox<philox::Kind::kUniform>);
AG_REGISTER_KERNEL(normal, CUDA, k_philox<philox::Kind::kNormal>);
AG_REGISTER_KERNEL(randint, CUDA, k_philox<philox::Kind::kRandint>);
AG_REGISTER_KERNEL(randperm, CUDA, k_randperm);

}  // namespace ampgrad::cuda
