// Device versions of the scalar helpers of kernels/cpu/elementwise.cpp (same semantics: torch's).
// Compile-checked only: not yet run on a GPU.
#pragma once
#include <cuda/std/limits>
#include <cuda/std/type_traits>
#include <type_traits>

namespace ampgrad::cuda {

template <typename T> __device__ __forceinline__ T d_inf() { return ::cuda::std::numeric_limits<T>::infinity(); }
template <typename T> __device__ __forceinline__ T d_nan() { return ::cuda::std::numeric_limits<T>::quiet_NaN(); }

template <typename T> __device__ __forceinline__ T d_erfinv(T y) {
  if constexpr (std::is_same_v<T, float>) return erfinvf(y); else return erfinv(y);
}
template <typename T> __device__ __forceinline__ T round_decimals(T x, double dec) {
  if (dec == 0) return nearbyint(x);
  T p = static_cast<T>(pow(10.0, fabs(dec)));
  return dec > 0 ? nearbyint(x * p) / p : nearbyint(x / p) * p;
}
template <typename T> __device__ __forceinline__ T floor_div(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (b == 0) return a / b;
    T mod = fmod(a, b);
    T div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= T(1);
    if (div != 0) {
      T fl = floor(div);
      if (div - fl > T(0.5)) fl += T(1);
      return fl;
    }
    return copysign(T(0), a / b);
  } else {
    T q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
    return q;
  }
}
template <typename T> __device__ __forceinline__ T int_pow(T a, T b) {
  if (b < 0) { if (a == 1) return 1; if (a == -1) return (b % 2 == 0) ? 1 : -1; return 0; }
  T r = 1;
  while (b) { if (b & 1) r *= a; a *= a; b >>= 1; }
  return r;
}
template <typename T> __device__ __forceinline__ T fmod_op(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return fmod(a, b); else return static_cast<T>(a % b);
}
template <typename T> __device__ __forceinline__ T remainder_op(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    T m = fmod(a, b);
    if (m != 0 && ((b < 0) != (m < 0))) m += b;
    return m;
  } else {
    T r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  }
}
template <typename T> __device__ __forceinline__ T trunc_div(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return trunc(a / b); else return static_cast<T>(a / b);
}
template <typename T> __device__ __forceinline__ T pow_op(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return pow(a, b); else return int_pow<T>(a, b);
}
template <int Kind, typename T> __device__ __forceinline__ T bit_op(T a, T b) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(Kind == 0 ? (a & b) : Kind == 1 ? (a | b) : (a ^ b));
  else return a;  // never launched: the host refuses floating dtypes first
}
template <typename T> __device__ __forceinline__ T bit_not(T x) {
  if constexpr (std::is_same_v<T, bool>) return !x;
  else if constexpr (std::is_integral_v<T>) return static_cast<T>(~x);
  else return x;  // never launched
}
template <typename T> __device__ __forceinline__ T nan_max(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) { if (a != a) return a; if (b != b) return b; }
  return a > b ? a : b;
}
template <typename T> __device__ __forceinline__ T nan_min(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) { if (a != a) return a; if (b != b) return b; }
  return a < b ? a : b;
}

}  // namespace ampgrad::cuda
