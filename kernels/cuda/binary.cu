// CUDA binary elementwise kernels (arithmetic, comparisons, logical, bitwise), mirroring
// kernels/cpu/elementwise.cpp including its scalar-operand modes. Compile-checked only: not yet run on a GPU.
#include "kernels/cuda/loops.cuh"
#include "kernels/cuda/math.cuh"

namespace ampgrad::cuda {
namespace {

// The scalar operand modes of ops/elementwise.cpp: s[1] = 1 (b is the scalar s[0]), 2 (a is).
template <typename F, typename A>
struct BindB {
  F f; A v;
  template <typename T> __device__ auto operator()(T a) const { return f(a, static_cast<T>(v)); }
};
template <typename F, typename A>
struct BindA {
  F f; A v;
  template <typename T> __device__ auto operator()(T b) const { return f(static_cast<T>(v), b); }
};

template <typename Out, typename D, typename F>
void binary_launch(TensorIter& it, const double* s, const F& f) {
  using A = dacc_t<D>;
  if (it.nops == 3) { launch<Out, D, D>(it, f); return; }
  A v = static_cast<A>(s[0]);
  if (s[1] == 1) launch<Out, D>(it, BindB<F, A>{f, v});
  else launch<Out, D>(it, BindA<F, A>{f, v});
}

#define AG_CUDA_BINARY(OP, DISPATCH, OUT, EXPR)                                                \
  struct F_##OP {                                                                            \
    double s[3];                                                                             \
    template <typename T> __device__ auto operator()(T a, T b) const {                       \
      (void)a; (void)b;                                                                      \
      using R = std::conditional_t<std::is_same_v<OUT, void>, T, OUT>;                       \
      return static_cast<R>(EXPR);                                                           \
    }                                                                                        \
  };                                                                                         \
  void k_##OP(TensorIter& it, const double* sp) {                                            \
    F_##OP f{};                                                                              \
    for (int i = 0; i < 3; ++i) f.s[i] = sp ? sp[i] : 0.0;                                    \
    DISPATCH(it.dtype(1), #OP "_cuda", [&] {                                                 \
      using D = dev_t<scalar_t>;                                                             \
      using Out = std::conditional_t<std::is_same_v<OUT, void>, D, OUT>;                     \
      binary_launch<Out, D>(it, sp, f);                                                      \
    });                                                                                      \
  }                                                                                          \
  AG_REGISTER_KERNEL(OP, CUDA, k_##OP);

AG_CUDA_BINARY(add, AG_DISPATCH_ALL, void, [&] {
  if constexpr (std::is_same_v<T, bool>) return static_cast<bool>(a || (s[2] != 0 && b));
  else return s[2] == 1 ? T(a + b) : T(a + T(s[2]) * b);
}())
AG_CUDA_BINARY(sub, AG_DISPATCH_NUMERIC, void, s[2] == 1 ? T(a - b) : T(a - T(s[2]) * b))
AG_CUDA_BINARY(mul, AG_DISPATCH_ALL, void, [&] {
  if constexpr (std::is_same_v<T, bool>) return static_cast<bool>(a && b); else return T(a * b);
}())
AG_CUDA_BINARY(div, AG_DISPATCH_FLOAT, void, a / b)
AG_CUDA_BINARY(div_trunc, AG_DISPATCH_NUMERIC, void, trunc_div<T>(a, b))
AG_CUDA_BINARY(div_floor, AG_DISPATCH_NUMERIC, void, floor_div<T>(a, b))
AG_CUDA_BINARY(pow, AG_DISPATCH_NUMERIC, void, pow_op<T>(a, b))
AG_CUDA_BINARY(atan2, AG_DISPATCH_FLOAT, void, atan2(a, b))
AG_CUDA_BINARY(maximum, AG_DISPATCH_ALL, void, nan_max<T>(a, b))
AG_CUDA_BINARY(minimum, AG_DISPATCH_ALL, void, nan_min<T>(a, b))
AG_CUDA_BINARY(fmod, AG_DISPATCH_NUMERIC, void, fmod_op<T>(a, b))
AG_CUDA_BINARY(remainder, AG_DISPATCH_NUMERIC, void, remainder_op<T>(a, b))
AG_CUDA_BINARY(relu_backward, AG_DISPATCH_FLOAT, void, b <= T(0) ? T(0) : a)  // a: grad, b: relu result
AG_CUDA_BINARY(eq, AG_DISPATCH_ALL, bool, a == b)
AG_CUDA_BINARY(ne, AG_DISPATCH_ALL, bool, a != b)
AG_CUDA_BINARY(lt, AG_DISPATCH_ALL, bool, a < b)
AG_CUDA_BINARY(le, AG_DISPATCH_ALL, bool, a <= b)
AG_CUDA_BINARY(gt, AG_DISPATCH_ALL, bool, a > b)
AG_CUDA_BINARY(ge, AG_DISPATCH_ALL, bool, a >= b)
AG_CUDA_BINARY(logical_and, AG_DISPATCH_ALL, bool, static_cast<bool>(a) && static_cast<bool>(b))
AG_CUDA_BINARY(logical_or, AG_DISPATCH_ALL, bool, static_cast<bool>(a) || static_cast<bool>(b))
AG_CUDA_BINARY(logical_xor, AG_DISPATCH_ALL, bool, static_cast<bool>(a) != static_cast<bool>(b))

template <int Kind>
struct F_bitwise {
  template <typename T> __device__ T operator()(T a, T b) const { return bit_op<Kind, T>(a, b); }
};
template <int Kind>
void k_bitwise(TensorIter& it, const double* s) {
  static const char* names[] = {"bitwise_and_cuda", "bitwise_or_cuda", "bitwise_xor_cuda"};
  AG_CHECK_NOT_IMPL(!is_floating(it.dtype(1)), "\"", names[Kind], "\" not implemented for '", scalar_type_name(it.dtype(1)), "'");
  AG_DISPATCH_ALL(it.dtype(1), names[Kind], [&] { using D = dev_t<scalar_t>; binary_launch<D, D>(it, s, F_bitwise<Kind>{}); });
}
AG_REGISTER_KERNEL(bitwise_and, CUDA, k_bitwise<0>);
AG_REGISTER_KERNEL(bitwise_or, CUDA, k_bitwise<1>);
AG_REGISTER_KERNEL(bitwise_xor, CUDA, k_bitwise<2>);

}  // namespace
}  // namespace ampgrad::cuda
