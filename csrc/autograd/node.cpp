// Nodes, saved variables, AccumulateGrad, and recording helpers.
#include "autograd/node.h"
#include <algorithm>
#include <atomic>
#include "autograd/anomaly.h"
#include "autograd/forward_ad.h"
#include "autograd/grad_mode.h"
#include "ops/ops.h"

namespace ampgrad::autograd {

uint64_t next_sequence_nr() {
  static thread_local uint64_t counter = 0;
  return counter++;
}

std::string short_node_name(std::string nm) {
  size_t p = nm.find("Backward");
  if (p != std::string::npos) {
    nm.erase(p, 8);
    if (nm.size() == p + 1 && nm[p] == '0') nm.erase(p);
  }
  return nm;
}

namespace {
// Note [Deep graphs]: a node that dies hands its children to an explicit stack instead of
// letting their destructors nest, so a 1e5-node chain is freed without recursion.
void release_stack(std::vector<std::shared_ptr<Node>>& stack) {
  while (!stack.empty()) {
    std::shared_ptr<Node> n = std::move(stack.back());
    stack.pop_back();
    if (n && n.use_count() == 1) n->steal_children(stack);
  }
}
void steal_tensor(Tensor& t, std::vector<std::shared_ptr<Node>>& out) {
  if (t.defined() && t.impl_ptr().use_count() == 1 && t.autograd_meta()) {
    auto* m = t.autograd_meta();
    if (m->grad_fn) out.push_back(std::move(m->grad_fn));
    if (m->base.defined()) steal_tensor(m->base, out);
  }
}
}  // namespace

namespace {
std::atomic<int64_t> g_live_nodes{0};
}
int64_t live_nodes() { return g_live_nodes.load(); }
Node::Node() : sequence_nr(next_sequence_nr()) { ++g_live_nodes; }

Node::~Node() {
  --g_live_nodes;
  std::vector<std::shared_ptr<Node>> stack;
  Node::steal_children(stack);
  release_stack(stack);
}

void Node::steal_children(std::vector<std::shared_ptr<Node>>& out) {
  for (auto& e : next_edges)
    if (e.fn) out.push_back(std::move(e.fn));
}

void FunctionNode::steal_children(std::vector<std::shared_ptr<Node>>& out) {
  Node::steal_children(out);
  for (auto& s : saved) {
    steal_tensor(s.data, out);
    if (s.grad_fn) out.push_back(std::move(s.grad_fn));
  }
}

Tensor FunctionNode::grad_or_zeros(const variable_list& g, size_t i) const {
  if (i < g.size() && g[i].defined()) return g[i];
  const auto& m = input_meta[i];
  return full(m.shape, Scalar(0.0), m.dtype, m.device);
}

// A saved output is a detached alias; it keeps its tangent so that backward formulas run under a
// dual level propagate tangents (forward-over-reverse, e.g. hessian's forward-mode strategy).
static void keep_tangent(const Tensor& from, const Tensor& to) {
  if (__builtin_expect(!fw::on(), 1)) return;
  Tensor tg = fw::tangent(from);
  if (tg.defined()) fw::set_tangent(to, tg);
}

SavedVariable::SavedVariable(const Tensor& t, bool output) {
  if (!t.defined()) return;
  if (t.is_inference() && !InferenceMode::is_enabled())  // Note [Inference tensors]
    AG_THROW(RuntimeError, "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
             "inference mode in computation tracked by autograd. To work around this, you can make a clone to get a "
             "normal tensor and use it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.");
  was_defined = true;
  saved_version = t.version();
  requires_grad = t.requires_grad();
  output_nr = t.output_nr();
  if (SavedTensorDefaultHooks::depth && !t.impl()->wrapped_number && SavedTensorDefaultHooks::make) {
    save_with_hooks(t, output);
    return;
  }
  if (output && t.grad_fn()) {
    is_output = true;
    weak_grad_fn = t.grad_fn();
    data = detach(t);
    keep_tangent(t, data);
  } else {
    data = t;
  }
}

// torch keeps wrapped numbers away from the hooks; everything else is handed to pack().
void SavedVariable::save_with_hooks(const Tensor& t, bool output) {
  is_output = output && t.grad_fn();
  if (is_output) weak_grad_fn = t.grad_fn();
  else grad_fn = t.grad_fn();
  if (requires_grad && !t.grad_fn() && t.autograd_meta() && t.autograd_meta()->requires_grad)
    grad_accumulator = autograd::grad_accumulator(t);
  hooks = SavedTensorDefaultHooks::make();
  hooks->pack(t);
  AG_CHECK(t.version() == saved_version,
           "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack hook cannot be "
           "modified by in-place operations as this can lead to unexpected side-effects. Please open an issue if you need "
           "to perform in-place operations on the input to a pack hook.");
}

// The tensor unpack() returned, placed back at the saved tensor's graph position. It is a fresh
// alias: the hook may hand back the very tensor it was given.
Tensor SavedVariable::unpack_with_hooks() const {
  Tensor t = detach(hooks->unpack());
  auto& m = t.ensure_autograd_meta();
  std::shared_ptr<Node> fn = is_output ? weak_grad_fn.lock() : grad_fn;
  if (fn) {
    m.grad_fn = std::move(fn);
    m.output_nr = output_nr;
    m.requires_grad = true;
  } else if (requires_grad) {
    m.requires_grad = true;
    if (grad_accumulator) m.grad_accumulator = grad_accumulator;
  }
  return t;
}

static const char* kBackwardTwice =
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if "
    "you need to access saved tensors after calling backward.";

Tensor SavedVariable::unpack(const Node* saved_for) const {
  if (released) AG_THROW(RuntimeError, kBackwardTwice);
  if (!was_defined) return Tensor();
  if (hooks) return unpack_with_hooks();  // torch checks no version through hooks
  if (data.version() != saved_version) {
    std::string which;
    std::shared_ptr<Node> fn = is_output ? weak_grad_fn.lock() : data.grad_fn();
    if (fn) which = detail::str_cat(", which is output ", output_nr, " of ", short_node_name(fn->name()), ",");
    AG_THROW(RuntimeError, "one of the variables needed for gradient computation has been modified by an inplace "
             "operation: [torch.", legacy_type_name(data.dtype()), " ", shape_str(data.sizes()), "]", which,
             " is at version ", data.version(), "; expected version ", saved_version,
             " instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
             "with torch.autograd.set_detect_anomaly(True, check_nan=False).");
  }
  if (!is_output) return data;
  Tensor t = detach(data);
  keep_tangent(data, t);
  auto& m = t.ensure_autograd_meta();
  m.requires_grad = requires_grad;
  m.grad_fn = weak_grad_fn.lock();
  m.output_nr = output_nr;
  return t;
}

AccumulateGrad::AccumulateGrad(Tensor v) : variable(std::move(v)) {
  sequence_nr = UINT64_MAX;
  input_meta.push_back({variable.sizes(), variable.dtype(), variable.device()});
}

void AccumulateGrad::steal_children(std::vector<std::shared_ptr<Node>>& out) {
  Node::steal_children(out);
}

namespace {
// Dims of t ordered by decreasing stride (size-1 dims last), and whether t is dense and
// non-overlapping: some permutation of it is contiguous.
std::vector<int64_t> stride_order(const Tensor& t) {
  std::vector<int64_t> perm(t.dim());
  for (int64_t i = 0; i < t.dim(); ++i) perm[i] = i;
  std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
    bool sa = t.sizes()[a] == 1, sb = t.sizes()[b] == 1;
    if (sa != sb) return sb;
    return t.strides()[a] > t.strides()[b];
  });
  return perm;
}
bool non_overlapping_and_dense(const Tensor& t) {
  auto perm = stride_order(t);
  int64_t expected = 1;
  for (auto it = perm.rbegin(); it != perm.rend(); ++it) {
    int64_t d = *it;
    if (t.sizes()[d] == 1) continue;
    if (t.strides()[d] != expected) return false;
    expected *= t.sizes()[d];
  }
  return true;
}
// Note [Gradient layout contract]: .grad has the strides of its variable when the variable is
// dense and non-overlapping, and is contiguous otherwise (torch's contract).
bool obeys_layout_contract(const Tensor& g, const Tensor& var) {
  if (g.numel() == 0 || !non_overlapping_and_dense(var)) return g.is_contiguous();
  for (int64_t d = 0; d < var.dim(); ++d)
    if (var.sizes()[d] != 1 && g.strides()[d] != var.strides()[d]) return false;
  return true;
}
// A copy of g laid out as the contract asks; differentiable when grad mode is on (create_graph).
Tensor clone_obey_contract(const Tensor& g, const Tensor& var) {
  if (var.numel() == 0 || !non_overlapping_and_dense(var)) return GradMode::is_enabled() ? clone(g) : clone(detach(g));
  if (var.is_contiguous() && !GradMode::is_enabled()) return clone(detach(g));
  // torch's new_empty_strided().copy_(): under create_graph .grad's grad_fn is CopyBackwards.
  auto perm = stride_order(var);
  Shape psizes;
  for (int64_t d : perm) psizes.push_back(var.sizes()[d]);
  Tensor buf = empty(psizes, g.dtype(), g.device());
  Shape strides(var.dim());
  for (size_t i = 0; i < perm.size(); ++i) strides[perm[i]] = buf.strides()[i];
  Tensor out = make_view(buf, var.sizes(), strides, 0);
  return copy_(out, GradMode::is_enabled() ? g : detach(g));
}
}  // namespace

