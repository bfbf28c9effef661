// In-place view ops (Note [In-place view ops], defined in ops/shape.cpp): self's geometry changes, its data
// does not. Bound as Tensor.t_, transpose_, swapaxes_, swapdims_, squeeze_, unsqueeze_, as_strided_.
#pragma once
#include "ops/ops.h"

namespace ampgrad {

Tensor& t_(Tensor& self);
Tensor& transpose_(Tensor& self, int64_t d0, int64_t d1);
Tensor& squeeze_(Tensor& self, OptDims dims, bool dims_is_list);  // dims_is_list: a tuple was given (torch's node name)
Tensor& unsqueeze_(Tensor& self, int64_t dim);
Tensor& as_strided_(Tensor& self, IntList sizes, IntList strides, std::optional<int64_t> offset);

}  // namespace ampgrad
