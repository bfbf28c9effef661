// The CUDA caching allocator: cudaMalloc'd segments split into blocks, freed blocks kept in
// size-ordered pools and reused, neighbours merged on free. Statistics follow torch.cuda's
// memory_allocated / memory_reserved (rounded block sizes). Compile-checked only: not yet run on a GPU.
#include <map>
#include <set>
#include <unordered_map>
#include <mutex>
#include <cstdio>
#include "kernels/cuda/runtime.h"

namespace ampgrad::cuda {

namespace {
// Note [Allocator sizes]: requests round up to 512 B. Requests up to 1 MiB come from 2 MiB
// segments (the small pool); bigger ones from segments of 20 MiB (requests < 10 MiB) or the request
// rounded up to 2 MiB. A free block is split when the rest is worth keeping (>= 512 B small,
// > 1 MiB large). Oversized large blocks are not handed out for small requests (> 2x and > 20 MiB).
constexpr size_t kRound = 512, kSmallSize = 1 << 20, kSmallBuffer = 2 << 20, kLargeBuffer = 20 << 20,
                 kMinLargeAlloc = 10 << 20, kRoundLarge = 2 << 20;

size_t round_size(size_t n) { return n < kRound ? kRound : (n + kRound - 1) / kRound * kRound; }
size_t segment_size(size_t n) {
  if (n <= kSmallSize) return kSmallBuffer;
  if (n < kMinLargeAlloc) return kLargeBuffer;
  return (n + kRoundLarge - 1) / kRoundLarge * kRoundLarge;
}

struct Block {
  size_t size;
  char* ptr;
  bool small;
  bool allocated = false;
  Block* prev = nullptr;  // neighbours inside one segment
  Block* next = nullptr;
  Block(size_t s, char* p, bool sm) : size(s), ptr(p), small(sm) {}
};
struct BlockLess {
  bool operator()(const Block* a, const Block* b) const {
    return a->size != b->size ? a->size < b->size : a->ptr < b->ptr;
  }
};

struct DeviceCache {
  std::set<Block*, BlockLess> small_pool, large_pool;
  std::unordered_map<void*, Block*> live;  // allocated blocks by pointer
  MemoryStats stats;
};

std::string format_size(int64_t bytes) {
  char buf[64];
  double b = static_cast<double>(bytes);
  if (bytes < 1024) std::snprintf(buf, sizeof buf, "%lld bytes", static_cast<long long>(bytes));
  else if (b < 1048576.0) std::snprintf(buf, sizeof buf, "%.2f KiB", b / 1024.0);
  else if (b < 1073741824.0) std::snprintf(buf, sizeof buf, "%.2f MiB", b / 1048576.0);
  else std::snprintf(buf, sizeof buf, "%.2f GiB", b / 1073741824.0);
  return buf;
}

class CachingAllocator {
 public:
  void* malloc(size_t nbytes, int device) {
    std::lock_guard<std::mutex> g(mu_);
    DeviceCache& dc = cache(device);
    const size_t size = round_size(nbytes);
    const bool small = size <= kSmallSize;
    auto& pool = small ? dc.small_pool : dc.large_pool;
    Block* b = take_from_pool(pool, size, small);
    if (!b) b = new_segment(dc, device, size, small);
    // Split off the tail when it is worth keeping.
    const size_t rest = b->size - size;
    if (small ? rest >= kRound : rest > kSmallSize) {
      Block* tail = new Block(rest, b->ptr + size, small);
      tail->prev = b;
      tail->next = b->next;
      if (b->next) b->next->prev = tail;
      b->next = tail;
      b->size = size;
      pool.insert(tail);
    }
    b->allocated = true;
    dc.live.emplace(b->ptr, b);
    dc.stats.allocated += static_cast<int64_t>(b->size);
    dc.stats.max_allocated = std::max(dc.stats.max_allocated, dc.stats.allocated);
    ++dc.stats.num_allocs;
    return b->ptr;
  }

  void free(void* p, int device) {
    if (!p) return;
    std::lock_guard<std::mutex> g(mu_);
    DeviceCache& dc = cache(device);
    auto it = dc.live.find(p);
    if (it == dc.live.end()) return;  // not ours (never happens): leak rather than crash
    Block* b = it->second;
    dc.live.erase(it);
    b->allocated = false;
    dc.stats.allocated -= static_cast<int64_t>(b->size);
    ++dc.stats.num_frees;
    auto& pool = b->small ? dc.small_pool : dc.large_pool;
    // Note [Current stream]: reuse is safe at once because all work is ordered on one stream.
    merge(pool, b, b->prev);
    merge(pool, b, b->next);
    pool.insert(b);
  }

  void empty_cache() {
    std::lock_guard<std::mutex> g(mu_);
    for (size_t d = 0; d < caches_.size(); ++d) release_cached(static_cast<int>(d));
  }

