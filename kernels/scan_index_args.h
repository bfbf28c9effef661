// The arguments of the scan / index-reduction / binning kernels (Note [Scan-index kernels] in
// kernels/kernels.h); the front ends are ops/scan_index.cpp.
#pragma once
#include <cstdint>
#include <vector>

namespace ampgrad {

// Every tensor operand is contiguous (row-major). Modes, operands and shapes:
//   kScatterReduce  in self [out shape], index int64 [idx shape], src [idx shape]  out result [out shape]
//                   (dtype of self); reduce along `dim`: out[.., index[i], ..] (op)= src[i]
//   kCumMax/kCumMin in x [A, R, B]        out values [A, R, B], indices int64 [A, R, B]
//   kLogCumSumExp   in x [A, R, B]        out [A, R, B]
//   kCumBackward    in grad [A, R, B], indices int64 [A, R, B]  out [A, R, B] (zeroed here): out[idx] += grad
//   kSearchSorted   in boundaries [rows, n], values [V], sorter int64 [rows, n] or undefined
//                   out int64 / int32 [V]; value v searches row (rows == 1 ? 0 : v / per_row)
//   kBincount       in int64 [N], weights [N] (out dtype) or undefined  out [nbins] (zeroed here)
//   kHistc          in x [N]                out [bins]: counts of lo <= x <= hi (computed in x's dtype)
struct ScanIndexArgs {
  enum Mode : int { kScatterReduce, kCumMax, kCumMin, kLogCumSumExp, kCumBackward, kSearchSorted, kBincount, kHistc };
  enum Reduce : int { kSum, kProd, kMean, kAmax, kAmin };
  Mode mode = kScatterReduce;
  Reduce reduce = kSum;
  bool include_self = true, right = false;
  int64_t A = 1, R = 1, B = 1;
  int64_t dim = 0;
  std::vector<int64_t> out_sizes, idx_sizes;
  int64_t rows = 1, n = 0, per_row = 1;
  int64_t bins = 0;
  double lo = 0, hi = 0;
};

}  // namespace ampgrad
