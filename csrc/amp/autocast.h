// Autocast: thread-local state per device type, the policy lookup and the cast of eligible
// arguments. Ops call AG_AUTOCAST(op, args...) first; with autocast off it costs one load.
#pragma once
#include <initializer_list>
#include <optional>
#include <vector>
#include "core/tensor.h"
#include "ops/op_list.h"

namespace ampgrad::amp {

struct State {
  bool enabled[kNumDeviceTypes] = {false, false};
  ScalarType dtype[kNumDeviceTypes] = {ScalarType::BFloat16, ScalarType::Float16};
  bool cache_enabled = true;
  int nesting = 0;
};
State& state();
inline bool any_enabled() { auto& s = state(); return s.enabled[0] || s.enabled[1]; }

// Casts the eligible tensors among `args` in place (the caller's local copies) per op's policy.
void apply(Op op, std::initializer_list<Tensor*> args);
void apply(Op op, std::vector<Tensor>& args);
// fp32_set_opt_dtype: the dtype an op with an optional `dtype=` runs in under autocast.
std::optional<ScalarType> set_opt_dtype(Op op, const Tensor& a, std::optional<ScalarType> dtype);
Tensor cached_cast(const Tensor& t, ScalarType dtype);
void clear_cache();
size_t cache_size();
bool is_eligible(const Tensor& t, DeviceType dev);

}  // namespace ampgrad::amp

#define AG_AUTOCAST(op, ...) do { if (::ampgrad::amp::any_enabled()) ::ampgrad::amp::apply(op, {__VA_ARGS__}); } while (0)
