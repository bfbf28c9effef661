// Type promotion and broadcasting: the default dtype, result_type and broadcast_shapes (pure
// dtype/shape logic, no kernels and no autograd).
#include "core/promotion.h"
#include <algorithm>

namespace ampgrad {

// ---------------------------------------------------------------- promotion and broadcasting
namespace {
thread_local ScalarType t_default_dtype = ScalarType::Float32;
}
ScalarType default_dtype() { return t_default_dtype; }
void set_default_dtype(ScalarType t) {
  AG_CHECK_TYPE(t == ScalarType::Float32 || t == ScalarType::Float64 || t == ScalarType::Float16 || t == ScalarType::BFloat16,
                "only floating-point types are supported as the default type");
  t_default_dtype = t;
}

// Note [Type promotion]: torch's three categories: tensors with dims, 0-dim tensors, and wrapped
// Python numbers. A lower category only matters when it is a higher kind (bool < int < float).
ScalarType result_type(const std::vector<const Tensor*>& ts) { return result_type(ts.data(), ts.size()); }

ScalarType result_type(const Tensor* const* ts, size_t n) {
  ScalarType dim_t = ScalarType::Undefined, zero_t = ScalarType::Undefined, wrapped_t = ScalarType::Undefined;
  for (size_t i = 0; i < n; ++i) {
    const Tensor* t = ts[i];
    if (!t || !t->defined()) continue;
    ScalarType cur = t->dtype();
    if (t->impl()->wrapped_number) {
      if (is_floating(cur)) cur = default_dtype();
      wrapped_t = promote_types(wrapped_t, cur);
    } else if (t->dim() == 0) {
      zero_t = promote_types(zero_t, cur);
    } else {
      dim_t = promote_types(dim_t, cur);
    }
  }
  auto combine = [](ScalarType higher, ScalarType lower) {
    if (higher == ScalarType::Undefined) return lower;
    if (is_floating(higher)) return higher;
    if (higher == ScalarType::Bool || is_floating(lower)) return promote_types(higher, lower);
    return higher;
  };
  return combine(dim_t, combine(zero_t, wrapped_t));
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      AG_THROW(RuntimeError, "The size of tensor a (", da, ") must match the size of tensor b (", db,
               ") at non-singleton dimension ", i);
    out[i] = da == 1 ? db : da;
  }
  return out;
}

}  // namespace ampgrad
