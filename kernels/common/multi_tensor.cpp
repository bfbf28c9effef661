// Chunk tables of multi-tensor apply (Note [Multi-tensor packs]).
#include "kernels/common/multi_tensor.h"
#include <climits>
#include "core/check.h"

namespace ampgrad::mta {

std::vector<Pack> build_packs(const std::vector<int64_t>& numels, const Limits& lim) {
  AG_CHECK(lim.max_tensors > 0 && lim.max_blocks > 0 && lim.chunk_size > 0, "multi_tensor_apply: limits must be positive");
  std::vector<Pack> packs;
  Pack cur;
  auto flush = [&] {
    if (!cur.block_slot.empty()) packs.push_back(std::move(cur));
    cur = Pack();
  };
  for (size_t t = 0; t < numels.size(); ++t) {
    const int64_t n = numels[t];
    AG_CHECK(n >= 0, "multi_tensor_apply: negative size");
    if (n == 0) continue;
    const int64_t chunks = (n + lim.chunk_size - 1) / lim.chunk_size;
    AG_CHECK(chunks <= INT_MAX, "multi_tensor_apply: a tensor of ", n, " elements has too many chunks");
    for (int64_t c = 0; c < chunks; ++c) {
      // A new slot when the tensor is not in this pack yet (first chunk, or it spilled over).
      if (cur.tensors.empty() || cur.tensors.back() != static_cast<int>(t)) {
        if (static_cast<int>(cur.tensors.size()) == lim.max_tensors) flush();
        cur.tensors.push_back(static_cast<int>(t));
      }
      cur.block_slot.push_back(static_cast<int>(cur.tensors.size()) - 1);
      cur.block_chunk.push_back(static_cast<int>(c));
      if (static_cast<int>(cur.block_slot.size()) == lim.max_blocks) flush();
    }
  }
  flush();
  return packs;
}

}  // namespace ampgrad::mta