// True when nothing but g reaches g's memory: g holds the only reference to its impl and has no
// history, and is either a plain tensor or a history-free view whose base only g holds, the
// storage shared by those two alone (e.g. mm_mat2_backward's transposed product, transposed back
// by TBackward: linear's weight gradient). Each impl holds the storage and the version counter,
// which may share one control block (Note [Fresh tensor block]).
static bool sole_owner(const Tensor& g) {
  if (g.impl_ptr().use_count() != 1) return false;
  const AutogradMeta* m = g.autograd_meta();
  if (!m) return true;
  if (!m->is_view || m->requires_grad || m->grad_fn || !m->base.defined()) return false;
  const Tensor& b = m->base;
  const AutogradMeta* bm = b.autograd_meta();
  if (b.impl_ptr().use_count() != 1 || (bm && (bm->requires_grad || bm->grad_fn || bm->is_view))) return false;
  const auto& st = g.storage();
  if (st != b.storage() || g.impl()->version != b.impl()->version) return false;
  const auto& v = g.impl()->version;
  const bool one_block = !st.owner_before(v) && !v.owner_before(st);
  return st.use_count() == (one_block ? 4 : 2);
}

// The gradient layout contract: steal an unshared incoming gradient that obeys it, add in place
// when .grad exists, and build a differentiable sum under create_graph.
void AccumulateGrad::accumulate(const Tensor& variable, Tensor grad) {
  auto& meta = variable.ensure_autograd_meta();
  Tensor& vg = meta.grad;
  if (!vg.defined()) {
    if (!GradMode::is_enabled() && sole_owner(grad) && obeys_layout_contract(grad, variable))
      vg = grad.impl()->autograd ? detach(grad) : std::move(grad);  // a stolen view drops its view history
    else
      vg = clone_obey_contract(grad, variable);
  } else if (!GradMode::is_enabled()) {
    binary_(Op::add, vg, grad);
  } else {
    vg = add(vg, grad);
  }
}

