// Autocast: thread-local state per device type, the policy lookup and the cast of eligible arguments.
// Note [Autocast gate]: the policy column of the op table is applied in one place, the gate an op is
// entered through (as torch's Autocast dispatch key): bindings register ops with def_op<Op::x> /
// gated<Op::x> (bindings/gate.h), ops composed in Python with @engine_op("x") (python/ampgrad/
// _op_gate.py, which calls _C._autocast_gate). The gate casts the call's tensor arguments per the
// row's policy (apply), fills an unset dtype= for fp32_set_opt_dtype / fp32_append_dtype rows, and
// then runs the op with autocast excluded (ExcludeGuard), so the ops it is composed of are not cast
// again (torch's ExcludeDispatchKeyGuard in its autocast wrappers). Op front ends never cast.
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
  // Per device type: inside a gated op whose row has a policy for that device (Note [Autocast gate]).
  bool excluded[kNumDeviceTypes] = {false, false};
};
// Inline, so that the gate's check (gate_open) is one thread-local load at every gated call site.
inline State& state() {
  static thread_local State s;
  return s;
}
inline bool any_enabled() { auto& s = state(); return s.enabled[0] || s.enabled[1]; }
// The gate casts only when some device's autocast is on and no gated op is running.
// As torch's per-device Autocast keys: a gated op excludes only the device types its row has a
// policy for; on the others its inner ops are still autocast (RNNCell on CPU runs linear, LOW there).
inline bool gate_open() {
  auto& s = state();
  return (s.enabled[0] && !s.excluded[0]) || (s.enabled[1] && !s.excluded[1]);
}
struct ExcludeGuard {
  bool prev[kNumDeviceTypes];
  explicit ExcludeGuard(Op op) {
    auto& s = state();
    for (int d = 0; d < kNumDeviceTypes; ++d) {
      prev[d] = s.excluded[d];
      if (op_policy(op, d) != AmpPolicy::NONE) s.excluded[d] = true;
    }
  }
  ~ExcludeGuard() { for (int d = 0; d < kNumDeviceTypes; ++d) state().excluded[d] = prev[d]; }
  ExcludeGuard(const ExcludeGuard&) = delete;
  ExcludeGuard& operator=(const ExcludeGuard&) = delete;
};

// Casts the eligible tensors among `args` in place (the caller's local copies) per op's policy.
void apply(Op op, Tensor* const* args, size_t n);
// fp32_set_opt_dtype: the dtype an op with an optional `dtype=` runs in under autocast.
std::optional<ScalarType> set_opt_dtype(Op op, const Tensor& a, std::optional<ScalarType> dtype);
Tensor cached_cast(const Tensor& t, ScalarType dtype);
void clear_cache();
size_t cache_size();
bool is_eligible(const Tensor& t, DeviceType dev);

}  // namespace ampgrad::amp
