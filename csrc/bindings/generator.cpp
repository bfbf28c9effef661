// ampgrad._C._CpuGenerator: one CPU generator object (torch.Generator("cpu")); the Python class
// ampgrad.Generator wraps it and makes it current for a call taking `generator=`.
#include "bindings/convert.h"
#include "kernels/cpu/cpu_generator.h"

namespace ampgrad::bind {

namespace {
struct GeneratorHandle {
  std::shared_ptr<CpuGenerator> owned;  // empty for the default generator
  CpuGenerator* g;
};
}  // namespace

void init_generator(py::module_& m) {
  py::class_<GeneratorHandle>(m, "_CpuGenerator")
      .def(py::init([] { auto p = cpu_generator_new(); return GeneratorHandle{p, p.get()}; }))
      .def("manual_seed", [](GeneratorHandle& h, uint64_t s) { cpu_generator_manual_seed(h.g, s); })
      .def("initial_seed", [](GeneratorHandle& h) { return cpu_generator_initial_seed(h.g); })
      .def("get_state", [](GeneratorHandle& h) { return py::bytes(cpu_generator_get_state(h.g)); })
      .def("set_state", [](GeneratorHandle& h, py::bytes b) { cpu_generator_set_state(h.g, std::string(b)); })
      .def("_push", [](GeneratorHandle& h) { return reinterpret_cast<uintptr_t>(cpu_generator_set_current(h.g)); })
      .def("is_default", [](GeneratorHandle& h) { return h.g == cpu_generator_default(); });
  m.def("_cpu_default_generator", [] { return GeneratorHandle{nullptr, cpu_generator_default()}; });
  m.def("_cpu_generator_pop", [](uintptr_t prev) { cpu_generator_set_current(reinterpret_cast<CpuGenerator*>(prev)); });
}

}  // namespace ampgrad::bind
