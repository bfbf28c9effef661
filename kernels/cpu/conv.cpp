// CPU convolution (Note [Convolution kernels]): im2col / col2im over three spatial dims plus the
// project's GEMM (kernels/cpu/gemm.h), threaded over the batch (each image's GEMMs serial) or, for a
// batch smaller than the thread count, inside each GEMM. fp16/bf16 are widened to fp32 on the way into
// the column buffer, multiplied and accumulated in fp32 and rounded once on the way out.
#include <cstring>
#include <mutex>
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/im2col.h"
#include "kernels/cpu/loops.h"

namespace ampgrad::cpu {
namespace {
using namespace conv_detail;

// Compute type: fp32 for everything but double.
template <typename T> using cacc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

inline void gemm_acc(const float* a, int64_t ars, int64_t acs, const float* b, int64_t brs, int64_t bcs, float* c,
                     int64_t ldc, int64_t M, int64_t N, int64_t K, float beta) {
  gemm_f32(a, ars, acs, b, brs, bcs, c, ldc, M, N, K, beta, 1.f);
}
inline void gemm_acc(const double* a, int64_t ars, int64_t acs, const double* b, int64_t brs, int64_t bcs, double* c,
                     int64_t ldc, int64_t M, int64_t N, int64_t K, double beta) {
  gemm_f64(a, ars, acs, b, brs, bcs, c, ldc, M, N, K, beta, 1.0);
}

template <typename T, typename A>
void widen(const T* src, A* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<A>(src[i]);
}

// Runs body(n0, n1) over the batch: one chunk per thread when the batch can feed every thread (the
// GEMMs inside then run serially), else the whole batch on this thread (the GEMMs thread themselves).
template <typename F>
void over_batch(int64_t N, F&& body) {
  const int nt = get_num_threads();
  parallel_for(N, N >= nt ? 1 : N + 1, body);
}

template <typename T>
void conv_forward(const ConvArgs& g, const T* x, const T* w, const T* bias, T* y) {
  using A = cacc_t<T>;
  constexpr bool same = std::is_same_v<T, A>;
  const Geo G(g);
  std::vector<A> wbuf;
  const A* wa;
  if constexpr (same) wa = w;
  else { wbuf.resize(g.O * G.Kdim); widen(w, wbuf.data(), g.O * G.Kdim); wa = wbuf.data(); }
  const bool pw = G.pointwise();
  over_batch(g.N, [&](int64_t n0, int64_t n1) {
    const int64_t R = G.block_rows(), rows = g.out[0] * g.out[1], O2 = g.out[2];
    std::vector<A> cols(pw ? (same ? 0 : G.Kdim * G.L) : G.Kdim * R * O2), acc(same ? 0 : G.Og * G.L);
    for (int64_t n = n0; n < n1; ++n)
      for (int64_t gi = 0; gi < g.G; ++gi) {
        const T* xg = x + (n * g.C + gi * G.Cg) * G.Lin;
        T* yg = y + (n * g.O + gi * G.Og) * G.L;
        A* C = same ? reinterpret_cast<A*>(yg) : acc.data();
        A beta = 0;
        if (bias) {
          for (int64_t o = 0; o < G.Og; ++o) std::fill(C + o * G.L, C + (o + 1) * G.L, static_cast<A>(bias[gi * G.Og + o]));
          beta = 1;
        }
        const A* Wg = wa + gi * G.Og * G.Kdim;
        if (pw) {
          const A* B;
          if constexpr (same) B = xg;
          else { widen(xg, cols.data(), G.Kdim * G.L); B = cols.data(); }
          gemm_acc(Wg, G.Kdim, 1, B, G.L, 1, C, G.L, G.Og, G.L, G.Kdim, beta);
        } else {
          for (int64_t q0 = 0; q0 < rows; q0 += R) {  // column blocks that stay in cache
            const int64_t q1 = std::min(rows, q0 + R), Lb = (q1 - q0) * O2;
            im2col(G, xg, cols.data(), q0, q1);
            gemm_acc(Wg, G.Kdim, 1, cols.data(), Lb, 1, C + q0 * O2, G.L, G.Og, Lb, G.Kdim, beta);
          }
        }
        if constexpr (!same)
          for (int64_t i = 0; i < G.Og * G.L; ++i) yg[i] = static_cast<T>(C[i]);
      }
  });
}

// The input zero-padded by the convolution's padding, images [n0, n1): [n1 - n0, C, D + 2p0, H + 2p1, W + 2p2]
// plus `slack` floats for the micro-kernels' over-read (Note [Implicit GEMM convolution]).
struct Padded {
  const ConvArgs& g;
  int64_t Dp, Hp, Wp, plane;
  static constexpr int64_t slack = 128;
  explicit Padded(const ConvArgs& a) : g(a) {
    Dp = a.in[0] + 2 * a.pad[0]; Hp = a.in[1] + 2 * a.pad[1]; Wp = a.in[2] + 2 * a.pad[2];
    plane = Dp * Hp * Wp;
  }
  std::vector<float> pad(const float* x, int64_t n0, int64_t n1) const {
    const int64_t Lin = g.in[0] * g.in[1] * g.in[2];
    std::vector<float> xp(static_cast<size_t>((n1 - n0) * g.C * plane + slack), 0.f);
    parallel_for((n1 - n0) * g.C, std::max<int64_t>(1, 16384 / std::max<int64_t>(plane, 1)), [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        float* dst = xp.data() + p * plane;
        const float* src = x + (n0 * g.C + p) * Lin;
        for (int64_t i0 = 0; i0 < g.in[0]; ++i0)
          for (int64_t i1 = 0; i1 < g.in[1]; ++i1)
            std::memcpy(dst + ((i0 + g.pad[0]) * Hp + i1 + g.pad[1]) * Wp + g.pad[2], src + (i0 * g.in[1] + i1) * g.in[2],
                        sizeof(float) * g.in[2]);
      }
    });
    return xp;
  }
  // koff[k] for k = (c, t0, t1, t2) of one group: where tap k of an output position reads, from the position's corner.
  std::vector<int64_t> koff(int64_t Cg, size_t size) const {
    std::vector<int64_t> k_(size);
    size_t k = 0;
    for (int64_t c = 0; c < Cg; ++c)
      for (int64_t t0 = 0; t0 < g.k[0]; ++t0)
        for (int64_t t1 = 0; t1 < g.k[1]; ++t1)
          for (int64_t t2 = 0; t2 < g.k[2]; ++t2, ++k)
            k_[k] = c * plane + (t0 * g.dil[0] * Hp + t1 * g.dil[1]) * Wp + t2 * g.dil[2];
    for (size_t j = k; j < size; ++j) k_[j] = k ? k_[k - 1] : 0;  // padding rows read a valid tap
    return k_;
  }
  // Where output row q = (o0, o1) starts in a padded image.
  int64_t row_off(int64_t q) const {
    const int64_t o0 = q / g.out[1], o1 = q % g.out[1];
    return (o0 * g.stride[0] * Hp + o1 * g.stride[1]) * Wp;
  }
};

// Note [Implicit GEMM convolution] (fp32 forward, AVX-512, stride 1 or 2 along the last dim): the input
// is zero-padded once into xp [N, C, D + 2p0, H + 2p1, W + 2p2] (plus slack for the micro-kernel's
// over-read) and every output row (n, g, o0, o1) is one product W_g [Og, Kdim] . B [Kdim, out2] whose
// row k = (c, t0, t1, t2) starts at the padded input element the tap reads: B(k, o2) = xp[row base +
// koff[k] + o2 * stride2]. No im2col matrix is written (it cost as much as the GEMM for a 3x3 conv of 32
// channels). Rows are split between threads; each accumulates the whole K in registers, as im2col's
// GEMM did, and adds to a bias-filled output.
bool conv_forward_implicit(const ConvArgs& g, const float* x, const float* w, const float* bias, float* y) {
  const Geo G(g);
  if (!has_avx512_f32() || g.stride[2] > 2 || G.pointwise() || g.out[2] < 8) return false;
  const Padded P(g);
  const int64_t plane = P.plane;
  const std::vector<float> xp = P.pad(x, 0, g.N);
  const std::vector<int64_t> koff = P.koff(G.Cg, static_cast<size_t>(G.Kdim));
  const int64_t apg = f32_packed_a_size(G.Og, G.Kdim);
  std::vector<float> pa(static_cast<size_t>(apg * g.G));
  for (int64_t gi = 0; gi < g.G; ++gi) f32_pack_a(w + gi * G.Og * G.Kdim, G.Kdim, 1, G.Og, G.Kdim, pa.data() + gi * apg);
  const int64_t rows = g.out[0] * g.out[1];
  parallel_for(g.N * g.G * rows, 4, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t q = r % rows, ng = r / rows, n = ng / g.G, gi = ng % g.G;
      float* yr = y + (n * g.O + gi * G.Og) * G.L + q * g.out[2];
      float beta = 0.f;
      if (bias) {
        for (int64_t o = 0; o < G.Og; ++o) std::fill(yr + o * G.L, yr + o * G.L + g.out[2], bias[gi * G.Og + o]);
        beta = 1.f;
      }
      const float* base = xp.data() + (n * g.C + gi * G.Cg) * plane + P.row_off(q);
      gemm_f32_koff(pa.data() + gi * apg, G.Og, G.Kdim, base, koff.data(), g.stride[2], yr, G.L, g.out[2], beta);
    }
  });
  return true;
}