  MemoryStats stats(int device) {
    std::lock_guard<std::mutex> g(mu_);
    return cache(device).stats;
  }
  void reset_peak(int device) {
    std::lock_guard<std::mutex> g(mu_);
    MemoryStats& s = cache(device).stats;
    s.max_allocated = s.allocated;
    s.max_reserved = s.reserved;
  }

 private:
  DeviceCache& cache(int device) {
    if (device >= static_cast<int>(caches_.size())) caches_.resize(device + 1);
    return caches_[device];
  }

  Block* take_from_pool(std::set<Block*, BlockLess>& pool, size_t size, bool small) {
    Block key(size, nullptr, small);
    auto it = pool.lower_bound(&key);
    if (it == pool.end()) return nullptr;
    Block* b = *it;
    // A huge cached block is not split for a much smaller large request (fragmentation).
    if (!small && b->size > 2 * size && b->size > kLargeBuffer && size < kLargeBuffer) return nullptr;
    pool.erase(it);
    return b;
  }

  void merge(std::set<Block*, BlockLess>& pool, Block* b, Block* nb) {
    if (!nb || nb->allocated) return;
    pool.erase(nb);
    if (nb == b->prev) {
      b->ptr = nb->ptr;
      b->prev = nb->prev;
      if (b->prev) b->prev->next = b;
    } else {
      b->next = nb->next;
      if (b->next) b->next->prev = b;
    }
    b->size += nb->size;
    delete nb;
  }

  Block* new_segment(DeviceCache& dc, int device, size_t size, bool small) {
    const size_t seg = segment_size(size);
    DeviceGuard g(device);
    void* p = nullptr;
    cudaError_t err = cudaMalloc(&p, seg);
    if (err == cudaErrorMemoryAllocation) {
      // Note [Allocator OOM]: free every cached segment once and retry before giving up.
      (void)cudaGetLastError();
      ++dc.stats.num_alloc_retries;
      release_cached(device);
      err = cudaMalloc(&p, seg);
    }
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      ++dc.stats.num_ooms;
      size_t free_b = 0, total_b = 0;
      (void)cudaMemGetInfo(&free_b, &total_b);
      (void)cudaGetLastError();
      throw OutOfMemoryError(detail::str_cat(
          "CUDA out of memory. Tried to allocate ", format_size(static_cast<int64_t>(size)), ". GPU ", device,
          " has a total capacity of ", format_size(static_cast<int64_t>(total_b)), " of which ",
          format_size(static_cast<int64_t>(free_b)), " is free. Of the allocated memory ",
          format_size(dc.stats.allocated), " is allocated by ampgrad, and ",
          format_size(dc.stats.reserved - dc.stats.allocated), " is reserved by ampgrad but unallocated."));
    }
    AG_CUDA_CHECK(err);
    dc.stats.reserved += static_cast<int64_t>(seg);
    dc.stats.max_reserved = std::max(dc.stats.max_reserved, dc.stats.reserved);
    return new Block(seg, static_cast<char*>(p), small);
  }

  // Gives every free, unsplit segment of `device` back to the driver. Caller holds mu_.
  void release_cached(int device) {
    DeviceCache& dc = cache(device);
    bool synced = false;
    for (auto* pool : {&dc.small_pool, &dc.large_pool}) {
      for (auto it = pool->begin(); it != pool->end();) {
        Block* b = *it;
        if (b->prev || b->next) { ++it; continue; }
        if (!synced) {  // kernels may still read blocks freed on the host side (Note [Current stream])
          DeviceGuard g(device);
          AG_CUDA_CHECK(cudaDeviceSynchronize());
          synced = true;
        }
        DeviceGuard g(device);
        AG_CUDA_CHECK(cudaFree(b->ptr));
        dc.stats.reserved -= static_cast<int64_t>(b->size);
        it = pool->erase(it);
        delete b;
      }
    }
  }

  std::mutex mu_;
  std::vector<DeviceCache> caches_;
};

CachingAllocator& allocator() {
  static CachingAllocator* a = new CachingAllocator();  // leaked: storages may die at interpreter teardown
  return *a;
}
}  // namespace

void* device_alloc(size_t nbytes, int device) {
  AG_CHECK(is_available(), "Torch not compiled with CUDA enabled");
  return allocator().malloc(nbytes, device);
}
void device_free(void* p, size_t, int device) {
  // Storage destructors call this, so it must not throw; a failure leaks the block.
  try { allocator().free(p, device); } catch (...) {}
}
MemoryStats memory_stats(int device) { return allocator().stats(device < 0 ? current_device() : device); }
void reset_peak_memory_stats(int device) { allocator().reset_peak(device < 0 ? current_device() : device); }
void empty_cache() {
  if (is_available()) allocator().empty_cache();
}

}  // namespace ampgrad::cuda
