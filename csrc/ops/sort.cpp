// Sorting and order statistics: sort, argsort, msort, topk, kthvalue, median, nanmedian. One kernel
// slot (Note [Sort kernels]) over a contiguous [A, R, B] view of the input; the value-selecting ops
// share one backward: the gradient scattered back to the selected positions.
#include "ops/internal.h"

namespace ampgrad {

namespace {
struct Selected { Tensor values, indices; };

// Orders along dim d (already wrapped; a 0-d input counts as one element). The outputs have size `k`
// along d (1 for kth/median modes), laid out contiguously.
Selected run_sort(const Tensor& a, int64_t d, int64_t k, SortArgs::Mode mode, bool descending) {
  autograd::AutoGradMode off(false);
  const bool scalar = a.dim() == 0;
  Tensor x = scalar ? reshape(a, {1}) : a;
  if (!x.is_contiguous()) x = contiguous(x);
  SortArgs r{1, x.sizes()[d], 1, k, mode, descending};
  for (int64_t i = 0; i < d; ++i) r.A *= x.sizes()[i];
  for (int64_t i = d + 1; i < x.dim(); ++i) r.B *= x.sizes()[i];
  Shape shape = x.sizes();
  shape[d] = mode == SortArgs::kSort || mode == SortArgs::kTopk ? k : 1;
  Selected s{empty(shape, a.dtype(), a.device()), empty(shape, ScalarType::Int64, a.device())};
  kernel<SortKernel>(Op::sort, a.device())(x, s.values, s.indices, r);
  if (scalar) { s.values = reshape(s.values, {}); s.indices = reshape(s.indices, {}); }
  return s;
}

// Records `name` on values: its backward puts g at the saved indices of a zero tensor of the input's
// shape (values/indices keep dim d unless `squeezed`); the jvp gathers the tangent the same way.
void record_selection(const char* name, const Tensor& a0, Selected& s, int64_t d, bool squeezed) {
  Tensor a = a0;
  const Shape in_shape = a.sizes();
  const int64_t nd = a.dim();
  auto expand_idx = [nd, d, squeezed](const Tensor& t) { return nd == 0 || !squeezed ? t : unsqueeze(t, d); };
  Tensor idx = s.indices;
  fw_rule(s.values, {&a}, [&](const variable_list& t) {
    if (nd == 0) return t[0];
    Tensor r = gather(t[0], d, expand_idx(idx));
    return squeezed ? squeeze(r, IntList{d}) : r;
  });
  if (!is_floating(s.values.dtype())) return;
  if (auto node = autograd::make_node(name, {&a}, AG_BW {
        if (nd == 0) return variable_list{g[0]};
        return variable_list{scatter(full(in_shape, Scalar(0.0), g[0].dtype(), g[0].device()), d, expand_idx(c.get(0)),
                                     expand_idx(g[0]))};
      })) {
    autograd::set_history(node, {&s.values});
    node->save(idx);
  }
}

int64_t sort_dim(const Tensor& a, int64_t dim) { return wrap_dim(dim, a.dim(), kScalarOk); }
int64_t dim_size(const Tensor& a, int64_t d) { return a.dim() ? a.sizes()[d] : 1; }

Selected squeeze_kept(Selected s, const Tensor& a, int64_t d, bool keepdim) {
  if (!keepdim && a.dim() > 0) { s.values = squeeze(s.values, IntList{d}); s.indices = squeeze(s.indices, IntList{d}); }
  return s;
}
}  // namespace

std::pair<Tensor, Tensor> sort(const Tensor& a, int64_t dim, bool descending, bool stable) {
  const int64_t d = sort_dim(a, dim);
  Selected s = run_sort(a, d, dim_size(a, d), SortArgs::kSort, descending);
  record_selection(stable ? "SortBackward1" : "SortBackward0", a, s, d, false);
  return {s.values, s.indices};
}

Tensor argsort(const Tensor& a, int64_t dim, bool descending, bool stable) {
  const int64_t d = sort_dim(a, dim);
  return run_sort(a, d, dim_size(a, d), SortArgs::kSort, descending).indices;
}

std::pair<Tensor, Tensor> topk(const Tensor& a, int64_t k, int64_t dim, bool largest, bool sorted) {
  const int64_t d = sort_dim(a, dim);
  AG_CHECK(k >= 0 && k <= dim_size(a, d), "selected index k out of range");
  Selected s = run_sort(a, d, k, SortArgs::kTopk, largest);
  record_selection("TopkBackward0", a, s, d, false);
  return {s.values, s.indices};
}

std::pair<Tensor, Tensor> kthvalue(const Tensor& a, int64_t k, int64_t dim, bool keepdim) {
  const int64_t d = sort_dim(a, dim);
  AG_CHECK(k >= 1 && k <= dim_size(a, d), "kthvalue(): selected number k out of range for dimension ", d);
  AG_CHECK_NOT_IMPL(a.dtype() != ScalarType::Bool, "\"kthvalue_cpu\" not implemented for 'Bool'");
  Selected s = squeeze_kept(run_sort(a, d, k, SortArgs::kKth, false), a, d, keepdim);
  record_selection("KthvalueBackward0", a, s, d, !keepdim);
  return {s.values, s.indices};
}

std::pair<Tensor, Tensor> median_dim(const Tensor& a, int64_t dim, bool keepdim, bool ignore_nan) {
  const int64_t d = sort_dim(a, dim);
  const char* name = ignore_nan ? "nanmedian" : "median";
  AG_CHECK_INDEX(dim_size(a, d) > 0, name, "(): Expected reduction dim ", d, " to have non-zero size.");
  AG_CHECK_NOT_IMPL(a.dtype() != ScalarType::Bool, "\"", ignore_nan ? "nanmedian_cpu" : "median_out", "\" not implemented for 'Bool'");
  Selected s = squeeze_kept(run_sort(a, d, 1, ignore_nan ? SortArgs::kNanMedian : SortArgs::kMedian, false), a, d, keepdim);
  record_selection(ignore_nan ? "NanmedianBackward1" : "MedianBackward1", a, s, d, !keepdim);
  return {s.values, s.indices};
}

Tensor median_all(const Tensor& a, bool ignore_nan) {
  // torch: NaN for an empty input, converted to the input's type as C++ converts it (0 for int8,
  // INT64_MIN for int64, true for bool)
  if (a.numel() == 0) return to_dtype(full({}, Scalar(std::numeric_limits<double>::quiet_NaN()), ScalarType::Float32, a.device()), a.dtype());
  AG_CHECK_NOT_IMPL(a.dtype() != ScalarType::Bool, "\"", ignore_nan ? "nanmedian_cpu" : "median_cpu", "\" not implemented for 'Bool'");
  Tensor flat = reshape(a, {a.numel()});
  Selected s = run_sort(flat, 0, 1, ignore_nan ? SortArgs::kNanMedian : SortArgs::kMedian, false);
  s.values = reshape(s.values, {});
  s.indices = reshape(s.indices, {});
  // The backward puts g at the flat index of the input (torch's evenly_distribute_backward for a single pick).
  Tensor x = a;
  const Shape in_shape = a.sizes();
  const int64_t n = a.numel();
  Tensor idx = s.indices;
  fw_rule(s.values, {&x}, [&](const variable_list& t) { return reshape(gather(reshape(t[0], {n}), 0, reshape(idx, {1})), {}); });
  if (is_floating(a.dtype()))
    if (auto node = autograd::make_node(ignore_nan ? "NanmedianBackward0" : "MedianBackward0", {&x}, AG_BW {
          Tensor z = full({n}, Scalar(0.0), g[0].dtype(), g[0].device());
          return variable_list{reshape(scatter(z, 0, reshape(c.get(0), {1}), reshape(g[0], {1})), in_shape)};
        })) {
      autograd::set_history(node, {&s.values});
      node->save(idx);
    }
  return s.values;
}

}  // namespace ampgrad
