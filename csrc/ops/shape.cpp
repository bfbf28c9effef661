// View ops: share storage and the version counter. Each computes its geometry with one
// transform applied twice: to the input's real strides (the forward view) and to contiguous
// strides (where the view sits inside a dense gradient, for the backward).
#include <numeric>
#include "ops/inplace_view.h"
#include "ops/internal.h"

namespace ampgrad {

void mark_view(Tensor& view, const Tensor& base, bool multi_output) {
  using C = AutogradMeta::Creation;
  auto& m = view.ensure_autograd_meta();
  m.is_view = true;
  m.base = base.is_view() ? base.base() : base;
  m.attr_version = view.version();
  C mode = autograd::InferenceMode::is_enabled() ? C::Inference : !autograd::GradMode::is_enabled() ? C::NoGrad : C::Default;
  if (mode == C::Default && multi_output) mode = C::MultiOutput;
  C prev = base.is_view() ? base.autograd_meta()->creation : C::Default;  // torch's propagate_creation_meta
  m.creation = mode == C::Default || prev == C::Inference ? prev : mode;
}

namespace autograd {
// torch's handle_view_on_rebase: the message names the view's node when it has one.
void check_view_rebase(const Tensor& view, bool indirect) {
  using C = AutogradMeta::Creation;
  const AutogradMeta* m = view.autograd_meta();
  if (!m || !m->is_view || m->creation == C::Default) return;
  const char* what = indirect ? "its base or another view of its base has been modified" : "is being modified";
  const bool inf = m->creation == C::Inference;
  std::string msg;
  if (m->creation != C::MultiOutput || !m->grad_fn) {
    msg = m->grad_fn ? detail::str_cat("Output ", m->output_nr, " of ", short_node_name(m->grad_fn->name()),
                                       " is a view of a view which was created in")
                     : std::string("A view was created in");
    msg = detail::str_cat(msg, inf ? " inference mode and " : " no_grad mode and ", what,
                          inf ? " inplace in normal mode." : " inplace with grad mode enabled.");
  } else {
    msg = detail::str_cat("Output ", m->output_nr, " of ", short_node_name(m->grad_fn->name()), " is a view and ", what, " inplace.");
  }
  if (m->creation == C::MultiOutput)
    AG_THROW(RuntimeError, msg, " This view is the output of a function that returns multiple views. Such functions do not allow "
             "the output views to be modified inplace. You should replace the inplace operation by an out-of-place one.");
  AG_THROW(RuntimeError, msg, " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by "
           "moving both the view and the inplace either both inside the ", inf ? "inference_mode" : "no_grad",
           " block (if you don't want the inplace to be tracked) or both outside (if you want the inplace to be tracked).");
}

// Note [View history].
void regenerate_view_grad_fn(const Tensor& view) {
  AutogradMeta& m = *view.autograd_meta();
  const Tensor& base = m.base;
  if (!m.grad_fn && (!base.defined() || !base.requires_grad())) return;  // nothing to rebuild (torch)
  check_view_rebase(view, /*indirect=*/true);
  m.attr_version = view.version();
  // The as_strided geometry is relative to a dense base (as for CopySlices).
  if (!base.defined() || !base.requires_grad() || !base.is_contiguous()) return;
  Tensor v;
  {
    AutoGradMode on(true);
    v = as_strided(base, IntList(view.sizes().begin(), view.sizes().end()),
                   IntList(view.strides().begin(), view.strides().end()), view.storage_offset());
  }
  m.grad_fn = v.grad_fn();
  m.output_nr = 0;
  m.requires_grad = true;
}
}  // namespace autograd

namespace {
struct Geom { Shape sizes, strides; int64_t offset; };
using Transform = std::function<Geom(const Geom&)>;

// The view node's backward: scatter the gradient into zeros of the input's shape at the view's
// place (that op's own backward is the view again, so higher orders work).
Tensor view_scatter(const Tensor& g, const Shape& in_shape, const Geom& where);

Tensor make_view_op(const Tensor& a, const Transform& tf, const char* name) {
  Geom real = tf({a.sizes(), a.strides(), a.storage_offset()});
  Tensor out = make_view(a, real.sizes, real.strides, real.offset);
  mark_view(out, a);
  // Views are linear: the tangent is the same view of the input's tangent (laid out as the input,
  // so an in-place op on the view writes through to the input's tangent).
  fw_rule(out, {&a}, [&](const variable_list& t) {
    Tensor ta = autograd::fw::with_layout(t[0], a);
    Geom tg = tf({ta.sizes(), ta.strides(), ta.storage_offset()});
    return make_view(ta, tg.sizes, tg.strides, tg.offset);
  });
  if (a.requires_grad() && autograd::GradMode::is_enabled()) {
    Shape in_shape = a.sizes();
    Geom logical = tf({a.sizes(), contiguous_strides(a.sizes()), 0});
    if (auto node = autograd::make_node(name, {&a}, AG_BW { return {view_scatter(g[0], in_shape, logical)}; }))
      autograd::set_history(node, {&out});
  }
  return out;
}

Tensor view_scatter(const Tensor& g, const Shape& in_shape, const Geom& where) {
  Tensor out = full(in_shape, Scalar(0.0), g.dtype(), g.device());
  Tensor region = make_view(out, where.sizes, where.strides, where.offset);
  {
    autograd::AutoGradMode off(false);
    Tensor src = expand(g, where.sizes);
    run_elementwise(Op::copy, region, {&src});
  }
  // `where` is in the dense frame of the input: read it from a dense copy of the gradient (which
  // may arrive as a transposed or offset view).
  if (auto node = autograd::make_node("AsStridedScatterBackward0", {&g}, AG_BW {
        Tensor d = contiguous(g[0]);
        return {as_strided(d, where.sizes, where.strides, d.storage_offset() + where.offset)};
      }))
    autograd::set_history(node, {&out});
  return out;
}

// Reshape-like views backward by reshaping the gradient back.
Tensor reshape_view(const Tensor& a, const Shape& sizes, const Shape& strides, const char* name) {
  Tensor out = make_view(a, sizes, strides, a.storage_offset());
  mark_view(out, a);
  fw_rule(out, {&a}, [&](const variable_list& t) { return reshape(t[0], IntList(sizes.begin(), sizes.end())); });
  Shape in_shape = a.sizes();
  if (auto node = autograd::make_node(name, {&a}, AG_BW { return {reshape(g[0], in_shape)}; }))
    autograd::set_history(node, {&out});
  return out;
}

// Strides for viewing `a` as `sizes` without copying, or nullopt (torch's computeStride).
std::optional<Shape> compute_stride(const Shape& old_sizes, const Shape& old_strides, const Shape& sizes) {
  if (old_sizes.empty()) return Shape(sizes.size(), 1);
  int64_t numel = shape_numel(old_sizes);
  if (numel == 0 && old_sizes == sizes) return old_strides;
  Shape st(sizes.size());
  if (numel == 0) { return contiguous_strides(sizes); }
  int64_t view_d = static_cast<int64_t>(sizes.size()) - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(old_sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= old_sizes[d];
    if (d == 0 || (old_sizes[d - 1] != 1 && old_strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || sizes[view_d] == 1)) {
        st[view_d] = view_numel * chunk_base_stride;
        view_numel *= sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) { chunk_base_stride = old_strides[d - 1]; tensor_numel = 1; view_numel = 1; }
    }
  }
  if (view_d != -1) return std::nullopt;
  return st;
}

Shape infer_size(IntList sizes, int64_t numel) {
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      AG_CHECK(infer < 0, "only one dimension can be inferred");
      infer = static_cast<int64_t>(i);
    } else {
      AG_CHECK(sizes[i] >= 0, "invalid shape dimension ", sizes[i]);
      known *= sizes[i];
    }
  }
  Shape out(sizes.begin(), sizes.end());
  if (infer >= 0) {
    AG_CHECK(known != 0 || numel != 0, "cannot reshape tensor of 0 elements into shape ", shape_str(out),
             " because the unspecified dimension size -1 can be any value and is ambiguous");
    AG_CHECK(known != 0 && numel % known == 0, "shape '", shape_str(out), "' is invalid for input of size ", numel);
    out[infer] = numel / known;
  } else {
    AG_CHECK(known == numel, "shape '", shape_str(out), "' is invalid for input of size ", numel);
  }
  return out;
}
}  // namespace

