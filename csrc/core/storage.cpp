// CPU allocation and storage construction. Blocks are cached by size class, so the allocations of a
// training step are reused instead of going back to malloc: one class per power of two up to 1 MiB,
// eight per octave above it (Note [Large CPU blocks]).
#include "core/storage.h"
#include <cstdlib>
#include <mutex>
#include <unordered_map>
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
// Note [Large CPU blocks]: a block above 1 MiB is cached too, in classes of 1/8 of its power of two
// (at most 12.5% unused). Without it every activation of a training step (a 1024 x 1024 float32
// tensor is 4 MiB) went back to glibc, which returned it to the kernel (munmap, or a trimmed heap)
// and took it again on the next allocation: on a host with transparent huge pages each of those
// page faults zeroes a 2 MiB page. The GPT benchmark's bf16 step took ~7,000 page faults and 9-18 ms
// of system time per ~90 ms step (torch: ~500 faults); with the cache, ~70. Blocks up to
// kMaxCachedBlock are kept, kMaxCachedBytes in all; the rest go back to malloc at once.
constexpr int kMinShift = 6, kMaxShift = 20;      // 64 B .. 1 MiB: power-of-two classes
constexpr size_t kMaxCachedBytes = 256u << 20;   // per process, small and large blocks together
constexpr size_t kMaxCachedBlock = 64u << 20;    // larger blocks are never cached
struct CpuCache {
  std::mutex mu;
  std::vector<void*> bins[kMaxShift + 1];
  std::unordered_map<size_t, std::vector<void*>> large;  // by class size
  size_t cached = 0;
};
CpuCache& cache() {
  static CpuCache* c = new CpuCache();  // leaked: storages may die during interpreter teardown
  return *c;
}
// The bytes a block of nbytes occupies: its class size.
size_t class_bytes(size_t nbytes) {
  if (nbytes <= (size_t(1) << kMinShift)) return size_t(1) << kMinShift;
  int s = kMinShift;
  while ((size_t(1) << s) < nbytes) ++s;
  if (s <= kMaxShift) return size_t(1) << s;
  const size_t step = size_t(1) << (s - 4);  // (2^(s-1), 2^s] in 8 steps of 2^(s-4)
  return (nbytes + step - 1) / step * step;
}
std::vector<void*>& bin_of(CpuCache& c, size_t cls) {  // cls: a class size from class_bytes
  return cls <= (size_t(1) << kMaxShift) ? c.bins[__builtin_ctzll(cls)] : c.large[cls];
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
  if (nbytes > kMaxCachedBlock) return raw_alloc(nbytes);
  const size_t cls = class_bytes(nbytes);
  auto& c = cache();
  {
    std::lock_guard<std::mutex> g(c.mu);
    auto& bin = bin_of(c, cls);
    if (!bin.empty()) {
      void* p = bin.back();
      bin.pop_back();
      c.cached -= cls;
      return p;
    }
  }
  return raw_alloc(cls);
}

