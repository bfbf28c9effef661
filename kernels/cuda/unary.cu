// CUDA unary elementwise kernels: the per-op functors of kernels/common/scalar_math.h (shared
// with kernels/cpu/elementwise.cpp) over loops.cuh. Compile-checked only: not yet run on a GPU.
#include "kernels/common/scalar_math.h"
#include "kernels/cuda/loops.cuh"

namespace ampgrad::cuda {
namespace {

#define AG_CUDA_UNARY(OP, DISPATCH, FN)                                                        \
  void k_##OP(TensorIter& it, const double* s) {                                             \
    const auto f = math::make_op<math::FN>(s);                                               \
    DISPATCH(it.dtype(1), #OP "_cuda", [&] {                                                 \
      using D = dev_t<scalar_t>;                                                             \
      launch<D, D>(it, f);                                                                   \
    });                                                                                      \
  }                                                                                          \
  AG_REGISTER_KERNEL(OP, CUDA, k_##OP);


#define AG_CUDA_PRED(OP, FN)                                                                   \
  void k_##OP(TensorIter& it, const double*) {                                               \
    AG_DISPATCH_ALL(it.dtype(1), #OP "_cuda", [&] { launch<bool, dev_t<scalar_t>>(it, math::FN{}); }); \
  }                                                                                          \
  AG_REGISTER_KERNEL(OP, CUDA, k_##OP);

// One kernel per unary and predicate row of the op table (Note [Op table]).
#define AG_UNARY(name, cuda, cpu, dispatch, functor, api) AG_CUDA_UNARY(name, AG_DISPATCH_##dispatch, functor)
#define AG_PRED(name, cuda, cpu, functor) AG_CUDA_PRED(name, functor)
#define AG_BINARY(name, cuda, cpu, dispatch, out, functor, api)
#define AG_TERNARY(name, cuda, cpu, dispatch, functor)
#define AG_OP(name, cuda, cpu, family)
#include "ops/op_list.def"

void k_bitwise_not(TensorIter& it, const double*) {
  AG_CHECK_NOT_IMPL(!is_floating(it.dtype(1)), "\"bitwise_not_cuda\" not implemented for '", scalar_type_name(it.dtype(1)), "'");
  AG_DISPATCH_ALL(it.dtype(1), "bitwise_not_cuda", [&] { using D = dev_t<scalar_t>; launch<D, D>(it, math::BitwiseNot{}); });
}
AG_REGISTER_KERNEL(bitwise_not, CUDA, k_bitwise_not);

}  // namespace
}  // namespace ampgrad::cuda
