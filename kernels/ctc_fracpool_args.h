// The arguments of the CTC-loss and fractional-max-pooling kernels (Note [CTC and fractional pool
// kernels] in kernels/kernels.h); the front ends are ops/ctc_fracpool.cpp.
#pragma once
#include <cstdint>

namespace ampgrad {

// Every tensor operand is contiguous (row-major). Modes, operands and shapes:
//   kCtcForward    in  log_probs [T, N, C] (float32/64), targets int64 (padded [N, S] or concatenated),
//                      input_lengths int64 [N], target_lengths int64 [N], target_offsets int64 [N]
//                  out nll [N], log_alpha [N, T, 2 * max_target + 1]
//   kCtcBackward   in  grad [N], log_probs, targets, input_lengths, target_lengths, target_offsets,
//                      nll [N], log_alpha
//                  out grad_log_probs [T, N, C] (every element written): torch's formula,
//                      exp(lp) * g - exp(log(alpha beta summed over the label) + nll - lp) * g, zero for
//                      t >= input_length, and zero for an infinite nll with zero_infinity
//   kFracPool      in  x [planes, (D,) H, W], samples [planes, nd] (x's dtype)
//                  out y [planes, (oD,) oH, oW], indices int64 (flat within a plane)
// A plane's samples are torch's: 2-d [0] -> W, [1] -> H; 3-d [0] -> T, [1] -> H, [2] -> W.
struct CtcFracArgs {
  enum Mode : int { kCtcForward, kCtcBackward, kFracPool };
  Mode mode = kCtcForward;
  // CTC
  int64_t T = 0, N = 0, C = 0, blank = 0, target_stride = 1, alpha_width = 1;
  bool zero_infinity = false;
  // fractional max pooling: nd = 2 or 3; sizes in (T, H, W) order with T = 1 for 2-d
  int nd = 2;
  int64_t planes = 0, in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1};
};

}  // namespace ampgrad
