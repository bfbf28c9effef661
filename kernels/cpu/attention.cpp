// Fused scaled-dot-product attention on the CPU (Note [Fused attention] in kernels/kernels.h), flash
// style: per (batch, head, query block) an online softmax over key blocks in the compute type (fp32
// for fp32/fp16/bf16, fp64 for fp64); the L x S matrix never exists, the logsumexp is saved, and the
// backward recomputes P block by block from it. Causal runs skip the key blocks above the diagonal.
#include <Eigen/Core>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
// The AVX-512 tile is compiled for AVX-512 whatever the build's -march and picked at run time
// (Note [Portable builds] in CMakeLists.txt), as the GEMM's kernels are.
#define AG_ATTN_AVX512 1
#define AG_ATTN_TARGET __attribute__((target("avx512f")))
#endif
#include <cmath>
#include <limits>
#include <vector>
#include "kernels/cpu/loops.h"

namespace ampgrad::cpu {
namespace {

constexpr int64_t kBQ = 64;  // query rows per block at most (32 when causal: less work above the diagonal)
constexpr int64_t kBK = 128;  // keys per block (a multiple of kW)
constexpr int64_t kW = 64;   // tile width: every packed buffer's row length is a multiple of it

inline int64_t pad(int64_t n) { return (n + kW - 1) / kW * kW; }

// C[R rows][kW cols] (+)= sum_{e<K} A(r, e) * B[e][0..kW): A(r, e) = a[r * ars + e * acs]. The kW-wide
// rows of C stay in registers (R * kW / 16 zmm for floats) over the whole K loop.
template <typename A, int R>
inline void tile(int64_t K, const A* a, int64_t ars, int64_t acs, const A* b, int64_t ldb, A* c, int64_t ldc, bool acc) {
  A t[R][kW];
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < kW; ++j) t[r][j] = acc ? c[r * ldc + j] : A(0);
  for (int64_t e = 0; e < K; ++e) {
    const A* br = b + e * ldb;
    for (int r = 0; r < R; ++r) {
      const A s = a[r * ars + e * acs];
#pragma omp simd
      for (int j = 0; j < kW; ++j) t[r][j] += s * br[j];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < kW; ++j) c[r * ldc + j] = t[r][j];
}

#ifdef AG_ATTN_AVX512
// The fp32 tile with the accumulators spelled as registers: R rows x 4 zmm.
template <int R>
AG_ATTN_TARGET void tile_f32(int64_t K, const float* a, int64_t ars, int64_t acs, const float* b, int64_t ldb, float* c, int64_t ldc, bool acc) {
  static_assert(kW == 64, "tile_f32 covers 64 columns");
  __m512 t[R][4];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) t[r][q] = acc ? _mm512_loadu_ps(c + r * ldc + 16 * q) : _mm512_setzero_ps();
  for (int64_t e = 0; e < K; ++e) {
    const float* br = b + e * ldb;
    const __m512 b0 = _mm512_loadu_ps(br), b1 = _mm512_loadu_ps(br + 16), b2 = _mm512_loadu_ps(br + 32), b3 = _mm512_loadu_ps(br + 48);
    const float* ae = a + e * acs;
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 s = _mm512_set1_ps(ae[r * ars]);
      t[r][0] = _mm512_fmadd_ps(s, b0, t[r][0]);
      t[r][1] = _mm512_fmadd_ps(s, b1, t[r][1]);
      t[r][2] = _mm512_fmadd_ps(s, b2, t[r][2]);
      t[r][3] = _mm512_fmadd_ps(s, b3, t[r][3]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) _mm512_storeu_ps(c + r * ldc + 16 * q, t[r][q]);
}
#endif

// C[M][N] (+)= A[M][K] @ B[K][N] with N padded: b and c rows are readable / writable up to pad(N).
template <typename A>
void gemm(int64_t M, int64_t N, int64_t K, const A* a, int64_t ars, int64_t acs, const A* b, int64_t ldb, A* c, int64_t ldc,
          bool acc) {
  for (int64_t j = 0; j < N; j += kW) {
    int64_t i = 0;
#ifdef AG_ATTN_AVX512
    static const bool avx512 = __builtin_cpu_supports("avx512f");
    if constexpr (std::is_same_v<A, float>) if (avx512) {
      for (; i + 6 <= M; i += 6) tile_f32<6>(K, a + i * ars, ars, acs, b + j, ldb, c + i * ldc + j, ldc, acc);
      for (; i + 2 <= M; i += 2) tile_f32<2>(K, a + i * ars, ars, acs, b + j, ldb, c + i * ldc + j, ldc, acc);
      for (; i < M; ++i) tile_f32<1>(K, a + i * ars, ars, acs, b + j, ldb, c + i * ldc + j, ldc, acc);
      continue;
    }
#endif
    for (; i + 4 <= M; i += 4) tile<A, 4>(K, a + i * ars, ars, acs, b + j, ldb, c + i * ldc + j, ldc, acc);
    for (; i < M; ++i) tile<A, 1>(K, a + i * ars, ars, acs, b + j, ldb, c + i * ldc + j, ldc, acc);
  }
}

// x[0..n) = exp(x - m), returns the sum (Eigen's vectorized exp).
template <typename A>
inline A exp_sum(A* x, int64_t n, A m) {
  Eigen::Map<Eigen::Array<A, Eigen::Dynamic, 1>> v(x, n);
  v = (v - m).exp();
  return v.sum();
}

struct View4 {  // strides (elements) of a [B, H, L, E] operand with a dense last dim
  int64_t b, h, l;
  explicit View4(const Tensor& t) : b(t.strides()[0]), h(t.strides()[1]), l(t.strides()[2]) {}
};

template <typename T, typename A>
struct Masker {  // applies is_causal and the optional mask to a block of scores
  const char* mask = nullptr;
  bool is_bool = false;
  int64_t mb = 0, mh = 0, ml = 0, ms = 0;
  bool causal = false;
  Masker(const Tensor& m, bool c) : causal(c) {
    if (!m.defined()) return;
    mask = static_cast<const char*>(m.data_ptr());
    is_bool = m.dtype() == ScalarType::Bool;
    mb = m.strides()[0]; mh = m.strides()[1]; ml = m.strides()[2]; ms = m.strides()[3];
  }
  bool any() const { return mask || causal; }
  // s[i * lds + j] for query rows i0 + i (i < nq) and keys j0 + j (j < nk).
  void apply(A* s, int64_t lds, int64_t b, int64_t h, int64_t i0, int64_t nq, int64_t j0, int64_t nk) const {
    const A ninf = -std::numeric_limits<A>::infinity();
    for (int64_t i = 0; i < nq; ++i) {
      A* row = s + i * lds;
      if (mask) {
        const int64_t off = b * mb + h * mh + (i0 + i) * ml + j0 * ms;
        if (is_bool) {
          const bool* p = reinterpret_cast<const bool*>(mask) + off;
          for (int64_t j = 0; j < nk; ++j) if (!p[j * ms]) row[j] = ninf;
        } else {
          const A* p = reinterpret_cast<const A*>(mask) + off;
          for (int64_t j = 0; j < nk; ++j) row[j] += p[j * ms];
        }
      }
      if (causal)
        for (int64_t j = std::max<int64_t>(0, i0 + i + 1 - j0); j < nk; ++j) row[j] = ninf;
    }
  }
};

template <typename T>
void sdpa_fwd(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, Tensor& out, Tensor& lse, const SdpaArgs& args) {
  using A = acc_t<T>;
  const int64_t B = q.sizes()[0], Hq = q.sizes()[1], L = q.sizes()[2], E = q.sizes()[3];
  const int64_t Hk = k.sizes()[1], S = k.sizes()[2], Ev = v.sizes()[3];
  const int64_t BQ = args.causal ? kBQ / 2 : kBQ;
  const int64_t rep = Hq / Hk, nqb = (L + BQ - 1) / BQ;
  const int64_t Ep = pad(E), Evp = pad(Ev);
  const View4 sq(q), sk(k), sv(v);
  const T* Q = q.data<T>();
  const T* K = k.data<T>();
  const T* V = v.data<T>();
  T* O = out.data<T>();
  A* LSE = lse.data<A>();
  const A scale = static_cast<A>(args.scale);
  const Masker<T, A> mk(mask, args.causal);
  const A ninf = -std::numeric_limits<A>::infinity();
  // Tasks: whole heads when there are enough of them (K and V packed once per head), else
  // (head, query block) pairs.
  const bool per_head = B * Hq >= 4 * static_cast<int64_t>(get_num_threads());
  const int64_t qb_per_task = per_head ? nqb : 1;
  parallel_for(B * Hq * nqb / qb_per_task, 1, [&](int64_t t0, int64_t t1) {
    std::vector<A> qf(kBQ * Ep), kt, vf, s(kBQ * kBK), o(kBQ * Evp), m(kBQ), l(kBQ);
    for (int64_t task = t0; task < t1; ++task) {
    const int64_t first = task * qb_per_task;
    int64_t packed = -1, Sp = 0;  // keys [0, packed) of this head are in kt / vf
    for (int64_t t = first; t < first + qb_per_task; ++t) {
      const int64_t b = t / (Hq * nqb), h = t / nqb % Hq, qb = t % nqb, hk = h / rep;
      const int64_t i0 = qb * BQ, nq = std::min(BQ, L - i0);
      const int64_t kend = args.causal ? std::min(S, i0 + nq) : S;
      // q * scale, K^T and V of the keys this block sees, in the compute type
      for (int64_t i = 0; i < nq; ++i) {
        const T* src = Q + b * sq.b + h * sq.h + (i0 + i) * sq.l;
        for (int64_t e = 0; e < E; ++e) qf[i * Ep + e] = static_cast<A>(src[e]) * scale;
      }
      if (packed < kend) {
        const int64_t last = per_head ? (args.causal ? std::min(S, L) : S) : kend;  // every key the task's blocks see
        Sp = pad(last);
        kt.assign(Ep * Sp, A(0));
        vf.assign(std::max<int64_t>(last, 1) * Evp, A(0));
        for (int64_t j = 0; j < last; ++j) {
          const T* ks = K + b * sk.b + hk * sk.h + j * sk.l;
          const T* vs = V + b * sv.b + hk * sv.h + j * sv.l;
          for (int64_t e = 0; e < E; ++e) kt[e * Sp + j] = static_cast<A>(ks[e]);
          for (int64_t e = 0; e < Ev; ++e) vf[j * Evp + e] = static_cast<A>(vs[e]);
        }
        packed = last;
      }
      std::fill(o.begin(), o.end(), A(0));
      std::fill(m.begin(), m.end(), ninf);
      std::fill(l.begin(), l.end(), A(0));
      for (int64_t j0 = 0; j0 < kend; j0 += kBK) {
        const int64_t nk = std::min(kBK, kend - j0);
        gemm<A>(nq, nk, E, qf.data(), Ep, 1, kt.data() + j0, Sp, s.data(), kBK, false);
        if (mk.any()) mk.apply(s.data(), kBK, b, h, i0, nq, j0, nk);
        for (int64_t i = 0; i < nq; ++i) {
          A* row = s.data() + i * kBK;
          const A mx = Eigen::Map<const Eigen::Array<A, Eigen::Dynamic, 1>>(row, nk).maxCoeff();
          const A mnew = std::max(m[i], mx);
          if (mnew == ninf) {  // every key so far masked: nothing to add
            std::fill(row, row + kBK, A(0));
            continue;
          }
          const A alpha = std::exp(m[i] - mnew);
          const A sum = exp_sum(row, nk, mnew);
          std::fill(row + nk, row + kBK, A(0));
          l[i] = l[i] * alpha + sum;
          m[i] = mnew;
          if (alpha != A(1)) for (int64_t e = 0; e < Ev; ++e) o[i * Evp + e] *= alpha;
        }
        gemm<A>(nq, Ev, nk, s.data(), kBK, 1, vf.data() + j0 * Evp, Evp, o.data(), Evp, true);
      }
      for (int64_t i = 0; i < nq; ++i) {
        T* dst = O + ((b * Hq + h) * L + i0 + i) * Ev;
        const A inv = l[i] > A(0) ? A(1) / l[i] : A(0);  // a row with no key gives 0, as torch's
        for (int64_t e = 0; e < Ev; ++e) dst[e] = static_cast<T>(o[i * Evp + e] * inv);
        LSE[(b * Hq + h) * L + i0 + i] = l[i] > A(0) ? m[i] + std::log(l[i]) : std::numeric_limits<A>::infinity();
      }
    }
    }
  });
}

template <typename T>
void sdpa_bwd(const Tensor& go, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, const Tensor& out,
              const Tensor& lse, Tensor& dq, Tensor& dk, Tensor& dv, const SdpaArgs& args) {
  using A = acc_t<T>;
  const int64_t B = q.sizes()[0], Hq = q.sizes()[1], L = q.sizes()[2], E = q.sizes()[3];
  const int64_t Hk = k.sizes()[1], S = k.sizes()[2], Ev = v.sizes()[3];
  const int64_t BQ = args.causal ? kBQ / 2 : kBQ;
  const int64_t rep = Hq / Hk, nqb = (L + BQ - 1) / BQ;
  const int64_t Ep = pad(E), Evp = pad(Ev), Sp = pad(S);
  const View4 sq(q), sk(k), sv(v), sg(go), so(out);
  const T* Q = q.data<T>();
  const T* K = k.data<T>();
  const T* V = v.data<T>();
  const T* G = go.data<T>();
  const T* O = out.data<T>();
  const A* LSE = lse.data<A>();
  T* DQ = dq.data<T>();
  T* DK = dk.data<T>();
  T* DV = dv.data<T>();
  const A scale = static_cast<A>(args.scale);
  const Masker<T, A> mk(mask, args.causal);
  // One task per (batch, key head): it owns dK and dV of that head, so no two threads add to them.
  parallel_for(B * Hk, 1, [&](int64_t t0, int64_t t1) {
    std::vector<A> kf(S * Ep), kt(Ep * Sp), vt(Evp * Sp), dkf(S * Ep), dvf(S * Evp);
    std::vector<A> qf(kBQ * Ep), qs(kBQ * Ep), gf(kBQ * Evp), dqf(kBQ * Ep), p(kBQ * kBK), dp(kBQ * kBK), D(kBQ), lr(kBQ);
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t b = t / Hk, hk = t % Hk;
      std::fill(kt.begin(), kt.end(), A(0));
      std::fill(vt.begin(), vt.end(), A(0));
      std::fill(kf.begin(), kf.end(), A(0));
      std::fill(dkf.begin(), dkf.end(), A(0));
      std::fill(dvf.begin(), dvf.end(), A(0));
      for (int64_t j = 0; j < S; ++j) {
        const T* ks = K + b * sk.b + hk * sk.h + j * sk.l;
        const T* vs = V + b * sv.b + hk * sv.h + j * sv.l;
        for (int64_t e = 0; e < E; ++e) { const A x = static_cast<A>(ks[e]); kf[j * Ep + e] = x; kt[e * Sp + j] = x; }
        for (int64_t e = 0; e < Ev; ++e) vt[e * Sp + j] = static_cast<A>(vs[e]);
      }
      for (int64_t h = hk * rep; h < (hk + 1) * rep; ++h) {
        for (int64_t qb = 0; qb < nqb; ++qb) {
          const int64_t i0 = qb * BQ, nq = std::min(BQ, L - i0);
          const int64_t kend = args.causal ? std::min(S, i0 + nq) : S;
          for (int64_t i = 0; i < nq; ++i) {
            const T* qsrc = Q + b * sq.b + h * sq.h + (i0 + i) * sq.l;
            const T* gsrc = G + b * sg.b + h * sg.h + (i0 + i) * sg.l;
            const T* osrc = O + b * so.b + h * so.h + (i0 + i) * so.l;
            for (int64_t e = 0; e < E; ++e) { const A x = static_cast<A>(qsrc[e]); qf[i * Ep + e] = x; qs[i * Ep + e] = x * scale; }
            A d = 0;
            for (int64_t e = 0; e < Ev; ++e) { const A g = static_cast<A>(gsrc[e]); gf[i * Evp + e] = g; d += g * static_cast<A>(osrc[e]); }
            D[i] = d;
            lr[i] = LSE[(b * Hq + h) * L + i0 + i];
          }
          std::fill(dqf.begin(), dqf.end(), A(0));
          for (int64_t j0 = 0; j0 < kend; j0 += kBK) {
            const int64_t nk = std::min(kBK, kend - j0);
            gemm<A>(nq, nk, E, qs.data(), Ep, 1, kt.data() + j0, Sp, p.data(), kBK, false);
            if (mk.any()) mk.apply(p.data(), kBK, b, h, i0, nq, j0, nk);
            for (int64_t i = 0; i < nq; ++i) {
              A* row = p.data() + i * kBK;
              exp_sum(row, nk, lr[i]);  // P = exp(S - lse); masked keys and empty rows give 0
              std::fill(row + nk, row + kBK, A(0));
            }
            // dV[j] += P^T dO;  dP = dO V^T;  dS = P * (dP - D);  dQ += dS K;  dK[j] += dS^T Q
            gemm<A>(nk, Ev, nq, p.data(), 1, kBK, gf.data(), Evp, dvf.data() + j0 * Evp, Evp, true);
            gemm<A>(nq, nk, Ev, gf.data(), Evp, 1, vt.data() + j0, Sp, dp.data(), kBK, false);
            for (int64_t i = 0; i < nq; ++i) {
              A* pr = p.data() + i * kBK;
              A* dr = dp.data() + i * kBK;
              const A d = D[i];
#pragma omp simd
              for (int64_t j = 0; j < kBK; ++j) dr[j] = pr[j] * (dr[j] - d);
            }
            gemm<A>(nq, E, nk, dp.data(), kBK, 1, kf.data() + j0 * Ep, Ep, dqf.data(), Ep, true);
            gemm<A>(nk, E, nq, dp.data(), 1, kBK, qf.data(), Ep, dkf.data() + j0 * Ep, Ep, true);
          }
          for (int64_t i = 0; i < nq; ++i) {
            T* dst = DQ + ((b * Hq + h) * L + i0 + i) * E;
            for (int64_t e = 0; e < E; ++e) dst[e] = static_cast<T>(dqf[i * Ep + e] * scale);
          }
        }
      }
      for (int64_t j = 0; j < S; ++j) {
        T* kd = DK + ((b * Hk + hk) * S + j) * E;
        T* vd = DV + ((b * Hk + hk) * S + j) * Ev;
        for (int64_t e = 0; e < E; ++e) kd[e] = static_cast<T>(dkf[j * Ep + e] * scale);
        for (int64_t e = 0; e < Ev; ++e) vd[e] = static_cast<T>(dvf[j * Evp + e]);
      }
    }
  });
}

void k_sdpa(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, Tensor& out, Tensor& lse, const SdpaArgs& a) {
  AG_DISPATCH_FLOAT(q.dtype(), "scaled_dot_product_attention", [&] { sdpa_fwd<scalar_t>(q, k, v, mask, out, lse, a); });
}
void k_sdpa_backward(const Tensor& go, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, const Tensor& out,
                     const Tensor& lse, Tensor& dq, Tensor& dk, Tensor& dv, const SdpaArgs& a) {
  AG_DISPATCH_FLOAT(q.dtype(), "scaled_dot_product_attention_backward",
                    [&] { sdpa_bwd<scalar_t>(go, q, k, v, mask, out, lse, dq, dk, dv, a); });
}

}  // namespace
AG_REGISTER_KERNEL(scaled_dot_product_attention, CPU, k_sdpa);
AG_REGISTER_KERNEL(scaled_dot_product_attention_backward, CPU, k_sdpa_backward);
}  // namespace ampgrad::cpu
