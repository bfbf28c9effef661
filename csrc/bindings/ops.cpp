// Module functions (ampgrad.exp, ...) and the Tensor methods of the same name. Argument handling
// that torch does with overloads (dim as int or tuple, Tensor-or-number operands) is done here
// once; richer Python-side parsing lives in python/ampgrad/.
#include "ops/inplace_view.h"
#include "core/overlap.h"
#include "autograd/grad_mode.h"
#include "bindings/convert.h"
#include "bindings/gate.h"
#include "ops/internal.h"
#include "ops/spatial.h"

namespace ampgrad::bind {

namespace {
// Registers `f` as ampgrad.<name>(input, ...) and Tensor.<name>(self, ...).
template <typename Cls, typename F, typename... Extra>
void def_both(py::module_& m, Cls& cls, const char* name, F&& f, const Extra&... extra) {
  m.def(name, f, py::arg("input"), extra...);
  cls.def(name, std::forward<F>(f), extra...);
}

template <typename F>
auto inplace(F f) {
  return [f](py::object self) { Tensor t = self.cast<Tensor>(); f(t); return self; };
}

// An operand of a binary function: a number only where torch has a Scalar overload for it.
Tensor binary_arg(py::handle h, const char* op, const char* arg, int pos, bool number_ok) {
  if (number_ok || is_tensor(h)) return tensor_or_scalar(h);
  AG_THROW(TypeError, op, "(): argument '", arg, "' (position ", pos, ") must be Tensor, not ",
           std::string(py::str(py::type::of(h).attr("__name__"))));
}

// Note [Two Python numbers]: torch's argument parser turns Python numbers into tensors for a Tensor
// parameter only for add/sub/mul/div/true_divide/floor_divide (should_allow_numbers_as_tensors); there two
// numbers give a 0-d tensor of their result type (a float: the default dtype), not a wrapped number. The
// other binary ops have no (Number, Number) overload: TypeError.
std::pair<Tensor, Tensor> number_pair(py::handle a, py::handle b) {
  Tensor x = tensor_or_scalar(a), y = tensor_or_scalar(b);
  const Tensor* ab[2] = {&x, &y};
  const ScalarType dt = result_type(ab, 2);
  x.impl()->wrapped_number = false;  // fresh tensors: converted as torch casts (1e300 -> inf in float32)
  y.impl()->wrapped_number = false;
  return {to_dtype(x, dt), to_dtype(y, dt)};
}

[[noreturn]] void no_number_overload(const char* op, py::handle a, py::handle b) {
  auto tn = [](py::handle h) { return std::string(py::str(py::type::of(h).attr("__name__"))); };
  AG_THROW(TypeError, op, "() received an invalid combination of arguments - got (", tn(a), ", ", tn(b),
           "), but expected one of:\n * (Tensor input, Tensor other)\n * (Number self, Tensor other)\n"
           " * (Tensor input, Number other)");
}

std::optional<ScalarType> opt_dtype(py::handle h) {
  if (h.is_none()) return std::nullopt;
  return dtype_from_handle(h);
}
}  // namespace

void init_ops(py::module_& m) {
  auto cls = py::reinterpret_borrow<py::class_<TensorImpl, std::shared_ptr<TensorImpl>>>(m.attr("Tensor"));

  // The plain unary ops, one per GEN row of the op table (Note [Op table]): ampgrad.name,
  // Tensor.name and Tensor.name_ (the fast Tensor.name of bindings/fast_methods.cpp replaces the method).
#define AG_U(name) \
  def_op<Op::name>(m, cls, #name, [](const Tensor& a) { return name(a); }); \
  cls.def(#name "_", inplace([](Tensor& t) { name##_(t); }));
#define AG_UNARY(name, cuda, cpu, dispatch, functor, api) AG_IF_GENERATED(api, AG_U(name))
#define AG_OP(name, cuda, cpu, family)
#include "ops/op_list.def"
#undef AG_U
  def_both(m, cls, "logical_not", [](const Tensor& a) { return logical_not(a); });
  cls.def("logical_not_", inplace([](Tensor& t) { logical_not_(t); }));
  def_both(m, cls, "bitwise_not", [](const Tensor& a) { return bitwise_not(a); });
  cls.def("bitwise_not_", inplace([](Tensor& t) { bitwise_not_(t); }));
  m.attr("negative") = m.attr("neg"); cls.attr("negative") = cls.attr("neg");
  m.attr("arcsin") = m.attr("asin"); m.attr("arccos") = m.attr("acos"); m.attr("arctan") = m.attr("atan");
  m.attr("absolute") = m.attr("abs"); m.attr("fix") = m.attr("trunc");
  def_both(m, cls, "round", [](const Tensor& a, int64_t decimals) { return round(a, decimals); }, py::kw_only(), py::arg("decimals") = 0);
  cls.def("round_", [](py::object self, int64_t decimals) {
    Tensor t = self.cast<Tensor>(); apply_inplace(t, [&] { return round(t, decimals); }, "round_"); return self;
  }, py::kw_only(), py::arg("decimals") = 0);
  def_both(m, cls, "isnan", [](const Tensor& a) { return isnan(a); });
  def_both(m, cls, "isinf", [](const Tensor& a) { return isinf(a); });
  def_both(m, cls, "isfinite", [](const Tensor& a) { return isfinite(a); });
  def_both(m, cls, "nan_to_num", [](const Tensor& a, std::optional<double> n, std::optional<double> p, std::optional<double> q) {
    return nan_to_num(a, n, p, q);
  }, py::arg("nan") = 0.0, py::arg("posinf") = py::none(), py::arg("neginf") = py::none());
  m.def("_gelu", [](const Tensor& a, const std::string& approx) { return gelu(a, approx); });
  m.def("_softplus", gated<Op::softplus>([](const Tensor& a, double beta, double threshold) { return softplus(a, beta, threshold); }));
  // torch.nn.functional's parametrized activations; the in-place forms return the same Python object.
  m.def("_elu", [](const Tensor& a, double alpha, double scale, double input_scale) { return elu(a, alpha, scale, input_scale); });
  m.def("_celu", [](const Tensor& a, double alpha) { return celu(a, alpha); });
  m.def("_selu", [](const Tensor& a) { return selu(a); });
  m.def("_leaky_relu", [](const Tensor& a, double slope) { return leaky_relu(a, slope); });
  m.def("_hardsigmoid", [](const Tensor& a) { return hardsigmoid(a); });
  m.def("_hardswish", [](const Tensor& a) { return hardswish(a); });
  m.def("_mish", [](const Tensor& a) { return mish(a); });
  m.def("_log_sigmoid", [](const Tensor& a) { return log_sigmoid(a); });
  m.def("_elu_", [](py::object self, double alpha, double scale, double input_scale) {
    Tensor t = self.cast<Tensor>(); elu_(t, alpha, scale, input_scale); return self; });
  m.def("_celu_", [](py::object self, double alpha) { Tensor t = self.cast<Tensor>(); celu_(t, alpha); return self; });
  m.def("_selu_", inplace([](Tensor& t) { selu_(t); }));
  m.def("_leaky_relu_", [](py::object self, double slope) { Tensor t = self.cast<Tensor>(); leaky_relu_(t, slope); return self; });
  m.def("_hardsigmoid_", inplace([](Tensor& t) { hardsigmoid_(t); }));
  m.def("_hardswish_", inplace([](Tensor& t) { hardswish_(t); }));
  m.def("_mish_", inplace([](Tensor& t) { mish_(t); }));

  auto clamp_fn = [](const Tensor& a, py::object lo, py::object hi) {
    if (is_tensor(lo) || is_tensor(hi)) {
      std::optional<Tensor> l, h;
      if (!lo.is_none()) l = tensor_or_scalar(lo);
      if (!hi.is_none()) h = tensor_or_scalar(hi);
      return clamp(a, l, h);
    }
    std::optional<Scalar> l, h;
    if (!lo.is_none()) l = scalar_from_handle(lo);
    if (!hi.is_none()) h = scalar_from_handle(hi);
    return clamp(a, l, h);
  };
  def_both(m, cls, "clamp", clamp_fn, py::arg("min") = py::none(), py::arg("max") = py::none());
  def_both(m, cls, "clip", clamp_fn, py::arg("min") = py::none(), py::arg("max") = py::none());
  cls.def("clamp_", [clamp_fn](py::object self, py::object lo, py::object hi) {
    Tensor t = self.cast<Tensor>();
    Tensor lo_t = is_tensor(lo) ? lo.cast<Tensor>() : Tensor(), hi_t = is_tensor(hi) ? hi.cast<Tensor>() : Tensor();
    apply_inplace(t, [&] {
      const bool any_grad = t.requires_grad() || (lo_t.defined() && lo_t.requires_grad()) || (hi_t.defined() && hi_t.requires_grad());
      autograd::AutoGradMode g(autograd::GradMode::is_enabled() && any_grad);
      // clamp's backward reads self's values through a detached alias (not a saved variable that
      // apply_inplace would protect): with tensor bounds it gets a copy the write cannot reach
      const bool copy = autograd::GradMode::is_enabled() && any_grad && (lo_t.defined() || hi_t.defined());
      Tensor r = clamp_fn(copy ? clone(t) : t, lo, hi);
      AG_CHECK(can_cast(r.dtype(), t.dtype()), "result type ", dtype_name(r.dtype()), " can't be cast to the desired output type ", dtype_name(t.dtype()));
      return r;
    }, "clamp_", {&lo_t, &hi_t});
    return self;
  }, py::arg("min") = py::none(), py::arg("max") = py::none());
  cls.attr("clip_") = cls.attr("clamp_");

  // ---- binary
  auto add_fn = [](py::handle a, py::handle b, py::handle alpha) {
    const Scalar al = alpha.is_none() ? Scalar(int64_t(1)) : scalar_from_handle(alpha);
    if (!is_tensor(a) && !is_tensor(b)) { auto [x, y] = number_pair(a, b); return add(x, y, al); }
    return add(tensor_or_scalar(a), tensor_or_scalar(b), al);
  };
  auto sub_fn = [](py::handle a, py::handle b, py::handle alpha) {
    const Scalar al = alpha.is_none() ? Scalar(int64_t(1)) : scalar_from_handle(alpha);
    if (!is_tensor(a) && !is_tensor(b)) { auto [x, y] = number_pair(a, b); return sub(x, y, al); }
    return sub(tensor_or_scalar(a), tensor_or_scalar(b), al);
  };
  m.def("add", add_fn, py::arg("input"), py::arg("other"), py::kw_only(), py::arg("alpha") = py::none());
  cls.def("add", add_fn, py::arg("other"), py::kw_only(), py::arg("alpha") = py::none());
  m.def("sub", sub_fn, py::arg("input"), py::arg("other"), py::kw_only(), py::arg("alpha") = py::none());
  cls.def("sub", sub_fn, py::arg("other"), py::kw_only(), py::arg("alpha") = py::none());
  // torch's deprecated overloads add(Tensor input, Number alpha, Tensor other) / Tensor.add(Number alpha,
  // Tensor other) (and sub, add_, sub_): input + alpha * other, with torch's deprecation warning.
  auto deprecated_alpha = [](const char* name, const char* sig, const char* instead) {
    PyErr_WarnFormat(PyExc_UserWarning, 1, "This overload of %s is deprecated:\n\t%s\nConsider using one of the "
                     "following signatures instead:\n\t%s", name, sig, instead);
  };
  auto alpha_arg = [](py::handle alpha, py::handle other) {
    if (!is_tensor(other) && !is_number(other))  // the overload needs a Tensor (or number) other: torch's parser first
      AG_THROW(TypeError, "argument 'other' must be Tensor, not ", std::string(py::str(py::type::of(other).attr("__name__"))));
    if (!is_number(alpha)) AG_THROW(TypeError, "argument 'alpha' must be Number, not ", std::string(py::str(py::type::of(alpha).attr("__name__"))));
    return scalar_from_handle(alpha);
  };
  for (const bool is_sub : {false, true})
    for (const bool method : {false, true}) {
      const char* nm = is_sub ? "sub" : "add";
      auto f = [is_sub, method, nm, deprecated_alpha, alpha_arg](py::handle a, py::handle alpha, py::handle b) {
        const Scalar al = alpha_arg(alpha, b);
        const std::string n(nm);
        const std::string sig = method ? n + "(Number alpha, Tensor other)" : n + "(Tensor input, Number alpha, Tensor other)";
        const std::string instead = method ? n + "(Tensor other, *, Number alpha = 1)" : n + "(Tensor input, Tensor other, *, Number alpha = 1)";
        deprecated_alpha(nm, sig.c_str(), instead.c_str());
        Tensor x = as_tensor(a), y = tensor_or_scalar(b);
        return is_sub ? sub(x, y, al) : add(x, y, al);
      };
      if (method) cls.def(nm, f, py::arg("alpha"), py::arg("other"));
      else m.def(nm, f, py::arg("input"), py::arg("alpha"), py::arg("other"));
    }
  m.attr("subtract") = m.attr("sub"); cls.attr("subtract") = cls.attr("sub");
  auto div_fn = [](py::handle a, py::handle b, std::optional<std::string> mode) {
    if (!is_tensor(a) && !is_tensor(b)) { auto [x, y] = number_pair(a, b); return div(x, y, mode.value_or("")); }
    return div(tensor_or_scalar(a), tensor_or_scalar(b), mode.value_or(""));
  };
  m.def("div", div_fn, py::arg("input"), py::arg("other"), py::kw_only(), py::arg("rounding_mode") = py::none());
  cls.def("div", div_fn, py::arg("other"), py::kw_only(), py::arg("rounding_mode") = py::none());
  m.attr("divide") = m.attr("div"); cls.attr("divide") = cls.attr("div");
  m.attr("true_divide") = m.attr("div"); cls.attr("true_divide") = cls.attr("div");
  m.def("floor_divide", [](py::handle a, py::handle b) {
    if (!is_tensor(a) && !is_tensor(b)) { auto [x, y] = number_pair(a, b); return div(x, y, "floor"); }
    return div(tensor_or_scalar(a), tensor_or_scalar(b), "floor");
  }, py::arg("input"), py::arg("other"));
  cls.def("floor_divide", [](py::handle a, py::handle b) { return div(tensor_or_scalar(a), tensor_or_scalar(b), "floor"); },
          py::arg("other"));

  // NUMS: torch has Scalar overloads for both operands; OTHER: for `other` only; TENSORS: tensors only
  // (the api column of the binary rows, Note [Op table]).
  enum ScalarArgs { NUMS, OTHER, TENSORS };
#define AG_B(name, scalars, expr)                                                                                     \
  m.def(#name, gated<Op::name>([](py::handle a, py::handle b) {                                                     \
    if (scalars == NUMS && !is_tensor(a) && !is_tensor(b)) {  /* Note [Two Python numbers] */                       \
      if (std::string_view(#name) != "mul") no_number_overload(#name, a, b);                                         \
      auto [x, y] = number_pair(a, b);                                                                               \
      return expr;                                                                                                   \
    }                                                                                                               \
    Tensor x = binary_arg(a, #name, "input", 1, scalars == NUMS), y = binary_arg(b, #name, "other", 2, scalars != TENSORS); \
    return expr; }), py::arg("input"), py::arg("other"));                                                           \
  cls.def(#name, gated<Op::name>([](py::handle a, py::handle b) {                                                   \
    Tensor x = binary_arg(a, #name, "input", 1, true), y = binary_arg(b, #name, "other", 1, scalars != TENSORS);          \
    return expr; }), py::arg("other"));
  // The plain binary ops, one per generated row of the op table (Note [Op table]).
#define AG_BINARY(name, cuda, cpu, dispatch, out, functor, api) AG_IF_GENERATED(api, AG_B(name, api, name(x, y)))
#define AG_OP(name, cuda, cpu, family)
#include "ops/op_list.def"
  // The bitwise ops have kernels of their own (integer and bool only), not a functor row.
  AG_B(bitwise_and, NUMS, bitwise(Op::bitwise_and, x, y)) AG_B(bitwise_or, NUMS, bitwise(Op::bitwise_or, x, y))
  AG_B(bitwise_xor, NUMS, bitwise(Op::bitwise_xor, x, y))
#undef AG_B
  auto pow_fn = gated<Op::pow>([](py::handle a, py::handle b) {
    if (!is_tensor(a) && !is_tensor(b)) no_number_overload("pow", a, b);  // Note [Two Python numbers]
    return pow(tensor_or_scalar(a), tensor_or_scalar(b));
  });
  m.def("pow", pow_fn, py::arg("input"), py::arg("exponent"));
  cls.def("pow", pow_fn, py::arg("exponent"));
  for (const char* alias : {"multiply"}) { m.attr(alias) = m.attr("mul"); cls.attr(alias) = cls.attr("mul"); }
  m.attr("arctan2") = m.attr("atan2"); cls.attr("arctan2") = cls.attr("atan2");
  m.attr("greater") = m.attr("gt"); m.attr("less") = m.attr("lt"); m.attr("greater_equal") = m.attr("ge");
  m.attr("less_equal") = m.attr("le"); m.attr("not_equal") = m.attr("ne");

  // In-place binary methods.
#define AG_BI(name, OP)                                                                                             \
  cls.def(#name "_", [](py::object self, py::handle other, py::handle alpha) {                                     \
    Tensor t = self.cast<Tensor>();                                                                                 \
    binary_(Op::OP, t, tensor_or_scalar(other), alpha.is_none() ? Scalar(int64_t(1)) : scalar_from_handle(alpha)); \
    return self;                                                                                                    \
  }, py::arg("other"), py::kw_only(), py::arg("alpha") = py::none());
#define AG_BINARY(name, cuda, cpu, dispatch, out, functor, api) AG_IF_GENERATED(api, AG_BI(name, name))
#define AG_OP(name, cuda, cpu, family)
#include "ops/op_list.def"
  AG_BI(add, add) AG_BI(sub, sub) AG_BI(bitwise_and, bitwise_and) AG_BI(bitwise_or, bitwise_or)
  AG_BI(bitwise_xor, bitwise_xor)
#undef AG_BI
  cls.def("pow_", [](py::object self, py::handle exponent) {
    Tensor t = self.cast<Tensor>();
    binary_(Op::pow, t, tensor_or_scalar(exponent), Scalar(int64_t(1)));
    return self;
  }, py::arg("exponent"));
  for (const bool is_sub : {false, true}) {  // the deprecated add_(Number alpha, Tensor other) / sub_
    const char* nm = is_sub ? "sub_" : "add_";
    cls.def(nm, [is_sub, deprecated_alpha, alpha_arg](py::object self, py::handle alpha, py::handle other) {
      const Scalar al = alpha_arg(alpha, other);
      deprecated_alpha(is_sub ? "sub_" : "add_", is_sub ? "sub_(Number alpha, Tensor other)" : "add_(Number alpha, Tensor other)",
                       is_sub ? "sub_(Tensor other, *, Number alpha = 1)" : "add_(Tensor other, *, Number alpha = 1)");
      Tensor t = self.cast<Tensor>();
      binary_(is_sub ? Op::sub : Op::add, t, tensor_or_scalar(other), al);
      return self;
    }, py::arg("alpha"), py::arg("other"));
  }
  cls.attr("subtract_") = cls.attr("sub_"); cls.attr("multiply_") = cls.attr("mul_");
  cls.def("div_", [](py::object self, py::handle other, std::optional<std::string> mode) {
    Tensor t = self.cast<Tensor>();
    binary_(Op::div, t, tensor_or_scalar(other), Scalar(int64_t(1)), mode.value_or(""));
    return self;
  }, py::arg("other"), py::kw_only(), py::arg("rounding_mode") = py::none());
  cls.attr("divide_") = cls.attr("div_"); cls.attr("true_divide_") = cls.attr("div_");

  // ---- ternary
  m.def("where", [](const Tensor& c, py::handle a, py::handle b) { return where(c, tensor_or_scalar(a), tensor_or_scalar(b)); },
        py::arg("condition"), py::arg("input"), py::arg("other"));
  m.def("_where_nonzero", [](const Tensor& c) {
    Tensor nz = nonzero(c.dim() ? c : reshape(c, {1}));  // torch: a 0-d condition counts as 1-d
    std::vector<Tensor> out;
    for (int64_t d = 0; d < std::max<int64_t>(c.dim(), 1); ++d) out.push_back(contiguous(select(nz, 1, d)));
    return out;
  });
  cls.def("where", [](const Tensor& self, const Tensor& c, py::handle b) { return where(c, self, tensor_or_scalar(b)); },
          py::arg("condition"), py::arg("other"));
  auto lerp_fn = [](const Tensor& a, const Tensor& b, py::handle w) { return lerp(a, b, tensor_or_scalar(w)); };
  m.def("lerp", lerp_fn, py::arg("input"), py::arg("end"), py::arg("weight"));
  cls.def("lerp", lerp_fn, py::arg("end"), py::arg("weight"));
  cls.def("lerp_", [lerp_fn](py::object self, const Tensor& b, py::handle w) {
    Tensor t = self.cast<Tensor>(); Tensor wt = is_tensor(w) ? w.cast<Tensor>() : Tensor();
    apply_inplace(t, [&] { return lerp_fn(t, b, w); }, "lerp_", {&b, &wt}); return self;
  }, py::arg("end"), py::arg("weight"));
  auto addcmul_fn = [](const Tensor& s, const Tensor& a, const Tensor& b, py::handle v) { return addcmul(s, a, b, scalar_from_handle(v)); };
  auto addcdiv_fn = [](const Tensor& s, const Tensor& a, const Tensor& b, py::handle v) { return addcdiv(s, a, b, scalar_from_handle(v)); };
  m.def("addcmul", gated<Op::addcmul>(addcmul_fn), py::arg("input"), py::arg("tensor1"), py::arg("tensor2"), py::kw_only(), py::arg("value") = 1);
  cls.def("addcmul", gated<Op::addcmul>(addcmul_fn), py::arg("tensor1"), py::arg("tensor2"), py::kw_only(), py::arg("value") = 1);
  m.def("addcdiv", gated<Op::addcdiv>(addcdiv_fn), py::arg("input"), py::arg("tensor1"), py::arg("tensor2"), py::kw_only(), py::arg("value") = 1);
  cls.def("addcdiv", gated<Op::addcdiv>(addcdiv_fn), py::arg("tensor1"), py::arg("tensor2"), py::kw_only(), py::arg("value") = 1);
  cls.def("addcmul_", [addcmul_fn](py::object self, const Tensor& a, const Tensor& b, py::handle v) {
    Tensor t = self.cast<Tensor>(); apply_inplace(t, [&] { return addcmul_fn(t, a, b, v); }, "addcmul_", {&a, &b}); return self;
  }, py::arg("tensor1"), py::arg("tensor2"), py::kw_only(), py::arg("value") = 1);
  cls.def("addcdiv_", [addcdiv_fn](py::object self, const Tensor& a, const Tensor& b, py::handle v) {
    Tensor t = self.cast<Tensor>(); apply_inplace(t, [&] { return addcdiv_fn(t, a, b, v); }, "addcdiv_", {&a, &b}); return self;
  }, py::arg("tensor1"), py::arg("tensor2"), py::kw_only(), py::arg("value") = 1);

  // ---- reductions (Python wraps max/min overloads and the dim=None/tuple forms)
  m.def("_sum", gated<Op::sum>([](const Tensor& a, py::handle dim, bool keepdim, std::optional<ScalarType> dtype) { return sum(a, dims_from_handle(dim), keepdim, dtype); }));
  m.def("_mean", [](const Tensor& a, py::handle dim, bool keepdim, py::handle dtype) { return mean(a, dims_from_handle(dim), keepdim, opt_dtype(dtype)); });
  m.def("_prod", gated<Op::prod>([](const Tensor& a, std::optional<int64_t> dim, bool keepdim, std::optional<ScalarType> dtype) { return prod(a, dim, keepdim, dtype); }));
  m.def("_max_dim", [](const Tensor& a, int64_t dim, bool keepdim) { return max_dim(a, dim, keepdim); });
  m.def("_min_dim", [](const Tensor& a, int64_t dim, bool keepdim) { return min_dim(a, dim, keepdim); });
  m.def("_max_all", [](const Tensor& a) { return max_all(a); });
  // ---- sorting and order statistics (Python builds torch.return_types tuples)
  m.def("_sort", [](const Tensor& a, int64_t dim, bool descending, bool stable) { return sort(a, dim, descending, stable); });
  m.def("_argsort", [](const Tensor& a, int64_t dim, bool descending, bool stable) { return argsort(a, dim, descending, stable); });
  m.def("_topk", [](const Tensor& a, int64_t k, int64_t dim, bool largest, bool sorted) { return topk(a, k, dim, largest, sorted); });
  m.def("_kthvalue", [](const Tensor& a, int64_t k, int64_t dim, bool keepdim) { return kthvalue(a, k, dim, keepdim); });
  m.def("_median_dim", [](const Tensor& a, int64_t dim, bool keepdim, bool ignore_nan) { return median_dim(a, dim, keepdim, ignore_nan); });
  m.def("_median_all", [](const Tensor& a, bool ignore_nan) { return median_all(a, ignore_nan); });
  m.def("_min_all", [](const Tensor& a) { return min_all(a); });
  m.def("_amax", [](const Tensor& a, py::handle dim, bool keepdim) { return amax(a, dims_from_handle(dim), keepdim); });
  m.def("_amin", [](const Tensor& a, py::handle dim, bool keepdim) { return amin(a, dims_from_handle(dim), keepdim); });
  m.def("_argmax", [](const Tensor& a, std::optional<int64_t> dim, bool keepdim) { return argmax(a, dim, keepdim); });
  m.def("_argmin", [](const Tensor& a, std::optional<int64_t> dim, bool keepdim) { return argmin(a, dim, keepdim); });
  m.def("_var", [](const Tensor& a, py::handle dim, double correction, bool keepdim) { return var(a, dims_from_handle(dim), correction, keepdim); });
  m.def("_std", [](const Tensor& a, py::handle dim, double correction, bool keepdim) { return std(a, dims_from_handle(dim), correction, keepdim); });
  m.def("_norm", gated<Op::norm>([](const Tensor& a, double p, py::handle dim, bool keepdim, std::optional<ScalarType> dtype) { return norm(a, p, dims_from_handle(dim), keepdim, dtype); }));
  m.def("_logsumexp", [](const Tensor& a, py::handle dim, bool keepdim) { return logsumexp(a, int_list(dim, "dim"), keepdim); });
  m.def("_cumsum", gated<Op::cumsum>([](const Tensor& a, int64_t dim, std::optional<ScalarType> dtype) { return cumsum(a, dim, dtype); }));
  m.def("_cumprod", gated<Op::cumprod>([](const Tensor& a, int64_t dim, std::optional<ScalarType> dtype) { return cumprod(a, dim, dtype); }));
  m.def("_all", [](const Tensor& a, py::handle dim, bool keepdim) { return all(a, dims_from_handle(dim), keepdim); });
  m.def("_any", [](const Tensor& a, py::handle dim, bool keepdim) { return any(a, dims_from_handle(dim), keepdim); });
  m.def("_softmax", gated<Op::softmax>([](const Tensor& a, int64_t dim, std::optional<ScalarType> dtype) { return softmax(a, dim, dtype); }));
  m.def("_log_softmax", gated<Op::log_softmax>([](const Tensor& a, int64_t dim, std::optional<ScalarType> dtype) { return log_softmax(a, dim, dtype); }));
  // fused nn ops (ops/norm.cpp, ops/loss.cpp); nn/functional.py normalizes the arguments
  m.def("_layer_norm", gated<Op::layer_norm>([](const Tensor& x, IntList ns, std::optional<Tensor> w, std::optional<Tensor> b, double eps) {
    return layer_norm(x, ns, w, b, eps); }));
  m.def("_rms_norm", gated<Op::rms_norm>([](const Tensor& x, IntList ns, std::optional<Tensor> w, std::optional<double> eps) {
    return rms_norm(x, ns, w, eps); }));
  m.def("_group_norm", gated<Op::group_norm>([](const Tensor& x, int64_t g, std::optional<Tensor> w, std::optional<Tensor> b, double eps) {
    return group_norm(x, g, w, b, eps); }));
  m.def("_batch_norm", gated<Op::batch_norm>([](const Tensor& x, std::optional<Tensor> rm, std::optional<Tensor> rv, std::optional<Tensor> w,
                                                std::optional<Tensor> b, bool training, double momentum, double eps) {
    return batch_norm(x, rm, rv, w, b, training, momentum, eps); }));
  m.def("_nll_loss", [](const Tensor& x, const Tensor& t, std::optional<Tensor> w, const std::string& red, int64_t ignore) {
    return nll_loss(x, t, w, red, ignore); });

  // ---- linear algebra
  def_op<Op::matmul>(m, cls, "matmul", [](const Tensor& a, const Tensor& b) { return matmul(a, b); }, py::arg("other"));
  def_op<Op::mm>(m, cls, "mm", [](const Tensor& a, const Tensor& b) { return mm(a, b); }, py::arg("mat2"));
  def_op<Op::bmm>(m, cls, "bmm", [](const Tensor& a, const Tensor& b) { return bmm(a, b); }, py::arg("mat2"));
  def_op<Op::mv>(m, cls, "mv", [](const Tensor& a, const Tensor& b) { return mv(a, b); }, py::arg("vec"));
  def_op<Op::dot>(m, cls, "dot", [](const Tensor& a, const Tensor& b) { return dot(a, b); }, py::arg("tensor"));
  def_both(m, cls, "inner", [](const Tensor& a, const Tensor& b) { return inner(a, b); }, py::arg("other"));
  def_both(m, cls, "outer", [](const Tensor& a, const Tensor& b) { return outer(a, b); }, py::arg("vec2"));
  m.attr("ger") = m.attr("outer"); cls.attr("ger") = cls.attr("outer");
#define AG_ADDMM(name, a1, a2)                                                                                                \
  def_op<Op::name>(m, cls, #name, [](const Tensor& s, const Tensor& a, const Tensor& b, py::handle beta, py::handle alpha) {   \
    return name(s, a, b, scalar_from_handle(beta), scalar_from_handle(alpha));                                                \
  }, py::arg(a1), py::arg(a2), py::kw_only(), py::arg("beta") = 1, py::arg("alpha") = 1);
  AG_ADDMM(addmm, "mat1", "mat2") AG_ADDMM(addmv, "mat", "vec") AG_ADDMM(addr, "vec1", "vec2")
  AG_ADDMM(addbmm, "batch1", "batch2") AG_ADDMM(baddbmm, "batch1", "batch2")
#undef AG_ADDMM
  m.def("_linear", gated<Op::linear>([](const Tensor& x, const Tensor& w, std::optional<Tensor> b) { return linear(x, w, b); }));
  // convolution and pooling (ops/conv.cpp, ops/pool.cpp); nn.functional parses the arguments and gates the conv rows
  m.def("_convolution", [](const Tensor& x, const Tensor& w, std::optional<Tensor> b, IntList stride, IntList padding,
                           IntList dilation, bool transposed, IntList output_padding, int64_t groups) {
    return convolution(x, w, b, stride, padding, dilation, transposed, output_padding, groups);
  });
  m.def("_convolution_backward", [](const Tensor& g, const Tensor& x, const Tensor& w, IntList stride, IntList padding,
                                    IntList dilation, bool transposed, IntList output_padding, int64_t groups, std::array<bool, 3> mask) {
    auto r = convolution_backward(g, x, w, stride, padding, dilation, transposed, output_padding, groups, mask);
    auto opt = [](const Tensor& t) { return t.defined() ? py::cast(t) : py::none(); };
    return py::make_tuple(opt(r[0]), opt(r[1]), opt(r[2]));
  });
  m.def("_max_pool", [](const Tensor& x, IntList k, IntList s, IntList p, IntList d, bool ceil) { return max_pool_with_indices(x, k, s, p, d, ceil); });
  m.def("_avg_pool", [](const Tensor& x, IntList k, IntList s, IntList p, bool ceil, bool cip, std::optional<int64_t> div) {
    return avg_pool(x, k, s, p, ceil, cip, div);
  });
  m.def("_adaptive_avg_pool", [](const Tensor& x, IntList out) { return adaptive_avg_pool(x, out); });
  m.def("_adaptive_max_pool", [](const Tensor& x, IntList out) { return adaptive_max_pool(x, out); });
  // spatial ops (ops/spatial.cpp); nn.functional parses the arguments and gates the pad / max_unpool rows
  m.def("_pad", [](const Tensor& x, IntList pad, const std::string& mode, std::optional<double> value) { return ampgrad::pad(x, pad, mode, value); });
  m.def("_upsample", [](const Tensor& x, const std::string& mode, IntList size, std::vector<std::optional<double>> scales, bool align_corners) {
    return upsample(x, mode, size, scales, align_corners);
  });
  m.def("_im2col", [](const Tensor& x, IntList k, IntList d, IntList p, IntList s) { return im2col(x, k, d, p, s); });
  m.def("_col2im", [](const Tensor& x, IntList out, IntList k, IntList d, IntList p, IntList s) { return col2im(x, out, k, d, p, s); });
  m.def("_max_unpool", [](const Tensor& x, const Tensor& idx, IntList out) { return max_unpool(x, idx, out); });
  m.def("pixel_shuffle", [](const Tensor& x, int64_t r) { return pixel_shuffle(x, r); }, py::arg("input"), py::arg("upscale_factor"));
  m.def("pixel_unshuffle", [](const Tensor& x, int64_t r) { return pixel_unshuffle(x, r); }, py::arg("input"), py::arg("downscale_factor"));
  m.def("channel_shuffle", [](const Tensor& x, int64_t g) { return channel_shuffle(x, g); }, py::arg("input"), py::arg("groups"));
  m.def("_addmm_activation", gated<Op::_addmm_activation>([](const Tensor& s, const Tensor& a, const Tensor& b, py::handle beta,
                                                          py::handle alpha, bool use_gelu) {
    return addmm_activation(s, a, b, scalar_from_handle(beta), scalar_from_handle(alpha), use_gelu);
  }), py::arg("input"), py::arg("mat1"), py::arg("mat2"), py::kw_only(), py::arg("beta") = 1, py::arg("alpha") = 1,
     py::arg("use_gelu") = false);

  // ---- views and shape
  def_both(m, cls, "transpose", [](const Tensor& a, int64_t d0, int64_t d1) { return transpose(a, d0, d1); }, py::arg("dim0"), py::arg("dim1"));
  def_both(m, cls, "swapaxes", [](const Tensor& a, int64_t d0, int64_t d1) { return transpose(a, d0, d1); }, py::arg("axis0"), py::arg("axis1"));
  m.attr("swapdims") = m.attr("transpose"); cls.attr("swapdims") = cls.attr("transpose");
  m.def("permute", [](const Tensor& a, py::handle dims) { return permute(a, int_tuple(dims, "permute(): argument 'dims' (position 2)")); },
        py::arg("input"), py::arg("dims"));
  m.def("reshape", [](const Tensor& a, py::handle s) { return reshape(a, int_list(s, "shape")); }, py::arg("input"), py::arg("shape"));
  m.def("t", [](const Tensor& t) { return matrix_t(t); }, py::arg("input"));
  for (int method = 0; method < 2; ++method) {   // torch's messages count self for the function only
    auto f = [method](const Tensor& a, py::handle size, py::handle stride, std::optional<int64_t> off) {
      IntList sz = int_tuple(size, method ? "as_strided(): argument 'size' (position 1)" : "as_strided(): argument 'size' (position 2)");
      return as_strided(a, sz, int_tuple(stride, method ? "as_strided(): argument 'stride' (position 2)" : "as_strided(): argument 'stride' (position 3)"), off);
    };
    if (method) cls.def("as_strided", f, py::arg("size"), py::arg("stride"), py::arg("storage_offset") = py::none());
    else m.def("as_strided", f, py::arg("input"), py::arg("size"), py::arg("stride"), py::arg("storage_offset") = py::none());
  }
  def_both(m, cls, "squeeze", [](const Tensor& a, py::handle dim) { return squeeze(a, dims_from_handle(dim)); }, py::arg("dim") = py::none());
  def_both(m, cls, "unsqueeze", [](const Tensor& a, int64_t d) { return unsqueeze(a, d); }, py::arg("dim"));
  // In-place view ops (Note [In-place view ops])
  cls.def("t_", [](Tensor& a) { return t_(a); });
  cls.def("transpose_", [](Tensor& a, int64_t d0, int64_t d1) { return transpose_(a, d0, d1); }, py::arg("dim0"), py::arg("dim1"));
  cls.def("swapdims_", [](Tensor& a, int64_t d0, int64_t d1) { return transpose_(a, d0, d1); }, py::arg("dim0"), py::arg("dim1"));
  cls.def("swapaxes_", [](Tensor& a, int64_t d0, int64_t d1) { return transpose_(a, d0, d1); }, py::arg("axis0"), py::arg("axis1"));
  cls.def("squeeze_", [](Tensor& a, py::handle dim) {
    return squeeze_(a, dims_from_handle(dim), !dim.is_none() && !py::isinstance<py::int_>(dim) && !is_tensor(dim));
  }, py::arg("dim") = py::none());
  cls.def("unsqueeze_", [](Tensor& a, int64_t d) { return unsqueeze_(a, d); }, py::arg("dim"));
  cls.def("as_strided_", [](Tensor& a, py::handle size, py::handle stride, std::optional<int64_t> off) {
    return as_strided_(a, int_tuple(size, "as_strided_(): argument 'size' (position 1)"),
                       int_tuple(stride, "as_strided_(): argument 'stride' (position 2)"), off);
  }, py::arg("size"), py::arg("stride"), py::arg("storage_offset") = py::none());
  def_both(m, cls, "flatten", [](const Tensor& a, int64_t s, int64_t e) { return flatten(a, s, e); }, py::arg("start_dim") = 0, py::arg("end_dim") = -1);
  m.def("unflatten", [](const Tensor& a, int64_t d, py::handle s) { return unflatten(a, d, int_tuple(s, "unflatten(): argument 'sizes' (position 3)")); },
        py::arg("input"), py::arg("dim"), py::arg("sizes"));
  // Tensor.unflatten is Python in torch: `if not sizes` raises before its C++ call parses dim and sizes.
  cls.def("unflatten", [](const Tensor& a, py::handle d, py::handle s) {
    const int empty = PyObject_Not(s.ptr());
    if (empty < 0) throw py::error_already_set();
    AG_CHECK(!empty, "unflatten: sizes must be non-empty");
    if (!PyLong_Check(d.ptr()) || PyBool_Check(d.ptr()))
      AG_THROW(TypeError, "unflatten(): argument 'dim' (position 1) must be int, not ", std::string(py::str(py::type::of(d).attr("__name__"))));
    return unflatten(a, d.cast<int64_t>(), int_tuple(s, "unflatten(): argument 'sizes' (position 2)"));
  }, py::arg("dim"), py::arg("sizes"));
  def_both(m, cls, "narrow", [](const Tensor& a, int64_t d, py::handle start, int64_t len) {
    return narrow(a, d, is_tensor(start) ? static_cast<int64_t>(item_double(start.cast<Tensor>())) : start.cast<int64_t>(), len);
  }, py::arg("dim"), py::arg("start"), py::arg("length"));
  def_both(m, cls, "select", [](const Tensor& a, int64_t d, int64_t i) { return select(a, d, i); }, py::arg("dim"), py::arg("index"));
  def_both(m, cls, "diagonal", [](const Tensor& a, int64_t o, int64_t d0, int64_t d1) { return diagonal(a, o, d0, d1); },
           py::arg("offset") = 0, py::arg("dim1") = 0, py::arg("dim2") = 1);
  m.def("_slice", [](const Tensor& a, int64_t d, std::optional<int64_t> s, std::optional<int64_t> e, int64_t step) { return slice(a, d, s, e, step); });
  // split / unbind / chunk return tuples, as torch's do.
  auto as_tuple = [](const std::vector<Tensor>& v) { return py::tuple(py::cast(v)); };
  auto split_fn = [as_tuple](const Tensor& a, py::handle s, int64_t d) {
    if (PyBool_Check(s.ptr()))  // torch's parser takes no bool for split_size
      AG_THROW(TypeError, "split() received an invalid combination of arguments - got (Tensor, bool, int), but expected "
               "one of:\n * (Tensor input, tuple of ints split_size, int dim = 0)\n * (Tensor input, int split_size, int dim = 0)");
    if (is_tensor(s) && s.cast<Tensor>().dim() == 0)  // a 0-d tensor is an int split_size (truncated), as torch's parser reads it
      return as_tuple(split(a, static_cast<int64_t>(item_double(s.cast<Tensor>())), d));
    if (PyLong_Check(s.ptr())) return as_tuple(split(a, s.cast<int64_t>(), d));
    return as_tuple(split_with_sizes(a, int_list(s, "split_size_or_sections"), d));
  };
  // torch's names: torch.split(tensor, split_size_or_sections, dim), Tensor.split(split_size, dim)
  m.def("split", split_fn, py::arg("tensor"), py::arg("split_size_or_sections"), py::arg("dim") = 0);
  cls.def("split", split_fn, py::arg("split_size"), py::arg("dim") = 0);
  def_both(m, cls, "unbind", [as_tuple](const Tensor& a, int64_t d) { return as_tuple(unbind(a, d)); }, py::arg("dim") = 0);
  def_both(m, cls, "chunk", [as_tuple](const Tensor& a, int64_t chunks, int64_t d) {
    AG_CHECK(a.dim() > 0, "chunk expects at least a 1-dimensional tensor");
    AG_CHECK(chunks > 0, "chunk expects `chunks` to be greater than 0, got: ", chunks);
    int64_t dd = wrap_dim(d, a.dim());
    int64_t n = a.sizes()[dd];
    if (n == 0) return as_tuple(std::vector<Tensor>(chunks, alias(a)));  // torch: `chunks` empty pieces
    return as_tuple(split(a, (n + chunks - 1) / chunks, dd));
  }, py::arg("chunks"), py::arg("dim") = 0);
  m.def("cat", gated<Op::cat>([](const std::vector<Tensor>& ts, int64_t d) { return cat(ts, d); }), py::arg("tensors"), py::arg("dim") = 0);
  m.attr("concat") = m.attr("cat"); m.attr("concatenate") = m.attr("cat");
  m.def("stack", gated<Op::stack>([](const std::vector<Tensor>& ts, int64_t d) { return stack(ts, d); }), py::arg("tensors"), py::arg("dim") = 0);
  def_both(m, cls, "gather", [](const Tensor& a, int64_t d, const Tensor& i, bool) { return gather(a, d, i); }, py::arg("dim"), py::arg("index"),
           py::kw_only(), py::arg("sparse_grad") = false);  // sparse_grad=True: a dense gradient here
  auto scatter_fn = [](const Tensor& a, int64_t d, const Tensor& i, py::handle src, std::optional<std::string> reduce) {
    if (!is_tensor(src)) check_scalar_fits(scalar_from_handle(src), a.dtype());
    Tensor s = is_tensor(src) ? src.cast<Tensor>() : to_dtype(wrap_scalar(scalar_from_handle(src)), a.dtype());
    return scatter(a, d, i, s, reduce.value_or(""));
  };
  // torch's two overloads, (dim, index, src) and (dim, index, value): the second takes `value=` by keyword
  for (const char* src_name : {"src", "value"})
    def_both(m, cls, "scatter", scatter_fn, py::arg("dim"), py::arg("index"), py::arg(src_name), py::kw_only(), py::arg("reduce") = py::none());
  auto scatter_ip = [scatter_fn](py::object self, int64_t d, const Tensor& i, py::handle src, std::optional<std::string> reduce) {
    Tensor t = self.cast<Tensor>();
    Tensor s = is_tensor(src) ? src.cast<Tensor>() : Tensor();
    apply_inplace(t, [&] { return scatter_fn(t, d, i, src, reduce); }, "scatter_", {&s, &i});
    return self;
  };
  for (const char* src_name : {"src", "value"})
    cls.def("scatter_", scatter_ip, py::arg("dim"), py::arg("index"), py::arg(src_name), py::kw_only(), py::arg("reduce") = py::none());
  def_op<Op::scatter_add>(m, cls, "scatter_add", [](const Tensor& a, int64_t d, const Tensor& i, const Tensor& s) { return scatter_add(a, d, i, s); },
           py::arg("dim"), py::arg("index"), py::arg("src"));
  def_both(m, cls, "index_select", [](const Tensor& a, int64_t d, const Tensor& i) { return index_select(a, d, i); }, py::arg("dim"), py::arg("index"));
  def_both(m, cls, "index_add", [](const Tensor& a, int64_t d, const Tensor& i, const Tensor& s, py::handle alpha) {
    return index_add(a, d, i, s, scalar_from_handle(alpha));
  }, py::arg("dim"), py::arg("index"), py::arg("source"), py::kw_only(), py::arg("alpha") = 1);
  def_op<Op::index_copy>(m, cls, "index_copy", [](const Tensor& a, int64_t d, const Tensor& i, const Tensor& s) { return index_copy(a, d, i, s); },
           py::arg("dim"), py::arg("index"), py::arg("source"));
  def_both(m, cls, "masked_fill", [](const Tensor& a, const Tensor& mask, py::handle v) {
    return masked_fill(a, mask, is_tensor(v) ? v.cast<Tensor>() : wrap_scalar(scalar_from_handle(v)));
  }, py::arg("mask"), py::arg("value"));
  def_both(m, cls, "masked_select", [](const Tensor& a, const Tensor& mask) { return masked_select(a, mask); }, py::arg("mask"));
  m.def("_nonzero", [](const Tensor& a) { return nonzero(a); });
  def_both(m, cls, "tril", [](const Tensor& a, int64_t k) { return tril(a, k); }, py::arg("diagonal") = 0);
  def_both(m, cls, "triu", [](const Tensor& a, int64_t k) { return triu(a, k); }, py::arg("diagonal") = 0);
  m.def("flip", [](const Tensor& a, py::handle dims) {
    // torch's `int[] dims` (no size): a lone int is its parser's TypeError, unlike the `int[1]` dims of reductions
    if (py::isinstance<py::int_>(dims))
      throw py::type_error("flip(): argument 'dims' (position 2) must be tuple of ints, not " +
                           std::string(py::str(py::type::of(dims).attr("__name__"))));
    return flip(a, int_list(dims, "dims"));
  }, py::arg("input"), py::arg("dims"));
  def_both(m, cls, "roll", [](const Tensor& a, py::handle shifts, py::handle dims) {
    return roll(a, int_list(shifts, "shifts"), dims.is_none() ? IntList{} : int_list(dims, "dims"));
  }, py::arg("shifts"), py::arg("dims") = py::none());
  m.def("_index_put", gated<Op::index_put>([](const Tensor& a, const std::vector<std::optional<Tensor>>& idx, const Tensor& v, bool acc) { return index_put(a, idx, v, acc); }));

  // In-place shape/index methods computed out of place (Note [In-place ops]).
#define AG_ARGS(...) __VA_ARGS__
#define AG_IP(name, pre, call, arg_names, ...)                                                        \
  cls.def(#name "_", [](py::object self, __VA_ARGS__) {                                             \
    Tensor t = self.cast<Tensor>();                                                                   \
    pre;                                                                                              \
    apply_inplace(t, [&] { return call; }, #name "_");                                                \
    return self;                                                                                      \
  }, AG_ARGS arg_names);
  cls.def("masked_fill_", [](py::object self, const Tensor& mask, py::handle v) {
    Tensor t = self.cast<Tensor>();
    Tensor value = is_tensor(v) ? v.cast<Tensor>() : wrap_scalar(scalar_from_handle(v));
    // masked_fill (out of place) broadcasts self up to the mask; in place, self cannot grow.
    Shape bs = broadcast_shapes(t.sizes(), mask.sizes());
    AG_CHECK(bs == t.sizes(), "output with shape ", shape_str(t.sizes()), " doesn't match the broadcast shape ", shape_str(bs));
    bool grad = autograd::GradMode::is_enabled() && (t.requires_grad() || value.requires_grad());
    if (has_internal_overlap(t) && !grad && !fw_has(t) && !fw_has(value)) {
      // torch writes through an expanded self (with a deprecation warning) instead of raising.
      if (PyErr_WarnEx(PyExc_UserWarning, "Use of masked_fill_ on expanded tensors is deprecated. Please clone() the tensor "
                       "before performing this operation. This also applies to advanced indexing e.g. tensor[mask] = scalar", 1) < 0)
        throw py::error_already_set();
      masked_fill(t, mask, value);  // argument checks, no write
      index_put_into(t, {expand(mask, t.sizes())}, to_dtype(value, t.dtype()), false);
      return self;
    }
    apply_inplace(t, [&] { return masked_fill(t, mask, value); }, "masked_fill_", {&mask, &value});
    return self;
  }, py::arg("mask"), py::arg("value"));
  // Scatter-like writes refuse any memory shared with the index or the source (torch's assert_no_overlap).
  // torch wraps scatter_add_'s dim (IndexError) before its overlap checks.
  AG_IP(scatter_add, wrap_dim(d, t.dim(), true), (assert_no_overlap(t, i), assert_no_overlap(t, s), scatter_add(t, d, i, s)),
        (py::arg("dim"), py::arg("index"), py::arg("src")), int64_t d, const Tensor& i, const Tensor& s)
  AG_IP(index_copy, (void)0, (assert_no_overlap(t, i), assert_no_overlap(t, s), index_copy(t, d, i, s)),
        (py::arg("dim"), py::arg("index"), py::arg("source")), int64_t d, const Tensor& i, const Tensor& s)
#undef AG_IP
#undef AG_ARGS
  cls.def("index_add_", [](py::object self, int64_t d, const Tensor& i, const Tensor& s, py::handle alpha) {
    Tensor t = self.cast<Tensor>();
    const Scalar a = scalar_from_handle(alpha);
    // torch's order: the leaf check, index_add's own argument checks, then the overlap checks
    check_inplace_leaf(t);
    Tensor r = index_add(t, d, i, s, a);
    assert_no_internal_overlap(t);
    assert_no_overlap(t, i);
    assert_no_overlap(t, s);
    apply_inplace(t, r, "index_add_");
    return self;
  }, py::arg("dim"), py::arg("index"), py::arg("source"), py::kw_only(), py::arg("alpha") = 1);
  // torch's tril_ / triu_ kernels write only the zeroed triangle: through an expanded self the result
  // does not depend on the write order (ampgrad's out-of-place copy wrote every element back).
  auto zero_triangle = [](Tensor& t, int64_t k, bool lower) {
    Tensor r = lower ? tril(t, k) : triu(t, k);   // argument checks, no write
    const bool grad = autograd::GradMode::is_enabled() && t.requires_grad();
    if (!has_internal_overlap(t) || grad || fw_has(t)) {
      apply_inplace(t, r, lower ? "tril_" : "triu_");
      return;
    }
    Tensor ones = full(t.sizes(), Scalar(true), ScalarType::Bool, t.device());
    Tensor mask = lower ? triu(ones, k + 1) : tril(ones, k - 1);
    index_put_into(t, {mask}, to_dtype(wrap_scalar(Scalar(0.0)), t.dtype()), false);
  };
  // Note [In-place from out of place]: in-place methods that ampgrad composes from their out-of-place op
  // (addmm_, cumsum_, index_fill_, ... in python/ampgrad/_inplace_methods.py): fn computes the result out of place
  // inside apply_inplace, which gives torch's leaf, overlap and result-dtype checks, protects what the
  // result's nodes saved of self, and rebases self's history onto the result.
  m.def("_inplace", [](py::object self, py::function fn, const std::string& name) {
    Tensor t = self.cast<Tensor>();
    apply_inplace(t, [&] {
      Tensor r = fn().cast<Tensor>();
      AG_CHECK(r.sizes() == t.sizes(), "output with shape ", shape_str(t.sizes()), " doesn't match the broadcast shape ",
               shape_str(r.sizes()));
      return r;
    }, name.c_str(), {}, /*overlap_after=*/true);
    return self;
  }, py::arg("self"), py::arg("fn"), py::arg("name"));
  cls.def("tril_", [zero_triangle](py::object self, int64_t k) { Tensor t = self.cast<Tensor>(); zero_triangle(t, k, true); return self; },
          py::arg("diagonal") = 0);
  cls.def("triu_", [zero_triangle](py::object self, int64_t k) { Tensor t = self.cast<Tensor>(); zero_triangle(t, k, false); return self; },
          py::arg("diagonal") = 0);

  // ---- casts and creation
  m.def("_to", [](const Tensor& t, std::optional<Device> dev, std::optional<ScalarType> dt, bool copy) {
    Tensor r = t;
    if (dt && *dt != r.dtype()) { r = to_dtype(r, *dt); copy = false; }
    if (dev && *dev != r.device()) { r = to_device(r, *dev); copy = false; }
    return copy ? clone(r) : r;
  });
  m.def("_full", [](py::handle size, py::handle v, ScalarType dt, Device dev) { return full(int_list(size, "size"), scalar_from_handle(v), dt, dev); });
  m.def("_empty", [](py::handle size, ScalarType dt, Device dev) { return empty(int_list(size, "size"), dt, dev); });
  // Note [Shared memory]: the receiving end of torch.multiprocessing's file_descriptor strategy.
  m.def("_new_shared_fd_cpu", [](int fd, size_t nbytes, ScalarType dt, Shape sizes, Shape strides, int64_t offset) {
    auto storage = storage_from_shm_fd(fd, nbytes);  // owns fd from here, also when a check below fails
    AG_CHECK(sizes.size() == strides.size() && offset >= 0, "_new_shared_fd_cpu: bad geometry");
    for (size_t i = 0; i < sizes.size(); ++i) AG_CHECK(sizes[i] >= 0 && strides[i] >= 0, "_new_shared_fd_cpu: bad geometry");
    size_t need = 0, off_bytes = 0;
    const bool wrap = shape_numel(sizes) != 0 && (__builtin_mul_overflow(size_t(offset), size_t(itemsize(dt)), &off_bytes) ||
                                                  __builtin_add_overflow(storage_nbytes(sizes, strides, itemsize(dt)), off_bytes, &need));
    AG_CHECK(!wrap && need <= nbytes, "_new_shared_fd_cpu: the view needs ", need, " bytes of a ", nbytes, "-byte storage");
    auto impl = std::make_shared<TensorImpl>();
    impl->storage = std::move(storage);
    impl->sizes = std::move(sizes); impl->strides = std::move(strides); impl->offset = offset; impl->dtype = dt;
    impl->version = std::make_shared<VersionCounter>();
    impl->refresh();
    return Tensor(impl);
  });
  m.def("_arange", [](double s, double e, double st, ScalarType dt, Device dev) { return arange(s, e, st, dt, dev); });
  m.def("_linspace", [](double s, double e, int64_t n, ScalarType dt, Device dev) { return linspace(s, e, n, dt, dev); });
  m.def("_eye", [](int64_t n, int64_t mm, ScalarType dt, Device dev) { return eye(n, mm, dt, dev); });
  m.def("_randint", [](int64_t lo, int64_t hi, py::handle size, ScalarType dt, Device dev) { return randint(lo, hi, int_list(size, "size"), dt, dev); });
  m.def("_randperm", [](int64_t n, ScalarType dt, Device dev) { return randperm(n, dt, dev); });
  m.def("manual_seed_cpu", [](uint64_t s) { manual_seed(s); });
  m.def("initial_seed", [] { return initial_seed(); });
  m.def("_result_type", [](py::handle a, py::handle b) {
    Tensor x = tensor_or_scalar(a), y = tensor_or_scalar(b);
    return result_type({&x, &y});
  });
  m.def("_wrap_scalar", [](py::handle v) { return wrap_scalar(scalar_from_handle(v)); });
  // The gate of the ops composed in Python (@engine_op in python/ampgrad/_op_gate.py; Note [Autocast gate]):
  // fn(*args, **kwargs) with the tensors among args, kwargs and their lists cast per op's row, and
  // autocast excluded while fn runs.
  m.def("_autocast_gate", [](int op_id, py::handle fn, py::tuple args, py::dict kwargs) -> py::object {
    if (!amp::gate_open()) return fn(*args, **kwargs);
    // Each argument is a value or a list/tuple of values; the walk rewrites the ones it casts.
    struct Arg { py::object key; std::vector<py::object> items; int seq = 0; };  // seq: 0 value, 1 list, 2 tuple
    std::vector<Arg> all;
    auto take = [&](py::object key, py::handle v) {
      Arg a{std::move(key), {}, PyList_Check(v.ptr()) ? 1 : PyTuple_Check(v.ptr()) ? 2 : 0};
      if (a.seq) for (py::handle x : v) a.items.push_back(py::reinterpret_borrow<py::object>(x));
      else a.items.push_back(py::reinterpret_borrow<py::object>(v));
      all.push_back(std::move(a));
    };
    for (py::handle v : args) take(py::none(), v);
    for (auto kv : kwargs) take(py::reinterpret_borrow<py::object>(kv.first), kv.second);
    PyGateArgs walk;
    for (auto& a : all) {
      if (!a.key.is_none() && std::string(py::str(a.key)) == "out") continue;  // out= is written, not cast
      for (auto& x : a.items) walk.add(x);
    }
    const Op op = static_cast<Op>(op_id);
    walk.cast(op);
    auto value = [](Arg& a) -> py::object {
      if (!a.seq) return a.items[0];
      py::list l;
      for (auto& x : a.items) l.append(x);
      return a.seq == 1 ? py::object(l) : py::object(py::tuple(l));
    };
    py::list new_args;
    py::dict new_kwargs;
    for (auto& a : all) {
      if (a.key.is_none()) new_args.append(value(a));
      else new_kwargs[a.key] = value(a);
    }
    amp::ExcludeGuard excluded(op);
    return fn(*py::tuple(new_args), **new_kwargs);
  });
  // Note [out= overloads]: torch's `out=` keyword for the ops bound here without one. Each such pybind11
  // function gets one more overload, appended to its chain, that matches only when `out=` is passed
  // (`out` is keyword-only after *args), so calls without out= resolve exactly as before at no cost. The
  // overload calls writer(fn, out, args, kwargs) (python/ampgrad/_out.py), which runs fn without out=
  // and writes the result into out with torch's checks (dtype cast rule, resize, autograd refusal).
  m.def("_add_out_overload", [](py::object fn, py::object writer) {
    if (!PyCFunction_Check(fn.ptr())) AG_THROW(TypeError, "_add_out_overload: not a pybind11 function");
    auto* rec = py::detail::function_record_ptr_from_PyObject(PyCFunction_GET_SELF(fn.ptr()));
    if (!rec) AG_THROW(TypeError, "_add_out_overload: not a pybind11 function");
    py::handle self = fn;  // the overload chain's function object: alive as long as the module
    py::cpp_function added(
        [self, writer](py::args args, py::object out, py::kwargs kwargs) -> py::object {
          return writer(self, out, args, kwargs);
        },
        py::name(rec->name), py::scope(rec->scope), py::sibling(fn), py::arg("out"));
    if (added.ptr() != fn.ptr()) AG_THROW(RuntimeError, "_add_out_overload: '", rec->name, "' did not take an overload");
  });
  m.def("_op_id", [](const std::string& name) {
    for (int i = 0; i < kNumOps; ++i)
      if (name == op_name(static_cast<Op>(i))) return i;
    AG_THROW(ValueError, "no op '", name, "' in the op table");
  });
  m.def("_op_has_autocast_policy", [](int op_id) { return has_autocast_policy(static_cast<Op>(op_id)); });
  // The op table for Python and the tests (Note [Op table]): (name, kernel family, cpu policy, cuda policy,
  // has a CPU kernel) per row, in Op order.
  m.def("_op_table", [] {
    static const char* policies[] = {"none", "lower_precision_fp", "fp32", "fp32_set_opt_dtype", "fp32_append_dtype", "promote", "banned"};
    // Note [Kernel families]: the names, lower-cased from the one list
    static const std::vector<std::string> families = [] {
      std::vector<std::string> v{"none"};
#define AG_FAMILY_NAME(F) v.push_back(#F);
      AG_KERNEL_FAMILIES(AG_FAMILY_NAME)
#undef AG_FAMILY_NAME
      for (auto& s : v) for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      return v;
    }();
    py::list rows;
    for (int i = 0; i < kNumOps; ++i) {
      Op op = static_cast<Op>(i);
      rows.append(py::make_tuple(op_name(op), families[static_cast<int>(op_family(op))],
                                 policies[static_cast<int>(op_policy(op, 0))], policies[static_cast<int>(op_policy(op, 1))],
                                 has_kernel(op, DeviceType::CPU)));
    }
    return rows;
  });
  // The names of the generated plain binary ops (Note [Op table]), for ampgrad's namespace.
  m.def("_binary_ops", [] {
    py::list names;
#define AG_BINARY(name, cuda, cpu, dispatch, out, functor, api) AG_IF_GENERATED(api, names.append(#name);)
#define AG_OP(name, cuda, cpu, family)
#include "ops/op_list.def"
    return names;
  });
  // The names of the generated plain unary ops (Note [Op table]), for ampgrad's namespace.
  m.def("_unary_ops", [] {
    py::list names;
#define AG_UNARY(name, cuda, cpu, dispatch, functor, api) AG_IF_GENERATED(api, names.append(#name);)
#define AG_OP(name, cuda, cpu, family)
#include "ops/op_list.def"
    return names;
  });
  m.def("broadcast_shapes_", [](py::handle a, py::handle b) { return broadcast_shapes(int_list(a, "shape"), int_list(b, "shape")); });
}

}  // namespace ampgrad::bind
