// Elementwise front ends: type promotion, broadcasting, casts/copies, unary, binary and ternary
// ops with their backward formulas, and the in-place machinery.
#include "core/overlap.h"
#include <algorithm>
#include <cmath>
#include "ops/internal.h"

namespace ampgrad {

// ---------------------------------------------------------------- promotion and broadcasting
namespace {
thread_local ScalarType t_default_dtype = ScalarType::Float32;
}
ScalarType default_dtype() { return t_default_dtype; }
void set_default_dtype(ScalarType t) {
  AG_CHECK_TYPE(t == ScalarType::Float32 || t == ScalarType::Float64 || t == ScalarType::Float16 || t == ScalarType::BFloat16,
                "only floating-point types are supported as the default type");
  t_default_dtype = t;
}

Tensor scalar_tensor(Scalar s, ScalarType dtype, Device device) { return full({}, s, dtype, device); }

void check_scalar_fits(Scalar s, ScalarType dtype) {
  static const char* names[] = {"bool", "uint8_t", "int8_t", "int16_t", "int", "int64_t", "c10::Half", "c10::BFloat16", "float", "double"};
  double lo = 0, hi = 0;
  switch (dtype) {
    case ScalarType::UInt8: lo = -255; hi = 255; break;  // negatives wrap (c10::overflows)
    case ScalarType::Int8: lo = -128; hi = 127; break;
    case ScalarType::Int16: lo = -32768; hi = 32767; break;
    case ScalarType::Int32: lo = -2147483648.0; hi = 2147483647.0; break;
    case ScalarType::Float16: lo = -65504; hi = 65504; break;
    case ScalarType::BFloat16: lo = -3.3895313892515355e38; hi = 3.3895313892515355e38; break;
    case ScalarType::Float32: lo = -static_cast<double>(std::numeric_limits<float>::max()); hi = -lo; break;
    default: return;  // bool, int64 (an int64 Scalar always fits), float64
  }
  double v = s.kind == Scalar::Float ? s.d : static_cast<double>(s.i);
  if (is_floating(dtype) && !std::isfinite(v)) return;
  AG_CHECK(v >= lo && v <= hi, "value cannot be converted to type ", names[static_cast<int>(dtype)], " without overflow");
}

Tensor wrap_scalar(Scalar s) {
  Tensor t = full({}, s, s.dtype());
  t.impl()->wrapped_number = true;
  return t;
}

bool is_cpu_scalar(const Tensor& t) { return t.dim() == 0 && t.device().is_cpu(); }

// Note [Type promotion]: torch's three categories: tensors with dims, 0-dim tensors, and wrapped
// Python numbers. A lower category only matters when it is a higher kind (bool < int < float).
ScalarType result_type(const std::vector<const Tensor*>& ts) { return result_type(ts.data(), ts.size()); }

ScalarType result_type(const Tensor* const* ts, size_t n) {
  ScalarType dim_t = ScalarType::Undefined, zero_t = ScalarType::Undefined, wrapped_t = ScalarType::Undefined;
  for (size_t i = 0; i < n; ++i) {
    const Tensor* t = ts[i];
    if (!t || !t->defined()) continue;
    ScalarType cur = t->dtype();
    if (t->impl()->wrapped_number) {
      if (is_floating(cur)) cur = default_dtype();
      wrapped_t = promote_types(wrapped_t, cur);
    } else if (t->dim() == 0) {
      zero_t = promote_types(zero_t, cur);
    } else {
      dim_t = promote_types(dim_t, cur);
    }
  }
  auto combine = [](ScalarType higher, ScalarType lower) {
    if (higher == ScalarType::Undefined) return lower;
    if (is_floating(higher)) return higher;
    if (higher == ScalarType::Bool || is_floating(lower)) return promote_types(higher, lower);
    return higher;
  };
  return combine(dim_t, combine(zero_t, wrapped_t));
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      AG_THROW(RuntimeError, "The size of tensor a (", da, ") must match the size of tensor b (", db,
               ") at non-singleton dimension ", i);
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// A stride-0 view of `t` at `sizes` (no autograd: used for kernel operands).
Tensor expand(const Tensor& t, const Shape& sizes) {
  if (t.sizes() == sizes) return t;
  size_t n = sizes.size(), k = t.dim();
  AG_CHECK(n >= k, "expand: the number of sizes provided (", n, ") must be greater or equal to the number of dimensions in the tensor (", k, ")");
  Shape st(n, 0);
  for (size_t i = 0; i < k; ++i) {
    int64_t sz = t.sizes()[i], want = sizes[n - k + i];
    AG_CHECK(sz == want || sz == 1, "The expanded size of the tensor (", want, ") must match the existing size (", sz,
             ") at non-singleton dimension ", n - k + i, ".  Target sizes: ", shape_str(sizes), ".  Tensor sizes: ", shape_str(t.sizes()));
    st[n - k + i] = sz == want ? t.strides()[i] : 0;  // unexpanded dims keep their stride, as torch's
  }
  Tensor v = make_view(t, sizes, st, t.storage_offset());
  v.impl()->wrapped_number = t.impl()->wrapped_number;
  return v;
}

Tensor sum_to(const Tensor& t, const Shape& shape) {
  if (t.sizes() == shape) return t;
  IntList dims;
  int64_t lead = t.dim() - static_cast<int64_t>(shape.size());
  for (int64_t i = 0; i < lead; ++i) dims.push_back(i);
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] == 1 && t.sizes()[lead + i] != 1) dims.push_back(lead + i);
  Tensor r = dims.empty() ? t : sum(t, dims, true, std::nullopt);
  if (lead > 0 || r.sizes() != shape) r = reshape(r, shape);
  return r;
}

void check_same_device(const Tensor& a, const Tensor& b, const char* op) {
  if (a.device() == b.device() || is_cpu_scalar(a) || is_cpu_scalar(b)) return;
  AG_THROW(RuntimeError, "Expected all tensors to be on the same device, but found at least two devices, ",
           a.device().str(), " and ", b.device().str(), "! (when checking argument for ", op, ")");
}

void run_elementwise(Op op, Tensor& out, std::initializer_list<const Tensor*> inputs, const double* s) {
  const Tensor* ops[TensorIter::kMaxOps];
  Tensor moved[TensorIter::kMaxOps];
  int n = 0;
  ops[n++] = &out;
  for (auto* t : inputs) {
    // A 0-dim CPU tensor may meet CUDA operands (check_same_device allows it, as torch does): the
    // kernel cannot read host memory, so it travels to the output's device first.
    if (t->device() != out.device()) {
      moved[n] = to_device(detach(*t), out.device());
      ops[n] = &moved[n];
      ++n;
    } else {
      ops[n++] = t;
    }
  }
  TensorIter it;
  it.build(ops, n);
  it.operands = ops;
  // An empty operand still goes through the kernel's dtype dispatch (torch refuses a dtype even
  // with no elements); with no dims and numel 0 the loops run zero times.
  if (it.numel == 0) { it.shape.clear(); it.strides.clear(); }
  kernel<ElementwiseKernel>(op, out.device())(it, s);
}

