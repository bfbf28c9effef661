// Autograd bindings: backward / grad, grad and inference modes, graph nodes, tensor hooks.
#include "autograd/engine.h"
#include "autograd/grad_mode.h"
#include "autograd/profiler.h"
#include "bindings/convert.h"
#include "ops/internal.h"

namespace ampgrad::bind {

namespace {
std::vector<Tensor> tensor_list(py::handle h) {
  std::vector<Tensor> out;
  if (is_tensor(h)) { out.push_back(h.cast<Tensor>()); return out; }
  for (auto item : py::reinterpret_borrow<py::sequence>(h)) out.push_back(item.is_none() ? Tensor() : as_tensor(item));
  return out;
}

// Seeds for roots: given gradients, or ones for scalar outputs (torch's error otherwise).
std::vector<Tensor> make_seeds(const std::vector<Tensor>& roots, py::handle grads, bool is_grads_batched) {
  for (size_t i = 0; i < roots.size(); ++i)
    AG_CHECK_TYPE(roots[i].defined(), "element ", i, " of tensors is None");
  std::vector<Tensor> seeds(roots.size());
  std::vector<Tensor> given;
  if (!grads.is_none()) given = tensor_list(grads);
  AG_CHECK(grads.is_none() || given.size() == roots.size(), "got ", roots.size(), " tensors and ", given.size(), " gradients");
  for (size_t i = 0; i < roots.size(); ++i) {
    if (i < given.size() && given[i].defined()) {
      const Tensor& g = given[i];
      AG_CHECK(is_grads_batched || g.sizes() == roots[i].sizes(), "Mismatch in shape: grad_output[", i, "] has a shape of torch.Size(",
               shape_str(g.sizes()), ") and output[", i, "] has a shape of torch.Size(", shape_str(roots[i].sizes()), ").");
      seeds[i] = g;
      continue;
    }
    if (!roots[i].requires_grad()) continue;
    AG_CHECK(roots[i].numel() == 1, "grad can be implicitly created only for scalar outputs");
    AG_CHECK(is_floating(roots[i].dtype()), "grad can be implicitly created only for real scalar outputs but got ", dtype_name(roots[i].dtype()));
    seeds[i] = full(roots[i].sizes(), Scalar(1.0), roots[i].dtype(), roots[i].device());
  }
  return seeds;
}
}  // namespace

py::object node_object(const std::shared_ptr<autograd::Node>& n) {
  if (!n) return py::none();
  py::object o = py::cast(n);
  py::handle base = py::type::of<autograd::Node>();
  if (!o.get_type().is(base)) return o;  // already given its class
  // One Python subclass of Node per node name ("torch::autograd::AccumulateGrad" -> AccumulateGrad),
  // kept for the interpreter's lifetime.
  static py::dict* classes = new py::dict();
  std::string nm = n->name();
  size_t colon = nm.rfind("::");
  py::str key(colon == std::string::npos ? nm : nm.substr(colon + 2));
  py::object cls;
  if (classes->contains(key)) {
    cls = (*classes)[key];
  } else {
    py::dict ns;
    ns["__slots__"] = py::tuple();
    ns["__module__"] = py::str("ampgrad.autograd.graph");
    cls = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(Py_TYPE(base.ptr())))(key, py::make_tuple(base), ns);
    // The subclass adds no state; deallocating it is the base's job (pybind11 frees the holder and
    // drops the instance's reference to its actual type), which also permits __class__ assignment.
    auto* ct = reinterpret_cast<PyTypeObject*>(cls.ptr());
    auto* bt = reinterpret_cast<PyTypeObject*>(base.ptr());
    ct->tp_dealloc = bt->tp_dealloc;
    ct->tp_free = bt->tp_free;
    ct->tp_flags = (ct->tp_flags & ~Py_TPFLAGS_HAVE_GC) | (bt->tp_flags & Py_TPFLAGS_HAVE_GC);
    (*classes)[key] = cls;
  }
  o.attr("__class__") = cls;
  return o;
}

