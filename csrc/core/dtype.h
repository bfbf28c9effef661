// Scalar types, their names and sizes, torch's promotion lattice, fp16/bf16 storage types with
// round-to-nearest-even conversions (bit-exact with c10::Half / c10::BFloat16), dtype dispatch.
#pragma once
#include <cstdint>
#include <cstring>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include "core/check.h"

namespace ampgrad {

// uint16/uint32/uint64 are torch's "barebones unsigned" (shell) dtypes: they exist, cast, copy, view,
// index, compare for equality, multiply, sum and sort; most kernels raise NotImplementedError for them
// (their dispatch macros do not list them), and promotion with any other non-floating dtype is an error.
// They come after Float64 so that the numbers of the older dtypes stay as they were.
enum class ScalarType : int8_t { Bool, UInt8, Int8, Int16, Int32, Int64, Float16, BFloat16, Float32, Float64, UInt16, UInt32, UInt64, Undefined };
constexpr int kNumScalarTypes = 13;

inline uint32_t f32_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float f32_from_bits(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

// IEEE binary16; conversion from float follows c10 (rounding to nearest even, NaN -> quiet NaN).
struct Half {
  uint16_t x;
  struct from_bits_t {};
  Half() = default;
  constexpr Half(uint16_t bits, from_bits_t) : x(bits) {}
  Half(float f) : x(from_float(f)) {}
  operator float() const { return to_float(x); }
  static uint16_t from_float(float f) {
    const float scale_to_inf = 0x1.0p+112f, scale_to_zero = 0x1.0p-110f;
    float base = (std::fabs(f) * scale_to_inf) * scale_to_zero;
    const uint32_t w = f32_bits(f), shl1_w = w + w, sign = w & 0x80000000u;
    uint32_t bias = shl1_w & 0xFF000000u;
    if (bias < 0x71000000u) bias = 0x71000000u;
    base = f32_from_bits((bias >> 1) + 0x07800000u) + base;
    const uint32_t bits = f32_bits(base);
    const uint32_t nonsign = ((bits >> 13) & 0x00007C00u) + (bits & 0x00000FFFu);
    return static_cast<uint16_t>((sign >> 16) | (shl1_w > 0xFF000000u ? 0x7E00u : nonsign));
  }
  static float to_float(uint16_t h) {
    const uint32_t w = static_cast<uint32_t>(h) << 16, sign = w & 0x80000000u, two_w = w + w;
    const float normalized = f32_from_bits((two_w >> 4) + (0xE0u << 23)) * 0x1.0p-112f;
    const float denormalized = f32_from_bits((two_w >> 17) | (126u << 23)) - 0.5f;
    return f32_from_bits(sign | (two_w < (1u << 27) ? f32_bits(denormalized) : f32_bits(normalized)));
  }
};

// bfloat16: the top half of a float, rounded to nearest even; NaN stays a quiet NaN.
struct BFloat16 {
  uint16_t x;
  struct from_bits_t {};
  BFloat16() = default;
  constexpr BFloat16(uint16_t bits, from_bits_t) : x(bits) {}
  BFloat16(float f) : x(from_float(f)) {}
  operator float() const { return f32_from_bits(static_cast<uint32_t>(x) << 16); }
  static uint16_t from_float(float f) {
    if (std::isnan(f)) return 0x7FC0;
    uint32_t u = f32_bits(f);
    return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
  }
};

inline bool is_floating(ScalarType t) { return t >= ScalarType::Float16 && t <= ScalarType::Float64; }
inline bool is_barebones_unsigned(ScalarType t) { return t >= ScalarType::UInt16 && t <= ScalarType::UInt64; }
inline bool is_integral(ScalarType t, bool include_bool) {
  return (t >= ScalarType::UInt8 && t <= ScalarType::Int64) || is_barebones_unsigned(t) || (include_bool && t == ScalarType::Bool);
}
inline bool is_signed(ScalarType t) { return t != ScalarType::Bool && t != ScalarType::UInt8 && !is_barebones_unsigned(t); }
inline bool is_reduced_float(ScalarType t) { return t == ScalarType::Float16 || t == ScalarType::BFloat16; }

inline int64_t itemsize(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: case ScalarType::UInt8: case ScalarType::Int8: return 1;
    case ScalarType::Int16: case ScalarType::Float16: case ScalarType::BFloat16: case ScalarType::UInt16: return 2;
    case ScalarType::Int32: case ScalarType::Float32: case ScalarType::UInt32: return 4;
    case ScalarType::Int64: case ScalarType::Float64: case ScalarType::UInt64: return 8;
    default: return 0;
  }
}

inline const char* dtype_name(ScalarType t) {  // torch's repr without the "torch." prefix
  static const char* names[] = {"bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64", "uint16", "uint32", "uint64", "undefined"};
  return names[static_cast<int>(t)];
}
inline const char* scalar_type_name(ScalarType t) {  // c10's toString(ScalarType), used in kernel errors
  static const char* names[] = {"Bool", "Byte", "Char", "Short", "Int", "Long", "Half", "BFloat16", "Float", "Double", "UInt16", "UInt32", "UInt64", "Undefined"};
  return names[static_cast<int>(t)];
}
inline const char* cpp_type_name(ScalarType t) {  // the C++ type names torch prints in some dtype errors
  static const char* names[] = {"bool", "unsigned char", "signed char", "short int", "int", "long int", "c10::Half", "c10::BFloat16",
                                "float", "double", "short unsigned int", "unsigned int", "long unsigned int", "undefined"};
  return names[static_cast<int>(t)];
}
inline const char* legacy_type_name(ScalarType t) {  // "FloatTensor" etc., used in autograd messages
  static const char* names[] = {"BoolTensor", "ByteTensor", "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "HalfTensor", "BFloat16Tensor", "FloatTensor", "DoubleTensor", "UInt16Tensor", "UInt32Tensor", "UInt64Tensor", "UndefinedTensor"};
  return names[static_cast<int>(t)];
}

// torch.promote_types: the lattice of c10::promoteTypes for the real dtypes.
inline ScalarType promote_types(ScalarType a, ScalarType b) {
  using S = ScalarType;
  if (a == b) return a;
  if (a == S::Undefined) return b;
  if (b == S::Undefined) return a;
  if (is_barebones_unsigned(a) || is_barebones_unsigned(b)) {  // c10: only floating promotion is defined for them
    if (is_floating(a)) return a;
    if (is_floating(b)) return b;
    AG_THROW(RuntimeError, "Promotion for uint16, uint32, uint64 types is not supported, attempted to promote ",
             scalar_type_name(a), " and ", scalar_type_name(b));
  }
  if (a == S::Bool) return b;
  if (b == S::Bool) return a;
  bool fa = is_floating(a), fb = is_floating(b);
  if (fa && fb) {
    if (is_reduced_float(a) && is_reduced_float(b)) return S::Float32;
    return itemsize(a) >= itemsize(b) ? a : b;
  }
  if (fa) return a;
  if (fb) return b;
  if (a == S::UInt8 || b == S::UInt8) {  // uint8 with a signed type: the smallest signed type holding both
    S other = a == S::UInt8 ? b : a;
    return other == S::Int8 ? S::Int16 : other;
  }
  return itemsize(a) >= itemsize(b) ? a : b;
}

// torch.can_cast: no float->int, no int->bool, no float/int->bool.
inline bool can_cast(ScalarType from, ScalarType to) {
  if (is_floating(from) && is_integral(to, true)) return false;
  if (from != ScalarType::Bool && to == ScalarType::Bool) return false;
  return true;
}

template <typename T> struct CppType;
template <> struct CppType<bool> { static constexpr ScalarType value = ScalarType::Bool; };
template <> struct CppType<uint8_t> { static constexpr ScalarType value = ScalarType::UInt8; };
template <> struct CppType<int8_t> { static constexpr ScalarType value = ScalarType::Int8; };
template <> struct CppType<int16_t> { static constexpr ScalarType value = ScalarType::Int16; };
template <> struct CppType<int32_t> { static constexpr ScalarType value = ScalarType::Int32; };
template <> struct CppType<int64_t> { static constexpr ScalarType value = ScalarType::Int64; };
template <> struct CppType<Half> { static constexpr ScalarType value = ScalarType::Float16; };
template <> struct CppType<BFloat16> { static constexpr ScalarType value = ScalarType::BFloat16; };
template <> struct CppType<float> { static constexpr ScalarType value = ScalarType::Float32; };
template <> struct CppType<double> { static constexpr ScalarType value = ScalarType::Float64; };
template <> struct CppType<uint16_t> { static constexpr ScalarType value = ScalarType::UInt16; };
template <> struct CppType<uint32_t> { static constexpr ScalarType value = ScalarType::UInt32; };
template <> struct CppType<uint64_t> { static constexpr ScalarType value = ScalarType::UInt64; };

template <typename T> inline constexpr bool is_barebones_unsigned_v =
    std::is_same_v<T, uint16_t> || std::is_same_v<T, uint32_t> || std::is_same_v<T, uint64_t>;

// A floating value into uint16/uint32/uint64 as torch's scalar x86 loop gives it (C++ leaves the
// out-of-range cases undefined): uint16 through int32, uint32 through int64, uint64 with the compilers'
// unsigned trick (from 2**63 on, convert d - 2**63 and flip the top bit). NaN or a value out of the signed
// range converts to the signed minimum, as cvttsd2si does. Measured against torch 2.13: -1.0 -> 65535,
// 1e10 -> uint32 1410065408, inf -> 0, -inf -> uint64 2**63. (torch's vectorized loop differs from its own
// scalar loop for values out of the target's range: in a long tensor 1e10 -> uint32 gives 0.)
template <typename S> inline S cvtt_signed(double d) {  // truncate; NaN and out of range: S's minimum
  constexpr double lim = std::is_same_v<S, int32_t> ? 2147483648.0 : 9223372036854775808.0;
  return d > -lim - (std::is_same_v<S, int32_t> ? 1.0 : 0.0) && d < lim ? static_cast<S>(d) : std::numeric_limits<S>::min();
}
template <typename O> inline O float_to_unsigned(double d) {
  if constexpr (std::is_same_v<O, uint16_t>) {
    return static_cast<O>(cvtt_signed<int32_t>(d));
  } else if constexpr (std::is_same_v<O, uint32_t>) {
    return static_cast<O>(cvtt_signed<int64_t>(d));
  } else {
    constexpr double top = 9223372036854775808.0;
    if (d >= top) return static_cast<O>(cvtt_signed<int64_t>(d - top)) ^ (O(1) << 63);
    return static_cast<O>(cvtt_signed<int64_t>(d));
  }
}

template <typename T> struct AccType { using type = T; };
template <> struct AccType<Half> { using type = float; };
template <> struct AccType<BFloat16> { using type = float; };
template <typename T> using acc_t = typename AccType<T>::type;

// Dispatch: AG_DISPATCH_FLOAT(dtype, "op", [&]{ using scalar_t = ...; })
#define AG_CASE(ST, T, ...) case ::ampgrad::ScalarType::ST: { using scalar_t = T; __VA_ARGS__(); break; }
#define AG_DISPATCH_FLOAT(dt, name, ...) do { switch (dt) { \
    AG_CASE(Float64, double, __VA_ARGS__) AG_CASE(Float32, float, __VA_ARGS__) \
    AG_CASE(Float16, ::ampgrad::Half, __VA_ARGS__) AG_CASE(BFloat16, ::ampgrad::BFloat16, __VA_ARGS__) \
    default: AG_THROW(NotImplementedError, "\"", name, "\" not implemented for '", ::ampgrad::scalar_type_name(dt), "'"); } } while (0)