template <typename T>
bool conv_forward_implicit(const ConvArgs&, const T*, const T*, const T*, T*) { return false; }  // fp32 only

// The input gradient of a stride-1 convolution (or a stride-1 transposed convolution) is the forward
// convolution of gy, padded by d (k - 1) - p, with the kernel flipped and its two channel dims swapped
// per group: gx[c] = sum over o, t of W[o, c, t] gy[o, i + p - t d]. It runs on the implicit GEMM.
template <typename T>
bool conv_backward_data_implicit(const ConvArgs&, const T*, const T*, const T*, T*) { return false; }
bool conv_backward_data_implicit(const ConvArgs& g, const float* gy, const float* w, const float* bias, float* gx) {
  ConvArgs f = g;
  for (int d = 0; d < 3; ++d) {
    if (g.stride[d] != 1 || g.pad[d] > g.dil[d] * (g.k[d] - 1)) return false;
    f.in[d] = g.out[d];
    f.out[d] = g.in[d];
    f.pad[d] = g.dil[d] * (g.k[d] - 1) - g.pad[d];
  }
  f.C = g.O;
  f.O = g.C;
  if (!has_avx512_f32() || f.out[2] < 8) return false;
  const Geo G(g);
  const int64_t taps = g.k[0] * g.k[1] * g.k[2];
  std::vector<float> wf(static_cast<size_t>(g.O * G.Kdim));  // [C, Og, taps] per group, taps reversed
  for (int64_t gi = 0; gi < g.G; ++gi)
    for (int64_t o = 0; o < G.Og; ++o)
      for (int64_t c = 0; c < G.Cg; ++c) {
        const float* src = w + ((gi * G.Og + o) * G.Cg + c) * taps;
        float* dst = wf.data() + ((gi * G.Cg + c) * G.Og + o) * taps;
        for (int64_t t = 0; t < taps; ++t) dst[t] = src[taps - 1 - t];
      }
  return conv_forward_implicit(f, gy, wf.data(), bias, gx);
}

