// Type promotion and broadcasting (Note [Type promotion]): the pure dtype and shape rules every
// op front end applies before it runs a kernel. ops/ops.h includes this header.
#pragma once
#include <vector>
#include "core/tensor.h"

namespace ampgrad {

ScalarType default_dtype();
void set_default_dtype(ScalarType t);

ScalarType result_type(const std::vector<const Tensor*>& ts);
ScalarType result_type(const Tensor* const* ts, size_t n);
Shape broadcast_shapes(const Shape& a, const Shape& b);

}  // namespace ampgrad
