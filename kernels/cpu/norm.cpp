// CPU kernels of the fused normalizations (Note [Fused norms]) and of softmax / log_softmax
// backward: one pass per row for statistics in opmath (float32 for fp16/bf16), one for the output.
#include <cmath>
#include <vector>
#include <Eigen/Core>
#include "kernels/cpu/loops.h"

namespace ampgrad::cpu {

namespace {
int max_threads() {
#ifdef _OPENMP
  return omp_in_parallel() ? 1 : omp_get_max_threads();
#else
  return 1;
#endif
}
int thread_id() {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

// A parameter vector (weight, bias, mean, rstd) of any float dtype as opmath values; empty when undefined.
template <typename A> std::vector<A> load_vec(const Tensor& t) {
  std::vector<A> v;
  if (!t.defined()) return v;
  v.resize(t.numel());
  AG_DISPATCH_FLOAT(t.dtype(), "norm", [&] {
    const scalar_t* p = t.data<scalar_t>();
    for (int64_t i = 0; i < t.numel(); ++i) v[i] = static_cast<A>(static_cast<acc_t<scalar_t>>(p[i]));
  });
  return v;
}
template <typename A> void store_vec(Tensor& t, const A* v) {
  if (!t.defined()) return;
  AG_DISPATCH_FLOAT(t.dtype(), "norm", [&] {
    scalar_t* p = t.data<scalar_t>();
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<scalar_t>(static_cast<acc_t<scalar_t>>(v[i]));
  });
}

// A row of T as opmath values: the row itself when T is its own opmath type, else converted into buf.
template <typename T, typename A = acc_t<T>> const A* as_acc(const T* p, int64_t n, std::vector<A>& buf) {
  if constexpr (std::is_same_v<T, A>) {
    return p;
  } else {
    if (static_cast<int64_t>(buf.size()) < n) buf.resize(n);
    for (int64_t i = 0; i < n; ++i) buf[i] = static_cast<A>(p[i]);
    return buf.data();
  }
}

template <typename A> A row_sum(const A* x, int64_t n) {
  A s = 0;
_Pragma("omp simd reduction(+ : s)")
  for (int64_t i = 0; i < n; ++i) s += x[i];
  return s;
}
// (mean, rstd) of a row: two passes (no cancellation), or the root mean square for rms.
template <typename A> std::pair<A, A> row_stats(const A* x, int64_t n, double eps, bool rms) {
  if (n == 0) return {A(0), A(1) / std::sqrt(static_cast<A>(eps))};
  A m = rms ? A(0) : row_sum(x, n) / static_cast<A>(n);
  A ss = 0;
_Pragma("omp simd reduction(+ : ss)")
  for (int64_t i = 0; i < n; ++i) { A d = x[i] - m; ss += d * d; }
  return {m, A(1) / std::sqrt(ss / static_cast<A>(n) + static_cast<A>(eps))};
}

// ---- layer_norm / rms_norm: x [N, HW], w / b [HW]
template <bool Rms>
void k_layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y, Tensor& mean, Tensor& rstd, const NormArgs& a) {
  AG_DISPATCH_FLOAT(x.dtype(), Rms ? "rms_norm" : "LayerNormKernelImpl", [&] {
    using A = acc_t<scalar_t>;
    const int64_t M = a.N, D = a.HW;
    const std::vector<A> wv = load_vec<A>(w), bv = load_vec<A>(b);
    const scalar_t* xp = x.data<scalar_t>();
    scalar_t* yp = y.data<scalar_t>();
    A* mp = mean.defined() ? mean.data<A>() : nullptr;
    A* rp = rstd.data<A>();
    parallel_for(M, std::max<int64_t>(1, kGrain / std::max<int64_t>(D, 1)), [&](int64_t r0, int64_t r1) {
      std::vector<A> buf;
      const A* wq = wv.empty() ? nullptr : wv.data();
      const A* bq = bv.empty() ? nullptr : bv.data();
      for (int64_t r = r0; r < r1; ++r) {
        const A* xr = as_acc(xp + r * D, D, buf);
        auto [m, rs] = row_stats(xr, D, a.eps, Rms);
        if (mp) mp[r] = m;
        rp[r] = rs;
        scalar_t* yr = yp + r * D;
        // (x - mean) * rstd as torch computes it: x * rstd - mean * rstd (an fma) leaves rounding
        // noise where x == mean, which rstd = 1/sqrt(eps) amplifies (a 1-element row)
        if (wq && bq) {
_Pragma("omp simd")
          for (int64_t i = 0; i < D; ++i) yr[i] = static_cast<scalar_t>((xr[i] - m) * rs * wq[i] + bq[i]);
        } else if (wq) {
_Pragma("omp simd")
          for (int64_t i = 0; i < D; ++i) yr[i] = static_cast<scalar_t>((xr[i] - m) * rs * wq[i]);
        } else if (bq) {
_Pragma("omp simd")
          for (int64_t i = 0; i < D; ++i) yr[i] = static_cast<scalar_t>((xr[i] - m) * rs + bq[i]);
        } else {
_Pragma("omp simd")
          for (int64_t i = 0; i < D; ++i) yr[i] = static_cast<scalar_t>((xr[i] - m) * rs);
        }
      }
    });
  });
}
AG_REGISTER_KERNEL(layer_norm, CPU, k_layer_norm<false>);
AG_REGISTER_KERNEL(rms_norm, CPU, k_layer_norm<true>);

// Per-thread accumulators of dw / db, summed at the end (fixed split: deterministic for a thread count).
template <typename A> struct ParamGrads {
  int nt;
  int64_t n;
  std::vector<A> dw, db;
  ParamGrads(int64_t n_, bool want_w, bool want_b) : nt(max_threads()), n(n_) {
    if (want_w) dw.assign(nt * n, A(0));
    if (want_b) db.assign(nt * n, A(0));
  }
  A* w(int t) { return dw.empty() ? nullptr : dw.data() + t * n; }
  A* b(int t) { return db.empty() ? nullptr : db.data() + t * n; }
  void finish(Tensor& tw, Tensor& tb) {
    for (auto* v : {&dw, &db}) {
      if (v->empty()) continue;
      for (int t = 1; t < nt; ++t)
        for (int64_t i = 0; i < n; ++i) (*v)[i] += (*v)[t * n + i];
    }
    if (!dw.empty()) store_vec(tw, dw.data());
    if (!db.empty()) store_vec(tb, db.data());
  }
};

template <bool Rms>
void k_layer_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w,
                           Tensor& dx, Tensor& dw, Tensor& db, const NormArgs& a) {
  AG_DISPATCH_FLOAT(x.dtype(), Rms ? "rms_norm_backward" : "LayerNormBackwardKernelImpl", [&] {
    using A = acc_t<scalar_t>;
    const int64_t M = a.N, D = a.HW;
    const std::vector<A> wv = load_vec<A>(w);
    const scalar_t* xp = x.data<scalar_t>();
    const scalar_t* gp = dy.data<scalar_t>();
    scalar_t* dxp = dx.defined() ? dx.data<scalar_t>() : nullptr;
    const A* mp = Rms ? nullptr : mean.data<A>();
    const A* rp = rstd.data<A>();
    ParamGrads<A> pg(D, dw.defined(), db.defined());
    parallel_for(M, std::max<int64_t>(1, kGrain / std::max<int64_t>(D, 1)), [&](int64_t r0, int64_t r1) {
      std::vector<A> bx, bg, gw(D);
      A* pdw = pg.w(thread_id());
      A* pdb = pg.b(thread_id());
      const A* wq = wv.empty() ? nullptr : wv.data();
      for (int64_t r = r0; r < r1; ++r) {
        const A* xr = as_acc(xp + r * D, D, bx);
        const A* gr = as_acc(gp + r * D, D, bg);
        const A m = Rms ? A(0) : mp[r], rs = rp[r];
        if (pdw) {
_Pragma("omp simd")
          for (int64_t i = 0; i < D; ++i) pdw[i] += gr[i] * (xr[i] - m) * rs;
        }
        if (pdb) {
_Pragma("omp simd")
          for (int64_t i = 0; i < D; ++i) pdb[i] += gr[i];
        }
        if (!dxp) continue;
        A s1 = 0, s2 = 0;  // sum(gw), sum(gw * xhat)
        if (wq) {
_Pragma("omp simd reduction(+ : s1, s2)")
          for (int64_t i = 0; i < D; ++i) { A g = gr[i] * wq[i]; gw[i] = g; s1 += g; s2 += g * (xr[i] - m) * rs; }
        } else {
_Pragma("omp simd reduction(+ : s1, s2)")
          for (int64_t i = 0; i < D; ++i) { A g = gr[i]; gw[i] = g; s1 += g; s2 += g * (xr[i] - m) * rs; }
        }
        const A inv = D ? A(1) / static_cast<A>(D) : A(0);
        const A c1 = Rms ? A(0) : s1 * inv, c2 = s2 * inv;
        scalar_t* o = dxp + r * D;
_Pragma("omp simd")
        for (int64_t i = 0; i < D; ++i) o[i] = static_cast<scalar_t>(rs * (gw[i] - c1 - (xr[i] - m) * rs * c2));
      }
    });
    pg.finish(dw, db);
  });
}
AG_REGISTER_KERNEL(layer_norm_backward, CPU, k_layer_norm_backward<false>);
AG_REGISTER_KERNEL(rms_norm_backward, CPU, k_layer_norm_backward<true>);

// ---- group_norm: x [N, C, HW], G groups; stats per (n, g) over (C / G) * HW contiguous values
void k_group_norm(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y, Tensor& mean, Tensor& rstd, const NormArgs& a) {
  AG_DISPATCH_FLOAT(x.dtype(), "GroupNormKernelImpl", [&] {
    using A = acc_t<scalar_t>;
    const int64_t N = a.N, C = a.C, HW = a.HW, G = a.G, Cg = C / G, D = Cg * HW;
    const std::vector<A> wv = load_vec<A>(w), bv = load_vec<A>(b);
    const scalar_t* xp = x.data<scalar_t>();
    scalar_t* yp = y.data<scalar_t>();
    A* mp = mean.data<A>();
    A* rp = rstd.data<A>();
    parallel_for(N * G, std::max<int64_t>(1, kGrain / std::max<int64_t>(D, 1)), [&](int64_t r0, int64_t r1) {
      std::vector<A> buf;
      for (int64_t r = r0; r < r1; ++r) {
        const A* xr = as_acc(xp + r * D, D, buf);
        auto [m, rs] = row_stats(xr, D, a.eps, false);
        mp[r] = m;
        rp[r] = rs;
        const int64_t g = r % G;
        for (int64_t cc = 0; cc < Cg; ++cc) {
          const int64_t c = g * Cg + cc;
          const A sc = rs * (wv.empty() ? A(1) : wv[c]);
          const A sh = (bv.empty() ? A(0) : bv[c]) - m * sc;
          const A* xc = xr + cc * HW;
          scalar_t* yc = yp + r * D + cc * HW;
_Pragma("omp simd")
          for (int64_t i = 0; i < HW; ++i) yc[i] = static_cast<scalar_t>(xc[i] * sc + sh);
        }
      }
    });
  });
}
AG_REGISTER_KERNEL(group_norm, CPU, k_group_norm);

void k_group_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w,
                           Tensor& dx, Tensor& dw, Tensor& db, const NormArgs& a) {
  AG_DISPATCH_FLOAT(x.dtype(), "GroupNormBackwardKernelImpl", [&] {
    using A = acc_t<scalar_t>;
    const int64_t N = a.N, C = a.C, HW = a.HW, G = a.G, Cg = C / G, D = Cg * HW;
    const std::vector<A> wv = load_vec<A>(w);
    const scalar_t* xp = x.data<scalar_t>();
    const scalar_t* gp = dy.data<scalar_t>();
    scalar_t* dxp = dx.defined() ? dx.data<scalar_t>() : nullptr;
    const A* mp = mean.data<A>();
    const A* rp = rstd.data<A>();
    ParamGrads<A> pg(C, dw.defined(), db.defined());
    parallel_for(N * G, std::max<int64_t>(1, kGrain / std::max<int64_t>(D, 1)), [&](int64_t r0, int64_t r1) {
      std::vector<A> bx, bg;
      A* pdw = pg.w(thread_id());
      A* pdb = pg.b(thread_id());
      for (int64_t r = r0; r < r1; ++r) {
        const A* xr = as_acc(xp + r * D, D, bx);
        const A* gr = as_acc(gp + r * D, D, bg);
        const A m = mp[r], rs = rp[r];
        const int64_t g = r % G;
        A s1 = 0, s2 = 0;  // sum(dy * w), sum(dy * w * xhat) over the group
        for (int64_t cc = 0; cc < Cg; ++cc) {
          const int64_t c = g * Cg + cc;
          const A* xc = xr + cc * HW;
          const A* gc = gr + cc * HW;
          A sg = 0, sgx = 0;
_Pragma("omp simd reduction(+ : sg, sgx)")
          for (int64_t i = 0; i < HW; ++i) { sg += gc[i]; sgx += gc[i] * (xc[i] - m); }
          sgx *= rs;
          if (pdw) pdw[c] += sgx;
          if (pdb) pdb[c] += sg;
          const A wc = wv.empty() ? A(1) : wv[c];
          s1 += sg * wc;
          s2 += sgx * wc;
        }
        if (!dxp) continue;
        const A inv = D ? A(1) / static_cast<A>(D) : A(0);
        const A c1 = s1 * inv, c2 = s2 * inv;
        for (int64_t cc = 0; cc < Cg; ++cc) {
          const A wc = wv.empty() ? A(1) : wv[g * Cg + cc];
          const A* xc = xr + cc * HW;
          const A* gc = gr + cc * HW;
          scalar_t* o = dxp + r * D + cc * HW;
_Pragma("omp simd")
          for (int64_t i = 0; i < HW; ++i) o[i] = static_cast<scalar_t>(rs * (gc[i] * wc - c1 - (xc[i] - m) * rs * c2));
        }
      }
    });
    pg.finish(dw, db);
  });
}
AG_REGISTER_KERNEL(group_norm_backward, CPU, k_group_norm_backward);