Tensor view(const Tensor& a, IntList sizes) {
  Shape shape = infer_size(sizes, a.numel());
  auto st = compute_stride(a.sizes(), a.strides(), shape);
  AG_CHECK(st, "view size is not compatible with input tensor's size and stride (at least one dimension spans across "
           "two contiguous subspaces). Use .reshape(...) instead.");
  return reshape_view(a, shape, *st, "ViewBackward0");
}

Tensor reshape(const Tensor& a, IntList sizes) {
  Shape shape = infer_size(sizes, a.numel());
  if (auto st = compute_stride(a.sizes(), a.strides(), shape)) return reshape_view(a, shape, *st, "ViewBackward0");
  Tensor c = contiguous(a);  // not viewable, so not contiguous: a dense row-major copy
  Tensor out = make_view(c, shape, contiguous_strides(shape), c.storage_offset());
  fw_rule(out, {&c}, [&](const variable_list& t) { return reshape(t[0], sizes); });
  Shape in_shape = a.sizes();
  if (auto node = autograd::make_node("UnsafeViewBackward0", {&c}, AG_BW { return {reshape(g[0], in_shape)}; }))
    autograd::set_history(node, {&out});
  out.impl()->version = std::make_shared<VersionCounter>();
  return out;
}

Tensor as_strided(const Tensor& a, IntList sizes, IntList strides, std::optional<int64_t> offset) {
  AG_CHECK(sizes.size() == strides.size(), "mismatch in length of strides and shape");
  int64_t off = offset.value_or(a.storage_offset());
  AG_CHECK(off >= 0, "Tensor: invalid storage offset ", off);  // a negative offset would read before the storage
  int64_t base_off = a.storage_offset();
  for (size_t i = 0; i < sizes.size(); ++i)
    AG_CHECK(sizes[i] >= 0 && strides[i] >= 0, "as_strided: Negative strides are not supported at the moment, got strides: ", shape_str(strides));
  // The span of the elements, overflow-checked (Note [Checked sizes]; a stride of 2**63 - 1 wrapped around and
  // passed the bounds check below: as_strided_ then read far outside the storage).
  const Shape ssz(sizes.begin(), sizes.end()), sst(strides.begin(), strides.end());
  const int64_t isz = itemsize(a.dtype());
  int64_t extent = 0;  // last index + 1, or 0
  try {
    extent = static_cast<int64_t>(storage_nbytes(ssz, sst, isz)) / isz;
  } catch (const RuntimeError&) {  // torch's computeStorageNbytes names the strides too
    AG_THROW(RuntimeError, "Storage size calculation overflowed with sizes=", shape_str(sizes), " and strides=", shape_str(strides));
  }
  int64_t hi = 0, end_bytes = 0;  // torch's computeStorageNbytes counts the offset in its overflow check
  AG_CHECK(extent == 0 || (!__builtin_add_overflow(off, extent - 1, &hi) && !__builtin_mul_overflow(hi, isz, &end_bytes) &&
                             !__builtin_add_overflow(end_bytes, isz, &end_bytes)),
           "Storage size calculation overflowed with sizes=", shape_str(sizes), " and strides=", shape_str(strides));
  int64_t storage_elems = static_cast<int64_t>(a.storage()->nbytes / isz);
  AG_CHECK(extent == 0 || hi < storage_elems, "setStorage: sizes ", shape_str(sizes), ", strides ", shape_str(strides),
           ", storage offset ", off, ", and itemsize ", itemsize(a.dtype()), " requiring a storage size of ",
           end_bytes, " are out of bounds for storage of size ", a.storage()->nbytes);
  if (extent == 0) hi = off;
  Tensor out = make_view(a, ssz, sst, off);
  mark_view(out, a);
  fw_rule(out, {&a}, [&](const variable_list& t) {
    Tensor ta = autograd::fw::with_layout(t[0], a);
    return as_strided(ta, sizes, strides, ta.storage_offset() + off - base_off);
  });
  if (!a.requires_grad() || !autograd::GradMode::is_enabled()) return out;
  // Backward in storage coordinates, as torch's as_strided_backward: the view's elements may
  // overlap (they accumulate) and the input may itself be strided, so the gradient is summed into
  // a buffer spanning both geometries and read back through the input's geometry.
  Shape in_sizes = a.sizes(), in_strides = a.strides();
  int64_t in_hi = base_off;
  for (int64_t d = 0; d < a.dim(); ++d) if (in_sizes[d] > 0) in_hi += (in_sizes[d] - 1) * in_strides[d];
  int64_t lo = std::min(off, base_off), span = std::max(hi, in_hi) - lo + 1;
  if (auto node = autograd::make_node("AsStridedBackward0", {&a}, AG_BW {
        Tensor buf = full({span}, Scalar(0.0), g[0].dtype(), g[0].device());
        Tensor offs = full({}, Scalar(off - lo), ScalarType::Int64, g[0].device());
        for (size_t k = 0; k < sizes.size(); ++k) {
          Tensor r = arange(0, static_cast<double>(sizes[k]), 1, ScalarType::Int64, g[0].device());
          offs = add(unsqueeze(offs, -1), mul(r, wrap_scalar(strides[k])));
        }
        buf = index_put(buf, {reshape(offs, {-1})}, reshape(g[0], {-1}), true);
        return {as_strided(buf, in_sizes, in_strides, base_off - lo)};
      }))
    autograd::set_history(node, {&out});
  return out;
}

