// pybind11 casters: Tensor <-> the Python Tensor object (identity kept: one Python object per
// TensorImpl while it lives), ScalarType <-> ampgrad.dtype, Device <-> ampgrad.device / str,
// and Python numbers -> Scalar.
#pragma once
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/numpy.h>
#include "autograd/node.h"
#include "ops/ops.h"

namespace py = pybind11;

namespace ampgrad::bind {

struct DType { ScalarType t; };
py::object dtype_object(ScalarType t);
ScalarType dtype_from_handle(py::handle h);  // ampgrad.dtype or Python type float/int/bool
Device device_from_handle(py::handle h);
Scalar scalar_from_handle(py::handle h);      // raises TypeError when not a number
bool is_number(py::handle h);
// A tensor argument of a binary op: a Tensor, or a Python number wrapped as a weak scalar.
Tensor tensor_or_scalar(py::handle h);
bool is_tensor(py::handle h);
Tensor as_tensor(py::handle h);  // Tensor only (TypeError otherwise)
OptDims dims_from_handle(py::handle h);  // None, int, or sequence of ints
IntList int_list(py::handle h, const char* what);  // int or sequence (or varargs tuple)
// A sequence of ints only (torch's int[] without a size: permute's dims, as_strided's size); `what` is
// torch's "op(): argument 'name' (position N)"
IntList int_tuple(py::handle h, const char* what);

// A graph node as a Python object whose type is named after the node (MulBackward0,
// AccumulateGrad, ...), as torch's node classes are.
py::object node_object(const std::shared_ptr<autograd::Node>& n);

void init_tensor(py::module_& m);
void init_ops(py::module_& m);
void init_autograd(py::module_& m);
void init_numpy(py::module_& m);
void init_amp(py::module_& m);
void init_function(py::module_& m);
void init_nn(py::module_& m);
void init_optim(py::module_& m);
void init_cuda(py::module_& m);
void init_testing(py::module_& m);  // private helpers for the test suite
void init_fast_methods(py::module_& m);  // after init_tensor / init_ops: replaces their hottest methods
void init_linalg_decomp(py::module_& m);  // bindings/linalg_decomp.cpp

}  // namespace ampgrad::bind

namespace pybind11::detail {

// Note [Int64 arguments]: torch's parser takes any Python int for an int parameter and then fails
// to unpack one beyond int64 with ValueError "Overflow when unpacking long long"; pybind11's caster
// only declined it, so the call failed as "incompatible function arguments" (a TypeError). This
// caster is pybind11's for int64_t except there: declined in the no-conversion pass of an
// overloaded function (another overload may take the int as a Scalar), torch's ValueError in the
// conversion pass. Every TU that binds an int64_t argument includes this header.
template <> struct type_caster<long> {
  PYBIND11_TYPE_CASTER(long, io_name("typing.SupportsInt | typing.SupportsIndex", "int"));
  bool load(handle src, bool convert) {
    if (src && PyLong_Check(src.ptr())) {
      int overflow = 0;
      const long long v = PyLong_AsLongLongAndOverflow(src.ptr(), &overflow);
      if (overflow) {
        if (convert) throw value_error("Overflow when unpacking long long");
        return false;
      }
      if (v == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return false;
      }
      value = static_cast<long>(v);
      return true;
    }
    type_caster<long long> other;   // floats declined, __index__ objects taken: pybind11's rules
    if (!other.load(src, convert)) return false;
    value = static_cast<long>(static_cast<long long>(other));
    return true;
  }
  static handle cast(long v, return_value_policy, handle) { return PyLong_FromLong(v); }
};
static_assert(std::is_same_v<int64_t, long>, "Note [Int64 arguments] assumes int64_t is long");

// Inside an int list the same int is torch's TypeError ("failed to unpack the object at pos N").
template <> struct type_caster<std::vector<long>> : list_caster<std::vector<long>, long> {
  bool load(handle src, bool convert) {
    try {
      return list_caster<std::vector<long>, long>::load(src, convert);
    } catch (const value_error&) {
      throw type_error("int list argument failed to unpack an element with error \"Overflow when unpacking long long\"");
    }
  }
};

// Note [Tensor caster]: every op crosses this twice, so it skips pybind11's generic path (a
// type_info hash lookup by typeid on every load and every cast): the Python type and its
// type_info are looked up once.
inline const type_info* tensor_type_info() {
  static const type_info* ti = get_type_info(typeid(ampgrad::TensorImpl), /*throw_if_missing=*/true);
  return ti;
}

template <> struct type_caster<ampgrad::Tensor> {
  PYBIND11_TYPE_CASTER(ampgrad::Tensor, const_name("Tensor"));
  bool load(handle src, bool) {
    // Tensor and its Python subclasses (nn.Parameter, ...) all hold one shared_ptr<TensorImpl>.
    if (!PyObject_TypeCheck(src.ptr(), tensor_type_info()->type)) return false;
    auto vh = reinterpret_cast<instance*>(src.ptr())->get_value_and_holder(tensor_type_info(), false);
    if (!vh || !vh.holder_constructed()) return false;
    value = ampgrad::Tensor(vh.template holder<std::shared_ptr<ampgrad::TensorImpl>>());
    return true;
  }
  static handle cast(const ampgrad::Tensor& t, return_value_policy, handle) {
    if (!t.defined()) return none().release();
    const auto& holder = t.impl_ptr();
#if PYBIND11_VERSION_HEX >= 0x03010000
    return type_caster_generic::cast(cast_sources(holder.get(), tensor_type_info()), return_value_policy::take_ownership,
                                     {}, nullptr, nullptr, &holder);
#else
    return type_caster_generic::cast(holder.get(), return_value_policy::take_ownership, {}, tensor_type_info(), nullptr,
                                     nullptr, &holder);
#endif
  }
};

template <> struct type_caster<ampgrad::ScalarType> {
  PYBIND11_TYPE_CASTER(ampgrad::ScalarType, const_name("dtype"));
  bool load(handle src, bool) {
    if (src.is_none()) return false;
    try { value = ampgrad::bind::dtype_from_handle(src); return true; } catch (...) { return false; }
  }
  static handle cast(ampgrad::ScalarType t, return_value_policy, handle) { return ampgrad::bind::dtype_object(t).release(); }
};

template <> struct type_caster<ampgrad::Scalar> {
  PYBIND11_TYPE_CASTER(ampgrad::Scalar, const_name("Number"));
  bool load(handle src, bool) {
    if (!ampgrad::bind::is_number(src)) return false;
    value = ampgrad::bind::scalar_from_handle(src);
    return true;
  }
  static handle cast(const ampgrad::Scalar& s, return_value_policy, handle) {
    if (s.kind == ampgrad::Scalar::Float) return PyFloat_FromDouble(s.d);
    if (s.kind == ampgrad::Scalar::Bool) return PyBool_FromLong(s.i);
    return PyLong_FromLongLong(s.i);
  }
};

}  // namespace pybind11::detail
