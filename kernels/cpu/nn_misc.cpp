// Fused CPU kernels of the elementwise losses, dropout's mask and embedding (kernels/kernels.h):
// one pass each, computed in the compute type (fp32 for fp16/bf16) and rounded once; reductions
// sum fixed chunks in the compute type, so a result does not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>
#include <Eigen/Core>
#ifdef __AVX512F__
#include <immintrin.h>
#endif
#include "kernels/cpu/loops.h"

namespace ampgrad {
void cpu_generator_bernoulli(double p, uint8_t* keep, int64_t n);  // kernels/cpu/random.cpp
}

namespace ampgrad::cpu {
namespace {

// ---------------------------------------------------------------- losses
// Blocks of kBlock elements are widened to the compute type and evaluated as Eigen arrays (its
// vectorized exp / log / log1p): one pass, no temporary the size of the input.
constexpr int64_t kBlock = 1024;
template <typename A> using Arr = Eigen::Array<A, Eigen::Dynamic, 1>;
template <typename A> using AMap = Eigen::Map<Arr<A>>;

template <typename T, typename A>
inline void widen(const T* p, int64_t n, A* d, A fill) {
  if (!p) { std::fill(d, d + n, fill); return; }
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<A>(p[i]);
}

template <typename A, LossKind K>
void loss_block(const A* x0, const A* t0, const A* w0, const A* pw0, int64_t n, A beta, A* out) {
  Eigen::Map<const Arr<A>> x(x0, n), t(t0, n), w(w0, n), pw(pw0, n);
  AMap<A> o(out, n);
  if constexpr (K == LossKind::MSE) o = (x - t).square();
  else if constexpr (K == LossKind::SMOOTH_L1) {
    if (beta == A(0)) o = (x - t).abs();
    else o = ((x - t).abs() < beta).select((x - t).square() * (A(0.5) / beta), (x - t).abs() - A(0.5) * beta);
  } else if constexpr (K == LossKind::HUBER) {
    o = ((x - t).abs() < beta).select((x - t).square() * A(0.5), ((x - t).abs() - A(0.5) * beta) * beta);
  } else if constexpr (K == LossKind::BCE) {
    o = w * ((t - A(1)) * (-x).log1p().max(A(-100)) - t * x.log().max(A(-100)));
  } else {  // (1 - t) x - lw * log_sigmoid(x), lw = 1 + (pw - 1) t
    o = w * ((A(1) - t) * x - (A(1) + (pw - A(1)) * t) * (x.min(A(0)) - (-x.abs()).exp().log1p()));
  }
}

template <typename A, LossKind K>
void grad_block(const A* x0, const A* t0, const A* w0, const A* pw0, int64_t n, A beta, A* out) {
  Eigen::Map<const Arr<A>> x(x0, n), t(t0, n), w(w0, n), pw(pw0, n);
  AMap<A> o(out, n);
  if constexpr (K == LossKind::MSE) o = (x - t) * A(2);
  else if constexpr (K == LossKind::SMOOTH_L1) {
    if (beta == A(0)) o = (x - t).sign();
    else o = ((x - t) / beta).max(A(-1)).min(A(1));
  } else if constexpr (K == LossKind::HUBER) {
    o = (x - t).max(-beta).min(beta);
  } else if constexpr (K == LossKind::BCE) {
    o = w * (x - t) / ((A(1) - x) * x).max(A(1e-12));
  } else {
    o = w * ((A(1) + (pw - A(1)) * t) / (A(1) + (-x).exp()) - pw * t);
  }
}

template <typename T, LossKind K>
void loss_fwd(const Tensor& in, const Tensor& tg, const Tensor& wt, const Tensor& pwt, Tensor& out, const LossArgs& a) {
  using A = acc_t<T>;
  const int64_t n = in.numel(), nb = (n + kBlock - 1) / kBlock;
  const T* x = in.data<T>();
  const T* t = tg.data<T>();
  const T* w = wt.defined() ? wt.data<T>() : nullptr;
  const T* pw = pwt.defined() ? pwt.data<T>() : nullptr;
  const A beta = static_cast<A>(a.beta);
  std::vector<A> part(std::max<int64_t>(nb, 1), A(0));
  T* o = a.reduction == 0 ? out.data<T>() : nullptr;
  parallel_for(nb, std::max<int64_t>(1, kGrain / kBlock), [&](int64_t b0, int64_t b1) {
    std::vector<A> buf(5 * kBlock);
    A *bx = buf.data(), *bt = bx + kBlock, *bw = bt + kBlock, *bp = bw + kBlock, *bo = bp + kBlock;
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t i0 = b * kBlock, m = std::min(kBlock, n - i0);
      widen(x + i0, m, bx, A(0));
      widen(t + i0, m, bt, A(0));
      widen(w ? w + i0 : nullptr, m, bw, A(1));
      widen(pw ? pw + i0 : nullptr, m, bp, A(1));
      loss_block<A, K>(bx, bt, bw, bp, m, beta, bo);
      if (o) for (int64_t i = 0; i < m; ++i) o[i0 + i] = static_cast<T>(bo[i]);
      else part[b] = AMap<A>(bo, m).sum();
    }
  });
  if (o) return;
  A s = 0;
  for (A v : part) s += v;
  if (a.reduction == 1) s = n ? s / static_cast<A>(n) : std::numeric_limits<A>::quiet_NaN();
  *out.data<T>() = static_cast<T>(s);
}

template <typename T, LossKind K>
void loss_bwd(const Tensor& grad, const Tensor& in, const Tensor& tg, const Tensor& wt, const Tensor& pwt, Tensor& gi, const LossArgs& a) {
  using A = acc_t<T>;
  const int64_t n = in.numel(), nb = (n + kBlock - 1) / kBlock;
  const T* x = in.data<T>();
  const T* t = tg.data<T>();
  const T* w = wt.defined() ? wt.data<T>() : nullptr;
  const T* pw = pwt.defined() ? pwt.data<T>() : nullptr;
  const T* g = grad.data<T>();
  T* o = gi.data<T>();
  const A beta = static_cast<A>(a.beta);
  const bool scalar = a.reduction != 0;
  const A g0 = scalar ? static_cast<A>(g[0]) / (a.reduction == 1 ? static_cast<A>(n) : A(1)) : A(0);
  parallel_for(nb, std::max<int64_t>(1, kGrain / kBlock), [&](int64_t b0, int64_t b1) {
    std::vector<A> buf(5 * kBlock);
    A *bx = buf.data(), *bt = bx + kBlock, *bw = bt + kBlock, *bp = bw + kBlock, *bo = bp + kBlock;
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t i0 = b * kBlock, m = std::min(kBlock, n - i0);
      widen(x + i0, m, bx, A(0));
      widen(t + i0, m, bt, A(0));
      widen(w ? w + i0 : nullptr, m, bw, A(1));
      widen(pw ? pw + i0 : nullptr, m, bp, A(1));
      grad_block<A, K>(bx, bt, bw, bp, m, beta, bo);
      if (scalar) for (int64_t i = 0; i < m; ++i) o[i0 + i] = static_cast<T>(g0 * bo[i]);
      else for (int64_t i = 0; i < m; ++i) o[i0 + i] = static_cast<T>(static_cast<A>(g[i0 + i]) * bo[i]);
    }
  });
}