static Tensor transpose_impl(const Tensor& a, int64_t d0, int64_t d1, const char* name) {
  int64_t n = a.dim();
  d0 = wrap_dim(d0, n, kScalarOk); d1 = wrap_dim(d1, n, kScalarOk);
  if (n == 0) return alias(a);
  Shape sz = a.sizes(), st = a.strides();
  std::swap(sz[d0], sz[d1]); std::swap(st[d0], st[d1]);
  Tensor out = make_view(a, sz, st, a.storage_offset());
  mark_view(out, a);
  fw_rule(out, {&a}, [&](const variable_list& t) { return transpose(t[0], d0, d1); });
  if (auto node = autograd::make_node(name, {&a}, AG_BW { return {transpose(g[0], d0, d1)}; }))
    autograd::set_history(node, {&out});
  return out;
}

Tensor transpose(const Tensor& a, int64_t d0, int64_t d1) { return transpose_impl(a, d0, d1, "TransposeBackward0"); }

Tensor matrix_t(const Tensor& a) {
  AG_CHECK(a.dim() <= 2, "t() expects a tensor with <= 2 dimensions, but self is ", a.dim(), "D");
  if (a.dim() < 2) return reshape_view(a, a.sizes(), a.strides(), "TBackward0");
  return transpose_impl(a, 0, 1, "TBackward0");
}

