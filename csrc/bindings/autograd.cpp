// Autograd bindings: backward / grad, grad and inference modes, graph nodes and their hooks,
// tensor hooks, saved tensor hooks and anomaly mode.
#include <algorithm>
#include <mutex>
#include <set>
#include "autograd/anomaly.h"
#include "autograd/engine.h"
#include "autograd/forward_ad.h"
#include "autograd/grad_mode.h"
#include "autograd/python_function.h"
#include "autograd/profiler.h"
#include "bindings/convert.h"
#include "ops/internal.h"

namespace ampgrad {
bool set_copy_slices_name(autograd::Node* n, const char* name);  // autograd/inplace.cpp
}
namespace ampgrad::bind {

namespace {
std::vector<Tensor> tensor_list(py::handle h) {
  std::vector<Tensor> out;
  if (is_tensor(h)) { out.push_back(h.cast<Tensor>()); return out; }
  for (auto item : py::reinterpret_borrow<py::sequence>(h)) out.push_back(item.is_none() ? Tensor() : as_tensor(item));
  return out;
}

// A GradientEdge (node, output_nr) as an edge.
autograd::Edge edge_of(py::handle item) {
  py::object node = item.attr("node");
  return {node.is_none() ? nullptr : node.cast<std::shared_ptr<autograd::Node>>(), item.attr("output_nr").cast<uint32_t>()};
}

// autograd.grad / backward inputs: Tensors, or GradientEdges as edges.
void input_list(py::handle h, std::vector<Tensor>& tensors, std::vector<autograd::Edge>& edges) {
  py::list items;
  if (is_tensor(h) || py::hasattr(h, "output_nr")) items.append(h);
  else items = py::list(py::reinterpret_borrow<py::object>(h));
  for (auto item : items) {
    if (is_tensor(item)) { tensors.push_back(item.cast<Tensor>()); edges.emplace_back(); continue; }
    AG_CHECK_TYPE(!item.is_none(), "all inputs have to be Tensors, but got NoneType");
    tensors.emplace_back();
    edges.push_back(edge_of(item));
  }
}

// A root of backward / grad: a Tensor, or a GradientEdge (torch 2.13 accepts both), with the
// shape, dtype and device its gradient must have.
struct Root {
  autograd::Edge edge;
  Shape shape;
  ScalarType dtype;
  Device device;
  bool requires_grad;
};

std::vector<Root> root_list(py::handle h) {
  py::list items;
  if (is_tensor(h) || py::hasattr(h, "output_nr")) items.append(h);
  else items = py::list(py::reinterpret_borrow<py::object>(h));
  std::vector<Root> out;
  for (size_t i = 0; i < items.size(); ++i) {
    py::handle item = items[i];
    AG_CHECK_TYPE(!item.is_none(), "element ", i, " of tensors is None");
    if (is_tensor(item)) {
      Tensor t = item.cast<Tensor>();
      out.push_back({autograd::gradient_edge(t), t.sizes(), t.dtype(), t.device(), t.requires_grad()});
      continue;
    }
    autograd::Edge e = edge_of(item);
    AG_CHECK(e.valid() && e.input_nr < e.fn->num_outputs(), "element ", i, " of tensors is not a valid GradientEdge");
    const auto& m = e.fn->input_meta[e.input_nr];
    out.push_back({e, m.shape, m.dtype, m.device, true});
  }
  return out;
}

// The roots' edges; each root must be part of a graph.
std::vector<autograd::Edge> root_edges(const std::vector<Root>& roots) {
  std::vector<autograd::Edge> out;
  for (size_t i = 0; i < roots.size(); ++i) {
    AG_CHECK(roots[i].requires_grad && roots[i].edge.valid(), "element ", i,
             " of tensors does not require grad and does not have a grad_fn");
    out.push_back(roots[i].edge);
  }
  return out;
}

// Seeds for roots: given gradients, or ones for scalar outputs (torch's error otherwise).
std::vector<Tensor> make_seeds(const std::vector<Root>& roots, py::handle grads, bool is_grads_batched) {
  std::vector<Tensor> seeds(roots.size());
  std::vector<Tensor> given;
  if (!grads.is_none()) given = tensor_list(grads);
  AG_CHECK(grads.is_none() || given.size() == roots.size(), "got ", roots.size(), " tensors and ", given.size(), " gradients");
  for (size_t i = 0; i < roots.size(); ++i) {
    const Root& r = roots[i];
    if (i < given.size() && given[i].defined()) {
      const Tensor& g = given[i];
      AG_CHECK(is_grads_batched || g.sizes() == r.shape, "Mismatch in shape: grad_output[", i, "] has a shape of torch.Size(",
               shape_str(g.sizes()), ") and output[", i, "] has a shape of torch.Size(", shape_str(r.shape), ").");
      seeds[i] = g;
      continue;
    }
    if (!r.requires_grad) continue;
    int64_t numel = 1;
    for (int64_t d : r.shape) numel *= d;
    AG_CHECK(numel == 1, "grad can be implicitly created only for scalar outputs");
    AG_CHECK(is_floating(r.dtype), "grad can be implicitly created only for real scalar outputs but got ", dtype_name(r.dtype));
    seeds[i] = full(r.shape, Scalar(1.0), r.dtype, r.device);
  }
  return seeds;
}
std::string hook_name(py::handle fn) { return py::str(py::getattr(fn, "__name__", py::str("<unknown>"))); }
std::string type_name(py::handle o) { return py::str(py::type::of(o).attr("__name__")); }

// torch's check_variable_result: a hook may replace a gradient, not change its type or size.
void check_replacement(const Tensor& g, const Tensor& r, py::handle fn) {
  AG_CHECK(r.dtype() == g.dtype(), "hook '", hook_name(fn), "' has changed the type of value (was torch.", legacy_type_name(g.dtype()),
           " got torch.", legacy_type_name(r.dtype()), ")");
  AG_CHECK(r.device() == g.device(), "hook '", hook_name(fn), "' has changed the type of value (was ", g.device().str(), " got ",
           r.device().str(), ")");
  AG_CHECK(r.sizes() == g.sizes(), "hook '", hook_name(fn), "' has changed the size of value");
}

py::tuple grads_tuple(const autograd::variable_list& v) {
  py::tuple t(v.size());
  for (size_t i = 0; i < v.size(); ++i) t[i] = v[i].defined() ? py::cast(v[i]) : py::none();
  return t;
}

// What a node hook returned: None keeps the gradients, a tuple of the same length replaces them
// (torch's check_result / check_single_result).
autograd::variable_list hook_result(const autograd::variable_list& prev, py::object r, py::handle fn) {
  if (r.is_none()) return {};
  AG_CHECK_TYPE(py::isinstance<py::tuple>(r), "expected tuple, but hook returned '", type_name(r), "'");
  auto res = py::reinterpret_borrow<py::tuple>(r);
  AG_CHECK(res.size() == prev.size(), "hook '", hook_name(fn), "' has returned an incorrect number of values (got ", res.size(),
           ", but expected ", prev.size(), ")");
  autograd::variable_list out(res.size());
  for (size_t i = 0; i < res.size(); ++i) {
    if (res[i].is_none()) continue;
    AG_CHECK(prev[i].defined(), "can't replace a None gradient with a non-None value");
    AG_CHECK_TYPE(is_tensor(res[i]), "expected Variable, but hook returned '", type_name(res[i]), "'");
    out[i] = res[i].cast<Tensor>();
    check_replacement(prev[i], out[i], fn);
  }
  return out;
}

// Handle of a node hook: holds the node weakly, as torch's handle does not keep the graph alive.
struct NodeHookHandle {
  std::weak_ptr<autograd::Node> node;
  bool post;
  int id;
  void remove() {
    auto n = node.lock();
    if (!n) return;
    auto drop = [&](auto& v) { v.erase(std::remove_if(v.begin(), v.end(), [&](auto& p) { return p.first == id; }), v.end()); };
    if (post) drop(n->post_hooks);
    else drop(n->pre_hooks);
  }
};

// Like torch, any object is accepted; calling it happens (and may fail) in backward.
NodeHookHandle add_node_hook(autograd::Node& n, py::object fn, bool post) {
  int id = n.next_hook_id++;
  if (post) {
    n.post_hooks.push_back({id, [fn](const autograd::variable_list& outs, const autograd::variable_list& ins) {
      return hook_result(outs, fn(grads_tuple(outs), grads_tuple(ins)), fn);
    }});
  } else {
    n.pre_hooks.push_back({id, [fn](const autograd::variable_list& grads) { return hook_result(grads, fn(grads_tuple(grads)), fn); }});
  }
  return {n.weak_from_this(), post, id};
}

}  // namespace

py::object node_object(const std::shared_ptr<autograd::Node>& n) {
  if (!n) return py::none();
  py::object o = py::cast(n);
  py::handle base = py::type::of<autograd::Node>();
  if (!py::type::handle_of(o).is(base)) return o;  // already given its class
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
  m.def("_profiler_start_nvtx", [](bool shapes) { return prof::start({shapes, false, false, true}); });
  m.def("_record_function_enter", [](std::string name, std::string stack) {
    return prof::open(std::move(name), prof::Kind::Function, -1, std::move(stack));
  });
  m.def("_record_function_exit", [](int64_t handle) { prof::close(handle); });
  m.def("_run_backward", [](py::handle tensors, py::handle grad_tensors, std::optional<bool> retain_graph, bool create_graph,
                            py::handle inputs) {
    auto roots = root_list(tensors);
    auto seeds = make_seeds(roots, grad_tensors, false);
    std::vector<Tensor> ins;
    std::vector<autograd::Edge> in_edges;
    if (!inputs.is_none()) input_list(inputs, ins, in_edges);
    AG_CHECK(inputs.is_none() || !ins.empty(), "`inputs` argument to `backward()` cannot be empty.");
    autograd::run_backward(root_edges(roots), seeds, retain_graph.value_or(create_graph), create_graph, ins, in_edges, true, true);
  });
  m.def("_run_grad", [](py::handle outputs, py::handle inputs, py::handle grad_outputs, std::optional<bool> retain_graph,
                        bool create_graph, bool allow_unused, bool materialize) {
    auto roots = root_list(outputs);
    std::vector<Tensor> ins;
    std::vector<autograd::Edge> in_edges;
    input_list(inputs, ins, in_edges);
    AG_CHECK(!ins.empty(), "`inputs` argument to `grad()` cannot be empty.");
    auto seeds = make_seeds(roots, grad_outputs, false);
    auto res = autograd::run_backward(root_edges(roots), seeds, retain_graph.value_or(create_graph), create_graph, ins, in_edges,
                                      allow_unused || materialize, false);
    py::tuple t(res.size());
    for (size_t i = 0; i < res.size(); ++i) {
      AG_CHECK(res[i].defined() || !materialize || ins[i].defined(),
               "materialize_grads cannot be used when the given input is a GradientEdge");
      if (!res[i].defined() && materialize) {  // torch: zeros_like(input, requires_grad=create_graph)
        res[i] = full(ins[i].sizes(), Scalar(0.0), ins[i].dtype(), ins[i].device());
        if (create_graph) res[i].set_requires_grad(true);
      }
      t[i] = py::cast(res[i]);
    }
    return t;
  });
  // forward AD (Note [Forward AD]); argument checks with Python types live in autograd/forward_ad.py
  namespace fw = autograd::fw;
  m.def("_enter_dual_level", [] { return fw::enter_level(); });
  m.def("_exit_dual_level", [](int64_t level) { fw::exit_level(level); }, py::arg("level"));
  m.def("_current_dual_level", [] { return fw::current_level(); });
  m.def("_make_dual", [](const Tensor& t, const Tensor& tan, int64_t level) {
    AG_CHECK(level == fw::current_level(), "Invalid level given to _make_dual");
    AG_CHECK(!fw::tangent(t).defined(), "Making a dual Tensor based on a Tensor that already has a forward gradient at the "
             "same level ", level, " is not supported.");
    AG_CHECK(tan.sizes() == t.sizes(), "Trying to set a forward gradient that has a different size than that of the original "
             "Tensor, this is not supported. Tensor is of size ", shape_str(t.sizes()), " while the given forward gradient is of size ",
             shape_str(tan.sizes()), ".");
    Tensor out = view(t, IntList(t.sizes().begin(), t.sizes().end()));
    if (fw::on()) fw::set_tangent(out, fw::with_layout(tan, t));  // (inference mode: no tangent, as torch)
    return out;
  }, py::arg("tensor"), py::arg("tangent"), py::arg("level"));
  m.def("_unpack_dual", [](const Tensor& t, int64_t level) {
    Tensor tan = fw::tangent(t);
    AG_CHECK(!tan.defined() || level == fw::current_level(), "Invalid level given to _fw_primal");
    Tensor primal;
    {
      fw::Disable off;
      primal = alias(t);
    }
    return py::make_tuple(primal, tan.defined() ? py::cast(tan) : py::none());
  }, py::arg("tensor"), py::arg("level"));
  m.def("_fw_grad", [](const Tensor& t) { Tensor tan = fw::tangent(t); return tan.defined() ? py::cast(tan) : py::none(); });
  m.def("_set_fw_grad", [](const Tensor& t, const Tensor& tan) { fw::set_result_tangent(t, tan); });
  m.def("_set_fw_grad_enabled", [](bool on) { bool prev = !fw::t_off; fw::t_off = !on; return prev; });
  m.def("_is_fw_grad_enabled", [] { return fw::on(); });
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
      .def_property("metadata", [](autograd::Node& n) { return autograd::node_metadata(n); },
                    [](py::object self, py::handle) {
                      throw py::attribute_error("attribute 'metadata' of '" + type_name(self) + "' objects is not writable");
                    })
      .def("register_hook", [](autograd::Node& n, py::object fn) { return add_node_hook(n, fn, true); })
      .def("register_prehook", [](autograd::Node& n, py::object fn) { return add_node_hook(n, fn, false); })
      .def_property_readonly("_sequence_nr", [](const autograd::Node& n) { return n.sequence_nr; })
      .def("_input_metadata", [](const autograd::Node& n) {
        py::list l;
        for (auto& im : n.input_meta) l.append(py::make_tuple(py::tuple(py::cast(im.shape)), im.dtype));
        return l;
      })
      // (amptools) shape, dtype and bytes of each tensor a C++ op node saved for backward, for
      // autograd.graph.to_dot; released or hook-packed tensors are listed as None.
      .def("_saved_tensors_info", [](const autograd::Node& n) {
        py::list l;
        if (auto* f = dynamic_cast<const autograd::FunctionNode*>(&n))
          for (auto& sv : f->saved) {
            if (!sv.data.defined()) { l.append(py::none()); continue; }
            l.append(py::make_tuple(py::tuple(py::cast(sv.data.sizes())), sv.data.dtype(),
                                    sv.data.numel() * itemsize(sv.data.dtype())));
          }
        return l;
      })
      .def_property_readonly("variable", [](const autograd::Node& n) -> py::object {
        if (auto* acc = dynamic_cast<const autograd::AccumulateGrad*>(&n)) return py::cast(acc->variable);
        throw py::attribute_error("'" + n.name() + "' object has no attribute 'variable'");
      })
      .def("__repr__", [](py::object self) {
        return py::str("<{} object at {}>").format(py::type::handle_of(self).attr("__name__"),
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

  py::class_<NodeHookHandle>(m, "_NodeHookHandle")
      .def_readonly("id", &NodeHookHandle::id)
      .def("remove", &NodeHookHandle::remove)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](NodeHookHandle& h, py::args) { h.remove(); });
  m.def("_current_graph_task_id", &autograd::current_graph_task_id);
  m.def("_will_engine_execute_node", [](py::handle node) {
    AG_CHECK(py::isinstance<autograd::Node>(node), "_will_engine_execute_node expects an grad_fn, but got ", type_name(node));
    return autograd::will_engine_execute_node(node.cast<autograd::Node*>());
  });
  // A Python composition (python/ampgrad/_misc_ops.py) names its output's node as torch's single op
  // does (mode -> ModeBackward0). Only a node the composition just made is renamed: a function node
  // whose one output is this tensor.
  m.def("_set_grad_fn_name", [](const Tensor& t, const std::string& name) {
    static std::mutex mu;
    static std::set<std::string> names;  // interned: FunctionNode keeps a const char*
    auto fn = std::dynamic_pointer_cast<autograd::FunctionNode>(t.grad_fn());
    std::lock_guard<std::mutex> lock(mu);
    const char* interned = names.insert(name).first->c_str();
    if (!fn) return t.grad_fn() ? set_copy_slices_name(t.grad_fn().get(), interned) : false;
    fn->name_ = interned;
    return true;
  });
  m.def("_increment_version", [](py::handle tensors) {
    for (auto& t : tensor_list(tensors))
      if (t.defined() && !t.is_inference()) t.bump_version();
  });

  // Saved tensor hooks and anomaly mode.
  m.def("_push_saved_tensors_default_hooks", &autograd::push_saved_tensors_hooks);
  m.def("_pop_saved_tensors_default_hooks", &autograd::pop_saved_tensors_hooks);
  m.def("_saved_tensors_hooks_disable", &autograd::disable_saved_tensors_hooks);
  m.def("_saved_tensors_hooks_enable", &autograd::enable_saved_tensors_hooks);
  m.def("_saved_tensors_hooks_get_disabled_error_message", &autograd::saved_tensors_hooks_disabled_message);
  m.def("_saved_tensors_hooks_is_enabled", [] { return !autograd::saved_tensors_hooks_disabled_message().has_value(); });
  m.def("is_anomaly_enabled", &autograd::AnomalyMode::is_enabled);
  m.def("is_anomaly_check_nan_enabled", &autograd::AnomalyMode::should_check_nan);
  m.def("_set_anomaly_enabled", &autograd::AnomalyMode::set_enabled, py::arg("enabled"), py::arg("check_nan") = true);
  m.def("_set_mutation_hook", &autograd::set_mutation_hook);
  autograd::install_python_hooks();

  // Tensor hooks: a leaf's run before accumulation, a non-leaf's on its grad_fn's output.
  auto cls = py::reinterpret_borrow<py::class_<TensorImpl, std::shared_ptr<TensorImpl>>>(m.attr("Tensor"));
  cls.def("_register_hook", [](const Tensor& t, py::function fn) {
    AG_CHECK(t.requires_grad(), "cannot register a hook on a tensor that doesn't require gradient");
    TensorHook hook = [fn](const Tensor& g) -> Tensor {
      py::object r = fn(py::cast(g));
      if (r.is_none()) return Tensor();
      AG_CHECK_TYPE(is_tensor(r), "expected Variable, but hook returned '", type_name(r), "'");
      Tensor rt = r.cast<Tensor>();
      check_replacement(g, rt, fn);
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
