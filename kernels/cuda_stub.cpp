// Built when there is no CUDA compiler: cuda.is_available() is False and device calls raise.
#include "core/storage.h"
#include "kernels/kernels.h"
#include "kernels/nvtx.h"

namespace ampgrad::cuda {

namespace {
[[noreturn]] void no_cuda() { AG_THROW(RuntimeError, "ampgrad not compiled with CUDA enabled"); }
}  // namespace

bool is_available() { return false; }
void nvtx_range_push(const char*) {}
void nvtx_range_pop() {}
void* device_alloc(size_t, int) { no_cuda(); }
void device_free(void*, size_t, int) {}
void memcpy_device(void*, Device, const void*, Device, size_t) { no_cuda(); }

int device_count() { return 0; }
int current_device() { no_cuda(); }
void set_device(int) { no_cuda(); }
void synchronize(int) {}
DeviceProperties get_device_properties(int) { no_cuda(); }
std::pair<int64_t, int64_t> mem_get_info(int) { no_cuda(); }
MemoryStats memory_stats(int) { return {}; }
void reset_peak_memory_stats(int) {}
void empty_cache() {}
namespace { bool g_tf32 = false; }
void set_allow_tf32(bool allow) { g_tf32 = allow; }
bool allow_tf32() { return g_tf32; }
intptr_t event_create(bool) { no_cuda(); }
void event_destroy(intptr_t) {}
void event_record(intptr_t) { no_cuda(); }
void event_synchronize(intptr_t) { no_cuda(); }
bool event_query(intptr_t) { no_cuda(); }
float event_elapsed_ms(intptr_t, intptr_t) { no_cuda(); }
intptr_t current_stream_handle(int) { no_cuda(); }
void stream_synchronize(intptr_t, int) {}
void manual_seed(int, uint64_t) { no_cuda(); }
void manual_seed_all(uint64_t) {}  // no devices to seed
uint64_t initial_seed(int) { no_cuda(); }
std::pair<uint64_t, uint64_t> get_rng_state(int) { no_cuda(); }
void set_rng_state(int, uint64_t, uint64_t) { no_cuda(); }

}  // namespace ampgrad::cuda
