// Front ends of the GradScaler ops: argument checks, then one kernel call per device.
#include "amp/scaler.h"
#include "kernels/kernels.h"

namespace ampgrad::amp {

void non_finite_check_and_unscale_(std::vector<Tensor>& grads, Tensor& found_inf, const Tensor& inv_scale) {
  AG_CHECK(inv_scale.numel() == 1, "inv_scale must be a 1-element tensor.");
  AG_CHECK(found_inf.numel() == 1, "found_inf must be a 1-element tensor.");
  AG_CHECK(inv_scale.dtype() == ScalarType::Float32, "inv_scale must be a float tensor.");
  AG_CHECK(found_inf.dtype() == ScalarType::Float32, "found_inf must be a float tensor.");
  if (grads.empty()) return;
  for (auto& g : grads) {
    AG_CHECK(g.device() == inv_scale.device(), "Expected all tensors to be on the same device, but found at least two devices, ",
             g.device().str(), " and ", inv_scale.device().str(), "!");
    AG_CHECK(is_floating(g.dtype()), "_amp_foreach_non_finite_check_and_unscale_: expected floating point gradients");
  }
  kernel<AmpUnscaleKernel>(Op::amp_unscale, inv_scale.device())(grads, found_inf, inv_scale);
  for (auto& g : grads) g.bump_version();
}

void update_scale_(Tensor& scale, Tensor& growth_tracker, const Tensor& found_inf, double growth, double backoff,
                   int64_t interval) {
  AG_CHECK(growth_tracker.device() == scale.device(), "growth_tracker must be on the same device as scale.");
  AG_CHECK(scale.numel() == 1, "current_scale must be a 1-element tensor.");
  AG_CHECK(growth_tracker.numel() == 1, "growth_tracker must be a 1-element tensor.");
  AG_CHECK(found_inf.numel() == 1, "found_inf must be a 1-element tensor.");
  AG_CHECK(scale.dtype() == ScalarType::Float32, "current_scale must be a float tensor.");
  AG_CHECK(growth_tracker.dtype() == ScalarType::Int32, "growth_tracker must be an int tensor.");
  AG_CHECK(found_inf.dtype() == ScalarType::Float32, "found_inf must be a float tensor.");
  kernel<AmpUpdateScaleKernel>(Op::amp_update_scale, scale.device())(scale, growth_tracker, found_inf, growth, backoff, interval);
  scale.bump_version();
  growth_tracker.bump_version();
}

}  // namespace ampgrad::amp