// ---- batch_norm: x [N, C, HW]; stats per channel over N * HW values (training), or given (eval)
void k_batch_norm(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y, Tensor& mean, Tensor& rstd, const NormArgs& a) {
  AG_DISPATCH_FLOAT(x.dtype(), "batch_norm", [&] {
    using A = acc_t<scalar_t>;
    const int64_t N = a.N, C = a.C, HW = a.HW;
    const std::vector<A> wv = load_vec<A>(w), bv = load_vec<A>(b);
    const scalar_t* xp = x.data<scalar_t>();
    scalar_t* yp = y.data<scalar_t>();
    A* mp = mean.data<A>();
    A* rp = rstd.data<A>();
    parallel_for(C, std::max<int64_t>(1, kGrain / std::max<int64_t>(N * HW, 1)), [&](int64_t c0, int64_t c1) {
      std::vector<A> buf;
      for (int64_t c = c0; c < c1; ++c) {
        if (!a.use_stats) {
          const double cnt = static_cast<double>(N * HW);
          A s = 0;
          for (int64_t n = 0; n < N; ++n) s += row_sum(as_acc(xp + (n * C + c) * HW, HW, buf), HW);
          const A m = cnt ? s / static_cast<A>(cnt) : A(0);
          A ss = 0;
          for (int64_t n = 0; n < N; ++n) {
            const A* xr = as_acc(xp + (n * C + c) * HW, HW, buf);
            A t = 0;
_Pragma("omp simd reduction(+ : t)")
            for (int64_t i = 0; i < HW; ++i) { A d = xr[i] - m; t += d * d; }
            ss += t;
          }
          mp[c] = m;
          rp[c] = A(1) / std::sqrt((cnt ? ss / static_cast<A>(cnt) : A(0)) + static_cast<A>(a.eps));
        }
        const A sc = rp[c] * (wv.empty() ? A(1) : wv[c]);
        const A sh = (bv.empty() ? A(0) : bv[c]) - mp[c] * sc;
        for (int64_t n = 0; n < N; ++n) {
          const A* xr = as_acc(xp + (n * C + c) * HW, HW, buf);
          scalar_t* yr = yp + (n * C + c) * HW;
_Pragma("omp simd")
          for (int64_t i = 0; i < HW; ++i) yr[i] = static_cast<scalar_t>(xr[i] * sc + sh);
        }
      }
    });
  });
}
AG_REGISTER_KERNEL(batch_norm, CPU, k_batch_norm);

