// Graph nodes: Node{next_edges, saved tensors, sequence_nr}. FunctionNode runs a backward closure
// written with ampgrad's own ops, so create_graph=True differentiates through it for free.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>
#include "autograd/autograd_meta.h"
#include "core/tensor.h"

namespace ampgrad::autograd {

struct Node;
using variable_list = std::vector<Tensor>;

struct Edge {
  std::shared_ptr<Node> fn;
  uint32_t input_nr = 0;
  bool valid() const { return fn != nullptr; }
};

// What a node's incoming gradient must look like: the engine reduces broadcast gradients and
// casts dtypes to this (Note [Gradient shape and dtype]).
struct InputMeta {
  Shape shape;
  ScalarType dtype;
  Device device;
};

uint64_t next_sequence_nr();
int64_t live_nodes();  // graph nodes alive now (leak tests)
// A node's name as torch 2.13 prints it in error messages: MulBackward0 -> Mul, TBackward1 -> T1.
std::string short_node_name(std::string name);

struct Node : std::enable_shared_from_this<Node> {
  std::vector<Edge> next_edges;
  std::vector<InputMeta> input_meta;
  uint64_t sequence_nr;
  std::vector<std::pair<int, std::pair<int, TensorHook>>> tensor_pre_hooks;  // (id, (output_nr, hook))
  std::vector<std::pair<int, std::weak_ptr<TensorImpl>>> retains_grad;      // (output_nr, tensor)
  std::vector<std::pair<int, std::function<variable_list(const variable_list&)>>> pre_hooks;
  std::vector<std::pair<int, std::function<variable_list(const variable_list&, const variable_list&)>>> post_hooks;
  int next_hook_id = 0;
  // grad_fn.metadata: a Python dict made on first use (python_function.cpp); anomaly mode keeps
  // the forward traceback in it, as torch does.
  std::shared_ptr<void> metadata;

  Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  virtual ~Node();
  virtual variable_list apply(variable_list&& grads) = 0;
  virtual std::string name() const = 0;
  virtual void release_variables() {}
  // Hands over everything this node keeps alive so destruction can be iterative (Note [Deep graphs]).
  virtual void steal_children(std::vector<std::shared_ptr<Node>>& out);
  size_t num_outputs() const { return input_meta.size(); }
  size_t num_inputs() const { return next_edges.size(); }
  // Whether the running backward wants the gradient of input i (torch's task_should_compute_output): the
  // edge exists and, when autograd.grad / backward(inputs=...) limits the pass, leads to what it asked
  // for (a convolution's weight gradient is not computed for autograd.grad(y, x)).
  bool needs_input_grad(size_t i) const;
};

// Pack/unpack hooks of one saved tensor (autograd.graph.saved_tensors_hooks); the Python side
// implements them. pack() runs when the tensor is saved, unpack() when backward reads it.
struct SavedVariableHooks {
  virtual ~SavedVariableHooks() = default;
  virtual void pack(const Tensor& t) = 0;
  virtual Tensor unpack() const = 0;
};
// Note [Default saved tensor hooks]: `depth` counts the hook pairs pushed on this thread (Python
// keeps the pairs); while it is non-zero every SavedVariable is packed through `make()`'s hooks
// instead of holding the tensor. Zero: one thread-local check per saved tensor.
struct SavedTensorDefaultHooks {
  static inline thread_local int depth = 0;
  static inline std::unique_ptr<SavedVariableHooks> (*make)() = nullptr;
};
// Holds packing back while an in-place op computes its result: what the nodes made meanwhile save
// is packed afterwards by pack_saved_tensors, once aliases of self have been swapped for clones
// (Note [Saved self in in-place ops]).
struct DeferSavedTensorHooks {
  int prev;
  DeferSavedTensorHooks() : prev(SavedTensorDefaultHooks::depth) { SavedTensorDefaultHooks::depth = 0; }
  ~DeferSavedTensorHooks() { SavedTensorDefaultHooks::depth = prev; }
};

// A tensor saved for backward: the version it had, and for outputs of the node itself a weak
// reference to the node (a strong one would be a cycle). With default hooks the tensor lives in
// the hooks' packed value and the graph position is kept here (grad_fn / grad_accumulator).
struct SavedVariable {
  Tensor data;
  std::shared_ptr<SavedVariableHooks> hooks;
  std::shared_ptr<Node> grad_fn;  // hooks, non-output: the tensor's grad_fn
  uint32_t saved_version = 0;
  bool is_output = false;
  bool was_defined = false;
  bool released = false;
  bool requires_grad = false;
  bool is_leaf = false;
  uint32_t output_nr = 0;
  std::weak_ptr<Node> weak_grad_fn;
  std::shared_ptr<Node> grad_accumulator;  // leaves: keep .grad accumulation identity
  SavedVariable() = default;
  SavedVariable(const Tensor& t, bool is_output);
  Tensor unpack(const Node* saved_for) const;
  void save_with_hooks(const Tensor& t, bool output);
  Tensor unpack_with_hooks() const;
  void reset() { data = Tensor(); hooks.reset(); grad_fn.reset(); released = true; }
};

struct FunctionNode;
using BackwardFn = std::function<variable_list(FunctionNode&, const variable_list&)>;

struct FunctionNode : Node {
  const char* name_;
  std::vector<SavedVariable> saved;
  BackwardFn fn;
  FunctionNode(const char* name) : name_(name) {}
  variable_list apply(variable_list&& grads) override { return fn(*this, grads); }
  std::string name() const override { return name_; }
  void release_variables() override { for (auto& s : saved) s.reset(); }
  void steal_children(std::vector<std::shared_ptr<Node>>& out) override;
  void save(const Tensor& t, bool is_output = false) { saved.emplace_back(t, is_output); }
  Tensor get(size_t i) const { return i < saved.size() ? saved[i].unpack(this) : Tensor(); }
  // The gradient for output i, or zeros of its shape when it was not defined.
  Tensor grad_or_zeros(const variable_list& g, size_t i) const;
};

struct AccumulateGrad : Node {
  Tensor variable;
  explicit AccumulateGrad(Tensor v);
  variable_list apply(variable_list&& grads) override;
  std::string name() const override { return "torch::autograd::AccumulateGrad"; }  // torch's name()
  void steal_children(std::vector<std::shared_ptr<Node>>& out) override;
  static void accumulate(const Tensor& variable, Tensor grad);
};

// Collects (weakly) the FunctionNodes made on this thread while it lives; nests. Used by
// apply_inplace (Note [Saved self in in-place ops]).
struct NodeRecorder {
  std::vector<std::weak_ptr<FunctionNode>> nodes;
  NodeRecorder* prev;
  NodeRecorder();
  ~NodeRecorder();
  NodeRecorder(const NodeRecorder&) = delete;
  NodeRecorder& operator=(const NodeRecorder&) = delete;
};

// Packs, with the default hooks when some are active, the tensors these nodes saved unpacked.
void pack_saved_tensors(const std::vector<std::weak_ptr<FunctionNode>>& nodes);

// Recording: make_node returns nullptr unless grad mode is on and some input requires grad.
std::shared_ptr<FunctionNode> make_node(const char* name, std::initializer_list<const Tensor*> inputs, BackwardFn fn);
std::shared_ptr<FunctionNode> make_node(const char* name, const std::vector<Tensor>& inputs, BackwardFn fn);
void set_history(const std::shared_ptr<Node>& node, std::initializer_list<Tensor*> outputs);
void set_history(const std::shared_ptr<Node>& node, std::vector<Tensor>& outputs);
Edge gradient_edge(const Tensor& t);
std::shared_ptr<Node> grad_accumulator(const Tensor& leaf);
bool any_requires_grad(std::initializer_list<const Tensor*> ts);
// Whether make_node would record for these inputs: lets an op skip building a backward closure
// whose captures cost allocations.
bool records(std::initializer_list<const Tensor*> inputs);

}  // namespace ampgrad::autograd
