// The Tensor class: properties, Python operators (reflected and in place), and the methods that
// are also module functions (registered on both by def_both).
#include "core/overlap.h"
#include "autograd/engine.h"
#include "autograd/grad_mode.h"
#include "bindings/convert.h"
#include "bindings/gate.h"
#include "ops/internal.h"

namespace ampgrad::bind {

namespace {
PyObject* g_size_cls = nullptr;  // ampgrad.Size (a tuple subclass), set at import
py::object make_size(const Shape& s) {
  py::tuple t(s.size());
  for (size_t i = 0; i < s.size(); ++i) t[i] = py::int_(s[i]);
  if (!g_size_cls) return std::move(t);
  return py::reinterpret_borrow<py::object>(g_size_cls)(t);
}

// Binary operator: NotImplemented when the other operand is neither a tensor nor a number, so
// Python can try the reflected method.
template <typename F>
py::object binop(const Tensor& self, py::handle other, F f) {
  if (!is_tensor(other) && !is_number(other)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  return py::cast(f(self, tensor_or_scalar(other)));
}
template <typename F>
py::object rbinop(const Tensor& self, py::handle other, F f) {
  if (!is_tensor(other) && !is_number(other)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  return py::cast(f(tensor_or_scalar(other), self));
}
template <typename F>
py::object ibinop(py::object self_obj, py::handle other, F f) {
  if (!is_tensor(other) && !is_number(other)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  Tensor self = self_obj.cast<Tensor>();
  f(self, tensor_or_scalar(other));
  return self_obj;
}

IntList shape_args(const py::args& args, const char* what) {
  if (args.size() && PyBool_Check(args[0].ptr()))   // not an int for torch's parser: no varargs form
    AG_THROW(TypeError, what, " must be tuple of ints, not bool");
  if (args.size() == 1 && !PyLong_Check(args[0].ptr())) return int_list(args[0], what);
  return int_list(args, what);
}

// The shape of a *args method, also given as torch's keyword (permute(dims=...), reshape(shape=...)).
IntList shape_args(const py::args& args, const py::kwargs& kw, const char* op, const char* name) {
  for (auto kv : kw)
    if (std::string(py::str(kv.first)) != name)
      AG_THROW(TypeError, op, "() got an unexpected keyword argument '", std::string(py::str(kv.first)), "'");
  const std::string what = std::string(op) + "(): argument '" + name + "'";
  if (args.size() == 0 && !kw.contains(name))
    AG_THROW(TypeError, op, "() missing 1 required positional arguments: \"", name, "\"");
  if (kw.contains(name)) {
    if (args.size()) AG_THROW(TypeError, op, "() got multiple values for argument '", name, "'");
    return shape_args(py::make_tuple(kw[name]), what.c_str());
  }
  return shape_args(args, (what + " (position 1)").c_str());
}

Tensor pow_op(const Tensor& a, const Tensor& b) { return pow(a, b); }
}  // namespace

void init_tensor(py::module_& m) {
  auto cls = py::class_<TensorImpl, std::shared_ptr<TensorImpl>>(m, "Tensor", py::dynamic_attr());
  m.def("_set_size_class", [](py::object c) { g_size_cls = c.release().ptr(); });

  cls.def_property_readonly("shape", [](const Tensor& t) { return make_size(t.sizes()); })
      .def("size", [](const Tensor& t, py::object dim) -> py::object {
        if (dim.is_none()) return make_size(t.sizes());
        return py::int_(t.size(dim.cast<int64_t>()));
      }, py::arg("dim") = py::none())
      .def("stride", [](const Tensor& t, py::object dim) -> py::object {
        if (dim.is_none()) { py::tuple r(t.dim()); for (int64_t i = 0; i < t.dim(); ++i) r[i] = t.strides()[i]; return r; }
        return py::int_(t.stride(dim.cast<int64_t>()));
      }, py::arg("dim") = py::none())
      .def_property_readonly("dtype", [](const Tensor& t) { return t.dtype(); })
      .def_property_readonly("device", [](const Tensor& t) { return t.device(); })
      .def_property_readonly("is_cuda", [](const Tensor& t) { return t.device().is_cuda(); })
      .def_property_readonly("is_cpu", [](const Tensor& t) { return t.device().is_cpu(); })
      .def_property_readonly("ndim", [](const Tensor& t) { return t.dim(); })
      .def("dim", [](const Tensor& t) { return t.dim(); })
      .def("ndimension", [](const Tensor& t) { return t.dim(); })
      .def("numel", [](const Tensor& t) { return t.numel(); })
      .def("nelement", [](const Tensor& t) { return t.numel(); })
      .def("element_size", [](const Tensor& t) { return itemsize(t.dtype()); })
      .def_property_readonly("itemsize", [](const Tensor& t) { return itemsize(t.dtype()); })
      .def_property_readonly("nbytes", [](const Tensor& t) { return t.numel() * itemsize(t.dtype()); })
      .def("storage_offset", [](const Tensor& t) { return t.storage_offset(); })
      .def("is_contiguous", [](const Tensor& t, py::object) { return t.is_contiguous(); }, py::arg("memory_format") = py::none())
      .def("is_floating_point", [](const Tensor& t) { return t.is_floating_point(); })
      .def("is_complex", [](const Tensor&) { return false; })
      .def("data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()); })
      .def("untyped_storage_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.storage()->data); })
      // Note [Shared memory]
      .def("share_memory_", [](py::object self) { share_memory(self.cast<Tensor>().storage()); return self; })
      .def("is_shared", [](const Tensor& t) { return t.device().is_cuda() || t.storage()->shm_fd >= 0; })
      .def("_share_fd_cpu_", [](const Tensor& t) {
        AG_CHECK(t.device().is_cpu(), "_share_fd_cpu_: a CPU tensor is needed, got ", t.device().str());
        share_memory(t.storage());
        return py::make_tuple(t.storage()->shm_fd, t.storage()->nbytes);
      })
      .def_property_readonly("_version", [](const Tensor& t) {
        AG_CHECK(!t.is_inference(), "Inference tensors do not track version counter.");
        return t.version();
      })
      .def("is_inference", [](const Tensor& t) { return t.is_inference(); })
      .def_property_readonly("is_leaf", [](const Tensor& t) { return t.is_leaf(); })
      .def_property_readonly("output_nr", [](const Tensor& t) { return t.output_nr(); })
      .def("_is_view", [](const Tensor& t) { return t.is_view(); })  // a method, as in torch
      .def_property_readonly("_base", [](const Tensor& t) { return t.base(); })
      .def_property_readonly("_is_wrapped_number", [](const Tensor& t) { return t.impl()->wrapped_number; })
      .def_property("requires_grad", [](const Tensor& t) { return t.requires_grad(); },
                    [](Tensor& t, py::object ro) {
                      AG_CHECK(py::isinstance<py::bool_>(ro), "requires_grad must be a bool");
                      bool r = ro.cast<bool>();
                      if (!t.is_leaf() && !r)
                        AG_THROW(RuntimeError, "you can only change requires_grad flags of leaf variables. If you want to use a "
                                 "computed variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().");
                      t.set_requires_grad(r);
                    })
      .def("requires_grad_", [](py::object self, py::object ro) {
        AG_CHECK_TYPE(py::isinstance<py::bool_>(ro), "requires_grad_(): argument 'requires_grad' (position 1) must be bool, not ",
                      std::string(py::str(py::type::of(ro).attr("__name__"))));
        bool r = ro.cast<bool>();
        Tensor t = self.cast<Tensor>();
        AG_CHECK(!r || is_floating(t.dtype()), "only Tensors of floating point dtype can require gradients");
        if (!t.is_leaf() && !r)
          AG_THROW(RuntimeError, "you can only change requires_grad flags of leaf variables. If you want to use a "
                   "computed variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().");
        t.set_requires_grad(r);
        return self;
      }, py::arg("requires_grad") = true)
      .def_property("grad", [](const Tensor& t) { return t.autograd_meta() ? t.autograd_meta()->grad : Tensor(); },
                    [](Tensor& t, py::object g) {
                      if (g.is_none()) { if (t.autograd_meta()) t.autograd_meta()->grad = Tensor(); return; }
                      if (!is_tensor(g))
                        AG_THROW(TypeError, "assigned grad expected to be a Tensor or None but got grad of type ",
                                 std::string(py::str(py::type::of(g).attr("__name__"))));
                      Tensor gt = g.cast<Tensor>();
                      AG_CHECK(!gt.is_same(t), "can't assign Variable as its own grad");
                      AG_CHECK(gt.dtype() == t.dtype(), "attempting to assign a gradient with dtype '", cpp_type_name(gt.dtype()),
                               "' to a tensor with grad_dtype '", scalar_type_name(t.dtype()), "'. The gradient must match the tensor's grad_dtype "
                               "(defaults to the tensor's dtype).");
                      AG_CHECK(gt.device() == t.device(), "attempting to assign a gradient located on device '", gt.device().str(),
                               "' to a tensor located on device '", t.device().str(), "'. Please ensure that the gradient and the tensor are on the same device");
                      AG_CHECK(gt.sizes() == t.sizes(), "attempting to assign a gradient of size '", shape_str(gt.sizes()), "' to a tensor of size '",
                               shape_str(t.sizes()), "'. Please ensure that the gradient and the tensor are the same size");
                      t.mutable_grad() = gt;
                    })
      .def_property("data", [](const Tensor& t) {
                      Tensor d = detach(t);
                      d.impl()->version = std::make_shared<VersionCounter>();  // .data is not tracked
                      return d;
                    },
                    [](Tensor& t, py::object so) {
                      AG_CHECK_TYPE(is_tensor(so), "Variable data has to be a tensor, but got ",
                                    std::string(py::str(py::type::of(so).attr("__name__"))));
                      Tensor src = so.cast<Tensor>();
                      auto* i = t.impl();
                      i->storage = src.storage(); i->sizes = src.sizes(); i->strides = src.strides();
                      i->offset = src.storage_offset(); i->dtype = src.dtype(); i->refresh();
                      // The old counter may share an allocation with the old storage (Note [Fresh
                      // tensor block]): a fresh one with the same count lets that memory go.
                      i->version = std::make_shared<VersionCounter>(*i->version);
                    })
      .def_property_readonly("grad_fn", [](const Tensor& t) { return node_object(t.grad_fn()); })
      .def_property_readonly("retains_grad", [](const Tensor& t) { return t.autograd_meta() && t.autograd_meta()->retains_grad; })
      .def("detach", [](const Tensor& t) { return detach(t); })
      .def("detach_", [](py::object self) {
        Tensor t = self.cast<Tensor>();
        AG_CHECK(!t.is_view(), "Can't detach views in-place. Use detach() instead.");
        if (auto* m = t.autograd_meta()) { m->grad_fn = nullptr; m->requires_grad = false; m->output_nr = 0; }
        return self;
      })
      .def("__len__", [](const Tensor& t) {
        if (t.dim() == 0) throw py::type_error("len() of a 0-d tensor");
        return t.sizes()[0];
      })
      .def("__hash__", [](py::object self) { return reinterpret_cast<intptr_t>(self.ptr()); })
      .def("__bool__", [](const Tensor& t) {
        AG_CHECK(t.numel() == 1, "Boolean value of Tensor with more than one value is ambiguous");
        return item_double(t) != 0;
      })
      .def("__float__", [](const Tensor& t) {
        AG_CHECK(t.numel() == 1, "only one element tensors can be converted to Python scalars");
        return item_double(t);
      })
      .def("__int__", [](const Tensor& t) {
        AG_CHECK(t.numel() == 1, "only one element tensors can be converted to Python scalars");
        return static_cast<int64_t>(item_double(t));
      })
      .def("__index__", [](const Tensor& t) {
        AG_CHECK_TYPE(!is_floating(t.dtype()) && t.numel() == 1, "only integer tensors of a single element can be converted to an index");
        return static_cast<int64_t>(item_double(t));
      })
      .def("item", [](const Tensor& t) -> py::object {
        AG_CHECK(t.numel() == 1, "a Tensor with ", t.numel(), " elements cannot be converted to Scalar");
        double v = item_double(t);
        if (is_floating(t.dtype())) return py::float_(v);
        if (t.dtype() == ScalarType::Bool) return py::bool_(v != 0);
        if (t.dtype() == ScalarType::Int64 || t.dtype() == ScalarType::UInt64) {  // exact for all 64-bit values
          Tensor c = t.device().is_cpu() ? t : to_device(t, Device());
          if (t.dtype() == ScalarType::UInt64) return py::int_(*c.data<uint64_t>());
          return py::int_(*c.data<int64_t>());
        }
        return py::int_(static_cast<int64_t>(v));
      });

  // ---- operators
  cls.def("__add__", [](const Tensor& a, py::handle b) { return binop(a, b, [](const Tensor& x, const Tensor& y) { return add(x, y); }); })
      .def("__radd__", [](const Tensor& a, py::handle b) { return rbinop(a, b, [](const Tensor& x, const Tensor& y) { return add(x, y); }); })
      .def("__iadd__", [](py::object a, py::handle b) { return ibinop(a, b, [](Tensor& x, const Tensor& y) { binary_(Op::add, x, y); }); })
      .def("__sub__", [](const Tensor& a, py::handle b) { return binop(a, b, [](const Tensor& x, const Tensor& y) { return sub(x, y); }); })
      .def("__rsub__", [](const Tensor& a, py::handle b) { return rbinop(a, b, [](const Tensor& x, const Tensor& y) { return sub(x, y); }); })
      .def("__isub__", [](py::object a, py::handle b) { return ibinop(a, b, [](Tensor& x, const Tensor& y) { binary_(Op::sub, x, y); }); })
      .def("__mul__", [](const Tensor& a, py::handle b) { return binop(a, b, [](const Tensor& x, const Tensor& y) { return mul(x, y); }); })
      .def("__rmul__", [](const Tensor& a, py::handle b) { return rbinop(a, b, [](const Tensor& x, const Tensor& y) { return mul(x, y); }); })
      .def("__imul__", [](py::object a, py::handle b) { return ibinop(a, b, [](Tensor& x, const Tensor& y) { binary_(Op::mul, x, y); }); })
      .def("__truediv__", [](const Tensor& a, py::handle b) { return binop(a, b, [](const Tensor& x, const Tensor& y) { return div(x, y); }); })
      .def("__rtruediv__", gated<Op::rtruediv>([](const Tensor& a, py::handle b) {
        return rbinop(a, b, [](const Tensor& x, const Tensor& y) {
          // torch computes number / tensor as tensor.reciprocal() * number (the reciprocal rounds
          // to the tensor's dtype first, which shows in fp16/bf16).
          return mul(reciprocal(y), x);
        });
      }))
      .def("__itruediv__", [](py::object a, py::handle b) { return ibinop(a, b, [](Tensor& x, const Tensor& y) { binary_(Op::div, x, y); }); })
      .def("__floordiv__", [](const Tensor& a, py::handle b) { return binop(a, b, [](const Tensor& x, const Tensor& y) { return div(x, y, "floor"); }); })
      .def("__rfloordiv__", [](const Tensor& a, py::handle b) { return rbinop(a, b, [](const Tensor& x, const Tensor& y) { return div(x, y, "floor"); }); })
      .def("__ifloordiv__", [](py::object a, py::handle b) { return ibinop(a, b, [](Tensor& x, const Tensor& y) { binary_(Op::div, x, y, Scalar(int64_t(1)), "floor"); }); })
      .def("__mod__", [](const Tensor& a, py::handle b) { return binop(a, b, [](const Tensor& x, const Tensor& y) { return remainder(x, y); }); })
      .def("__rmod__", [](const Tensor& a, py::handle b) { return rbinop(a, b, [](const Tensor& x, const Tensor& y) { return remainder(x, y); }); })
      .def("__imod__", [](py::object a, py::handle b) { return ibinop(a, b, [](Tensor& x, const Tensor& y) { binary_(Op::remainder, x, y); }); })
      .def("__pow__", gated<Op::pow>([](const Tensor& a, py::handle b, py::object) {
        return binop(a, b, [](const Tensor& x, const Tensor& y) { return pow(x, y); });
      }), py::arg("other"), py::arg("mod") = py::none())
      .def("__rpow__", gated<Op::rpow>([](const Tensor& a, py::handle b, py::object) {
        return rbinop(a, b, [](const Tensor& x, const Tensor& y) { return pow(x, y); });
      }), py::arg("other"), py::arg("mod") = py::none())
      .def("__ipow__", [](py::object a, py::handle b) { return ibinop(a, b, [](Tensor& x, const Tensor& y) { binary_(Op::pow, x, y); }); })
      .def("__matmul__", gated<Op::matmul>([](const Tensor& a, py::handle b) -> py::object {
        if (!is_tensor(b)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
        return py::cast(matmul(a, b.cast<Tensor>()));
      }))
      .def("__rmatmul__", gated<Op::matmul>([](const Tensor& a, py::handle b) -> py::object {
        if (!is_tensor(b)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
        return py::cast(matmul(b.cast<Tensor>(), a));
      }))
      .def("__neg__", [](const Tensor& a) { return neg(a); })
      .def("__pos__", [](const Tensor& a) {
        AG_CHECK(a.dtype() != ScalarType::Bool, "The `+` operator, on a bool tensor is not supported.");
        return a;
      })
      .def("__abs__", [](const Tensor& a) { return abs(a); })
      .def("__invert__", [](const Tensor& a) {
        AG_CHECK_TYPE(!is_floating(a.dtype()), "~ (operator.invert) is only implemented on integer and Boolean-type tensors");
        return bitwise_not(a);
      });
#define AG_CMP(py_name, OP)                                                                                   \
  cls.def(py_name, [](const Tensor& a, py::handle b) { return binop(a, b, [](const Tensor& x, const Tensor& y) { return compare(Op::OP, x, y); }); });
  AG_CMP("__eq__", eq) AG_CMP("__ne__", ne) AG_CMP("__lt__", lt) AG_CMP("__le__", le) AG_CMP("__gt__", gt) AG_CMP("__ge__", ge)
#undef AG_CMP
#define AG_BIT(py_name, r_name, i_name, OP)                                                                   \
  cls.def(py_name, [](const Tensor& a, py::handle b) { return binop(a, b, [](const Tensor& x, const Tensor& y) { return bitwise(Op::OP, x, y); }); }) \
     .def(r_name, [](const Tensor& a, py::handle b) { return rbinop(a, b, [](const Tensor& x, const Tensor& y) { return bitwise(Op::OP, x, y); }); }) \
     .def(i_name, [](py::object a, py::handle b) { return ibinop(a, b, [](Tensor& x, const Tensor& y) { binary_(Op::OP, x, y); }); });
  AG_BIT("__and__", "__rand__", "__iand__", bitwise_and)
  AG_BIT("__or__", "__ror__", "__ior__", bitwise_or)
  AG_BIT("__xor__", "__rxor__", "__ixor__", bitwise_xor)
#undef AG_BIT
  (void)pow_op;

  // ---- view methods (shape arguments as *args or one sequence)
  cls.def("view", [](const Tensor& t, py::args a, py::kwargs kw) {
        if (a.size() == 1 && py::isinstance<DType>(a[0])) return view_dtype(t, a[0].cast<DType>().t);
        if (!a.size() && kw.size() == 1 && kw.contains("dtype")) return view_dtype(t, dtype_from_handle(kw["dtype"]));
        return view(t, shape_args(a, kw, "view", "size"));
      })
      .def("reshape", [](const Tensor& t, py::args a, py::kwargs kw) { return reshape(t, shape_args(a, kw, "reshape", "shape")); })
      .def("expand", [](const Tensor& t, py::args a, py::kwargs kw) {
        // torch's expand(*sizes, implicit=False): `implicit` only marks the expansion for tracing
        for (auto kv : kw)
          if (std::string(py::str(kv.first)) != "implicit" && std::string(py::str(kv.first)) != "size")
            AG_THROW(TypeError, "expand() got an unexpected keyword argument '", std::string(py::str(kv.first)), "'");
        if (kw.contains("size")) {
          if (a.size()) AG_THROW(TypeError, "expand() got multiple values for argument 'size'");
          return expand_op(t, shape_args(py::make_tuple(kw["size"]), "expand(): argument 'size'"));
        }
        if (!a.size()) AG_THROW(TypeError, "expand() missing 1 required positional arguments: \"size\"");
        return expand_op(t, shape_args(a, "expand(): argument 'size'"));
      })
      .def("repeat", [](const Tensor& t, py::args a, py::kwargs kw) { return repeat(t, shape_args(a, kw, "repeat", "repeats")); })
      .def("tile", [](const Tensor& t, py::args a, py::kwargs kw) {
        IntList r = shape_args(a, kw, "tile", "dims");
        while (r.size() < static_cast<size_t>(t.dim())) r.insert(r.begin(), 1);
        return repeat(t, r);
      })
      .def("permute", [](const Tensor& t, py::args a, py::kwargs kw) {
        AG_CHECK_TYPE(a.size() > 0 || kw.contains("dims"), "permute() missing 1 required positional arguments: \"dims\"");
        return permute(t, shape_args(a, kw, "permute", "dims"));
      })
      .def("flip", [](const Tensor& t, py::args a, py::kwargs kw) {
        if (kw.contains("dims") && py::isinstance<py::int_>(kw["dims"]))  // x.flip(1) is varargs; dims=1 is not
          throw py::type_error("flip(): argument 'dims' must be tuple of ints, not " +
                               std::string(py::str(py::type::of(kw["dims"]).attr("__name__"))));
        return flip(t, shape_args(a, kw, "flip", "dims"));
      })
      .def("expand_as", [](const Tensor& t, const Tensor& o) { return expand_op(t, IntList(o.sizes().begin(), o.sizes().end())); },
           py::arg("other"))
      .def("view_as", [](const Tensor& t, const Tensor& o) { return view(t, IntList(o.sizes().begin(), o.sizes().end())); }, py::arg("other"))
      .def("reshape_as", [](const Tensor& t, const Tensor& o) { return reshape(t, IntList(o.sizes().begin(), o.sizes().end())); },
           py::arg("other"))
      .def("t", [](const Tensor& t) { return matrix_t(t); })
      .def_property_readonly("T", [](const Tensor& t) {
        IntList p;
        for (int64_t i = t.dim() - 1; i >= 0; --i) p.push_back(i);
        return permute(t, p);
      })
      // torch: a 0-d tensor is its own mT / mH / H; mH and H conjugate, a no-op for ampgrad's real dtypes
      .def_property_readonly("mT", [](py::object self) -> py::object {
        const Tensor t = self.cast<Tensor>();
        if (t.dim() == 0) return self;
        AG_CHECK(t.dim() >= 2, "tensor.mT is only supported on matrices or batches of matrices. Got ", t.dim(), "-D tensor.");
        return py::cast(transpose(t, -2, -1));
      })
      .def_property_readonly("mH", [](py::object self) -> py::object {
        const Tensor t = self.cast<Tensor>();
        if (t.dim() == 0) return self;
        AG_CHECK(t.dim() >= 2, "tensor.mH is only supported on matrices or batches of matrices. Got ", t.dim(), "-D tensor.");
        return py::cast(transpose(t, -2, -1));
      })
      .def_property_readonly("H", [](py::object self) -> py::object {
        const Tensor t = self.cast<Tensor>();
        if (t.dim() == 0) return self;
        AG_CHECK(t.dim() == 2, "tensor.H is only supported on matrices (2-D tensors). Got ", t.dim(), "-D tensor.",
                 t.dim() > 2 ? " For batches of matrices, consider using tensor.mH" : "");
        return py::cast(matrix_t(t));
      })
      .def("contiguous", [](const Tensor& t, py::object) { return contiguous(t); }, py::arg("memory_format") = py::none())
      .def("clone", [](const Tensor& t, py::object) { return clone(t); }, py::arg("memory_format") = py::none())
      .def("copy_", [](py::object self, const Tensor& src, bool) { Tensor t = self.cast<Tensor>(); copy_(t, src); return self; },
           py::arg("other"), py::arg("non_blocking") = false)
      .def("zero_", [](py::object self) { Tensor t = self.cast<Tensor>(); zero_(t); return self; })
      .def("fill_", [](py::object self, py::handle v) {
        Tensor t = self.cast<Tensor>();
        if (is_tensor(v)) fill_(t, v.cast<Tensor>()); else fill_(t, scalar_from_handle(v));
        return self;
      }, py::arg("value"))
      .def("uniform_", [](py::object self, double a, double b, py::object) { Tensor t = self.cast<Tensor>(); uniform_(t, a, b); return self; },
           py::arg("from") = 0.0, py::arg("to") = 1.0, py::arg("generator") = py::none())
      .def("exponential_", [](py::object self, double lambd, py::object) { Tensor t = self.cast<Tensor>(); exponential_(t, lambd); return self; },
           py::arg("lambd") = 1.0, py::kw_only(), py::arg("generator") = py::none())
      .def("cauchy_", [](py::object self, double median, double sigma, py::object) { Tensor t = self.cast<Tensor>(); cauchy_(t, median, sigma); return self; },
           py::arg("median") = 0.0, py::arg("sigma") = 1.0, py::kw_only(), py::arg("generator") = py::none())
      .def("log_normal_", [](py::object self, double mean, double std, py::object) { Tensor t = self.cast<Tensor>(); log_normal_(t, mean, std); return self; },
           py::arg("mean") = 1.0, py::arg("std") = 2.0, py::kw_only(), py::arg("generator") = py::none())
      .def("geometric_", [](py::object self, double p, py::object) { Tensor t = self.cast<Tensor>(); geometric_(t, p); return self; },
           py::arg("p"), py::kw_only(), py::arg("generator") = py::none())
      .def("multinomial", [](const Tensor& t, int64_t n, bool replacement, py::object) { return multinomial(t, n, replacement); },
           py::arg("num_samples"), py::arg("replacement") = false, py::kw_only(), py::arg("generator") = py::none())
      .def("normal_", [](py::object self, double mean, double std, py::object) { Tensor t = self.cast<Tensor>(); normal_(t, mean, std); return self; },
           py::arg("mean") = 0.0, py::arg("std") = 1.0, py::arg("generator") = py::none())
      .def("_index", [](const Tensor& t, const std::vector<std::optional<Tensor>>& idx) { return index(t, idx); })
      .def("_index_put_", [](py::object self, const std::vector<std::optional<Tensor>>& idx, const Tensor& v, bool acc) {
        Tensor t = self.cast<Tensor>();
        // torch's index_put_: the value and the indices may not share memory with self.
        assert_no_overlap(t, v);
        for (auto& i : idx) if (i) assert_no_overlap(t, *i);
        bool grad = autograd::GradMode::is_enabled() && (t.requires_grad() || v.requires_grad());
        if (grad || fw_has(t) || fw_has(v)) {
          if (grad) check_inplace(t, "index_put_");
          apply_inplace(t, [&] { return index_put(t, idx, v, acc); }, "index_put_");
        } else {
          if (has_internal_overlap(t) &&
              PyErr_WarnEx(PyExc_UserWarning, "Use of index_put_ on expanded tensors is deprecated. Please clone() the tensor "
                           "before performing this operation. This also applies to advanced indexing e.g. tensor[indices] = tensor", 1) < 0)
            throw py::error_already_set();
          index_put_into(t, idx, v, acc);
        }
        return self;
      });
}

}  // namespace ampgrad::bind