void k_batch_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w,
                           Tensor& dx, Tensor& dw, Tensor& db, const NormArgs& a) {
  AG_DISPATCH_FLOAT(x.dtype(), "batch_norm_backward", [&] {
    using A = acc_t<scalar_t>;
    const int64_t N = a.N, C = a.C, HW = a.HW;
    const std::vector<A> wv = load_vec<A>(w);
    const scalar_t* xp = x.data<scalar_t>();
    const scalar_t* gp = dy.data<scalar_t>();
    scalar_t* dxp = dx.defined() ? dx.data<scalar_t>() : nullptr;
    const A* mp = mean.data<A>();
    const A* rp = rstd.data<A>();
    std::vector<A> vdw(C), vdb(C);
    parallel_for(C, std::max<int64_t>(1, kGrain / std::max<int64_t>(N * HW, 1)), [&](int64_t c0, int64_t c1) {
      std::vector<A> bx, bg;
      for (int64_t c = c0; c < c1; ++c) {
        const A m = mp[c], rs = rp[c], wc = wv.empty() ? A(1) : wv[c];
        A sg = 0, sgx = 0;
        for (int64_t n = 0; n < N; ++n) {
          const A* xr = as_acc(xp + (n * C + c) * HW, HW, bx);
          const A* gr = as_acc(gp + (n * C + c) * HW, HW, bg);
          A t1 = 0, t2 = 0;
_Pragma("omp simd reduction(+ : t1, t2)")
          for (int64_t i = 0; i < HW; ++i) { t1 += gr[i]; t2 += gr[i] * (xr[i] - m); }
          sg += t1;
          sgx += t2;
        }
        sgx *= rs;
        vdw[c] = sgx;
        vdb[c] = sg;
        if (!dxp) continue;
        const A cnt = static_cast<A>(N * HW);
        const A c1 = a.use_stats || !cnt ? A(0) : sg / cnt, c2 = a.use_stats || !cnt ? A(0) : sgx / cnt;
        for (int64_t n = 0; n < N; ++n) {
          const A* xr = as_acc(xp + (n * C + c) * HW, HW, bx);
          const A* gr = as_acc(gp + (n * C + c) * HW, HW, bg);
          scalar_t* o = dxp + (n * C + c) * HW;
_Pragma("omp simd")
          for (int64_t i = 0; i < HW; ++i) o[i] = static_cast<scalar_t>(rs * wc * (gr[i] - c1 - (xr[i] - m) * rs * c2));
        }
      }
    });
    store_vec(dw, vdw.data());
    store_vec(db, vdb.data());
  });
}
AG_REGISTER_KERNEL(batch_norm_backward, CPU, k_batch_norm_backward);