variable_list AccumulateGrad::apply(variable_list&& grads) {
  if (grads.empty() || !grads[0].defined()) return {};
  accumulate(variable, std::move(grads[0]));
  if (auto* m = variable.autograd_meta(); m && !m->post_accumulate_hooks.empty()) {
    auto hooks = m->post_accumulate_hooks;  // a hook may remove itself
    for (auto& h : hooks) h.second(variable);
  }
  return {};
}

std::shared_ptr<Node> grad_accumulator(const Tensor& leaf) {
  auto& m = leaf.ensure_autograd_meta();
  if (auto acc = m.grad_accumulator.lock()) return acc;
  auto acc = std::make_shared<AccumulateGrad>(leaf);
  m.grad_accumulator = acc;
  return acc;
}

Edge gradient_edge(const Tensor& t) {
  if (!t.defined()) return {};
  if (auto& fn = t.grad_fn()) return {fn, t.output_nr()};
  // Only a real leaf accumulates: a view made in no_grad requires grad through its base but has
  // no edge (torch's rule).
  if (t.autograd_meta() && t.autograd_meta()->requires_grad) return {grad_accumulator(t), 0};
  return {};
}

bool any_requires_grad(std::initializer_list<const Tensor*> ts) {
  for (auto* t : ts)
    if (t && t->defined() && t->requires_grad()) return true;
  return false;
}

