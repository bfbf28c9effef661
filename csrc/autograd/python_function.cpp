// PyNode: runs a Function's Python backward inside the engine; Python exceptions propagate to
// the caller of backward() with their type and traceback (pybind11::error_already_set).
#include "autograd/python_function.h"
#include "bindings/convert.h"  // the Tensor caster: every TU that casts Tensor must see it
#include "autograd/anomaly.h"
#include "autograd/grad_mode.h"
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

namespace {
// A Python object owned from C++: released under the GIL, whichever thread drops the last reference.
std::shared_ptr<void> own(py::object o) {
  return std::shared_ptr<void>(o.release().ptr(), [](void* p) {
    if (!Py_IsInitialized()) return;
    py::gil_scoped_acquire gil;
    Py_DECREF(static_cast<PyObject*>(p));
  });
}
}  // namespace

py::dict node_metadata(Node& node) {
  if (!node.metadata) node.metadata = own(py::dict());
  return py::reinterpret_borrow<py::dict>(static_cast<PyObject*>(node.metadata.get()));
}

// ---- saved tensor hooks
namespace {
struct HookPair {
  py::object pack, unpack;
};
thread_local std::vector<HookPair>* t_hook_stack = nullptr;  // leaked at thread exit: no GIL then
thread_local std::optional<std::string> t_hooks_disabled;

struct PySavedHooks : SavedVariableHooks {
  std::shared_ptr<void> unpack_fn, packed;
  void pack(const Tensor& t) override {
    py::gil_scoped_acquire gil;
    const HookPair& top = t_hook_stack->back();
    unpack_fn = own(top.unpack);
    packed = own(top.pack(py::cast(t)));
  }
  Tensor unpack() const override {
    py::gil_scoped_acquire gil;
    py::handle fn(static_cast<PyObject*>(unpack_fn.get()));
    py::object r = fn(py::handle(static_cast<PyObject*>(packed.get())));
    if (!bind::is_tensor(r))
      AG_THROW(TypeError, "Output of saved tensor unpack_hook expected to be a Tensor but got result of type ",
               std::string(py::str(py::type::of(r).attr("__name__"))));
    return r.cast<Tensor>();
  }
};
std::unique_ptr<SavedVariableHooks> make_py_saved_hooks() { return std::make_unique<PySavedHooks>(); }
}  // namespace

void push_saved_tensors_hooks(py::object pack, py::object unpack) {
  if (t_hooks_disabled) AG_THROW(RuntimeError, *t_hooks_disabled);
  if (!t_hook_stack) t_hook_stack = new std::vector<HookPair>();
  t_hook_stack->push_back({std::move(pack), std::move(unpack)});
  SavedTensorDefaultHooks::depth = static_cast<int>(t_hook_stack->size());
}

void pop_saved_tensors_hooks() {
  AG_CHECK(t_hook_stack && !t_hook_stack->empty(), "No saved tensors default hooks to pop");
  t_hook_stack->pop_back();
  SavedTensorDefaultHooks::depth = static_cast<int>(t_hook_stack->size());
}

void disable_saved_tensors_hooks(const std::string& message) { t_hooks_disabled = message; }
void enable_saved_tensors_hooks() { t_hooks_disabled.reset(); }
std::optional<std::string> saved_tensors_hooks_disabled_message() { return t_hooks_disabled; }

// ---- anomaly mode (torch's PyAnomalyMetadata: the trace lives in metadata["traceback_"])
namespace {
void anomaly_store_py(Node& node, const std::shared_ptr<Node>& parent) {
  py::gil_scoped_acquire gil;
  py::dict md = node_metadata(node);
  py::list stack = py::module_::import("traceback").attr("format_stack")();
  md["traceback_"] = stack;
  if (parent) md["parent_"] = bind::node_object(parent);
}

void warn(const std::string& msg) {
  if (PyErr_WarnEx(PyExc_UserWarning, msg.c_str(), 1) < 0) PyErr_Clear();  // the backward error wins
}

void anomaly_report_py(const Node& node) {
  py::gil_scoped_acquire gil;
  py::object md = node.metadata ? py::reinterpret_borrow<py::object>(static_cast<PyObject*>(node.metadata.get())) : py::dict();
  std::string name = node.name();
  bool parent = false;
  while (true) {
    py::object trace = md.attr("get")("traceback_");
    if (trace.is_none()) {
      if (!parent)
        warn("Error detected in " + name + ". No forward pass information available. Enable detect anomaly during "
             "forward pass for more information.");
      return;
    }
    std::string text = py::str("").attr("join")(trace).cast<std::string>();
    warn(parent ? "\n\nPrevious calculation was induced by " + name +
                      ". Traceback of forward call that induced the previous calculation:\n" + text
                : "Error detected in " + name + ". Traceback of forward call that caused the error:\n" + text);
    py::object p = md.attr("get")("parent_");
    if (p.is_none()) return;
    md = p.attr("metadata");
    name = p.attr("name")().cast<std::string>();
    parent = true;
  }
}
}  // namespace

namespace {
py::object* g_mutation_fn = nullptr;  // leaked: no Python calls at exit
void call_mutation_fn(const Tensor& t) {
  AutoGradMode off(false);
  (*g_mutation_fn)(py::cast(t));
}
}  // namespace

void set_mutation_hook(py::object fn) {
  if (!g_mutation_fn) g_mutation_fn = new py::object();
  *g_mutation_fn = fn;
  mutation_hook = fn.is_none() ? nullptr : call_mutation_fn;
}

void install_python_hooks() {
  anomaly_hooks.store = anomaly_store_py;
  anomaly_hooks.report = anomaly_report_py;
  SavedTensorDefaultHooks::make = make_py_saved_hooks;
}

}  // namespace ampgrad::autograd
