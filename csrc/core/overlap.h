// Memory overlap between tensors (torch's MemoryOverlap): the checks in-place ops run before they
// write (Note [In-place checks] in ops/ops.h).
#pragma once
#include "core/tensor.h"

namespace ampgrad {

enum class MemOverlap { No, Full, Partial, TooHard };

// Full: the same elements in the same layout; Partial: some shared memory otherwise; TooHard: a
// tensor is not dense (the answer would need an element-by-element test; torch also lets it pass).
MemOverlap overlap_status(const Tensor& a, const Tensor& b);
// Some element of `t` is reached through two indices (a dim of stride 0 and size > 1).
bool has_internal_overlap(const Tensor& t);

void assert_no_internal_overlap(const Tensor& t);                  // the written-to tensor
void assert_no_partial_overlap(const Tensor& out, const Tensor& in);  // elementwise ops: Full is fine
void assert_no_overlap(const Tensor& out, const Tensor& in);          // scatter-like ops: any sharing raises

}  // namespace ampgrad
