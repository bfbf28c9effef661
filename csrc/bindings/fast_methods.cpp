// Note [Fast methods]: the hottest Tensor methods (the unary math methods and the arithmetic
// operators) are plain CPython methods (METH_NOARGS / METH_O) instead of pybind11 functions: a
// pybind11 call builds a function_call record and runs overload resolution, about 70 ns, a sixth
// of a whole 16-element op. They replace the pybind11 definitions made in tensor.cpp / ops.cpp
// (same names, same behaviour); errors go through pybind11's exception translators, so every
// exception type is the one the pybind11 path raises.
#include "bindings/convert.h"
#include "bindings/gate.h"
#include "ops/internal.h"

namespace ampgrad::bind {

namespace {
Tensor self_of(PyObject* self) {
  py::detail::make_caster<Tensor> c;
  if (!c.load(self, false)) throw py::type_error("descriptor requires an ampgrad.Tensor");
  return py::detail::cast_op<Tensor>(std::move(c));
}

PyObject* result(const Tensor& t) {
  return py::detail::make_caster<Tensor>::cast(t, py::return_value_policy::move, {}).ptr();
}

// Behind the op's autocast gate (Note [Autocast gate]); for an op without a policy, F itself.
template <Op op, Tensor (*F)(const Tensor&)>
PyObject* unary(PyObject* self, PyObject*) {
  try {
    return result(gated<op>([](const Tensor& a) { return F(a); })(self_of(self)));
  } catch (...) {
    py::detail::try_translate_exceptions();
    return nullptr;
  }
}

// A binary operator: NotImplemented when the other operand is neither a tensor nor a number, so
// Python tries the reflected method (as binop/rbinop in tensor.cpp).
template <Tensor (*F)(const Tensor&, const Tensor&), bool Reflected>
PyObject* binary(PyObject* self, PyObject* other) {
  try {
    if (!is_tensor(other) && !is_number(other)) Py_RETURN_NOTIMPLEMENTED;
    Tensor a = self_of(self), b = tensor_or_scalar(other);
    return result(Reflected ? F(b, a) : F(a, b));
  } catch (...) {
    py::detail::try_translate_exceptions();
    return nullptr;
  }
}

Tensor add2(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor sub2(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor mul2(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor div2(const Tensor& a, const Tensor& b) { return div(a, b); }

void install(py::handle cls, const char* name, PyCFunction fn, int flags) {
  // The method defs must outlive the type: one static table entry per installed name.
  static std::vector<std::unique_ptr<PyMethodDef>> defs;
  defs.push_back(std::make_unique<PyMethodDef>(PyMethodDef{name, fn, flags, nullptr}));
  PyObject* descr = PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls.ptr()), defs.back().get());
  if (!descr) throw py::error_already_set();
  py::setattr(cls, name, py::reinterpret_steal<py::object>(descr));
}
}  // namespace

void init_fast_methods(py::module_& m) {
  py::object cls = m.attr("Tensor");
#define AG_UNARY(name, cuda, cpu, dispatch, functor, api) AG_IF_GENERATED(api, install(cls, #name, unary<Op::name, &name>, METH_NOARGS);)
#define AG_OP(name, cuda, cpu, family)
#include "ops/op_list.def"
  install(cls, "__neg__", unary<Op::neg, &neg>, METH_NOARGS);
  install(cls, "__add__", binary<&add2, false>, METH_O);
  install(cls, "__radd__", binary<&add2, true>, METH_O);
  install(cls, "__sub__", binary<&sub2, false>, METH_O);
  install(cls, "__rsub__", binary<&sub2, true>, METH_O);
  install(cls, "__mul__", binary<&mul2, false>, METH_O);
  install(cls, "__rmul__", binary<&mul2, true>, METH_O);
  install(cls, "__truediv__", binary<&div2, false>, METH_O);
}

}  // namespace ampgrad::bind
