// Scans, index reductions and binning: scatter_reduce / index_reduce (one kernel: index_reduce runs it
// with its index expanded over the source), cummax / cummin, logcumsumexp, searchsorted / bucketize,
// bincount, histc. Kernels: Note [Scan-index kernels]; backward formulas are torch's, in ampgrad ops.
#include <cmath>
#include <limits>
#include "kernels/scan_index_args.h"
#include "ops/internal.h"
#include "ops/scan_index.h"

namespace ampgrad {

namespace {
using SA = ScanIndexArgs;

void run(Op op, std::vector<Tensor> in, std::vector<Tensor> out, const SA& a) {
  kernel<ScanIndexKernel>(op, in.empty() ? out[0].device() : in[0].device())(in.data(), out.data(), a);
}

Tensor cont(const Tensor& t) { return t.is_contiguous() ? t : contiguous(t); }
Tensor contiguous_copy_of(const Tensor& t) { return t.is_contiguous() ? clone(t) : contiguous(t); }
Tensor as_long(const Tensor& t) { return t.dtype() == ScalarType::Int64 ? cont(t) : contiguous(to_dtype(t, ScalarType::Int64)); }
Tensor scalar_like(double v, const Tensor& t) { return full({}, Scalar(v), t.dtype(), t.device()); }
Tensor eqt(const Tensor& a, const Tensor& b) { return compare(Op::eq, a, b); }

SA::Reduce parse_reduce(const std::string& r) {
  if (r == "sum") return SA::kSum;
  if (r == "prod") return SA::kProd;
  if (r == "mean") return SA::kMean;
  if (r == "amax") return SA::kAmax;
  if (r == "amin") return SA::kAmin;
  AG_THROW(RuntimeError, "reduce argument must be either sum, prod, mean, amax or amin, got ", r);
}

// Out-of-range entries raise `fail(value)`; negative indices are out of range too.
template <typename F>
void check_index_bounds(const Tensor& idx, int64_t size, F fail) {
  if (idx.numel() == 0) return;
  autograd::AutoGradMode off(false);
  Tensor c = as_long(detach(idx));
  const int64_t* p = c.data<int64_t>();
  for (int64_t i = 0; i < c.numel(); ++i)
    if (p[i] < 0 || p[i] >= size) fail(p[i]);
}

// The kernel on already validated operands: self [S], index int64 [I] (same rank), src narrowed to [I].
Tensor scatter_reduce_kernel(Op op, const Tensor& self, int64_t d, const Tensor& idx, const Tensor& src, SA::Reduce r, bool include_self) {
  autograd::AutoGradMode off(false);
  const bool scalar = self.dim() == 0;
  Tensor s = scalar ? reshape(self, {1}) : self;
  if (idx.numel() == 0) return contiguous_copy_of(self);
  Tensor out = empty(s.sizes(), self.dtype(), self.device());
  if (out.numel() > 0) {
    Tensor i = scalar ? reshape(idx, {-1}) : idx;
    Tensor v = src.dim() == 0 && i.dim() == 1 ? reshape(src, {1}) : src;
    for (int64_t k = 0; k < v.dim(); ++k) v = narrow(v, k, 0, i.sizes()[k]);
    SA a;
    a.mode = SA::kScatterReduce;
    a.reduce = r;
    a.include_self = include_self;
    a.dim = scalar ? 0 : d;
    a.out_sizes.assign(s.sizes().begin(), s.sizes().end());
    a.idx_sizes.assign(i.sizes().begin(), i.sizes().end());
    run(op, {cont(s), as_long(i), cont(v)}, {out}, a);
  }
  return scalar ? reshape(out, {}) : out;
}

// torch's scatter_reduce_backward / index_reduce_backward, with index_reduce's index expanded (gather
// at the expanded index is index_select, scatter_add there is index_add).
variable_list reduce_backward(const Tensor& grad, const Tensor& self, int64_t d, const Tensor& idx, const Tensor& src, SA::Reduce r,
                              bool include_self, const Tensor& result, const std::string& reduce, bool need_self, bool need_src) {
  Tensor gs, gsrc;
  if (r == SA::kSum) {
    gs = grad;
    gsrc = gather(grad, d, idx);
  } else if (r == SA::kProd) {
    Tensor zero = scalar_like(0.0, self), one = scalar_like(1.0, self);
    Tensor masked_self = masked_fill(self, eqt(self, zero), one);
    Tensor masked_self_result = scatter_reduce(masked_self, d, idx, src, reduce, include_self);
    gs = grad * masked_self_result / masked_self;
    Tensor src_zero = eqt(src, zero);
    Tensor src_num_zeros = gather(scatter_add(zeros_like(self), d, idx, to_dtype(src_zero, self.dtype())), d, idx);
    Tensor src_single_zero = logical(Op::logical_and, src_zero, eqt(src_num_zeros, one));
    Tensor masked_src = masked_fill(src, src_single_zero, one);
    Tensor masked_src_result = scatter_reduce(self, d, idx, masked_src, reduce, include_self);
    gsrc = where(src_single_zero, gather(grad * masked_src_result, d, idx),
                 gather(grad * result, d, idx) / masked_fill(src, src_zero, one));
  } else if (r == SA::kMean) {
    Tensor N = include_self ? ones_like(grad) : zeros_like(grad);
    N = scatter_add(N, d, idx, ones_like(src));
    N = masked_fill(N, eqt(N, scalar_like(0.0, N)), scalar_like(1.0, N));
    gs = grad / N;
    gsrc = gather(grad, d, idx) / gather(N, d, idx);
  } else {  // amax / amin: the gradient split evenly between ties
    Tensor value = gather(result, d, idx);
    Tensor self_is_result = to_dtype(eqt(self, result), self.dtype());
    Tensor src_is_result = to_dtype(eqt(src, value), self.dtype());
    Tensor n = scatter_add(self_is_result, d, idx, src_is_result);
    Tensor gd = grad / n;
    gs = self_is_result * gd;
    gsrc = src_is_result * gather(gd, d, idx);
  }
  if (!include_self && need_self) gs = scatter(gs, d, idx, scalar_like(0.0, gs));
  return {need_self ? gs : Tensor(), need_src ? gsrc : Tensor()};
}

Tensor record_reduce(const char* name, Tensor out, const Tensor& self0, int64_t d, const Tensor& idx, const Tensor& src0, SA::Reduce r,
                     bool include_self, const std::string& reduce) {
  Tensor self = self0, src = src0;
  fw_rule(out, {&self, &src}, [&](const variable_list& t) {
    AG_CHECK(r == SA::kSum || r == SA::kMean, "Forward AD for scatter_reduce with reduce=", reduce, " is not implemented yet");
    return scatter_reduce(or_zeros(t[0], self), d, idx, or_zeros(t[1], src), reduce, include_self);
  });
  if (!is_floating(out.dtype())) return out;
  if (auto node = autograd::make_node(name, {&self, &src}, AG_BW {
        return reduce_backward(g[0], c.get(0), d, idx, c.get(1), r, include_self, c.get(2), reduce, c.needs_input_grad(0),
                               c.needs_input_grad(1));
      })) {
    autograd::set_history(node, {&out});
    node->save(self);
    node->save(src);
    node->save(out, true);
  }
  return out;
}

Tensor scatter_reduce_impl(const char* name, Op op, const Tensor& self, int64_t d, const Tensor& idx, const Tensor& src, SA::Reduce r,
                           bool include_self, const std::string& reduce) {
  Tensor out = scatter_reduce_kernel(op, self, d, idx, src, r, include_self);
  return record_reduce(name, detach(out), self, d, idx, src, r, include_self, reduce);
}

// cummax / cummin / logcumsumexp over a contiguous [A, R, B] view.
SA scan_args(const Tensor& x, int64_t d) {
  SA a;
  a.R = x.dim() ? x.sizes()[d] : 1;
  for (int64_t i = 0; i < d; ++i) a.A *= x.sizes()[i];
  for (int64_t i = d + 1; i < x.dim(); ++i) a.B *= x.sizes()[i];
  return a;
}

// The cummax / cummin backward: zeros scattered-added at the saved indices (torch's cummaxmin_backward),
// one fused kernel; its own gradient is the gather at the same indices.
Tensor cum_backward(const Tensor& grad, const Tensor& indices, int64_t d) {
  Tensor out;
  {
    autograd::AutoGradMode off(false);
    Tensor g = cont(grad);
    out = empty(g.sizes(), g.dtype(), g.device());
    SA a = scan_args(g, d);
    a.mode = SA::kCumBackward;
    if (out.numel() > 0) run(Op::scan_index_backward, {g, cont(indices)}, {out}, a);
    out = detach(out);
  }
  Tensor gr = grad;
  fw_rule(out, {&gr}, [&](const variable_list& t) { return cum_backward(t[0], indices, d); });
  if (auto node = autograd::make_node("ScatterAddBackward0", {&gr}, AG_BW { return {gather(g[0], d, indices)}; }))
    autograd::set_history(node, {&out});
  return out;
}

std::pair<Tensor, Tensor> cum_maxmin(const Tensor& a0, int64_t dim, bool is_max) {
  Tensor a = a0;
  // torch wraps dim only for a non-empty input of at least one dim
  const int64_t d = a.dim() == 0 || a.numel() == 0 ? 0 : wrap_dim(dim, a.dim());
  Tensor values = empty(a.sizes(), a.dtype(), a.device()), indices = empty(a.sizes(), ScalarType::Int64, a.device());
  {
    autograd::AutoGradMode off(false);
    SA s = scan_args(a, d);
    s.mode = is_max ? SA::kCumMax : SA::kCumMin;
    if (a.numel() > 0) run(Op::cummax, {cont(a)}, {values, indices}, s);
  }
  fw_rule(values, {&a}, [&](const variable_list& t) { return a.dim() ? gather(t[0], d, indices) : t[0]; });
  if (is_floating(a.dtype()))
    if (auto node = autograd::make_node(is_max ? "CummaxBackward0" : "CumminBackward0", {&a}, AG_BW {
          if (g[0].dim() == 0) return variable_list{g[0]};
          return variable_list{cum_backward(g[0], c.get(0), d)};
        })) {
      autograd::set_history(node, {&values});
      node->save(indices);
    }
  return {values, indices};
}

void check_index_dtype(const Tensor& idx, const char* op) {
  AG_CHECK(idx.dtype() == ScalarType::Int64 || idx.dtype() == ScalarType::Int32, op, "(): Expected dtype int32/int64 for index");
}
}  // namespace

// ---------------------------------------------------------------- scatter_reduce / index_reduce
int64_t check_scatter_reduce(const Tensor& self, int64_t dim, const Tensor& idx, const Tensor& src, const std::string& reduce) {
  // torch's order: dim, dtypes, shapes (skipped for an empty index), reduce, then the kernel's checks
  const int64_t d = wrap_dim(dim, self.dim(), kScalarOk);
  if (idx.numel() > 0) check_index_dtype(idx, "scatter");
  AG_CHECK(src.dtype() == self.dtype(), "scatter(): Expected self.dtype to be equal to src.dtype");
  if (idx.numel() > 0) {
    AG_CHECK(std::max<int64_t>(idx.dim(), 1) == std::max<int64_t>(self.dim(), 1), "Index tensor must have the same number of dimensions as self tensor");
    auto size = [](const Tensor& t, int64_t k) { return t.dim() == 0 ? int64_t(1) : t.sizes()[wrap_dim(k, t.dim())]; };
    const int64_t nd = std::max<int64_t>(self.dim(), 1);
    bool wrong = false;
    for (int64_t k = 0; k < nd && !wrong; ++k) wrong = k != d && size(idx, k) > size(self, k);
    for (int64_t k = 0; k < nd && !wrong; ++k) wrong = size(idx, k) > size(src, k);  // IndexError for a src with fewer dims
    AG_CHECK(!wrong, "Expected index ", shape_str(idx.sizes()), " to be no larger than self ", shape_str(self.sizes()), " apart from dimension ",
             d, " and to be no larger size than src ", shape_str(src.sizes()));
  }
  SA::Reduce r = parse_reduce(reduce);
  if (idx.numel() > 0)
    AG_CHECK(std::max<int64_t>(src.dim(), 1) == std::max<int64_t>(idx.dim(), 1), "Index tensor must have the same number of dimensions as src tensor");
  if (r == SA::kMean && self.dtype() == ScalarType::Bool) {
    AG_CHECK_NOT_IMPL(idx.numel() == 0, "\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'");
    AG_THROW(NotImplementedError, "\"div_floor_cpu\" not implemented for 'Bool'");
  }
  const int64_t n = self.dim() ? self.sizes()[d] : 1;
  check_index_bounds(idx, n, [&](int64_t i) { AG_THROW(RuntimeError, "index ", i, " is out of bounds for dimension ", d, " with size ", n); });
  return d;
}

Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& idx, const Tensor& src, const std::string& reduce, bool include_self) {
  const int64_t d = check_scatter_reduce(self, dim, idx, src, reduce);
  return scatter_reduce_impl("ScatterReduceBackward0", Op::scatter_reduce, self, d, idx, src, parse_reduce(reduce), include_self, reduce);
}