// Note [Output layout]: an elementwise result is laid out in the memory order of its operands, as
// torch's TensorIterator does (x.t() * 2 is transposed too, so a later view() fails or succeeds
// as in torch): dims are sorted by the strides of the first operand that tells them apart
// (broadcast dims skipped, ties keep the smaller dim first), then packed densely in that order.
Shape output_strides(const Shape& shape, std::initializer_list<const Tensor*> ins) {
  const int64_t n = static_cast<int64_t>(shape.size());
  bool all_contiguous = true;
  for (const Tensor* t : ins) all_contiguous &= t->dim() != n || t->is_contiguous();
  if (all_contiguous || shape_numel(shape) == 0) return contiguous_strides(shape);
  std::vector<int64_t> perm(n);  // perm[0] is the fastest-moving dim
  for (int64_t i = 0; i < n; ++i) perm[i] = n - 1 - i;
  auto should_swap = [&](int64_t d0, int64_t d1) {
    for (const Tensor* t : ins) {
      if (t->dim() != n) continue;
      int64_t s0 = t->strides()[d0], s1 = t->strides()[d1];
      if (s0 == 0 || s1 == 0) continue;
      if (s0 != s1) return s0 < s1 ? -1 : 1;
      if (shape[d0] > shape[d1]) return 1;
    }
    return 0;
  };
  for (int64_t i = 1; i < n; ++i) {  // torch's insertion sort, which tolerates ambiguous pairs
    int64_t d1 = i;
    for (int64_t d0 = i - 1; d0 >= 0; --d0) {
      int c = should_swap(perm[d0], perm[d1]);
      if (c > 0) { std::swap(perm[d0], perm[d1]); d1 = d0; }
      else if (c < 0) break;
    }
  }
  Shape st(n);
  int64_t next = 1;
  for (int64_t i = 0; i < n; ++i) { st[perm[i]] = next; next *= shape[perm[i]]; }
  return st;
}

Tensor elementwise(Op op, const Shape& shape, ScalarType out_dtype, std::initializer_list<const Tensor*> inputs, const double* s) {
  Tensor out = empty_strided(shape, output_strides(shape, inputs), out_dtype, (*inputs.begin())->device());
  run_elementwise(op, out, inputs, s);
  return out;
}

double item_double(const Tensor& t) {
  AG_CHECK(t.numel() == 1, "a Tensor with ", t.numel(), " elements cannot be converted to Scalar");
  Tensor c = t.device().is_cpu() ? t : to_device(t, Device());
  double v = 0;
  AG_DISPATCH_ALL(c.dtype(), "item", [&] { v = static_cast<double>(static_cast<acc_t<scalar_t>>(*c.data<scalar_t>())); });
  return v;
}

// ---------------------------------------------------------------- casts and copies
// A copy keeps src's strides when src is non-overlapping and dense, and src's dim order otherwise
// (torch's preserve_format for clone() and to()); contiguous_out asks for row-major.
static Tensor copy_kernel_out(const Tensor& src, ScalarType dtype, bool contiguous_out = false) {
  Shape st = contiguous_out ? contiguous_strides(src.sizes())
             : is_non_overlapping_and_dense(src) ? src.strides() : output_strides(src.sizes(), {&src});
  Tensor out = empty_strided(src.sizes(), st, dtype, src.device());
  run_elementwise(Op::copy, out, {&src});
  return out;
}

Tensor to_dtype(const Tensor& t, ScalarType dtype, bool copy) {
  if (t.dtype() == dtype && !copy) return t;
  Tensor out = copy_kernel_out(t, dtype);
  fw_rule(out, {&t}, [&](const variable_list& tt) { return to_dtype(tt[0], dtype, true); });
  if (is_floating(dtype)) {
    ScalarType from = t.dtype();
    if (auto node = autograd::make_node("ToCopyBackward0", {&t}, AG_BW { return {to_dtype(g[0], from)}; }))
      autograd::set_history(node, {&out});
  }
  return out;
}

Tensor clone(const Tensor& t) {
  Tensor out = copy_kernel_out(t, t.dtype());
  fw_rule(out, {&t}, [](const variable_list& tt) { return clone(tt[0]); });
  if (auto node = autograd::make_node("CloneBackward0", {&t}, AG_BW { return {g[0]}; }))
    autograd::set_history(node, {&out});
  return out;
}

Tensor contiguous(const Tensor& t) {
  if (t.is_contiguous()) return t;
  Tensor out = copy_kernel_out(t, t.dtype(), true);
  fw_rule(out, {&t}, [](const variable_list& tt) { return contiguous(tt[0]); });
  if (auto node = autograd::make_node("CloneBackward0", {&t}, AG_BW { return {g[0]}; }))
    autograd::set_history(node, {&out});
  return out;
}

void check_inplace_operands(const Tensor& self, Operands operands) {  // Note [In-place checks]
  assert_no_internal_overlap(self);
  for (const Tensor* t : operands)
    if (t && t->defined()) assert_no_partial_overlap(self, *t);
}

Tensor& copy_(Tensor& self, const Tensor& src0) {
  check_same_device(self, src0, "copy_");
  expand(src0, self.sizes());  // raises torch's "The expanded size of the tensor ..." when src does not broadcast
  check_inplace_operands(self, {&src0});
  bool grad = autograd::GradMode::is_enabled() && (self.requires_grad() || src0.requires_grad());
  if (grad) check_inplace(self, "copy_", true);
  Tensor src = expand(src0, self.sizes());
  if (src.device() != self.device()) src = to_device(src, self.device());
  if (!grad) {
    autograd::before_mutation(self);
    run_elementwise(Op::copy, self, {&src});
    self.bump_version();
    fw_inplace(self, src0);
    return self;
  }
  // Differentiable copy: self's old history gets zero, src the gradient (the engine reduces the
  // broadcast and casts to src's dtype).
  Device sd = src0.device();
  auto node = autograd::make_node("torch::autograd::CopyBackwards", {&self, &src0}, AG_BW {
    Tensor gs;
    if (c.needs_input_grad(1)) gs = g[0].device() == sd ? g[0] : to_device(g[0], sd);
    return {c.needs_input_grad(0) ? zeros_like(g[0]) : Tensor(), gs};
  });
  {
    autograd::AutoGradMode off(false);
    run_elementwise(Op::copy, self, {&src});
  }
  self.bump_version();
  Tensor r = detach(self);
  autograd::set_history(node, {&r});
  rebase_history(self, r);
  fw_inplace(self, src0);
  return self;
}

Tensor zeros_like(const Tensor& a) { return full(a.sizes(), Scalar(0.0), a.dtype(), a.device()); }
Tensor ones_like(const Tensor& a) { return full(a.sizes(), Scalar(1.0), a.dtype(), a.device()); }

// ---------------------------------------------------------------- in place (Note [In-place ops])
// Note [In-place ops]: with autograd in play an in-place op is computed out of place (so the
// out-of-place formula is its backward), written into self, and self's history is rebased onto
// the result. A view's base gets a CopySlices node that routes the view's region of the gradient
// through the new history and the rest through the old one.
void check_inplace(const Tensor& self, const char* op, bool any_requires_grad) {
  autograd::before_mutation(self);  // Note [Mutation hook]
  if (!autograd::GradMode::is_enabled()) return;
  if (any_requires_grad || self.requires_grad()) autograd::check_view_rebase(self, false);  // torch's order
  if (self.requires_grad() && self.is_leaf())
    AG_THROW(RuntimeError, self.is_view() ? "a view of a leaf Variable that requires grad is being used in an in-place operation."
                                          : "a leaf Variable that requires grad is being used in an in-place operation.");
  if (self.is_view()) {
    Tensor b = self.base();
    if (b.requires_grad() && b.is_leaf())
      AG_THROW(RuntimeError, "a view of a leaf Variable that requires grad is being used in an in-place operation.");
  }
}

namespace {
// The view geometry (strides, offset) is in the base's storage units, so the gradient is laid out
// as the base's memory first: permuted to the base's dim order (`order`, slowest dim first) and
// flattened, the view's strides index it directly; the result is permuted back. All recorded, so
// create_graph differentiates through it.
struct CopySlices : autograd::Node {
  IntList order, inv_order;
  Shape vsizes, vstrides;
  int64_t voffset;
  std::string name() const override { return "torch::autograd::CopySlices"; }  // torch's name()
  autograd::variable_list apply(autograd::variable_list&& g) override {
    // The view's geometry is relative to the base's memory: lay the gradient out in the base's
    // memory order (a dense base may be permuted), then address it like the storage.
    Tensor gp = contiguous(permute(g[0], order));
    Tensor flat = reshape(gp, {-1});
    Tensor res = clone(as_strided(flat, vsizes, vstrides, flat.storage_offset() + voffset));
    if (!next_edges[0].valid()) return {Tensor(), res};
    Tensor rest = clone(flat);
    // Recorded under create_graph, so the double backward also sees zeros at the hole.
    Tensor hole = as_strided(rest, vsizes, vstrides, rest.storage_offset() + voffset);
    zero_(hole);
    return {permute(reshape(rest, IntList(gp.sizes().begin(), gp.sizes().end())), inv_order), res};
  }
};
}  // namespace

