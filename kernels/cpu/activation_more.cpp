// CPU kernels of hardshrink, softshrink, threshold, rrelu's slopes and the shrink / threshold backward masks
// (front ends: ops/activation_more.cpp). fp16/bf16 compute in float32 and round once.
#include <type_traits>
#include "kernels/cpu/loops.h"

namespace ampgrad::cpu {

namespace {
// s[0] = lambd (in the input's dtype first, as torch). 0 inside [-lambd, lambd] (NaN passes through).
void k_hardshrink(TensorIter& it, const double* s) {
  AG_DISPATCH_FLOAT(it.dtype(0), "hardshrink_cpu", [&] {
    using A = acc_t<scalar_t>;
    const A l = static_cast<A>(static_cast<scalar_t>(s[0]));
    cpu_kernel<scalar_t, scalar_t>(it, [=](A x) { return (x >= -l && x <= l) ? A(0) : x; });
  });
}

// s[0] = lambd: x -+ lambd outside [-lambd, lambd], x * 0 inside (keeps -0.0 and NaN as torch).
void k_softshrink(TensorIter& it, const double* s) {
  AG_DISPATCH_FLOAT(it.dtype(0), "softshrink_cpu", [&] {
    using A = acc_t<scalar_t>;
    const A l = static_cast<A>(s[0]);
    cpu_kernel<scalar_t, scalar_t>(it, [=](A x) { return x > l ? x - l : (x < -l ? x + l : x * A(0)); });
  });
}

// s[0] = threshold (in the input's dtype for integers, in float32 for fp16 / bf16, as torch), s[1] = value.
void k_threshold(TensorIter& it, const double* s) {
  AG_DISPATCH_NUMERIC(it.dtype(0), "threshold_cpu", [&] {
    using A = acc_t<scalar_t>;
    const A th = std::is_integral_v<scalar_t> ? static_cast<A>(static_cast<scalar_t>(s[0])) : static_cast<A>(s[0]);
    const A v = static_cast<A>(static_cast<scalar_t>(s[1]));
    cpu_kernel<scalar_t, scalar_t>(it, [=](A x) { return x <= th ? v : x; });
  });
}

// (grad, x), s[0] = lambd: grad outside [-lambd, lambd], else 0.
void k_shrink_backward(TensorIter& it, const double* s) {
  AG_DISPATCH_FLOAT(it.dtype(0), "shrink_backward_cpu", [&] {
    using A = acc_t<scalar_t>;
    const A l = static_cast<A>(s[0]);
    cpu_kernel2<scalar_t, scalar_t>(it, [=](A g, A x) { return (x >= -l && x <= l) ? A(0) : g; });
  });
}

// (grad, x), s[0] = threshold: 0 where x <= threshold, else grad.
void k_threshold_backward(TensorIter& it, const double* s) {
  AG_DISPATCH_FLOAT(it.dtype(0), "threshold_backward_cpu", [&] {
    using A = acc_t<scalar_t>;
    const A th = static_cast<A>(s[0]);
    cpu_kernel2<scalar_t, scalar_t>(it, [=](A g, A x) { return x <= th ? A(0) : g; });
  });
}

// (x, r), s[0] = the eval slope, s[1] = training: the slope r (training) or s[0] where x <= 0, else 1.
void k_rrelu_noise(TensorIter& it, const double* s) {
  AG_DISPATCH_FLOAT(it.dtype(0), "rrelu_with_noise_out_cpu", [&] {
    using A = acc_t<scalar_t>;
    const A mean_slope = static_cast<A>(s[0]);
    const bool training = s[1] != 0;
    cpu_kernel2<scalar_t, scalar_t>(it, [=](A x, A r) { return x <= A(0) ? (training ? r : mean_slope) : A(1); });
  });
}
}  // namespace

AG_REGISTER_KERNEL(hardshrink, CPU, k_hardshrink);
AG_REGISTER_KERNEL(softshrink, CPU, k_softshrink);
AG_REGISTER_KERNEL(threshold, CPU, k_threshold);
AG_REGISTER_KERNEL(shrink_backward, CPU, k_shrink_backward);
AG_REGISTER_KERNEL(threshold_backward, CPU, k_threshold_backward);
AG_REGISTER_KERNEL(rrelu_noise, CPU, k_rrelu_noise);

}  // namespace ampgrad::cpu