// Note [Sub-pixel transposed convolution]: with stride s > 1 (dilation 1) the x-shaped output splits into
// s0 * s1 * s2 phases, i = s m + rho per dim, and each phase is an ordinary stride-1 convolution of gy: the
// taps t = tau + s u with tau = (rho + p) mod s reach i from gy[m + c - u], c = (rho + p - tau) / s, so phase
// rho is the correlation of gy (zero-padded by U - 1 - c in front) with the sub-kernel w[tau + s (U - 1 - v)],
// channels swapped as in the stride-1 case. Each phase runs on the implicit GEMM and is scattered into its
// lattice of gx; no column buffer and no col2im's scattered adds (a 4x4 stride-2 transposed convolution of
// 32 channels ran ~25% faster). Phases without taps (k < s) get the bias alone. The implicit GEMM's limits
// (AVX-512, rows of at least 8 outputs, not a 1x1x1 sub-kernel) are checked for every phase before any is
// computed; outside them the caller takes col2im.
template <typename T>
bool conv_backward_data_subpixel(const ConvArgs&, const T*, const T*, const T*, T*) { return false; }
bool conv_backward_data_subpixel(const ConvArgs& g, const float* gy, const float* w, const float* bias, float* gx) {
  if (!has_avx512_f32()) return false;
  bool strided = false;
  for (int d = 0; d < 3; ++d) {
    if (g.dil[d] != 1) return false;
    strided |= g.stride[d] > 1;
  }
  if (!strided) return false;
  const Geo G(g);
  const int64_t s[3] = {g.stride[0], g.stride[1], g.stride[2]};
  struct Phase { int64_t rho[3], tau[3], U[3], M[3], P[3]; };
  std::vector<Phase> phases;
  for (int64_t r0 = 0; r0 < s[0]; ++r0)
    for (int64_t r1 = 0; r1 < s[1]; ++r1)
      for (int64_t r2 = 0; r2 < s[2]; ++r2) {
        Phase ph{{r0, r1, r2}, {}, {}, {}, {}};
        for (int d = 0; d < 3; ++d) {
          ph.tau[d] = (ph.rho[d] + g.pad[d]) % s[d];
          const int64_t c = (ph.rho[d] + g.pad[d] - ph.tau[d]) / s[d];
          ph.U[d] = ph.tau[d] < g.k[d] ? (g.k[d] - ph.tau[d] + s[d] - 1) / s[d] : 0;
          ph.M[d] = ph.rho[d] < g.in[d] ? (g.in[d] - ph.rho[d] + s[d] - 1) / s[d] : 0;
          ph.P[d] = ph.U[d] - 1 - c;
        }
        if (ph.M[0] * ph.M[1] * ph.M[2] == 0) continue;
        const int64_t Ut = ph.U[0] * ph.U[1] * ph.U[2];
        if (Ut > 0 && (ph.M[2] < 8 || Ut == 1)) return false;
        phases.push_back(ph);
      }
  const int64_t taps = g.k[0] * g.k[1] * g.k[2];
  for (const Phase& ph : phases) {
    const int64_t M0 = ph.M[0], M1 = ph.M[1], M2 = ph.M[2], Mn = M0 * M1 * M2;
    const int64_t Ut = ph.U[0] * ph.U[1] * ph.U[2];
    std::vector<float> yb(static_cast<size_t>(g.N * g.C * Mn));
    if (Ut == 0) {
      for (int64_t nc = 0; nc < g.N * g.C; ++nc)
        std::fill(yb.data() + nc * Mn, yb.data() + (nc + 1) * Mn, bias ? bias[nc % g.C] : 0.f);
    } else {
      ConvArgs f = g;
      f.C = g.O;
      f.O = g.C;
      int64_t Lp[3];
      for (int d = 0; d < 3; ++d) {
        Lp[d] = ph.M[d] + ph.U[d] - 1;
        f.in[d] = Lp[d]; f.out[d] = ph.M[d]; f.k[d] = ph.U[d]; f.stride[d] = 1; f.pad[d] = 0; f.dil[d] = 1;
      }
      const int64_t Lpn = Lp[0] * Lp[1] * Lp[2], Ln = g.out[0] * g.out[1] * g.out[2];
      std::vector<float> gyp(static_cast<size_t>(g.N * g.O * Lpn), 0.f);  // gy placed at offset -P per dim
      parallel_for(g.N * g.O, 1, [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p)
          for (int64_t a0 = 0; a0 < Lp[0]; ++a0) {
            const int64_t j0 = a0 - ph.P[0];
            if (j0 < 0 || j0 >= g.out[0]) continue;
            for (int64_t a1 = 0; a1 < Lp[1]; ++a1) {
              const int64_t j1 = a1 - ph.P[1];
              if (j1 < 0 || j1 >= g.out[1]) continue;
              const int64_t lo = std::max<int64_t>(0, ph.P[2]), hi = std::min<int64_t>(Lp[2], g.out[2] + ph.P[2]);
              if (hi > lo)
                std::memcpy(gyp.data() + p * Lpn + (a0 * Lp[1] + a1) * Lp[2] + lo,
                            gy + p * Ln + (j0 * g.out[1] + j1) * g.out[2] + (lo - ph.P[2]), sizeof(float) * (hi - lo));
            }
          }
      });
      std::vector<float> wf(static_cast<size_t>(g.C * G.Og * Ut));  // [C, Og, U] per group: sub-kernel, flipped
      for (int64_t gi = 0; gi < g.G; ++gi)
        for (int64_t o = 0; o < G.Og; ++o)
          for (int64_t c = 0; c < G.Cg; ++c) {
            const float* src = w + ((gi * G.Og + o) * G.Cg + c) * taps;
            float* dst = wf.data() + ((gi * G.Cg + c) * G.Og + o) * Ut;
            for (int64_t v0 = 0, v = 0; v0 < ph.U[0]; ++v0)
              for (int64_t v1 = 0; v1 < ph.U[1]; ++v1)
                for (int64_t v2 = 0; v2 < ph.U[2]; ++v2, ++v) {
                  const int64_t t0 = ph.tau[0] + s[0] * (ph.U[0] - 1 - v0), t1 = ph.tau[1] + s[1] * (ph.U[1] - 1 - v1),
                                t2 = ph.tau[2] + s[2] * (ph.U[2] - 1 - v2);
                  dst[v] = src[(t0 * g.k[1] + t1) * g.k[2] + t2];
                }
          }
      // Its limits were checked above, so it runs; were it to refuse, col2im recomputes all of gx.
      if (!conv_forward_implicit(f, gyp.data(), wf.data(), bias, yb.data())) return false;
    }
    parallel_for(g.N * g.C, 1, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p)
        for (int64_t m0 = 0; m0 < M0; ++m0)
          for (int64_t m1 = 0; m1 < M1; ++m1) {
            const float* src = yb.data() + p * Mn + (m0 * M1 + m1) * M2;
            float* dst = gx + p * G.Lin + ((ph.rho[0] + s[0] * m0) * g.in[1] + ph.rho[1] + s[1] * m1) * g.in[2] + ph.rho[2];
            for (int64_t m2 = 0; m2 < M2; ++m2) dst[m2 * s[2]] = src[m2];
          }
    });
  }
  return true;
}

