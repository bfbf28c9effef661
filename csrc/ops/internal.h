// Helpers shared by the op front ends (not public API).
#pragma once
#include "autograd/forward_ad.h"
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
void mark_view(Tensor& view, const Tensor& base);

// ---- forward AD (Note [Forward AD])
// Sets out's tangent to rule(t) when a dual level is open and some input carries a tangent; t[i]
// is input i's tangent, undefined for none (a zero tangent). The rule is a template argument, not
// a std::function: with no level open this is one branch.
// (The work is out of line so that the op's own code stays as small as without forward AD.)
template <typename Rule>
[[gnu::noinline]] void fw_rule_slow(const Tensor& out, const Tensor* const* ins, size_t n, Rule& rule) {
  if (!is_floating(out.dtype())) return;
  variable_list t(n);
  bool any = false;
  for (size_t i = 0; i < n; ++i) any |= (t[i] = ins[i] ? autograd::fw::tangent(*ins[i]) : Tensor()).defined();
  if (!any) return;
  autograd::fw::Disable off;
  autograd::fw::set_result_tangent(out, rule(t));
}
template <typename Rule>
inline void fw_rule(const Tensor& out, const Tensor* const* ins, size_t n, Rule&& rule) {
  if (__builtin_expect(autograd::fw::on(), 0)) fw_rule_slow(out, ins, n, rule);
}
template <typename Rule>
inline void fw_rule(const Tensor& out, std::initializer_list<const Tensor*> ins, Rule&& rule) {
  fw_rule(out, ins.begin(), ins.size(), std::forward<Rule>(rule));
}
inline bool fw_has(const Tensor& t) { return autograd::fw::on() && autograd::fw::tangent(t).defined(); }
// After self was overwritten in place with `src`'s values (undefined src: with a constant).
inline void fw_inplace(const Tensor& self, const Tensor& src) {
  if (__builtin_expect(!autograd::fw::on(), 1)) return;
  Tensor st = src.defined() ? autograd::fw::tangent(src) : Tensor();
  if (st.defined() || autograd::fw::tangent(self).defined()) autograd::fw::update_inplace(self, st);
}
// A tangent, or zeros shaped like its primal when it has none.
inline Tensor or_zeros(const Tensor& tangent, const Tensor& primal) { return tangent.defined() ? tangent : zeros_like(primal); }
// Sum of the defined terms (undefined when none is).
Tensor sum_defined(const variable_list& terms);
// The jvp of an elementwise op from its backward closure: each input's Jacobian is diagonal, so
// the backward applied to input i's tangent is that input's term. `saved` is what the closure
// reads with c.get(i).
Tensor jvp_from_backward(const autograd::BackwardFn& bw, const variable_list& t, std::initializer_list<Tensor> saved);
// The same for a reduction (one output per reduced slice): the backward of ones is each output's
// derivative along its slice, so the jvp is sum(t * bw(1)) over the reduced dims.
Tensor jvp_reduce_from_backward(const autograd::BackwardFn& bw, const Tensor& t, const Tensor& out,
                                std::initializer_list<Tensor> saved, const IntList& dims, bool keepdim);

}  // namespace ampgrad
