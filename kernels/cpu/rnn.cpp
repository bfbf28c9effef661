// CPU kernels of the fused RNN cells (Note [Fused RNN cells] in kernels/kernels.h): one pass per batch
// row, fp16 / bf16 widened to fp32 and rounded once on store; sigmoid / tanh on the kW-lane vector math
// for fp32 (kernels/cpu/vec_math.h), libm for float64.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>
#include "kernels/cpu/loops.h"
#include "kernels/cpu/vec_math.h"

namespace ampgrad::cpu {
namespace {

template <typename A, bool kTanh>
inline void activate(A* p, int64_t n) {
  if constexpr (std::is_same_v<A, float>) {
    int64_t i = 0;
    for (; i + vec::kW <= n; i += vec::kW) {
      vec::vf v = vec::load(p + i);
      vec::store(p + i, kTanh ? vec::tanh(v) : vec::sigmoid(v));
    }
    if (i < n) {
      float t[vec::kW] = {};
      std::memcpy(t, p + i, sizeof(float) * (n - i));
      vec::vf v = vec::load(t);
      vec::store(t, kTanh ? vec::tanh(v) : vec::sigmoid(v));
      std::memcpy(p + i, t, sizeof(float) * (n - i));
    }
  } else {
    for (int64_t i = 0; i < n; ++i) p[i] = kTanh ? std::tanh(p[i]) : A(1) / (A(1) + std::exp(-p[i]));
  }
}
template <typename A> inline void sigmoid_(A* p, int64_t n) { activate<A, false>(p, n); }
template <typename A> inline void tanh_(A* p, int64_t n) { activate<A, true>(p, n); }

template <typename T, typename A>
inline void widen(const T* p, int64_t n, A* d) {
  if (!p) { std::fill(d, d + n, A(0)); return; }
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<A>(p[i]);
}

int64_t row_grain(int64_t width) { return std::max<int64_t>(1, kGrain / std::max<int64_t>(1, width)); }

// ---------------------------------------------------------------- LSTM
void k_lstm_cell(const Tensor& gates, const Tensor& cx, const Tensor&, Tensor& hy, Tensor& cy, Tensor& ws) {
  const int64_t B = hy.sizes()[0], H = hy.sizes()[1];
  AG_DISPATCH_FLOAT(gates.dtype(), "_thnn_fused_lstm_cell_cpu", [&] {
    using T = scalar_t;
    using A = acc_t<T>;
    const T* g = gates.data<T>();
    const T* c = cx.data<T>();
    T* h1 = hy.data<T>();
    T* c1 = cy.data<T>();
    A* w = ws.data<A>();
    parallel_for(B, row_grain(8 * H), [&](int64_t b0, int64_t b1) {
      std::vector<A> buf(H);
      for (int64_t b = b0; b < b1; ++b) {
        A* a = w + b * 4 * H;  // activated i | f | g | o, written in place
        widen(g + b * 4 * H, 4 * H, a);
        sigmoid_(a, 2 * H);
        tanh_(a + 2 * H, H);
        sigmoid_(a + 3 * H, H);
        const T* cr = c + b * H;
        A* t = buf.data();
        for (int64_t j = 0; j < H; ++j) t[j] = a[H + j] * static_cast<A>(cr[j]) + a[j] * a[2 * H + j];
        for (int64_t j = 0; j < H; ++j) c1[b * H + j] = static_cast<T>(t[j]);
        tanh_(t, H);
        for (int64_t j = 0; j < H; ++j) h1[b * H + j] = static_cast<T>(a[3 * H + j] * t[j]);
      }
    });
  });
}

void k_lstm_cell_backward(const Tensor& ghy, const Tensor& gcy, const Tensor& cx, const Tensor& cy, const Tensor& ws,
                          Tensor& dgates, Tensor& dcx, Tensor&) {
  const int64_t B = cx.sizes()[0], H = cx.sizes()[1];
  AG_DISPATCH_FLOAT(cx.dtype(), "_thnn_fused_lstm_cell_backward", [&] {
    using T = scalar_t;
    using A = acc_t<T>;
    const T* gh = ghy.defined() ? ghy.data<T>() : nullptr;
    const T* gc = gcy.defined() ? gcy.data<T>() : nullptr;
    const T* c = cx.data<T>();
    const T* c1 = cy.data<T>();
    const A* w = ws.data<A>();
    T* dg = dgates.data<T>();
    T* dc = dcx.defined() ? dcx.data<T>() : nullptr;
    parallel_for(B, row_grain(8 * H), [&](int64_t b0, int64_t b1) {
      std::vector<A> tc(H), gha(H), gca(H);
      for (int64_t b = b0; b < b1; ++b) {
        const A* a = w + b * 4 * H;
        widen(c1 + b * H, H, tc.data());
        tanh_(tc.data(), H);
        widen(gh ? gh + b * H : nullptr, H, gha.data());
        widen(gc ? gc + b * H : nullptr, H, gca.data());
        const T* cr = c + b * H;
        T* d = dg + b * 4 * H;
        for (int64_t j = 0; j < H; ++j) {
          const A i = a[j], f = a[H + j], gg = a[2 * H + j], o = a[3 * H + j], t = tc[j];
          const A dcy = gca[j] + gha[j] * o * (A(1) - t * t);
          d[j] = static_cast<T>(dcy * gg * i * (A(1) - i));
          d[H + j] = static_cast<T>(dcy * static_cast<A>(cr[j]) * f * (A(1) - f));
          d[2 * H + j] = static_cast<T>(dcy * i * (A(1) - gg * gg));
          d[3 * H + j] = static_cast<T>(gha[j] * t * o * (A(1) - o));
          if (dc) dc[b * H + j] = static_cast<T>(dcy * f);
        }
      }
    });
  });
}

// ---------------------------------------------------------------- GRU
void k_gru_cell(const Tensor& gi, const Tensor& gh, const Tensor& hx, Tensor& hy, Tensor&, Tensor& ws) {
  const int64_t B = hy.sizes()[0], H = hy.sizes()[1];
  AG_DISPATCH_FLOAT(gi.dtype(), "_thnn_fused_gru_cell_cpu", [&] {
    using T = scalar_t;
    using A = acc_t<T>;
    const T* pi = gi.data<T>();
    const T* ph = gh.data<T>();
    const T* h = hx.data<T>();
    T* h1 = hy.data<T>();
    A* w = ws.data<A>();
    parallel_for(B, row_grain(10 * H), [&](int64_t b0, int64_t b1) {
      std::vector<A> bi(3 * H);
      for (int64_t b = b0; b < b1; ++b) {
        A* a = w + b * 4 * H;  // r | z | n | hidden n gate
        widen(pi + b * 3 * H, 3 * H, bi.data());
        widen(ph + b * 3 * H, 3 * H, a + H);  // hidden gates r, z, n land at [H, 4H)
        for (int64_t j = 0; j < 2 * H; ++j) a[j] = bi[j] + a[H + j];
        sigmoid_(a, 2 * H);
        A* n = a + 2 * H;
        const A* hn = a + 3 * H;
        const A* r = a;
        for (int64_t j = 0; j < H; ++j) n[j] = bi[2 * H + j] + r[j] * hn[j];
        tanh_(n, H);
        const T* hr = h + b * H;
        for (int64_t j = 0; j < H; ++j) {
          const A z = a[H + j];
          h1[b * H + j] = static_cast<T>((static_cast<A>(hr[j]) - n[j]) * z + n[j]);
        }
      }
    });
  });
}

void k_gru_cell_backward(const Tensor& ghy, const Tensor&, const Tensor& hx, const Tensor&, const Tensor& ws, Tensor& dgi,
                         Tensor& dgh, Tensor& dhx) {
  const int64_t B = hx.sizes()[0], H = hx.sizes()[1];
  AG_DISPATCH_FLOAT(hx.dtype(), "_thnn_fused_gru_cell_backward", [&] {
    using T = scalar_t;
    using A = acc_t<T>;
    const T* g = ghy.data<T>();
    const T* h = hx.data<T>();
    const A* w = ws.data<A>();
    T* di = dgi.defined() ? dgi.data<T>() : nullptr;
    T* dh_ = dgh.defined() ? dgh.data<T>() : nullptr;
    T* dx = dhx.defined() ? dhx.data<T>() : nullptr;
    parallel_for(B, row_grain(10 * H), [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const A* a = w + b * 4 * H;
        for (int64_t j = 0; j < H; ++j) {
          const A r = a[j], z = a[H + j], n = a[2 * H + j], hn = a[3 * H + j];
          const A go = static_cast<A>(g[b * H + j]), hv = static_cast<A>(h[b * H + j]);
          const A dn = go * (A(1) - z) * (A(1) - n * n);
          const A dz = go * (hv - n) * z * (A(1) - z);
          const A dr = dn * hn * r * (A(1) - r);
          if (di) {
            T* d = di + b * 3 * H;
            d[j] = static_cast<T>(dr);
            d[H + j] = static_cast<T>(dz);
            d[2 * H + j] = static_cast<T>(dn);
          }
          if (dh_) {
            T* d = dh_ + b * 3 * H;
            d[j] = static_cast<T>(dr);
            d[H + j] = static_cast<T>(dz);
            d[2 * H + j] = static_cast<T>(dn * r);
          }
          if (dx) dx[b * H + j] = static_cast<T>(go * z);
        }
      }
    });
  });
}

}  // namespace

AG_REGISTER_KERNEL(lstm_cell_fused, CPU, k_lstm_cell);
AG_REGISTER_KERNEL(lstm_cell_fused_backward, CPU, k_lstm_cell_backward);
AG_REGISTER_KERNEL(gru_cell_fused, CPU, k_gru_cell);
AG_REGISTER_KERNEL(gru_cell_fused_backward, CPU, k_gru_cell_backward);
}  // namespace ampgrad::cpu