void cpu_free(void* p, size_t nbytes) {
  if (!p) return;
#ifdef AG_EXACT_CPU_ALLOC
  std::free(p);
  return;
#endif
  if (nbytes == 0) nbytes = 1;
  if (nbytes > kMaxCachedBlock) { std::free(p); return; }
  const size_t cls = class_bytes(nbytes);
  auto& c = cache();
  {
    std::lock_guard<std::mutex> g(c.mu);
    if (c.cached + cls <= kMaxCachedBytes) {
      bin_of(c, cls).push_back(p);
      c.cached += cls;
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
  for (auto& kv : c.large)
    for (void* p : kv.second) std::free(p);
  c.large.clear();
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

// ---- Note [Shared memory]
#if defined(__linux__)
#include <fcntl.h>
#include <map>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>
#endif

namespace ampgrad {

#if defined(__linux__)
namespace {
// The mapping (and the fd it maps) of a shared storage, plus the bytes it replaced when something
// outside the engine still points at them.
struct ShmRegion {
  void* addr = nullptr;
  size_t len = 0;
  int fd = -1;
  void* old_data = nullptr;
  size_t old_nbytes = 0;
  int old_device = 0;
  void (*old_free)(void*, size_t, int) = nullptr;
  std::shared_ptr<void> old_owner;
  ~ShmRegion() {
    if (addr && addr != MAP_FAILED) munmap(addr, len);
    if (fd >= 0) close(fd);
    if (old_free) old_free(old_data, old_nbytes, old_device);
  }
};
struct ShmRegistry {
  std::mutex mu;
  std::map<std::pair<uint64_t, uint64_t>, std::weak_ptr<Storage>> by_inode;
};
ShmRegistry& registry() {
  static ShmRegistry* r = new ShmRegistry();  // leaked, as the CPU cache: storages may die at exit
  return *r;
}
struct stat stat_of(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0) AG_THROW(RuntimeError, "shared memory: fstat of fd ", fd, " failed: ", std::strerror(errno));
  return st;
}
std::pair<uint64_t, uint64_t> inode_of(const struct stat& st) {
  return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
}
void remember(const std::pair<uint64_t, uint64_t>& key, const std::shared_ptr<Storage>& s) {
  auto& r = registry();  // caller holds r.mu
  for (auto it = r.by_inode.begin(); it != r.by_inode.end();) it = it->second.expired() ? r.by_inode.erase(it) : std::next(it);
  r.by_inode[key] = s;
}
void* map_fd(int fd, size_t len) {
  void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) AG_THROW(RuntimeError, "shared memory: mmap of ", len, " bytes failed: ", std::strerror(errno));
  return p;
}
}  // namespace

void share_memory(const std::shared_ptr<Storage>& s) {
  if (!s->device.is_cpu()) return;  // torch: a no-op for CUDA tensors
  auto& r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  if (s->shm_fd >= 0) return;
  auto region = std::make_shared<ShmRegion>();
  region->len = s->nbytes ? s->nbytes : 1;
  region->fd = static_cast<int>(memfd_create("ampgrad_shm", MFD_CLOEXEC));
  if (region->fd < 0) AG_THROW(RuntimeError, "unable to create a shared memory segment: memfd_create: ", std::strerror(errno));
  if (ftruncate(region->fd, static_cast<off_t>(region->len)) != 0)
    AG_THROW(RuntimeError, "unable to resize a shared memory segment to ", region->len, " bytes: ", std::strerror(errno));
  region->addr = map_fd(region->fd, region->len);
  if (s->nbytes) std::memcpy(region->addr, s->data, s->nbytes);
  const auto key = inode_of(stat_of(region->fd));
  // Every failure is above: from here the storage changes and nothing throws.
  if (s->exported) {
    region->old_data = s->data; region->old_nbytes = s->nbytes; region->old_device = s->device.norm();
    region->old_free = s->free_fn; region->old_owner = std::move(s->owner);
  } else if (s->free_fn) {
    s->free_fn(s->data, s->nbytes, s->device.norm());
  }
  s->owner.reset();
  s->free_fn = nullptr;
  s->data = region->addr;
  s->shm_fd = region->fd;
  s->exported = false;
  s->owner = std::move(region);
  remember(key, s);
}

std::shared_ptr<Storage> storage_from_shm_fd(int fd, size_t nbytes) {
  auto region = std::make_shared<ShmRegion>();
  region->fd = fd;  // owned from here: closed with the region
  const struct stat st = stat_of(fd);
  auto key = inode_of(st);
  if (static_cast<size_t>(st.st_size) < (nbytes ? nbytes : 1))
    AG_THROW(RuntimeError, "shared memory: the segment holds ", st.st_size, " bytes, the storage needs ", nbytes);
  auto& r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  auto it = r.by_inode.find(key);
  if (it != r.by_inode.end()) {
    if (auto s = it->second.lock()) {
      if (s->nbytes == nbytes) return s;  // region's destructor closes the duplicate fd
    }
  }
  region->len = nbytes ? nbytes : 1;
  region->addr = map_fd(fd, region->len);
  auto s = std::make_shared<Storage>();
  s->data = region->addr; s->nbytes = nbytes; s->device = Device(); s->shm_fd = fd;
  s->owner = std::move(region);
  remember(key, s);
  return s;
}
#else
void share_memory(const std::shared_ptr<Storage>& s) {
  if (!s->device.is_cpu()) return;
  AG_THROW(RuntimeError, "share_memory_: shared memory needs Linux (memfd_create) in this build");
}
std::shared_ptr<Storage> storage_from_shm_fd(int, size_t) {
  AG_THROW(RuntimeError, "shared memory needs Linux (memfd_create) in this build");
}
#endif

}  // namespace ampgrad
