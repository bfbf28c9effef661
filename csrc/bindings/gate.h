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
  std::vector<std::pair<py::handle*, Tensor*>> handles;
  std::vector<py::object> keep;     // the cast tensors the handles now point at
  void add(py::handle& h) {
    if (!is_tensor(h)) return;
    from_handles.push_back(h.cast<Tensor>());
    ts.push_back(&from_handles.back());
    handles.push_back({&h, &from_handles.back()});
  }
  void add(py::object& h) { add(static_cast<py::handle&>(h)); }
  void cast(Op op) {
    std::vector<TensorImpl*> before;
    for (auto& [h, t] : handles) before.push_back(t->impl());
    amp::GateArgs::cast(op);
    for (size_t i = 0; i < handles.size(); ++i) {
      auto [h, t] = handles[i];
      if (t->impl() == before[i]) continue;
      keep.push_back(py::cast(*t));
      *h = keep.back();
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
