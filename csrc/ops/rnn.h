// The fused RNN cells (ops/rnn.cpp, Note [Fused RNN cells] in kernels/kernels.h): the pointwise part of
// a cell after its gates GEMMs. python/ampgrad/nn/_rnn.py composes torch's cells and modules on them.
#pragma once
#include <vector>
#include "ops/ops.h"

namespace ampgrad {
// gates [B, 4H] (i|f|g|o with both biases), cx [B, H] -> {hy, cy}.
std::vector<Tensor> lstm_cell_fused(const Tensor& gates, const Tensor& cx);
// input gates [B, 3H], hidden gates [B, 3H] (r|z|n, each with its bias), hx [B, H] -> hy.
Tensor gru_cell_fused(const Tensor& gi, const Tensor& gh, const Tensor& hx);
}  // namespace ampgrad