int64_t check_index_reduce(const Tensor& self, int64_t dim, const Tensor& idx, const Tensor& source, const std::string& reduce, bool include_self) {
  AG_CHECK(reduce == "prod" || reduce == "mean" || reduce == "amax" || reduce == "amin",
           "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got ", reduce, ".");
  const int64_t d = wrap_dim(dim, self.dim(), kScalarOk);
  AG_CHECK_INDEX(idx.dim() <= 1, "index_reduce_(): Index is supposed to be a vector, but got dim: ", idx.dim(), " with type: ",
                 scalar_type_name(idx.dtype()), " and size: ", shape_str(idx.sizes()));
  AG_CHECK(idx.dtype() == ScalarType::Int64 || idx.dtype() == ScalarType::Int32, "index_reduce_(): Expected dtype int32/int64 for index but got: ",
           scalar_type_name(idx.dtype()));
  AG_CHECK(self.dtype() == source.dtype(), "index_reduce_(): self (", scalar_type_name(self.dtype()), ") and source (",
           scalar_type_name(source.dtype()), ") must have the same scalar type");
  const int64_t ni = idx.numel();
  AG_CHECK(source.dim() == 0 || ni == source.sizes()[d], "index_reduce_(): Number of indices (", ni, ") should be equal to source.size(dim): (",
           source.dim() ? source.sizes()[d] : 1, "), for dim: ", d);
  bool same = source.dim() == self.dim();
  for (int64_t k = 0; same && k < self.dim(); ++k) same = k == d || source.sizes()[k] == self.sizes()[k];
  AG_CHECK(same, "source tensor shape must match self tensor shape, excluding the specified dimension. Got self.shape = ",
           shape_str(self.sizes()), " source.shape = ", shape_str(source.sizes()));
  if (self.dtype() == ScalarType::Bool) {  // torch's bool support depends on the path it takes
    AG_CHECK_NOT_IMPL(include_self, "\"index_reduce_func_exclude_input_init\" not implemented for 'Bool'");
    AG_CHECK_NOT_IMPL(self.dim() > 1, "\"index_func_\" not implemented for 'Bool'");
    AG_CHECK_NOT_IMPL(reduce != "mean", "\"div_floor_cpu\" not implemented for 'Bool'");
  }
  const int64_t n = self.dim() ? self.sizes()[d] : 1;
  check_index_bounds(idx, n, [&](int64_t) { AG_THROW(IndexError, "index out of range in self"); });
  return d;
}

