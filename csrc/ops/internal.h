// Helpers shared by the op front ends (not public API).
#pragma once
#include "autograd/forward_ad.h"
#include "autograd/fw_rules.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "kernels/kernels.h"
#include "ops/ops.h"

namespace ampgrad {

using autograd::FunctionNode;
using autograd::variable_list;
// The signature of every backward closure: c.get(i) unpacks saved tensor i, g[k] is the
// gradient of output k.
#define AG_BW [=](::ampgrad::autograd::FunctionNode& c, const ::ampgrad::autograd::variable_list& g) -> ::ampgrad::autograd::variable_list

// The dtype float ops compute in: integers and bool go to the default float dtype.
inline ScalarType float_dtype(ScalarType t) { return is_floating(t) ? t : default_dtype(); }
void check_same_device(const Tensor& a, const Tensor& b, const char* op);
// Runs an elementwise kernel over operands already broadcast to `out`'s shape.
void run_elementwise(Op op, Tensor& out, std::initializer_list<const Tensor*> inputs, const double* s = nullptr);
// Strides of an elementwise result over operands already broadcast to `shape` (Note [Output layout]).
Shape output_strides(const Shape& shape, std::initializer_list<const Tensor*> inputs);
// A fresh output of `shape` (laid out as its operands), then run_elementwise.
Tensor elementwise(Op op, const Shape& shape, ScalarType out_dtype, std::initializer_list<const Tensor*> inputs,
                   const double* s = nullptr);
bool is_cpu_scalar(const Tensor& t);
// Autograd bookkeeping for a view: shares version counter and records base.
void mark_view(Tensor& view, const Tensor& base, bool multi_output = false);

}  // namespace ampgrad