void pack_saved_tensors(const std::vector<std::weak_ptr<FunctionNode>>& nodes) {
  if (!SavedTensorDefaultHooks::depth) return;
  for (auto& w : nodes) {
    auto node = w.lock();
    if (!node) continue;
    for (auto& sv : node->saved)
      if (sv.was_defined && !sv.hooks) sv = SavedVariable(sv.unpack(node.get()), sv.is_output);
  }
}

namespace {
thread_local NodeRecorder* t_recorder = nullptr;
}
NodeRecorder::NodeRecorder() : prev(t_recorder) { t_recorder = this; }
NodeRecorder::~NodeRecorder() { t_recorder = prev; }

static bool records_impl(const Tensor* const* ts, size_t n) {
  if (!GradMode::is_enabled() || InferenceMode::is_enabled()) return false;  // nothing is recorded in inference mode
  bool any = false;
  for (size_t i = 0; i < n; ++i) any |= ts[i] && ts[i]->defined() && ts[i]->requires_grad();
  return any;
}

bool records(std::initializer_list<const Tensor*> inputs) { return records_impl(inputs.begin(), inputs.size()); }

static std::shared_ptr<FunctionNode> make_node_impl(const char* name, const Tensor* const* ts, size_t n, BackwardFn fn) {
  if (!records_impl(ts, n)) return nullptr;
  auto node = std::make_shared<FunctionNode>(name);
  node->next_edges.reserve(n);
  for (size_t i = 0; i < n; ++i) node->next_edges.push_back(ts[i] ? gradient_edge(*ts[i]) : Edge{});
  node->fn = std::move(fn);
  if (t_recorder) t_recorder->nodes.push_back(node);
  anomaly_on_create(*node);
  return node;
}

std::shared_ptr<FunctionNode> make_node(const char* name, std::initializer_list<const Tensor*> inputs, BackwardFn fn) {
  return make_node_impl(name, inputs.begin(), inputs.size(), std::move(fn));
}

std::shared_ptr<FunctionNode> make_node(const char* name, const std::vector<Tensor>& inputs, BackwardFn fn) {
  std::vector<const Tensor*> ptrs;
  for (auto& t : inputs) ptrs.push_back(&t);
  return make_node_impl(name, ptrs.data(), ptrs.size(), std::move(fn));
}

static void set_one(const std::shared_ptr<Node>& node, Tensor& t, uint32_t nr) {
  auto& m = t.ensure_autograd_meta();
  m.requires_grad = is_floating(t.dtype());
  m.grad_fn = m.requires_grad ? node : nullptr;
  m.output_nr = nr;
  node->input_meta.push_back({t.sizes(), t.dtype(), t.device()});
}

void set_history(const std::shared_ptr<Node>& node, std::initializer_list<Tensor*> outputs) {
  node->input_meta.reserve(outputs.size());
  uint32_t nr = 0;
  for (Tensor* t : outputs) set_one(node, *t, nr++);
}

void set_history(const std::shared_ptr<Node>& node, std::vector<Tensor>& outputs) {
  uint32_t nr = 0;
  for (Tensor& t : outputs) set_one(node, t, nr++);
}

}  // namespace ampgrad::autograd