// Moves retain_grad from self's old grad_fn to its new one: .grad is for the value after the op.
static void move_retains_grad(const Tensor& self, const std::shared_ptr<autograd::Node>& old_fn) {
  auto* m = self.autograd_meta();
  if (!m || !m->retains_grad || !old_fn || old_fn == m->grad_fn) return;
  auto& v = old_fn->retains_grad;
  v.erase(std::remove_if(v.begin(), v.end(), [&](auto& p) { return p.second.lock() == self.impl_ptr(); }), v.end());
  if (m->grad_fn) m->grad_fn->retains_grad.push_back({static_cast<int>(m->output_nr), self.impl_ptr()});
}

void rebase_history(Tensor& self, const Tensor& result) {
  if (!self.is_view()) {
    auto& m = self.ensure_autograd_meta();
    std::shared_ptr<autograd::Node> old = m.grad_fn;
    Tensor r = result.dtype() == self.dtype() ? result : to_dtype(result, self.dtype());
    m.requires_grad = true;
    m.grad_fn = r.grad_fn();
    m.output_nr = r.output_nr();
    move_retains_grad(self, old);
    return;
  }
  Tensor base = self.base();
  AG_CHECK(is_non_overlapping_and_dense(base), "in-place operation on a view of a tensor whose elements do not "
           "fill a dense block is not supported when it requires grad");
  auto node = std::make_shared<CopySlices>();
  node->order.resize(base.dim());
  for (int64_t d = 0; d < base.dim(); ++d) node->order[d] = d;
  std::stable_sort(node->order.begin(), node->order.end(),
                   [&](int64_t a, int64_t b) { return base.strides()[a] > base.strides()[b]; });
  node->inv_order.resize(base.dim());
  for (int64_t d = 0; d < base.dim(); ++d) node->inv_order[node->order[d]] = d;
  node->vsizes = self.sizes();
  node->vstrides = self.strides();
  node->voffset = self.storage_offset() - base.storage_offset();
  node->next_edges = {autograd::gradient_edge(base), autograd::gradient_edge(result)};
  node->input_meta.push_back({base.sizes(), base.dtype(), base.device()});
  auto& bm = base.ensure_autograd_meta();
  std::shared_ptr<autograd::Node> old_base = bm.grad_fn;
  bm.requires_grad = true;
  bm.grad_fn = node;
  bm.output_nr = 0;
  move_retains_grad(base, old_base);
  // The view now reads the new history through its base.
  auto& sm = self.ensure_autograd_meta();
  std::shared_ptr<autograd::Node> old_view = sm.grad_fn;
  Tensor v = as_strided(base, self.sizes(), self.strides(), self.storage_offset());
  sm.requires_grad = true;
  sm.grad_fn = v.grad_fn();
  sm.output_nr = 0;
  sm.attr_version = self.version();
  move_retains_grad(self, old_view);
}

Tensor& apply_inplace(Tensor& self, const Tensor& result, const char* op) {
  AG_CHECK(result.dtype() == self.dtype() || can_cast(result.dtype(), self.dtype()), "result type ",
           scalar_type_name(result.dtype()), " can't be cast to the desired output type ", scalar_type_name(self.dtype()));
  check_inplace(self, op, result.requires_grad());
  {
    autograd::AutoGradMode off(false);
    Tensor src = result.dtype() == self.dtype() ? result : to_dtype(result, self.dtype());
    run_elementwise(Op::copy, self, {&src});
  }
  self.bump_version();
  fw_inplace(self, result);
  if (!result.requires_grad()) {
    // Overwritten by values without history (e.g. eq_): the old history gets zeros.
    if (self.requires_grad()) rebase_constant(self, "CopyBackwards");
    return self;
  }
  rebase_history(self, result);
  return self;
}

// Note [Saved self in in-place ops]: the nodes made while an in-place op computes its result out
// of place may save `self` (or a view of it) as an input, which the write-back then overwrites.
// Those saved tensors are swapped for clones taken before the write (torch's "original self"):
// the formula sees the old values, and create_graph differentiates through the clone into self's
// old history. Nodes made before the op keep what they saved: that is stale and must raise.
static void protect_saved_self(const Tensor& self, const std::vector<std::weak_ptr<FunctionNode>>& nodes) {
  std::vector<std::pair<TensorImpl*, Tensor>> clones;
  for (auto& w : nodes) {
    auto node = w.lock();
    if (!node) continue;
    for (auto& sv : node->saved) {
      if (sv.is_output || !sv.data.defined() || sv.data.storage() != self.storage()) continue;
      Tensor c;
      for (auto& [k, t] : clones)
        if (k == sv.data.impl()) c = t;
      if (!c.defined()) {
        autograd::AutoGradMode on(true);
        c = clone(sv.data);
        clones.push_back({sv.data.impl(), c});
      }
      sv = autograd::SavedVariable(c, false);
    }
  }
}

Tensor& apply_inplace(Tensor& self, const std::function<Tensor()>& compute, const char* op, Operands operands) {
  check_inplace_operands(self, operands);
  check_inplace(self, op);
  Tensor result;
  std::vector<std::weak_ptr<FunctionNode>> made;
  {
    autograd::NodeRecorder rec;
    autograd::DeferSavedTensorHooks defer;
    result = compute();
    made = std::move(rec.nodes);
  }
  protect_saved_self(self, made);
  autograd::pack_saved_tensors(made);
  return apply_inplace(self, result, op);
}

// An in-place op whose new value does not depend on the old one (fill_, zero_, random fills,
// copy_ of a constant): self keeps requires_grad, and its old history gets zeros (torch's
// FillBackward / ZeroBackward / CopyBackwards nodes). Call after writing the data.
void rebase_constant(Tensor& self, const char* node_name) {
  if (!autograd::GradMode::is_enabled() || !self.requires_grad()) return;
  auto node = autograd::make_node(node_name, {&self}, AG_BW { return {zeros_like(g[0])}; });
  if (!node) return;
  Tensor r = detach(self);
  autograd::set_history(node, {&r});
  rebase_history(self, r);
}

// ---------------------------------------------------------------- forward AD helpers
namespace {
// A node the backward closures can read for a jvp: the saved tensors, and only input i marked as
// needing a gradient, through an edge that owns nothing.
struct JvpNode : FunctionNode {
  explicit JvpNode(std::initializer_list<Tensor> saved) : FunctionNode("jvp") { for (auto& t : saved) save(t); }
  void only_input(size_t i, size_t n) {
    next_edges.assign(n, autograd::Edge{});
    next_edges[i].fn = std::shared_ptr<autograd::Node>(std::shared_ptr<autograd::Node>(), this);
  }
};
}  // namespace

Tensor sum_defined(const variable_list& terms) {
  Tensor r;
  for (const Tensor& t : terms)
    if (t.defined()) r = r.defined() ? add(r, t) : t;
  return r;
}

Tensor jvp_from_backward(const autograd::BackwardFn& bw, const variable_list& t, std::initializer_list<Tensor> saved) {
  JvpNode node(saved);
  variable_list terms;
  for (size_t i = 0; i < t.size(); ++i) {
    if (!t[i].defined()) continue;
    node.only_input(i, t.size());
    variable_list g = bw(node, {t[i]});
    if (i < g.size()) terms.push_back(g[i]);
  }
  return sum_defined(terms);
}