// Note [In-place view ops]: t_, transpose_ (swapaxes_, swapdims_), squeeze_, unsqueeze_ and as_strided_
// change self's geometry, not its data. The view op runs out of place (its checks, its backward node and
// its tangent); self then takes the result's sizes, strides and offset and, when it requires grad, the
// result's node, renamed as torch's in-place one (TBackward1, ...). self stays a view of what it was a
// view of (or no view), and its version bumps, as torch's. A leaf that requires grad, or a view of one,
// is refused before anything changes.
Tensor& inplace_view(Tensor& self, const std::function<Tensor(const Tensor&)>& view, const char* node_name) {
  const bool record = autograd::GradMode::is_enabled() && self.requires_grad();
  if (record) check_inplace(self, node_name);
  Tensor v = view(self);
  Tensor tangent = autograd::fw::tangent(v);
  std::shared_ptr<autograd::Node> node = record ? v.grad_fn() : nullptr;  // before the bump: v's node is current
  TensorImpl* si = self.impl();
  si->sizes = v.sizes(); si->strides = v.strides(); si->offset = v.storage_offset();
  si->refresh();
  self.bump_version();
  if (node) {
    if (auto* f = dynamic_cast<autograd::FunctionNode*>(node.get())) f->name_ = node_name;
    AutogradMeta& m = self.ensure_autograd_meta();
    m.grad_fn = std::move(node);
    m.output_nr = 0;
  }
  if (AutogradMeta* m = self.autograd_meta(); m && m->is_view) m->attr_version = self.version();  // its node is current
  if (tangent.defined()) autograd::fw::set_tangent(self, tangent);
  return self;
}

