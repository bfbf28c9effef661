// CPU allocation (64-byte aligned) and storage construction.
#include "core/storage.h"
#include <cstdlib>
#include <new>

namespace ampgrad {

void* cpu_alloc(size_t nbytes) {
  if (nbytes == 0) nbytes = 1;
  void* p = std::aligned_alloc(64, (nbytes + 63) / 64 * 64);
  if (!p) AG_THROW(RuntimeError, "[enforce fail] DefaultCPUAllocator: not enough memory: you tried to allocate ", nbytes, " bytes.");
  return p;
}
void cpu_free(void* p) { std::free(p); }

std::shared_ptr<Storage> Storage::allocate(size_t nbytes, Device device) {
  auto s = std::make_shared<Storage>();
  s->nbytes = nbytes;
  s->device = device;
  if (device.is_cpu()) {
    s->data = cpu_alloc(nbytes);
    s->owner = std::shared_ptr<void>(s->data, cpu_free);
  } else {
    int idx = device.norm();
    s->data = cuda::device_alloc(nbytes, idx);
    s->owner = std::shared_ptr<void>(s->data, [idx](void* p) { cuda::device_free(p, idx); });
  }
  return s;
}

std::shared_ptr<Storage> Storage::wrap(void* data, size_t nbytes, Device device, std::shared_ptr<void> owner) {
  auto s = std::make_shared<Storage>();
  s->data = data; s->nbytes = nbytes; s->device = device; s->owner = std::move(owner);
  return s;
}

}  // namespace ampgrad
