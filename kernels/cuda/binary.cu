// CUDA binary elementwise kernels (arithmetic, comparisons, logical, bitwise): the functors of
// kernels/common/scalar_math.h (shared with kernels/cpu/elementwise.cpp) with the CPU's
// scalar-operand modes. Compile-checked only: not yet run on a GPU.
#include "kernels/common/scalar_math.h"
#include "kernels/cuda/loops.cuh"

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

#define AG_CUDA_BINARY(OP, DISPATCH, OUT, FN)                                                  \
  void k_##OP(TensorIter& it, const double* s) {                                             \
    const auto f = math::make_op<math::FN>(s);                                               \
    DISPATCH(it.dtype(1), #OP "_cuda", [&] {                                                 \
      using D = dev_t<scalar_t>;                                                             \
      using Out = std::conditional_t<std::is_same_v<OUT, void>, D, OUT>;                     \
      binary_launch<Out, D>(it, s, f);                                                       \
    });                                                                                      \
  }                                                                                          \
  AG_REGISTER_KERNEL(OP, CUDA, k_##OP);

// One kernel per binary row of the op table (Note [Op table]).
#define AG_UNARY(name, cuda, cpu, dispatch, functor, api)
#define AG_PRED(name, cuda, cpu, functor)
#define AG_BINARY(name, cuda, cpu, dispatch, out, functor, api) AG_CUDA_BINARY(name, AG_DISPATCH_##dispatch, out, functor)
#define AG_TERNARY(name, cuda, cpu, dispatch, functor)
#define AG_OP(name, cuda, cpu, family)
#include "ops/op_list.def"

template <int Kind>
void k_bitwise(TensorIter& it, const double* s) {
  static const char* names[] = {"bitwise_and_cuda", "bitwise_or_cuda", "bitwise_xor_cuda"};
  AG_CHECK_NOT_IMPL(!is_floating(it.dtype(1)), "\"", names[Kind], "\" not implemented for '", scalar_type_name(it.dtype(1)), "'");
  AG_DISPATCH_ALL(it.dtype(1), names[Kind], [&] { using D = dev_t<scalar_t>; binary_launch<D, D>(it, s, math::Bitwise<Kind>{}); });
}
AG_REGISTER_KERNEL(bitwise_and, CUDA, k_bitwise<0>);
AG_REGISTER_KERNEL(bitwise_or, CUDA, k_bitwise<1>);
AG_REGISTER_KERNEL(bitwise_xor, CUDA, k_bitwise<2>);

}  // namespace
}  // namespace ampgrad::cuda