template <typename F>
void by_kind(LossKind k, F f) {
  switch (k) {
    case LossKind::MSE: f(std::integral_constant<LossKind, LossKind::MSE>()); break;
    case LossKind::SMOOTH_L1: f(std::integral_constant<LossKind, LossKind::SMOOTH_L1>()); break;
    case LossKind::HUBER: f(std::integral_constant<LossKind, LossKind::HUBER>()); break;
    case LossKind::BCE: f(std::integral_constant<LossKind, LossKind::BCE>()); break;
    case LossKind::BCE_LOGITS: f(std::integral_constant<LossKind, LossKind::BCE_LOGITS>()); break;
  }
}

void k_loss(const Tensor& in, const Tensor& tg, const Tensor& w, const Tensor& pw, Tensor& out, const LossArgs& a) {
  AG_DISPATCH_FLOAT(in.dtype(), "loss", [&] {
    by_kind(a.kind, [&](auto k) { loss_fwd<scalar_t, decltype(k)::value>(in, tg, w, pw, out, a); });
  });
}
void k_loss_backward(const Tensor& g, const Tensor& in, const Tensor& tg, const Tensor& w, const Tensor& pw, Tensor& gi, const LossArgs& a) {
  AG_DISPATCH_FLOAT(in.dtype(), "loss_backward", [&] {
    by_kind(a.kind, [&](auto k) { loss_bwd<scalar_t, decltype(k)::value>(g, in, tg, w, pw, gi, a); });
  });
}

// ---------------------------------------------------------------- dropout
// torch's CPU dropout is noise.bernoulli_(1 - p).div_(1 - p), input * noise: the keep flags are the
// generator's Bernoulli draws in element order (Note [Bernoulli draws], kernels/cpu/random.cpp: one
// serial pass, as torch's), the scale is 1 / (1 - p) divided in the type's opmath and rounded to it,
// then the mask and the product are written in parallel.
template <typename T>
void dropout_apply(int64_t b, int64_t e, const uint8_t* keep, T s, const T* x, T* o, T* m) {
  using A = acc_t<T>;
  const A sa = static_cast<A>(s);
  for (int64_t i = b; i < e; ++i) {
    m[i] = keep[i] ? s : T(0);
    if (o) o[i] = static_cast<T>(static_cast<A>(x[i]) * (keep[i] ? sa : A(0)));
  }
}

