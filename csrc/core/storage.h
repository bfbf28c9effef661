// A storage is bytes on a device plus whoever owns them: the device allocator (the common case,
// no extra allocation) or an external owner such as a NumPy array (zero-copy from_numpy).
#pragma once
#include <atomic>
#include <cstddef>
#include <memory>
#include "core/device.h"

namespace ampgrad {

struct Storage {
  void* data = nullptr;
  size_t nbytes = 0;
  Device device;
  void (*free_fn)(void* p, size_t nbytes, int device) = nullptr;
  std::shared_ptr<void> owner;  // external owner, when free_fn is null
  int shm_fd = -1;        // Note [Shared memory]: >= 0 when the bytes are a MAP_SHARED mapping of this fd
  bool exported = false;  // a NumPy array or DLPack capsule holds the address of the bytes
  Storage() = default;
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage() { if (free_fn) free_fn(data, nbytes, device.norm()); }
  static std::shared_ptr<Storage> allocate(size_t nbytes, Device device);
  static void allocate_into(Storage& s, size_t nbytes, Device device);  // s: freshly constructed
  static std::shared_ptr<Storage> wrap(void* data, size_t nbytes, Device device, std::shared_ptr<void> owner);
};

// Note [Shared memory]: torch.multiprocessing's "file_descriptor" strategy. share_memory moves a CPU
// storage's bytes into a memfd mapped MAP_SHARED (a no-op when they are there already), in place, so
// every view of the storage sees the move; the fd is what a pickler hands to another process, which
// maps the same pages with storage_from_shm_fd. Storages are found again by the fd's (dev, inode), so
// a storage received twice, or sent back to the process that shared it, is one storage. The old
// bytes are freed unless a NumPy array or DLPack capsule holds their address (Storage::exported):
// those keep their own (now unshared) bytes alive with the storage. Linux only (memfd_create).
void share_memory(const std::shared_ptr<Storage>& s);
std::shared_ptr<Storage> storage_from_shm_fd(int fd, size_t nbytes);  // takes ownership of fd

// CPU allocation: 64-byte aligned, small blocks recycled through size-class free lists.
void* cpu_alloc(size_t nbytes);
void cpu_free(void* p, size_t nbytes);
size_t cpu_cached_bytes();
void cpu_empty_cache();

// Note [Allocation hook]: a new tensor's storage is reported to the hook, when one is set (the
// autograd profiler sets it for a session, for profile_memory); core knows no profiler. Unset it
// costs one relaxed load, as the profiler's enabled() check did.
using AllocHook = void (*)(size_t nbytes);
extern std::atomic<AllocHook> g_alloc_hook;
inline AllocHook alloc_hook() { return g_alloc_hook.load(std::memory_order_relaxed); }
void set_alloc_hook(AllocHook hook);  // nullptr: none

// Device allocators: the CUDA one lives in kernels/cuda (or the stub).
namespace cuda {
bool is_available();
int current_device();
void* device_alloc(size_t nbytes, int device);
void device_free(void* p, size_t nbytes, int device);
void memcpy_device(void* dst, Device dst_dev, const void* src, Device src_dev, size_t nbytes);
}  // namespace cuda

}  // namespace ampgrad
