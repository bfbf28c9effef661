// The Op enum, names, autocast policies and kernel families, generated from op_list.def
// (Note [Op table]). Everything here is constexpr, so a gate or a registration can test a row's
// columns at compile time.
#pragma once
#include <cstdint>

// Row filter for includers of op_list.def: AG_IF_GENERATED(api, x) is x for a row whose declaration
// and bindings are generated (api GEN, NUMS, OTHER, TENSORS) and nothing for a CUSTOM row.
#define AG_IF_GENERATED(api, x) AG_IF_GENERATED_##api(x)
#define AG_IF_GENERATED_GEN(x) x
#define AG_IF_GENERATED_NUMS(x) x
#define AG_IF_GENERATED_OTHER(x) x
#define AG_IF_GENERATED_TENSORS(x) x
#define AG_IF_GENERATED_CUSTOM(x)

namespace ampgrad {

enum class AmpPolicy : int8_t { NONE, LOW, FP32, FP32_SET_OPT, FP32_APPEND, PROMOTE, BANNED };

// Note [Kernel families]: the kernel signature of an op (kernels/kernels.h maps each family to its
// function type with AG_KERNEL_SIG). This list is the only place a family is named: the enum,
// has_kernel (kernels/common/kernel_table.cpp) and _C._op_table's names are generated from it. NONE
// (first, not listed): the op has no kernel of its own (composed of other ops).
#define AG_KERNEL_FAMILIES(X)                                                                              \
  X(ELEMENTWISE) X(REDUCE) X(GEMM) X(GEMM_BIAS) X(INDEX_GATHER) X(INDEX_PUT) X(NONZERO) X(RANDOM)        \
  X(AMP_UNSCALE) X(AMP_UPDATE_SCALE) X(SGD_STEP) X(ADAM_STEP) X(SORT) X(MULTINOMIAL)                      \
  /* fused nn ops: ops/attention.cpp, ops/nn_misc.cpp, ops/conv.cpp, ops/pool.cpp, ops/norm.cpp, ops/loss.cpp */ \
  X(SDPA) X(SDPA_BACKWARD) X(LOSS) X(LOSS_BACKWARD) X(DROPOUT) X(EMBEDDING) X(EMBEDDING_BACKWARD)          \
  X(CONV) X(POOL) X(NORM) X(NORM_BACKWARD) X(SOFTMAX_BACKWARD) X(NLL) X(NLL_BACKWARD)          \
  /* recurrent cells: ops/rnn.cpp */ X(RNN_CELL) X(RNN_CELL_BACKWARD)                                      \
  /* ops/spatial.cpp */ X(SPATIAL)                                                    \
  /* matrix decompositions: ops/linalg_decomp.cpp */ X(LINALG)                                                  \
  /* scans, index reductions, binning: ops/scan_index.cpp */ X(SCAN_INDEX)                                \
  /* CTC loss, fractional max pooling: ops/ctc_fracpool.cpp */ X(CTC_FRACPOOL)
enum class KernelFamily : int8_t {
  NONE,
#define AG_FAMILY_ENUM(F) F,
  AG_KERNEL_FAMILIES(AG_FAMILY_ENUM)
#undef AG_FAMILY_ENUM
  kCount
};

enum class Op : int16_t {
#define AG_OP(name, cuda, cpu, family) name,
#include "ops/op_list.def"
  kCount
};
constexpr int kNumOps = static_cast<int>(Op::kCount);

namespace op_table {
#define AG_OP(name, cuda, cpu, family) #name,
inline constexpr const char* kNames[] = {
#include "ops/op_list.def"
};
#define AG_OP(name, cuda, cpu, family) AmpPolicy::cpu,
inline constexpr AmpPolicy kCpuPolicy[] = {
#include "ops/op_list.def"
};
#define AG_OP(name, cuda, cpu, family) AmpPolicy::cuda,
inline constexpr AmpPolicy kCudaPolicy[] = {
#include "ops/op_list.def"
};
#define AG_OP(name, cuda, cpu, family) KernelFamily::family,
inline constexpr KernelFamily kFamily[] = {
#include "ops/op_list.def"
};
static_assert(sizeof(kNames) / sizeof(kNames[0]) == kNumOps, "op name table out of step with op_list.def");
static_assert(sizeof(kCpuPolicy) / sizeof(kCpuPolicy[0]) == kNumOps, "cpu policy table out of step");
static_assert(sizeof(kCudaPolicy) / sizeof(kCudaPolicy[0]) == kNumOps, "cuda policy table out of step");
static_assert(sizeof(kFamily) / sizeof(kFamily[0]) == kNumOps, "kernel family table out of step");
}  // namespace op_table

constexpr const char* op_name(Op op) { return op_table::kNames[static_cast<int>(op)]; }
// device_type: 0 = cpu, 1 = cuda
constexpr AmpPolicy op_policy(Op op, int device_type) {
  return device_type == 1 ? op_table::kCudaPolicy[static_cast<int>(op)] : op_table::kCpuPolicy[static_cast<int>(op)];
}
constexpr bool has_autocast_policy(Op op) { return op_policy(op, 0) != AmpPolicy::NONE || op_policy(op, 1) != AmpPolicy::NONE; }
constexpr KernelFamily op_family(Op op) { return op_table::kFamily[static_cast<int>(op)]; }

}  // namespace ampgrad