void init_autograd(py::module_& m) {
  // The profiler: python/ampgrad/autograd/profiler.py turns these tuples into FunctionEvents.
  namespace prof = autograd::profiler;
  m.def("_profiler_start", [](bool shapes, bool flops, bool memory) { return prof::start({shapes, flops, memory}); });
  m.def("_profiler_stop", [] {
    py::list out;
    for (auto& e : prof::stop())
      out.append(py::make_tuple(e.name, static_cast<int>(e.kind), e.start_ns, e.end_ns, e.parent, e.thread, e.self_bytes,
                                e.flops, e.seq, e.shapes, e.stack));
    return out;
  });
  m.def("_profiler_enabled", [] { return prof::enabled(); });
  m.def("_record_function_enter", [](std::string name, std::string stack) {
    return prof::open(std::move(name), prof::Kind::Function, -1, std::move(stack));
  });
  m.def("_record_function_exit", [](int64_t handle) { prof::close(handle); });
  m.def("_run_backward", [](py::handle tensors, py::handle grad_tensors, std::optional<bool> retain_graph, bool create_graph,
                            py::handle inputs) {
    auto roots = tensor_list(tensors);
    auto seeds = make_seeds(roots, grad_tensors, false);
    std::vector<Tensor> ins = inputs.is_none() ? std::vector<Tensor>{} : tensor_list(inputs);
    for (auto& t : ins) AG_CHECK_TYPE(t.defined(), "all inputs have to be Tensors, but got NoneType");
    AG_CHECK(inputs.is_none() || !ins.empty(), "`inputs` argument to `backward()` cannot be empty.");
    std::vector<Tensor> r, s;
    for (size_t i = 0; i < roots.size(); ++i) {
      if (!roots[i].requires_grad()) AG_THROW(RuntimeError, "element ", i, " of tensors does not require grad and does not have a grad_fn");
      r.push_back(roots[i]); s.push_back(seeds[i]);
    }
    autograd::run_backward(r, s, retain_graph.value_or(create_graph), create_graph, ins, true, true);
  });
  m.def("_run_grad", [](py::handle outputs, py::handle inputs, py::handle grad_outputs, std::optional<bool> retain_graph,
                        bool create_graph, bool allow_unused, bool materialize) {
    auto outs = tensor_list(outputs);
    auto ins = tensor_list(inputs);
    AG_CHECK(!ins.empty(), "`inputs` argument to `grad()` cannot be empty.");
    for (auto& t : ins) AG_CHECK_TYPE(t.defined(), "all inputs have to be Tensors, but got NoneType");
    auto seeds = make_seeds(outs, grad_outputs, false);
    std::vector<Tensor> r, s;
    for (size_t i = 0; i < outs.size(); ++i) {
      if (!outs[i].requires_grad()) AG_THROW(RuntimeError, "element ", i, " of tensors does not require grad and does not have a grad_fn");
      r.push_back(outs[i]); s.push_back(seeds[i]);
    }
    auto res = autograd::run_backward(r, s, retain_graph.value_or(create_graph), create_graph, ins, allow_unused || materialize, false);
    py::tuple t(res.size());
    for (size_t i = 0; i < res.size(); ++i) {
      if (!res[i].defined() && materialize) {  // torch: zeros_like(input, requires_grad=create_graph)
        res[i] = full(ins[i].sizes(), Scalar(0.0), ins[i].dtype(), ins[i].device());
        if (create_graph) res[i].set_requires_grad(true);
      }
      t[i] = py::cast(res[i]);
    }
    return t;
  });
  m.def("_autograd_live_nodes", [] { return autograd::live_nodes(); });
  m.def("is_grad_enabled", [] { return autograd::GradMode::is_enabled(); });
  m.def("_set_grad_enabled", [](bool on) { autograd::GradMode::set_enabled(on); });
  m.def("is_inference_mode_enabled", [] { return autograd::InferenceMode::is_enabled(); });
  m.def("_set_inference_mode", [](bool on) { autograd::InferenceMode::set_enabled(on); });

  py::class_<autograd::Node, std::shared_ptr<autograd::Node>>(m, "Node")
      .def("name", [](const autograd::Node& n) { return n.name(); })
      .def_property_readonly("next_functions", [](const autograd::Node& n) {
        py::tuple t(n.next_edges.size());
        for (size_t i = 0; i < n.next_edges.size(); ++i)
          t[i] = py::make_tuple(node_object(n.next_edges[i].fn), n.next_edges[i].input_nr);
        return t;
      })
      .def_property_readonly("_sequence_nr", [](const autograd::Node& n) { return n.sequence_nr; })
      .def("_input_metadata", [](const autograd::Node& n) {
        py::list l;
        for (auto& im : n.input_meta) l.append(py::make_tuple(py::tuple(py::cast(im.shape)), im.dtype));
        return l;
      })
      .def_property_readonly("variable", [](const autograd::Node& n) -> py::object {
        if (auto* acc = dynamic_cast<const autograd::AccumulateGrad*>(&n)) return py::cast(acc->variable);
        throw py::attribute_error("'" + n.name() + "' object has no attribute 'variable'");
      })
      .def("__repr__", [](py::object self) {
        return py::str("<{} object at {}>").format(self.get_type().attr("__name__"),
                                                   py::module_::import("builtins").attr("hex")(py::int_(reinterpret_cast<uintptr_t>(self.ptr()))));
      })
      .def("__call__", [](autograd::Node& n, py::args grads) {
        AG_CHECK_TYPE(grads.size() == n.num_outputs(), "expected ", n.num_outputs(), " arguments, got ", grads.size(), " instead");
        bool all_none = true;
        for (auto a : grads) all_none &= a.is_none();
        if (all_none) {  // nothing flows: no gradient for any input (torch returns Nones)
          if (n.num_inputs() == 1) return py::object(py::none());
          py::tuple t(n.num_inputs());
          for (size_t i = 0; i < n.num_inputs(); ++i) t[i] = py::none();
          return py::object(t);
        }
        autograd::variable_list g;
        for (size_t i = 0; i < grads.size(); ++i) {
          const auto& im = n.input_meta[i];
          // Formulas expect every gradient: None stands for zeros.
          g.push_back(grads[i].is_none() ? full(im.shape, Scalar(0.0), im.dtype, im.device) : as_tensor(grads[i]));
          AG_CHECK(g.back().sizes() == im.shape, "Function ", n.name(), " expected a gradient of shape ",
                   shape_str(im.shape), " for output ", i, " but got ", shape_str(g.back().sizes()));
          if (g.back().dtype() != im.dtype) g.back() = to_dtype(g.back(), im.dtype);  // as the engine does
        }
        auto r = n.apply(std::move(g));
        if (r.size() == 1) return r[0].defined() ? py::cast(r[0]) : py::object(py::none());
        py::tuple t(r.size());
        for (size_t i = 0; i < r.size(); ++i) t[i] = r[i].defined() ? py::cast(r[i]) : py::object(py::none());
        return py::object(t);
      });

  // Tensor hooks: a leaf's run before accumulation, a non-leaf's on its grad_fn's output.
  auto cls = py::reinterpret_borrow<py::class_<TensorImpl, std::shared_ptr<TensorImpl>>>(m.attr("Tensor"));
  cls.def("_register_hook", [](const Tensor& t, py::function fn) {
    AG_CHECK(t.requires_grad(), "cannot register a hook on a tensor that doesn't require gradient");
    TensorHook hook = [fn](const Tensor& g) -> Tensor {
      py::object r = fn(py::cast(g));
      if (r.is_none()) return Tensor();
      if (!is_tensor(r))
        AG_THROW(TypeError, "expected Variable, but hook returned '", std::string(py::str(py::type::of(r).attr("__name__"))), "'");
      Tensor rt = r.cast<Tensor>();
      std::string name = py::str(py::getattr(fn, "__name__", py::str("<unknown>")));
      AG_CHECK(rt.dtype() == g.dtype(), "hook '", name, "' has changed the type of value (was torch.", legacy_type_name(g.dtype()),
               " got torch.", legacy_type_name(rt.dtype()), ")");
      AG_CHECK(rt.device() == g.device(), "hook '", name, "' has changed the type of value (was ", g.device().str(), " got ",
               rt.device().str(), ")");
      AG_CHECK(rt.sizes() == g.sizes(), "hook '", name, "' has changed the size of value");
      return rt;
    };
    if (t.is_leaf()) {
      auto& m = t.ensure_autograd_meta();
      int id = m.next_hook_id++;
      m.leaf_hooks.emplace_back(id, hook);
      return py::make_tuple(0, id);
    }
    auto& n = *t.grad_fn();
    int id = n.next_hook_id++;
    n.tensor_pre_hooks.push_back({id, {static_cast<int>(t.output_nr()), hook}});
    return py::make_tuple(1, id);
  });
  cls.def("_remove_hook", [](const Tensor& t, int kind, int id) {
    if (kind == 0) {
      if (auto* m = t.autograd_meta()) {
        auto& v = m->leaf_hooks;
        v.erase(std::remove_if(v.begin(), v.end(), [&](auto& p) { return p.first == id; }), v.end());
      }
    } else if (kind == 1 && t.grad_fn()) {
      auto& v = t.grad_fn()->tensor_pre_hooks;
      v.erase(std::remove_if(v.begin(), v.end(), [&](auto& p) { return p.first == id; }), v.end());
    } else if (kind == 2) {
      if (auto* m = t.autograd_meta()) {
        auto& v = m->post_accumulate_hooks;
        v.erase(std::remove_if(v.begin(), v.end(), [&](auto& p) { return p.first == id; }), v.end());
      }
    }
  });
  cls.def("_register_post_accumulate_grad_hook", [](py::object self, py::function fn) {
    Tensor t = self.cast<Tensor>();
    AG_CHECK(t.requires_grad(), "cannot register a hook on a tensor that doesn't require gradient");
    AG_CHECK(t.is_leaf(), "post accumulate grad hooks cannot be registered on non-leaf tensors");
    auto& m = t.ensure_autograd_meta();
    int id = m.next_hook_id++;
    m.post_accumulate_hooks.emplace_back(id, [fn](const Tensor& v) {
      py::object r = fn(py::cast(v));
      if (r.is_none()) return Tensor();
      AG_CHECK(!is_tensor(r), "Tensor post accumulate grad hooks should return None.");
      AG_THROW(TypeError, "expected Variable, but hook returned '", std::string(py::str(py::type::of(r).attr("__name__"))), "'");
    });
    return py::make_tuple(2, id);
  });
  cls.def("retain_grad", [](const Tensor& t) {
    AG_CHECK(t.requires_grad(), "can't retain_grad on Tensor that has requires_grad=False");
    if (t.is_leaf()) return;
    auto& m = t.ensure_autograd_meta();
    if (m.retains_grad) return;
    m.retains_grad = true;
    t.grad_fn()->retains_grad.push_back({static_cast<int>(t.output_nr()), t.impl_ptr()});
  });
}

}  // namespace ampgrad::bind
