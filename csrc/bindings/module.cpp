// The extension module ampgrad._C: exception mapping, dtype and device objects, and the
// init_* calls of each binding file.
#include "bindings/convert.h"
#include "kernels/kernels.h"

namespace ampgrad::bind {

void init_generator(py::module_& m);  // bindings/generator.cpp
void init_special(py::module_& m);  // bindings/special.cpp
void init_scan_index(py::module_& m);  // bindings/scan_index.cpp
void init_ctc_fracpool(py::module_& m);  // bindings/ctc_fracpool.cpp
void init_library(py::module_& m);  // bindings/library.cpp
void init_dlpack(py::module_& m);  // bindings/dlpack.cpp (DLPack capsules)

namespace {
// Leaked on purpose: Python objects must not be destroyed after the interpreter finalizes.
py::object& dtype_slot(ScalarType t) {
  static py::object* objs = new py::object[kNumScalarTypes];
  return objs[static_cast<int>(t)];
}
}  // namespace

py::object dtype_object(ScalarType t) { return dtype_slot(t); }

ScalarType dtype_from_handle(py::handle h) {
  if (py::isinstance<DType>(h)) return h.cast<DType&>().t;
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyFloat_Type)) return ScalarType::Float64;
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyLong_Type)) return ScalarType::Int64;
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyBool_Type)) return ScalarType::Bool;
  AG_THROW(TypeError, "expected an ampgrad.dtype, got ", std::string(py::str(py::type::of(h).attr("__name__"))));
}

Device device_from_handle(py::handle h) {
  if (py::isinstance<py::str>(h)) return Device(h.cast<std::string>());
  if (py::isinstance<Device>(h)) return h.cast<Device>();
  if (py::isinstance<py::int_>(h) && !py::isinstance<py::bool_>(h)) {
    int idx = h.cast<int>();
    AG_CHECK(idx >= 0, "Device index must not be negative");
    return Device(DeviceType::CUDA, idx);
  }
  AG_THROW(TypeError, "expected a device (str, int or ampgrad.device), got ", std::string(py::str(py::type::of(h).attr("__name__"))));
}

bool is_number(py::handle h) {
  return PyBool_Check(h.ptr()) || PyLong_Check(h.ptr()) || PyFloat_Check(h.ptr()) ||
         (!is_tensor(h) && (PyObject_HasAttrString(h.ptr(), "__index__") || py::isinstance(h, py::module_::import("numbers").attr("Number"))));
}

Scalar scalar_from_handle(py::handle h) {
  if (PyBool_Check(h.ptr())) return Scalar(h.ptr() == Py_True);
  // torch's Scalar arguments take a 0-dim tensor that does not require grad, as its item()
  if (is_tensor(h)) {
    Tensor t = h.cast<Tensor>();
    AG_CHECK_TYPE(t.dim() == 0 && !t.requires_grad(), "expected a number, got Tensor");
    return scalar_from_handle(h.attr("item")());
  }
  if (PyLong_Check(h.ptr())) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
    if (overflow) {
      // torch: beyond 64 bits is OverflowError; an unsigned 64-bit value is kept as a number (a float
      // here: torch wraps it into int64 for integer tensors, a silent wrong value we do not copy).
      unsigned long long u = PyLong_AsUnsignedLongLong(h.ptr());
      if (u == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_SetString(PyExc_OverflowError, "int too big to convert");
        throw py::error_already_set();
      }
      return Scalar(static_cast<double>(u));
    }
    return Scalar(static_cast<int64_t>(v));
  }
  if (PyFloat_Check(h.ptr())) return Scalar(PyFloat_AS_DOUBLE(h.ptr()));
  // NumPy scalars and other numbers.
  py::module_ np = py::module_::import("numpy");
  if (py::isinstance(h, np.attr("bool_"))) return Scalar(h.cast<bool>());
  if (py::isinstance(h, np.attr("integer"))) return Scalar(h.attr("__int__")().cast<int64_t>());
  if (py::isinstance(h, np.attr("floating"))) return Scalar(h.attr("__float__")().cast<double>());
  if (PyObject_HasAttrString(h.ptr(), "__index__")) return Scalar(h.attr("__index__")().cast<int64_t>());
  if (PyObject_HasAttrString(h.ptr(), "__float__")) return Scalar(h.attr("__float__")().cast<double>());
  AG_THROW(TypeError, "expected a number, got ", std::string(py::str(py::type::of(h).attr("__name__"))));
}

