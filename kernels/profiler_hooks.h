// The narrow interface between the kernel table and the autograd profiler (Note [Profiled
// kernels]): kernels/ and core/ see only these declarations; autograd/profiler.cpp implements them.
#pragma once
#include <atomic>
#include <cstdint>
#include <utility>
#include <vector>
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
  explicit KernelScope(Op op) : handle(open_kernel(op)) {}
  ~KernelScope() { if (handle >= 0) close_kernel(handle); }
  KernelScope(const KernelScope&) = delete;
  KernelScope& operator=(const KernelScope&) = delete;
};

}  // namespace ampgrad::profiler_hooks
