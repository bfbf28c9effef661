// Reductions, scans and softmax. Every one is planned as a reduction over the middle axis of a
// contiguous [A, R, B] layout (Note [Reduce plan]); kernels only see that layout.
#include <algorithm>
#include "ops/internal.h"

namespace ampgrad {

namespace {
// Note [Reduce plan]: when the reduced dims form one block of a contiguous input, A/R/B are the
// products before/inside/after it and nothing moves; otherwise the kept dims are permuted in
// front and the input is made contiguous, so B = 1.
struct Plan {
  Tensor in;
  ReduceArgs r{};
  Shape out_shape;  // with keepdim: the input's shape with reduced dims set to 1
};

IntList normalize_dims(const Tensor& a, const OptDims& dims) {
  int64_t n = a.dim();
  IntList out;
  if (!dims || dims->empty()) {
    for (int64_t d = 0; d < n; ++d) out.push_back(d);
    return out;
  }
  std::vector<bool> seen(std::max<int64_t>(n, 1), false);
  for (int64_t d : *dims) {
    int64_t w = wrap_dim(d, n, kScalarOk);
    AG_CHECK(!seen[w], "dim ", w, " appears multiple times in the list of dims");
    seen[w] = true;
    if (n > 0) out.push_back(w);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Plan plan(const Tensor& a, const IntList& dims, bool keepdim = false) {
  Plan p;
  int64_t n = a.dim();
  std::vector<bool> red(n, false);
  for (auto d : dims) red[d] = true;
  if (keepdim) {
    p.out_shape = a.sizes();
    for (auto d : dims) p.out_shape[d] = 1;
  } else {
    p.out_shape.reserve(n - dims.size());
    for (int64_t d = 0; d < n; ++d) if (!red[d]) p.out_shape.push_back(a.sizes()[d]);
  }
  bool block = a.is_contiguous() && (dims.empty() || dims.back() - dims.front() + 1 == static_cast<int64_t>(dims.size()));
  if (block) {
    p.in = a;
    int64_t lo = dims.empty() ? n : dims.front(), hi = dims.empty() ? n : dims.back() + 1;
    p.r.A = 1; p.r.R = 1; p.r.B = 1;
    for (int64_t d = 0; d < lo; ++d) p.r.A *= a.sizes()[d];
    for (int64_t d = lo; d < hi; ++d) p.r.R *= a.sizes()[d];
    for (int64_t d = hi; d < n; ++d) p.r.B *= a.sizes()[d];
  } else {
    IntList perm;
    p.r.A = 1; p.r.R = 1; p.r.B = 1;
    for (int64_t d = 0; d < n; ++d) if (!red[d]) { perm.push_back(d); p.r.A *= a.sizes()[d]; }
    for (int64_t d = 0; d < n; ++d) if (red[d]) { perm.push_back(d); p.r.R *= a.sizes()[d]; }
    autograd::AutoGradMode off(false);
    p.in = contiguous(permute(detach(a), perm));
  }
  return p;
}

Tensor run_reduce(Op op, const Tensor& a, const IntList& dims, bool keepdim, ScalarType out_dt, const double* s = nullptr,
                  Tensor* indices = nullptr) {
  Plan p = plan(a, dims, keepdim);
  if (s) std::copy(s, s + 4, p.r.s);
  if (indices) *indices = empty(p.out_shape, ScalarType::Int64, a.device());
  Tensor out = empty(std::move(p.out_shape), out_dt, a.device());
  kernel<ReduceKernel>(op, a.device())(p.in, out, indices, p.r);
  return out;
}

// Puts reduced dims back as size-1 dims so a gradient broadcasts against the input.
Tensor unsqueeze_dims(const Tensor& g, const IntList& dims, int64_t ndim, bool keepdim) {
  if (keepdim || ndim == 0) return g;
  Tensor r = g;
  for (int64_t d : dims) r = unsqueeze(r, d);
  return r;
}

// `slice_dims`: the op has one output per slice of these dims, so its jvp comes from the backward
// (jvp_reduce_from_backward); the other ops set their own jvp.
void record_reduce(const char* name, const Tensor& a, Tensor& out, std::function<variable_list(FunctionNode&, const variable_list&)> bw,
                   bool save_in, bool save_out, const IntList* slice_dims = nullptr, bool keepdim = false) {
  if (!is_floating(out.dtype())) return;
  if (slice_dims)
    fw_rule(out, {&a}, [&](const variable_list& t) { return jvp_reduce_from_backward(bw, t[0], out, {a, out}, *slice_dims, keepdim); });
  if (auto node = autograd::make_node(name, {&a}, std::move(bw))) {
    autograd::set_history(node, {&out});
    node->save(save_in ? a : Tensor());
    if (save_out) node->save(out, true);
  }
}

ScalarType sum_dtype(ScalarType t) { return is_integral(t, true) ? ScalarType::Int64 : t; }
}  // namespace

Tensor sum(const Tensor& a0, OptDims dims0, bool keepdim, std::optional<ScalarType> dtype) {
  Tensor a = dtype ? to_dtype(a0, *dtype) : to_dtype(a0, sum_dtype(a0.dtype()));
  IntList dims = normalize_dims(a, dims0);
  Tensor out = run_reduce(Op::sum, a, dims, keepdim, a.dtype());
  fw_rule(out, {&a}, [&](const variable_list& t) { return sum(t[0], dims, keepdim, std::nullopt); });
  if (!autograd::records({&a})) return out;
  Shape in_shape = a.sizes();
  int64_t nd = a.dim();
  record_reduce(dims0 ? "SumBackward1" : "SumBackward0", a, out, AG_BW {
    return {expand_op(unsqueeze_dims(g[0], dims, nd, keepdim), in_shape)};
  }, false, false);
  return out;
}

Tensor mean(const Tensor& a0, OptDims dims0, bool keepdim, std::optional<ScalarType> dtype) {
  ScalarType dt = dtype.value_or(a0.dtype());
  AG_CHECK(is_floating(dt), "mean(): could not infer output dtype. ", dtype ? "Optional" : "Input", " dtype must be either a floating point or complex dtype. Got: ",
           scalar_type_name(dt));
  Tensor a = to_dtype(a0, dt);
  IntList dims = normalize_dims(a, dims0);
  int64_t R = 1;
  for (auto d : dims) R *= a.sizes()[d];
  double s[4] = {1.0 / static_cast<double>(R), 0, 0, 0};
  Tensor out = run_reduce(Op::mean, a, dims, keepdim, dt, s);
  fw_rule(out, {&a}, [&](const variable_list& t) { return mean(t[0], dims, keepdim, std::nullopt); });
  if (!autograd::records({&a})) return out;
  Shape in_shape = a.sizes();
  int64_t nd = a.dim();
  record_reduce(dims0 ? "MeanBackward1" : "MeanBackward0", a, out, AG_BW {
    return {expand_op(unsqueeze_dims(g[0], dims, nd, keepdim), in_shape) / static_cast<double>(R)};
  }, false, false);
  return out;
}

Tensor prod(const Tensor& a0, std::optional<int64_t> dim, bool keepdim, std::optional<ScalarType> dtype) {
  Tensor a = a0;
  a = dtype ? to_dtype(a, *dtype) : to_dtype(a, sum_dtype(a.dtype()));
  IntList dims = dim ? normalize_dims(a, IntList{*dim}) : normalize_dims(a, std::nullopt);
  Tensor out = run_reduce(Op::prod, a, dims, dim ? keepdim : false, a.dtype());
  bool all = !dim;
  int64_t d = dims.empty() ? 0 : dims[0];
  record_reduce(all ? "ProdBackward0" : "ProdBackward1", a, out, AG_BW {
    Tensor x = c.get(0);
    // Exclusive products from both sides: correct with zeros in the input.
    Tensor xf = all ? reshape(x, {-1}) : x;
    int64_t dd = all ? 0 : d;
    int64_t n = xf.dim() == 0 ? 1 : xf.sizes()[dd];
    if (xf.dim() == 0) return {g[0]};
    if (n == 0) return {zeros_like(x)};  // an empty product: no input elements to differentiate
    Tensor one = ones_like(narrow(xf, dd, 0, 1));
    Tensor left = cumprod(cat({one, narrow(xf, dd, 0, n - 1)}, dd), dd, std::nullopt);
    Tensor right = flip(cumprod(flip(cat({narrow(xf, dd, 1, n - 1), one}, dd), {dd}), dd, std::nullopt), {dd});
    Tensor gg = all ? g[0] : unsqueeze_dims(g[0], {dd}, x.dim(), keepdim);
    Tensor r = gg * left * right;
    return {all ? reshape(r, x.sizes()) : r};
  }, true, false, &dims, dim ? keepdim : false);
  return out;
}

static std::pair<Tensor, Tensor> minmax_dim(Op op, const char* name, const Tensor& a, int64_t dim, bool keepdim) {
  int64_t d = wrap_dim(dim, a.dim(), kScalarOk);
  AG_CHECK_INDEX(a.dim() == 0 || a.sizes()[d] > 0, op_name(op), "(): Expected reduction dim ", d, " to have non-zero size.");
  Tensor idx;
  Tensor out = run_reduce(op, a, a.dim() ? IntList{d} : IntList{}, keepdim, a.dtype(), nullptr, &idx);
  Shape in_shape = a.sizes();
  int64_t nd = a.dim();
  fw_rule(out, {&a}, [&](const variable_list& t) {
    if (nd == 0) return t[0];
    Tensor r = gather(t[0], d, keepdim ? idx : unsqueeze(idx, d));
    return keepdim ? r : squeeze(r, IntList{d});
  });
  if (is_floating(out.dtype()))
    if (auto node = autograd::make_node(name, {&a}, AG_BW {
          Tensor gi = unsqueeze_dims(g[0], nd ? IntList{d} : IntList{}, nd, keepdim);
          Tensor ii = unsqueeze_dims(c.get(0), nd ? IntList{d} : IntList{}, nd, keepdim);
          if (nd == 0) return {gi};
          return {scatter(full(in_shape, Scalar(0.0), gi.dtype(), gi.device()), d, ii, gi)};
        })) {
      autograd::set_history(node, {&out});
      node->save(idx);
    }
  return {out, idx};
}
std::pair<Tensor, Tensor> max_dim(const Tensor& a, int64_t dim, bool keepdim) { return minmax_dim(Op::max, "MaxBackward0", a, dim, keepdim); }
std::pair<Tensor, Tensor> min_dim(const Tensor& a, int64_t dim, bool keepdim) { return minmax_dim(Op::min, "MinBackward0", a, dim, keepdim); }

static Tensor amaxmin(Op op, const char* name, const Tensor& a, OptDims dims0, bool keepdim) {
  IntList dims = normalize_dims(a, dims0);
  if (a.numel() == 0 && dims.size() == static_cast<size_t>(a.dim()))
    AG_THROW(RuntimeError, op_name(op), "(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument.");
  for (auto d : dims)
    AG_CHECK_INDEX(a.sizes()[d] > 0, op_name(op), "(): Expected reduction dim ", d, " to have non-zero size.");
  Tensor out = run_reduce(op, a, dims, keepdim, a.dtype());
  int64_t nd = a.dim();
  record_reduce(name, a, out, AG_BW {
    Tensor x = c.get(0), y = c.get(1);
    Tensor mask = to_dtype(compare(Op::eq, x, unsqueeze_dims(y, dims, nd, keepdim)), g[0].dtype());
    Tensor cnt = sum(mask, dims, true, std::nullopt);
    return {unsqueeze_dims(g[0], dims, nd, keepdim) * mask / cnt};
  }, true, true, &dims, keepdim);
  return out;
}
Tensor amax(const Tensor& a, OptDims dims, bool keepdim) { return amaxmin(Op::amax, "AmaxBackward0", a, dims, keepdim); }
Tensor amin(const Tensor& a, OptDims dims, bool keepdim) { return amaxmin(Op::amin, "AminBackward0", a, dims, keepdim); }
Tensor max_all(const Tensor& a) {
  AG_CHECK(a.numel() > 0, "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument.");
  return amaxmin(Op::amax, "MaxBackward1", a, std::nullopt, false);
}
Tensor min_all(const Tensor& a) {
  AG_CHECK(a.numel() > 0, "min(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument.");
  return amaxmin(Op::amin, "MinBackward1", a, std::nullopt, false);
}

static Tensor argop(Op op, const Tensor& a, std::optional<int64_t> dim, bool keepdim) {
  AG_CHECK(a.dtype() != ScalarType::Bool, op_name(op), "(): does not support bool input");
  AG_CHECK_INDEX(a.numel() > 0 || dim, op_name(op), "(): Expected reduction dim to be specified for input.numel() == 0.");
  Tensor src = dim ? a : reshape(detach(a), {-1});
  int64_t d = dim ? wrap_dim(*dim, a.dim(), kScalarOk) : 0;
  AG_CHECK_INDEX(src.dim() == 0 || src.sizes()[d] > 0, op_name(op), "(): Expected reduction dim ", d, " to have non-zero size.");
  Tensor idx;
  autograd::AutoGradMode off(false);
  run_reduce(op, src, src.dim() ? IntList{d} : IntList{}, dim ? keepdim : false, src.dtype(), nullptr, &idx);
  if (!dim && keepdim) idx = reshape(idx, IntList(a.dim(), 1));
  return idx;
}
Tensor argmax(const Tensor& a, std::optional<int64_t> dim, bool keepdim) { return argop(Op::argmax, a, dim, keepdim); }
Tensor argmin(const Tensor& a, std::optional<int64_t> dim, bool keepdim) { return argop(Op::argmin, a, dim, keepdim); }

Tensor var(const Tensor& a, OptDims dims0, double correction, bool keepdim) {
  AG_CHECK(is_floating(a.dtype()), "std and var only support floating point and complex dtypes");
  IntList dims = normalize_dims(a, dims0);
  int64_t N = 1;
  for (auto d : dims) N *= a.sizes()[d];
  double s[4] = {correction, 0, 0, 0};
  Tensor out = run_reduce(Op::var, a, dims, keepdim, a.dtype(), s);
  int64_t nd = a.dim();
  record_reduce("VarBackward0", a, out, AG_BW {
    Tensor x = c.get(0);
    Tensor mu = mean(x, dims, true, std::nullopt);
    // torch's var_backward: (2 / dof) * grad on the reduced shape first, then one full-size product
    return {(unsqueeze_dims(g[0], dims, nd, keepdim) * (2.0 / (static_cast<double>(N) - correction))) * (x - mu)};
  }, true, false, &dims, keepdim);
  return out;
}

Tensor std(const Tensor& a, OptDims dims0, double correction, bool keepdim) {
  AG_CHECK(is_floating(a.dtype()), "std and var only support floating point and complex dtypes");
  IntList dims = normalize_dims(a, dims0);
  int64_t N = 1;
  for (auto d : dims) N *= a.sizes()[d];
  double s[4] = {correction, 1, 0, 0};
  Tensor out = run_reduce(Op::std, a, dims, keepdim, a.dtype(), s);
  int64_t nd = a.dim();
  record_reduce("StdBackward0", a, out, AG_BW {
    Tensor x = c.get(0), y = unsqueeze_dims(c.get(1), dims, nd, keepdim);
    Tensor mu = mean(x, dims, true, std::nullopt);
    // torch's std_backward: grad / (2 std) masked to 0 where std is 0 (not 0/0), then var_backward's
    // (2 / dof) * that, all on the reduced shape, then one full-size product
    Tensor gy = where(compare(Op::eq, y, wrap_scalar(0.0)), zeros_like(y), unsqueeze_dims(g[0], dims, nd, keepdim) / (y * 2.0));
    return {(gy * (2.0 / (static_cast<double>(N) - correction))) * (x - mu)};
  }, true, true, &dims, keepdim);
  return out;
}

Tensor norm(const Tensor& a0, double p, OptDims dims0, bool keepdim, std::optional<ScalarType> dtype) {
  Tensor a = a0;
  if (dtype) a = to_dtype(a, *dtype);
  AG_CHECK(is_floating(a.dtype()), "linalg.vector_norm: Expected a floating point or complex tensor as input. Got ",
           std::string(dtype_name(a.dtype())) == "int64" ? "Long" : dtype_name(a.dtype()));
  IntList dims = normalize_dims(a, dims0);
  double s[4] = {p, 0, 0, 0};
  Tensor out = run_reduce(Op::norm, a, dims, keepdim, a.dtype(), s);
  int64_t nd = a.dim();
  record_reduce("NormBackward1", a, out, AG_BW {
    Tensor x = c.get(0), y = unsqueeze_dims(c.get(1), dims, nd, keepdim), gg = unsqueeze_dims(g[0], dims, nd, keepdim);
    if (p == 0) return {zeros_like(x)};
    if (p == 1) return {gg * sign(x)};
    if (std::isinf(p)) {
      Tensor ax = abs(x);
      Tensor mask = to_dtype(compare(Op::eq, ax, y), x.dtype());
      return {gg * sign(x) * mask / sum(mask, dims, true, std::nullopt)};
    }
    // torch's norm_backward, term for term (so zeros carry its signs): a zero norm gives zero
    Tensor y0 = compare(Op::eq, y, wrap_scalar(0.0));
    // p = 2 with no zero norm (read on the small reduced tensor, CPU only: no device sync): the mask is
    // a no-op, two passes instead of four
    if (p == 2 && y.device().is_cpu() && item_double(any(y0, std::nullopt, false)) == 0) return {gg * (x / y)};
    Tensor z = zeros_like(x);
    if (p == 2) return {gg * where(y0, z, x / y)};
    Tensor ax = abs(x);
    if (p < 1) {
      Tensor xs = where(compare(Op::eq, x, wrap_scalar(0.0)), z, sign(x) * pow(ax, wrap_scalar(p - 1)));
      return {xs * gg * pow(y, wrap_scalar(1 - p))};
    }
    Tensor xs = p < 2 ? sign(x) * pow(ax, wrap_scalar(p - 1)) : x * pow(ax, wrap_scalar(p - 2));
    return {xs * where(y0, zeros_like(gg * y), gg / pow(y, wrap_scalar(p - 1)))};
  }, true, true, &dims, keepdim);
  return out;
}

Tensor logsumexp(const Tensor& a0, IntList dims0, bool keepdim) {
  Tensor a = is_floating(a0.dtype()) ? a0 : to_dtype(a0, default_dtype());
  IntList dims = normalize_dims(a, dims0);
  Tensor out = run_reduce(Op::logsumexp, a, dims, keepdim, a.dtype());
  int64_t nd = a.dim();
  record_reduce("LogsumexpBackward0", a, out, AG_BW {
    Tensor x = c.get(0), y = unsqueeze_dims(c.get(1), dims, nd, keepdim);
    return {unsqueeze_dims(g[0], dims, nd, keepdim) * exp(x - y)};
  }, true, true, &dims, keepdim);
  return out;
}

static Tensor scan(Op op, const Tensor& a, int64_t dim, ScalarType dt) {
  Tensor x = to_dtype(a, dt);
  int64_t d = wrap_dim(dim, x.dim(), kScalarOk);
  Tensor in = contiguous(detach(x));
  Plan p = plan(in, x.dim() ? IntList{d} : IntList{});
  Tensor out = empty(x.sizes(), dt, x.device());
  kernel<ReduceKernel>(op, x.device())(p.in, out, nullptr, p.r);
  return out;
}

Tensor cumsum(const Tensor& a, int64_t dim, std::optional<ScalarType> dtype) {
  ScalarType dt = dtype.value_or(sum_dtype(a.dtype()));
  Tensor x = to_dtype(a, dt);
  Tensor out = scan(Op::cumsum, x, dim, dt);
  int64_t d = x.dim() ? wrap_dim(dim, x.dim()) : 0;
  fw_rule(out, {&x}, [&](const variable_list& t) { return cumsum(t[0], d, std::nullopt); });
  record_reduce("CumsumBackward0", x, out, AG_BW {
    if (g[0].dim() == 0) return {g[0]};
    return {flip(cumsum(flip(g[0], {d}), d, std::nullopt), {d})};
  }, false, false);
  return out;
}

// d y_j = sum_{i<=j} t_i prod_{k<=j, k!=i} x_k: y * cumsum(t / x) without zeros; with zeros, one
// cumprod per position i of x with x_i replaced by t_i, kept where j >= i.
static Tensor cumprod_jvp(const Tensor& x, const Tensor& y, const Tensor& t, int64_t d) {
  if (x.dim() == 0) return t;
  if (item_double(all(compare(Op::ne, x, wrap_scalar(0.0)), std::nullopt, false)) != 0) return y * cumsum(t / x, d, std::nullopt);
  int64_t n = x.sizes()[d];
  IntList pos_shape(x.dim(), 1);
  pos_shape[d] = n;
  Tensor pos = reshape(arange(0, static_cast<double>(n), 1, ScalarType::Int64, x.device()), pos_shape);
  Tensor r = zeros_like(y);
  for (int64_t i = 0; i < n; ++i) {
    Tensor xi = cat({narrow(x, d, 0, i), narrow(to_dtype(t, x.dtype()), d, i, 1), narrow(x, d, i + 1, n - i - 1)}, d);
    r = r + where(compare(Op::ge, pos, wrap_scalar(i)), cumprod(xi, d, std::nullopt), zeros_like(y));
  }
  return r;
}

Tensor cumprod(const Tensor& a, int64_t dim, std::optional<ScalarType> dtype) {
  ScalarType dt = dtype.value_or(sum_dtype(a.dtype()));
  Tensor x = to_dtype(a, dt);
  Tensor out = scan(Op::cumprod, x, dim, dt);
  int64_t d = x.dim() ? wrap_dim(dim, x.dim()) : 0;
  fw_rule(out, {&x}, [&](const variable_list& t) { return cumprod_jvp(x, out, t[0], d); });
  record_reduce("CumprodBackward0", x, out, AG_BW {
    Tensor x = c.get(0), y = c.get(1);
    if (x.dim() == 0) return {g[0]};
    // d y_j / d x_i = prod_{k<=j, k!=i} x_k: exact with zeros, one cumprod per position.
    int64_t n = x.sizes()[d];
    Tensor no_zero = compare(Op::ne, x, wrap_scalar(0.0));
    if (item_double(all(no_zero, std::nullopt, false)) != 0) {
      Tensor rs = flip(cumsum(flip(g[0] * y, {d}), d, std::nullopt), {d});
      return {rs / x};
    }
    std::vector<Tensor> parts;
    for (int64_t i = 0; i < n; ++i) {
      Tensor xi = cat({narrow(x, d, 0, i), ones_like(narrow(x, d, i, 1)), narrow(x, d, i + 1, n - i - 1)}, d);
      Tensor cp = cumprod(xi, d, std::nullopt);
      parts.push_back(sum(narrow(g[0] * cp, d, i, n - i), IntList{d}, true, std::nullopt));
    }
    return {cat(parts, d)};
  }, true, true);
  return out;
}

static Tensor boolreduce(Op op, const Tensor& a, OptDims dims0, bool keepdim) {
  IntList dims = normalize_dims(a, dims0);
  Tensor x = a.dtype() == ScalarType::UInt8 ? a : to_dtype(a, ScalarType::Bool);
  return run_reduce(op, x, dims, keepdim, x.dtype());
}
Tensor all(const Tensor& a, OptDims dims, bool keepdim) { return boolreduce(Op::all, a, dims, keepdim); }
Tensor any(const Tensor& a, OptDims dims, bool keepdim) { return boolreduce(Op::any, a, dims, keepdim); }

static Tensor softmax_impl(Op op, const Tensor& a0, int64_t dim, std::optional<ScalarType> dtype) {
  Tensor a = dtype ? to_dtype(a0, *dtype) : a0;
  wrap_dim(dim, a.dim(), kScalarOk);  // torch checks the dim before the dtype
  if (a.numel() == 0 && !is_floating(a.dtype())) return clone(a);  // torch returns an empty input as is, any dtype
  AG_CHECK_NOT_IMPL(is_floating(a.dtype()), "\"", op == Op::softmax ? "softmax_lastdim_kernel_impl" : "log_softmax_lastdim_kernel_impl",
                    "\" not implemented for '", scalar_type_name(a.dtype()), "'");
  Tensor out = scan(op, a, dim, a.dtype());
  int64_t d = a.dim() ? wrap_dim(dim, a.dim()) : 0;
  bool is_log = op == Op::log_softmax;
  fw_rule(out, {&a}, [&](const variable_list& t) {
    IntList dd = out.dim() ? IntList{d} : IntList{};
    if (is_log) return t[0] - sum(t[0] * exp(out), dd, true, std::nullopt);
    return out * (t[0] - sum(t[0] * out, dd, true, std::nullopt));
  });
  record_reduce(is_log ? "LogSoftmaxBackward0" : "SoftmaxBackward0", a, out, AG_BW {
    return {softmax_backward_data(g[0], c.get(1), d, is_log)};  // ops/loss.cpp
  }, false, true);
  return out;
}
Tensor softmax(const Tensor& a, int64_t dim, std::optional<ScalarType> dtype) { return softmax_impl(Op::softmax, a, dim, dtype); }
Tensor log_softmax(const Tensor& a, int64_t dim, std::optional<ScalarType> dtype) { return softmax_impl(Op::log_softmax, a, dim, dtype); }

}  // namespace ampgrad