bool is_tensor(py::handle h) {
  static py::handle cls = py::type::of<TensorImpl>();
  return PyObject_TypeCheck(h.ptr(), reinterpret_cast<PyTypeObject*>(cls.ptr()));
}

Tensor as_tensor(py::handle h) {
  if (!is_tensor(h)) AG_THROW(TypeError, "expected Tensor as argument, but got ", std::string(py::str(py::type::of(h).attr("__name__"))));
  return h.cast<Tensor>();
}

Tensor tensor_or_scalar(py::handle h) {
  if (is_tensor(h)) return h.cast<Tensor>();
  if (is_number(h)) return wrap_scalar(scalar_from_handle(h));
  AG_THROW(TypeError, "expected Tensor or number as argument, but got ", std::string(py::str(py::type::of(h).attr("__name__"))));
}

// An element of an int list: a Python int beyond int64 is torch's parser's TypeError ("failed to unpack"), not
// pybind11's cast_error.
static int64_t list_element(py::handle item, const char* what, size_t pos) {
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(item.ptr(), &overflow);
  if (overflow)
    AG_THROW(TypeError, what, " failed to unpack the object at pos ", pos + 1, " with error \"Overflow when unpacking long\"");
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  return v;
}

IntList int_list(py::handle h, const char* what) {
  if (PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr())) return {h.cast<int64_t>()};   // one int: cast_error's ValueError
  if (is_tensor(h)) {
    Tensor t = h.cast<Tensor>();
    AG_CHECK_TYPE(!is_floating(t.dtype()) && t.numel() == 1, what, " must be a sequence of ints");
    return {static_cast<int64_t>(item_double(t))};
  }
  if (!py::isinstance<py::sequence>(h) || py::isinstance<py::str>(h))
    AG_THROW(TypeError, what, " must be tuple of ints, not ", std::string(py::str(py::type::of(h).attr("__name__"))));
  IntList out;
  for (auto item : py::reinterpret_borrow<py::sequence>(h)) {
    if (PyLong_Check(item.ptr()) && !PyBool_Check(item.ptr())) out.push_back(list_element(item, what, out.size()));
    else if (PyObject_HasAttrString(item.ptr(), "__index__") && !PyFloat_Check(item.ptr())) out.push_back(list_element(item.attr("__index__")(), what, out.size()));
    else AG_THROW(TypeError, what, " must be tuple of ints, but found element of type ", std::string(py::str(py::type::of(item).attr("__name__"))));
  }
  return out;
}

IntList int_tuple(py::handle h, const char* what) {
  if (PyLong_Check(h.ptr()))   // int or bool
    AG_THROW(TypeError, what, " must be tuple of ints, not ", std::string(py::str(py::type::of(h).attr("__name__"))));
  return int_list(h, what);
}

OptDims dims_from_handle(py::handle h) {
  if (h.is_none()) return std::nullopt;
  return int_list(h, "dim");
}

}  // namespace ampgrad::bind


using namespace ampgrad;
using namespace ampgrad::bind;

