// Fused CPU kernels of the elementwise losses, dropout's mask and embedding (kernels/kernels.h):
// one pass each, computed in the compute type (fp32 for fp16/bf16) and rounded once; reductions
// sum fixed chunks in the compute type, so a result does not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>
#include "kernels/common/philox.h"
#include "kernels/cpu/loops.h"

namespace ampgrad {
uint64_t cpu_generator_random64();  // kernels/cpu/random.cpp
}

namespace ampgrad::cpu {
namespace {

// ---------------------------------------------------------------- losses
template <typename A, LossKind K>
inline A loss_elem(A x, A t, A w, A pw, A beta) {
  if constexpr (K == LossKind::MSE) { const A d = x - t; return d * d; }
  else if constexpr (K == LossKind::SMOOTH_L1) {
    const A z = std::abs(x - t);
    if (beta == A(0)) return z;
    return z < beta ? A(0.5) * z * z / beta : z - A(0.5) * beta;
  } else if constexpr (K == LossKind::HUBER) {
    const A z = std::abs(x - t);
    return z < beta ? A(0.5) * z * z : beta * (z - A(0.5) * beta);
  } else if constexpr (K == LossKind::BCE) {
    return w * ((t - A(1)) * std::max(std::log1p(-x), A(-100)) - t * std::max(std::log(x), A(-100)));
  } else {  // BCE_LOGITS: (1 - t) x - lw * log_sigmoid(x), lw = 1 + (pw - 1) t
    const A log_sig = std::min(x, A(0)) - std::log1p(std::exp(-std::abs(x)));
    return w * ((A(1) - t) * x - (A(1) + (pw - A(1)) * t) * log_sig);
  }
}

template <typename A, LossKind K>
inline A loss_grad(A x, A t, A w, A pw, A beta) {
  if constexpr (K == LossKind::MSE) return A(2) * (x - t);
  else if constexpr (K == LossKind::SMOOTH_L1) {
    const A d = x - t;
    if (beta == A(0)) return static_cast<A>((d > A(0)) - (d < A(0)));
    return d < -beta ? A(-1) : d > beta ? A(1) : d / beta;
  } else if constexpr (K == LossKind::HUBER) {
    const A d = x - t;
    return d < -beta ? -beta : d > beta ? beta : d;
  } else if constexpr (K == LossKind::BCE) {
    return w * (x - t) / std::max((A(1) - x) * x, A(1e-12));
  } else {
    const A sig = A(1) / (A(1) + std::exp(-x));
    return w * ((A(1) + (pw - A(1)) * t) * sig - pw * t);
  }
}

constexpr int64_t kChunk = 16384;

template <typename T, LossKind K>
void loss_fwd(const Tensor& in, const Tensor& tg, const Tensor& wt, const Tensor& pwt, Tensor& out, const LossArgs& a) {
  using A = acc_t<T>;
  const int64_t n = in.numel();
  const T* x = in.data<T>();
  const T* t = tg.data<T>();
  const T* w = wt.defined() ? wt.data<T>() : nullptr;
  const T* pw = pwt.defined() ? pwt.data<T>() : nullptr;
  const A beta = static_cast<A>(a.beta);
  auto elem = [&](int64_t i) {
    return loss_elem<A, K>(static_cast<A>(x[i]), static_cast<A>(t[i]), w ? static_cast<A>(w[i]) : A(1), pw ? static_cast<A>(pw[i]) : A(1), beta);
  };
  if (a.reduction == 0) {
    T* o = out.data<T>();
    parallel_for(n, kGrain, [&](int64_t b, int64_t e) { for (int64_t i = b; i < e; ++i) o[i] = static_cast<T>(elem(i)); });
    return;
  }
  const int64_t nc = (n + kChunk - 1) / kChunk;
  std::vector<A> part(std::max<int64_t>(nc, 1), A(0));
  parallel_for(nc, 4, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      A s = 0;
      for (int64_t i = c * kChunk, e = std::min(n, (c + 1) * kChunk); i < e; ++i) s += elem(i);
      part[c] = s;
    }
  });
  A s = 0;
  for (A v : part) s += v;
  if (a.reduction == 1) s = n ? s / static_cast<A>(n) : std::numeric_limits<A>::quiet_NaN();
  *out.data<T>() = static_cast<T>(s);
}

template <typename T, LossKind K>
void loss_bwd(const Tensor& grad, const Tensor& in, const Tensor& tg, const Tensor& wt, const Tensor& pwt, Tensor& gi, const LossArgs& a) {
  using A = acc_t<T>;
  const int64_t n = in.numel();
  const T* x = in.data<T>();
  const T* t = tg.data<T>();
  const T* w = wt.defined() ? wt.data<T>() : nullptr;
  const T* pw = pwt.defined() ? pwt.data<T>() : nullptr;
  const T* g = grad.data<T>();
  T* o = gi.data<T>();
  const A beta = static_cast<A>(a.beta);
  const bool scalar = a.reduction != 0;
  const A g0 = scalar ? static_cast<A>(g[0]) / (a.reduction == 1 ? static_cast<A>(n) : A(1)) : A(0);
  parallel_for(n, kGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const A gg = scalar ? g0 : static_cast<A>(g[i]);
      o[i] = static_cast<T>(gg * loss_grad<A, K>(static_cast<A>(x[i]), static_cast<A>(t[i]), w ? static_cast<A>(w[i]) : A(1),
                                                 pw ? static_cast<A>(pw[i]) : A(1), beta));
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
// One 64-bit seed from the CPU generator per call (so manual_seed reproduces the masks), then
// element i keeps when the 24-bit uniform of Philox word i (Note [Philox streams]) is >= p: any
// thread split draws the same mask.
void k_dropout(const Tensor& in, Tensor& out, Tensor& mask, double p) {
  const uint64_t seed = cpu_generator_random64();
  const int64_t n = mask.numel();
  const uint32_t thr = static_cast<uint32_t>(std::ceil(p * 16777216.0));
  const int64_t groups = (n + 3) / 4;
  AG_DISPATCH_FLOAT(mask.dtype(), "dropout", [&] {
    using T = scalar_t;
    using A = acc_t<T>;
    const T s = static_cast<T>(p >= 1.0 ? 0.0 : 1.0 / (1.0 - p));  // the mask's value, rounded to T as torch's
    const A sa = static_cast<A>(s);
    T* m = mask.data<T>();
    const T* x = out.defined() ? in.data<T>() : nullptr;
    T* o = out.defined() ? out.data<T>() : nullptr;
    parallel_for(groups, kGrain / 4, [&](int64_t g0, int64_t g1) {
      for (int64_t gi = g0; gi < g1; ++gi) {
        const philox::Words w = philox::draw(seed, 0, static_cast<uint64_t>(gi));
        for (int j = 0; j < 4; ++j) {
          const int64_t i = gi * 4 + j;
          if (i >= n) break;
          const bool keep = (w.v[j] & 0xFFFFFFu) >= thr;
          m[i] = keep ? s : T(0);
          if (o) o[i] = static_cast<T>(keep ? static_cast<A>(x[i]) * sa : static_cast<A>(x[i]) * A(0));
        }
      }
    });
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