Tensor& t_(Tensor& self) {
  AG_CHECK(self.dim() <= 2, "t_() expects a tensor with <= 2 dimensions, but self is ", self.dim(), "D");
  return inplace_view(self, [](const Tensor& a) { return matrix_t(a); }, "TBackward1");
}
Tensor& transpose_(Tensor& self, int64_t d0, int64_t d1) {
  return inplace_view(self, [=](const Tensor& a) { return transpose(a, d0, d1); }, "TransposeBackward1");
}
Tensor& squeeze_(Tensor& self, OptDims dims, bool dims_is_list) {
  return inplace_view(self, [&](const Tensor& a) { return squeeze(a, dims); },
                      !dims ? "SqueezeBackward3" : dims_is_list ? "SqueezeBackward5" : "SqueezeBackward4");
}
Tensor& unsqueeze_(Tensor& self, int64_t dim) {
  return inplace_view(self, [=](const Tensor& a) { return unsqueeze(a, dim); }, "UnsqueezeBackward1");
}
Tensor& as_strided_(Tensor& self, IntList sizes, IntList strides, std::optional<int64_t> offset) {
  return inplace_view(self, [&](const Tensor& a) { return as_strided(a, sizes, strides, offset); }, "AsStridedBackward1");
}

Tensor permute(const Tensor& a, IntList dims) {
  int64_t n = a.dim();
  AG_CHECK(static_cast<int64_t>(dims.size()) == n, "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired ordering of dimensions i.e. input.dim() = ",
           n, " is not equal to len(dims) = ", dims.size());
  std::vector<bool> seen(n, false);
  Shape sz(n), st(n);
  IntList inv(n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t d = wrap_dim(dims[i], n);
    AG_CHECK(!seen[d], "permute(): duplicate dims are not allowed.");
    seen[d] = true;
    sz[i] = a.sizes()[d]; st[i] = a.strides()[d];
    inv[d] = i;
  }
  Tensor out = make_view(a, sz, st, a.storage_offset());
  mark_view(out, a);
  fw_rule(out, {&a}, [&](const variable_list& t) { return permute(t[0], dims); });
  if (auto node = autograd::make_node("PermuteBackward0", {&a}, AG_BW { return {permute(g[0], inv)}; }))
    autograd::set_history(node, {&out});
  return out;
}

Tensor expand_op(const Tensor& a, IntList sizes) {
  AG_CHECK(sizes.size() >= static_cast<size_t>(a.dim()), "expand(torch.", legacy_type_name(a.dtype()), "{", shape_str(a.sizes()),
           "}, size=", shape_str(sizes), "): the number of sizes provided (", sizes.size(),
           ") must be greater or equal to the number of dimensions in the tensor (", a.dim(), ")");
  Shape target(sizes.begin(), sizes.end());
  size_t lead = sizes.size() - a.dim();
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      AG_CHECK(i >= lead, "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension ", i);
      target[i] = a.sizes()[i - lead];
    }
  }
  Tensor v = expand(a, target);
  Tensor out = make_view(a, v.sizes(), v.strides(), v.storage_offset());
  mark_view(out, a);
  fw_rule(out, {&a}, [&](const variable_list& t) { return expand_op(t[0], target); });
  Shape in_shape = a.sizes();
  if (auto node = autograd::make_node("ExpandBackward0", {&a}, AG_BW { return {sum_to(g[0], in_shape)}; }))
    autograd::set_history(node, {&out});
  return out;
}

Tensor squeeze(const Tensor& a, OptDims dims) {
  int64_t n = a.dim();
  std::vector<bool> drop(n, false);
  if (!dims) {
    for (int64_t d = 0; d < n; ++d) drop[d] = a.sizes()[d] == 1;
  } else {
    // A 0-dim tensor accepts dim 0 / -1 (wrap_dim) but has no dim to drop.
    for (int64_t d : *dims) { int64_t w = wrap_dim(d, n, kScalarOk); if (n > 0) drop[w] = a.sizes()[w] == 1; }
  }
  Shape sz, st;
  for (int64_t d = 0; d < n; ++d)
    if (!drop[d]) { sz.push_back(a.sizes()[d]); st.push_back(a.strides()[d]); }
  return reshape_view(a, sz, st, dims ? "SqueezeBackward1" : "SqueezeBackward0");
}

