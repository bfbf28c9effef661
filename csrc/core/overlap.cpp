// Memory overlap tests with torch's rules and messages (aten/src/ATen/MemoryOverlap.cpp).
#include "core/overlap.h"
#include "core/check.h"

namespace ampgrad {

bool has_internal_overlap(const Tensor& t) {
  if (t.numel() <= 1) return false;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.strides()[d] == 0 && t.sizes()[d] > 1) return true;
  return false;
}

MemOverlap overlap_status(const Tensor& a, const Tensor& b) {
  if (a.is_same(b)) return MemOverlap::Full;
  if (a.numel() == 0 || b.numel() == 0) return MemOverlap::No;
  if (a.storage() != b.storage()) return MemOverlap::No;
  if (!is_non_overlapping_and_dense(a) || !is_non_overlapping_and_dense(b)) return MemOverlap::TooHard;
  const int64_t isz = static_cast<int64_t>(itemsize(a.dtype())), jsz = static_cast<int64_t>(itemsize(b.dtype()));
  const int64_t a_begin = a.storage_offset() * isz, a_end = a_begin + a.numel() * isz;
  const int64_t b_begin = b.storage_offset() * jsz, b_end = b_begin + b.numel() * jsz;
  if (a_begin == b_begin && a_end == b_end) return a.strides() == b.strides() ? MemOverlap::Full : MemOverlap::Partial;
  return a_begin < b_end && b_begin < a_end ? MemOverlap::Partial : MemOverlap::No;
}

void assert_no_internal_overlap(const Tensor& t) {
  if (has_internal_overlap(t))
    AG_THROW(RuntimeError, "unsupported operation: more than one element of the written-to tensor refers to a single "
             "memory location. Please clone() the tensor before performing the operation.");
}

static const char* const kOverlapMessage =
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory "
    "location. Please clone() the tensor before performing the operation.";

void assert_no_partial_overlap(const Tensor& out, const Tensor& in) {
  if (overlap_status(out, in) == MemOverlap::Partial) AG_THROW(RuntimeError, kOverlapMessage);
}

void assert_no_overlap(const Tensor& out, const Tensor& in) {
  MemOverlap s = overlap_status(out, in);
  if (s == MemOverlap::Partial || s == MemOverlap::Full) AG_THROW(RuntimeError, kOverlapMessage);
}

}  // namespace ampgrad