// ---- softmax / log_softmax backward over [A, R, B]
template <bool IsLog>
void k_softmax_backward(const Tensor& g, const Tensor& y, Tensor& gin, const ReduceArgs& r) {
  AG_DISPATCH_FLOAT(y.dtype(), IsLog ? "log_softmax_backward_data" : "softmax_backward_data", [&] {
    using A = acc_t<scalar_t>;
    const scalar_t* gp = g.data<scalar_t>();
    const scalar_t* yp = y.data<scalar_t>();
    scalar_t* op = gin.data<scalar_t>();
    const int64_t R = r.R, B = r.B;
    if (B == 1) {
      parallel_for(r.A, std::max<int64_t>(1, kGrain / std::max<int64_t>(R, 1)), [&](int64_t a0, int64_t a1) {
        std::vector<A> bg, by;
        for (int64_t a = a0; a < a1; ++a) {
          const A* gr = as_acc(gp + a * R, R, bg);
          const A* yr = as_acc(yp + a * R, R, by);
          scalar_t* o = op + a * R;
          if constexpr (IsLog) {
            const A s = row_sum(gr, R);
            if constexpr (std::is_same_v<A, float> || std::is_same_v<A, double>) {
              using Arr = Eigen::Array<A, Eigen::Dynamic, 1>;
              Eigen::Map<const Arr> ge(gr, R), ye(yr, R);
              if constexpr (std::is_same_v<scalar_t, A>) {
                Eigen::Map<Arr>(o, R) = ge - ye.exp() * s;
              } else {
                for (int64_t k = 0; k < R; ++k) o[k] = static_cast<scalar_t>(gr[k] - std::exp(yr[k]) * s);
              }
            }
          } else {
            A s = 0;
_Pragma("omp simd reduction(+ : s)")
            for (int64_t k = 0; k < R; ++k) s += gr[k] * yr[k];
_Pragma("omp simd")
            for (int64_t k = 0; k < R; ++k) o[k] = static_cast<scalar_t>(yr[k] * (gr[k] - s));
          }
        }
      });
      return;
    }
    // Inner dim B > 1: one accumulator per b, walking rows of B contiguous values.
    parallel_for(r.A, 1, [&](int64_t a0, int64_t a1) {
      std::vector<A> acc(B);
      for (int64_t a = a0; a < a1; ++a) {
        const int64_t base = a * R * B;
        std::fill(acc.begin(), acc.end(), A(0));
        for (int64_t k = 0; k < R; ++k)
          for (int64_t b = 0; b < B; ++b) {
            const int64_t i = base + k * B + b;
            acc[b] += IsLog ? static_cast<A>(gp[i]) : static_cast<A>(gp[i]) * static_cast<A>(yp[i]);
          }
        for (int64_t k = 0; k < R; ++k)
          for (int64_t b = 0; b < B; ++b) {
            const int64_t i = base + k * B + b;
            const A gv = static_cast<A>(gp[i]), yv = static_cast<A>(yp[i]);
            op[i] = static_cast<scalar_t>(IsLog ? gv - std::exp(yv) * acc[b] : yv * (gv - acc[b]));
          }
      }
    });
  });
}
AG_REGISTER_KERNEL(softmax_backward, CPU, k_softmax_backward<false>);
AG_REGISTER_KERNEL(log_softmax_backward, CPU, k_softmax_backward<true>);

}  // namespace
}  // namespace ampgrad::cpu