// x-shaped out = col2im(w^T @ gy) (+ bias [C]): the input gradient, or a transposed convolution.
template <typename T>
void conv_backward_data(const ConvArgs& g, const T* gy, const T* w, const T* bias, T* gx) {
  using A = cacc_t<T>;
  constexpr bool same = std::is_same_v<T, A>;
  const Geo G(g);
  std::vector<A> wbuf;
  const A* wa;
  if constexpr (same) wa = w;
  else { wbuf.resize(g.O * G.Kdim); widen(w, wbuf.data(), g.O * G.Kdim); wa = wbuf.data(); }
  const bool pw = G.pointwise();
  over_batch(g.N, [&](int64_t n0, int64_t n1) {
    const int64_t R = G.block_rows(), rows = g.out[0] * g.out[1], O2 = g.out[2];
    std::vector<A> cols(pw ? 0 : G.Kdim * R * O2), gyb(same ? 0 : G.Og * G.L), acc(same ? 0 : G.Cg * G.Lin);
    for (int64_t n = n0; n < n1; ++n)
      for (int64_t gi = 0; gi < g.G; ++gi) {
        const T* gyg = gy + (n * g.O + gi * G.Og) * G.L;
        T* gxg = gx + (n * g.C + gi * G.Cg) * G.Lin;
        const A* B;
        if constexpr (same) B = gyg;
        else { widen(gyg, gyb.data(), G.Og * G.L); B = gyb.data(); }
        A* X = same ? reinterpret_cast<A*>(gxg) : acc.data();
        const A* Wt = wa + gi * G.Og * G.Kdim;  // w_g^T: [Kdim, Og] at strides (1, Kdim)
        if (pw) {
          gemm_acc(Wt, 1, G.Kdim, B, G.L, 1, X, G.L, G.Kdim, G.L, G.Og, A(0));
        } else {
          std::memset(X, 0, sizeof(A) * G.Cg * G.Lin);
          for (int64_t q0 = 0; q0 < rows; q0 += R) {
            const int64_t q1 = std::min(rows, q0 + R), Lb = (q1 - q0) * O2;
            gemm_acc(Wt, 1, G.Kdim, B + q0 * O2, G.L, 1, cols.data(), Lb, G.Kdim, Lb, G.Og, A(0));
            col2im(G, cols.data(), X, q0, q1);
          }
        }
        if (bias)
          for (int64_t c = 0; c < G.Cg; ++c) {
            const A b = static_cast<A>(bias[gi * G.Cg + c]);
            for (int64_t i = 0; i < G.Lin; ++i) X[c * G.Lin + i] += b;
          }
        if constexpr (!same)
          for (int64_t i = 0; i < G.Cg * G.Lin; ++i) gxg[i] = static_cast<T>(X[i]);
      }
  });
}

