// The kernel table and the elementwise iterator setup shared by every backend.
#include <algorithm>
#include "kernels/kernels.h"
#include "kernels/profiler_hooks.h"

namespace ampgrad {

namespace {
void*& slot(Op op, DeviceType dev) {
  static void* table[kNumOps][kNumDeviceTypes] = {};
  return table[static_cast<int>(op)][static_cast<int>(dev)];
}
}  // namespace

void register_kernel(Op op, DeviceType dev, void* fn) { slot(op, dev) = fn; }
void* lookup_kernel(Op op, DeviceType dev) {
  void* fn = slot(op, dev);
  if (!fn) AG_THROW(NotImplementedError, "Could not run '", op_name(op), "' with arguments from the '",
                    dev == DeviceType::CPU ? "CPU" : "CUDA", "' backend.");
  return fn;
}

bool has_kernel(Op op, DeviceType dev) { return slot(op, dev) != nullptr; }

void* lookup_kernel(Op op, DeviceType dev, void* profiled) {
  void* fn = lookup_kernel(op, dev);
  if (__builtin_expect(profiler_hooks::enabled(), 0)) {
    profiler_hooks::push_kernel(op, fn);
    return profiled;
  }
  return fn;
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
  // Drop size-1 dims, then merge neighbours that are contiguous for every operand.
  for (size_t d = 0; d < sz.size(); ++d) {
    if (sz[d] == 1) continue;
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
