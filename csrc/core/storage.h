// A storage is bytes on a device plus whoever owns them (our allocator, or a NumPy array for
// zero-copy from_numpy).
#pragma once
#include <cstddef>
#include <memory>
#include "core/device.h"

namespace ampgrad {

struct Storage {
  void* data = nullptr;
  size_t nbytes = 0;
  Device device;
  std::shared_ptr<void> owner;  // releases `data`
  static std::shared_ptr<Storage> allocate(size_t nbytes, Device device);
  static std::shared_ptr<Storage> wrap(void* data, size_t nbytes, Device device, std::shared_ptr<void> owner);
};

// Device allocators: the CPU one lives in storage.cpp, the CUDA one in kernels/cuda (or the stub).
void* cpu_alloc(size_t nbytes);
void cpu_free(void* p);
namespace cuda {
bool is_available();
void* device_alloc(size_t nbytes, int device);
void device_free(void* p, int device);
void memcpy_device(void* dst, Device dst_dev, const void* src, Device src_dev, size_t nbytes);
}  // namespace cuda

}  // namespace ampgrad
