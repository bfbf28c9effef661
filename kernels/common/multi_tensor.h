// The host side of multi-tensor apply (apex / torch's multi_tensor_apply): lists of tensors are cut
// into chunks and packed into launches of at most max_tensors tensors and max_blocks blocks (one
// block per chunk). Plain C++ (no CUDA types), so tests/test_multi_tensor.py can check it on a CPU.
#pragma once
#include <cstdint>
#include <vector>

namespace ampgrad::mta {

// Note [Multi-tensor packs]: a pack is one kernel launch. Its tensors (slots) are indices into the
// caller's lists; block b works on chunk block_chunk[b] of slot block_slot[b], i.e. elements
// [chunk * chunk_size, min(numel, (chunk + 1) * chunk_size)). A tensor whose chunks do not all fit
// continues in the next pack (as slot 0 there). Empty tensors are skipped. Every element of every
// tensor is covered by exactly one block of exactly one pack.
struct Limits {
  int max_tensors;     // slots per pack (bounded by the kernel's parameter space)
  int max_blocks;      // blocks per pack
  int64_t chunk_size;  // elements per block; a multiple of every vector width used
};

struct Pack {
  std::vector<int> tensors;       // slot -> index in the caller's list
  std::vector<int> block_slot;    // block -> slot
  std::vector<int> block_chunk;   // block -> chunk index within that slot's tensor
};

// The limits the CUDA launcher uses for `depth` lists: kernel parameters must fit in 4 KiB. Per slot
// a pointer per list, the size, one extra pointer and a flags byte (8 * depth + 17 bytes); per block
// a slot byte and an int32 chunk (5 bytes); 256 bytes are left for the functor's own arguments.
constexpr int kParamBytes = 4096, kFunctorBytes = 256, kMaxBlocks = 320;
constexpr int64_t kChunkSize = 65536;
constexpr Limits limits_for(int depth) {
  return Limits{(kParamBytes - kFunctorBytes - kMaxBlocks * 5) / (8 * depth + 17), kMaxBlocks, kChunkSize};
}

// Throws (AG_CHECK) on non-positive limits or a tensor with more than INT32_MAX chunks.
std::vector<Pack> build_packs(const std::vector<int64_t>& numels, const Limits& lim);

}  // namespace ampgrad::mta
