// Private bindings that let the pytest suite check host code the CUDA backend relies on, on any
// machine: the Philox block function and the host reference of the CUDA random fills
// (kernels/common/philox*.h), and the multi-tensor-apply chunk tables (kernels/common/multi_tensor.h).
#include "bindings/convert.h"
#include "kernels/common/multi_tensor.h"
#include "kernels/common/philox_fill.h"

namespace ampgrad::bind {

void init_testing(py::module_& m) {
  m.def("_philox4x32", [](std::array<uint32_t, 4> ctr, std::array<uint32_t, 2> key) {
    philox::Words w = philox::philox4x32_10(philox::Words{{ctr[0], ctr[1], ctr[2], ctr[3]}}, key[0], key[1]);
    return std::array<uint32_t, 4>{w.v[0], w.v[1], w.v[2], w.v[3]};
  }, py::arg("counter"), py::arg("key"), "Philox4x32-10 of one counter under one key (4 words each way).");
  m.def("_philox_fill", [](Tensor& t, const std::string& kind, uint64_t seed, uint64_t offset, double a, double b) {
    const philox::Kind k = kind == "uniform" ? philox::Kind::kUniform : kind == "normal" ? philox::Kind::kNormal
                           : kind == "randint" ? philox::Kind::kRandint
                           : throw ValueError("_philox_fill: kind must be uniform, normal or randint");
    return philox::fill_reference(t, k, seed, offset, a, b);
  }, py::arg("out"), py::arg("kind"), py::arg("seed"), py::arg("offset"), py::arg("a"), py::arg("b"),
     "Fills a contiguous CPU tensor as a CUDA fill at (seed, offset) would; returns the counters used.");
  m.def("_multi_tensor_limits", [](int depth) {
    const mta::Limits l = mta::limits_for(depth);
    return std::make_tuple(l.max_tensors, l.max_blocks, l.chunk_size);
  }, py::arg("depth"));
  m.def("_multi_tensor_packs", [](const std::vector<int64_t>& numels, int max_tensors, int max_blocks, int64_t chunk_size) {
    std::vector<std::tuple<std::vector<int>, std::vector<int>, std::vector<int>>> out;
    for (auto& p : mta::build_packs(numels, mta::Limits{max_tensors, max_blocks, chunk_size}))
      out.emplace_back(p.tensors, p.block_slot, p.block_chunk);
    return out;
  }, py::arg("numels"), py::arg("max_tensors"), py::arg("max_blocks"), py::arg("chunk_size"),
     "The launches multi-tensor apply makes: (tensor indices, block -> slot, block -> chunk) per pack.");
}

}  // namespace ampgrad::bind
