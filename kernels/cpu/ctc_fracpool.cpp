// CPU kernels of ctc_loss (forward: the log-alpha recursion and the negative log likelihood;
// backward: the log-beta recursion and torch's gradient formula) and of fractional max pooling's
// forward (torch's interval sequences, computed in the input's dtype as torch's kernel does). Batches
// (CTC) and planes (pooling) split across threads. Note [CTC and fractional pool kernels].
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>
#include "kernels/cpu/loops.h"
#include "kernels/ctc_fracpool_args.h"

namespace ampgrad::cpu {

namespace {
using CA = CtcFracArgs;

// ---------------------------------------------------------------- CTC
// l'(s): blank at even s, the target's (s / 2)-th label at odd s.
inline int64_t label_at(const int64_t* tg, int64_t off, int64_t stride, int64_t s, int64_t blank) {
  return (s % 2 == 0) ? blank : tg[off + stride * (s / 2)];
}

template <typename T> T log3(T a, T b, T c) {  // log(e^a + e^b + e^c), -inf safe
  constexpr T ninf = -std::numeric_limits<T>::infinity();
  T m = std::max(a, std::max(b, c));
  if (m == ninf) return ninf;
  return std::log(std::exp(a - m) + std::exp(b - m) + std::exp(c - m)) + m;
}

template <typename T>
void ctc_forward(const Tensor* in, Tensor* out, const CA& a) {
  constexpr T ninf = -std::numeric_limits<T>::infinity();
  const T* lp = in[0].data<T>();
  const int64_t* tg = in[1].data<int64_t>();
  const int64_t* il = in[2].data<int64_t>();
  const int64_t* tl = in[3].data<int64_t>();
  const int64_t* toff = in[4].data<int64_t>();
  T* nll = out[0].data<T>();
  T* la = out[1].data<T>();
  const int64_t T_ = a.T, N = a.N, C = a.C, W = a.alpha_width;
  parallel_for(N, 2, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t L = tl[b], Tn = il[b], S = 2 * L + 1, off = toff[b];
      T* al = la + b * T_ * W;
      std::fill(al, al + T_ * W, ninf);
      auto lpb = [&](int64_t t, int64_t c) { return lp[(t * N + b) * C + c]; };
      if (Tn == 0) {  // an empty input explains only an empty target
        nll[b] = L == 0 ? T(-0.0) : std::numeric_limits<T>::infinity();
        continue;
      }
      al[0] = lpb(0, a.blank);
      if (L > 0) al[1] = lpb(0, label_at(tg, off, a.target_stride, 1, a.blank));
      for (int64_t t = 1; t < Tn; ++t) {
        const T* prev = al + (t - 1) * W;
        T* cur = al + t * W;
        for (int64_t s = 0; s < S; ++s) {
          const int64_t l = label_at(tg, off, a.target_stride, s, a.blank);
          T l1 = prev[s], l2 = s > 0 ? prev[s - 1] : ninf, l3 = ninf;
          if (s > 1 && label_at(tg, off, a.target_stride, s - 2, a.blank) != l) l3 = prev[s - 2];
          cur[s] = log3(l1, l2, l3) + lpb(t, l);
        }
      }
      const T* last = al + (Tn - 1) * W;
      const T ll = log3(last[S - 1], L > 0 ? last[S - 2] : ninf, ninf);
      nll[b] = -ll;
    }
  });
}

template <typename T>
void ctc_backward(const Tensor* in, Tensor* out, const CA& a) {
  constexpr T ninf = -std::numeric_limits<T>::infinity();
  const T* gr = in[0].data<T>();
  const T* lp = in[1].data<T>();
  const int64_t* tg = in[2].data<int64_t>();
  const int64_t* il = in[3].data<int64_t>();
  const int64_t* tl = in[4].data<int64_t>();
  const int64_t* toff = in[5].data<int64_t>();
  const T* nllp = in[6].data<T>();
  const T* la = in[7].data<T>();
  T* gx = out[0].data<T>();
  const int64_t T_ = a.T, N = a.N, C = a.C, W = a.alpha_width;
  parallel_for(N, 2, [&](int64_t b0, int64_t b1) {
    std::vector<T> beta(static_cast<size_t>(2 * W)), lcab(static_cast<size_t>(C));
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t L = tl[b], Tn = il[b], S = 2 * L + 1, off = toff[b];
      const T nll = nllp[b], g = gr[b];
      const T* al = la + b * T_ * W;
      auto lpb = [&](int64_t t, int64_t c) { return lp[(t * N + b) * C + c]; };
      auto gxb = [&](int64_t t, int64_t c) -> T& { return gx[(t * N + b) * C + c]; };
      for (int64_t t = Tn; t < T_; ++t)
        for (int64_t c = 0; c < C; ++c) gxb(t, c) = T(0);
      if (Tn == 0) continue;
      if (a.zero_infinity && nll == std::numeric_limits<T>::infinity()) {
        for (int64_t t = 0; t < Tn; ++t)
          for (int64_t c = 0; c < C; ++c) gxb(t, c) = T(0);
        continue;
      }
      // log beta, two rows (t + 1 and t), walking t down; lcab[c] collects alpha * beta per label at t
      T* nxt = beta.data();
      T* cur = beta.data() + W;
      for (int64_t t = Tn - 1; t >= 0; --t) {
        std::fill(lcab.begin(), lcab.end(), ninf);
        const T* at = al + t * W;
        for (int64_t s = S - 1; s >= 0; --s) {
          const int64_t l = label_at(tg, off, a.target_stride, s, a.blank);
          T v;
          if (t == Tn - 1) {
            v = (s >= S - 2) ? lpb(t, l) : ninf;
          } else {
            T b1v = nxt[s], b2 = s < S - 1 ? nxt[s + 1] : ninf, b3 = ninf;
            if (s < S - 2 && label_at(tg, off, a.target_stride, s + 2, a.blank) != l) b3 = nxt[s + 2];
            v = log3(b1v, b2, b3) + lpb(t, l);
          }
          cur[s] = v;
          const T ab = at[s] + v;
          T& acc = lcab[static_cast<size_t>(l)];
          if (acc == ninf) {
            acc = ab;
          } else if (ab != ninf) {
            const T m = std::max(acc, ab);
            acc = std::log(std::exp(acc - m) + std::exp(ab - m)) + m;
          }
        }
        for (int64_t c = 0; c < C; ++c) {
          const T l = lpb(t, c);
          gxb(t, c) = (std::exp(l) - std::exp(lcab[static_cast<size_t>(c)] + nll - l)) * g;
        }
        std::swap(nxt, cur);
      }
    }
  });
}