Tensor index_reduce(const Tensor& self, int64_t dim, const Tensor& idx, const Tensor& source, const std::string& reduce, bool include_self) {
  const int64_t d = check_index_reduce(self, dim, idx, source, reduce, include_self);
  SA::Reduce r = parse_reduce(reduce);
  // The index expanded over the source: source element [.., j, ..] goes to self[.., idx[j], ..].
  if (self.dim() == 0)
    return scatter_reduce_impl("IndexReduceBackward0", Op::index_reduce, self, 0, reshape(as_long(idx), {}), source, r, include_self, reduce);
  Tensor e;
  {
    autograd::AutoGradMode off(false);
    Shape vs(self.dim(), 1);
    vs[d] = idx.numel();
    e = contiguous(expand(reshape(as_long(idx), IntList(vs.begin(), vs.end())), source.sizes()));
  }
  return scatter_reduce_impl("IndexReduceBackward0", Op::index_reduce, self, d, e, source, r, include_self, reduce);
}

// ---------------------------------------------------------------- scans
std::pair<Tensor, Tensor> cummax(const Tensor& a, int64_t dim) { return cum_maxmin(a, dim, true); }
std::pair<Tensor, Tensor> cummin(const Tensor& a, int64_t dim) { return cum_maxmin(a, dim, false); }

