// Host reference of the CUDA Philox fills (Note [Philox streams]): the same per-counter transforms
// run on the CPU, so a test can compare a device fill with it value by value.
#include "kernels/common/philox_fill.h"

namespace ampgrad::philox {

namespace {
template <typename V, typename Op, typename T>
uint64_t fill(const Op& op, uint64_t seed, uint64_t offset, int64_t n, T* out) {
  const int per = per_counter(op);
  const uint64_t groups = counters_for(n, per);
  for (uint64_t g = 0; g < groups; ++g) {
    V vals[4];
    op(draw(seed, offset, g), vals);
    const int64_t base = static_cast<int64_t>(g) * per;
    for (int j = 0; j < per && base + j < n; ++j) out[base + j] = static_cast<T>(static_cast<acc_t<T>>(vals[j]));
  }
  return groups;
}
}  // namespace

uint64_t fill_reference(Tensor& t, Kind kind, uint64_t seed, uint64_t offset, double a, double b) {
  AG_CHECK(t.device().is_cpu() && t.is_contiguous(), "_philox_fill: expected a contiguous CPU tensor");
  const int64_t n = t.numel();
  uint64_t used = 0;
  if (kind == Kind::kRandint) {
    AG_CHECK(a < b, "_philox_fill: randint needs low < high");
    const Randint op = make_randint(t.dtype(), static_cast<int64_t>(a), static_cast<int64_t>(b));
    AG_DISPATCH_ALL(t.dtype(), "_philox_fill", [&] { used = fill<int64_t>(op, seed, offset, n, t.data<scalar_t>()); });
    return used;
  }
  AG_DISPATCH_FLOAT(t.dtype(), "_philox_fill", [&] {
    visit_float_op<scalar_t>(kind, a, b, [&](const auto& op) {
      used = fill<compute_t<scalar_t>>(op, seed, offset, n, t.data<scalar_t>());
    });
  });
  return used;
}

}  // namespace ampgrad::philox
