// The backward engine: count dependencies from the roots, run ready nodes in decreasing
// sequence_nr on the calling thread, sum the gradients that meet at one input, and fit each
// gradient to the shape and dtype its input had in forward.
#include "autograd/engine.h"
#include <algorithm>
#include <atomic>
#include <optional>
#include <queue>
#include <unordered_map>
#include <unordered_set>
#include "autograd/anomaly.h"
#include "autograd/grad_mode.h"
#include "autograd/profiler.h"
#include "ops/ops.h"

namespace ampgrad::autograd {

namespace {

struct ReadyCmp {
  bool operator()(const Node* a, const Node* b) const { return a->sequence_nr < b->sequence_nr; }
};

// Note [Gradient shape and dtype]: broadcasting is reduced here, once, for every op: a formula
// may return a gradient of the broadcast shape and the engine sums it to the input's shape.
Tensor fit_gradient(Tensor g, const InputMeta& m, const Node& producer, size_t index) {
  if (!g.defined()) return g;
  if (g.sizes() != m.shape) {
    bool expandable = g.dim() >= static_cast<int64_t>(m.shape.size());
    if (expandable) {
      size_t off = g.dim() - m.shape.size();
      for (size_t i = 0; i < m.shape.size(); ++i)
        expandable &= m.shape[i] == g.sizes()[off + i] || m.shape[i] == 1;
    }
    if (!expandable)
      AG_THROW(RuntimeError, "Function ", producer.name(), " returned an invalid gradient at index ", index,
               " - got ", shape_str(g.sizes()), " but expected shape compatible with ", shape_str(m.shape));
    g = sum_to(g, m.shape);
  }
  if (g.dtype() != m.dtype) g = to_dtype(g, m.dtype);
  return g;
}

void accumulate_into(Tensor& slot, Tensor g) {
  if (!g.defined()) return;
  if (!slot.defined()) slot = std::move(g);
  else if (!GradMode::is_enabled() && slot.impl_ptr().use_count() == 1 && !slot.impl()->autograd &&
           slot.sizes() == g.sizes() && slot.is_contiguous())
    binary_(Op::add, slot, g);  // in place when nobody else can see the buffer
  else
    slot = add(slot, g);
}

}  // namespace

namespace {

// Note [Graph task]: what torch's _current_graph_task_id / _will_engine_execute_node read (used by
// register_multi_grad_hook); nested backward calls (from a hook) stack.
struct GraphTask {
  int64_t id;
  const std::unordered_set<Node*>& in_graph;
  const std::unordered_set<Node*>& needed;
  const std::unordered_map<Node*, std::vector<std::pair<uint32_t, size_t>>>& captures;
  bool capture_mode;
  bool accumulate;
  GraphTask* prev = nullptr;
};
thread_local GraphTask* t_task = nullptr;
std::atomic<int64_t> g_next_task_id{0};

struct TaskGuard {
  GraphTask& task;
  explicit TaskGuard(GraphTask& t) : task(t) { task.prev = t_task; t_task = &task; }
  ~TaskGuard() { t_task = task.prev; }
};

bool any_defined(const variable_list& v) {
  for (auto& g : v)
    if (g.defined()) return true;
  return false;
}

// Tensor hooks first (they may replace the gradient), then retain_grad: torch runs these even for
// a node it only captures. Hooks run from a copy of the list: a hook may remove itself.
void call_tensor_pre_hooks(Node& n, variable_list& grads, bool create_graph) {
  if (!n.tensor_pre_hooks.empty()) {
    auto hooks = n.tensor_pre_hooks;
    for (auto& [id, h] : hooks) {
      auto& g = grads[h.first];
      if (!g.defined()) continue;
      Tensor r = h.second(g);
      if (r.defined()) g = r;
    }
  }
  if (auto* acc = dynamic_cast<AccumulateGrad*>(&n))
    if (auto* m = acc->variable.autograd_meta(); m && !m->leaf_hooks.empty()) {
      auto hooks = m->leaf_hooks;
      for (auto& [id, h] : hooks)
        if (grads[0].defined()) { Tensor r = h(grads[0]); if (r.defined()) grads[0] = r; }
    }
  for (auto& [nr, wt] : n.retains_grad) {
    auto impl = wt.lock();
    if (!impl || !grads[nr].defined()) continue;
    Tensor t(impl);
    Tensor& tg = t.mutable_grad();
    tg = tg.defined() ? add(tg, grads[nr]) : (create_graph ? grads[nr] : clone(detach(grads[nr])));
  }
}

// Node pre-hooks, the node itself, its post-hooks and anomaly mode's NaN check.
// A backward node's input shapes, as torch lists them: its incoming gradients ([] when undefined).
profiler::Shapes grad_shapes(const variable_list& grads) {
  profiler::Shapes s;
  for (const auto& g : grads) s.push_back(g.defined() ? g.sizes() : Shape{});
  return s;
}

variable_list call_function(const std::shared_ptr<Node>& node, variable_list grads) {
  Node& n = *node;
  if (!any_defined(grads)) return {};
  if (!n.pre_hooks.empty()) {
    auto hooks = n.pre_hooks;
    for (auto& [id, h] : hooks) { auto r = h(grads); if (!r.empty()) grads = std::move(r); }
    if (!any_defined(grads)) return {};
  }
  variable_list in_grads = n.post_hooks.empty() ? variable_list() : grads;
  variable_list outs;
  std::optional<profiler::RecordScope> apply_scope;  // torch's range around the node's apply()
  if (profiler::enabled()) {
    apply_scope.emplace(n.name(), profiler::Kind::Backward, static_cast<int64_t>(n.sequence_nr));
    if (profiler::config().record_shapes)  // Op::kCount: no FLOP estimate for a node
      profiler::set_shapes(apply_scope->handle, Op::kCount, grad_shapes(grads));
  }
  if (AnomalyMode::is_enabled()) {
    AnomalyParentGuard parent(node);
    outs = n.apply(std::move(grads));
  } else {
    outs = n.apply(std::move(grads));
  }
  apply_scope.reset();  // the range covers apply() alone, as torch's does: not the hooks or checks below
  if (outs.size() != n.next_edges.size() && !dynamic_cast<AccumulateGrad*>(&n))
    AG_THROW(RuntimeError, "function ", n.name(), " returned an incorrect number of gradients (expected ",
             n.next_edges.size(), ", got ", outs.size(), ")");
  if (!n.post_hooks.empty()) {
    auto hooks = n.post_hooks;
    for (auto& [id, h] : hooks) { auto r = h(outs, in_grads); if (!r.empty()) outs = std::move(r); }
  }
  if (AnomalyMode::is_enabled()) anomaly_check_nan(n, outs);
  return outs;
}

}  // namespace

int64_t current_graph_task_id() { return t_task ? t_task->id : -1; }

bool Node::needs_input_grad(size_t i) const {
  if (i >= next_edges.size() || !next_edges[i].valid()) return false;
  // A node outside the running pass (one made and run while it runs: forward AD's tangent of a gradient,
  // a nested backward) computes all it can.
  if (!t_task || !t_task->capture_mode || !t_task->in_graph.count(const_cast<Node*>(this))) return true;
  Node* n = next_edges[i].fn.get();
  return t_task->needed.count(n) > 0 || t_task->captures.count(n) > 0;
}

bool will_engine_execute_node(const Node* node) {
  AG_CHECK(t_task, "_get_should_execute_nodes should only be called during the backward pass");
  Node* n = const_cast<Node*>(node);
  if (!t_task->in_graph.count(n)) return false;
  if (!t_task->capture_mode) return true;
  bool captured = t_task->captures.count(n) > 0;
  if (!t_task->needed.count(n) && !captured) return false;
  AG_CHECK(!(captured && !t_task->accumulate && dynamic_cast<AccumulateGrad*>(n)),
           "A leaf node was passed to _will_engine_execute_node but we are currently running autograd.grad(). This "
           "is currently not supported.");
  return true;
}

variable_list run_backward(const std::vector<Edge>& root_edges, const variable_list& grad_outputs, bool keep_graph,
                           bool create_graph, const variable_list& inputs, const std::vector<Edge>& input_edges,
                           bool allow_unused, bool accumulate_into_inputs) {
  AutoGradMode mode(create_graph);
  // Capture points for autograd.grad / backward(inputs=...).
  std::unordered_map<Node*, std::vector<std::pair<uint32_t, size_t>>> captures;
  const size_t n_inputs = std::max(inputs.size(), input_edges.size());
  variable_list captured(n_inputs);
  for (size_t i = 0; i < n_inputs; ++i) {
    Edge e;
    if (i < inputs.size() && inputs[i].defined()) {
      AG_CHECK(inputs[i].requires_grad(), "One of the differentiated Tensors does not require grad");
      e = gradient_edge(inputs[i]);
    } else {
      e = input_edges[i];
    }
    if (e.valid()) captures[e.fn.get()].push_back({e.input_nr, i});  // else: never reached (unused)
  }
  const bool capture_mode = n_inputs > 0;

  // Dependencies, and in capture mode which nodes lead to a capture point.
  std::unordered_map<Node*, int> deps;
  std::unordered_set<Node*> seen;
  std::vector<Node*> order;  // DFS post-order
  {
    // One root at a time: a root reachable from another root must be finished (its subgraph in
    // `order`) before the root above it, or `order` is no post-order (autograd.grad([z, -z], ...) ran
    // -z's node as "not needed" and lost its gradient).
    std::vector<std::pair<Node*, size_t>> stack;
    for (auto& root : root_edges) {
      if (!root.fn || !seen.insert(root.fn.get()).second) continue;
      stack.push_back({root.fn.get(), 0});
      while (!stack.empty()) {
        auto& [n, i] = stack.back();
        if (i < n->next_edges.size()) {
          Node* c = n->next_edges[i++].fn.get();
          if (!c) continue;
          deps[c]++;
          if (seen.insert(c).second) stack.push_back({c, 0});
        } else {
          order.push_back(n);
          stack.pop_back();
        }
      }
    }
  }
  std::unordered_set<Node*> needed;
  if (capture_mode) {
    for (Node* n : order) {  // children come before parents in post-order
      bool need = captures.count(n) && accumulate_into_inputs && dynamic_cast<AccumulateGrad*>(n);
      for (auto& e : n->next_edges)
        if (e.fn && (needed.count(e.fn.get()) || captures.count(e.fn.get()))) need = true;
      if (need) needed.insert(n);
    }
  }
  GraphTask task{g_next_task_id++, seen, needed, captures, capture_mode, accumulate_into_inputs};
  TaskGuard task_guard(task);

  std::unordered_map<Node*, variable_list> buffers;
  std::priority_queue<Node*, std::vector<Node*>, ReadyCmp> ready;
  std::unordered_map<Node*, std::shared_ptr<Node>> keep_alive;
  for (size_t i = 0; i < root_edges.size(); ++i) {
    auto& e = root_edges[i];
    Node* n = e.fn.get();
    keep_alive[n] = e.fn;
    auto& buf = buffers[n];
    buf.resize(n->num_outputs());
    Tensor g = i < grad_outputs.size() ? grad_outputs[i] : Tensor();
    accumulate_into(buf[e.input_nr], fit_gradient(g, n->input_meta[e.input_nr], *n, 0));
  }
  for (auto& e : root_edges)
    if (deps[e.fn.get()] == 0 && keep_alive.count(e.fn.get())) { ready.push(e.fn.get()); keep_alive[e.fn.get()] = e.fn; }
  std::unordered_set<Node*> queued;
  auto release_deps = [&](Node* n) {
    for (auto& e : n->next_edges)
      if (e.fn && --deps[e.fn.get()] == 0) { keep_alive[e.fn.get()] = e.fn; ready.push(e.fn.get()); }
    if (!keep_graph) n->release_variables();
    keep_alive.erase(n);
  };
  while (!ready.empty()) {
    Node* n = ready.top();
    ready.pop();
    if (!queued.insert(n).second) continue;
    std::shared_ptr<Node> hold = keep_alive[n];
    variable_list grads = std::move(buffers[n]);
    buffers.erase(n);
    grads.resize(n->num_outputs());
    auto cap = capture_mode ? captures.find(n) : captures.end();
    if (capture_mode && cap == captures.end() && !needed.count(n)) {  // torch never runs it, hooks included
      release_deps(n);
      continue;
    }
    // torch's range around the engine's evaluation of a node, hooks included.
    std::optional<profiler::RecordScope> eval_scope;
    if (profiler::enabled())
      eval_scope.emplace("autograd::engine::evaluate_function: " + n->name(), profiler::Kind::Backward,
                         static_cast<int64_t>(n->sequence_nr));
    variable_list outs;
    try {
      call_tensor_pre_hooks(*n, grads, create_graph);
      if (cap != captures.end())
        for (auto& [nr, idx] : cap->second)
          if (grads[nr].defined()) { Tensor& c = captured[idx]; c = c.defined() ? add(c, grads[nr]) : grads[nr]; }
      if (capture_mode && !needed.count(n)) {  // a capture point with nothing needed below it
        release_deps(n);
        continue;
      }
      outs = call_function(hold, std::move(grads));
    } catch (...) {
      anomaly_report(*n);  // torch: the failing node's forward trace, then the error
      throw;
    }
    if (!keep_graph) n->release_variables();
    for (size_t i = 0; i < n->next_edges.size(); ++i) {
      const Edge& e = n->next_edges[i];
      if (!e.fn) continue;
      Node* c = e.fn.get();
      if (i < outs.size() && outs[i].defined()) {
        auto& buf = buffers[c];
        buf.resize(c->num_outputs());
        accumulate_into(buf[e.input_nr], fit_gradient(std::move(outs[i]), c->input_meta[e.input_nr], *n, i));
      }
      if (--deps[c] == 0) {
        keep_alive[c] = e.fn;
        ready.push(c);
      }
    }
    keep_alive.erase(n);
  }

  if (capture_mode) {
    for (size_t i = 0; i < n_inputs; ++i) {
      const bool is_tensor = i < inputs.size() && inputs[i].defined();
      if (accumulate_into_inputs) {
        if (is_tensor && captured[i].defined() && !dynamic_cast<AccumulateGrad*>(gradient_edge(inputs[i]).fn.get()))
          AccumulateGrad::accumulate(inputs[i], captured[i]);
        continue;
      }
      if (!captured[i].defined() && !allow_unused)
        AG_THROW(RuntimeError, "The differentiated Tensor at index ", i, " appears to not have been used in the graph. "
                 "Set allow_unused=True if this is the desired behavior.");
    }
  }
  return captured;
}

}  // namespace ampgrad::autograd
