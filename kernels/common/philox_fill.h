// The transform each CUDA random fill runs per dtype (Note [Philox streams]), chosen on the host by
// both the CUDA launchers (kernels/cuda/random.cu) and the host reference (philox_ref.cpp), so the
// two cannot drift apart.
#pragma once
#include <type_traits>
#include "core/tensor.h"
#include "kernels/common/philox.h"

namespace ampgrad::philox {

enum class Kind { kUniform = 0, kNormal = 1, kRandint = 2 };

// Random bits of a uniform draw: the output type's significand (the CPU generator's choice).
template <typename T> constexpr int digits() {
  if constexpr (std::is_same_v<T, double>) return 53;
  else if constexpr (std::is_same_v<T, float>) return 24;
  else if constexpr (std::is_same_v<T, Half>) return 11;
  else return 8;  // BFloat16
}
template <typename T> using compute_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// Calls f(op) with the uniform (a = from, b = to) or normal (a = mean, b = std) transform of a
// floating fill of host type scalar_t. from / to are rounded to the output type first, as on the CPU.
template <typename scalar_t, typename F>
void visit_float_op(Kind kind, double a, double b, F&& f) {
  using A = compute_t<scalar_t>;
  if (kind == Kind::kUniform) {
    const A from = static_cast<A>(static_cast<scalar_t>(static_cast<A>(a)));
    const A to = static_cast<A>(static_cast<scalar_t>(static_cast<A>(b)));
    f(Uniform<A, digits<scalar_t>()>{from, to});
  } else {
    f(Normal<A>{static_cast<A>(a), static_cast<A>(b)});
  }
}

// randint over [low, high): 64-bit draws when the range needs 32+ bits and the dtype can hold it.
inline Randint make_randint(ScalarType dt, int64_t lo, int64_t high) {
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(lo);
  const bool wide_type = dt == ScalarType::Int64 || dt == ScalarType::Float64 || dt == ScalarType::Float32 ||
                         dt == ScalarType::BFloat16;
  return Randint{lo, range, range >= (uint64_t(1) << 32) && wide_type};
}

// Fills the contiguous CPU tensor t with what a CUDA fill of the same dtype and size draws at
// (seed, offset); returns the number of counters it consumed (the offset advance). For tests.
uint64_t fill_reference(Tensor& t, Kind kind, uint64_t seed, uint64_t offset, double a, double b);

}  // namespace ampgrad::philox
