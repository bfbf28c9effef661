// GradScaler's two device-side ops: fused multi-tensor non-finite check + unscale, and scale update.
#pragma once
#include <vector>
#include "core/tensor.h"

namespace ampgrad::amp {

// Multiplies every grad by inv_scale in place; sets found_inf to 1 when any grad held inf/NaN.
void non_finite_check_and_unscale_(std::vector<Tensor>& grads, Tensor& found_inf, const Tensor& inv_scale);
// torch's update rule: backoff on found_inf and reset the tracker; otherwise count, and grow the
// scale after `interval` clean steps (only to a finite value).
void update_scale_(Tensor& scale, Tensor& growth_tracker, const Tensor& found_inf, double growth, double backoff,
                   int64_t interval);

}  // namespace ampgrad::amp
