// CPU GradScaler kernels: one pass per grad (multiply, and note non-finite inputs), and the
// scale update as scalar code.
#include <atomic>
#include <cmath>
#include <limits>
#include "kernels/cpu/loops.h"

namespace ampgrad::cpu {

namespace {
void k_amp_unscale(std::vector<Tensor>& grads, Tensor& found_inf, const Tensor& inv_scale) {
  const float inv = *inv_scale.data<float>();
  bool found = false;
  for (auto& g : grads) {
    TensorIter it;
    it.build({&g, &g});
    AG_DISPATCH_FLOAT(g.dtype(), "_amp_foreach_non_finite_check_and_unscale_", [&] {
      using A = acc_t<scalar_t>;  // fp64 grads unscale in fp64, as torch's (and the CUDA kernel) do
      const A inv_a = static_cast<A>(inv);
      std::atomic<bool> local{false};
      for_each(it, [&](char** p, const int64_t* s, int64_t n) {
        int bad = 0;  // an integer OR of "inf or nan", so the contiguous loop vectorizes
        if (s[0] == sizeof(scalar_t)) {
          scalar_t* q = reinterpret_cast<scalar_t*>(p[0]);
          for (int64_t i = 0; i < n; ++i) {
            const A v = static_cast<A>(q[i]);
            bad |= !(std::abs(v) <= std::numeric_limits<A>::max());
            q[i] = static_cast<scalar_t>(v * inv_a);
          }
        } else {
          for (int64_t i = 0; i < n; ++i) {
            scalar_t* q = reinterpret_cast<scalar_t*>(p[0] + i * s[0]);
            const A v = static_cast<A>(*q);
            bad |= !(std::abs(v) <= std::numeric_limits<A>::max());
            *q = static_cast<scalar_t>(v * inv_a);
          }
        }
        if (bad) local.store(true, std::memory_order_relaxed);
      });
      found |= local.load();
    });
  }
  if (found) *found_inf.data<float>() = 1.0f;
}

void k_amp_update_scale(Tensor& scale, Tensor& tracker, const Tensor& found_inf, double growth, double backoff, int64_t interval) {
  float& s = *scale.data<float>();
  int32_t& t = *tracker.data<int32_t>();
  if (*found_inf.data<float>() != 0.0f) {
    s = static_cast<float>(static_cast<double>(s) * backoff);  // torch multiplies in double, rounds once
    t = 0;
    return;
  }
  int32_t successful = t + 1;
  if (successful == interval) {
    float grown = static_cast<float>(static_cast<double>(s) * growth);
    if (std::isfinite(grown)) s = grown;
    t = 0;
  } else {
    t = successful;
  }
}
}  // namespace

AG_REGISTER_KERNEL(amp_unscale, CPU, k_amp_unscale);
AG_REGISTER_KERNEL(amp_update_scale, CPU, k_amp_update_scale);

}  // namespace ampgrad::cpu