// Note [Implicit GEMM weight gradient] (kernels/cpu/gemm_avx512.cpp): fp32 on AVX-512, the last dim at stride 1
// or 2, rows of at least 8 outputs. Images go in chunks (padded input and packed gy^T, ~4 MB); the tiles of gw^T
// are split between threads (disjoint: no reduction, the same sums for any thread count), each thread taking
// one image at a time over its tiles.
template <typename T>
bool conv_backward_weight_implicit(const ConvArgs&, const T*, const T*, T*) { return false; }
bool conv_backward_weight_implicit(const ConvArgs& g, const float* x, const float* gy, float* gw) {
  const Geo G(g);
  if (!has_avx512_f32() || g.stride[2] > 2 || G.pointwise() || g.out[2] < 8) return false;
  const Padded P(g);
  const int64_t rows = g.out[0] * g.out[1], pbs = f32_packed_b_size(G.L, G.Og);
  const std::vector<int64_t> koff = P.koff(G.Cg, static_cast<size_t>(conv_wgrad_koff_size(G.Kdim)));
  std::vector<int64_t> row_off(static_cast<size_t>(rows));
  for (int64_t q = 0; q < rows; ++q) row_off[q] = P.row_off(q);
  const int64_t per_image = (pbs + g.C * P.plane) * int64_t(sizeof(float));
  const int64_t chunk = std::max<int64_t>(1, std::min<int64_t>(g.N, (int64_t{4} << 20) / std::max<int64_t>(per_image, 1)));
  const int64_t tiles = conv_wgrad_tiles(G.Kdim, G.Og);
  std::vector<float> ct(static_cast<size_t>(g.G * G.Kdim * G.Og));  // per group [Kdim, Og]
  std::vector<float> pb;
  for (int64_t n0 = 0; n0 < g.N; n0 += chunk) {
    const int64_t n1 = std::min(g.N, n0 + chunk), nb = n1 - n0;
    const std::vector<float> xp = P.pad(x, n0, n1);
    pb.resize(static_cast<size_t>(nb * g.G * pbs));
    parallel_for(nb * g.G, 1, [&](int64_t p0, int64_t p1) {  // gy^T of each (image, group), images inner
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t gi = p / nb, n = p % nb;
        f32_pack_b(gy + ((n0 + n) * g.O + gi * G.Og) * G.L, 1, G.L, G.L, G.Og, pb.data() + p * pbs);
      }
    });
    for (int64_t gi = 0; gi < g.G; ++gi)
      // images outer: one image's padded input and gy^T stay in L2 while this thread's tiles pass over them
      parallel_for(tiles, 1, [&](int64_t t0, int64_t t1) {
        for (int64_t n = 0; n < nb; ++n)
          for (int64_t t = t0; t < t1; ++t)
            conv_wgrad_f32(xp.data() + (n * g.C + gi * G.Cg) * P.plane, row_off.data(), rows, g.out[2], g.stride[2], koff.data(),
                           G.Kdim, pb.data() + (gi * nb + n) * pbs, G.Og, ct.data() + gi * G.Kdim * G.Og, t, n0 + n > 0);
      });
  }
  for (int64_t gi = 0; gi < g.G; ++gi)
    for (int64_t o = 0; o < G.Og; ++o)
      for (int64_t k = 0; k < G.Kdim; ++k) gw[(gi * G.Og + o) * G.Kdim + k] = ct[(gi * G.Kdim + k) * G.Og + o];
  return true;
}

