// CPU kernels of nll_loss and its backward over logp [N, C, S] and int64 targets [N, S]
// (cross_entropy is log_softmax followed by these, as torch records it).
#include <cmath>
#include <vector>
#include "kernels/cpu/loops.h"

namespace ampgrad::cpu {

namespace {
// The first target that is neither ignore_index nor a class, or -1.
int64_t first_bad(const int64_t* t, int64_t n, int64_t C, int64_t ignore) {
  for (int64_t i = 0; i < n; ++i)
    if (t[i] != ignore && (t[i] < 0 || t[i] >= C)) return i;
  return -1;
}

int64_t k_nll(const Tensor& logp, const Tensor& target, const Tensor& weight, Tensor& out, Tensor& total_weight, const NllArgs& a) {
  const int64_t N = a.N, C = a.C, S = a.S, n = N * S;
  const int64_t* t = target.data<int64_t>();
  if (int64_t bad = first_bad(t, n, C, a.ignore_index); bad >= 0) return bad;
  AG_DISPATCH_FLOAT(logp.dtype(), "nll_loss", [&] {
    using A = acc_t<scalar_t>;
    const scalar_t* x = logp.data<scalar_t>();
    const scalar_t* w = weight.defined() ? weight.data<scalar_t>() : nullptr;
    auto wt = [&](int64_t c) { return w ? static_cast<A>(w[c]) : A(1); };
    if (a.reduction == 0) {
      scalar_t* o = out.data<scalar_t>();
      parallel_for(n, kGrain, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) {
          const int64_t c = t[i], nn = i / S, s = i % S;
          o[i] = c == a.ignore_index ? scalar_t(0) : static_cast<scalar_t>(-wt(c) * static_cast<A>(x[(nn * C + c) * S + s]));
        }
      });
      if (total_weight.defined()) total_weight.data<scalar_t>()[0] = scalar_t(0);
      return;
    }
    // Pairwise blocks keep the float32 sums accurate for long batches.
    constexpr int64_t kBlock = 256;
    A tot = 0, tw = 0;
    for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
      A bt = 0, bw = 0;
      for (int64_t i = i0; i < std::min(n, i0 + kBlock); ++i) {
        const int64_t c = t[i];
        if (c == a.ignore_index) continue;
        const int64_t nn = i / S, s = i % S;
        const A wc = wt(c);
        bt -= wc * static_cast<A>(x[(nn * C + c) * S + s]);
        bw += wc;
      }
      tot += bt;
      tw += bw;
    }
    total_weight.data<scalar_t>()[0] = static_cast<scalar_t>(tw);
    out.data<scalar_t>()[0] = static_cast<scalar_t>(a.reduction == 1 ? tot / tw : tot);
  });
  return -1;
}
AG_REGISTER_KERNEL(nll_loss, CPU, k_nll);

void k_nll_backward(const Tensor& grad, const Tensor& target, const Tensor& weight, const Tensor& total_weight, Tensor& gin,
                    const NllArgs& a) {
  const int64_t N = a.N, C = a.C, S = a.S, n = N * S;
  const int64_t* t = target.data<int64_t>();
  AG_DISPATCH_FLOAT(gin.dtype(), "nll_loss_backward", [&] {
    using A = acc_t<scalar_t>;
    scalar_t* o = gin.data<scalar_t>();
    const scalar_t* w = weight.defined() ? weight.data<scalar_t>() : nullptr;
    const scalar_t* g = grad.data<scalar_t>();
    A scale = a.reduction == 0 ? A(1) : static_cast<A>(g[0]);
    if (a.reduction == 1) scale /= static_cast<A>(total_weight.data<scalar_t>()[0]);
    // Zero the gradient row by row, then write the target entries (one pass over memory).
    parallel_for(N, std::max<int64_t>(1, kGrain / std::max<int64_t>(C * S, 1)), [&](int64_t n0, int64_t n1) {
      for (int64_t nn = n0; nn < n1; ++nn) {
        scalar_t* row = o + nn * C * S;
        std::fill(row, row + C * S, scalar_t(0));
        for (int64_t s = 0; s < S; ++s) {
          const int64_t i = nn * S + s, c = t[i];
          if (c == a.ignore_index) continue;
          const A gv = a.reduction == 0 ? static_cast<A>(g[i]) : scale;
          row[c * S + s] = static_cast<scalar_t>(-(w ? static_cast<A>(w[c]) : A(1)) * gv);
        }
      }
    });
    (void)n;
  });
}
AG_REGISTER_KERNEL(nll_loss_backward, CPU, k_nll_backward);

}  // namespace
}  // namespace ampgrad::cpu