Tensor jvp_reduce_from_backward(const autograd::BackwardFn& bw, const Tensor& t, const Tensor& out,
                                std::initializer_list<Tensor> saved, const IntList& dims, bool keepdim) {
  JvpNode node(saved);
  node.only_input(0, 1);
  Tensor d = bw(node, {ones_like(out)})[0];
  return sum(mul(t, d), dims, keepdim, std::nullopt);
}

// ---------------------------------------------------------------- unary
namespace {
enum Save { IN, OUT, NONE_ };

// torch's dtype refusals that are not just a missing kernel.
void check_unary_dtype(Op op, ScalarType t) {
  if (t != ScalarType::Bool) return;
  AG_CHECK(op != Op::neg, "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, "
           "use the `~` or `logical_not()` operator instead.");
  AG_CHECK(op != Op::relu, "Boolean inputs not supported for relu");
}

Tensor unary_impl(Op op, const Tensor& a0, bool to_float, const char* bw_name, Save save,
                  std::function<variable_list(FunctionNode&, const variable_list&)> bw, const double* s = nullptr) {
  Tensor a = a0;
  check_unary_dtype(op, a.dtype());
  if (to_float && !is_floating(a.dtype())) a = to_dtype(a, default_dtype());
  Tensor out = elementwise(op, a.sizes(), a.dtype(), {&a}, s);
  if (bw) fw_rule(out, {&a}, [&](const variable_list& t) { return jvp_from_backward(bw, t, {save == OUT ? out : a}); });
  if (bw && is_floating(out.dtype()))
    if (auto node = autograd::make_node(bw_name, {&a}, std::move(bw))) {
      autograd::set_history(node, {&out});
      if (save == IN) node->save(a);
      if (save == OUT) node->save(out, true);
    }
  return out;
}
constexpr double kLn2 = 0.69314718055994530942, kLn10 = 2.30258509299404568402;
constexpr double kTwoOverSqrtPi = 1.12837916709551257390, kSqrtPiOver2 = 0.88622692545275801365;
}  // namespace

// torch's threshold_backward(grad, result, 0) in one pass: grad where result > 0, else 0 (a NaN
// grad is dropped where the result is <= 0, as torch does; `grad * (result > 0)` would keep it).
Tensor relu_backward(const Tensor& g, const Tensor& out);

#define AG_UNARY_GRAD(name, to_float, bw_name, save, formula)                                              \
  Tensor name(const Tensor& a) { return unary_impl(Op::name, a, to_float, bw_name, save, AG_BW { Tensor x = c.get(0); (void)x; return {formula}; }); } \
  Tensor& name##_(Tensor& a) {                                                                        \
    check_unary_dtype(Op::name, a.dtype());                                                           \
    if ((!autograd::GradMode::is_enabled() || !a.requires_grad()) && !fw_has(a)) {                   \
      AG_CHECK(!(to_float) || is_floating(a.dtype()), "result type ", scalar_type_name(default_dtype()), " can't be cast to the desired output type ", scalar_type_name(a.dtype())); \
      assert_no_internal_overlap(a);                                                                   \
      autograd::before_mutation(a);                                                                   \
      run_elementwise(Op::name, a, {&a}); a.bump_version(); return a;                                 \
    }                                                                                                 \
    return apply_inplace(a, [&] { return name(a); }, #name "_");                                      \
  }
#define AG_UNARY_NOGRAD(name, bw_name) AG_UNARY_GRAD(name, false, bw_name, NONE_, zeros_like(g[0]))

AG_UNARY_GRAD(neg, false, "NegBackward0", NONE_, -g[0])
AG_UNARY_GRAD(exp, true, "ExpBackward0", OUT, g[0] * x)
AG_UNARY_GRAD(exp2, true, "Exp2Backward0", OUT, g[0] * x * kLn2)
AG_UNARY_GRAD(expm1, true, "Expm1Backward0", OUT, g[0] * (x + 1.0))
AG_UNARY_GRAD(log, true, "LogBackward0", IN, g[0] / x)
AG_UNARY_GRAD(log2, true, "Log2Backward0", IN, g[0] / (x * kLn2))
AG_UNARY_GRAD(log10, true, "Log10Backward0", IN, g[0] / (x * kLn10))
AG_UNARY_GRAD(log1p, true, "Log1PBackward0", IN, g[0] / (x + 1.0))
AG_UNARY_GRAD(sqrt, true, "SqrtBackward0", OUT, g[0] / (x * 2.0))
AG_UNARY_GRAD(rsqrt, true, "RsqrtBackward0", OUT, g[0] * x * x * x * -0.5)
AG_UNARY_GRAD(reciprocal, true, "ReciprocalBackward0", OUT, -g[0] * x * x)
AG_UNARY_GRAD(abs, false, "AbsBackward0", IN, g[0] * sign(x))
AG_UNARY_GRAD(sign, false, "SignBackward0", NONE_, zeros_like(g[0]))
AG_UNARY_GRAD(sin, true, "SinBackward0", IN, g[0] * cos(x))
AG_UNARY_GRAD(cos, true, "CosBackward0", IN, -g[0] * sin(x))
AG_UNARY_GRAD(tan, true, "TanBackward0", OUT, g[0] * (x * x + 1.0))
AG_UNARY_GRAD(asin, true, "AsinBackward0", IN, g[0] * rsqrt(1.0 - x * x))
AG_UNARY_GRAD(acos, true, "AcosBackward0", IN, -g[0] * rsqrt(1.0 - x * x))
AG_UNARY_GRAD(atan, true, "AtanBackward0", IN, g[0] / (x * x + 1.0))
AG_UNARY_GRAD(sinh, true, "SinhBackward0", IN, g[0] * cosh(x))
AG_UNARY_GRAD(cosh, true, "CoshBackward0", IN, g[0] * sinh(x))
AG_UNARY_GRAD(tanh, true, "TanhBackward0", OUT, g[0] * (1.0 - x * x))
AG_UNARY_GRAD(sigmoid, true, "SigmoidBackward0", OUT, g[0] * x * (1.0 - x))
AG_UNARY_GRAD(relu, false, "ReluBackward0", OUT, relu_backward(g[0], x))
AG_UNARY_GRAD(silu, false, "SiluBackward0", IN, g[0] * sigmoid(x) * (x * (1.0 - sigmoid(x)) + 1.0))
AG_UNARY_GRAD(erf, true, "ErfBackward0", IN, g[0] * exp(-x * x) * kTwoOverSqrtPi)
AG_UNARY_GRAD(erfinv, true, "ErfinvBackward0", OUT, g[0] * exp(x * x) * kSqrtPiOver2)
AG_UNARY_NOGRAD(floor, "FloorBackward0")
AG_UNARY_NOGRAD(ceil, "CeilBackward0")
AG_UNARY_NOGRAD(trunc, "TruncBackward0")
AG_UNARY_GRAD(frac, false, "FracBackward0", NONE_, g[0])
AG_UNARY_GRAD(bitwise_not, false, "", NONE_, g[0])

// logical_not returns bool; in place it writes 0/1 in self's dtype.
Tensor logical_not(const Tensor& a) { return elementwise(Op::logical_not, a.sizes(), ScalarType::Bool, {&a}); }
Tensor& logical_not_(Tensor& a) {
  assert_no_internal_overlap(a);
  Tensor r = logical_not(a);
  autograd::before_mutation(a);
  run_elementwise(Op::copy, a, {&r});
  a.bump_version();
  return a;
}

Tensor round(const Tensor& a, int64_t decimals) {
  AG_CHECK_NOT_IMPL(decimals == 0 || is_floating(a.dtype()), "\"round_cpu\" not implemented for '", scalar_type_name(a.dtype()), "'");
  double s[1] = {static_cast<double>(decimals)};
  return unary_impl(Op::round, a, false, "RoundBackward0", NONE_, AG_BW { return {zeros_like(g[0])}; }, s);
}