Tensor logcumsumexp(const Tensor& a0, int64_t dim) {
  Tensor a = a0;
  const int64_t d = wrap_dim(dim, a.dim(), kScalarOk);
  AG_CHECK_NOT_IMPL(is_floating(a.dtype()), "\"logcumsumexp_out_cpu\" not implemented for '", scalar_type_name(a.dtype()), "'");
  Tensor out = empty(a.sizes(), a.dtype(), a.device());
  {
    autograd::AutoGradMode off(false);
    SA s = scan_args(a, d);
    s.mode = SA::kLogCumSumExp;
    if (a.numel() > 0) run(Op::logcumsumexp, {cont(a)}, {out}, s);
  }
  fw_rule(out, {&a}, [&](const variable_list& t) {
    // torch's logcumsumexp_jvp: cumsum(t * e) / cumsum(e), e = exp(x - max(x, dim))
    Tensor e = exp(a - amax(a, IntList{d}, true));
    return cumsum(t[0] * e, d, std::nullopt) / cumsum(e, d, std::nullopt);
  });
  if (auto node = autograd::make_node("LogcumsumexpBackward0", {&a}, AG_BW {
        Tensor grad = g[0], self = c.get(0), result = c.get(1);
        if (grad.numel() == 0) return variable_list{grad};
        // torch's logcumsumexp_backward: positive and negative parts of grad in log space
        auto rev = [d](const Tensor& x) { return x.dim() ? flip(logcumsumexp(flip(x, IntList{d}), d), IntList{d}) : logcumsumexp(x, d); };
        const ScalarType gt = grad.dtype();
        Tensor lowest = scalar_like(gt == ScalarType::Float64   ? -std::numeric_limits<double>::max()
                                    : gt == ScalarType::Float32 ? -static_cast<double>(std::numeric_limits<float>::max())
                                    : gt == ScalarType::Float16 ? -65504.0
                                                                : -3.3895313892515355e38, grad);
        Tensor log_abs = log(abs(grad)), zero = scalar_like(0.0, grad);
        Tensor pos = where(compare(Op::gt, grad, zero), log_abs, lowest), neg = where(compare(Op::lt, grad, zero), log_abs, lowest);
        return variable_list{exp(rev(pos - result) + self) - exp(rev(neg - result) + self)};
      })) {
    autograd::set_history(node, {&out});
    node->save(a);
    node->save(out, true);
  }
  return out;
}

