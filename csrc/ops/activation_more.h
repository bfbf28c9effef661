// nn activations hardshrink, softshrink, threshold, rrelu (torch's aten ops of those names), with their
// backward ops (ops/activation_more.cpp; kernels in kernels/cpu/activation_more.cpp).
#pragma once
#include "core/tensor.h"

namespace ampgrad {

Tensor hardshrink(const Tensor& a, double lambd);
Tensor softshrink(const Tensor& a, double lambd);
Tensor threshold(const Tensor& a, double threshold, double value);
Tensor& threshold_(Tensor& a, double threshold, double value);
// training: a U(lower, upper) slope per non-positive element (drawn here); eval: (lower + upper) / 2.
Tensor rrelu(const Tensor& a, double lower, double upper, bool training);
Tensor& rrelu_(Tensor& a, double lower, double upper, bool training);
// grad where |x| > lambd, else 0 (torch's hardshrink_backward and softshrink_backward).
Tensor hardshrink_backward(const Tensor& g, const Tensor& x, double lambd);
Tensor softshrink_backward(const Tensor& g, const Tensor& x, double lambd);
// grad where x > threshold, else 0.
Tensor threshold_backward(const Tensor& g, const Tensor& x, double threshold);

}  // namespace ampgrad