// gw [O, Kdim] = sum over the batch of gy_g [Og, L] @ cols^T [L, Kdim]; each batch chunk sums into its
// own buffer, added up under a lock at the end.
template <typename T>
void conv_backward_weight(const ConvArgs& g, const T* x, const T* gy, T* gw) {
  using A = cacc_t<T>;
  constexpr bool same = std::is_same_v<T, A>;
  const Geo G(g);
  std::vector<A> total(g.O * G.Kdim, A(0));
  std::mutex mu;
  const bool pw = G.pointwise();
  over_batch(g.N, [&](int64_t n0, int64_t n1) {
    const int64_t R = G.block_rows(), rows = g.out[0] * g.out[1], O2 = g.out[2];
    std::vector<A> cols(pw ? (same ? 0 : G.Kdim * G.L) : G.Kdim * R * O2), gyb(same ? 0 : G.Og * G.L), acc(g.O * G.Kdim, A(0));
    for (int64_t n = n0; n < n1; ++n)
      for (int64_t gi = 0; gi < g.G; ++gi) {
        const T* xg = x + (n * g.C + gi * G.Cg) * G.Lin;
        const T* gyg = gy + (n * g.O + gi * G.Og) * G.L;
        const A* Y;
        if constexpr (same) Y = gyg;
        else { widen(gyg, gyb.data(), G.Og * G.L); Y = gyb.data(); }
        A* Cw = acc.data() + gi * G.Og * G.Kdim;
        if (pw) {
          const A* B;
          if constexpr (same) B = xg;
          else { widen(xg, cols.data(), G.Kdim * G.L); B = cols.data(); }
          gemm_acc(Y, G.L, 1, B, 1, G.L, Cw, G.Kdim, G.Og, G.Kdim, G.L, A(1));
        } else {
          for (int64_t q0 = 0; q0 < rows; q0 += R) {
            const int64_t q1 = std::min(rows, q0 + R), Lb = (q1 - q0) * O2;
            im2col(G, xg, cols.data(), q0, q1);
            gemm_acc(Y + q0 * O2, G.L, 1, cols.data(), 1, Lb, Cw, G.Kdim, G.Og, G.Kdim, Lb, A(1));
          }
        }
      }
    std::lock_guard<std::mutex> lock(mu);
    for (size_t i = 0; i < acc.size(); ++i) total[i] += acc[i];
  });
  for (int64_t i = 0; i < g.O * G.Kdim; ++i) gw[i] = static_cast<T>(total[i]);
}

