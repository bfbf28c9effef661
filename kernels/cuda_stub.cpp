// Built when there is no CUDA compiler: cuda.is_available() is False and device calls raise.
#include "core/storage.h"

namespace ampgrad::cuda {

bool is_available() { return false; }
void* device_alloc(size_t, int) { AG_THROW(RuntimeError, "ampgrad not compiled with CUDA enabled"); }
void device_free(void*, size_t, int) {}
void memcpy_device(void*, Device, const void*, Device, size_t) { AG_THROW(RuntimeError, "ampgrad not compiled with CUDA enabled"); }

}  // namespace ampgrad::cuda
