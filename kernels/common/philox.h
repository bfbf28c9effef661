// Philox4x32-10 (Salmon et al., "Parallel Random Numbers: As Easy as 1, 2, 3", SC'11; Random123's
// constants) and the per-counter transforms of the CUDA random fills, as host + device code: the
// CUDA kernels and the host reference (philox_ref.cpp) run exactly these functions.
#pragma once
#include <math.h>
#include <cstdint>

#if defined(__CUDACC__)
#define AG_HOST_DEVICE __host__ __device__ __forceinline__
#define AG_UNROLL _Pragma("unroll")
#else
#define AG_HOST_DEVICE inline
#define AG_UNROLL
#endif

namespace ampgrad::philox {

// Note [Philox streams]: each CUDA device has a generator state (seed, offset). A fill of n values
// reserves ceil(n / per) counters starting at `offset` (and advances offset past them, as torch's
// philox_offset); values [g*per, g*per + per) come from counter offset + g, key = seed. The counter
// is a 128-bit integer: (offset + g) in words 0-1, words 2-3 zero. So value i depends only on
// (seed, offset, i): any launch configuration gives the same numbers, and the host reproduces them.
// per is 4 for draws of one 32-bit word and 2 for draws of a 64-bit pair (fp64, wide randint).

struct Words { uint32_t v[4]; };

AG_HOST_DEVICE uint32_t mulhilo(uint32_t a, uint32_t b, uint32_t* hi) {
#ifdef __CUDA_ARCH__
  *hi = __umulhi(a, b);
  return a * b;
#else
  const uint64_t p = static_cast<uint64_t>(a) * b;
  *hi = static_cast<uint32_t>(p >> 32);
  return static_cast<uint32_t>(p);
#endif
}

AG_HOST_DEVICE Words philox4x32_10(Words c, uint32_t k0, uint32_t k1) {
AG_UNROLL
  for (int r = 0; r < 10; ++r) {
    if (r > 0) { k0 += 0x9E3779B9u; k1 += 0xBB67AE85u; }  // the key schedule (Weyl sequence)
    uint32_t hi0, hi1;
    const uint32_t lo0 = mulhilo(0xD2511F53u, c.v[0], &hi0);
    const uint32_t lo1 = mulhilo(0xCD9E8D57u, c.v[2], &hi1);
    c = Words{{hi1 ^ c.v[1] ^ k0, lo1, hi0 ^ c.v[3] ^ k1, lo0}};
  }
  return c;
}

// The output of counter (offset + g) under `seed` (Note [Philox streams]).
AG_HOST_DEVICE Words draw(uint64_t seed, uint64_t offset, uint64_t g) {
  const uint64_t c = offset + g;
  return philox4x32_10(Words{{static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32), 0u, 0u}},
                       static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

AG_HOST_DEVICE uint64_t word64(const Words& w, int j) {
  return (static_cast<uint64_t>(w.v[2 * j]) << 32) | w.v[2 * j + 1];
}

// Explicit fused multiply-adds: host and device then round the same way (no contraction choices).
// The global math functions: inside namespace ampgrad the tensor ops of the same names would hide them.
AG_HOST_DEVICE float fma_(float a, float b, float c) { return ::fmaf(a, b, c); }
AG_HOST_DEVICE double fma_(double a, double b, double c) { return ::fma(a, b, c); }
AG_HOST_DEVICE float log1p_(float x) { return ::log1pf(x); }
AG_HOST_DEVICE double log1p_(double x) { return ::log1p(x); }
AG_HOST_DEVICE float sqrt_(float x) { return ::sqrtf(x); }
AG_HOST_DEVICE double sqrt_(double x) { return ::sqrt(x); }
AG_HOST_DEVICE float sin_(float x) { return ::sinf(x); }
AG_HOST_DEVICE double sin_(double x) { return ::sin(x); }
AG_HOST_DEVICE float cos_(float x) { return ::cosf(x); }
AG_HOST_DEVICE double cos_(double x) { return ::cos(x); }

// k / 2^Digits for the low Digits bits: a uniform on [0, 1) exact in the output type (24 bits for
// fp32, 53 for fp64, 11 / 8 for fp16 / bf16, as ampgrad's CPU generator uses).
template <typename A, int Digits>
AG_HOST_DEVICE A unit(uint64_t bits) {
  return static_cast<A>(bits & ((uint64_t(1) << Digits) - 1)) * (A(1) / static_cast<A>(uint64_t(1) << Digits));
}

// uniform_(from, to): A is the compute type (float, or double for fp64), Digits the output's.
template <typename A, int Digits>
struct Uniform {
  static constexpr int kPer = Digits > 32 ? 2 : 4;
  A from, to;
  AG_HOST_DEVICE void operator()(const Words& w, A* out) const {
    const A span = to - from;
AG_UNROLL
    for (int j = 0; j < kPer; ++j) out[j] = fma_(unit<A, Digits>(kPer == 2 ? word64(w, j) : w.v[j]), span, from);
  }
};

// normal_(mean, std) by Box-Muller: each pair of uniforms gives r*cos and r*sin. fp16/bf16 compute
// in fp32 with 24-bit uniforms; 1 - u1 > 0, so the log is finite.
template <typename A>
struct Normal {
  static constexpr bool kWide = sizeof(A) == 8;
  static constexpr int kPer = kWide ? 2 : 4;
  A mean, std;
  AG_HOST_DEVICE void operator()(const Words& w, A* out) const {
    constexpr A kTwoPi = static_cast<A>(6.283185307179586476925286766559);
AG_UNROLL
    for (int j = 0; j < kPer; j += 2) {
      A u1, u2;
      if constexpr (kWide) { u1 = unit<A, 53>(word64(w, 0)); u2 = unit<A, 53>(word64(w, 1)); }
      else { u1 = unit<A, 24>(w.v[j]); u2 = unit<A, 24>(w.v[j + 1]); }
      const A r = sqrt_(A(-2) * log1p_(-u1));
      const A theta = kTwoPi * u2;
      out[j] = fma_(r * cos_(theta), std, mean);
      out[j + 1] = fma_(r * sin_(theta), std, mean);
    }
  }
};

// randint / random_(low, high): low + v % (high - low), v one 32-bit word, or a 64-bit pair when the
// range needs it (the CPU generator's rule: range >= 2^32 for int64 / fp64 / fp32 / bf16 outputs).
struct Randint {
  int64_t low;
  uint64_t range;
  bool wide;
  AG_HOST_DEVICE int per() const { return wide ? 2 : 4; }
  AG_HOST_DEVICE void operator()(const Words& w, int64_t* out) const {
    if (wide) {
      for (int j = 0; j < 2; ++j) out[j] = static_cast<int64_t>(word64(w, j) % range + static_cast<uint64_t>(low));
    } else {
      for (int j = 0; j < 4; ++j) out[j] = static_cast<int64_t>(w.v[j] % range + static_cast<uint64_t>(low));
    }
  }
};

template <typename Op> AG_HOST_DEVICE int per_counter(const Op&) { return Op::kPer; }
AG_HOST_DEVICE int per_counter(const Randint& op) { return op.per(); }

// Counters a fill of n values takes from the stream.
AG_HOST_DEVICE uint64_t counters_for(int64_t n, int per) {
  return (static_cast<uint64_t>(n) + static_cast<uint64_t>(per) - 1) / static_cast<uint64_t>(per);
}

}  // namespace ampgrad::philox
