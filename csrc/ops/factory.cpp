// Creation ops and random fills. The CPU generator reproduces torch's CPU streams (mt19937 with
// torch's float transforms), so seeded runs give torch's numbers.
#include <cmath>
#include "core/overlap.h"
#include "ops/internal.h"

namespace ampgrad {

// Note [Exact integer fills]: the kernels take their scalars as doubles, which hold every integer up to
// 2**53 only. A larger int64 (2**63 - 1 as a Python number meeting a tensor) is written as its int64
// bits and cast from there, as torch's Scalar does: through a double it became 2**63, whose cast back
// to int64 is undefined (x86 gives -2**63, so `x - (2**63 - 1)` had the wrong sign).
static bool exact_in_double(const Scalar& v) {
  return v.kind != Scalar::Int || (v.i >= -(int64_t(1) << 53) && v.i <= (int64_t(1) << 53));
}
static void fill_int64_exact(Tensor& t, int64_t v) {
  Tensor one = empty({}, ScalarType::Int64);
  *one.data<int64_t>() = v;
  Tensor c = to_dtype(one, t.dtype());  // int64 -> dtype: C++'s wrap-around, as torch's cast
  if (!t.device().is_cpu()) c = to_device(c, t.device());
  Tensor src = expand(c, t.sizes());
  run_elementwise(Op::copy, t, {&src});
}

Tensor& fill_(Tensor& t, Scalar value, const char* node_name) {
  check_scalar_fits(value, t.dtype());
  if (autograd::GradMode::is_enabled()) check_inplace(t, "fill_");
  else autograd::before_mutation(t);
  double s[1] = {value.to_double()};
  if (t.numel() > 0 && !exact_in_double(value)) fill_int64_exact(t, value.i);
  else if (t.numel() > 0) run_elementwise(Op::fill, t, {}, s);
  t.bump_version();
  rebase_constant(t, node_name);  // the filled value no longer depends on the old history
  fw_inplace(t, Tensor());
  return t;
}
Tensor& fill_(Tensor& t, Scalar value) { return fill_(t, value, "FillBackward2"); }
Tensor& zero_(Tensor& t) { return fill_(t, Scalar(0.0), "ZeroBackward0"); }

Tensor& fill_(Tensor& t, const Tensor& value) {
  AG_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ", value.dim(), " dimensions.");
  if ((value.requires_grad() && autograd::GradMode::is_enabled()) || fw_has(value)) return copy_(t, value);
  Scalar v = is_floating(value.dtype()) ? Scalar(item_double(value)) : Scalar(static_cast<int64_t>(item_double(value)));
  return fill_(t, v);
}

Tensor full(const Shape& sizes, Scalar value, ScalarType dtype, Device device) {
  check_scalar_fits(value, dtype);
  Tensor t = empty(sizes, dtype, device);
  double s[1] = {value.kind == Scalar::Float ? value.d : static_cast<double>(value.i)};
  if (t.numel() > 0 && !exact_in_double(value)) fill_int64_exact(t, value.i);  // Note [Exact integer fills]
  else if (t.numel() > 0) run_elementwise(Op::fill, t, {}, s);
  return t;
}

Tensor arange(double start, double end, double step, ScalarType dtype, Device device) {
  AG_CHECK(step != 0, "step must be nonzero");
  AG_CHECK(std::isfinite(start) && std::isfinite(end), "unsupported range: ", start, " -> ", end);
  AG_CHECK((step > 0 && end >= start) || (step < 0 && end <= start), "upper bound and larger bound inconsistent with step sign");
  const double size_d = std::ceil((end - start) / step);
  AG_CHECK(size_d >= 0 && size_d < 9.2233720368547758e18, "invalid size, possible overflow?");  // a double >= 2^63 has no int64
  Tensor t = empty({static_cast<int64_t>(size_d)}, dtype, device);
  double s[2] = {start, step};
  if (t.numel() > 0) run_elementwise(Op::arange, t, {}, s);
  return t;
}

Tensor linspace(double start, double end, int64_t steps, ScalarType dtype, Device device) {
  AG_CHECK(steps >= 0, "number of steps must be non-negative");
  Tensor t = empty({steps}, dtype, device);
  double step = steps > 1 ? (end - start) / static_cast<double>(steps - 1) : 0.0;
  double s[4] = {start, step, static_cast<double>(steps / 2), end};
  if (steps == 1) s[2] = 1;
  if (t.numel() > 0) run_elementwise(Op::linspace, t, {}, s);
  return t;
}

Tensor eye(int64_t n, int64_t m, ScalarType dtype, Device device) {
  AG_CHECK(n >= 0, "n must be greater or equal to 0, got ", n);
  AG_CHECK(m >= 0, "m must be greater or equal to 0, got ", m);
  Tensor t = full({n, m}, Scalar(0.0), dtype, device);
  int64_t k = std::min(n, m);
  if (k > 0) {
    Tensor d = make_view(t, {k}, {m + 1}, 0);
    double s[1] = {1.0};
    run_elementwise(Op::fill, d, {}, s);
  }
  return t;
}

// ---------------------------------------------------------------- random
Tensor& uniform_(Tensor& t, double from, double to) {
  AG_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from, " > to=", to);
  AG_CHECK_NOT_IMPL(is_floating(t.dtype()), "\"check_uniform_bounds\" not implemented for '", scalar_type_name(t.dtype()), "'");
  assert_no_internal_overlap(t);  // Note [In-place checks]
  check_inplace(t, "uniform_");
  kernel<RandomKernel>(Op::uniform, t.device())(t, from, to);
  t.bump_version();
  rebase_constant(t, "UniformBackward0");
  fw_inplace(t, Tensor());
  return t;
}

