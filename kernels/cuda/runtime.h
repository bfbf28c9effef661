// Internal to kernels/cuda: checked CUDA / cuBLAS calls, the current device and stream, the
// per-device cuBLAS and cuBLASLt handles and the Lt workspace. Compile-checked only so far: no GPU was available when it was written.
#pragma once
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <cublasLt.h>
#include "kernels/kernels.h"

namespace ampgrad::cuda {

// Note [CUDA errors]: every runtime / cuBLAS call goes through AG_CUDA_CHECK / AG_CUBLAS_CHECK,
// which throw RuntimeError("CUDA error: <string> (<call> at file:line)"); library code never aborts.
[[noreturn]] void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line);
[[noreturn]] void throw_cublas_error(cublasStatus_t st, const char* call, const char* file, int line);
#define AG_CUDA_CHECK(EXPR)                                                                  \
  do {                                                                                       \
    cudaError_t ag_err_ = (EXPR);                                                            \
    if (ag_err_ != cudaSuccess) ::ampgrad::cuda::throw_cuda_error(ag_err_, #EXPR, __FILE__, __LINE__); \
  } while (0)
#define AG_CUBLAS_CHECK(EXPR)                                                                \
  do {                                                                                       \
    cublasStatus_t ag_st_ = (EXPR);                                                          \
    if (ag_st_ != CUBLAS_STATUS_SUCCESS) ::ampgrad::cuda::throw_cublas_error(ag_st_, #EXPR, __FILE__, __LINE__); \
  } while (0)
// After a kernel launch: launch-configuration errors surface here (execution errors surface at the
// next synchronizing call, as in torch; CUDA_LAUNCH_BLOCKING=1 makes them synchronous).
#define AG_CUDA_KERNEL_LAUNCH_CHECK() AG_CUDA_CHECK(cudaGetLastError())

// Note [Current stream]: all of ampgrad's work on a device is ordered on one stream, the device's
// current stream (the legacy default stream for now). The caching allocator relies on this: a
// freed block may be handed out again at once because any later use is ordered after the free.
cudaStream_t current_stream(int device);

// Makes `device` current for a scope and restores the previous one (no-op when it already is).
struct DeviceGuard {
  int prev = -1;
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
};

const cudaDeviceProp& device_prop(int device);  // cached per device
cublasHandle_t cublas_handle(int device);       // one per device, bound to its current stream
cublasLtHandle_t cublaslt_handle(int device);   // one per device (Lt calls take the stream per call)
// Note [cuBLASLt workspace]: one workspace per device, used on its current stream (Note [Current
// stream] orders every use). cudaMalloc'd on first use outside the caching allocator (so it never
// shows in memory_allocated()) and kept: AMPGRAD_CUBLASLT_WORKSPACE_SIZE KiB, else 32 MiB on sm_90+
// and 4 MiB before. {nullptr, 0} when that allocation fails: Lt then picks algorithms needing none.
std::pair<void*, size_t> cublaslt_workspace(int device);

}  // namespace ampgrad::cuda
