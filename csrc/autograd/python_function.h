// PyNode: the graph node of a Python autograd.Function (the only place the engine calls Python).
#pragma once
#include "bindings/convert.h"  // Tensor caster (must be visible wherever Tensor is cast)
#include "autograd/node.h"

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

}  // namespace ampgrad::autograd
