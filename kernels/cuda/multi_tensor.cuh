// Multi-tensor apply on the device (Note [Multi-tensor packs] in kernels/common/multi_tensor.h):
// tensor pointers and the block -> (tensor, chunk) tables travel in the kernel's parameters, one
// launch per full pack; a chunk is walked with 16-byte vector loads and stores when every list's
// pointer for that tensor is 16-byte aligned. Compile-checked only: not yet run on a GPU.
#pragma once
#include <array>
#include <vector>
#include "kernels/common/multi_tensor.h"
#include "kernels/cuda/loops.cuh"

namespace ampgrad::cuda {

constexpr int kMtaThreads = 512;
// Per-slot flag bits: kSlotAligned is set by the launcher; kSlotFresh is the caller's (SGD).
enum : uint8_t { kSlotAligned = 1, kSlotFresh = 2 };

template <int Depth>
struct MtaMeta {
  static constexpr mta::Limits kLim = mta::limits_for(Depth);
  void* addrs[Depth][kLim.max_tensors];
  int64_t numel[kLim.max_tensors];
  void* extra[kLim.max_tensors];  // per-tensor pointer for the functor (Adam: its step count)
  uint8_t flags[kLim.max_tensors];
  uint8_t block_slot[kLim.max_blocks];
  int32_t block_chunk[kLim.max_blocks];
};
static_assert(mta::limits_for(1).max_tensors <= 255, "block_slot is a byte");

// Block b runs f(meta, slot, lo, hi) on elements [lo, hi) of its slot's tensors.
template <int Depth, typename F>
__global__ void __launch_bounds__(kMtaThreads) multi_tensor_kernel(const __grid_constant__ MtaMeta<Depth> meta, F f) {
  const int slot = meta.block_slot[blockIdx.x];
  const int64_t chunk = MtaMeta<Depth>::kLim.chunk_size;
  const int64_t lo = static_cast<int64_t>(meta.block_chunk[blockIdx.x]) * chunk;
  const int64_t hi = meta.numel[slot] < lo + chunk ? meta.numel[slot] : lo + chunk;
  f(meta, slot, lo, hi);
}

// Runs op(x) on every element i of [lo, hi): x[d] is list d's value at i in the compute type, and
// the lists op.writes(d) names are stored back. Vector path: the chunk start is a multiple of the
// vector width (chunk_size is), so aligned bases keep every vector aligned; the tail is scalar.
template <typename D, int Depth, typename OpT>
__device__ __forceinline__ void for_chunk(const MtaMeta<Depth>& m, int slot, int64_t lo, int64_t hi, OpT& op) {
  using A = dacc_t<D>;
  constexpr int kVec = 16 / sizeof(D);
  static_assert(mta::kChunkSize % kVec == 0, "chunks must hold whole vectors");
  D* p[Depth];
#pragma unroll
  for (int d = 0; d < Depth; ++d) p[d] = static_cast<D*>(m.addrs[d][slot]);
  if (m.flags[slot] & kSlotAligned) {
    const int64_t nvec = (hi - lo) / kVec;
    for (int64_t v = threadIdx.x; v < nvec; v += blockDim.x) {
      const int64_t i0 = lo + v * kVec;
      AVec<D, kVec> r[Depth];
#pragma unroll
      for (int d = 0; d < Depth; ++d) r[d] = *reinterpret_cast<const AVec<D, kVec>*>(p[d] + i0);
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        A x[Depth];
#pragma unroll
        for (int d = 0; d < Depth; ++d) x[d] = cvt<A>(r[d].v[j]);
        op(x);
#pragma unroll
        for (int d = 0; d < Depth; ++d)
          if (op.writes(d)) r[d].v[j] = cvt<D>(x[d]);
      }
#pragma unroll
      for (int d = 0; d < Depth; ++d)
        if (op.writes(d)) *reinterpret_cast<AVec<D, kVec>*>(p[d] + i0) = r[d];
    }
    lo += nvec * kVec;
  }
  for (int64_t i = lo + threadIdx.x; i < hi; i += blockDim.x) {
    A x[Depth];
#pragma unroll
    for (int d = 0; d < Depth; ++d) x[d] = cvt<A>(p[d][i]);
    op(x);
#pragma unroll
    for (int d = 0; d < Depth; ++d)
      if (op.writes(d)) p[d][i] = cvt<D>(x[d]);
  }
}

// One list entry per tensor: its Depth data pointers (same dtype), size, extra pointer, flags.
template <int Depth>
struct MtaTensor {
  std::array<void*, Depth> ptrs;
  int64_t numel;
  void* extra = nullptr;
  uint8_t flags = 0;
};

// Launches f over `tensors` on `device`'s current stream: one launch per pack of
// mta::build_packs (no host sync; the parameters are copied at launch).
template <int Depth, typename F>
void multi_tensor_apply(int device, const std::vector<MtaTensor<Depth>>& tensors, const F& f) {
  static_assert(sizeof(MtaMeta<Depth>) + sizeof(F) <= mta::kParamBytes, "kernel parameters exceed 4 KiB");
  static_assert(sizeof(F) <= mta::kFunctorBytes, "functor arguments exceed their share of the parameters");
  std::vector<int64_t> numels(tensors.size());
  for (size_t t = 0; t < tensors.size(); ++t) numels[t] = tensors[t].numel;
  const std::vector<mta::Pack> packs = mta::build_packs(numels, MtaMeta<Depth>::kLim);
  if (packs.empty()) return;
  DeviceGuard guard(device);
  cudaStream_t stream = current_stream(device);
  MtaMeta<Depth> meta{};
  for (const mta::Pack& pk : packs) {
    for (size_t s = 0; s < pk.tensors.size(); ++s) {
      const MtaTensor<Depth>& t = tensors[pk.tensors[s]];
      bool aligned = true;
      for (int d = 0; d < Depth; ++d) {
        meta.addrs[d][s] = t.ptrs[d];
        aligned &= reinterpret_cast<uintptr_t>(t.ptrs[d]) % 16 == 0;
      }
      meta.numel[s] = t.numel;
      meta.extra[s] = t.extra;
      meta.flags[s] = static_cast<uint8_t>((t.flags & ~kSlotAligned) | (aligned ? kSlotAligned : 0));
    }
    const int blocks = static_cast<int>(pk.block_slot.size());
    for (int b = 0; b < blocks; ++b) {
      meta.block_slot[b] = static_cast<uint8_t>(pk.block_slot[b]);
      meta.block_chunk[b] = pk.block_chunk[b];
    }
    multi_tensor_kernel<Depth, F><<<blocks, kMtaThreads, 0, stream>>>(meta, f);
    AG_CUDA_KERNEL_LAUNCH_CHECK();
  }
}

// Splits a list of tensors by (device, dtype), keeping order within each group.
struct MtaGroup {
  int device;
  ScalarType dtype;
  std::vector<size_t> index;
};
inline std::vector<MtaGroup> group_by_device_dtype(const std::vector<Tensor>& ts) {
  std::vector<MtaGroup> groups;
  for (size_t i = 0; i < ts.size(); ++i) {
    const int dev = ts[i].device().norm();
    const ScalarType dt = ts[i].dtype();
    MtaGroup* g = nullptr;
    for (auto& x : groups)
      if (x.device == dev && x.dtype == dt) g = &x;
    if (!g) { groups.push_back(MtaGroup{dev, dt, {}}); g = &groups.back(); }
    g->index.push_back(i);
  }
  return groups;
}

}  // namespace ampgrad::cuda
