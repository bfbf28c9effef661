// Name and autocast policy tables generated from op_list.def; the static_asserts keep them in step.
#include "ops/op_list.h"

namespace ampgrad {

namespace {
#define AG_OP(name, cuda, cpu) #name,
constexpr const char* kNames[] = {
#include "ops/op_list.def"
};
#undef AG_OP
#define AG_OP(name, cuda, cpu) AmpPolicy::cpu,
constexpr AmpPolicy kCpuPolicy[] = {
#include "ops/op_list.def"
};
#undef AG_OP
#define AG_OP(name, cuda, cpu) AmpPolicy::cuda,
constexpr AmpPolicy kCudaPolicy[] = {
#include "ops/op_list.def"
};
#undef AG_OP
static_assert(sizeof(kNames) / sizeof(kNames[0]) == kNumOps, "op name table out of step with op_list.def");
static_assert(sizeof(kCpuPolicy) / sizeof(kCpuPolicy[0]) == kNumOps, "cpu policy table out of step");
static_assert(sizeof(kCudaPolicy) / sizeof(kCudaPolicy[0]) == kNumOps, "cuda policy table out of step");
}  // namespace

const char* op_name(Op op) { return kNames[static_cast<int>(op)]; }
AmpPolicy op_policy(Op op, int device_type) {
  return device_type == 1 ? kCudaPolicy[static_cast<int>(op)] : kCpuPolicy[static_cast<int>(op)];
}

}  // namespace ampgrad