#define AG_DISPATCH_INT(dt, name, ...) \
    AG_CASE(UInt8, uint8_t, __VA_ARGS__) AG_CASE(Int8, int8_t, __VA_ARGS__) AG_CASE(Int16, int16_t, __VA_ARGS__) \
    AG_CASE(Int32, int32_t, __VA_ARGS__) AG_CASE(Int64, int64_t, __VA_ARGS__)
#define AG_DISPATCH_ALL(dt, name, ...) do { switch (dt) { \
    AG_CASE(Float64, double, __VA_ARGS__) AG_CASE(Float32, float, __VA_ARGS__) \
    AG_CASE(Float16, ::ampgrad::Half, __VA_ARGS__) AG_CASE(BFloat16, ::ampgrad::BFloat16, __VA_ARGS__) \
    AG_DISPATCH_INT(dt, name, __VA_ARGS__) AG_CASE(Bool, bool, __VA_ARGS__) \
    default: AG_THROW(NotImplementedError, "\"", name, "\" not implemented for '", ::ampgrad::scalar_type_name(dt), "'"); } } while (0)
// AG_DISPATCH_ALL plus the barebones unsigned dtypes: the few kernels torch runs on them (copy and
// casts, fill, where, eq/ne, mul, bitwise and/or/xor, sort, indexing).
#define AG_DISPATCH_ALL_U(dt, name, ...) do { switch (dt) { \
    AG_CASE(Float64, double, __VA_ARGS__) AG_CASE(Float32, float, __VA_ARGS__) \
    AG_CASE(Float16, ::ampgrad::Half, __VA_ARGS__) AG_CASE(BFloat16, ::ampgrad::BFloat16, __VA_ARGS__) \
    AG_DISPATCH_INT(dt, name, __VA_ARGS__) AG_CASE(Bool, bool, __VA_ARGS__) \
    AG_CASE(UInt16, uint16_t, __VA_ARGS__) AG_CASE(UInt32, uint32_t, __VA_ARGS__) AG_CASE(UInt64, uint64_t, __VA_ARGS__) \
    default: AG_THROW(NotImplementedError, "\"", name, "\" not implemented for '", ::ampgrad::scalar_type_name(dt), "'"); } } while (0)
#define AG_DISPATCH_NUMERIC(dt, name, ...) do { switch (dt) { \
    AG_CASE(Float64, double, __VA_ARGS__) AG_CASE(Float32, float, __VA_ARGS__) \
    AG_CASE(Float16, ::ampgrad::Half, __VA_ARGS__) AG_CASE(BFloat16, ::ampgrad::BFloat16, __VA_ARGS__) \
    AG_DISPATCH_INT(dt, name, __VA_ARGS__) \
    default: AG_THROW(NotImplementedError, "\"", name, "\" not implemented for '", ::ampgrad::scalar_type_name(dt), "'"); } } while (0)

}  // namespace ampgrad