Tensor unsqueeze(const Tensor& a, int64_t dim) {
  int64_t d = wrap_dim(dim, a.dim() + 1);
  Shape sz = a.sizes(), st = a.strides();
  int64_t s = d < a.dim() ? sz[d] * st[d] : 1;
  sz.insert(sz.begin() + d, 1);
  st.insert(st.begin() + d, s);
  return reshape_view(a, sz, st, "UnsqueezeBackward0");
}

Tensor flatten(const Tensor& a, int64_t start, int64_t end) {
  int64_t n = a.dim();
  start = wrap_dim(start, n, kScalarOk); end = wrap_dim(end, n, kScalarOk);
  if (n == 0) return reshape(a, {1});
  AG_CHECK(start <= end, "flatten() has invalid args: start_dim cannot come after end_dim");
  if (start == end) return a;
  IntList sz;
  for (int64_t d = 0; d < start; ++d) sz.push_back(a.sizes()[d]);
  int64_t m = 1;
  for (int64_t d = start; d <= end; ++d) m *= a.sizes()[d];
  sz.push_back(m);
  for (int64_t d = end + 1; d < n; ++d) sz.push_back(a.sizes()[d]);
  return reshape(a, sz);
}

Tensor unflatten(const Tensor& a, int64_t dim, IntList sizes) {
  AG_CHECK(a.dim() > 0, "unflatten got an unexpected error:\nDimension specified as ", dim, " but tensor has no dimensions");
  int64_t d = wrap_dim(dim, a.dim());
  AG_CHECK(!sizes.empty(), "unflatten: sizes must be non-empty");
  int64_t prod = 1;
  bool inferred = false;
  for (int64_t s : sizes) { if (s == -1) inferred = true; else prod *= s; }
  AG_CHECK(inferred || prod == a.sizes()[d], "unflatten: Provided sizes ", shape_str(Shape(sizes.begin(), sizes.end())),
           " don't multiply up to the size of dim ", dim, " (", a.sizes()[d], ") in the input tensor");
  Shape inner = infer_size(sizes, a.sizes()[d]);
  IntList sz(a.sizes().begin(), a.sizes().begin() + d);
  sz.insert(sz.end(), inner.begin(), inner.end());
  sz.insert(sz.end(), a.sizes().begin() + d + 1, a.sizes().end());
  return view(a, sz);
}

Tensor slice(const Tensor& a, int64_t dim, std::optional<int64_t> start0, std::optional<int64_t> end0, int64_t step) {
  AG_CHECK_VALUE(step > 0, "step must be greater than zero");
  int64_t d = wrap_dim(dim, a.dim());
  int64_t n = a.sizes()[d];
  int64_t start = start0.value_or(0), end = end0.value_or(n);
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::clamp<int64_t>(start, 0, n);
  end = std::clamp<int64_t>(end, start, n);
  int64_t len = (end - start + step - 1) / step;
  return make_view_op(a, [=](const Geom& g) {
    Geom r = g;
    r.offset += start * g.strides[d];
    r.sizes[d] = len;
    r.strides[d] *= step;
    return r;
  }, "SliceBackward0");
}

Tensor narrow(const Tensor& a, int64_t dim, int64_t start, int64_t length) {
  AG_CHECK(a.dim() > 0, "narrow() cannot be applied to a 0-dim tensor.");
  int64_t d = wrap_dim(dim, a.dim());
  int64_t n = a.sizes()[d];
  if (start < 0) start += n;
  AG_CHECK_INDEX(start >= 0 && start <= n, "start out of range (expected to be in range of [", -n, ", ", n, "], but got ", start, ")");
  AG_CHECK(length >= 0 && start + length <= n, "start (", start, ") + length (", length, ") exceeds dimension size (", n, ").");
  return slice(a, d, start, start + length, 1);
}

