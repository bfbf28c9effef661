// CUDA runtime glue: availability, device queries and selection, host<->device copies, the
// current stream, events, the per-device cuBLAS handle. Every call is checked (Note [CUDA errors]).
// Compile-checked only so far: written without a GPU, not yet run on one.
#include "kernels/cuda/runtime.h"
#include "kernels/nvtx.h"
#include <nvtx3/nvToolsExt.h>  // header-only NVTX v3, shipped with the CUDA toolkit
#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

namespace ampgrad::cuda {

void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  (void)cudaGetLastError();  // clear a sticky-less error so later calls do not see it again
  AG_THROW(RuntimeError, "CUDA error: ", cudaGetErrorString(err), " (", cudaGetErrorName(err), " from ", call, " at ",
           file, ":", line, ")");
}

void throw_cublas_error(cublasStatus_t st, const char* call, const char* file, int line) {
  AG_THROW(RuntimeError, "CUDA error: ", cublasGetStatusString(st), " (", cublasGetStatusName(st), " from ", call,
           " at ", file, ":", line, ")");
}

namespace {
// Device count, asked once: no driver or no device (cudaGetDeviceCount fails) means 0 devices.
int raw_device_count() {
  static const int n = [] {
    int c = 0;
    cudaError_t err = cudaGetDeviceCount(&c);
    if (err != cudaSuccess) { (void)cudaGetLastError(); return 0; }
    return c;
  }();
  return n;
}

int check_index(int device) {
  int n = raw_device_count();
  if (device < 0) device = current_device();
  AG_CHECK(n > 0, "Found no NVIDIA driver on your system or no CUDA device is available.");
  AG_CHECK(device < n, "CUDA error: invalid device ordinal (device ", device, ", ", n, " device", n == 1 ? "" : "s", ")");
  return device;
}
}  // namespace

bool is_available() { return raw_device_count() > 0; }
// Note [NVTX ranges] (kernels/nvtx.h).
void nvtx_range_push(const char* name) { nvtxRangePushA(name); }
void nvtx_range_pop() { nvtxRangePop(); }
int device_count() { return raw_device_count(); }

int current_device() {
  AG_CHECK(raw_device_count() > 0, "Found no NVIDIA driver on your system or no CUDA device is available.");
  int d = 0;
  AG_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

void set_device(int device) {
  if (device < 0) return;  // torch.cuda.set_device(-1) is a no-op
  device = check_index(device);
  AG_CUDA_CHECK(cudaSetDevice(device));
}

DeviceGuard::DeviceGuard(int device) {
  int cur = 0;
  AG_CUDA_CHECK(cudaGetDevice(&cur));
  if (cur != device) { AG_CUDA_CHECK(cudaSetDevice(device)); prev = cur; }
}
DeviceGuard::~DeviceGuard() {
  if (prev >= 0) (void)cudaSetDevice(prev);  // a destructor must not throw
}

void synchronize(int device) {
  device = check_index(device);
  DeviceGuard g(device);
  AG_CUDA_CHECK(cudaDeviceSynchronize());
}

const cudaDeviceProp& device_prop(int device) {
  device = check_index(device);
  static std::mutex mu;
  static std::vector<std::unique_ptr<cudaDeviceProp>>* props = new std::vector<std::unique_ptr<cudaDeviceProp>>();
  std::lock_guard<std::mutex> g(mu);
  if (props->empty()) props->resize(raw_device_count());
  auto& p = (*props)[device];
  if (!p) {
    auto q = std::make_unique<cudaDeviceProp>();
    AG_CUDA_CHECK(cudaGetDeviceProperties(q.get(), device));
    p = std::move(q);
  }
  return *p;
}

DeviceProperties get_device_properties(int device) {
  const cudaDeviceProp& p = device_prop(device);
  DeviceProperties r;
  r.name = p.name;
  r.major = p.major;
  r.minor = p.minor;
  r.multi_processor_count = p.multiProcessorCount;
  r.warp_size = p.warpSize;
  r.total_memory = static_cast<int64_t>(p.totalGlobalMem);
  r.l2_cache_size = p.l2CacheSize;
  r.shared_memory_per_block_optin = static_cast<int64_t>(p.sharedMemPerBlockOptin);
  return r;
}

std::pair<int64_t, int64_t> mem_get_info(int device) {
  device = check_index(device);
  DeviceGuard g(device);
  size_t free_b = 0, total_b = 0;
  AG_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  return {static_cast<int64_t>(free_b), static_cast<int64_t>(total_b)};
}

// Note [Current stream]: the legacy default stream until ampgrad grows stream objects.
cudaStream_t current_stream(int) { return nullptr; }
intptr_t current_stream_handle(int device) { return reinterpret_cast<intptr_t>(current_stream(check_index(device))); }
void stream_synchronize(intptr_t stream, int device) {
  DeviceGuard g(check_index(device));
  AG_CUDA_CHECK(cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(stream)));
}

