// im2col / col2im over three spatial dims in conv space (Note [Convolution kernels]): shared by the
// convolution kernels (kernels/cpu/conv.cpp) and unfold / fold (kernels/cpu/spatial.cpp).
#pragma once
#include <algorithm>
#include <cstring>
#include "kernels/kernels.h"

namespace ampgrad::cpu {
namespace conv_detail {

// The output positions o in [0, n) whose input position o * s + off lies in [0, size): [lo, hi).
inline void valid_range(int64_t n, int64_t s, int64_t off, int64_t size, int64_t& lo, int64_t& hi) {
  // o * s + off >= 0  <=>  o >= ceil(-off / s);  o * s + off <= size - 1  <=>  o <= floor((size - 1 - off) / s)
  lo = off >= 0 ? 0 : (-off + s - 1) / s;
  const int64_t top = size - 1 - off;
  hi = top < 0 ? 0 : std::min<int64_t>(n, top / s + 1);
  if (lo > hi) lo = hi;
}

struct Geo {
  const ConvArgs& g;
  int64_t Cg, Og, Kdim, L, Lin;
  explicit Geo(const ConvArgs& a) : g(a) {
    Cg = a.C / a.G; Og = a.O / a.G;
    Kdim = Cg * a.k[0] * a.k[1] * a.k[2];
    L = a.out[0] * a.out[1] * a.out[2];
    Lin = a.in[0] * a.in[1] * a.in[2];
  }
  // Output rows per column block: the block's columns (Kdim x rows * out[2]) stay in L2 between
  // im2col and the GEMM's packing.
  int64_t block_rows() const {
    const int64_t target = 96 * 1024;  // elements
    return std::max<int64_t>(1, std::min<int64_t>(g.out[0] * g.out[1], target / std::max<int64_t>(Kdim * g.out[2], 1)));
  }
  // A 1x1 kernel at stride 1 without padding: the columns are the input itself.
  bool pointwise() const {
    for (int d = 0; d < 3; ++d)
      if (g.k[d] != 1 || g.stride[d] != 1 || g.pad[d] != 0 || g.out[d] != g.in[d]) return false;
    return true;
  }
};

// cols [Kdim, Lb] (row r = (c, t0, t1, t2)) from one group's input planes x [Cg, Lin], for the output
// positions of output rows [q0, q1) (an output row: one (o0, o1), out[2] positions; Lb = (q1 - q0) * out[2]).
template <typename T, typename A>
void im2col(const Geo& G, const T* x, A* cols, int64_t q0, int64_t q1) {
  const ConvArgs& g = G.g;
  const int64_t O2 = g.out[2], Lb = (q1 - q0) * O2;
  int64_t r = 0;
  for (int64_t c = 0; c < G.Cg; ++c)
    for (int64_t t0 = 0; t0 < g.k[0]; ++t0)
      for (int64_t t1 = 0; t1 < g.k[1]; ++t1)
        for (int64_t t2 = 0; t2 < g.k[2]; ++t2, ++r) {
          A* dst = cols + r * Lb;
          const int64_t off2 = t2 * g.dil[2] - g.pad[2];
          int64_t lo, hi;
          valid_range(O2, g.stride[2], off2, g.in[2], lo, hi);
          // (o0, o1) of output row q, stepped rather than divided (a 64-bit division per 32-float row
          // cost as much as the copy)
          int64_t o0 = q0 / g.out[1], o1 = q0 % g.out[1];
          for (int64_t q = q0; q < q1; ++q, dst += O2, o1 = o1 + 1 == g.out[1] ? (++o0, 0) : o1 + 1) {
            const int64_t i0 = o0 * g.stride[0] - g.pad[0] + t0 * g.dil[0];
            {
              const int64_t i1 = o1 * g.stride[1] - g.pad[1] + t1 * g.dil[1];
              if (i0 < 0 || i0 >= g.in[0] || i1 < 0 || i1 >= g.in[1]) {
                std::memset(dst, 0, sizeof(A) * O2);
                continue;
              }
              const T* src = x + ((c * g.in[0] + i0) * g.in[1] + i1) * g.in[2] + off2;
              for (int64_t o = 0; o < lo; ++o) dst[o] = A(0);
              if (g.stride[2] == 1)
                for (int64_t o = lo; o < hi; ++o) dst[o] = static_cast<A>(src[o]);
              else
                for (int64_t o = lo; o < hi; ++o) dst[o] = static_cast<A>(src[o * g.stride[2]]);
              for (int64_t o = hi; o < O2; ++o) dst[o] = A(0);
            }
          }
        }
}

// x [Cg, Lin] += col2im(cols [Kdim, Lb]) for output rows [q0, q1) (x zeroed by the caller).
template <typename A>
void col2im(const Geo& G, const A* cols, A* x, int64_t q0, int64_t q1) {
  const ConvArgs& g = G.g;
  const int64_t O2 = g.out[2], Lb = (q1 - q0) * O2;
  int64_t r = 0;
  for (int64_t c = 0; c < G.Cg; ++c)
    for (int64_t t0 = 0; t0 < g.k[0]; ++t0)
      for (int64_t t1 = 0; t1 < g.k[1]; ++t1)
        for (int64_t t2 = 0; t2 < g.k[2]; ++t2, ++r) {
          const A* src = cols + r * Lb;
          const int64_t off2 = t2 * g.dil[2] - g.pad[2];
          int64_t lo, hi;
          valid_range(O2, g.stride[2], off2, g.in[2], lo, hi);
          int64_t o0 = q0 / g.out[1], o1 = q0 % g.out[1];
          for (int64_t q = q0; q < q1; ++q, src += O2, o1 = o1 + 1 == g.out[1] ? (++o0, 0) : o1 + 1) {
            const int64_t i0 = o0 * g.stride[0] - g.pad[0] + t0 * g.dil[0];
            {
              const int64_t i1 = o1 * g.stride[1] - g.pad[1] + t1 * g.dil[1];
              if (i0 < 0 || i0 >= g.in[0] || i1 < 0 || i1 >= g.in[1]) continue;
              A* dst = x + ((c * g.in[0] + i0) * g.in[1] + i1) * g.in[2] + off2;
              if (g.stride[2] == 1)
                for (int64_t o = lo; o < hi; ++o) dst[o] += src[o];
              else
                for (int64_t o = lo; o < hi; ++o) dst[o * g.stride[2]] += src[o];
            }
          }
        }
}

}  // namespace conv_detail
}  // namespace ampgrad::cpu
