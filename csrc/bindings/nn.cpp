// Tensor.__init__(data, requires_grad): turns a bare instance of a Python subclass of Tensor into
// an alias of `data` (shares storage and version counter, no history). nn.Parameter uses it, as
// torch's Parameter uses Tensor._make_subclass.
#include "bindings/convert.h"
#include "ops/rnn.h"
#include "ops/activation_more.h"

namespace ampgrad::bind {

void init_nn(py::module_& m) {
  auto cls = py::reinterpret_borrow<py::class_<TensorImpl, std::shared_ptr<TensorImpl>>>(m.attr("Tensor"));
  cls.def(py::init([](const Tensor& data, bool requires_grad) {
    Tensor t = detach(data);
    if (requires_grad) {
      AG_CHECK(is_floating(t.dtype()), "Only Tensors of floating point and complex dtype can require gradients");
      t.set_requires_grad(true);
    }
    return t.impl_ptr();
  }), py::arg("data"), py::arg("requires_grad") = false);
  // torch's legacy constructor: Tensor(), Tensor(2, 3), Tensor([1, 2]), Tensor(size=...), device=...
  // (ampgrad/_legacy.py decides; the new object wraps the tensor it returns).
  cls.def(py::init([](py::args args, py::kwargs kwargs) {
    py::object t = py::module_::import("ampgrad._legacy").attr("_new")(py::none(), args, kwargs);
    return t.cast<Tensor>().impl_ptr();
  }));

  // Fused nn ops (ops/attention.cpp, ops/nn_misc.cpp); python/ampgrad/nn/functional.py holds the
  // torch signatures and the autocast gate (@engine_op).
  m.def("_sdpa_flash", [](const Tensor& q, const Tensor& k, const Tensor& v, std::optional<Tensor> mask, double dropout_p,
                          bool is_causal, std::optional<double> scale, bool enable_gqa) -> py::object {
    auto r = sdpa_flash(q, k, v, mask, dropout_p, is_causal, scale, enable_gqa);
    return r ? py::cast(*r) : py::object(py::none());
  });
  m.def("_fused_loss", [](int64_t kind, const Tensor& x, const Tensor& t, std::optional<Tensor> w, std::optional<Tensor> pw,
                          int64_t reduction, double beta) { return fused_loss(kind, x, t, w, pw, reduction, beta); });
  m.def("_dropout", [](const Tensor& x, double p) { return fused_dropout(x, p); });
  m.def("_dropout_mask", [](py::handle shape, ScalarType dt, Device dev, double p) { return dropout_mask(int_list(shape, "size"), dt, dev, p); });
  m.def("_embedding", [](const Tensor& w, const Tensor& idx, int64_t padding_idx, bool scale) { return fused_embedding(w, idx, padding_idx, scale); });
  // Fused RNN cells (ops/rnn.cpp); python/ampgrad/nn/modules/rnn.py composes the cells and modules on them.
  m.def("_lstm_cell_fused", [](const Tensor& gates, const Tensor& cx) { auto r = lstm_cell_fused(gates, cx); return py::make_tuple(r[0], r[1]); });
  m.def("_gru_cell_fused", [](const Tensor& gi, const Tensor& gh, const Tensor& hx) { return gru_cell_fused(gi, gh, hx); });
  // hardshrink, softshrink, threshold, rrelu (ops/activation_more.cpp)
  m.def("_hardshrink", [](const Tensor& a, double l) { return hardshrink(a, l); });
  m.def("_softshrink", [](const Tensor& a, double l) { return softshrink(a, l); });
  m.def("_threshold", [](const Tensor& a, double th, double v) { return threshold(a, th, v); });
  m.def("_threshold_", [](py::object self, double th, double v) { Tensor t = self.cast<Tensor>(); threshold_(t, th, v); return self; });
  m.def("_rrelu", [](const Tensor& a, double lo, double up, bool training) { return rrelu(a, lo, up, training); });
  m.def("_rrelu_", [](py::object self, double lo, double up, bool training) { Tensor t = self.cast<Tensor>(); rrelu_(t, lo, up, training); return self; });
  m.def("_hardshrink_backward", [](const Tensor& g, const Tensor& x, double l) { return hardshrink_backward(g, x, l); });
  m.def("_softshrink_backward", [](const Tensor& g, const Tensor& x, double l) { return softshrink_backward(g, x, l); });
  m.def("_threshold_backward", [](const Tensor& g, const Tensor& x, double th) { return threshold_backward(g, x, th); });
}

}  // namespace ampgrad::bind