Tensor select(const Tensor& a, int64_t dim, int64_t index) {
  AG_CHECK_INDEX(a.dim() > 0, "select() cannot be applied to a 0-dim tensor.");
  int64_t d = wrap_dim(dim, a.dim());
  int64_t n = a.sizes()[d];
  AG_CHECK_INDEX(index >= -n && index < n, "select(): index ", index, " out of range for tensor of size ",
                 shape_str(a.sizes()), " at dimension ", d);
  if (index < 0) index += n;
  return make_view_op(a, [=](const Geom& g) {
    Geom r = g;
    r.offset += index * g.strides[d];
    r.sizes.erase(r.sizes.begin() + d);
    r.strides.erase(r.strides.begin() + d);
    return r;
  }, "SelectBackward0");
}

Tensor diagonal(const Tensor& a, int64_t offset, int64_t d0, int64_t d1) {
  int64_t n = a.dim();
  d0 = wrap_dim(d0, n, kScalarOk); d1 = wrap_dim(d1, n, kScalarOk);
  AG_CHECK(d0 != d1, "diagonal dimensions cannot be identical ", d0, ", ", d1);
  return make_view_op(a, [=](const Geom& g) {
    int64_t len = offset >= 0 ? std::max<int64_t>(std::min(g.sizes[d0], g.sizes[d1] - offset), 0)
                              : std::max<int64_t>(std::min(g.sizes[d0] + offset, g.sizes[d1]), 0);
    Geom r;
    r.offset = g.offset + (len > 0 ? (offset >= 0 ? offset * g.strides[d1] : -offset * g.strides[d0]) : 0);
    for (int64_t i = 0; i < n; ++i)
      if (i != d0 && i != d1) { r.sizes.push_back(g.sizes[i]); r.strides.push_back(g.strides[i]); }
    r.sizes.push_back(len);
    r.strides.push_back(g.strides[d0] + g.strides[d1]);
    return r;
  }, "DiagonalBackward0");
}

// Note [Multi-output views]: split, split_with_sizes, chunk and unbind return views that share one
// backward node (SplitBackward0, SplitWithSizesBackward0, UnbindBackward0, as torch's): its backward
// writes each piece's gradient once (cat, or stack for unbind; zeros for a piece without one) where
// a SliceBackward0 per piece built an input-sized zero-filled gradient each, which the engine then
// summed (a GPT's qkv split spent more in those fills and adds than in the attention). As in torch,
// the pieces are Creation::MultiOutput views: modifying one in place with grad mode on raises.
std::vector<Tensor> multi_view(const Tensor& a, int64_t d, const std::vector<std::pair<int64_t, int64_t>>& pieces,
                               bool drop_dim, const char* name) {
  std::vector<Tensor> out;
  out.reserve(pieces.size());
  for (auto [start, len] : pieces) {
    Transform tf = [=](const Geom& g) {
      Geom r = g;
      r.offset += start * g.strides[d];
      if (drop_dim) {
        r.sizes.erase(r.sizes.begin() + d);
        r.strides.erase(r.strides.begin() + d);
      } else {
        r.sizes[d] = len;
      }
      return r;
    };
    Geom real = tf({a.sizes(), a.strides(), a.storage_offset()});
    Tensor v = make_view(a, real.sizes, real.strides, real.offset);
    mark_view(v, a, /*multi_output=*/true);
    fw_rule(v, {&a}, [&](const variable_list& t) {
      Tensor ta = autograd::fw::with_layout(t[0], a);
      Geom tg = tf({ta.sizes(), ta.strides(), ta.storage_offset()});
      return make_view(ta, tg.sizes, tg.strides, tg.offset);
    });
    out.push_back(std::move(v));
  }
  if (a.requires_grad() && autograd::GradMode::is_enabled()) {
    std::vector<Shape> shapes;
    for (const Tensor& v : out) shapes.push_back(v.sizes());
    const ScalarType dt = a.dtype();
    const Device dev = a.device();
    if (auto node = autograd::make_node(name, {&a}, AG_BW {
          bool any = false;
          for (const Tensor& t : g) any = any || t.defined();
          if (!any) return {Tensor()};
          std::vector<Tensor> parts;
          for (size_t i = 0; i < shapes.size(); ++i)
            parts.push_back(g[i].defined() ? g[i] : full(shapes[i], Scalar(0.0), dt, dev));
          return {drop_dim ? stack(parts, d) : cat(parts, d)};
        }))
      autograd::set_history(node, out);
  }
  return out;
}