// out undefined: the mask only (feature dropout multiplies it in by broadcasting).
void k_dropout(const Tensor& in, Tensor& out, Tensor& mask, double p) {
  const int64_t n = mask.numel();
  std::vector<uint8_t> keep(static_cast<size_t>(n));
  cpu_generator_bernoulli(1.0 - p, keep.data(), n);
  AG_DISPATCH_FLOAT(mask.dtype(), "dropout", [&] {
    using T = scalar_t;
    using A = acc_t<T>;
    // torch: noise.div_(1 - p) with 1 - p as the opmath scalar (float for float / half / bf16)
    const T sc = p >= 1.0 ? T(0) : static_cast<T>(A(1) / static_cast<A>(1.0 - p));
    T* m = mask.data<T>();
    const T* x = out.defined() ? in.data<T>() : nullptr;
    T* o = out.defined() ? out.data<T>() : nullptr;
    parallel_for(n, kGrain, [&](int64_t b, int64_t e) { dropout_apply<T>(b, e, keep.data(), sc, x, o, m); });
  });
}

// ---------------------------------------------------------------- embedding
template <typename I>
const I* idx_ptr(const Tensor& idx) { return idx.data<I>(); }

void k_embedding(const Tensor& w, const Tensor& idx, Tensor& out) {
  const int64_t n = idx.numel(), D = w.sizes()[1], rs = w.strides()[0], cs = w.strides()[1];
  const bool i64 = idx.dtype() == ScalarType::Int64;
  AG_DISPATCH_ALL(w.dtype(), "embedding", [&] {
    using T = scalar_t;
    const T* src = w.data<T>();
    T* dst = out.data<T>();
    parallel_for(n, std::max<int64_t>(1, kGrain / std::max<int64_t>(D, 1)), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const int64_t r = i64 ? idx.data<int64_t>()[i] : idx.data<int32_t>()[i];
        const T* s = src + r * rs;
        T* d = dst + i * D;
        if (cs == 1) std::copy(s, s + D, d);
        else for (int64_t j = 0; j < D; ++j) d[j] = s[j * cs];
      }
    });
  });
}

// Sorts the lookups by row (stable: each row sums its grads in lookup order), then each thread
// sums whole rows: no two threads write one row, and the sum runs in the compute type.
void k_embedding_backward(const Tensor& grad, const Tensor& idx, Tensor& gw, int64_t padding_idx, bool scale_by_freq) {
  const int64_t n = idx.numel(), D = gw.sizes()[1];
  std::vector<int64_t> rows(n), order(n);
  for (int64_t i = 0; i < n; ++i) rows[i] = idx.dtype() == ScalarType::Int64 ? idx.data<int64_t>()[i] : idx.data<int32_t>()[i];
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return rows[a] < rows[b]; });
  std::vector<int64_t> starts;
  for (int64_t i = 0; i < n; ++i)
    if (i == 0 || rows[order[i]] != rows[order[i - 1]]) starts.push_back(i);
  starts.push_back(n);
  const int64_t segs = static_cast<int64_t>(starts.size()) - 1;
  AG_DISPATCH_FLOAT(gw.dtype(), "embedding_backward", [&] {
    using T = scalar_t;
    using A = acc_t<T>;
    const T* g = grad.data<T>();
    T* o = gw.data<T>();
    parallel_for(segs, std::max<int64_t>(1, kGrain / std::max<int64_t>(D * 4, 1)), [&](int64_t s0, int64_t s1) {
      std::vector<A> acc(D);
      for (int64_t s = s0; s < s1; ++s) {
        const int64_t row = rows[order[starts[s]]];
        if (row == padding_idx) continue;
        std::fill(acc.begin(), acc.end(), A(0));
        for (int64_t k = starts[s]; k < starts[s + 1]; ++k) {
          const T* gr = g + order[k] * D;
          for (int64_t j = 0; j < D; ++j) acc[j] += static_cast<A>(gr[j]);
        }
        const A f = scale_by_freq ? A(1) / static_cast<A>(starts[s + 1] - starts[s]) : A(1);
        T* dst = o + row * D;
        for (int64_t j = 0; j < D; ++j) dst[j] = static_cast<T>(acc[j] * f);
      }
    });
  });
}

}  // namespace
AG_REGISTER_KERNEL(mse_loss, CPU, k_loss);
AG_REGISTER_KERNEL(smooth_l1_loss, CPU, k_loss);
AG_REGISTER_KERNEL(huber_loss, CPU, k_loss);
AG_REGISTER_KERNEL(binary_cross_entropy, CPU, k_loss);
AG_REGISTER_KERNEL(binary_cross_entropy_with_logits, CPU, k_loss);
AG_REGISTER_KERNEL(mse_loss_backward, CPU, k_loss_backward);
AG_REGISTER_KERNEL(smooth_l1_loss_backward, CPU, k_loss_backward);
AG_REGISTER_KERNEL(huber_loss_backward, CPU, k_loss_backward);
AG_REGISTER_KERNEL(binary_cross_entropy_backward, CPU, k_loss_backward);
AG_REGISTER_KERNEL(binary_cross_entropy_with_logits_backward, CPU, k_loss_backward);
AG_REGISTER_KERNEL(dropout, CPU, k_dropout);
AG_REGISTER_KERNEL(embedding, CPU, k_embedding);
AG_REGISTER_KERNEL(embedding_backward, CPU, k_embedding_backward);
}  // namespace ampgrad::cpu
