// The Op enum, names and autocast policies, generated from op_list.def (Note [Op table]).
#pragma once
#include <cstdint>

namespace ampgrad {

enum class AmpPolicy : int8_t { NONE, LOW, FP32, FP32_SET_OPT, FP32_APPEND, PROMOTE, BANNED };

enum class Op : int16_t {
#define AG_OP(name, cuda, cpu) name,
#include "ops/op_list.def"
#undef AG_OP
  kCount
};
constexpr int kNumOps = static_cast<int>(Op::kCount);

const char* op_name(Op op);
AmpPolicy op_policy(Op op, int device_type);  // device_type: 0 = cpu, 1 = cuda

}  // namespace ampgrad