// Integer convolution (torch's slow_conv2d / slow_conv3d / slow_conv_transpose for integer dtypes):
// direct loops, accumulated in uint64 so that overflow wraps modulo 2^bits as torch's does (and is
// not undefined behaviour). kForward: y from (x, w) + bias [O]; kBackwardData: x-shaped from
// (y-shaped, w) + bias [C] (a transposed convolution's forward). No gradients: integers have none.
template <typename T>
void conv_int(ConvMode mode, const ConvArgs& g, const T* a, const T* w, const T* bias, T* out) {
  using U = uint64_t;
  const int64_t Cg = g.C / g.G, Og = g.O / g.G;
  const int64_t Lin = g.in[0] * g.in[1] * g.in[2], L = g.out[0] * g.out[1] * g.out[2], K = g.k[0] * g.k[1] * g.k[2];
  // Calls f(tap, input position) for each tap of output position (p0, p1, p2) that lands in the input.
  auto taps = [&g](int64_t p0, int64_t p1, int64_t p2, auto&& f) {
    for (int64_t t0 = 0; t0 < g.k[0]; ++t0) {
      const int64_t q0 = p0 * g.stride[0] - g.pad[0] + t0 * g.dil[0];
      if (q0 < 0 || q0 >= g.in[0]) continue;
      for (int64_t t1 = 0; t1 < g.k[1]; ++t1) {
        const int64_t q1 = p1 * g.stride[1] - g.pad[1] + t1 * g.dil[1];
        if (q1 < 0 || q1 >= g.in[1]) continue;
        for (int64_t t2 = 0; t2 < g.k[2]; ++t2) {
          const int64_t q2 = p2 * g.stride[2] - g.pad[2] + t2 * g.dil[2];
          if (q2 < 0 || q2 >= g.in[2]) continue;
          f((t0 * g.k[1] + t1) * g.k[2] + t2, (q0 * g.in[1] + q1) * g.in[2] + q2);
        }
      }
    }
  };
  if (mode == ConvMode::kForward) {
    parallel_for(g.N * g.O, 1, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t n = i / g.O, o = i % g.O, gi = o / Og;
        int64_t p = 0;
        for (int64_t p0 = 0; p0 < g.out[0]; ++p0)
          for (int64_t p1 = 0; p1 < g.out[1]; ++p1)
            for (int64_t p2 = 0; p2 < g.out[2]; ++p2, ++p) {
              U acc = bias ? static_cast<U>(bias[o]) : U(0);
              for (int64_t c = 0; c < Cg; ++c) {
                const T* xc = a + (n * g.C + gi * Cg + c) * Lin;
                const T* wc = w + (o * Cg + c) * K;
                taps(p0, p1, p2, [&](int64_t t, int64_t q) { acc += static_cast<U>(xc[q]) * static_cast<U>(wc[t]); });
              }
              out[i * L + p] = static_cast<T>(acc);
            }
      }
    });
  } else {
    AG_CHECK(mode == ConvMode::kBackwardData, "convolution: integer weight gradients are not defined");
    parallel_for(g.N * g.C, 1, [&](int64_t i0, int64_t i1) {
      std::vector<U> acc(Lin);
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t n = i / g.C, c = i % g.C, gi = c / Cg, cc = c % Cg;
        std::fill(acc.begin(), acc.end(), bias ? static_cast<U>(bias[c]) : U(0));
        for (int64_t o = gi * Og; o < (gi + 1) * Og; ++o) {
          const T* yo = a + (n * g.O + o) * L;
          const T* wc = w + (o * Cg + cc) * K;
          int64_t p = 0;
          for (int64_t p0 = 0; p0 < g.out[0]; ++p0)
            for (int64_t p1 = 0; p1 < g.out[1]; ++p1)
              for (int64_t p2 = 0; p2 < g.out[2]; ++p2, ++p) {
                const U gv = static_cast<U>(yo[p]);
                taps(p0, p1, p2, [&](int64_t t, int64_t q) { acc[q] += gv * static_cast<U>(wc[t]); });
              }
        }
        for (int64_t q = 0; q < Lin; ++q) out[i * Lin + q] = static_cast<T>(acc[q]);
      }
    });
  }
}

