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

AG_CUDA_UNARY(neg, AG_DISPATCH_NUMERIC, Neg)
AG_CUDA_UNARY(exp, AG_DISPATCH_FLOAT, Exp)
AG_CUDA_UNARY(exp2, AG_DISPATCH_FLOAT, Exp2)
AG_CUDA_UNARY(expm1, AG_DISPATCH_FLOAT, Expm1)
AG_CUDA_UNARY(log, AG_DISPATCH_FLOAT, Log)
AG_CUDA_UNARY(log2, AG_DISPATCH_FLOAT, Log2)
AG_CUDA_UNARY(log10, AG_DISPATCH_FLOAT, Log10)
AG_CUDA_UNARY(log1p, AG_DISPATCH_FLOAT, Log1p)
AG_CUDA_UNARY(sqrt, AG_DISPATCH_FLOAT, Sqrt)
AG_CUDA_UNARY(rsqrt, AG_DISPATCH_FLOAT, Rsqrt)
AG_CUDA_UNARY(reciprocal, AG_DISPATCH_FLOAT, Reciprocal)
AG_CUDA_UNARY(abs, AG_DISPATCH_NUMERIC, Abs)
AG_CUDA_UNARY(sign, AG_DISPATCH_ALL, Sign)
AG_CUDA_UNARY(sin, AG_DISPATCH_FLOAT, Sin)
AG_CUDA_UNARY(cos, AG_DISPATCH_FLOAT, Cos)
AG_CUDA_UNARY(tan, AG_DISPATCH_FLOAT, Tan)
AG_CUDA_UNARY(asin, AG_DISPATCH_FLOAT, Asin)
AG_CUDA_UNARY(acos, AG_DISPATCH_FLOAT, Acos)
AG_CUDA_UNARY(atan, AG_DISPATCH_FLOAT, Atan)
AG_CUDA_UNARY(sinh, AG_DISPATCH_FLOAT, Sinh)
AG_CUDA_UNARY(cosh, AG_DISPATCH_FLOAT, Cosh)
AG_CUDA_UNARY(tanh, AG_DISPATCH_FLOAT, Tanh)
AG_CUDA_UNARY(sigmoid, AG_DISPATCH_FLOAT, Sigmoid)
AG_CUDA_UNARY(relu, AG_DISPATCH_NUMERIC, Relu)
AG_CUDA_UNARY(gelu, AG_DISPATCH_FLOAT, Gelu)
AG_CUDA_UNARY(gelu_tanh, AG_DISPATCH_FLOAT, GeluTanh)
AG_CUDA_UNARY(silu, AG_DISPATCH_FLOAT, Silu)
AG_CUDA_UNARY(softplus, AG_DISPATCH_FLOAT, Softplus)
AG_CUDA_UNARY(erf, AG_DISPATCH_FLOAT, Erf)
AG_CUDA_UNARY(erfinv, AG_DISPATCH_FLOAT, Erfinv)
AG_CUDA_UNARY(floor, AG_DISPATCH_NUMERIC, Floor)
AG_CUDA_UNARY(ceil, AG_DISPATCH_NUMERIC, Ceil)
AG_CUDA_UNARY(trunc, AG_DISPATCH_NUMERIC, Trunc)
AG_CUDA_UNARY(round, AG_DISPATCH_NUMERIC, Round)
AG_CUDA_UNARY(frac, AG_DISPATCH_FLOAT, Frac)
AG_CUDA_UNARY(clamp, AG_DISPATCH_NUMERIC, Clamp)
AG_CUDA_UNARY(nan_to_num, AG_DISPATCH_FLOAT, NanToNum)

#define AG_CUDA_PRED(OP, FN)                                                                   \
  void k_##OP(TensorIter& it, const double*) {                                               \
    AG_DISPATCH_ALL(it.dtype(1), #OP "_cuda", [&] { launch<bool, dev_t<scalar_t>>(it, math::FN{}); }); \
  }                                                                                          \
  AG_REGISTER_KERNEL(OP, CUDA, k_##OP);

AG_CUDA_PRED(isnan, IsNan)
AG_CUDA_PRED(isinf, IsInf)
AG_CUDA_PRED(isfinite, IsFinite)
AG_CUDA_PRED(logical_not, LogicalNot)

void k_bitwise_not(TensorIter& it, const double*) {
  AG_CHECK_NOT_IMPL(!is_floating(it.dtype(1)), "\"bitwise_not_cuda\" not implemented for '", scalar_type_name(it.dtype(1)), "'");
  AG_DISPATCH_ALL(it.dtype(1), "bitwise_not_cuda", [&] { using D = dev_t<scalar_t>; launch<D, D>(it, math::BitwiseNot{}); });
}
AG_REGISTER_KERNEL(bitwise_not, CUDA, k_bitwise_not);

}  // namespace
}  // namespace ampgrad::cuda