Tensor& exponential_(Tensor& t, double lambd) {
  AG_CHECK(lambd > 0.0, "exponential_ expects lambda > 0.0, but found lambda=", lambd);
  if (t.numel() == 0) return t;  // torch checks the dtype only when there is something to fill
  AG_CHECK(is_floating(t.dtype()), "Exponential distribution is a continuous probability distribution. dtype must be a floating point but you specified ",
           scalar_type_name(t.dtype()));
  assert_no_internal_overlap(t);
  check_inplace(t, "exponential_");
  kernel<RandomKernel>(Op::exponential, t.device())(t, lambd, 0.0);
  t.bump_version();
  rebase_constant(t, "ExponentialBackward0");
  fw_inplace(t, Tensor());
  return t;
}

// cauchy_ / log_normal_ / geometric_: torch's CPU draws, one double uniform (log_normal: one
// Box-Muller normal, the cached second sample shared with normal_) per element in storage order.
namespace {
Tensor& random_fill(Tensor& t, Op op, const char* name, const char* node, double a, double b) {
  assert_no_internal_overlap(t);
  check_inplace(t, name);
  kernel<RandomKernel>(op, t.device())(t, a, b);
  t.bump_version();
  rebase_constant(t, node);
  fw_inplace(t, Tensor());
  return t;
}

// caffe2's TypeMeta names, which torch's cauchy_ message prints
const char* type_meta_name(ScalarType s) {
  switch (s) {
    case ScalarType::Int8: return "signed char";
    case ScalarType::Int16: return "short int";
    case ScalarType::Int32: return "int";
    case ScalarType::Int64: return "long int";
    case ScalarType::UInt8: return "unsigned char";
    case ScalarType::Bool: return "bool";
    default: return dtype_name(s);
  }
}
}  // namespace

Tensor& cauchy_(Tensor& t, double median, double sigma) {
  AG_CHECK(sigma > 0.0, "cauchy_ expects sigma > 0.0, but found sigma=", sigma);
  AG_CHECK(is_floating(t.dtype()), "Cauchy distribution is a continuous probability distribution. dtype must be a floating point but you specified ",
           type_meta_name(t.dtype()));  // before the empty check, as torch's
  if (t.numel() == 0) return t;
  return random_fill(t, Op::cauchy, "cauchy_", "CauchyBackward0", median, sigma);
}

Tensor& log_normal_(Tensor& t, double mean, double std) {
  AG_CHECK(std > 0.0, "log_normal_ expects std > 0.0, but found std=", std);
  if (t.numel() == 0) return t;
  assert_no_internal_overlap(t);  // torch builds its iterator (the overlap check) before the dtype dispatch
  AG_CHECK_NOT_IMPL(is_floating(t.dtype()), "\"log_normal_cpu\" not implemented for '", scalar_type_name(t.dtype()), "'");
  return random_fill(t, Op::log_normal, "log_normal_", "LogNormalBackward0", mean, std);
}

Tensor& geometric_(Tensor& t, double p) {
  AG_CHECK(0 < p && p < 1, "geometric_ expects p to be in (0, 1), but got p=", p);
  if (t.numel() == 0) return t;
  AG_CHECK_NOT_IMPL(t.dtype() != ScalarType::Bool, "\"geometric_cpu\" not implemented for '", scalar_type_name(t.dtype()), "'");
  return random_fill(t, Op::geometric, "geometric_", "GeometricBackward0", p, 0.0);
}