Tensor gelu(const Tensor& a, const std::string& approximate) {
  AG_CHECK(approximate == "none" || approximate == "tanh", "approximate argument must be either none or tanh.");
  AG_CHECK_NOT_IMPL(is_floating(a.dtype()), "\"GeluKernelImpl\" not implemented for '", scalar_type_name(a.dtype()), "'");
  if (approximate == "none")
    return unary_impl(Op::gelu, a, true, "GeluBackward0", IN, AG_BW {
      Tensor x = c.get(0);
      Tensor cdf = (erf(x * 0.70710678118654752440) + 1.0) * 0.5;
      Tensor pdf = exp(x * x * -0.5) * 0.39894228040143267794;
      return {g[0] * (cdf + x * pdf)};
    });
  return unary_impl(Op::gelu_tanh, a, true, "GeluBackward0", IN, AG_BW {
    Tensor x = c.get(0);
    const double k = 0.79788456080286535588, k1 = 0.044715;
    Tensor inner = (x + x * x * x * k1) * k;
    Tensor t = tanh(inner);
    Tensor dinner = (x * x * (3.0 * k1) + 1.0) * k;
    return {g[0] * ((t + 1.0) * 0.5 + x * 0.5 * (1.0 - t * t) * dinner)};
  });
}

Tensor softplus(const Tensor& a, double beta, double threshold) {
  double s[2] = {beta, threshold};
  return unary_impl(Op::softplus, a, false, "SoftplusBackward0", IN, AG_BW {
    Tensor x = c.get(0);
    Tensor z = x * beta;
    return {where(compare(Op::gt, z, wrap_scalar(threshold)), g[0], g[0] * sigmoid(z))};
  }, s);
}

Tensor isnan(const Tensor& a) { return elementwise(Op::isnan, a.sizes(), ScalarType::Bool, {&a}); }
Tensor isinf(const Tensor& a) { return elementwise(Op::isinf, a.sizes(), ScalarType::Bool, {&a}); }
Tensor isfinite(const Tensor& a) { return elementwise(Op::isfinite, a.sizes(), ScalarType::Bool, {&a}); }

Tensor nan_to_num(const Tensor& a, std::optional<double> nan, std::optional<double> posinf, std::optional<double> neginf) {
  double big = 0;
  AG_DISPATCH_ALL(a.dtype(), "nan_to_num", [&] {
    if constexpr (std::is_same_v<scalar_t, Half>) big = 65504.0;
    else if constexpr (std::is_same_v<scalar_t, BFloat16>) big = 3.3895313892515355e38;
    else if constexpr (std::is_same_v<scalar_t, bool>) big = 1;
    else big = static_cast<double>(std::numeric_limits<scalar_t>::max());
  });
  double s[3] = {nan.value_or(0.0), posinf.value_or(big), neginf.value_or(-big)};
  if (!is_floating(a.dtype())) return clone(a);
  return unary_impl(Op::nan_to_num, a, false, "NanToNumBackward0", IN, AG_BW {
    return {g[0] * isfinite(c.get(0))};
  }, s);
}

// ---------------------------------------------------------------- binary
namespace {
// Prepares operands in the compute dtype. A 0-dim CPU operand of a floating op is passed to the
// kernel as a scalar in fp32/fp64 registers, as torch's CPU kernels do (no rounding to fp16).
struct Binary {
  Tensor a, b;
  ScalarType dt;
  Shape shape;
  double s[4] = {0, 0, 1, 0};  // scalar value, scalar position (0 none, 1 b, 2 a), alpha, extra
  bool weak = false;           // both operands are wrapped numbers
};

// torch casts a 0-d operand to the common dtype before the kernel computes in float (2**40 becomes
// inf in float16); only mul and div read the original scalar in opmath precision.
static double scalar_operand(Op op, const Tensor& t, ScalarType dt) {
  double v = item_double(t);
  if (op == Op::mul || op == Op::div) return v;
  if (dt == ScalarType::Float16) return static_cast<float>(Half(static_cast<float>(v)));
  if (dt == ScalarType::BFloat16) return static_cast<float>(BFloat16(static_cast<float>(v)));
  return v;
}

Binary prepare(Op op, const Tensor& a, const Tensor& b, bool want_float) {
  check_same_device(a, b, op_name(op));
  Binary r;
  const Tensor* ab[2] = {&a, &b};
  r.dt = result_type(ab, 2);
  // Two Python numbers (this happens in backward formulas, e.g. `e - 1.0` for a scalar exponent)
  // are combined in double and stay a weak wrapped number, as Python arithmetic would: rounding
  // to the default dtype here would cost float64 gradients their precision.
  r.weak = a.impl()->wrapped_number && b.impl()->wrapped_number;
  if (r.weak) r.dt = promote_types(a.dtype(), b.dtype());
  if (want_float && !is_floating(r.dt)) r.dt = r.weak ? ScalarType::Float64 : default_dtype();
  r.shape = broadcast_shapes(a.sizes(), b.sizes());
  if (is_floating(r.dt) && b.dim() == 0 && a.dim() > 0 && b.device().is_cpu()) {
    r.s[0] = scalar_operand(op, b, r.dt); r.s[1] = 1;
    r.a = to_dtype(a, r.dt);
  } else if (is_floating(r.dt) && a.dim() == 0 && b.dim() > 0 && a.device().is_cpu()) {
    r.s[0] = scalar_operand(op, a, r.dt); r.s[1] = 2;
    r.b = to_dtype(b, r.dt);
  } else {
    r.a = expand(to_dtype(a, r.dt), r.shape);
    r.b = expand(to_dtype(b, r.dt), r.shape);
  }
  return r;
}

Tensor run_binary(Op op, Binary& p, ScalarType out_dt) {
  Shape st = p.s[1] == 1 ? output_strides(p.shape, {&p.a}) : p.s[1] == 2 ? output_strides(p.shape, {&p.b})
                                                                          : output_strides(p.shape, {&p.a, &p.b});
  Tensor out = empty_strided(std::move(p.shape), std::move(st), out_dt, (p.s[1] == 2 ? p.b : p.a).device());
  if (p.weak && out_dt == p.dt) out.impl()->wrapped_number = true;
  if (p.s[1] == 1) run_elementwise(op, out, {&p.a}, p.s);
  else if (p.s[1] == 2) run_elementwise(op, out, {&p.b}, p.s);
  else run_elementwise(op, out, {&p.a, &p.b}, p.s);
  return out;
}

// `own_jvp`: the op sets its tangent itself; otherwise it comes from the backward (elementwise).
void record2(const char* name, const Tensor& a, const Tensor& b, Tensor& out, bool save_a, bool save_b,
             std::function<variable_list(FunctionNode&, const variable_list&)> bw, bool save_out = false, bool own_jvp = false) {
  if (!is_floating(out.dtype())) return;
  if (!own_jvp) fw_rule(out, {&a, &b}, [&](const variable_list& t) { return jvp_from_backward(bw, t, {a, b, out}); });
  if (auto node = autograd::make_node(name, {&a, &b}, std::move(bw))) {
    autograd::set_history(node, {&out});
    if (!save_a && !save_b && !save_out) return;  // get(i) of an unsaved slot is undefined anyway
    node->saved.reserve(3);
    node->save(save_a ? a : Tensor());
    node->save(save_b ? b : Tensor());
    if (save_out) node->save(out, true);
  }
}
}  // namespace

// torch's alpha_check: a bool alpha needs a bool result, a float alpha a floating one.
static void check_alpha(ScalarType dt, Scalar alpha) {
  AG_CHECK(alpha.kind != Scalar::Bool || dt == ScalarType::Bool, "Boolean alpha only supported for Boolean results.");
  AG_CHECK(is_floating(dt) || alpha.kind != Scalar::Float,
           "For integral input tensors, argument alpha must not be a floating point number.");
  check_scalar_fits(alpha, dt);
}

