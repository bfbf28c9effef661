// Tensor.__init__(data, requires_grad): turns a bare instance of a Python subclass of Tensor into
// an alias of `data` (shares storage and version counter, no history). nn.Parameter uses it, as
// torch's Parameter uses Tensor._make_subclass.
#include "bindings/convert.h"

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
}

}  // namespace ampgrad::bind