std::vector<Tensor> split(const Tensor& a, int64_t size, int64_t dim) {
  AG_CHECK(a.dim() > 0, "split expects at least a 1-dimensional tensor");
  AG_CHECK(size >= 0, "split expects split_size be non-negative, but got split_size=", size);
  int64_t d = wrap_dim(dim, a.dim());
  int64_t n = a.sizes()[d];
  if (size == 0) { AG_CHECK(n == 0, "split_size can only be 0 if dimension size is 0, but got dimension size of ", n); return {alias(a)}; }
  std::vector<std::pair<int64_t, int64_t>> pieces;
  for (int64_t s = 0; s < n || (n == 0 && pieces.empty()); s += size) pieces.push_back({s, std::min(size, n - s)});
  return multi_view(a, d, pieces, false, "SplitBackward0");
}

std::vector<Tensor> split_with_sizes(const Tensor& a, IntList sizes, int64_t dim) {
  AG_CHECK(a.dim() > 0, "split expects at least a 1-dimensional tensor");
  int64_t d = wrap_dim(dim, a.dim());
  for (int64_t len : sizes)
    AG_CHECK(len >= 0, "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=", shape_str(sizes));
  int64_t total = std::accumulate(sizes.begin(), sizes.end(), int64_t(0));
  AG_CHECK(total == a.sizes()[d], "split_with_sizes expects split_sizes to sum exactly to ", a.sizes()[d],
           " (input tensor's size at dimension ", d, "), but got split_sizes=", shape_str(sizes));
  std::vector<std::pair<int64_t, int64_t>> pieces;
  int64_t s = 0;
  for (int64_t len : sizes) { pieces.push_back({s, len}); s += len; }
  return multi_view(a, d, pieces, false, "SplitWithSizesBackward0");
}

std::vector<Tensor> unbind(const Tensor& a, int64_t dim) {
  AG_CHECK_INDEX(a.dim() > 0, "Dimension specified as 0 but tensor has no dimensions");
  int64_t d = wrap_dim(dim, a.dim());
  std::vector<std::pair<int64_t, int64_t>> pieces;
  for (int64_t i = 0; i < a.sizes()[d]; ++i) pieces.push_back({i, 1});
  return multi_view(a, d, pieces, true, "UnbindBackward0");
}

// torch's view(dtype): the same memory read as another dtype; the last dim scales by the size ratio.
// Not differentiable (the result never requires grad, as in torch).
Tensor view_dtype(const Tensor& a, ScalarType dt) {
  const int64_t from = itemsize(a.dtype()), to = itemsize(dt);
  Shape sz = a.sizes(), st = a.strides();
  int64_t off = a.storage_offset();
  if (from != to) {
    const std::string what = detail::str_cat(" to view ", scalar_type_name(a.dtype()), " as ", scalar_type_name(dt), " (different element sizes)");
    AG_CHECK(a.dim() > 0, "self.dim() cannot be 0", what);
    const bool empty = a.numel() == 0;  // torch checks no strides of an empty tensor
    AG_CHECK(empty || st.back() == 1, "self.stride(-1) must be 1", what, ", but got ", st.back());
    if (to < from) {
      const int64_t r = from / to;
      for (size_t d = 0; d + 1 < st.size(); ++d) st[d] *= r;
      sz.back() *= r;
      off *= r;
    } else {
      const int64_t r = to / from;
      AG_CHECK(sz.back() % r == 0, "self.size(-1) must be divisible by ", r, what, ", but got ", sz.back());
      for (size_t d = 0; d + 1 < st.size(); ++d)
        AG_CHECK(empty || st[d] % r == 0, "self.stride(", d, ") must be divisible by ", r, what, ", but got ", st[d]);
      AG_CHECK(empty || off % r == 0, "self.storage_offset() must be divisible by ", r, what, ", but got ", off);
      for (size_t d = 0; d + 1 < st.size(); ++d) st[d] /= r;
      sz.back() /= r;
      off /= r;
    }
    st.back() = 1;
  }
  Tensor out = make_view(a, std::move(sz), std::move(st), off);
  out.impl()->dtype = dt;
  return out;
}

Tensor alias(const Tensor& a) {
  return reshape_view(a, a.sizes(), a.strides(), "AliasBackward0");
}

}  // namespace ampgrad
