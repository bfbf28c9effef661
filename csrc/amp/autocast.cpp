// Autocast policies (Note [Op table]) and the cast cache for fp32 leaves that require grad.
#include "amp/autocast.h"
#include "amp/inspect.h"
#include <optional>
#include <unordered_map>
#include "autograd/grad_mode.h"
#include "ops/ops.h"

namespace ampgrad::amp {

bool is_eligible(const Tensor& t, DeviceType dev) {
  return t.defined() && t.device().type == dev && is_floating(t.dtype()) && t.dtype() != ScalarType::Float64 &&
         !t.impl()->wrapped_number;
}

namespace {
// Note [Cast cache]: only casts of fp32 leaves that require grad are cached, and only when the
// cast itself was recorded (grad mode on, not inference mode), so a cast made under no_grad can
// never be reused later without its history (torch #158232).
struct CacheEntry { std::weak_ptr<TensorImpl> src; Tensor cast; };
std::unordered_map<const TensorImpl*, CacheEntry>& cache() {
  static thread_local std::unordered_map<const TensorImpl*, CacheEntry> c;
  return c;
}
}  // namespace

namespace inspect {
std::atomic<bool> g_on{false};
std::vector<Record>& records() {
  static thread_local std::vector<Record> r;
  return r;
}
namespace { thread_local int tl_cache_hits = 0; }
}  // namespace inspect

void clear_cache() { cache().clear(); }
size_t cache_size() { return cache().size(); }

Tensor cached_cast(const Tensor& t, ScalarType dtype) {
  if (t.dtype() == dtype) return t;
  bool cacheable = state().cache_enabled && t.is_leaf() && t.requires_grad() && t.dtype() == ScalarType::Float32 &&
                   autograd::GradMode::is_enabled() && !autograd::InferenceMode::is_enabled();
  if (!cacheable) return to_dtype(t, dtype);
  auto& c = cache();
  auto it = c.find(t.impl());
  if (it != c.end() && !it->second.src.expired() && it->second.cast.dtype() == dtype) {
    if (inspect::on()) ++inspect::tl_cache_hits;
    return it->second.cast;
  }
  Tensor r = to_dtype(t, dtype);
  c[t.impl()] = {t.impl_ptr(), r};
  return r;
}

namespace {
void apply_one(Op op, int d, DeviceType dev, AmpPolicy p, Tensor* const* args, size_t n) {
  auto& s = state();
  switch (p) {
    case AmpPolicy::NONE: case AmpPolicy::FP32_SET_OPT: case AmpPolicy::FP32_APPEND: break;
    case AmpPolicy::BANNED:
      AG_THROW(RuntimeError, "torch.nn.functional.", op_name(op), " and torch.nn.", op_name(op),
               " are unsafe to autocast.\nMany models use a sigmoid layer right before the binary cross entropy "
               "layer.\nIn this case, combine the two layers using torch.nn.functional."
               "binary_cross_entropy_with_logits\nor torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits "
               "and BCEWithLogits are\nsafe to autocast.");
    case AmpPolicy::LOW: case AmpPolicy::FP32:
      for (size_t i = 0; i < n; ++i)
        if (args[i] && is_eligible(*args[i], dev))
          *args[i] = cached_cast(*args[i], p == AmpPolicy::LOW ? s.dtype[d] : ScalarType::Float32);
      break;
    case AmpPolicy::PROMOTE: {
      // torch's prioritize: eligible args must be fp32 or the autocast dtype; any fp32 wins.
      ScalarType widest = s.dtype[d];
      for (size_t i = 0; i < n; ++i) {
        if (!args[i] || !is_eligible(*args[i], dev)) continue;
        ScalarType t = args[i]->dtype();
        if (t == ScalarType::Float32) widest = ScalarType::Float32;
        else if (t != s.dtype[d] && widest != ScalarType::Float32)
          AG_THROW(RuntimeError, "Unexpected floating ScalarType in at::autocast::prioritize");
      }
      for (size_t i = 0; i < n; ++i)
        if (args[i] && is_eligible(*args[i], dev)) *args[i] = cached_cast(*args[i], widest);
      break;
    }
  }
}

// One inspector record for op's cast on device type d (only while inspect::on()).
void observe(Op op, int d, AmpPolicy p, Tensor* const* args, size_t n, const std::vector<int8_t>& before, int hits0) {
  DeviceType dev = static_cast<DeviceType>(d);
  inspect::Record r{static_cast<int16_t>(op), static_cast<int8_t>(d), static_cast<int8_t>(p), -1, 0, 0, 0, 0};
  bool on_dev = n == 0;
  int8_t first = -1;
  for (size_t i = 0; i < n; ++i) {
    if (!args[i] || !args[i]->defined()) continue;
    ++r.n_tensors;
    on_dev = on_dev || args[i]->device().type == dev;
    if (first < 0) first = static_cast<int8_t>(args[i]->dtype());
    if (static_cast<int8_t>(args[i]->dtype()) != before[i]) ++r.n_cast;
    if (is_eligible(*args[i], dev)) {
      if (r.n_eligible++ == 0) r.run_dtype = static_cast<int8_t>(args[i]->dtype());
    }
  }
  if (!on_dev || p == AmpPolicy::NONE) return;
  if (r.run_dtype < 0) r.run_dtype = first;
  else if (p == AmpPolicy::FP32_SET_OPT || p == AmpPolicy::FP32_APPEND) r.run_dtype = static_cast<int8_t>(ScalarType::Float32);
  r.n_cache_hits = static_cast<int16_t>(inspect::tl_cache_hits - hits0);
  inspect::records().push_back(r);
}
}  // namespace

void apply(Op op, Tensor* const* args, size_t n) {
  auto& s = state();
  for (int d = 0; d < kNumDeviceTypes; ++d) {
    if (!s.enabled[d] || s.excluded[d]) continue;
    DeviceType dev = static_cast<DeviceType>(d);
    AmpPolicy p = op_policy(op, d);
    if (__builtin_expect(inspect::on(), 0)) {
      std::vector<int8_t> before(n, -1);
      for (size_t i = 0; i < n; ++i)
        if (args[i] && args[i]->defined()) before[i] = static_cast<int8_t>(args[i]->dtype());
      int hits0 = inspect::tl_cache_hits;
      apply_one(op, d, dev, p, args, n);
      observe(op, d, p, args, n, before, hits0);
      continue;
    }
    apply_one(op, d, dev, p, args, n);
  }
}

std::optional<ScalarType> set_opt_dtype(Op op, const Tensor& a, std::optional<ScalarType> dtype) {
  if (dtype || !any_enabled()) return dtype;
  auto& s = state();
  int d = static_cast<int>(a.device().type);
  AmpPolicy p = s.enabled[d] && !s.excluded[d] ? op_policy(op, d) : AmpPolicy::NONE;
  if ((p == AmpPolicy::FP32_SET_OPT || p == AmpPolicy::FP32_APPEND) && is_eligible(a, a.device().type))
    return ScalarType::Float32;
  return dtype;
}

}  // namespace ampgrad::amp
