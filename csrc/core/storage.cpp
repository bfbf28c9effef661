// CPU allocation and storage construction. Small blocks (<= 1 MiB) are cached per power-of-two
// size class, so the allocations of a training step are reused instead of going back to malloc.
#include "core/storage.h"
#include <cstdlib>
#include <mutex>
#include <vector>

// Under AddressSanitizer every block is allocated at its exact size and freed at once (no size
// classes, no cache), so an overrun past a tensor's bytes or a use after free is reported instead of
// landing in a recycled block (tools/SANITIZERS.md).
#if defined(__SANITIZE_ADDRESS__)
#define AG_EXACT_CPU_ALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AG_EXACT_CPU_ALLOC 1
#endif
#endif

namespace ampgrad {

std::atomic<AllocHook> g_alloc_hook{nullptr};
void set_alloc_hook(AllocHook hook) { g_alloc_hook.store(hook, std::memory_order_relaxed); }

namespace {
constexpr int kMinShift = 6, kMaxShift = 20;    // 64 B .. 1 MiB
constexpr size_t kMaxCachedBytes = 256u << 20;  // per process
struct CpuCache {
  std::mutex mu;
  std::vector<void*> bins[kMaxShift + 1];
  size_t cached = 0;
};
CpuCache& cache() {
  static CpuCache* c = new CpuCache();  // leaked: storages may die during interpreter teardown
  return *c;
}
int size_class(size_t nbytes) {
  int s = kMinShift;
  while ((size_t(1) << s) < nbytes) ++s;
  return s;
}
void* raw_alloc(size_t nbytes) {
  void* p = std::aligned_alloc(64, (nbytes + 63) / 64 * 64);
  if (!p) AG_THROW(RuntimeError, "[enforce fail] DefaultCPUAllocator: not enough memory: you tried to allocate ", nbytes, " bytes.");
  return p;
}
}  // namespace

void* cpu_alloc(size_t nbytes) {
  if (nbytes == 0) nbytes = 1;
#ifdef AG_EXACT_CPU_ALLOC
  void* p = nullptr;
  if (posix_memalign(&p, 64, nbytes) != 0)
    AG_THROW(RuntimeError, "[enforce fail] DefaultCPUAllocator: not enough memory: you tried to allocate ", nbytes, " bytes.");
  return p;
#endif
  if (nbytes > (size_t(1) << kMaxShift)) return raw_alloc(nbytes);
  int s = size_class(nbytes);
  auto& c = cache();
  {
    std::lock_guard<std::mutex> g(c.mu);
    auto& bin = c.bins[s];
    if (!bin.empty()) {
      void* p = bin.back();
      bin.pop_back();
      c.cached -= size_t(1) << s;
      return p;
    }
  }
  return raw_alloc(size_t(1) << s);
}

void cpu_free(void* p, size_t nbytes) {
  if (!p) return;
#ifdef AG_EXACT_CPU_ALLOC
  std::free(p);
  return;
#endif
  if (nbytes == 0) nbytes = 1;
  if (nbytes > (size_t(1) << kMaxShift)) { std::free(p); return; }
  int s = size_class(nbytes);
  auto& c = cache();
  {
    std::lock_guard<std::mutex> g(c.mu);
    if (c.cached + (size_t(1) << s) <= kMaxCachedBytes) {
      c.bins[s].push_back(p);
      c.cached += size_t(1) << s;
      return;
    }
  }
  std::free(p);
}

size_t cpu_cached_bytes() {
  std::lock_guard<std::mutex> g(cache().mu);
  return cache().cached;
}

void cpu_empty_cache() {
  auto& c = cache();
  std::lock_guard<std::mutex> g(c.mu);
  for (auto& bin : c.bins) {
    for (void* p : bin) std::free(p);
    bin.clear();
  }
  c.cached = 0;
}

void Storage::allocate_into(Storage& s, size_t nbytes, Device device) {
  s.nbytes = nbytes;
  s.device = device;
  if (device.is_cpu()) {
    s.data = cpu_alloc(nbytes);
    s.free_fn = [](void* p, size_t n, int) { cpu_free(p, n); };
  } else {
    // CUDA storages carry a concrete index ("cuda" means the current device), as torch's tensors do.
    if (device.index < 0) s.device.index = static_cast<int8_t>(cuda::current_device());
    s.data = cuda::device_alloc(nbytes, s.device.norm());
    s.free_fn = [](void* p, size_t n, int dev) { cuda::device_free(p, n, dev); };
  }
}

std::shared_ptr<Storage> Storage::allocate(size_t nbytes, Device device) {
  auto s = std::make_shared<Storage>();
  allocate_into(*s, nbytes, device);
  return s;
}

std::shared_ptr<Storage> Storage::wrap(void* data, size_t nbytes, Device device, std::shared_ptr<void> owner) {
  auto s = std::make_shared<Storage>();
  s->data = data; s->nbytes = nbytes; s->device = device; s->owner = std::move(owner);
  return s;
}

}  // namespace ampgrad
