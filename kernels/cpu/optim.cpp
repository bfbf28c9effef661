// CPU kernels of the multi-tensor optimizer steps (Note [Fused optimizer steps]). Each element is
// updated with the arithmetic of torch's single-tensor SGD/Adam (scalars rounded to the compute
// type first, as torch's tensor-scalar ops do), so fp32 runs match torch's to rounding.
#include <cmath>
#include "kernels/cpu/loops.h"

namespace ampgrad::cpu {

namespace {
bool skip_step(const Tensor* found_inf) { return found_inf && *found_inf->data<float>() != 0.0f; }

template <typename A> inline A lerp(A self, A end, A w) {
  return std::abs(w) < A(0.5) ? self + w * (end - self) : end - (end - self) * (A(1) - w);
}

struct SgdScalars { double scale, sign, wd, mom, damp1, neg_lr; };

// One chunk of an SGD step, the flags as template arguments: each combination is a branch-free
// loop over restrict pointers that the compiler vectorizes. (One loop testing the flags, with the
// scalars captured by reference, compiled to scalar code reloading them: 4x slower than torch.)
template <typename T, bool Unscale, bool Decay, int Mom, bool Nesterov>  // Mom: 0 none, 1 first step, 2 later
void sgd_chunk(T* __restrict p, T* __restrict g, T* __restrict b, int64_t n, SgdScalars sc) {
  using A = acc_t<T>;
  const A scale = static_cast<A>(sc.scale), sign = static_cast<A>(sc.sign), wd = static_cast<A>(sc.wd);
  const A mom = static_cast<A>(sc.mom), damp1 = static_cast<A>(sc.damp1), neg_lr = static_cast<A>(sc.neg_lr);
  for (int64_t i = 0; i < n; ++i) {
    A gi = static_cast<A>(g[i]);
    if constexpr (Unscale) { gi = gi / scale; g[i] = static_cast<T>(gi); }
    gi = gi * sign;  // maximize: an exact sign flip
    if constexpr (Decay) gi = gi + wd * static_cast<A>(p[i]);
    if constexpr (Mom != 0) {
      A bi = Mom == 1 ? gi : static_cast<A>(static_cast<T>(static_cast<A>(b[i]) * mom)) + damp1 * gi;
      b[i] = static_cast<T>(bi);
      bi = static_cast<A>(b[i]);
      gi = Nesterov ? gi + mom * bi : bi;
    }
    p[i] = static_cast<T>(static_cast<A>(p[i]) + neg_lr * gi);
  }
}

template <typename T>
using SgdChunk = void (*)(T*, T*, T*, int64_t, SgdScalars);

template <typename T, bool U, bool D>
SgdChunk<T> pick_sgd(int mom, bool nesterov) {
  if (mom == 0) return sgd_chunk<T, U, D, 0, false>;
  if (mom == 1) return nesterov ? sgd_chunk<T, U, D, 1, true> : sgd_chunk<T, U, D, 1, false>;
  return nesterov ? sgd_chunk<T, U, D, 2, true> : sgd_chunk<T, U, D, 2, false>;
}

void k_sgd_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& bufs,
                const std::vector<bool>& fresh, const SgdArgs& a, const Tensor* grad_scale, const Tensor* found_inf) {
  if (skip_step(found_inf)) return;
  const bool unscale = grad_scale != nullptr, decay = a.weight_decay != 0;
  const SgdScalars sc{unscale ? static_cast<double>(*grad_scale->data<float>()) : 1.0, a.maximize ? -1.0 : 1.0,
                      a.weight_decay, a.momentum, 1 - a.dampening, -a.lr};
  for (size_t t = 0; t < params.size(); ++t) {
    AG_DISPATCH_FLOAT(params[t].dtype(), "_sgd_step", [&] {
      using T = scalar_t;
      T* p = params[t].data<T>();
      T* g = grads[t].data<T>();
      T* b = bufs[t].defined() ? bufs[t].data<T>() : nullptr;
      const int mom = a.momentum == 0 ? 0 : fresh[t] ? 1 : 2;
      const SgdChunk<T> f = unscale ? (decay ? pick_sgd<T, true, true>(mom, a.nesterov) : pick_sgd<T, true, false>(mom, a.nesterov))
                                    : (decay ? pick_sgd<T, false, true>(mom, a.nesterov) : pick_sgd<T, false, false>(mom, a.nesterov));
      parallel_for(params[t].numel(), kGrain, [&](int64_t lo, int64_t hi) { f(p + lo, g + lo, b ? b + lo : nullptr, hi - lo, sc); });
    });
  }
}

struct AdamScalars { double scale, sign, wd, decay, w1, beta2, w2, bc2s, eps, neg_step; };

// One chunk of an Adam/AdamW step, vectorizable as sgd_chunk. Decay: 0 none, 1 L2 (Adam),
// 2 decoupled (AdamW). Each element rounds to T where torch's single-tensor ops would.
template <typename T, bool Unscale, int Decay, bool Amsgrad>
void adam_chunk(T* __restrict p, T* __restrict g, T* __restrict m, T* __restrict v, T* __restrict vmax, int64_t n,
                AdamScalars sc) {
  using A = acc_t<T>;
  const A scale = static_cast<A>(sc.scale), sign = static_cast<A>(sc.sign), wd = static_cast<A>(sc.wd);
  const A decay = static_cast<A>(sc.decay), w1 = static_cast<A>(sc.w1), beta2 = static_cast<A>(sc.beta2);
  const A w2 = static_cast<A>(sc.w2), bc2s = static_cast<A>(sc.bc2s), eps = static_cast<A>(sc.eps);
  const A neg_step = static_cast<A>(sc.neg_step);
  for (int64_t i = 0; i < n; ++i) {
    A gi = static_cast<A>(g[i]);
    if constexpr (Unscale) { gi = gi / scale; g[i] = static_cast<T>(gi); }
    gi = gi * sign;
    A pi = static_cast<A>(p[i]);
    if constexpr (Decay == 2) pi = static_cast<A>(static_cast<T>(pi * decay));
    if constexpr (Decay == 1) gi = gi + wd * pi;
    const A mi = static_cast<A>(static_cast<T>(lerp<A>(static_cast<A>(m[i]), gi, w1)));
    A vi = static_cast<A>(static_cast<T>(static_cast<A>(v[i]) * beta2));
    vi = static_cast<A>(static_cast<T>(vi + w2 * gi * gi));
    m[i] = static_cast<T>(mi);
    v[i] = static_cast<T>(vi);
    A vd = vi;
    if constexpr (Amsgrad) {
      vd = std::max(static_cast<A>(vmax[i]), vi);
      vmax[i] = static_cast<T>(vd);
    }
    const A denom = static_cast<A>(static_cast<T>(std::sqrt(vd) / bc2s)) + eps;
    p[i] = static_cast<T>(pi + neg_step * mi / static_cast<A>(static_cast<T>(denom)));
  }
}

template <typename T>
using AdamChunk = void (*)(T*, T*, T*, T*, T*, int64_t, AdamScalars);

template <typename T, bool U>
AdamChunk<T> pick_adam(int decay, bool amsgrad) {
  if (decay == 0) return amsgrad ? adam_chunk<T, U, 0, true> : adam_chunk<T, U, 0, false>;
  if (decay == 1) return amsgrad ? adam_chunk<T, U, 1, true> : adam_chunk<T, U, 1, false>;
  return amsgrad ? adam_chunk<T, U, 2, true> : adam_chunk<T, U, 2, false>;
}

void k_adam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& exp_avgs,
                 const std::vector<Tensor>& exp_avg_sqs, const std::vector<Tensor>& max_sqs,
                 const std::vector<Tensor>& steps, const AdamArgs& a, const Tensor* grad_scale, const Tensor* found_inf) {
  if (skip_step(found_inf)) return;
  const bool unscale = grad_scale != nullptr;
  const int decay = a.weight_decay == 0 ? 0 : a.decoupled ? 2 : 1;
  for (size_t t = 0; t < params.size(); ++t) {
    float& step_ref = *steps[t].data<float>();
    step_ref += 1.0f;
    const double step = step_ref;
    // Scalars computed in double as torch's Python-side code does, then rounded once.
    const double bc1 = 1 - std::pow(a.beta1, step), bc2 = 1 - std::pow(a.beta2, step);
    const AdamScalars sc{unscale ? static_cast<double>(*grad_scale->data<float>()) : 1.0, a.maximize ? -1.0 : 1.0,
                         a.weight_decay, 1 - a.lr * a.weight_decay, 1 - a.beta1, a.beta2, 1 - a.beta2, std::sqrt(bc2),
                         a.eps, -(a.lr / bc1)};
    AG_DISPATCH_FLOAT(params[t].dtype(), "_adam_step", [&] {
      using T = scalar_t;
      T* p = params[t].data<T>();
      T* g = grads[t].data<T>();
      T* m = exp_avgs[t].data<T>();
      T* v = exp_avg_sqs[t].data<T>();
      T* vmax = a.amsgrad ? max_sqs[t].data<T>() : nullptr;
      const AdamChunk<T> f = unscale ? pick_adam<T, true>(decay, a.amsgrad) : pick_adam<T, false>(decay, a.amsgrad);
      parallel_for(params[t].numel(), kGrain, [&](int64_t lo, int64_t hi) {
        f(p + lo, g + lo, m + lo, v + lo, vmax ? vmax + lo : nullptr, hi - lo, sc);
      });
    });
  }
}
}  // namespace

AG_REGISTER_KERNEL(sgd_step, CPU, k_sgd_step);
AG_REGISTER_KERNEL(adam_step, CPU, k_adam_step);

}  // namespace ampgrad::cpu
