// ampgrad._C._cuda_*: device queries, caching-allocator statistics, events, the TF32 flag and the
// random generators; the Python wrappers with torch.cuda's names live in python/ampgrad/cuda.
// Without a CUDA build these reach kernels/cuda_stub.cpp (count 0, everything else raises).
#include "bindings/convert.h"
#include "kernels/kernels.h"

namespace ampgrad::bind {

void init_cuda(py::module_& m) {
  // A RuntimeError subclass, as torch.cuda.OutOfMemoryError.
  py::register_exception<OutOfMemoryError>(m, "OutOfMemoryError", PyExc_RuntimeError);
#ifdef AMPGRAD_WITH_CUDA
  m.def("_cuda_is_built", [] { return true; });
#else
  m.def("_cuda_is_built", [] { return false; });
#endif
  m.def("_cuda_device_count", [] { return cuda::device_count(); });
  m.def("_cuda_current_device", [] { return cuda::current_device(); });
  m.def("_cuda_set_device", [](int d) { cuda::set_device(d); });
  m.def("_cuda_synchronize", [](int d) {
    py::gil_scoped_release nogil;
    cuda::synchronize(d);
  }, py::arg("device") = -1);
  m.def("_cuda_get_device_properties", [](int d) {
    cuda::DeviceProperties p = cuda::get_device_properties(d);
    py::dict r;
    r["name"] = p.name;
    r["major"] = p.major;
    r["minor"] = p.minor;
    r["multi_processor_count"] = p.multi_processor_count;
    r["warp_size"] = p.warp_size;
    r["total_memory"] = p.total_memory;
    r["L2_cache_size"] = p.l2_cache_size;
    r["shared_memory_per_block_optin"] = p.shared_memory_per_block_optin;
    return r;
  });
  m.def("_cuda_mem_get_info", [](int d) { return cuda::mem_get_info(d); });
  m.def("_cuda_memory_stats", [](int d) {
    cuda::MemoryStats s = cuda::memory_stats(d);
    py::dict r;
    r["allocated_bytes.all.current"] = s.allocated;
    r["allocated_bytes.all.peak"] = s.max_allocated;
    r["reserved_bytes.all.current"] = s.reserved;
    r["reserved_bytes.all.peak"] = s.max_reserved;
    r["num_alloc_retries"] = s.num_alloc_retries;
    r["num_ooms"] = s.num_ooms;
    r["allocation.all.allocated"] = s.num_allocs;
    r["allocation.all.freed"] = s.num_frees;
    return r;
  });
  m.def("_cuda_reset_peak_memory_stats", [](int d) { cuda::reset_peak_memory_stats(d); });
  m.def("_cuda_empty_cache", [] { cuda::empty_cache(); });
  m.def("_cuda_set_allow_tf32", [](bool a) { cuda::set_allow_tf32(a); });
  m.def("_cuda_get_allow_tf32", [] { return cuda::allow_tf32(); });
  // The Philox generators (Note [Philox streams]); device -1 is the current device.
  m.def("_cuda_manual_seed", [](int d, uint64_t seed) { cuda::manual_seed(d, seed); });
  m.def("_cuda_manual_seed_all", [](uint64_t seed) { cuda::manual_seed_all(seed); });
  m.def("_cuda_initial_seed", [](int d) { return cuda::initial_seed(d); });
  m.def("_cuda_get_rng_state", [](int d) { return cuda::get_rng_state(d); });
  m.def("_cuda_set_rng_state", [](int d, uint64_t seed, uint64_t offset) { cuda::set_rng_state(d, seed, offset); });
  m.def("_cuda_event_create", [](bool timing) { return cuda::event_create(timing); });
  m.def("_cuda_event_destroy", [](intptr_t e) { cuda::event_destroy(e); });
  m.def("_cuda_event_record", [](intptr_t e) { cuda::event_record(e); });
  m.def("_cuda_event_synchronize", [](intptr_t e) {
    py::gil_scoped_release nogil;
    cuda::event_synchronize(e);
  });
  m.def("_cuda_event_query", [](intptr_t e) { return cuda::event_query(e); });
  m.def("_cuda_event_elapsed_time", [](intptr_t a, intptr_t b) { return cuda::event_elapsed_ms(a, b); });
  m.def("_cuda_current_stream", [](int d) { return cuda::current_stream_handle(d); });
  m.def("_cuda_stream_synchronize", [](intptr_t s, int d) {
    py::gil_scoped_release nogil;
    cuda::stream_synchronize(s, d);
  });
}

}  // namespace ampgrad::bind
