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

void k_conv(ConvMode mode, const Tensor& a, const Tensor& b, const Tensor* bias, Tensor& out, const ConvArgs& g) {
  if (out.numel() == 0) return;
  AG_DISPATCH_FLOAT(out.dtype(), "convolution", [&] {
    using T = scalar_t;
    const T* pb = bias ? bias->data<T>() : nullptr;
    switch (mode) {
      case ConvMode::kForward: conv_forward<T>(g, a.data<T>(), b.data<T>(), pb, out.data<T>()); break;
      case ConvMode::kBackwardData: conv_backward_data<T>(g, a.data<T>(), b.data<T>(), pb, out.data<T>()); break;
      case ConvMode::kBackwardWeight: conv_backward_weight<T>(g, a.data<T>(), b.data<T>(), out.data<T>()); break;
    }
  });
}
AG_REGISTER_KERNEL(convolution, CPU, k_conv);

}  // namespace
}  // namespace ampgrad::cpu
