// The in-place autograd machinery (Note [In-place ops], defined in autograd/inplace.cpp): the
// checks every in-place entry point runs, and the history rebasing after the write. ops/ops.h
// includes this header, so op front ends find these where they always did.
#pragma once
#include <functional>
#include <initializer_list>
#include "core/tensor.h"

namespace ampgrad {

// ---- in place with autograd (Note [In-place ops]): computes `fn(self)` out of place, writes it
// into self and rebases self's history onto the result.
// Note [In-place checks]: the in-place entry points check, before anything is computed or written
// (check_inplace_operands, torch's TensorIterator rules): self has no internal overlap (an expanded
// tensor), no tensor operand partially overlaps self, and the result's dtype can be cast to self's.
// A failed in-place call leaves every tensor as it was.
using Operands = std::initializer_list<const Tensor*>;
void check_inplace_operands(const Tensor& self, Operands operands);
Tensor& apply_inplace(Tensor& self, const Tensor& result, const char* op);
// The same, computing the result inside: saved aliases of self are protected from the write-back
// (Note [Saved self in in-place ops]). Use this form whenever the result is computed from self.
// `operands`: the op's other tensor inputs, for the overlap checks.
// overlap_after: self's overlap checks after compute's own argument checks (torch's order for the ops whose
// in-place kernel validates its arguments before building its iterator)
Tensor& apply_inplace(Tensor& self, const std::function<Tensor()>& compute, const char* op, Operands operands = {},
                      bool overlap_after = false);
// Rebases self's history onto `result` (a CopySlices on the base for views); no data is written.
void rebase_history(Tensor& self, const Tensor& result);
// After an in-place write of a value independent of self's old value: zeros to the old history.
void rebase_constant(Tensor& self, const char* node_name);
// Raises torch's errors for an in-place op about to be recorded on self (leaf, view of a leaf,
// view made in no_grad / inference mode); `any_requires_grad`: some operand requires grad.
void check_inplace(const Tensor& self, const char* op, bool any_requires_grad = false);
// Only the leaf checks of check_inplace (torch's VariableType raises them before the op's own checks).
void check_inplace_leaf(const Tensor& self);

}  // namespace ampgrad
