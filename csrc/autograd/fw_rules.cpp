// Forward-AD helpers shared by the op front ends (Note [Forward AD]): jvps derived from backward
// closures.
#include "autograd/fw_rules.h"
#include "ops/internal.h"

namespace ampgrad {

// ---------------------------------------------------------------- forward AD helpers
namespace {
// A node the backward closures can read for a jvp: the saved tensors, and only input i marked as
// needing a gradient, through an edge that owns nothing.
struct JvpNode : FunctionNode {
  explicit JvpNode(std::initializer_list<Tensor> saved) : FunctionNode("jvp") { for (auto& t : saved) save(t); }
  void only_input(size_t i, size_t n) {
    next_edges.assign(n, autograd::Edge{});
    next_edges[i].fn = std::shared_ptr<autograd::Node>(std::shared_ptr<autograd::Node>(), this);
  }
};
}  // namespace

Tensor sum_defined(const variable_list& terms) {
  Tensor r;
  for (const Tensor& t : terms)
    if (t.defined()) r = r.defined() ? add(r, t) : t;
  return r;
}

Tensor jvp_from_backward(const autograd::BackwardFn& bw, const variable_list& t, std::initializer_list<Tensor> saved) {
  JvpNode node(saved);
  variable_list terms;
  for (size_t i = 0; i < t.size(); ++i) {
    if (!t[i].defined()) continue;
    node.only_input(i, t.size());
    variable_list g = bw(node, {t[i]});
    if (i < g.size()) terms.push_back(g[i]);
  }
  return sum_defined(terms);
}

Tensor jvp_reduce_from_backward(const autograd::BackwardFn& bw, const Tensor& t, const Tensor& out,
                                std::initializer_list<Tensor> saved, const IntList& dims, bool keepdim) {
  JvpNode node(saved);
  node.only_input(0, 1);
  Tensor d = bw(node, {ones_like(out)})[0];
  return sum(mul(t, d), dims, keepdim, std::nullopt);
}

}  // namespace ampgrad
