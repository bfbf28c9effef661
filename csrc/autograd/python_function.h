// PyNode: the graph node of a Python autograd.Function (the only place the engine calls Python).
#pragma once
#include "bindings/convert.h"  // Tensor caster (must be visible wherever Tensor is cast)
#include "autograd/node.h"
#include <optional>

namespace ampgrad::autograd {

// Tensors a Function saved with ctx.save_for_backward; shared by the ctx and the node so the
// node can release them after backward (Note [Saved tensors of a Function]).
struct SavedList {
  std::vector<SavedVariable> vars;
  const Node* owner = nullptr;
  bool released = false;
  std::vector<Tensor> unpack() const;
};

struct PyNode : Node {
  pybind11::object ctx;
  pybind11::object backward_fn;
  std::shared_ptr<SavedList> saved;
  std::string name_;
  bool materialize_grads = true;
  std::vector<bool> is_tensor_input;
  ~PyNode() override;
  variable_list apply(variable_list&& grads) override;
  std::string name() const override { return name_; }
  void release_variables() override;
  void steal_children(std::vector<std::shared_ptr<Node>>& out) override;
};

// grad_fn.metadata: the node's Python dict, made on first use.
pybind11::dict node_metadata(Node& node);

// autograd.graph.saved_tensors_hooks: the thread's stack of (pack, unpack) pairs
// (Note [Default saved tensor hooks]) and disable_saved_tensors_hooks' error message.
void push_saved_tensors_hooks(pybind11::object pack, pybind11::object unpack);
void pop_saved_tensors_hooks();
void disable_saved_tensors_hooks(const std::string& message);
void enable_saved_tensors_hooks();
std::optional<std::string> saved_tensors_hooks_disabled_message();

// allow_mutation_on_saved_tensors: fn(tensor) runs, with grad mode off, before each in-place
// write (Note [Mutation hook]); None removes it.
void set_mutation_hook(pybind11::object fn);

// Installs the Python side of anomaly mode and of saved tensor hooks into the engine's seams.
void install_python_hooks();

}  // namespace ampgrad::autograd