// ---------------------------------------------------------------- binning
Tensor searchsorted(const Tensor& boundaries, const Tensor& values, bool out_int32, bool right, const std::optional<std::string>& side,
                    const std::optional<Tensor>& sorter) {
  if (side) {
    AG_CHECK(*side == "left" || *side == "right", "torch.searchsorted(): side can only be 'left' or 'right' but got ", *side);
    AG_CHECK(!right || *side == "right", "torch.searchsorted(): side and right can't be set to opposites, got side of ", *side,
             " while right was True");
    right = *side == "right";
  }
  if (sorter) {
    AG_CHECK(sorter->sizes() == boundaries.sizes(), "torch.searchsorted(): boundary and sorter must have the same size, but got boundary tensor ",
             shape_str(boundaries.sizes()), "and got sorter tensor ", shape_str(sorter->sizes()));
    AG_CHECK(sorter->dtype() == ScalarType::Int64, "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype ",
             scalar_type_name(sorter->dtype()));
    const int64_t last = boundaries.dim() ? boundaries.sizes().back() : 1;
    check_index_bounds(*sorter, last, [](int64_t) { AG_THROW(RuntimeError, "torch.searchsorted(): sorter index out of range"); });
  }
  AG_CHECK(values.dim() > 0 || boundaries.dim() == 1,
           "torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension is 1, but we got boundaries tensor dim(",
           boundaries.dim(), ") and input value's dim(", values.dim(), ") numel(", values.numel(), ")");
  AG_CHECK(boundaries.dim() != 0, "torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 dimension");
  bool matched = boundaries.dim() == values.dim();
  for (int64_t k = 0; matched && k + 1 < boundaries.dim(); ++k) matched = boundaries.sizes()[k] == values.sizes()[k];
  AG_CHECK(boundaries.dim() == 1 || matched,
           "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor and input value "
           "tensor must match, but we got boundaries tensor ", shape_str(boundaries.sizes()), " and input value tensor ", shape_str(values.sizes()));
  autograd::AutoGradMode off(false);
  const Tensor* ops[2] = {&boundaries, &values};
  ScalarType ct = result_type(ops, 2);
  Tensor out = empty(values.sizes(), out_int32 ? ScalarType::Int32 : ScalarType::Int64, values.device());
  if (out.numel() == 0) return out;
  AG_CHECK_NOT_IMPL(ct != ScalarType::Bool, "\"searchsorted_out_cpu\" not implemented for 'Bool'");
  SA a;
  a.mode = SA::kSearchSorted;
  a.right = right;
  a.n = boundaries.sizes().back();
  a.rows = boundaries.dim() == 1 ? 1 : boundaries.numel() / std::max<int64_t>(a.n, 1);
  a.per_row = values.dim() ? values.sizes().back() : 1;
  Tensor b = contiguous(to_dtype(boundaries, ct)), v = contiguous(to_dtype(values, ct));
  run(Op::searchsorted, {b, v, sorter ? cont(*sorter) : Tensor()}, {out}, a);
  return out;
}