Tensor add(const Tensor& a, const Tensor& b, Scalar alpha) {
  Binary p = prepare(Op::add, a, b, false);
  check_alpha(p.dt, alpha);
  p.s[2] = alpha.to_double();
  Tensor out = run_binary(Op::add, p, p.dt);
  double al = alpha.to_double();
  record2("AddBackward0", a, b, out, false, false, AG_BW {
    return {g[0], c.needs_input_grad(1) ? (al == 1.0 ? g[0] : g[0] * al) : Tensor()};
  });
  return out;
}

Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha) {
  AG_CHECK(a.dtype() != ScalarType::Bool || b.dtype() != ScalarType::Bool,
           "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead.");
  AG_CHECK(a.dtype() != ScalarType::Bool && b.dtype() != ScalarType::Bool,
           "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, "
           "use the `~` or `logical_not()` operator instead.");
  Binary p = prepare(Op::sub, a, b, false);
  check_alpha(p.dt, alpha);
  p.s[2] = alpha.to_double();
  Tensor out = run_binary(Op::sub, p, p.dt);
  double al = alpha.to_double();
  record2("SubBackward0", a, b, out, false, false, AG_BW {
    return {g[0], c.needs_input_grad(1) ? (al == 1.0 ? -g[0] : g[0] * -al) : Tensor()};
  });
  return out;
}

Tensor mul(const Tensor& a, const Tensor& b) {
  Binary p = prepare(Op::mul, a, b, false);
  Tensor out = run_binary(Op::mul, p, p.dt);
  bool ga = a.requires_grad(), gb = b.requires_grad();
  record2("MulBackward0", a, b, out, gb, ga, AG_BW {
    return {c.needs_input_grad(0) ? g[0] * c.get(1) : Tensor(), c.needs_input_grad(1) ? g[0] * c.get(0) : Tensor()};
  });
  return out;
}

Tensor relu_backward(const Tensor& g, const Tensor& out) {
  Binary p = prepare(Op::relu_backward, g, out, false);
  Tensor r = run_binary(Op::relu_backward, p, p.dt);
  record2("ThresholdBackwardBackward0", g, out, r, false, true, AG_BW {
    return {c.needs_input_grad(0) ? relu_backward(g[0], c.get(1)) : Tensor(), Tensor()};
  });
  return r;
}

Tensor div(const Tensor& a, const Tensor& b, const std::string& mode) {
  if (mode.empty()) {
    Binary p = prepare(Op::div, a, b, true);
    Tensor out = run_binary(Op::div, p, p.dt);
    record2("DivBackward0", a, b, out, b.requires_grad(), true, AG_BW {
      Tensor bb = c.get(1);
      return {c.needs_input_grad(0) ? g[0] / bb : Tensor(), c.needs_input_grad(1) ? -g[0] * c.get(0) / (bb * bb) : Tensor()};
    });
    return out;
  }
  AG_CHECK(mode == "trunc" || mode == "floor",
           "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '", mode, "'");
  Op op = mode == "trunc" ? Op::div_trunc : Op::div_floor;
  Binary p = prepare(op, a, b, false);
  AG_CHECK_NOT_IMPL(p.dt != ScalarType::Bool, "\"", op_name(op), "_cpu\" not implemented for 'Bool'");
  if (!is_floating(p.dt) && p.b.defined()) {  // integer division by zero
    Tensor zero = compare(Op::eq, p.b, wrap_scalar(int64_t(0)));
    AG_CHECK(item_double(any(zero, std::nullopt, false)) == 0, "ZeroDivisionError");
  }
  Tensor out = run_binary(op, p, p.dt);
  record2("DivBackward2", a, b, out, false, false, AG_BW {
    return {zeros_like(g[0]), c.needs_input_grad(1) ? zeros_like(g[0]) : Tensor()};
  });
  return out;
}

Tensor pow(const Tensor& a, const Tensor& b) {
  Binary p = prepare(Op::pow, a, b, false);
  // Only a Python-number exponent is checked (a tensor exponent, even 0-dim, gives 0 like torch).
  if (!is_floating(p.dt) && b.impl()->wrapped_number && is_integral(b.dtype(), true))
    AG_CHECK(item_double(b) >= 0, "Integers to negative integer powers are not allowed.");
  // A scalar exponent of +-0.5 or -1 runs torch's sqrt/rsqrt/reciprocal kernels (pow(-0., -0.5) is
  // -inf and pow(-inf, 0.5) nan there, unlike std::pow).
  Op kop = Op::pow;
  if (p.s[1] == 1 && is_floating(p.dt) && b.impl()->wrapped_number)  // a 0-d tensor exponent takes std::pow, as in torch
    kop = p.s[0] == 0.5 ? Op::sqrt : p.s[0] == -0.5 ? Op::rsqrt : p.s[0] == -1.0 ? Op::reciprocal : Op::pow;
  Tensor out;
  if (kop == Op::pow) {
    out = run_binary(Op::pow, p, p.dt);
  } else {
    out = empty_strided(p.shape, output_strides(p.shape, {&p.a}), p.dt, p.a.device());
    run_elementwise(kop, out, {&p.a});
  }
  const bool scalar_exp = b.impl()->wrapped_number;
  const char* name = scalar_exp ? "PowBackward0" : "PowBackward1";
  // The result is saved only for the exponent's gradient (torch's PowBackward0 saves self alone).
  record2(name, a, b, out, true, true, AG_BW {
    Tensor x = c.get(0), e = c.get(1), y = c.get(2);
    Tensor ga, gb;
    if (c.needs_input_grad(0)) {
      ga = g[0] * e * pow(x, e - 1.0);
      ga = where(compare(Op::eq, e, wrap_scalar(0.0)), zeros_like(ga), ga);
    }
    if (c.needs_input_grad(1)) {
      // torch's pow_backward_exponent: grad * where(x == 0 & e >= 0, 0, y * log(x)) (the sign of a zero follows grad)
      Tensor zero_base = logical(Op::logical_and, compare(Op::eq, x, wrap_scalar(0.0)), compare(Op::ge, e, wrap_scalar(0.0)));
      Tensor ylog = y * log(x);
      gb = g[0] * where(zero_base, zeros_like(ylog), ylog);
    }
    return {ga, gb};
  }, !scalar_exp);
  return out;
}

Tensor atan2(const Tensor& a0, const Tensor& b0) {
  Tensor a = a0, b = b0;
  Binary p = prepare(Op::atan2, a, b, true);
  Tensor out = run_binary(Op::atan2, p, p.dt);
  record2("Atan2Backward0", a, b, out, true, true, AG_BW {
    // torch's atan2_backward: 1 / (x^2 + y^2), 0 at the origin (a zero gradient there, not 0/0)
    Tensor x = c.get(0), y = c.get(1), r = x * x + y * y;
    Tensor rr = where(compare(Op::eq, r, wrap_scalar(0.0)), zeros_like(r), reciprocal(r));
    return {c.needs_input_grad(0) ? g[0] * y * rr : Tensor(), c.needs_input_grad(1) ? g[0] * -x * rr : Tensor()};
  });
  return out;
}

