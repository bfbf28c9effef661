// PyNode: runs a Function's Python backward inside the engine; Python exceptions propagate to
// the caller of backward() with their type and traceback (pybind11::error_already_set).
#include "autograd/python_function.h"
#include "bindings/convert.h"  // the Tensor caster: every TU that casts Tensor must see it
#include "ops/ops.h"

namespace py = pybind11;

namespace ampgrad::autograd {

// Note [Saved tensors of a Function]: ctx.saved_tensors unpacks through SavedVariable, so a
// tensor modified in place after being saved raises torch's version error, and a second backward
// without retain_graph=True raises torch's "backward through the graph a second time" error.
std::vector<Tensor> SavedList::unpack() const {
  if (released)
    AG_THROW(RuntimeError, "Trying to backward through the graph a second time (or directly access saved tensors after they "
             "have already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
             "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if "
             "you need to access saved tensors after calling backward.");
  std::vector<Tensor> out;
  for (auto& v : vars) out.push_back(v.unpack(owner));
  return out;
}

PyNode::~PyNode() {
  py::gil_scoped_acquire gil;
  ctx = py::object();
  backward_fn = py::object();
}

void PyNode::release_variables() {
  if (saved) {
    for (auto& v : saved->vars) v.reset();
    saved->released = true;
  }
}

void PyNode::steal_children(std::vector<std::shared_ptr<Node>>& out) { Node::steal_children(out); }

variable_list PyNode::apply(variable_list&& grads) {
  py::gil_scoped_acquire gil;
  py::tuple args(grads.size() + 1);
  args[0] = ctx;
  for (size_t i = 0; i < grads.size(); ++i) {
    Tensor g = grads[i];
    if (input_meta[i].dtype == ScalarType::Undefined) { args[i + 1] = py::none(); continue; }
    if (!g.defined() && materialize_grads) {
      const auto& m = input_meta[i];
      g = full(m.shape, Scalar(0.0), m.dtype, m.device);
    }
    args[i + 1] = g.defined() ? py::cast(g) : py::none();
  }
  py::object r = backward_fn(*args);
  py::tuple res = py::isinstance<py::tuple>(r) ? r.cast<py::tuple>() : py::make_tuple(r);
  const size_t n = is_tensor_input.size();
  if (res.size() != n) {
    // Extra trailing Nones are allowed, as torch does.
    bool extra_none = res.size() > n;
    for (size_t i = n; i < res.size() && extra_none; ++i) extra_none = res[i].is_none();
    if (!extra_none)
      AG_THROW(RuntimeError, "function ", name_, " returned an incorrect number of gradients (expected ", n, ", got ", res.size(), ")");
  }
  variable_list out(n);
  for (size_t i = 0; i < n; ++i) {
    py::handle h = res[i];
    if (h.is_none()) continue;
    if (!is_tensor_input[i])
      AG_THROW(RuntimeError, "function ", name_, " returned a gradient different than None at position ", i + 1,
               ", but the corresponding forward input was not a Variable");
    try {
      out[i] = h.cast<Tensor>();
    } catch (const py::cast_error&) {
      AG_THROW(TypeError, "function ", name_, " returned a gradient of type ", std::string(py::str(py::type::of(h).attr("__name__"))),
               " at position ", i + 1, ", expected Tensor or None");
    }
  }
  return out;
}

}  // namespace ampgrad::autograd