Tensor bucketize(const Tensor& values, const Tensor& boundaries, bool out_int32, bool right) {
  AG_CHECK(boundaries.dim() == 1, "boundaries tensor must be 1 dimension, but got dim(", boundaries.dim(), ")");
  return searchsorted(boundaries, values, out_int32, right, std::nullopt, std::nullopt);
}

Tensor bincount(const Tensor& x, const std::optional<Tensor>& weights, int64_t minlength) {
  AG_CHECK_NOT_IMPL(is_integral(x.dtype(), false), "\"bincount_cpu\" not implemented for '", scalar_type_name(x.dtype()), "'");
  AG_CHECK(minlength >= 0, "minlength should be >= 0");
  if (x.dim() == 1 && x.numel() == 0) return full({minlength}, Scalar(int64_t(0)), ScalarType::Int64, x.device());
  Tensor xi;
  {
    autograd::AutoGradMode off(false);
    xi = as_long(detach(x));
  }
  AG_CHECK(x.dim() == 1 && item_double(amin(xi, std::nullopt, false)) >= 0,
           "bincount only supports 1-d non-negative integral inputs.");
  AG_CHECK(!(weights && (weights->dim() != 1 || weights->sizes()[0] != x.sizes()[0])), "weights should be 1-d and have the same length as input");
  int64_t mx;
  {
    autograd::AutoGradMode off(false);
    mx = as_long(amax(xi, std::nullopt, false)).data<int64_t>()[0];
  }
  AG_CHECK(mx < std::numeric_limits<int64_t>::max(), "maximum value of input overflowed, it should be < ", std::numeric_limits<int64_t>::max(),
           " but got ", mx);
  const int64_t nbins = std::max<int64_t>(mx + 1, minlength);
  ScalarType od = !weights ? ScalarType::Int64 : weights->dtype() == ScalarType::Float32 ? ScalarType::Float32 : ScalarType::Float64;
  Tensor out = empty({nbins}, od, x.device());
  SA a;
  a.mode = SA::kBincount;
  Tensor w;
  if (weights) {
    autograd::AutoGradMode off(false);
    w = contiguous(to_dtype(detach(*weights), od));
  }
  run(Op::bincount, {xi, w}, {out}, a);
  if (weights && weights->requires_grad() && autograd::GradMode::is_enabled()) {
    Tensor wt = *weights;
    if (auto node = autograd::make_node("NotImplemented", {&wt}, AG_BW {
          AG_THROW(NotImplementedError, "the derivative for 'bincount' is not implemented.");
          return variable_list{};
        }))
      autograd::set_history(node, {&out});
  }
  return out;
}

