// The narrow interface between the kernel table and the autograd profiler (Note [Profiled
// kernels]): kernels/ and core/ see only these declarations; autograd/profiler.cpp implements them.
#pragma once
#include <atomic>
#include <cstdint>
#include <utility>
#include <vector>
#include "core/dtype.h"
#include "ops/op_list.h"

namespace ampgrad::profiler_hooks {

// Set while a profiler session records (the profiler's start() / stop()); one relaxed load.
extern std::atomic<bool> g_enabled;
inline bool enabled() { return g_enabled.load(std::memory_order_relaxed); }

using Shapes = std::vector<std::vector<int64_t>>;

// Note [Profiled kernels]: while enabled, kernel<F>(op, dev) (kernels/kernels.h) pushes the kernel on
// its family's typed stack and returns a trampoline that pops it when called and records the event
// below. Callers call the kernel right after the lookup; an argument expression may itself run a
// kernel, and that nested lookup + call pops its own entry first (a stack, not a slot).
// The kernel's event ("aten::<op>"): a handle for close_kernel, or -1 when nothing is recorded.
int64_t open_kernel(Op op);
void close_kernel(int64_t handle);
// The session wants input shapes (record_shapes, or with_flops: FLOPs are estimated from them).
bool wants_shapes();
void set_shapes(int64_t handle, Op op, Shapes&& shapes);

struct KernelScope {
  int64_t handle;
  explicit KernelScope(Op op) : handle(enabled() ? open_kernel(op) : -1) {}
  ~KernelScope() { if (handle >= 0) close_kernel(handle); }
  KernelScope(const KernelScope&) = delete;
  KernelScope& operator=(const KernelScope&) = delete;
};

// Note [Watched kernels]: the AMP inspector's kernel watch (python/ampgrad/amp/debug.py). While it is on,
// kernel<F>() routes calls through the same trampoline as the profiler, which hands the call's tensor
// operands (const Tensor& / TensorIter operands 1.. as inputs, Tensor& / TensorIter operand 0 as outputs)
// to watch_before / watch_after (csrc/amp/inspect.cpp): per-op counts by dtype, and the first forward
// kernel whose inputs were all finite and whose output is not. Kernels taking operand arrays (linalg,
// scan-index, CTC) are counted but not scanned.
extern std::atomic<bool> g_watch;
inline bool watching() { return g_watch.load(std::memory_order_relaxed); }

struct WatchView {  // one operand: element 0's address, dtype, shape and strides in bytes
  const char* data;
  ScalarType dtype;
  std::vector<int64_t> shape, strides;
};
struct WatchOperands {
  std::vector<WatchView> in, out;
};
// A token for watch_after, or -1 when this call is not watched (nested in a watched kernel, or in backward).
// cpu: the operands are in host memory and may be scanned (CUDA kernels are only counted).
int64_t watch_before(Op op, const WatchOperands& ops, bool cpu);
// ok: the kernel returned (false: it threw; nothing is scanned).
void watch_after(int64_t token, Op op, const WatchOperands& ops, bool ok);

}  // namespace ampgrad::profiler_hooks
