// The in-place autograd machinery (Note [In-place ops]): the checks, CopySlices, history rebasing
// and the saved-self protection.
#include "autograd/inplace.h"
#include <algorithm>
#include "core/overlap.h"
#include "ops/internal.h"

namespace ampgrad {

void check_inplace_operands(const Tensor& self, Operands operands) {  // Note [In-place checks]
  assert_no_internal_overlap(self);
  for (const Tensor* t : operands)
    if (t && t->defined()) assert_no_partial_overlap(self, *t);
}

// ---------------------------------------------------------------- in place (Note [In-place ops])
// Note [In-place ops]: with autograd in play an in-place op is computed out of place (so the
// out-of-place formula is its backward), written into self, and self's history is rebased onto
// the result. A view's base gets a CopySlices node that routes the view's region of the gradient
// through the new history and the rest through the old one.
void check_inplace(const Tensor& self, const char* op, bool any_requires_grad) {
  autograd::before_mutation(self);  // Note [Mutation hook]
  if (!autograd::GradMode::is_enabled()) return;
  if (any_requires_grad || self.requires_grad()) autograd::check_view_rebase(self, false);  // torch's order
  check_inplace_leaf(self);
}

void check_inplace_leaf(const Tensor& self) {
  if (!autograd::GradMode::is_enabled()) return;
  if (self.requires_grad() && self.is_leaf())
    AG_THROW(RuntimeError, self.is_view() ? "a view of a leaf Variable that requires grad is being used in an in-place operation."
                                          : "a leaf Variable that requires grad is being used in an in-place operation.");
  if (self.is_view()) {
    Tensor b = self.base();
    if (b.requires_grad() && b.is_leaf())
      AG_THROW(RuntimeError, "a view of a leaf Variable that requires grad is being used in an in-place operation.");
  }
}

namespace {
// The view geometry (strides, offset) is in the base's storage units, so the gradient is laid out
// as the base's memory first: permuted to the base's dim order (`order`, slowest dim first) and
// flattened, the view's strides index it directly; the result is permuted back. All recorded, so
// create_graph differentiates through it.
struct CopySlices : autograd::Node {
  IntList order, inv_order;
  Shape vsizes, vstrides;
  int64_t voffset;
  const char* display = nullptr;  // a composition's torch name (set_copy_slices_name)
  std::string name() const override { return display ? display : "torch::autograd::CopySlices"; }  // torch's name()
  autograd::variable_list apply(autograd::variable_list&& g) override {
    // The view's geometry is relative to the base's memory: lay the gradient out in the base's
    // memory order (a dense base may be permuted), then address it like the storage.
    Tensor gp = contiguous(permute(g[0], order));
    Tensor flat = reshape(gp, {-1});
    Tensor res = clone(as_strided(flat, vsizes, vstrides, flat.storage_offset() + voffset));
    if (!next_edges[0].valid()) return {Tensor(), res};
    Tensor rest = clone(flat);
    // Recorded under create_graph, so the double backward also sees zeros at the hole.
    Tensor hole = as_strided(rest, vsizes, vstrides, rest.storage_offset() + voffset);
    zero_(hole);
    return {permute(reshape(rest, IntList(gp.sizes().begin(), gp.sizes().end())), inv_order), res};
  }
};
}  // namespace

// A Python composition whose last step writes into a view (as_strided_scatter) names its node as
// torch's single op does; false if n is not a CopySlices node. `name` must outlive the node.
bool set_copy_slices_name(autograd::Node* n, const char* name) {
  auto* cs = dynamic_cast<CopySlices*>(n);
  if (!cs) return false;
  cs->display = name;
  return true;
}

// Moves retain_grad from self's old grad_fn to its new one: .grad is for the value after the op.
static void move_retains_grad(const Tensor& self, const std::shared_ptr<autograd::Node>& old_fn) {
  auto* m = self.autograd_meta();
  if (!m || !m->retains_grad || !old_fn || old_fn == m->grad_fn) return;
  auto& v = old_fn->retains_grad;
  v.erase(std::remove_if(v.begin(), v.end(), [&](auto& p) { return p.second.lock() == self.impl_ptr(); }), v.end());
  if (m->grad_fn) m->grad_fn->retains_grad.push_back({static_cast<int>(m->output_nr), self.impl_ptr()});
}

void rebase_history(Tensor& self, const Tensor& result) {
  if (!self.is_view()) {
    auto& m = self.ensure_autograd_meta();
    std::shared_ptr<autograd::Node> old = m.grad_fn;
    Tensor r = result.dtype() == self.dtype() ? result : to_dtype(result, self.dtype());
    m.requires_grad = true;
    m.grad_fn = r.grad_fn();
    m.output_nr = r.output_nr();
    move_retains_grad(self, old);
    return;
  }
  Tensor base = self.base();
  AG_CHECK(is_non_overlapping_and_dense(base), "in-place operation on a view of a tensor whose elements do not "
           "fill a dense block is not supported when it requires grad");
  auto node = std::make_shared<CopySlices>();
  node->order.resize(base.dim());
  for (int64_t d = 0; d < base.dim(); ++d) node->order[d] = d;
  std::stable_sort(node->order.begin(), node->order.end(),
                   [&](int64_t a, int64_t b) { return base.strides()[a] > base.strides()[b]; });
  node->inv_order.resize(base.dim());
  for (int64_t d = 0; d < base.dim(); ++d) node->inv_order[node->order[d]] = d;
  node->vsizes = self.sizes();
  node->vstrides = self.strides();
  node->voffset = self.storage_offset() - base.storage_offset();
  node->next_edges = {autograd::gradient_edge(base), autograd::gradient_edge(result)};
  node->input_meta.push_back({base.sizes(), base.dtype(), base.device()});
  auto& bm = base.ensure_autograd_meta();
  std::shared_ptr<autograd::Node> old_base = bm.grad_fn;
  bm.requires_grad = true;
  bm.grad_fn = node;
  bm.output_nr = 0;
  move_retains_grad(base, old_base);
  // The view now reads the new history through its base.
  auto& sm = self.ensure_autograd_meta();
  std::shared_ptr<autograd::Node> old_view = sm.grad_fn;
  Tensor v = as_strided(base, self.sizes(), self.strides(), self.storage_offset());
  sm.requires_grad = true;
  sm.grad_fn = v.grad_fn();
  sm.output_nr = 0;
  sm.attr_version = self.version();
  move_retains_grad(self, old_view);
}

Tensor& apply_inplace(Tensor& self, const Tensor& result, const char* op) {
  AG_CHECK(result.dtype() == self.dtype() || can_cast(result.dtype(), self.dtype()), "result type ",
           scalar_type_name(result.dtype()), " can't be cast to the desired output type ", scalar_type_name(self.dtype()));
  check_inplace(self, op, result.requires_grad());
  {
    autograd::AutoGradMode off(false);
    Tensor src = result.dtype() == self.dtype() ? result : to_dtype(result, self.dtype());
    run_elementwise(Op::copy, self, {&src});
  }
  self.bump_version();
  fw_inplace(self, result);
  if (!result.requires_grad()) {
    // Overwritten by values without history (e.g. eq_): the old history gets zeros.
    if (self.requires_grad()) rebase_constant(self, "CopyBackwards");
    return self;
  }
  rebase_history(self, result);
  return self;
}

// Note [Saved self in in-place ops]: the nodes made while an in-place op computes its result out
// of place may save `self` (or a view of it) as an input, which the write-back then overwrites.
// Those saved tensors are swapped for clones taken before the write (torch's "original self"):
// the formula sees the old values, and create_graph differentiates through the clone into self's
// old history. Nodes made before the op keep what they saved: that is stale and must raise.
static void protect_saved_self(const Tensor& self, const std::vector<std::weak_ptr<FunctionNode>>& nodes) {
  std::vector<std::pair<TensorImpl*, Tensor>> clones;
  for (auto& w : nodes) {
    auto node = w.lock();
    if (!node) continue;
    for (auto& sv : node->saved) {
      if (sv.is_output || !sv.data.defined() || sv.data.storage() != self.storage()) continue;
      Tensor c;
      for (auto& [k, t] : clones)
        if (k == sv.data.impl()) c = t;
      if (!c.defined()) {
        autograd::AutoGradMode on(true);
        c = clone(sv.data);
        clones.push_back({sv.data.impl(), c});
      }
      sv = autograd::SavedVariable(c, false);
    }
  }
}

Tensor& apply_inplace(Tensor& self, const std::function<Tensor()>& compute, const char* op, Operands operands,
                      bool overlap_after) {
  if (!overlap_after) check_inplace_operands(self, operands);
  check_inplace(self, op);
  Tensor result;
  std::vector<std::weak_ptr<FunctionNode>> made;
  {
    autograd::NodeRecorder rec;
    autograd::DeferSavedTensorHooks defer;
    result = compute();
    made = std::move(rec.nodes);
  }
  if (overlap_after) check_inplace_operands(self, operands);
  protect_saved_self(self, made);
  autograd::pack_saved_tensors(made);
  return apply_inplace(self, result, op);
}

// An in-place op whose new value does not depend on the old one (fill_, zero_, random fills,
// copy_ of a constant): self keeps requires_grad, and its old history gets zeros (torch's
// FillBackward / ZeroBackward / CopyBackwards nodes). Call after writing the data.
void rebase_constant(Tensor& self, const char* node_name) {
  if (!autograd::GradMode::is_enabled() || !self.requires_grad()) return;
  auto node = autograd::make_node(node_name, {&self}, AG_BW { return {zeros_like(g[0])}; });
  if (!node) return;
  Tensor r = detach(self);
  autograd::set_history(node, {&r});
  rebase_history(self, r);
}

}  // namespace ampgrad
