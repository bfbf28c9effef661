// Bindings for Python autograd.Function: building its PyNode after forward ran under no_grad.
#include "autograd/anomaly.h"
#include "autograd/grad_mode.h"
#include "autograd/python_function.h"
#include "bindings/convert.h"
#include "ops/internal.h"

namespace ampgrad::bind {

void init_function(py::module_& m) {
  using autograd::PyNode;
  using autograd::SavedList;
  py::class_<SavedList, std::shared_ptr<SavedList>>(m, "_SavedList")
      .def("unpack", [](const SavedList& s) {
        auto ts = s.unpack();
        py::tuple t(ts.size());
        for (size_t i = 0; i < ts.size(); ++i) t[i] = py::cast(ts[i]);
        return t;
      });

  // Wires a Function call into the graph: edges from the tensor args, history on the outputs
  // (dirty inputs are rebased, returned-unchanged inputs become aliases, non-differentiable
  // outputs stay out), and the saved tensors. Returns (outputs, saved list).
  m.def("_function_apply", [](py::object ctx, const std::string& name, py::object backward_fn, py::list args, py::list outputs,
                              py::list non_diff, py::list dirty, py::list to_save, bool materialize) {
    std::vector<Tensor> ins;
    std::vector<bool> tensor_arg;
    bool any_grad = false;
    for (auto a : args) {
      bool t = is_tensor(a);
      tensor_arg.push_back(t);
      ins.push_back(t ? a.cast<Tensor>() : Tensor());
      any_grad |= t && ins.back().requires_grad();
    }
    std::vector<Tensor> outs;
    for (auto o : outputs) outs.push_back(o.is_none() ? Tensor() : as_tensor(o));
    auto contains = [](py::list l, const Tensor& t) {
      for (auto x : l) if (is_tensor(x) && x.cast<Tensor>().is_same(t)) return true;
      return false;
    };
    for (auto d : dirty) {
      Tensor dt = as_tensor(d);
      bool is_input = false;
      for (auto& in : ins) is_input |= in.defined() && in.is_same(dt);
      AG_CHECK(is_input, "Some elements marked as dirty during the forward method were not returned as output. The inputs that are modified inplace must all be outputs of the Function.");
    }
    auto saved = std::make_shared<SavedList>();
    const bool record = autograd::GradMode::is_enabled() && any_grad;
    std::shared_ptr<PyNode> node;
    if (record) {
      node = std::make_shared<PyNode>();
      node->name_ = name;
      node->ctx = ctx;
      node->backward_fn = backward_fn;
      node->materialize_grads = materialize;
      node->is_tensor_input = tensor_arg;
      for (auto& in : ins) node->next_edges.push_back(in.defined() ? autograd::gradient_edge(in) : autograd::Edge{});
      node->saved = saved;
      saved->owner = node.get();
      autograd::anomaly_on_create(*node);
    }
    for (size_t i = 0; i < outs.size(); ++i) {
      Tensor& o = outs[i];
      if (!o.defined()) {
        if (node) node->input_meta.push_back({{}, ScalarType::Undefined, Device()});  // not a tensor: backward gets None
        continue;
      }
      bool is_dirty = contains(dirty, o);
      bool is_input = false;
      for (auto& in : ins) is_input |= in.defined() && in.is_same(o);
      if (is_dirty && record) check_inplace(o, name.c_str());
      if (is_input && !is_dirty) o = alias(detach(o));  // a returned input becomes a fresh alias
      if (!node) { if (is_dirty) o.bump_version(); continue; }
      bool differentiable = is_floating(o.dtype()) && !contains(non_diff, o);
      node->input_meta.push_back({o.sizes(), o.dtype(), o.device()});
      auto& meta = o.ensure_autograd_meta();
      if (differentiable) {
        meta.requires_grad = true;
        meta.grad_fn = node;
        meta.output_nr = static_cast<uint32_t>(i);
      } else if (!is_input) {
        meta.requires_grad = false;
      }
    }
    for (auto s : to_save) {
      if (s.is_none()) { saved->vars.emplace_back(); continue; }
      Tensor t = as_tensor(s);
      bool is_output = false;
      for (auto& o : outs) is_output |= o.defined() && o.is_same(t);
      saved->vars.emplace_back(t, is_output && node != nullptr);
    }
    py::list out_list;
    for (auto& o : outs) out_list.append(o.defined() ? py::cast(o) : py::none());
    return py::make_tuple(out_list, saved, node ? py::cast(std::static_pointer_cast<autograd::Node>(node)) : py::none());
  });
}

}  // namespace ampgrad::bind
