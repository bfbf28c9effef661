// CUDA unary elementwise kernels: one functor per op over loops.cuh, mirroring
// kernels/cpu/elementwise.cpp. Compile-checked only: not yet run on a GPU.
#include "kernels/cuda/loops.cuh"
#include "kernels/cuda/math.cuh"

namespace ampgrad::cuda {
namespace {

// NS: how many of the op's scalar arguments the functor reads (s may be null when NS == 0).
#define AG_CUDA_UNARY(OP, DISPATCH, NS, EXPR)                                                  \
  struct F_##OP {                                                                            \
    double s[NS > 0 ? NS : 1];                                                               \
    template <typename T> __device__ T operator()(T x) const { return EXPR; }                \
  };                                                                                         \
  void k_##OP(TensorIter& it, const double* sp) {                                            \
    F_##OP f{};                                                                              \
    for (int i = 0; i < NS; ++i) f.s[i] = sp ? sp[i] : 0.0;                                   \
    DISPATCH(it.dtype(1), #OP "_cuda", [&] {                                                 \
      using D = dev_t<scalar_t>;                                                             \
      launch<D, D>(it, f);                                                                   \
    });                                                                                      \
  }                                                                                          \
  AG_REGISTER_KERNEL(OP, CUDA, k_##OP);

AG_CUDA_UNARY(neg, AG_DISPATCH_NUMERIC, 0, -x)
AG_CUDA_UNARY(exp, AG_DISPATCH_FLOAT, 0, exp(x))
AG_CUDA_UNARY(exp2, AG_DISPATCH_FLOAT, 0, exp2(x))
AG_CUDA_UNARY(expm1, AG_DISPATCH_FLOAT, 0, expm1(x))
AG_CUDA_UNARY(log, AG_DISPATCH_FLOAT, 0, log(x))
AG_CUDA_UNARY(log2, AG_DISPATCH_FLOAT, 0, log2(x))
AG_CUDA_UNARY(log10, AG_DISPATCH_FLOAT, 0, log10(x))
AG_CUDA_UNARY(log1p, AG_DISPATCH_FLOAT, 0, log1p(x))
AG_CUDA_UNARY(sqrt, AG_DISPATCH_FLOAT, 0, sqrt(x))
AG_CUDA_UNARY(rsqrt, AG_DISPATCH_FLOAT, 0, rsqrt(x))
AG_CUDA_UNARY(reciprocal, AG_DISPATCH_FLOAT, 0, T(1) / x)
AG_CUDA_UNARY(abs, AG_DISPATCH_NUMERIC, 0, x < T(0) ? T(-x) : x)
AG_CUDA_UNARY(sign, AG_DISPATCH_ALL, 0, T((T(0) < x) - (x < T(0))))
AG_CUDA_UNARY(sin, AG_DISPATCH_FLOAT, 0, sin(x))
AG_CUDA_UNARY(cos, AG_DISPATCH_FLOAT, 0, cos(x))
AG_CUDA_UNARY(tan, AG_DISPATCH_FLOAT, 0, tan(x))
AG_CUDA_UNARY(asin, AG_DISPATCH_FLOAT, 0, asin(x))
AG_CUDA_UNARY(acos, AG_DISPATCH_FLOAT, 0, acos(x))
AG_CUDA_UNARY(atan, AG_DISPATCH_FLOAT, 0, atan(x))
AG_CUDA_UNARY(sinh, AG_DISPATCH_FLOAT, 0, sinh(x))
AG_CUDA_UNARY(cosh, AG_DISPATCH_FLOAT, 0, cosh(x))
AG_CUDA_UNARY(tanh, AG_DISPATCH_FLOAT, 0, tanh(x))
AG_CUDA_UNARY(sigmoid, AG_DISPATCH_FLOAT, 0, T(1) / (T(1) + exp(-x)))
AG_CUDA_UNARY(relu, AG_DISPATCH_NUMERIC, 0, x > T(0) ? x : (x != x ? x : T(0)))
// gelu(+-inf) is the limit (inf, 0), as on the CPU (better than torch's nan).
AG_CUDA_UNARY(gelu, AG_DISPATCH_FLOAT, 0,
              isinf(x) ? (x > T(0) ? x : T(0)) : T(0.5) * x * (T(1) + erf(x * T(0.70710678118654752440))))
AG_CUDA_UNARY(gelu_tanh, AG_DISPATCH_FLOAT, 0,
              isinf(x) ? (x > T(0) ? x : T(0))
                       : T(0.5) * x * (T(1) + tanh(T(0.79788456080286535588) * (x + T(0.044715) * x * x * x))))
AG_CUDA_UNARY(silu, AG_DISPATCH_FLOAT, 0, x / (T(1) + exp(-x)))
AG_CUDA_UNARY(softplus, AG_DISPATCH_FLOAT, 2, x * T(s[0]) > T(s[1]) ? x : log1p(exp(x * T(s[0]))) / T(s[0]))
AG_CUDA_UNARY(erf, AG_DISPATCH_FLOAT, 0, erf(x))
AG_CUDA_UNARY(erfinv, AG_DISPATCH_FLOAT, 0, d_erfinv<T>(x))
AG_CUDA_UNARY(floor, AG_DISPATCH_NUMERIC, 0, [&] { if constexpr (std::is_floating_point_v<T>) return floor(x); else return x; }())
AG_CUDA_UNARY(ceil, AG_DISPATCH_NUMERIC, 0, [&] { if constexpr (std::is_floating_point_v<T>) return ceil(x); else return x; }())
AG_CUDA_UNARY(trunc, AG_DISPATCH_NUMERIC, 0, [&] { if constexpr (std::is_floating_point_v<T>) return trunc(x); else return x; }())
AG_CUDA_UNARY(round, AG_DISPATCH_NUMERIC, 1, [&] { if constexpr (std::is_floating_point_v<T>) return round_decimals<T>(x, s[0]); else return x; }())
AG_CUDA_UNARY(frac, AG_DISPATCH_FLOAT, 0, x - trunc(x))
AG_CUDA_UNARY(clamp, AG_DISPATCH_NUMERIC, 2, [&] {
  if constexpr (std::is_floating_point_v<T>) return nan_min<T>(nan_max<T>(x, T(s[0])), T(s[1]));
  else {  // integer bounds convert to the tensor's type first (C-cast wrap), as on the CPU
    T v = x;
    if (!isinf(s[0])) { T lo = static_cast<T>(static_cast<int64_t>(s[0])); v = v < lo ? lo : v; }
    if (!isinf(s[1])) { T hi = static_cast<T>(static_cast<int64_t>(s[1])); v = v > hi ? hi : v; }
    return v;
  }
}())
AG_CUDA_UNARY(nan_to_num, AG_DISPATCH_FLOAT, 3,
              x != x ? T(s[0]) : (x == d_inf<T>() ? T(s[1]) : (x == -d_inf<T>() ? T(s[2]) : x)))

#define AG_CUDA_PRED(OP, EXPR)                                                                 \
  struct F_##OP {                                                                            \
    template <typename T> __device__ bool operator()(T x) const { (void)x; return EXPR; }     \
  };                                                                                         \
  void k_##OP(TensorIter& it, const double*) {                                               \
    AG_DISPATCH_ALL(it.dtype(1), #OP "_cuda", [&] { launch<bool, dev_t<scalar_t>>(it, F_##OP{}); }); \
  }                                                                                          \
  AG_REGISTER_KERNEL(OP, CUDA, k_##OP);

AG_CUDA_PRED(isnan, [&] { if constexpr (std::is_floating_point_v<T>) return isnan(x); else return false; }())
AG_CUDA_PRED(isinf, [&] { if constexpr (std::is_floating_point_v<T>) return isinf(x); else return false; }())
AG_CUDA_PRED(isfinite, [&] { if constexpr (std::is_floating_point_v<T>) return isfinite(x); else return true; }())
AG_CUDA_PRED(logical_not, !static_cast<bool>(x))

struct F_bitwise_not {
  template <typename T> __device__ T operator()(T x) const { return bit_not<T>(x); }
};
void k_bitwise_not(TensorIter& it, const double*) {
  AG_CHECK_NOT_IMPL(!is_floating(it.dtype(1)), "\"bitwise_not_cuda\" not implemented for '", scalar_type_name(it.dtype(1)), "'");
  AG_DISPATCH_ALL(it.dtype(1), "bitwise_not_cuda", [&] { using D = dev_t<scalar_t>; launch<D, D>(it, F_bitwise_not{}); });
}
AG_REGISTER_KERNEL(bitwise_not, CUDA, k_bitwise_not);

}  // namespace
}  // namespace ampgrad::cuda
