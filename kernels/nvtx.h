// NVTX ranges for the profiler's emit_nvtx (Note [NVTX ranges]): kernels/cuda/runtime.cpp pushes
// real NVTX ranges, kernels/cuda_stub.cpp ignores them. The profiler calls these instead of
// testing for a CUDA build itself.
#pragma once

namespace ampgrad::cuda {
void nvtx_range_push(const char* name);
void nvtx_range_pop();
}  // namespace ampgrad::cuda