PYBIND11_MODULE(_C, m) {
  m.doc() = "ampgrad engine: tensors, autograd, autocast";
  // The capability this module was compiled for (Note [CPU dispatch] in CMakeLists.txt), torch's names.
  m.def("_cpu_capability", [] {
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512CD__) && defined(__AVX512DQ__) && defined(__AVX512VL__)
    return "AVX512";
#elif defined(__AVX2__) && defined(__FMA__)
    return "AVX2";
#else
    return "DEFAULT";
#endif
  });
  static py::exception<ValueError> value_error(m, "_ValueError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ValueError& e) { PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const IndexError& e) { PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const TypeError& e) { PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const NotImplementedError& e) { PyErr_SetString(PyExc_NotImplementedError, e.what());
    } catch (const py::cast_error& e) {
      // A binding's explicit cast of an argument failed: torch's argument parser says TypeError for a value of
      // the wrong type, and ValueError "Overflow when unpacking long long" for a Python int beyond int64 (the
      // only way an int fails to become an integer).
      const std::string m = e.what();
      if (m.find("of type <class 'int'>") != std::string::npos) PyErr_SetString(PyExc_ValueError, "Overflow when unpacking long long");
      else PyErr_SetString(PyExc_TypeError, m.c_str());
    }
  });

  py::class_<DType>(m, "dtype")
      .def_property_readonly("is_floating_point", [](const DType& d) { return is_floating(d.t); })
      .def_property_readonly("is_signed", [](const DType& d) { return is_signed(d.t); })
      .def_property_readonly("is_complex", [](const DType&) { return false; })
      .def_property_readonly("itemsize", [](const DType& d) { return itemsize(d.t); })
      .def("to_real", [](const DType& d) { return d.t; })
      .def("__repr__", [](const DType& d) { return std::string("ampgrad.") + dtype_name(d.t); })
      .def("__reduce__", [](const DType& d) { return std::string(dtype_name(d.t)); })
      .def_property_readonly("_index", [](const DType& d) { return static_cast<int>(d.t); });
  for (int i = 0; i < kNumScalarTypes; ++i) {
    ScalarType t = static_cast<ScalarType>(i);
    py::object o = py::cast(DType{t}, py::return_value_policy::move);
    dtype_slot(t) = o;
    m.attr(dtype_name(t)) = o;
  }
  m.def("promote_types", [](ScalarType a, ScalarType b) { return promote_types(a, b); }, py::arg("type1"), py::arg("type2"));
  m.def("can_cast", [](ScalarType from, ScalarType to) { return can_cast(from, to); }, py::arg("from_"), py::arg("to"));
  m.def("_scalar_type_name", [](ScalarType t) { return std::string(scalar_type_name(t)); });  // c10 names: "Float", "Long"
  m.def("_cpp_type_name", [](ScalarType t) { return std::string(cpp_type_name(t)); });  // "long int", "c10::Half"
  m.def("get_default_dtype", [] { return default_dtype(); });
  m.def("set_default_dtype", [](ScalarType t) { set_default_dtype(t); });

  py::class_<Device>(m, "device")
      .def(py::init([](py::object spec, std::optional<int> index) {
             Device d = device_from_handle(spec);
             if (index) {
               AG_CHECK(d.index < 0, "type (string) must not include an index because index was passed explicitly: ", d.str());
               AG_CHECK(*index >= 0, "Device index must not be negative");
               d.index = static_cast<int8_t>(*index);
             }
             return d;
           }), py::arg("type"), py::arg("index") = py::none())
      .def_property_readonly("type", [](const Device& d) { return d.type_str(); })
      .def_property_readonly("index", [](const Device& d) -> py::object { if (d.index < 0) return py::none(); return py::int_(d.index); })
      .def("__eq__", [](const Device& a, py::object b) {
        try { Device o = device_from_handle(b); return a.type == o.type && a.index == o.index; } catch (...) { return false; }
      })
      .def("__hash__", [](const Device& d) { return static_cast<int>(d.type) * 1000 + d.index; })
      .def("__str__", [](const Device& d) { return d.str(); })
      .def("__repr__", [](const Device& d) {
        return d.index < 0 ? "device(type='" + d.type_str() + "')" : "device(type='" + d.type_str() + "', index=" + std::to_string(d.index) + ")";
      })
      .def(py::pickle([](const Device& d) { return d.str(); }, [](const std::string& s) { return Device(s); }));
  py::implicitly_convertible<py::str, Device>();

  init_tensor(m);
  init_ops(m);
  init_special(m);
  init_fast_methods(m);
  init_autograd(m);
  init_numpy(m);
  init_amp(m);
  init_function(m);
  init_nn(m);
  init_optim(m);
  init_cuda(m);
  init_testing(m);
  init_generator(m);
  init_linalg_decomp(m);
  init_scan_index(m);
  init_ctc_fracpool(m);
  init_library(m);
  init_dlpack(m);
  m.def("get_num_threads", [] { return cpu::get_num_threads(); });
  m.def("set_num_threads", [](int n) { cpu::set_num_threads(n); }, py::arg("int"));
  m.def("_cuda_is_available", [] { return cuda::is_available(); });
}
