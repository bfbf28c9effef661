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

void k_sgd_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& bufs,
                const std::vector<bool>& fresh, const SgdArgs& a, const Tensor* grad_scale, const Tensor* found_inf) {
  if (skip_step(found_inf)) return;
  for (size_t t = 0; t < params.size(); ++t) {
    AG_DISPATCH_FLOAT(params[t].dtype(), "_sgd_step", [&] {
      using A = acc_t<scalar_t>;
      scalar_t* p = params[t].data<scalar_t>();
      scalar_t* g = grads[t].data<scalar_t>();
      scalar_t* b = bufs[t].defined() ? bufs[t].data<scalar_t>() : nullptr;
      const bool unscale = grad_scale != nullptr, first = fresh[t];
      const A scale = unscale ? static_cast<A>(*grad_scale->data<float>()) : A(1);
      const A wd = static_cast<A>(a.weight_decay), mom = static_cast<A>(a.momentum);
      const A damp1 = static_cast<A>(1 - a.dampening), neg_lr = static_cast<A>(-a.lr);
      // Flags as locals, so the loop's branches are visibly invariant.
      const bool maximize = a.maximize, decay = a.weight_decay != 0, use_mom = a.momentum != 0, nesterov = a.nesterov;
      parallel_for(params[t].numel(), kGrain, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) {
          A gi = static_cast<A>(g[i]);
          if (unscale) { gi = gi / scale; g[i] = static_cast<scalar_t>(gi); }
          if (maximize) gi = -gi;
          if (decay) gi = gi + wd * static_cast<A>(p[i]);
          if (use_mom) {
            A bi = first ? gi : static_cast<A>(static_cast<scalar_t>(static_cast<A>(b[i]) * mom)) + damp1 * gi;
            b[i] = static_cast<scalar_t>(bi);
            bi = static_cast<A>(b[i]);
            gi = nesterov ? gi + mom * bi : bi;
          }
          p[i] = static_cast<scalar_t>(static_cast<A>(p[i]) + neg_lr * gi);
        }
      });
    });
  }
}

void k_adam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& exp_avgs,
                 const std::vector<Tensor>& exp_avg_sqs, const std::vector<Tensor>& max_sqs,
                 const std::vector<Tensor>& steps, const AdamArgs& a, const Tensor* grad_scale, const Tensor* found_inf) {
  if (skip_step(found_inf)) return;
  for (size_t t = 0; t < params.size(); ++t) {
    float& step_ref = *steps[t].data<float>();
    step_ref += 1.0f;
    const double step = step_ref;
    // Scalars computed in double as torch's Python-side code does, then rounded once.
    const double bc1 = 1 - std::pow(a.beta1, step), bc2 = 1 - std::pow(a.beta2, step);
    const double step_size = a.lr / bc1, bc2_sqrt = std::sqrt(bc2);
    AG_DISPATCH_FLOAT(params[t].dtype(), "_adam_step", [&] {
      using A = acc_t<scalar_t>;
      scalar_t* p = params[t].data<scalar_t>();
      scalar_t* g = grads[t].data<scalar_t>();
      scalar_t* m = exp_avgs[t].data<scalar_t>();
      scalar_t* v = exp_avg_sqs[t].data<scalar_t>();
      scalar_t* vmax = a.amsgrad ? max_sqs[t].data<scalar_t>() : nullptr;
      const bool unscale = grad_scale != nullptr;
      const A scale = unscale ? static_cast<A>(*grad_scale->data<float>()) : A(1);
      const A wd = static_cast<A>(a.weight_decay), decay = static_cast<A>(1 - a.lr * a.weight_decay);
      const A w1 = static_cast<A>(1 - a.beta1), beta2 = static_cast<A>(a.beta2), w2 = static_cast<A>(1 - a.beta2);
      const A bc2s = static_cast<A>(bc2_sqrt), eps = static_cast<A>(a.eps), neg_step = static_cast<A>(-step_size);
      const bool maximize = a.maximize, use_decay = a.weight_decay != 0, decoupled = a.decoupled;
      parallel_for(params[t].numel(), kGrain, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) {
          A gi = static_cast<A>(g[i]);
          if (unscale) { gi = gi / scale; g[i] = static_cast<scalar_t>(gi); }
          if (maximize) gi = -gi;
          A pi = static_cast<A>(p[i]);
          if (use_decay) {
            if (decoupled) pi = static_cast<A>(static_cast<scalar_t>(pi * decay));
            else gi = gi + wd * pi;
          }
          const A mi = static_cast<A>(static_cast<scalar_t>(lerp<A>(static_cast<A>(m[i]), gi, w1)));
          A vi = static_cast<A>(static_cast<scalar_t>(static_cast<A>(v[i]) * beta2));
          vi = static_cast<A>(static_cast<scalar_t>(vi + w2 * gi * gi));
          m[i] = static_cast<scalar_t>(mi);
          v[i] = static_cast<scalar_t>(vi);
          A vd = vi;
          if (vmax) {
            vd = std::max(static_cast<A>(vmax[i]), vi);
            vmax[i] = static_cast<scalar_t>(vd);
          }
          const A denom = static_cast<A>(static_cast<scalar_t>(std::sqrt(vd) / bc2s)) + eps;
          p[i] = static_cast<scalar_t>(pi + neg_step * mi / static_cast<A>(static_cast<scalar_t>(denom)));
        }
      });
    });
  }
}
}  // namespace

AG_REGISTER_KERNEL(sgd_step, CPU, k_sgd_step);
AG_REGISTER_KERNEL(adam_step, CPU, k_adam_step);

}  // namespace ampgrad::cpu
