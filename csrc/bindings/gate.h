// The autocast gate of the bindings (Note [Autocast gate]): gated<Op::x>(f) wraps a binding's
// function so that a call casts per the op row's policy and then runs with autocast excluded; for
// an op without a policy it is `f` itself (no cost). The argument walk is generic, as torch's
// autocast WrapFunction: the C++ walk of amp/gate.h plus Python objects that hold a tensor.
#pragma once
#include <deque>
#include "amp/gate.h"
#include "bindings/convert.h"

namespace ampgrad::bind {

struct PyGateArgs : amp::GateArgs {
  using amp::GateArgs::add;
  std::deque<Tensor> from_handles;  // stable addresses
  // The Python slots of the tensors: a borrowed py::handle is rebound to the cast tensor (which `keep`
  // holds for the call); an owning py::object is assigned it (its old reference released, the new one
  // taken). A raw handle assignment into a py::object slot leaked the original tensor and left the cast
  // one a reference short: freed while still in use (the @engine_op gate under autocast).
  std::vector<std::pair<py::handle*, Tensor*>> handles;
  std::vector<std::pair<py::object*, Tensor*>> objects;
  std::vector<py::object> keep;     // the cast tensors the handles now point at
  Tensor* take(py::handle h) {
    from_handles.push_back(h.cast<Tensor>());
    ts.push_back(&from_handles.back());
    return &from_handles.back();
  }
  void add(py::handle& h) {
    if (is_tensor(h)) handles.push_back({&h, take(h)});
  }
  void add(py::object& h) {
    if (is_tensor(h)) objects.push_back({&h, take(h)});
  }
  void cast(Op op) {
    std::vector<TensorImpl*> before_h, before_o;
    for (auto& [h, t] : handles) before_h.push_back(t->impl());
    for (auto& [o, t] : objects) before_o.push_back(t->impl());
    amp::GateArgs::cast(op);
    for (size_t i = 0; i < handles.size(); ++i) {
      auto [h, t] = handles[i];
      if (t->impl() == before_h[i]) continue;
      keep.push_back(py::cast(*t));
      *h = keep.back();
    }
    for (size_t i = 0; i < objects.size(); ++i) {
      auto [o, t] = objects[i];
      if (t->impl() != before_o[i]) *o = py::cast(*t);
    }
  }
};

template <Op op, typename F>
auto gated(F f) { return amp::gated<op, PyGateArgs>(std::move(f)); }

// Registers `f`, behind op's gate, as ampgrad.<name>(input, ...) and Tensor.<name>(self, ...).
template <Op op, typename Cls, typename F, typename... Extra>
void def_op(py::module_& m, Cls& cls, const char* name, F&& f, const Extra&... extra) {
  auto g = gated<op>(std::forward<F>(f));
  m.def(name, g, py::arg("input"), extra...);
  cls.def(name, g, extra...);
}

}  // namespace ampgrad::bind
