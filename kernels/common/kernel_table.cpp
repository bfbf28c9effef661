// The kernel-table queries (Note [Typed kernel tables]) and the elementwise iterator setup shared by every backend.
#include <algorithm>
#include "kernels/kernels.h"

namespace ampgrad {

namespace {
template <typename Fn> bool has(Op op, DeviceType dev) {
  return KernelTable<Fn>::slots[static_cast<int>(op)][static_cast<int>(dev)] != nullptr;
}
}  // namespace

bool has_kernel(Op op, DeviceType dev) {
  switch (op_family(op)) {
#define AG_FAMILY(F) case KernelFamily::F: return has<KernelSig<KernelFamily::F>::type>(op, dev);
    AG_KERNEL_FAMILIES(AG_FAMILY)  // Note [Kernel families]
#undef AG_FAMILY
    default: return false;
  }
}

void throw_no_kernel(Op op, DeviceType dev) {
  AG_THROW(NotImplementedError, "Could not run '", op_name(op), "' with arguments from the '",
           dev == DeviceType::CPU ? "CPU" : "CUDA", "' backend.");
}

void throw_wrong_family(Op op, KernelFamily asked) {
  AG_THROW(RuntimeError, "internal error: op '", op_name(op), "' has kernel family ", static_cast<int>(op_family(op)),
           ", looked up as family ", static_cast<int>(asked));
}

void TensorIter::build(const Tensor* const* ops, int n) {
  nops = n;
  const Shape& sz = ops[0]->sizes();
  numel = ops[0]->numel();
  for (int i = 0; i < nops; ++i) {
    data[i] = static_cast<char*>(ops[i]->data_ptr());
    dtypes[i] = ops[i]->dtype();
  }
  shape.clear();
  strides.clear();
  // Note [Iteration order]: the dims are walked in the output's memory order (outermost first), as
  // torch's TensorIterator reorders them: an output laid out like a transposed input (Note [Output
  // layout]) then has a dense inner loop for both instead of a strided one. A dim moves outward past
  // its neighbour only when the first operand with two nonzero strides says so; ties keep the order.
  SmallVec<int64_t, 32> order;
  for (size_t d = 0; d < sz.size(); ++d)
    if (sz[d] != 1) order.push_back(static_cast<int64_t>(d));
  auto outer_first = [&](int64_t a, int64_t b) {  // dim a must be walked outside dim b
    for (int i = 0; i < nops; ++i) {
      const int64_t sa = ops[i]->strides()[a], sb = ops[i]->strides()[b];
      if (sa == 0 || sb == 0 || sa == sb) continue;
      return sa > sb;
    }
    return false;
  };
  for (size_t k = 1; k < order.size(); ++k)  // stable insertion sort (a handful of dims)
    for (size_t j = k; j > 0 && outer_first(order[j], order[j - 1]); --j) std::swap(order[j], order[j - 1]);
  // Drop size-1 dims, then merge neighbours that are contiguous for every operand.
  for (size_t k = 0; k < order.size(); ++k) {
    const int64_t d = order[k];
    std::array<int64_t, kMaxOps> st{};
    for (int i = 0; i < nops; ++i) st[i] = ops[i]->strides()[d] * itemsize(dtypes[i]);
    if (!shape.empty()) {
      bool merge = true;
      for (int i = 0; i < nops; ++i) merge &= strides.back()[i] == st[i] * sz[d];
      if (merge) { shape.back() *= sz[d]; strides.back() = st; continue; }
    }
    shape.push_back(sz[d]);
    strides.push_back(st);
  }
}

}  // namespace ampgrad
