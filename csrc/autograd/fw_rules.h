// Forward-AD helpers for the op front ends (Note [Forward AD]): fw_rule sets an op's output tangent
// from its inputs' tangents; jvp_from_backward derives an elementwise jvp from the backward closure.
// ops/internal.h includes this header.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <vector>
#include "autograd/forward_ad.h"
#include "autograd/node.h"

namespace ampgrad {

using autograd::variable_list;
Tensor zeros_like(const Tensor& a);  // (ops/ops.h)

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
                                std::initializer_list<Tensor> saved, const std::vector<int64_t>& dims, bool keepdim);

}  // namespace ampgrad