// torch's multinomial: without replacement (or one draw) argmax / topk of p / q with q ~ Exp(1) (the
// Gumbel trick, one exponential per probability); with replacement the sampler of Note [Multinomial
// kernel] over uniform doubles drawn in row order. Both consume torch's CPU stream as torch does.
Tensor multinomial(const Tensor& p, int64_t n, bool replacement) {
  AG_CHECK(p.dim() > 0 && p.dim() <= 2, "prob_dist must be 1 or 2 dim");
  AG_CHECK(is_floating(p.dtype()), "multinomial only supports floating-point dtypes for input, got: ", scalar_type_name(p.dtype()));
  AG_CHECK(n > 0, "cannot sample n_sample <= 0 samples");
  const int64_t C = p.sizes()[p.dim() - 1];
  AG_CHECK(replacement || n <= C, "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  AG_CHECK(C <= (int64_t{1} << 24), "number of categories cannot exceed 2^24");
  autograd::AutoGradMode off(false);
  Tensor pd = detach(p);
  const int64_t D = p.dim() == 1 ? 1 : p.sizes()[0];
  Shape out_shape = p.dim() == 1 ? Shape{n} : Shape{D, n};
  if (pd.numel() == 0) return empty(out_shape, ScalarType::Int64, p.device());
  if (!replacement || n == 1) {
    const bool finite_nonneg = item_double(amax(pd, std::nullopt, false)) < std::numeric_limits<double>::infinity() &&
                               item_double(amin(pd, std::nullopt, false)) >= 0;  // nan fails both
    AG_CHECK(finite_nonneg, "probability tensor contains either `inf`, `nan` or element < 0");
    Tensor zero_rows = sum(to_dtype(compare(Op::eq, sum(pd, IntList{p.dim() - 1}, false, std::nullopt), wrap_scalar(0.0)), ScalarType::Int64),
                           std::nullopt, false, std::nullopt);
    AG_CHECK(item_double(zero_rows) == 0, "invalid multinomial distribution (sum of probabilities <= 0)");
    Tensor q = empty(pd.sizes(), pd.dtype(), pd.device());
    exponential_(q, 1.0);
    q = div(pd, q);
    if (n == 1) return argmax(q, int64_t{p.dim() - 1}, true);
    return topk(q, n, -1, true, true).second;
  }
  Tensor p2 = contiguous(reshape(pd, {D, C}));
  AG_CHECK(item_double(amin(p2, std::nullopt, false)) >= 0,
           "invalid multinomial distribution (encountering probability entry < 0)");
  AG_CHECK(item_double(all(isfinite(p2), std::nullopt, false)) != 0,
           "invalid multinomial distribution (encountering probability entry = infinity or NaN)");
  AG_CHECK(item_double(amin(sum(p2, IntList{1}, false, std::nullopt), std::nullopt, false)) > 0,
           "invalid multinomial distribution (sum of probabilities <= 0)");
  Tensor u = empty({D, n}, ScalarType::Float64, p.device());
  uniform_(u, 0.0, 1.0);
  Tensor out = empty({D, n}, ScalarType::Int64, p.device());
  kernel<MultinomialKernel>(Op::multinomial, p.device())(p2, u, out, n);
  return reshape(out, out_shape);
}

Tensor& normal_(Tensor& t, double mean, double std) {
  AG_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  AG_CHECK_NOT_IMPL(is_floating(t.dtype()), "\"normal_kernel_cpu\" not implemented for '", scalar_type_name(t.dtype()), "'");
  assert_no_internal_overlap(t);
  check_inplace(t, "normal_");
  kernel<RandomKernel>(Op::normal, t.device())(t, mean, std);
  t.bump_version();
  rebase_constant(t, "NormalBackward0");
  fw_inplace(t, Tensor());
  return t;
}

Tensor randint(int64_t low, int64_t high, const Shape& sizes, ScalarType dtype, Device device) {
  AG_CHECK(low < high, "random_ expects 'from' to be less than 'to', but got from=", low, " >= to=", high);
  if (is_integral(dtype, true) && dtype != ScalarType::Int64 && dtype != ScalarType::UInt64) {  // torch's check_from_to
    const int64_t bits = itemsize(dtype) * 8;
    const bool sign = is_signed(dtype);
    const int64_t lo = sign ? -(int64_t(1) << (bits - 1)) : 0;
    const int64_t hi = dtype == ScalarType::Bool ? 1 : sign ? (int64_t(1) << (bits - 1)) - 1 : (int64_t(1) << bits) - 1;
    AG_CHECK(low >= lo && low <= hi, "from is out of bounds for ", cpp_type_name(dtype));
    AG_CHECK(high - 1 >= lo && high - 1 <= hi, "to - 1 is out of bounds for ", cpp_type_name(dtype));
  }
  Tensor t = empty(sizes, dtype, device);
  kernel<RandomKernel>(Op::randint, t.device())(t, pack_i64(low), pack_i64(high));  // Note [Integer bounds of randint]
  return t;
}

Tensor randperm(int64_t n, ScalarType dtype, Device device) {
  AG_CHECK(n >= 0, "n must be non-negative, got", n);
  Tensor t = arange(0, static_cast<double>(n), 1, dtype, device);
  kernel<RandomKernel>(Op::randperm, t.device())(t, 0, 0);  // shuffles t (0..n-1) in place
  return t;
}

}  // namespace ampgrad
