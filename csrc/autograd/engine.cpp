// The backward engine: count dependencies from the roots, run ready nodes in decreasing
// sequence_nr on the calling thread, sum the gradients that meet at one input, and fit each
// gradient to the shape and dtype its input had in forward.
#include "autograd/engine.h"
#include <algorithm>
#include <optional>
#include <queue>
#include <unordered_map>
#include <unordered_set>
#include "autograd/grad_mode.h"
#include "autograd/profiler.h"
#include "ops/ops.h"

namespace ampgrad::autograd {

void (*anomaly_report_hook)(const Node&) = nullptr;

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

// A backward node's input shapes, as torch lists them: its incoming gradients ([] when undefined).
profiler::Shapes grad_shapes(const variable_list& grads) {
  profiler::Shapes s;
  for (const auto& g : grads) s.push_back(g.defined() ? g.sizes() : Shape{});
  return s;
}

}  // namespace

variable_list run_backward(const variable_list& roots, const variable_list& grad_outputs, bool keep_graph,
                           bool create_graph, const variable_list& inputs, bool allow_unused,
                           bool accumulate_into_inputs) {
  AutoGradMode mode(create_graph);
  // Root edges and their seeds.
  std::vector<Edge> root_edges;
  for (size_t i = 0; i < roots.size(); ++i) {
    Edge e = gradient_edge(roots[i]);
    AG_CHECK(e.valid(), "element ", i, " of tensors does not require grad and does not have a grad_fn");
    root_edges.push_back(std::move(e));
  }
  // Capture points for autograd.grad / backward(inputs=...).
  std::unordered_map<Node*, std::vector<std::pair<uint32_t, size_t>>> captures;
  variable_list captured(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    AG_CHECK(t.requires_grad(), "One of the differentiated Tensors does not require grad");
    Edge e = gradient_edge(t);
    if (e.valid()) captures[e.fn.get()].push_back({e.input_nr, i});  // else: never reached (unused)
  }
  const bool capture_mode = !inputs.empty();

  // Dependencies, and in capture mode which nodes lead to a capture point.
  std::unordered_map<Node*, int> deps;
  std::unordered_set<Node*> seen;
  std::vector<Node*> order;  // DFS post-order
  {
    std::vector<std::pair<Node*, size_t>> stack;
    for (auto& e : root_edges)
      if (e.fn && seen.insert(e.fn.get()).second) stack.push_back({e.fn.get(), 0});
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
  std::unordered_set<Node*> needed;
  if (capture_mode) {
    for (Node* n : order) {  // children come before parents in post-order
      bool need = captures.count(n) && accumulate_into_inputs && dynamic_cast<AccumulateGrad*>(n);
      for (auto& e : n->next_edges)
        if (e.fn && (needed.count(e.fn.get()) || captures.count(e.fn.get()))) need = true;
      if (need) needed.insert(n);
    }
  }

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
  while (!ready.empty()) {
    Node* n = ready.top();
    ready.pop();
    if (!queued.insert(n).second) continue;
    std::shared_ptr<Node> hold = keep_alive[n];
    variable_list grads = std::move(buffers[n]);
    buffers.erase(n);
    grads.resize(n->num_outputs());
    // torch's two ranges per node: the engine's evaluation (hooks included) and the node's apply().
    std::optional<profiler::RecordScope> eval_scope;
    if (profiler::enabled())
      eval_scope.emplace("autograd::engine::evaluate_function: " + n->name(), profiler::Kind::Backward,
                         static_cast<int64_t>(n->sequence_nr));
    // Tensor hooks first (they may replace the gradient), then retain_grad. Hooks run from a
    // copy of the list: a hook may remove itself (or add hooks) while it runs.
    if (!n->tensor_pre_hooks.empty()) {
      auto hooks = n->tensor_pre_hooks;
      for (auto& [id, h] : hooks) {
        auto& g = grads[h.first];
        if (!g.defined()) continue;
        Tensor r = h.second(g);
        if (r.defined()) g = r;
      }
    }
    if (auto* acc = dynamic_cast<AccumulateGrad*>(n))
      if (auto* m = acc->variable.autograd_meta(); m && !m->leaf_hooks.empty()) {
        auto hooks = m->leaf_hooks;
        for (auto& [id, h] : hooks)
          if (grads[0].defined()) { Tensor r = h(grads[0]); if (r.defined()) grads[0] = r; }
      }
    for (auto& [nr, wt] : n->retains_grad) {
      auto impl = wt.lock();
      if (!impl || !grads[nr].defined()) continue;
      Tensor t(impl);
      Tensor& tg = t.mutable_grad();
      tg = tg.defined() ? add(tg, grads[nr]) : (create_graph ? grads[nr] : clone(detach(grads[nr])));
    }
    if (capture_mode) {
      auto it = captures.find(n);
      if (it != captures.end())
        for (auto& [nr, idx] : it->second)
          if (grads[nr].defined()) { Tensor& c = captured[idx]; c = c.defined() ? add(c, grads[nr]) : grads[nr]; }
      if (!needed.count(n)) {  // nothing below leads to a capture: don't run, but release deps
        for (auto& e : n->next_edges)
          if (e.fn && --deps[e.fn.get()] == 0) { keep_alive[e.fn.get()] = e.fn; ready.push(e.fn.get()); }
        if (!keep_graph) n->release_variables();
        keep_alive.erase(n);
        continue;
      }
    }
    bool any_defined = false;
    for (auto& g : grads) any_defined |= g.defined();
    variable_list outs;
    if (any_defined) {
      if (!n->pre_hooks.empty()) {
        auto hooks = n->pre_hooks;
        for (auto& [id, h] : hooks) { auto r = h(grads); if (!r.empty()) grads = r; }
      }
      variable_list in_grads = n->post_hooks.empty() ? variable_list() : grads;
      try {
        std::optional<profiler::RecordScope> apply_scope;
        if (profiler::enabled()) {
          apply_scope.emplace(n->name(), profiler::Kind::Backward, static_cast<int64_t>(n->sequence_nr));
          if (profiler::config().record_shapes)  // Op::kCount: no FLOP estimate for a node
            profiler::set_shapes(apply_scope->handle, Op::kCount, grad_shapes(grads));
        }
        outs = n->apply(std::move(grads));
      } catch (...) {
        if (anomaly_report_hook) anomaly_report_hook(*n);
        throw;
      }
      if (!n->post_hooks.empty()) {
        auto hooks = n->post_hooks;
        for (auto& [id, h] : hooks) { auto r = h(outs, in_grads); if (!r.empty()) outs = r; }
      }
      if (outs.size() != n->next_edges.size() && !dynamic_cast<AccumulateGrad*>(n))
        AG_THROW(RuntimeError, "function ", n->name(), " returned an incorrect number of gradients (expected ",
                 n->next_edges.size(), ", got ", outs.size(), ")");
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
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (accumulate_into_inputs) {
        if (captured[i].defined() && !dynamic_cast<AccumulateGrad*>(gradient_edge(inputs[i]).fn.get()))
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
