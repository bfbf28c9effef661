// Shape and indexing ops that copy. Advanced indexing, gather/scatter and the index_* family all
// reduce to two kernels that read or write by element offsets (Note [Offset indexing]).
#include "ops/internal.h"
#include "ops/scan_index.h"

namespace ampgrad {

namespace {
// Note [Offset indexing]: an index expression becomes `off` (one int64 per index tuple, the
// element offset of its base) and `roff` (the offsets of the non-indexed dims), both computed
// with ampgrad's own int64 ops; the kernels then just read or write src[off[i] + roff[r]].
Tensor arange_long(int64_t n, Device dev) { return arange(0, static_cast<double>(n), 1, ScalarType::Int64, dev); }

Tensor wrap_index(const Tensor& idx, int64_t size, int64_t dim) {
  autograd::AutoGradMode off(false);
  if (idx.numel() > 0) {
    double lo = item_double(amin(idx, std::nullopt, false)), hi = item_double(amax(idx, std::nullopt, false));
    if (lo < -size || hi >= size)
      AG_THROW(IndexError, "index ", static_cast<int64_t>(hi >= size ? hi : lo), " is out of bounds for dimension ", dim, " with size ", size);
    if (lo < 0) return where(compare(Op::lt, idx, wrap_scalar(int64_t(0))), add(idx, wrap_scalar(size)), idx);
  }
  return idx;
}

Tensor rest_offsets(const Shape& sizes, const Shape& strides, Device dev) {
  autograd::AutoGradMode off(false);
  Tensor r = full({}, Scalar(int64_t(0)), ScalarType::Int64, dev);
  for (size_t k = 0; k < sizes.size(); ++k)
    r = add(unsqueeze(r, -1), mul(arange_long(sizes[k], dev), wrap_scalar(strides[k])));
  return contiguous(reshape(r, {-1}));
}

struct IndexPlan {
  std::vector<int64_t> idims, rdims;  // indexed dims, rest dims (in order)
  std::vector<Tensor> idx;            // long indices, broadcast to ishape
  Shape ishape;
  bool adjacent = true;
  Shape result_shape;                 // torch's result layout
  IntList to_result;                  // permutation from [I..., rest...] to result order
};

IndexPlan plan_index(const Tensor& a, const std::vector<std::optional<Tensor>>& indices0) {
  IndexPlan p;
  // Bool masks become one long index per masked dim.
  std::vector<std::optional<Tensor>> indices;
  int64_t d = 0;
  for (auto& it : indices0) {
    if (it && (it->dtype() == ScalarType::Bool || it->dtype() == ScalarType::UInt8)) {
      const Tensor& m = *it;
      for (int64_t k = 0; k < m.dim(); ++k)
        AG_CHECK_INDEX(d + k < a.dim() && m.sizes()[k] == a.sizes()[d + k], "The shape of the mask ", shape_str(m.sizes()),
                       " at index ", k, " does not match the shape of the indexed tensor ", shape_str(a.sizes()), " at index ", d + k);
      Tensor nz = nonzero(m);
      for (int64_t k = 0; k < m.dim(); ++k) indices.push_back(select(nz, 1, k));
      if (m.dim() == 0) {  // a 0-dim mask adds a dim of size 0 or 1
        AG_THROW(NotImplementedError, "indexing with a 0-dim boolean mask is not supported");
      }
      d += m.dim();
    } else {
      if (it) AG_CHECK_INDEX(it->dtype() == ScalarType::Int64 || it->dtype() == ScalarType::Int32,
                             "tensors used as indices must be long, int, byte or bool tensors");
      indices.push_back(it);
      d += 1;
    }
  }
  AG_CHECK_INDEX(static_cast<int64_t>(indices.size()) <= a.dim(), "too many indices for tensor of dimension ", a.dim(),
                 " (got ", indices.size(), ")");
  indices.resize(a.dim());
  int64_t last = -2;
  for (int64_t k = 0; k < a.dim(); ++k) {
    if (indices[k]) {
      if (last >= 0 && k != last + 1) p.adjacent = false;
      last = k;
      p.idims.push_back(k);
    } else {
      p.rdims.push_back(k);
    }
  }
  AG_CHECK_INDEX(!p.idims.empty(), "index: at least one index tensor expected");
  Shape is;
  for (auto k : p.idims) is = broadcast_shapes(is, indices[k]->sizes());
  p.ishape = is;
  for (auto k : p.idims) p.idx.push_back(wrap_index(expand(to_dtype(*indices[k], ScalarType::Int64), is), a.sizes()[k], k));
  // Result layout.
  Shape rest;
  for (auto k : p.rdims) rest.push_back(a.sizes()[k]);
  int64_t ni = is.size();
  int64_t before = p.adjacent ? p.idims.front() : 0;
  for (int64_t k = 0; k < before; ++k) p.to_result.push_back(ni + k);
  for (int64_t k = 0; k < ni; ++k) p.to_result.push_back(k);
  for (int64_t k = before; k < static_cast<int64_t>(rest.size()); ++k) p.to_result.push_back(ni + k);
  for (auto k : p.to_result) p.result_shape.push_back(k < ni ? is[k] : rest[k - ni]);
  return p;
}

Tensor base_offsets(const IndexPlan& p, const Tensor& t) {
  autograd::AutoGradMode off(false);
  Tensor o = full(p.ishape, Scalar(int64_t(0)), ScalarType::Int64, t.device());
  for (size_t j = 0; j < p.idims.size(); ++j) o = add(o, mul(p.idx[j], wrap_scalar(t.strides()[p.idims[j]])));
  return contiguous(reshape(o, {-1}));
}

Tensor rest_offsets_of(const IndexPlan& p, const Tensor& t) {
  Shape sz, st;
  for (auto k : p.rdims) { sz.push_back(t.sizes()[k]); st.push_back(t.strides()[k]); }
  return rest_offsets(sz, st, t.device());
}

// torch's index ops, unlike advanced indexing, take no negative indices; `fail` raises the op's
// own error for the first index outside [0, size).
template <typename F>
void check_bounds(const Tensor& idx, int64_t size, F fail) {
  if (idx.numel() == 0) return;
  autograd::AutoGradMode off(false);
  Tensor c = detach(idx);
  if (!c.device().is_cpu()) c = to_device(c, Device());
  c = contiguous(to_dtype(c, ScalarType::Int64));
  const int64_t* p = c.data<int64_t>();
  for (int64_t i = 0; i < c.numel(); ++i)
    if (p[i] < 0 || p[i] >= size) fail(p[i]);
}

// A row-major copy, never `a` itself: the out-of-place index_add/index_copy/scatter/masked_fill
// results are contiguous in torch, whatever the input's layout (index_put keeps it).
Tensor contiguous_copy(const Tensor& a) { return a.is_contiguous() ? clone(a) : contiguous(a); }

IntList inverse_perm(const IntList& perm) {
  IntList inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int64_t>(i);
  return inv;
}

// Writes `values` (broadcast to the index result shape) into `dst` in place, no autograd.
void put_into(Tensor& dst, const IndexPlan& p, const Tensor& values, bool accumulate) {
  autograd::AutoGradMode off(false);
  Tensor v = expand(to_dtype(values, dst.dtype()), p.result_shape);
  v = contiguous(permute(v, inverse_perm(p.to_result)));
  Tensor offs = base_offsets(p, dst), roff = rest_offsets_of(p, dst);
  if (offs.numel() == 0 || roff.numel() == 0) return;
  kernel<IndexPutKernel>(Op::index_put, dst.device())(dst, offs, roff, v, accumulate);
}
}  // namespace

Tensor index(const Tensor& a, const std::vector<std::optional<Tensor>>& indices) {
  IndexPlan p = plan_index(a, indices);
  Tensor offs = base_offsets(p, a), roff = rest_offsets_of(p, a);
  Shape flat_shape = p.ishape;
  for (auto k : p.rdims) flat_shape.push_back(a.sizes()[k]);
  Tensor flat = empty(flat_shape, a.dtype(), a.device());
  if (flat.numel() > 0) {
    Tensor o = flat;
    kernel<IndexGatherKernel>(Op::index, a.device())(a, offs, roff, o);
  }
  Tensor out;
  {
    autograd::AutoGradMode off(false);
    out = detach(contiguous(permute(flat, p.to_result)));
  }
  fw_rule(out, {&a}, [&](const variable_list& t) { return index(t[0], indices); });
  Shape in_shape = a.sizes();
  if (is_floating(a.dtype()))
    if (auto node = autograd::make_node("IndexBackward0", {&a}, AG_BW {
          return {index_put(full(in_shape, Scalar(0.0), g[0].dtype(), g[0].device()), indices, g[0], true)};
        }))
      autograd::set_history(node, {&out});
  return out;
}

static Tensor index_put_impl(const Tensor& a, const std::vector<std::optional<Tensor>>& indices, const Tensor& values0, bool accumulate,
                             bool contiguous_out) {
  Tensor values = values0;
  AG_CHECK(values.dtype() == a.dtype() || values.dim() == 0, "Index put requires the source and destination dtypes match, got ",
           scalar_type_name(a.dtype()), " for the destination and ", scalar_type_name(values.dtype()), " for the source.");
  IndexPlan p = plan_index(a, indices);
  Tensor out;
  {
    autograd::AutoGradMode off(false);
    out = contiguous_out ? contiguous_copy(a) : clone(a);
  }
  put_into(out, p, values, accumulate);
  out = detach(out);
  fw_rule(out, {&a, &values}, [&](const variable_list& t) {
    return index_put(or_zeros(t[0], a), indices, or_zeros(t[1], values), accumulate);
  });
  if (is_floating(a.dtype()))
    if (auto node = autograd::make_node("IndexPutBackward0", {&a, &values}, AG_BW {
          Tensor ga, gv;
          if (c.needs_input_grad(0)) ga = accumulate ? g[0] : index_put(g[0], indices, zeros_like(wrap_scalar(0.0)), false);
          if (c.needs_input_grad(1)) gv = index(g[0], indices);
          return {ga, gv};
        }))
      autograd::set_history(node, {&out});
  return out;
}

Tensor index_put(const Tensor& a, const std::vector<std::optional<Tensor>>& indices, const Tensor& values, bool accumulate) {
  return index_put_impl(a, indices, values, accumulate, false);
}

void index_put_into(Tensor& self, const std::vector<std::optional<Tensor>>& indices, const Tensor& values, bool accumulate) {
  AG_CHECK(values.dtype() == self.dtype() || values.dim() == 0, "Index put requires the source and destination dtypes match, got ",
           scalar_type_name(self.dtype()), " for the destination and ", scalar_type_name(values.dtype()), " for the source.");
  IndexPlan p = plan_index(self, indices);
  autograd::before_mutation(self);
  put_into(self, p, values, accumulate);
  self.bump_version();
}

Tensor index_select(const Tensor& a, int64_t dim, const Tensor& idx) {
  AG_CHECK_INDEX(idx.dim() <= 1, "index_select(): Index is supposed to be a vector");
  AG_CHECK(idx.dtype() == ScalarType::Int64 || idx.dtype() == ScalarType::Int32, "index_select(): Expected dtype int32 or int64 for index");
  AG_CHECK(a.dim() <= 1 || a.sizes()[wrap_dim(dim, a.dim(), kScalarOk)] > 0 || idx.numel() == 0,
           "index_select(): self indexing axis dim should be positive");
  check_bounds(idx, a.dim() ? a.sizes()[wrap_dim(dim, a.dim(), kScalarOk)] : 1, [](int64_t) { AG_THROW(IndexError, "index out of range in self"); });
  if (a.dim() == 0) return index(unsqueeze(a, 0), {reshape(idx, {-1})}).dim() ? reshape(index(unsqueeze(a, 0), {reshape(idx, {-1})}), {}) : a;
  int64_t d = wrap_dim(dim, a.dim());
  std::vector<std::optional<Tensor>> ind(d);
  ind.push_back(reshape(idx, {-1}));
  return index(a, ind);
}

static std::vector<std::optional<Tensor>> gather_coords(const Tensor& a, int64_t d, const Tensor& index, const char* op) {
  AG_CHECK(index.dtype() == ScalarType::Int64 || index.dtype() == ScalarType::Int32, op, "(): Expected dtype int32/int64 for index");
  AG_CHECK(index.dim() == a.dim() || (index.dim() <= 1 && a.dim() <= 1), "Index tensor must have the same number of dimensions as input tensor");
  int64_t n = a.sizes()[d];
  check_bounds(index, n, [&](int64_t i) { AG_THROW(RuntimeError, "index ", i, " is out of bounds for dimension ", d, " with size ", n); });
  std::vector<std::optional<Tensor>> coords;
  for (int64_t k = 0; k < a.dim(); ++k) {
    if (k == d) { coords.push_back(index); continue; }
    AG_CHECK(index.sizes()[k] <= a.sizes()[k], "Size does not match at dimension ", k, " expected index ", shape_str(index.sizes()),
             " to be no larger than self ", shape_str(a.sizes()), " apart from dimension ", d);
    Shape s(a.dim(), 1);
    s[k] = index.sizes()[k];
    coords.push_back(reshape(arange_long(index.sizes()[k], a.device()), IntList(s.begin(), s.end())));
  }
  return coords;
}

Tensor gather(const Tensor& a, int64_t dim, const Tensor& idx) {
  if (a.dim() == 0) {  // a 0-d input is a 1-element vector; the result has the index's shape (torch)
    wrap_dim(dim, 0, kScalarOk);
    AG_CHECK(idx.dim() <= 1, "Index tensor must have the same number of dimensions as input tensor");
    return reshape(gather(reshape(a, {1}), 0, reshape(idx, {-1})), IntList(idx.sizes().begin(), idx.sizes().end()));
  }
  int64_t d = wrap_dim(dim, a.dim());
  Tensor out;
  if (idx.numel() == 0) {  // still recorded: the (empty) result keeps requires_grad, as in torch
    out = empty(idx.sizes(), a.dtype(), a.device());
  } else {
    auto coords = gather_coords(a, d, idx, "gather");
    autograd::AutoGradMode off(false);
    out = index(a, coords);
  }
  fw_rule(out, {&a}, [&](const variable_list& t) { return gather(t[0], d, idx); });
  Shape in_shape = a.sizes();
  if (is_floating(a.dtype()))
    if (auto node = autograd::make_node("GatherBackward0", {&a}, AG_BW {
          return {scatter_add(full(in_shape, Scalar(0.0), g[0].dtype(), g[0].device()), d, idx, g[0])};
        }))
      autograd::set_history(node, {&out});
  return out;
}

static Tensor scatter_impl(const char* name, const Tensor& a, int64_t dim, const Tensor& idx, const Tensor& src, bool accumulate) {
  if (a.dim() == 0) {  // a 0-d input is a 1-element vector (torch writes it)
    wrap_dim(dim, 0, kScalarOk);
    AG_CHECK(idx.dim() <= 1, "Index tensor must have the same number of dimensions as self tensor");
    return reshape(scatter_impl(name, reshape(a, {1}), 0, reshape(idx, {-1}), src.dim() ? reshape(src, {-1}) : src, accumulate), {});
  }
  int64_t d = wrap_dim(dim, a.dim());
  AG_CHECK(src.dtype() == a.dtype() || src.dim() == 0, "scatter(): Expected self.dtype to be equal to src.dtype");
  Tensor out;
  {
    autograd::AutoGradMode off(false);
    out = contiguous_copy(a);
    if (idx.numel() > 0) {
      auto coords = gather_coords(a, d, idx, "scatter");
      Tensor vals = src;
      if (src.dim() > 0) {
        for (int64_t k = 0; k < a.dim(); ++k)
          AG_CHECK(idx.sizes()[k] <= src.sizes()[wrap_dim(k, src.dim())],   // torch's src.size(k): IndexError past src's dims
                   "Expected index ", shape_str(idx.sizes()), " to be no larger than src ", shape_str(src.sizes()));
        for (int64_t k = 0; k < a.dim(); ++k) vals = narrow(vals, k, 0, idx.sizes()[k]);
      }
      IndexPlan p = plan_index(out, coords);
      put_into(out, p, vals, accumulate);
    }
  }
  out = detach(out);
  fw_rule(out, {&a, &src}, [&](const variable_list& t) {
    return scatter_impl(name, or_zeros(t[0], a), dim, idx, or_zeros(t[1], src), accumulate);
  });
  if (is_floating(a.dtype()))
    if (auto node = autograd::make_node(name, {&a, &src}, AG_BW {
          Tensor ga, gs;
          if (c.needs_input_grad(0)) ga = accumulate ? g[0] : scatter(g[0], d, idx, zeros_like(wrap_scalar(0.0)));
          if (c.needs_input_grad(1)) gs = gather(g[0], d, idx);
          return {ga, gs};
        }))
      autograd::set_history(node, {&out});
  return out;
}

// scatter(reduce='multiply'): the product of self's element and every src value scattered to it, on
// the scatter_reduce kernel (prod, self included). torch has no derivative for it: its grad_fn is a
// NotImplemented node whose backward raises, and so is ampgrad's.
static Tensor scatter_multiply(const Tensor& a, int64_t dim, const Tensor& idx, const Tensor& src) {
  if (a.dim() == 0) {
    wrap_dim(dim, 0, kScalarOk);
    AG_CHECK(idx.dim() <= 1, "Index tensor must have the same number of dimensions as self tensor");
    return reshape(scatter_multiply(reshape(a, {1}), 0, reshape(idx, {-1}), src.dim() ? reshape(src, {-1}) : src), {});
  }
  const int64_t d = wrap_dim(dim, a.dim());
  AG_CHECK(src.dtype() == a.dtype() || src.dim() == 0, "scatter(): Expected self.dtype to be equal to src.dtype");
  Tensor out;
  {
    autograd::AutoGradMode off(false);
    if (idx.numel() == 0) {
      out = contiguous_copy(a);
    } else {
      gather_coords(a, d, idx, "scatter");  // scatter's own index checks and messages
      Tensor vals = src;
      if (src.dim() == 0) {
        vals = contiguous(expand(to_dtype(src, a.dtype()), idx.sizes()));
      } else {
        for (int64_t k = 0; k < a.dim(); ++k)
          AG_CHECK(idx.sizes()[k] <= src.sizes()[wrap_dim(k, src.dim())],   // torch's src.size(k): IndexError past src's dims
                   "Expected index ", shape_str(idx.sizes()), " to be no larger than src ", shape_str(src.sizes()));
      }
      out = scatter_reduce(a, d, idx, vals, "prod", true);
    }
  }
  out = detach(out);
  if (is_floating(a.dtype()))
    if (auto node = autograd::make_node("torch::autograd::NotImplemented", {&a, &src}, AG_BW {
          AG_THROW(RuntimeError, "derivative for aten::scatter is not implemented");
          return {};
        }))
      autograd::set_history(node, {&out});
  return out;
}

Tensor scatter(const Tensor& a, int64_t dim, const Tensor& idx, const Tensor& src, const std::string& reduce) {
  if (!(reduce.empty() || reduce == "add" || reduce == "multiply")) {
    // torch checks dim, dtypes and shapes (its meta function) before it reads reduce
    autograd::AutoGradMode off(false);
    scatter_impl("ScatterBackward0", a, dim, idx, src.dim() == 0 ? to_dtype(src, a.dtype()) : src, false);
    AG_THROW(RuntimeError, "reduce argument must be either add or multiply.");
  }
  if (reduce == "multiply") return scatter_multiply(a, dim, idx, src);
  Tensor s = src.dim() == 0 ? to_dtype(src, a.dtype()) : src;
  return scatter_impl("ScatterBackward0", a, dim, idx, s, reduce == "add");
}

Tensor scatter_add(const Tensor& a0, int64_t dim, const Tensor& idx, const Tensor& src0) {
  Tensor a = a0, src = src0;
  return scatter_impl("ScatterAddBackward0", a, dim, idx, src, true);
}

// The shape rules index_add / index_copy share: src matches self except in dim d, where it has
// one slice per index.
static void check_index_source(const char* op, const Tensor& a, int64_t d, const Tensor& idx, const Tensor& src) {
  int64_t n = idx.numel();
  if (std::string(op) == "index_copy_") {
    AG_CHECK_INDEX(src.dim() == 0 || n == src.sizes()[d], op, "(): Number of indices (", n, ") should be equal to source.size(dim) (",
                   src.dim() ? src.sizes()[d] : 1, ")");
  } else {
    AG_CHECK(src.dim() == 0 || n == src.sizes()[d], op, "(): Number of indices (", n, ") should be equal to source.size(dim): (",
             src.dim() ? src.sizes()[d] : 1, "), for dim: ", d);
  }
  bool same = src.dim() == a.dim();
  for (int64_t k = 0; same && k < a.dim(); ++k) same = k == d || src.sizes()[k] == a.sizes()[k];
  if (src.dim() > 0 && !same) {
    if (std::string(op) == "index_copy_")
      AG_THROW(RuntimeError, "index_copy_(): Source/destination tensor must have same slice shapes. Destination slice shape: ",
               shape_str(a.sizes()), " at dimension ", d, " and source slice shape: ", shape_str(src.sizes()), " at dimension ", d, ".");
    AG_THROW(RuntimeError, "source tensor shape must match self tensor shape, excluding the specified dimension. Got self.shape = ",
             shape_str(a.sizes()), " source.shape = ", shape_str(src.sizes()));
  }
}

Tensor index_add(const Tensor& a, int64_t dim, const Tensor& idx, const Tensor& src, Scalar alpha) {
  int64_t d = wrap_dim(dim, a.dim(), kScalarOk);
  AG_CHECK_INDEX(idx.dim() <= 1, "index_add_(): Index is supposed to be a vector");
  AG_CHECK(idx.dtype() == ScalarType::Int64 || idx.dtype() == ScalarType::Int32, "index_add_(): Expected dtype int32/int64 for index");
  AG_CHECK(a.dtype() == src.dtype(), "index_add_(): self (", scalar_type_name(a.dtype()), ") and source (", scalar_type_name(src.dtype()),
           ") must have the same scalar type");
  check_index_source("index_add_", a, d, idx, src);
  int64_t n = a.dim() ? a.sizes()[d] : 1;
  check_bounds(idx, n, [&](int64_t i) { AG_THROW(RuntimeError, "index ", i, " is out of bounds for dimension ", d, " with size ", n); });
  Tensor s = alpha.to_double() == 1.0 ? src : mul(src, wrap_scalar(alpha));
  if (a.dim() == 0)  // a 0-d self is one slice: index [0] (or [0, 0, ...]) into its 1-element view
    return reshape(index_put_impl(reshape(a, {1}), {reshape(idx, {-1})}, reshape(s, {-1}), true, true), {});
  std::vector<std::optional<Tensor>> ind(d);
  ind.push_back(reshape(idx, {-1}));
  return index_put_impl(a, ind, s, true, true);
}

Tensor index_copy(const Tensor& a0, int64_t dim, const Tensor& idx, const Tensor& src0) {
  Tensor a = a0, src = src0;
  int64_t d = wrap_dim(dim, a.dim(), kScalarOk);
  AG_CHECK_INDEX(idx.dim() <= 1, "index_copy_(): Index should have dimension 1 or 0 (got ", idx.dim(), ")");
  AG_CHECK(idx.dtype() == ScalarType::Int64, "index_copy_(): Expected a long tensor for index, but got ", scalar_type_name(idx.dtype()));
  AG_CHECK(a.dtype() == src.dtype(), "index_copy_(): self and source expected to have the same dtype, but got (self) ",
           scalar_type_name(a.dtype()), " and (source) ", scalar_type_name(src.dtype()));
  check_index_source("index_copy_", a, d, idx, src);
  int64_t n = a.dim() ? a.sizes()[d] : 1;
  check_bounds(idx, n, [&](int64_t i) { AG_THROW(IndexError, "index_copy_(): index ", i, " is out of bounds for dimension ", d, " with size ", n); });
  if (a.dim() == 0)
    return reshape(index_put_impl(reshape(a, {1}), {reshape(idx, {-1})}, reshape(src, {-1}), false, true), {});
  std::vector<std::optional<Tensor>> ind(d);
  ind.push_back(reshape(idx, {-1}));
  return index_put_impl(a, ind, src, false, true);
}

Tensor masked_fill(const Tensor& a, const Tensor& mask, const Tensor& value) {
  AG_CHECK(mask.dtype() == ScalarType::Bool, "masked_fill_ only supports boolean masks, but got mask with dtype ", dtype_name(mask.dtype()));
  AG_CHECK(value.dim() == 0, "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ", value.dim(), " dimension(s).");
  if (value.impl()->wrapped_number) check_scalar_fits(is_floating(value.dtype()) ? Scalar(item_double(value)) : Scalar(static_cast<int64_t>(item_double(value))), a.dtype());
  return contiguous(where(mask, to_dtype(value, a.dtype()), a));  // broadcasts like torch; row-major
}


Tensor masked_select(const Tensor& a, const Tensor& mask) {
  AG_CHECK(mask.dtype() == ScalarType::Bool, "masked_select: expected BoolTensor for mask");
  Shape bs = broadcast_shapes(a.sizes(), mask.sizes());
  if (bs.empty()) bs = {1};  // 0-d input and mask: a 1-element vector (torch's result is 1-d)
  return index(expand_op(a, IntList(bs.begin(), bs.end())), {contiguous(expand(mask, bs))});
}

Tensor nonzero(const Tensor& a) {
  return kernel<NonzeroKernel>(Op::nonzero, a.device())(contiguous(detach(a)));
}

Tensor cat(const std::vector<Tensor>& ts0, int64_t dim) {
  AG_CHECK_VALUE(!ts0.empty(), "torch.cat(): expected a non-empty list of Tensors");
  std::vector<Tensor> ts = ts0;
  std::vector<const Tensor*> ptrs;
  std::vector<Tensor> used;
  for (auto& t : ts) {
    if (t.dim() == 1 && t.numel() == 0 && ts.size() > 1) continue;  // legacy: skip empty 1-d
    used.push_back(t);
  }
  if (used.empty()) used.push_back(ts[0]);
  for (auto& t : ts) ptrs.push_back(&t);  // skipped empties still take part in promotion, as in torch
  ScalarType dt = result_type(ptrs);
  const Tensor& ref = used[0];
  AG_CHECK(ref.dim() > 0, "zero-dimensional tensor (at position 0) cannot be concatenated");
  int64_t d = wrap_dim(dim, ref.dim());
  Shape shape = ref.sizes();
  shape[d] = 0;
  for (size_t i = 0; i < used.size(); ++i) {
    const Tensor& t = used[i];
    AG_CHECK(t.dim() == ref.dim(), "Tensors must have same number of dimensions: got ", ref.dim(), " and ", t.dim());
    check_same_device(ref, t, "cat");
    for (int64_t k = 0; k < ref.dim(); ++k)
      AG_CHECK(k == d || t.sizes()[k] == ref.sizes()[k], "Sizes of tensors must match except in dimension ", d, ". Expected size ",
               ref.sizes()[k], " but got size ", t.sizes()[k], " for tensor number ", i, " in the list.");
    shape[d] += t.sizes()[d];
  }
  Tensor out = empty(shape, dt, ref.device());
  IntList sizes;
  int64_t off = 0;
  for (auto& t : used) {
    Tensor region = make_view(out, [&] { Shape s = shape; s[d] = t.sizes()[d]; return s; }(), out.strides(), off * out.strides()[d]);
    Tensor src = to_dtype(detach(t), dt);
    run_elementwise(Op::copy, region, {&src});
    off += t.sizes()[d];
    sizes.push_back(t.sizes()[d]);
  }
  std::vector<const Tensor*> used_ptrs;
  for (auto& t : used) used_ptrs.push_back(&t);
  fw_rule(out, used_ptrs.data(), used_ptrs.size(), [&](const variable_list& t) {
    std::vector<Tensor> parts;
    for (size_t i = 0; i < used.size(); ++i) parts.push_back(to_dtype(or_zeros(t[i], used[i]), dt));
    return cat(parts, d);
  });
  if (is_floating(dt))
    if (auto node = autograd::make_node("CatBackward0", used, AG_BW {
          auto parts = split_with_sizes(g[0], sizes, d);
          return variable_list(parts.begin(), parts.end());
        }))
      autograd::set_history(node, {&out});
  return out;
}

Tensor stack(const std::vector<Tensor>& ts0, int64_t dim) {
  AG_CHECK(!ts0.empty(), "stack expects a non-empty TensorList");
  std::vector<Tensor> ts = ts0;
  int64_t d = wrap_dim(dim, ts[0].dim() + 1);
  std::vector<Tensor> us;
  for (size_t i = 0; i < ts.size(); ++i) {
    AG_CHECK(ts[i].sizes() == ts[0].sizes(), "stack expects each tensor to be equal size, but got ", shape_str(ts[0].sizes()),
             " at entry 0 and ", shape_str(ts[i].sizes()), " at entry ", i);
    us.push_back(unsqueeze(ts[i], d));
  }
  return cat(us, d);
}

static Tensor tri(const Tensor& a, int64_t k, bool lower) {
  AG_CHECK(a.dim() >= 2, lower ? "tril" : "triu", ": input tensor must have at least 2 dimensions");
  int64_t n = a.sizes()[a.dim() - 2], m = a.sizes()[a.dim() - 1];
  Tensor rows = reshape(arange_long(n, a.device()), {n, 1}), cols = reshape(arange_long(m, a.device()), {1, m});
  Tensor diff = sub(cols, rows);
  Tensor mask = lower ? compare(Op::le, diff, wrap_scalar(k)) : compare(Op::ge, diff, wrap_scalar(k));
  return where(mask, a, full({}, Scalar(0.0), a.dtype(), a.device()));
}
Tensor tril(const Tensor& a, int64_t k) { return tri(a, k, true); }
Tensor triu(const Tensor& a, int64_t k) { return tri(a, k, false); }

// A copy of a negative-stride view of `a`, laid out as `a` (torch's flip keeps the input's
// memory format); the backward flips the gradient back.
Tensor flip(const Tensor& a, IntList dims) {
  std::vector<bool> seen(std::max<int64_t>(a.dim(), 1), false);
  Shape st = a.strides();
  int64_t off = a.storage_offset();
  IntList wrapped;
  for (int64_t d0 : dims) {
    int64_t d = wrap_dim(d0, a.dim(), kScalarOk);
    AG_CHECK(!seen[d], "dim ", d, " appears multiple times in the list of dims");
    seen[d] = true;
    wrapped.push_back(d);
    if (a.dim() == 0 || a.sizes()[d] == 0) continue;
    off += (a.sizes()[d] - 1) * st[d];
    st[d] = -st[d];
  }
  Tensor src = make_view(a, a.sizes(), st, off);
  Shape out_st = is_non_overlapping_and_dense(a) ? a.strides() : output_strides(a.sizes(), {&a});
  Tensor out = empty_strided(a.sizes(), out_st, a.dtype(), a.device());
  run_elementwise(Op::copy, out, {&src});
  fw_rule(out, {&a}, [&](const variable_list& t) { return flip(t[0], wrapped); });
  if (is_floating(a.dtype()))
    if (auto node = autograd::make_node("FlipBackward0", {&a}, AG_BW { return {flip(g[0], wrapped)}; }))
      autograd::set_history(node, {&out});
  return out;
}

Tensor roll(const Tensor& a, IntList shifts, IntList dims) {
  if (dims.empty()) {
    AG_CHECK(shifts.size() == 1, "shifts and dimensions must align. shifts: ", shifts.size(), ", dims:0");
    return reshape(roll(flatten(a, 0, -1), shifts, {0}), IntList(a.sizes().begin(), a.sizes().end()));
  }
  AG_CHECK(shifts.size() == dims.size(), "shifts and dimensions must align. shifts: ", shifts.size(), ", dims:", dims.size());
  Tensor r = a;
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = wrap_dim(dims[i], a.dim());
    int64_t n = a.sizes()[d];
    if (n == 0) continue;
    int64_t s = ((shifts[i] % n) + n) % n;
    if (s == 0) continue;
    r = cat({narrow(r, d, n - s, s), narrow(r, d, 0, n - s)}, d);
  }
  return r.is_same(a) ? clone(a) : r;
}

Tensor repeat(const Tensor& a, IntList reps) {
  AG_CHECK(reps.size() >= static_cast<size_t>(a.dim()), "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
  size_t lead = reps.size() - a.dim();
  IntList view_shape, expand_shape, final_shape;
  for (size_t i = 0; i < reps.size(); ++i) {
    int64_t s = i < lead ? 1 : a.sizes()[i - lead];
    view_shape.push_back(1); view_shape.push_back(s);
    expand_shape.push_back(reps[i]); expand_shape.push_back(s);
    final_shape.push_back(reps[i] * s);
  }
  for (int64_t s : final_shape)
    AG_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", shape_str(Shape(final_shape.begin(), final_shape.end())));
  // Always a fresh tensor (torch's repeat copies): reshaping the expanded view could alias `a`.
  Tensor e = expand_op(reshape(a, view_shape), expand_shape);
  return reshape(e.is_contiguous() ? clone(e) : contiguous(e), final_shape);
}

}  // namespace ampgrad