void k_conv(ConvMode mode, const Tensor& a, const Tensor& b, const Tensor* bias, Tensor& out, const ConvArgs& g) {
  if (out.numel() == 0) return;
  if (is_integral(out.dtype(), false)) {
    switch (out.dtype()) {
      AG_DISPATCH_INT(out.dtype(), "convolution", [&] {
        conv_int<scalar_t>(mode, g, a.data<scalar_t>(), b.data<scalar_t>(), bias ? bias->data<scalar_t>() : nullptr,
                           out.data<scalar_t>());
      })
      default: AG_THROW(NotImplementedError, "\"convolution\" not implemented for '", scalar_type_name(out.dtype()), "'");
    }
    return;
  }
  AG_DISPATCH_FLOAT(out.dtype(), "convolution", [&] {
    using T = scalar_t;
    const T* pb = bias ? bias->data<T>() : nullptr;
    switch (mode) {
      case ConvMode::kForward:
        if (!conv_forward_implicit(g, a.data<T>(), b.data<T>(), pb, out.data<T>()))
          conv_forward<T>(g, a.data<T>(), b.data<T>(), pb, out.data<T>());
        break;
      case ConvMode::kBackwardData:
        if (!conv_backward_data_implicit(g, a.data<T>(), b.data<T>(), pb, out.data<T>()) &&
            !conv_backward_data_subpixel(g, a.data<T>(), b.data<T>(), pb, out.data<T>()))
          conv_backward_data<T>(g, a.data<T>(), b.data<T>(), pb, out.data<T>());
        break;
      case ConvMode::kBackwardWeight:
        if (!conv_backward_weight_implicit(g, a.data<T>(), b.data<T>(), out.data<T>()))
          conv_backward_weight<T>(g, a.data<T>(), b.data<T>(), out.data<T>());
        break;
    }
  });
}
AG_REGISTER_KERNEL(convolution, CPU, k_conv);

}  // namespace
}  // namespace ampgrad::cpu
