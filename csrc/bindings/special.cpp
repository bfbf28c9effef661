// Bindings of the special-function and integer elementwise ops (ops/special.h): ampgrad.<name>, the
// Tensor methods and in-place methods torch has, the shift operators, and the torch.special-only
// functions as _C._special_<name> (python/ampgrad/special/ names them).
#include "bindings/convert.h"
#include "ops/internal.h"
#include "ops/special.h"

namespace ampgrad::bind {

namespace {
Tensor operand(py::handle h, const char* op, const char* arg, int pos, bool number_ok) {
  if (is_tensor(h) || (number_ok && is_number(h))) return tensor_or_scalar(h);
  AG_THROW(TypeError, op, "(): argument '", arg, "' (position ", pos, ") must be Tensor, not ",
           std::string(py::str(py::type::of(h).attr("__name__"))));
}

template <typename F>
auto inplace_of(F f, const char* name) {
  return [f, name](py::object self) {
    Tensor t = self.cast<Tensor>();
    special_inplace(t, [&](const Tensor& x) { return f(x); }, name);
    return self;
  };
}
}  // namespace

void init_special(py::module_& m) {
  auto cls = py::reinterpret_borrow<py::class_<TensorImpl, std::shared_ptr<TensorImpl>>>(m.attr("Tensor"));

  // ---- unary with a torch.<name>, Tensor.<name> and Tensor.<name>_
#define SP_U(name)                                                                         \
  m.def(#name, [](const Tensor& a) { return name(a); }, py::arg("input"));                 \
  cls.def(#name, [](const Tensor& a) { return name(a); });                                 \
  cls.def(#name "_", inplace_of([](const Tensor& a) { return name(a); }, #name "_"));
  SP_U(digamma) SP_U(lgamma) SP_U(i0) SP_U(sgn)
#undef SP_U
  m.def("polygamma", [](int64_t n, const Tensor& a) { return polygamma(n, a); }, py::arg("n"), py::arg("input"));
  cls.def("polygamma", [](const Tensor& a, int64_t n) { return polygamma(n, a); }, py::arg("n"));
  cls.def("polygamma_", [](py::object self, int64_t n) {
    Tensor t = self.cast<Tensor>();
    special_inplace(t, [&](const Tensor& x) { return polygamma(n, x); }, "polygamma_");
    return self;
  }, py::arg("n"));
  m.def("mvlgamma", [](const Tensor& a, int64_t p) { return mvlgamma(a, p); }, py::arg("input"), py::arg("p"));
  cls.def("mvlgamma", [](const Tensor& a, int64_t p) { return mvlgamma(a, p); }, py::arg("p"));
  cls.def("mvlgamma_", [](py::object self, int64_t p) {
    Tensor t = self.cast<Tensor>();
    special_inplace(t, [&](const Tensor& x) { return mvlgamma(x, p); }, "mvlgamma_");
    return self;
  }, py::arg("p"));
  m.def("logit", [](const Tensor& a, std::optional<double> eps) { return logit(a, eps); }, py::arg("input"), py::arg("eps") = py::none());
  cls.def("logit", [](const Tensor& a, std::optional<double> eps) { return logit(a, eps); }, py::arg("eps") = py::none());
  cls.def("logit_", [](py::object self, std::optional<double> eps) {
    Tensor t = self.cast<Tensor>();
    special_inplace(t, [&](const Tensor& x) { return logit(x, eps); }, "logit_");
    return self;
  }, py::arg("eps") = py::none());
  m.def("signbit", [](const Tensor& a) { return signbit(a); }, py::arg("input"));
  cls.def("signbit", [](const Tensor& a) { return signbit(a); });
  m.def("_frexp", [](const Tensor& a) { return frexp(a); });

  // ---- torch.special-only unary functions
#define SP_S(name) m.def("_special_" #name, [](const Tensor& a) { return name(a); }, py::arg("input"));
  SP_S(erfcx) SP_S(i0e) SP_S(i1) SP_S(i1e) SP_S(ndtr) SP_S(ndtri) SP_S(log_ndtr) SP_S(entr)
#undef SP_S
#define SP_N(name) m.def("_special_" #name, [](const Tensor& a) { return special_unary_nograd(Op::name, a); }, py::arg("input"));
  SP_N(bessel_j0) SP_N(bessel_j1) SP_N(bessel_y0) SP_N(bessel_y1) SP_N(modified_bessel_k0) SP_N(modified_bessel_k1)
  SP_N(scaled_modified_bessel_k0) SP_N(scaled_modified_bessel_k1) SP_N(spherical_bessel_j0) SP_N(airy_ai)
#undef SP_N
  m.def("_special_modified_bessel_i0", [](const Tensor& a) { return special_unary_nograd(Op::i0, a); }, py::arg("input"));
  m.def("_special_modified_bessel_i1", [](const Tensor& a) { return special_unary_nograd(Op::i1, a); }, py::arg("input"));
  m.def("_special_orthogonal_polynomial", [](int kind, py::handle x, py::handle n) {
    return orthogonal_polynomial(kind, operand(x, "polynomial", "input", 1, true), operand(n, "polynomial", "n", 2, true));
  });

  // ---- binary: (name, input may be a number, other may be a number, torch's name of the second operand)
#define SP_B(name, fn, num_a, num_b, other)                                                              \
  m.def(#name, [](py::handle a, py::handle b) {                                                        \
    return fn(operand(a, #name, "input", 1, num_a), operand(b, #name, other, 2, num_b));               \
  }, py::arg("input"), py::arg(other));                                                                \
  cls.def(#name, [](py::handle a, py::handle b) {                                                      \
    return fn(operand(a, #name, "input", 1, true), operand(b, #name, other, 1, num_b));               \
  }, py::arg(other));                                                                                  \
  cls.def(#name "_", [](py::object self, py::handle b) {                                              \
    Tensor t = self.cast<Tensor>(), o = operand(b, #name "_", other, 1, num_b);                       \
    const ScalarType rt = result_type({&t, &o});  /* torch's cast check comes before the kernel's dtype */ \
    AG_CHECK(can_cast(rt, t.dtype()), "result type ", scalar_type_name(rt),                            \
             " can't be cast to the desired output type ", scalar_type_name(t.dtype()));               \
    special_inplace(t, [&](const Tensor& x) { return fn(x, o); }, #name "_");                          \
    return self;                                                                                       \
  }, py::arg(other));
  SP_B(igamma, igamma, false, false, "other") SP_B(igammac, igammac, false, false, "other")
  SP_B(gcd, gcd, false, false, "other") SP_B(lcm, lcm, false, false, "other")
  SP_B(bitwise_left_shift, bitwise_left_shift, true, true, "other") SP_B(bitwise_right_shift, bitwise_right_shift, true, true, "other")
  SP_B(nextafter, nextafter, false, false, "other") SP_B(heaviside, heaviside, false, false, "values")
#undef SP_B
  m.def("_special_xlog1py", [](py::handle a, py::handle b) {
    return xlog1py(operand(a, "special_xlog1py", "input", 1, true), operand(b, "special_xlog1py", "other", 2, true));
  });
  m.def("_special_zeta", [](py::handle a, py::handle b) {
    return zeta(operand(a, "special_zeta", "input", 1, true), operand(b, "special_zeta", "other", 2, true));
  });
  m.def("rsub", [](py::handle a, py::handle b, py::handle alpha) {
    return rsub(operand(a, "rsub", "input", 1, false), operand(b, "rsub", "other", 2, true),
                alpha.is_none() ? Scalar(int64_t(1)) : scalar_from_handle(alpha));
  }, py::arg("input"), py::arg("other"), py::kw_only(), py::arg("alpha") = py::none());
  m.def("_isin", [](py::handle e, py::handle t, bool invert) {
    return isin(operand(e, "isin", "elements", 1, true), operand(t, "isin", "test_elements", 2, true), invert);
  });

  // ---- shift operators: NotImplemented for a non-number operand so Python tries the reflection
  auto shift = [](bool left, bool reflected) {
    return [left, reflected](py::handle a, py::handle b) -> py::object {
      if (!is_tensor(b) && !is_number(b)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
      Tensor x = tensor_or_scalar(a), y = tensor_or_scalar(b);
      if (reflected) std::swap(x, y);
      return py::cast(left ? bitwise_left_shift(x, y) : bitwise_right_shift(x, y));
    };
  };
  cls.def("__lshift__", shift(true, false));
  cls.def("__rshift__", shift(false, false));
  cls.def("__rlshift__", shift(true, true));
  cls.def("__rrshift__", shift(false, true));
  auto ishift = [](bool left) {
    return [left](py::object self, py::handle b) -> py::object {
      if (!is_tensor(b) && !is_number(b)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
      Tensor t = self.cast<Tensor>(), o = tensor_or_scalar(b);
      special_inplace(t, [&](const Tensor& x) { return left ? bitwise_left_shift(x, o) : bitwise_right_shift(x, o); },
                      left ? "__ilshift__" : "__irshift__");
      return self;
    };
  };
  cls.def("__ilshift__", ishift(true));
  cls.def("__irshift__", ishift(false));
}

}  // namespace ampgrad::bind