Tensor histc(const Tensor& x, int64_t bins, double min, double max) {
  // torch's order: the range (from the data when min == max), then bins, then the dtype
  double lo = min, hi = max;
  if (lo == hi && x.numel() > 0) {
    autograd::AutoGradMode off(false);
    lo = item_double(amin(detach(x), std::nullopt, false));
    hi = item_double(amax(detach(x), std::nullopt, false));
  }
  if (lo == hi) { lo -= 1; hi += 1; }
  AG_CHECK(!(std::isinf(lo) || std::isinf(hi) || std::isnan(lo) || std::isnan(hi)), "torch.histc: range of [", lo, ", ", hi, "] is not finite");
  AG_CHECK(lo < hi, "torch.histc: max must be larger than min");
  AG_CHECK(bins > 0, "torch.histogram(): bins must be > 0, but got ", bins, " for dimension 0");
  // torch's bin edges are a linspace in the input's dtype: the range must convert to it
  AG_CHECK_NOT_IMPL(x.dtype() != ScalarType::Bool, "\"linspace_cpu\" not implemented for 'Bool'");
  for (double v : {lo, hi}) {
    const char* name = nullptr;
    switch (x.dtype()) {
      case ScalarType::UInt8: if (v < 0 || v > 255) name = "uint8_t"; break;
      case ScalarType::Int8: if (v < -128 || v > 127) name = "int8_t"; break;
      case ScalarType::Int16: if (v < -32768 || v > 32767) name = "int16_t"; break;
      case ScalarType::Int32: if (v < -2147483648.0 || v > 2147483647.0) name = "int"; break;
      case ScalarType::Int64: if (v < -9223372036854775808.0 || v > 9223372036854775807.0) name = "int64_t"; break;
      case ScalarType::Float16: if (std::abs(v) > 65504.0) name = "c10::Half"; break;
      case ScalarType::BFloat16: if (std::abs(v) > 3.3895313892515355e38) name = "c10::BFloat16"; break;
      case ScalarType::Float32: if (std::abs(v) > std::numeric_limits<float>::max()) name = "float"; break;
      default: break;
    }
    AG_CHECK(!name, "value cannot be converted to type ", name, " without overflow");
  }
  AG_CHECK_NOT_IMPL(is_floating(x.dtype()), "\"histogram_cpu\" not implemented for '", scalar_type_name(x.dtype()), "'");
  autograd::AutoGradMode off(false);
  Tensor out = empty({bins}, x.dtype(), x.device());
  SA a;
  a.mode = SA::kHistc;
  a.bins = bins;
  a.lo = lo;
  a.hi = hi;
  run(Op::histc, {contiguous(detach(x))}, {out}, a);
  return out;
}

}  // namespace ampgrad