static Tensor minmax(Op op, const char* name, const Tensor& a, const Tensor& b) {
  Binary p = prepare(op, a, b, false);
  Tensor out = run_binary(op, p, p.dt);
  Op lose = op == Op::maximum ? Op::lt : Op::gt;
  // torch's jvp: b's tangent unless a wins (half of each at ties); with a nan neither wins.
  fw_rule(out, {&a, &b}, [&](const variable_list& t) {
    Tensor ta = or_zeros(t[0], a), tb = or_zeros(t[1], b);
    Tensor wa = where(compare(Op::eq, a, b), full({}, Scalar(0.5), out.dtype()), to_dtype(compare(lose, b, a), out.dtype()));
    return tb + wa * (ta - tb);
  });
  record2(name, a, b, out, true, true, AG_BW {
    Tensor x = c.get(0), y = c.get(1);
    Tensor half_g = where(compare(Op::eq, x, y), g[0] * 0.5, g[0]);
    Tensor ga = where(compare(lose, x, y), zeros_like(half_g), half_g);
    Tensor gb = where(compare(lose, y, x), zeros_like(half_g), half_g);
    return {ga, gb};
  }, false, true);
  return out;
}
Tensor maximum(const Tensor& a, const Tensor& b) { return minmax(Op::maximum, "MaximumBackward0", a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return minmax(Op::minimum, "MinimumBackward0", a, b); }

static Tensor modop(Op op, const char* name, const Tensor& a, const Tensor& b) {
  Binary p = prepare(op, a, b, false);
  AG_CHECK_NOT_IMPL(p.dt != ScalarType::Bool, "\"", op_name(op), "_cpu\" not implemented for 'Bool'");
  if (!is_floating(p.dt) && p.b.defined()) {
    Tensor zero = compare(Op::eq, p.b, wrap_scalar(int64_t(0)));
    AG_CHECK(item_double(any(zero, std::nullopt, false)) == 0, "ZeroDivisionError");
  }
  Tensor out = run_binary(op, p, p.dt);
  bool is_fmod = op == Op::fmod;
  record2(name, a, b, out, true, true, AG_BW {
    Tensor q = c.needs_input_grad(1) ? div(c.get(0), c.get(1), is_fmod ? "trunc" : "floor") : Tensor();
    return {g[0], c.needs_input_grad(1) ? -g[0] * q : Tensor()};
  });
  return out;
}
Tensor fmod(const Tensor& a, const Tensor& b) { return modop(Op::fmod, "FmodBackward1", a, b); }
Tensor remainder(const Tensor& a, const Tensor& b) { return modop(Op::remainder, "RemainderBackward1", a, b); }

Tensor compare(Op op, const Tensor& a, const Tensor& b) {
  Binary p = prepare(op, a, b, false);
  return run_binary(op, p, ScalarType::Bool);
}

Tensor logical(Op op, const Tensor& a, const Tensor& b) {
  check_same_device(a, b, op_name(op));
  Shape shape = broadcast_shapes(a.sizes(), b.sizes());
  Tensor x = expand(to_dtype(a, ScalarType::Bool), shape), y = expand(to_dtype(b, ScalarType::Bool), shape);
  return elementwise(op, shape, ScalarType::Bool, {&x, &y});
}

Tensor bitwise(Op op, const Tensor& a, const Tensor& b) {
  Binary p = prepare(op, a, b, false);
  AG_CHECK_NOT_IMPL(!is_floating(p.dt), "\"", op_name(op), "_cpu\" not implemented for '", scalar_type_name(p.dt), "'");
  return run_binary(op, p, p.dt);
}

static Tensor binary_dispatch(Op op, const Tensor& a, const Tensor& b, Scalar alpha, const std::string& mode) {
  switch (op) {
    case Op::add: return add(a, b, alpha);
    case Op::sub: return sub(a, b, alpha);
    case Op::mul: return mul(a, b);
    case Op::div: return div(a, b, mode);
    case Op::pow: return pow(a, b);
    case Op::atan2: return atan2(a, b);
    case Op::maximum: return maximum(a, b);
    case Op::minimum: return minimum(a, b);
    case Op::fmod: return fmod(a, b);
    case Op::remainder: return remainder(a, b);
    case Op::eq: case Op::ne: case Op::lt: case Op::le: case Op::gt: case Op::ge: return compare(op, a, b);
    case Op::logical_and: case Op::logical_or: case Op::logical_xor: return logical(op, a, b);
    case Op::bitwise_and: case Op::bitwise_or: case Op::bitwise_xor: return bitwise(op, a, b);
    default: AG_THROW(RuntimeError, "binary_: unsupported op ", op_name(op));
  }
}

Tensor& binary_(Op op, Tensor& self, const Tensor& other, Scalar alpha, const std::string& mode) {
  ScalarType rt = result_type({&self, &other});
  if (((op == Op::div && mode.empty()) || op == Op::atan2) && !is_floating(rt)) rt = default_dtype();  // float-valued ops
  bool is_cmp = op == Op::eq || op == Op::ne || op == Op::lt || op == Op::le || op == Op::gt || op == Op::ge ||
                op == Op::logical_and || op == Op::logical_or || op == Op::logical_xor;
  if (!is_cmp)
    AG_CHECK(can_cast(rt, self.dtype()), "result type ", scalar_type_name(rt), " can't be cast to the desired output type ",
             scalar_type_name(self.dtype()));
  Shape bs = broadcast_shapes(self.sizes(), other.sizes());
  AG_CHECK(bs == self.sizes(), "output with shape ", shape_str(self.sizes()), " doesn't match the broadcast shape ", shape_str(bs));
  check_inplace_operands(self, {&other});
  bool grad = autograd::GradMode::is_enabled() && (self.requires_grad() || other.requires_grad());
  if (grad || fw_has(self) || fw_has(other)) {
    if (grad) check_inplace(self, op_name(op), true);
    return apply_inplace(self, [&] { return binary_dispatch(op, self, other, alpha, mode); }, op_name(op));
  }
  autograd::before_mutation(self);
  const bool arith = op == Op::add || op == Op::sub || op == Op::mul || (op == Op::div && mode.empty()) ||
                     op == Op::maximum || op == Op::minimum;
  const bool overlaps = other.storage() == self.storage() &&
                        !(other.storage_offset() == self.storage_offset() && other.strides() == self.strides());
  if (arith && rt == self.dtype() && !overlaps) {
    // The common optimizer/update case: write straight into self, one pass, no temporary.
    Binary p = prepare(op, self, other, op == Op::div);
    AG_CHECK(!(op == Op::add || op == Op::sub) || is_floating(p.dt) || alpha.kind != Scalar::Float,
             "For integral input tensors, argument alpha must not be a floating point number.");
    p.s[2] = alpha.to_double();
    if (op == Op::sub && self.dtype() == ScalarType::Bool) AG_THROW(RuntimeError, "Subtraction, the `-` operator, with a bool tensor is not supported.");
    if (p.s[1] == 1) run_elementwise(op, self, {&p.a}, p.s);
    else run_elementwise(op, self, {&p.a, &p.b}, p.s);
    self.bump_version();
    return self;
  }
  // Otherwise the result is computed out of place then written back (Note [In-place ops]).
  Tensor result;
  {
    autograd::AutoGradMode m(false);
    result = binary_dispatch(op, detach(self), other, alpha, mode);
  }
  Tensor src = result.dtype() == self.dtype() ? result : to_dtype(result, self.dtype());
  run_elementwise(Op::copy, self, {&src});
  self.bump_version();
  return self;
}

// ---------------------------------------------------------------- ternary
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  AG_CHECK(cond.dtype() == ScalarType::Bool || cond.dtype() == ScalarType::UInt8,
           "where expected condition to be a boolean tensor, but got a tensor with dtype ", dtype_name(cond.dtype()));
  check_same_device(a, b, "where");
  ScalarType dt = result_type({&a, &b});
  Shape shape = broadcast_shapes(cond.sizes(), broadcast_shapes(a.sizes(), b.sizes()));
  Tensor cc = expand(to_dtype(cond, ScalarType::Bool), shape);
  Tensor x = expand(to_dtype(a, dt), shape), y = expand(to_dtype(b, dt), shape);
  Tensor out = elementwise(Op::where, shape, dt, {&cc, &x, &y});
  fw_rule(out, {&a, &b}, [&](const variable_list& t) { return where(cond, or_zeros(t[0], a), or_zeros(t[1], b)); });
  if (is_floating(dt))
    if (auto node = autograd::make_node("WhereBackward0", {nullptr, &a, &b}, AG_BW {
          Tensor m = c.get(0), z = zeros_like(g[0]);
          return {Tensor(), c.needs_input_grad(1) ? where(m, g[0], z) : Tensor(), c.needs_input_grad(2) ? where(m, z, g[0]) : Tensor()};
        })) {
      autograd::set_history(node, {&out});
      node->save(cond);
    }
  return out;
}

