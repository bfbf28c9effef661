// The dual level, tangent storage and the in-place tangent update (Note [Forward AD]).
#include "autograd/forward_ad.h"
#include "autograd/autograd_meta.h"
#include <algorithm>
#include <mutex>
#include "autograd/grad_mode.h"
#include "ops/ops.h"

namespace ampgrad::autograd::fw {

bool g_level_open = false;
thread_local bool t_off = false;

namespace {
uint64_t g_gen = 0;  // generation of the open level; 0 never is one
std::mutex g_mu;
std::vector<std::weak_ptr<TensorImpl>> g_duals;  // tensors given a tangent under the open level
size_t g_prune_at = 1024;  // a long-lived level drops the entries of dead tensors as it grows

void remember(const Tensor& t) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_duals.size() >= g_prune_at) {
    g_duals.erase(std::remove_if(g_duals.begin(), g_duals.end(), [](auto& w) { return w.expired(); }), g_duals.end());
    g_prune_at = std::max<size_t>(1024, 2 * g_duals.size());
  }
  g_duals.push_back(t.impl_ptr());
}

// A view made before its base got a tangent reads the matching view of the base's (torch's views
// share their base's tangent); it keeps it, so later in-place writes go through to the base.
Tensor view_of_base_tangent(const Tensor& view, const Tensor& base) {
  const AutogradMeta* bm = base.autograd_meta();
  if (!bm || bm->fw_gen != g_gen || bm->fw_grad.strides() != base.strides()) return Tensor();
  const Tensor& bt = bm->fw_grad;
  Tensor vt = make_view(bt, view.sizes(), view.strides(), bt.storage_offset() + view.storage_offset() - base.storage_offset());
  set_tangent(view, vt);
  return vt;
}
}  // namespace

int64_t current_level() { return g_level_open ? 0 : -1; }

int64_t enter_level() {
  std::lock_guard<std::mutex> lock(g_mu);
  AG_CHECK(!g_level_open, "Nested forward mode AD is not supported at the moment");
  ++g_gen;
  g_level_open = true;
  return 0;
}

void exit_level(int64_t level) {
  AG_CHECK(level >= 0, "Dual level must be a positive number.");
  std::vector<std::weak_ptr<TensorImpl>> duals;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    AG_CHECK(g_level_open && level == 0,
             "Trying to exit a forward AD level that was not the last one that was created. This is not supported.");
    g_level_open = false;
    duals.swap(g_duals);
    g_prune_at = 1024;
  }
  for (auto& w : duals)  // released outside the lock: a tangent's destructor may free other tensors
    if (auto impl = w.lock())
      if (auto* m = static_cast<AutogradMeta*>(impl->autograd.get())) { m->fw_grad = Tensor(); m->fw_gen = 0; }
}

Tensor tangent(const Tensor& t) {
  const AutogradMeta* m = t.defined() ? t.autograd_meta() : nullptr;
  if (!m || !on()) return Tensor();  // (with forward AD off, none is visible)
  if (m->fw_gen == g_gen) return m->fw_grad;
  return m->is_view ? view_of_base_tangent(t, m->base) : Tensor();
}

void set_tangent(const Tensor& t, const Tensor& tan) {
  auto& m = t.ensure_autograd_meta();
  bool fresh = m.fw_gen != g_gen;
  m.fw_grad = tan;
  m.fw_gen = tan.defined() ? g_gen : 0;
  if (fresh && tan.defined()) remember(t);
}

void set_result_tangent(const Tensor& out, Tensor r) {
  if (!r.defined() || !is_floating(out.dtype())) return;
  if (r.dtype() != out.dtype()) r = to_dtype(r, out.dtype());
  if (r.sizes() != out.sizes()) r = contiguous(expand_op(r, IntList(out.sizes().begin(), out.sizes().end())));
  set_tangent(out, r);
}

Tensor with_layout(const Tensor& t, const Tensor& like) {
  if (t.strides() == like.strides() || !is_non_overlapping_and_dense(like)) return t;
  Tensor r = empty_strided(like.sizes(), like.strides(), t.dtype(), t.device());
  copy_(r, t);
  return r;
}

void update_inplace(const Tensor& self, const Tensor& r) {
  if (!is_floating(self.dtype())) return;
  Tensor cur = tangent(self);
  if (!cur.defined()) {
    if (!r.defined()) return;
    Tensor base = self.base();
    if (base.defined() && is_floating(base.dtype())) {
      // A view written with a tangent: its base gets one (zeros elsewhere), and the view's
      // tangent is the matching view of it.
      Tensor bt = tangent(base);
      if (!bt.defined()) {
        bt = with_layout(zeros_like(base), base);
        set_tangent(base, bt);
      }
      Tensor dense = with_layout(bt, base);
      if (!dense.is_same(bt)) set_tangent(base, bt = dense);
      cur = make_view(bt, self.sizes(), self.strides(), bt.storage_offset() + self.storage_offset() - base.storage_offset());
    } else {
      cur = with_layout(zeros_like(self), self);
    }
    set_tangent(self, cur);
  }
  Disable off;
  AutoGradMode no_grad(false);
  if (r.defined()) copy_(cur, r);
  else zero_(cur);
}

}  // namespace ampgrad::autograd::fw