// ---- copies between host and device (contiguous bytes; the front end made both sides dense)
void memcpy_device(void* dst, Device dst_dev, const void* src, Device src_dev, size_t nbytes) {
  if (nbytes == 0) return;
  if (dst_dev.is_cuda() && src_dev.is_cuda()) {
    int d = check_index(dst_dev.norm()), s = check_index(src_dev.norm());
    DeviceGuard g(s);
    if (d == s) AG_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToDevice, current_stream(s)));
    else AG_CUDA_CHECK(cudaMemcpyPeerAsync(dst, d, src, s, nbytes, current_stream(s)));
    return;
  }
  if (dst_dev.is_cuda()) {  // host -> device: pageable source, so the copy is staged and returns early
    int d = check_index(dst_dev.norm());
    DeviceGuard g(d);
    AG_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyHostToDevice, current_stream(d)));
    // The host buffer may be freed right after we return: wait until the driver has staged it.
    AG_CUDA_CHECK(cudaStreamSynchronize(current_stream(d)));
    return;
  }
  if (src_dev.is_cuda()) {  // device -> host: the host reads the bytes next, so wait for them
    int s = check_index(src_dev.norm());
    DeviceGuard g(s);
    AG_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToHost, current_stream(s)));
    AG_CUDA_CHECK(cudaStreamSynchronize(current_stream(s)));
    return;
  }
  std::memcpy(dst, src, nbytes);
}

// ---- events
intptr_t event_create(bool enable_timing) {
  check_index(-1);
  cudaEvent_t ev = nullptr;
  AG_CUDA_CHECK(cudaEventCreateWithFlags(&ev, enable_timing ? cudaEventDefault : cudaEventDisableTiming));
  return reinterpret_cast<intptr_t>(ev);
}
void event_destroy(intptr_t ev) {
  if (ev) (void)cudaEventDestroy(reinterpret_cast<cudaEvent_t>(ev));  // called from __del__: never throws
}
void event_record(intptr_t ev) { AG_CUDA_CHECK(cudaEventRecord(reinterpret_cast<cudaEvent_t>(ev), current_stream(current_device()))); }
void event_synchronize(intptr_t ev) { AG_CUDA_CHECK(cudaEventSynchronize(reinterpret_cast<cudaEvent_t>(ev))); }
bool event_query(intptr_t ev) {
  cudaError_t err = cudaEventQuery(reinterpret_cast<cudaEvent_t>(ev));
  if (err == cudaErrorNotReady) { (void)cudaGetLastError(); return false; }
  AG_CUDA_CHECK(err);
  return true;
}
float event_elapsed_ms(intptr_t start, intptr_t end) {
  float ms = 0;
  AG_CUDA_CHECK(cudaEventElapsedTime(&ms, reinterpret_cast<cudaEvent_t>(start), reinterpret_cast<cudaEvent_t>(end)));
  return ms;
}

// ---- cuBLAS
namespace {
std::atomic<bool> g_allow_tf32{false};
}
void set_allow_tf32(bool allow) { g_allow_tf32.store(allow); }
bool allow_tf32() { return g_allow_tf32.load(); }

cublasHandle_t cublas_handle(int device) {
  device = check_index(device);
  static std::mutex mu;
  // Leaked on purpose: destroying handles during interpreter teardown can run after the driver unloads.
  static std::vector<cublasHandle_t>* handles = new std::vector<cublasHandle_t>();
  std::lock_guard<std::mutex> g(mu);
  if (handles->empty()) handles->resize(raw_device_count(), nullptr);
  cublasHandle_t& h = (*handles)[device];
  if (!h) {
    DeviceGuard dg(device);
    AG_CUBLAS_CHECK(cublasCreate(&h));
  }
  AG_CUBLAS_CHECK(cublasSetStream(h, current_stream(device)));
  return h;
}

cublasLtHandle_t cublaslt_handle(int device) {
  device = check_index(device);
  static std::mutex mu;
  static std::vector<cublasLtHandle_t>* handles = new std::vector<cublasLtHandle_t>();  // leaked, as above
  std::lock_guard<std::mutex> g(mu);
  if (handles->empty()) handles->resize(raw_device_count(), nullptr);
  cublasLtHandle_t& h = (*handles)[device];
  if (!h) {
    DeviceGuard dg(device);
    AG_CUBLAS_CHECK(cublasLtCreate(&h));
  }
  return h;
}

std::pair<void*, size_t> cublaslt_workspace(int device) {
  device = check_index(device);
  static std::mutex mu;
  static std::vector<std::pair<void*, size_t>>* spaces = new std::vector<std::pair<void*, size_t>>();  // leaked
  static std::vector<bool>* tried = new std::vector<bool>();
  std::lock_guard<std::mutex> g(mu);
  if (spaces->empty()) { spaces->resize(raw_device_count(), {nullptr, 0}); tried->resize(raw_device_count(), false); }
  if (!(*tried)[device]) {
    (*tried)[device] = true;
    size_t bytes = (device_prop(device).major >= 9 ? 32u : 4u) << 20;
    if (const char* env = std::getenv("AMPGRAD_CUBLASLT_WORKSPACE_SIZE")) bytes = static_cast<size_t>(std::strtoull(env, nullptr, 10)) << 10;
    void* p = nullptr;
    DeviceGuard dg(device);
    if (bytes > 0 && cudaMalloc(&p, bytes) == cudaSuccess) (*spaces)[device] = {p, bytes};
    else (void)cudaGetLastError();  // no workspace: not an error for Lt
  }
  return (*spaces)[device];
}

}  // namespace ampgrad::cuda