Tensor lerp(const Tensor& a, const Tensor& b, const Tensor& w) {
  // torch does not promote here: end, and a weight tensor with dims, must have input's dtype
  AG_CHECK(b.dtype() == a.dtype(), "expected dtype ", cpp_type_name(a.dtype()), " for `end` but got dtype ", cpp_type_name(b.dtype()));
  AG_CHECK(w.dim() == 0 || w.dtype() == a.dtype(), "expected dtype ", cpp_type_name(a.dtype()), " for `weight` but got dtype ",
           cpp_type_name(w.dtype()));
  ScalarType dt = result_type({&a, &b});
  Shape shape = broadcast_shapes(broadcast_shapes(a.sizes(), b.sizes()), w.sizes());  // (shapes are checked first)
  AG_CHECK_NOT_IMPL(is_floating(dt), "\"", w.impl()->wrapped_number ? "lerp_kernel_scalar" : "lerp_kernel_tensor",
                    "\" not implemented for '", scalar_type_name(dt), "'");
  Tensor x = expand(to_dtype(a, dt), shape), y = expand(to_dtype(b, dt), shape), ww = expand(to_dtype(w, dt), shape);
  Tensor out = elementwise(Op::lerp, shape, dt, {&x, &y, &ww});
  autograd::BackwardFn bw = AG_BW {
    Tensor x = c.get(0), y = c.get(1), w = c.get(2);
    return {c.needs_input_grad(0) ? g[0] * (1.0 - w) : Tensor(), c.needs_input_grad(1) ? g[0] * w : Tensor(),
            c.needs_input_grad(2) ? g[0] * (y - x) : Tensor()};
  };
  fw_rule(out, {&a, &b, &w}, [&](const variable_list& t) { return jvp_from_backward(bw, t, {a, b, w}); });
  if (auto node = autograd::make_node("LerpBackward1", {&a, &b, &w}, std::move(bw))) {
    autograd::set_history(node, {&out});
    node->save(a); node->save(b); node->save(w);
  }
  return out;
}

static Tensor addc(Op op, const char* name, const Tensor& s0, const Tensor& t10, const Tensor& t20, Scalar value) {
  Tensor s = s0, t1 = t10, t2 = t20;
  ScalarType dt = result_type({&s, &t1, &t2});
  if (op == Op::addcdiv)
    AG_CHECK(is_floating(dt), "Integer division with addcdiv is no longer supported, and in a future release addcdiv will "
             "perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as "
             "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
             "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter "
             "implementation: (input + value * tensor1 / tensor2), for all dtypes.");
  Shape shape = broadcast_shapes(broadcast_shapes(s.sizes(), t1.sizes()), t2.sizes());
  Tensor x = expand(to_dtype(s, dt), shape), y = expand(to_dtype(t1, dt), shape), z = expand(to_dtype(t2, dt), shape);
  double sc[1] = {value.to_double()};
  Tensor out = elementwise(op, shape, dt, {&x, &y, &z}, sc);
  double v = value.to_double();
  bool is_mul = op == Op::addcmul;
  autograd::BackwardFn bw = AG_BW {
    Tensor a = c.get(0), b = c.get(1);
    Tensor gs = c.needs_input_grad(0) ? g[0] : Tensor();
    if (is_mul) return {gs, c.needs_input_grad(1) ? g[0] * b * v : Tensor(), c.needs_input_grad(2) ? g[0] * a * v : Tensor()};
    return {gs, c.needs_input_grad(1) ? g[0] * v / b : Tensor(), c.needs_input_grad(2) ? -g[0] * v * a / (b * b) : Tensor()};
  };
  fw_rule(out, {&s, &t1, &t2}, [&](const variable_list& t) { return jvp_from_backward(bw, t, {t1, t2}); });
  if (is_floating(dt))
    if (auto node = autograd::make_node(name, {&s, &t1, &t2}, std::move(bw))) {
      autograd::set_history(node, {&out});
      node->save(t1); node->save(t2);
    }
  return out;
}
Tensor addcmul(const Tensor& s, const Tensor& t1, const Tensor& t2, Scalar v) { return addc(Op::addcmul, "AddcmulBackward0", s, t1, t2, v); }
Tensor addcdiv(const Tensor& s, const Tensor& t1, const Tensor& t2, Scalar v) { return addc(Op::addcdiv, "AddcdivBackward0", s, t1, t2, v); }

Tensor clamp(const Tensor& a, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  AG_CHECK(lo || hi, "torch.clamp: At least one of 'min' or 'max' must not be None");
  // The bounds take part in promotion as numbers: bool with int bounds -> int64, int with float -> float.
  Tensor wl = lo ? wrap_scalar(*lo) : Tensor(), wh = hi ? wrap_scalar(*hi) : Tensor();
  ScalarType dt = result_type({&a, &wl, &wh});
  if (lo) check_scalar_fits(*lo, dt);
  if (hi) check_scalar_fits(*hi, dt);
  Tensor x = to_dtype(a, dt);
  double inf = std::numeric_limits<double>::infinity();
  double s[2] = {lo ? lo->to_double() : -inf, hi ? hi->to_double() : inf};
  Tensor out = elementwise(Op::clamp, x.sizes(), dt, {&x}, s);
  autograd::BackwardFn bw = AG_BW {
    Tensor v = c.get(0);
    Tensor keep = logical(Op::logical_and, compare(Op::ge, v, wrap_scalar(s[0])), compare(Op::le, v, wrap_scalar(s[1])));
    return {where(keep, g[0], zeros_like(g[0]))};  // torch's where: a NaN grad of a clamped element gives 0
  };
  fw_rule(out, {&x}, [&](const variable_list& t) { return jvp_from_backward(bw, t, {x}); });
  if (is_floating(dt))
    if (auto node = autograd::make_node("ClampBackward1", {&x}, std::move(bw))) {
      autograd::set_history(node, {&out});
      node->save(x);
    }
  return out;
}

Tensor clamp(const Tensor& a, const std::optional<Tensor>& lo, const std::optional<Tensor>& hi) {
  AG_CHECK(lo || hi, "torch.clamp: At least one of 'min' or 'max' must not be None");
  Tensor r = a;
  if (lo) r = maximum(r, *lo);
  if (hi) r = minimum(r, *hi);
  return r;
}

}  // namespace ampgrad

namespace ampgrad {
Tensor to_device(const Tensor& t, Device device, bool copy) {
  if (t.device() == device) return copy ? clone(t) : t;
  if (device.is_cuda()) AG_CHECK(cuda::is_available(), "Torch not compiled with CUDA enabled");
  Tensor src = contiguous(detach(t));
  Tensor out = empty(t.sizes(), t.dtype(), device);
  cuda::memcpy_device(out.data_ptr(), out.device(), src.data_ptr(), src.device(), static_cast<size_t>(t.numel() * itemsize(t.dtype())));
  Device from = t.device();
  fw_rule(out, {&t}, [&](const variable_list& tt) { return to_device(tt[0], device); });
  if (is_floating(t.dtype()))
    if (auto node = autograd::make_node("ToCopyBackward0", {&t}, AG_BW { return {to_device(g[0], from)}; }))
      autograd::set_history(node, {&out});
  return out;
}
}  // namespace ampgrad