// ---------------------------------------------------------------- fractional max pooling
// torch's generate_intervals in the input's dtype T: every operation rounds to T (fp16 / bf16 too).
template <typename T>
void intervals(T sample, int64_t in, int64_t out, int64_t pool, std::vector<int64_t>& seq) {
  using A = acc_t<T>;
  seq.assign(static_cast<size_t>(std::max<int64_t>(out, 0)), 0);
  if (out > 1) {
    const T alpha = static_cast<T>(static_cast<A>(static_cast<T>(in - pool)) / static_cast<A>(static_cast<T>(out - 1)));
    const T sa = static_cast<T>(static_cast<A>(sample) * static_cast<A>(alpha));
    for (int64_t i = 0; i < out - 1; ++i) {
      const T is = static_cast<T>(static_cast<A>(static_cast<T>(i)) + static_cast<A>(sample));
      const T v = static_cast<T>(static_cast<A>(is) * static_cast<A>(alpha));
      seq[static_cast<size_t>(i)] = static_cast<int64_t>(static_cast<A>(v)) - static_cast<int64_t>(static_cast<A>(sa));
    }
  }
  if (out > 0) seq[static_cast<size_t>(out - 1)] = in - pool;
}

template <typename T>
void frac_pool(const Tensor* in, Tensor* out, const CA& a) {
  using A = acc_t<T>;
  const T* x = in[0].data<T>();
  const T* smp = in[1].data<T>();
  T* y = out[0].data<T>();
  int64_t* ix = out[1].data<int64_t>();
  const int64_t iT = a.in[0], iH = a.in[1], iW = a.in[2], oT = a.out[0], oH = a.out[1], oW = a.out[2];
  const int64_t kT = a.k[0], kH = a.k[1], kW = a.k[2];
  const int64_t Li = iT * iH * iW, Lo = oT * oH * oW;
  parallel_for(a.planes, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, Li + Lo)), [&](int64_t p0, int64_t p1) {
    std::vector<int64_t> sT, sH, sW;
    for (int64_t p = p0; p < p1; ++p) {
      const T* s = smp + p * a.nd;
      if (a.nd == 3) {
        intervals<T>(s[0], iT, oT, kT, sT);
        intervals<T>(s[1], iH, oH, kH, sH);
        intervals<T>(s[2], iW, oW, kW, sW);
      } else {
        sT.assign(1, 0);
        intervals<T>(s[1], iH, oH, kH, sH);
        intervals<T>(s[0], iW, oW, kW, sW);
      }
      const T* xp = x + p * Li;
      T* yp = y + p * Lo;
      int64_t* ip = ix + p * Lo;
      for (int64_t t = 0; t < oT; ++t)
        for (int64_t h = 0; h < oH; ++h)
          for (int64_t w = 0; w < oW; ++w) {
            const int64_t t0 = sT[static_cast<size_t>(t)], h0 = sH[static_cast<size_t>(h)], w0 = sW[static_cast<size_t>(w)];
            A best = -std::numeric_limits<A>::infinity();
            int64_t bi = (t0 * iH + h0) * iW + w0;
            for (int64_t t2 = t0; t2 < t0 + kT; ++t2)
              for (int64_t h2 = h0; h2 < h0 + kH; ++h2)
                for (int64_t w2 = w0; w2 < w0 + kW; ++w2) {
                  const int64_t q = (t2 * iH + h2) * iW + w2;
                  const A v = static_cast<A>(xp[q]);
                  if (v > best || std::isnan(v)) {
                    best = v;
                    bi = q;
                  }
                }
            const int64_t o = (t * oH + h) * oW + w;
            yp[o] = static_cast<T>(best);
            ip[o] = bi;
          }
    }
  });
}

void k_ctc_fracpool(const Tensor* in, Tensor* out, const CA& a) {
  switch (a.mode) {
    case CA::kCtcForward:
      if (in[0].dtype() == ScalarType::Float64) ctc_forward<double>(in, out, a);
      else ctc_forward<float>(in, out, a);
      break;
    case CA::kCtcBackward:
      if (in[1].dtype() == ScalarType::Float64) ctc_backward<double>(in, out, a);
      else ctc_backward<float>(in, out, a);
      break;
    case CA::kFracPool:
      AG_DISPATCH_FLOAT(in[0].dtype(), a.nd == 3 ? "fractional_max_pool3d_out_frame" : "fractional_max_pool2d_out_frame",
                        [&] { frac_pool<scalar_t>(in, out, a); });
      break;
  }
}
}  // namespace

AG_REGISTER_KERNEL(ctc_loss, CPU, k_ctc_fracpool);
AG_REGISTER_KERNEL(fractional_max_pool2d, CPU, k_ctc_fracpool);
AG_REGISTER_KERNEL(fractional_max_pool3d, CPU, k_ctc_fracpool);

}  // namespace ampgrad::cpu
