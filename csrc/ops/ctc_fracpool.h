// CTC loss and fractional max pooling front ends (ops/ctc_fracpool.cpp).
#pragma once
#include <utility>
#include "core/tensor.h"
#include "ops/ops.h"

namespace ampgrad {

// torch's _ctc_loss: the per-sample negative log likelihood [N] of log_probs [T, N, C] (float32 / float64;
// the caller unsqueezes the unbatched [T, C] form and reports its rank as torch does through
// `reported_dim`), targets padded [N, S] or concatenated [sum(target_lengths)] (any integral or float
// dtype, read as int64). Backward node CtcLossBackward0 (torch's gradient formula; zero_infinity zeroes
// the gradient of an infinite loss).
Tensor ctc_loss_nll(const Tensor& log_probs, const Tensor& targets, const IntList& input_lengths,
                    const IntList& target_lengths, int64_t blank, bool zero_infinity);

// fractional_max_pool2d / 3d (nd = 2 / 3) with torch's checks: x [(N,) C, (D,) H, W], kernel and
// output_size of nd entries, samples [>= N, C, nd] in x's dtype. Returns (output, indices).
std::pair<Tensor, Tensor> fractional_max_pool(const Tensor& x, const IntList& kernel, const IntList& output_size,
                                              const Tensor& samples, int nd);

}  // namespace ampgrad
