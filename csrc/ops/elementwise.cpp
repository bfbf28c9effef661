// The shared elementwise machinery: operand expansion, gradient reduction (sum_to), the device
// check, output layout and the kernel call (run_elementwise / elementwise). The front ends are by
// family: copy.cpp (scalars, casts, copies), unary.cpp, binary.cpp, ternary.cpp.
#include <algorithm>
#include "ops/internal.h"

namespace ampgrad {

bool is_cpu_scalar(const Tensor& t) { return t.dim() == 0 && t.device().is_cpu(); }

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

}  // namespace ampgrad
