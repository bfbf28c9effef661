// CPU pooling over contiguous [NC, d0, d1, d2] planes (PoolArgs in kernels/kernels.h): max (with
// indices), average, adaptive average and adaptive max, forward and backward, threaded over planes.
// Low precision sums in fp32; a backward accumulates each plane in the compute type and rounds once.
#include <cmath>
#include <limits>
#include "kernels/cpu/loops.h"

namespace ampgrad::cpu {
namespace {

template <typename T> using pacc_t = std::conditional_t<std::is_floating_point_v<acc_t<T>>, acc_t<T>, int64_t>;

template <typename T> inline bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  else return false;
}

// Runs f(plane) for every plane, threaded with a grain that gives a thread about kGrain elements.
template <typename F>
void over_planes(const PoolArgs& p, int64_t per_plane, F&& f) {
  const int64_t grain = std::max<int64_t>(1, kGrain / 4 / std::max<int64_t>(per_plane, 1));
  parallel_for(p.NC, grain, [&](int64_t b, int64_t e) { for (int64_t i = b; i < e; ++i) f(i); });
}

inline int64_t plane_in(const PoolArgs& p) { return p.in[0] * p.in[1] * p.in[2]; }
inline int64_t plane_out(const PoolArgs& p) { return p.out[0] * p.out[1] * p.out[2]; }

// The window of output position o along dim d: [start, end) in input coordinates (before dilation
// for max pooling: taps start + t * dil, t < k).
inline int64_t adaptive_start(int64_t o, int64_t in, int64_t out) { return (o * in) / out; }
inline int64_t adaptive_end(int64_t o, int64_t in, int64_t out) { return ((o + 1) * in + out - 1) / out; }

// ---- max pooling: torch's rule: the first strict maximum, a NaN always taken (the last NaN wins).
// The 2-d case without dilation: window bounds per output row and column computed once.
template <typename T>
void max_forward_2d(const PoolArgs& p, const T* x, T* y, int64_t* ix) {
  using A = pacc_t<T>;
  const int64_t H = p.in[1], W = p.in[2], OW = p.out[2];
  const A lowest = std::numeric_limits<A>::has_infinity ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::lowest();
  for (int64_t oh = 0; oh < p.out[1]; ++oh) {
    int64_t h0 = oh * p.stride[1] - p.pad[1];
    const int64_t h1 = std::min(h0 + p.k[1], H);
    h0 = std::max<int64_t>(h0, 0);
    for (int64_t ow = 0; ow < OW; ++ow) {
      int64_t w0 = ow * p.stride[2] - p.pad[2];
      const int64_t w1 = std::min(w0 + p.k[2], W);
      w0 = std::max<int64_t>(w0, 0);
      int64_t best = h0 * W + w0;
      A m = lowest;
      for (int64_t h = h0; h < h1; ++h) {
        const T* row = x + h * W;
        for (int64_t w = w0; w < w1; ++w) {
          const A v = static_cast<A>(row[w]);
          if (v > m || is_nan(v)) { m = v; best = h * W + w; }
        }
      }
      y[oh * OW + ow] = static_cast<T>(m);
      ix[oh * OW + ow] = best;
    }
  }
}

template <typename T>
void max_forward(const PoolArgs& p, const T* in, T* out, int64_t* idx) {
  using A = pacc_t<T>;
  const int64_t Li = plane_in(p), Lo = plane_out(p);
  if (p.in[0] == 1 && p.k[0] == 1 && p.dil[1] == 1 && p.dil[2] == 1) {
    over_planes(p, Li + Lo, [&](int64_t pl) { max_forward_2d<T>(p, in + pl * Li, out + pl * Lo, idx + pl * Lo); });
    return;
  }
  over_planes(p, Li + Lo, [&](int64_t pl) {
    const T* x = in + pl * Li;
    T* y = out + pl * Lo;
    int64_t* ix = idx + pl * Lo;
    int64_t q = 0;
    for (int64_t o0 = 0; o0 < p.out[0]; ++o0) {
      int64_t s0 = o0 * p.stride[0] - p.pad[0];
      const int64_t e0 = std::min(s0 + (p.k[0] - 1) * p.dil[0] + 1, p.in[0]);
      while (s0 < 0) s0 += p.dil[0];
      for (int64_t o1 = 0; o1 < p.out[1]; ++o1) {
        int64_t s1 = o1 * p.stride[1] - p.pad[1];
        const int64_t e1 = std::min(s1 + (p.k[1] - 1) * p.dil[1] + 1, p.in[1]);
        while (s1 < 0) s1 += p.dil[1];
        for (int64_t o2 = 0; o2 < p.out[2]; ++o2, ++q) {
          int64_t s2 = o2 * p.stride[2] - p.pad[2];
          const int64_t e2 = std::min(s2 + (p.k[2] - 1) * p.dil[2] + 1, p.in[2]);
          while (s2 < 0) s2 += p.dil[2];
          int64_t best = (s0 * p.in[1] + s1) * p.in[2] + s2;
          A m = std::numeric_limits<A>::has_infinity ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::lowest();
          for (int64_t i0 = s0; i0 < e0; i0 += p.dil[0])
            for (int64_t i1 = s1; i1 < e1; i1 += p.dil[1]) {
              const int64_t base = (i0 * p.in[1] + i1) * p.in[2];
              for (int64_t i2 = s2; i2 < e2; i2 += p.dil[2]) {
                const A v = static_cast<A>(x[base + i2]);
                if (v > m || is_nan(v)) { m = v; best = base + i2; }
              }
            }
          y[q] = static_cast<T>(m);
          ix[q] = best;
        }
      }
    }
  });
}

// grad_in[idx] += grad_out, per plane (max and adaptive max).
template <typename T>
void max_backward(const PoolArgs& p, const T* gy, T* gx, const int64_t* idx) {
  using A = pacc_t<T>;
  const int64_t Li = plane_in(p), Lo = plane_out(p);
  over_planes(p, Li + Lo, [&](int64_t pl) {
    const T* g = gy + pl * Lo;
    const int64_t* ix = idx + pl * Lo;
    T* dx = gx + pl * Li;
    if constexpr (std::is_same_v<A, T>) {
      std::fill(dx, dx + Li, T(0));
      for (int64_t q = 0; q < Lo; ++q) dx[ix[q]] += g[q];
    } else {
      std::vector<A> acc(Li, A(0));
      for (int64_t q = 0; q < Lo; ++q) acc[ix[q]] += static_cast<A>(g[q]);
      for (int64_t i = 0; i < Li; ++i) dx[i] = static_cast<T>(acc[i]);
    }
  });
}

// ---- average pooling: torch's divisor: the window clipped to the padded input (count_include_pad),
// or to the input, or divisor_override.
inline void avg_window(const PoolArgs& p, int d, int64_t o, int64_t& s, int64_t& e, int64_t& padded) {
  s = o * p.stride[d] - p.pad[d];
  e = std::min(s + p.k[d], p.in[d] + p.pad[d]);
  padded = e - s;
  s = std::max<int64_t>(s, 0);
  e = std::min(e, p.in[d]);
}

template <typename T, typename F>
void avg_walk(const PoolArgs& p, F&& f) {  // f(q, s[3], e[3], divisor)
  int64_t q = 0;
  for (int64_t o0 = 0; o0 < p.out[0]; ++o0) {
    int64_t s0, e0, n0;
    avg_window(p, 0, o0, s0, e0, n0);
    for (int64_t o1 = 0; o1 < p.out[1]; ++o1) {
      int64_t s1, e1, n1;
      avg_window(p, 1, o1, s1, e1, n1);
      for (int64_t o2 = 0; o2 < p.out[2]; ++o2, ++q) {
        int64_t s2, e2, n2;
        avg_window(p, 2, o2, s2, e2, n2);
        int64_t div = p.divisor ? p.divisor : p.count_include_pad ? n0 * n1 * n2 : (e0 - s0) * (e1 - s1) * (e2 - s2);
        const int64_t s[3] = {s0, s1, s2}, e[3] = {e0, e1, e2};
        f(q, s, e, div);
      }
    }
  }
}

template <typename T>
void avg_forward(const PoolArgs& p, const T* in, T* out) {
  using A = pacc_t<T>;
  const int64_t Li = plane_in(p), Lo = plane_out(p);
  over_planes(p, Li + Lo, [&](int64_t pl) {
    const T* x = in + pl * Li;
    T* y = out + pl * Lo;
    avg_walk<T>(p, [&](int64_t q, const int64_t* s, const int64_t* e, int64_t div) {
      A sum = 0;
      for (int64_t i0 = s[0]; i0 < e[0]; ++i0)
        for (int64_t i1 = s[1]; i1 < e[1]; ++i1) {
          const T* row = x + (i0 * p.in[1] + i1) * p.in[2];
          for (int64_t i2 = s[2]; i2 < e[2]; ++i2) sum += static_cast<A>(row[i2]);
        }
      // (an empty window with count_include_pad=False: 0 / 0, as torch)
      if constexpr (std::is_floating_point_v<A>) y[q] = static_cast<T>(sum / static_cast<A>(div));
      else y[q] = div ? static_cast<T>(sum / div) : T(0);
    });
  });
}

template <typename T>
void avg_backward(const PoolArgs& p, const T* gy, T* gx) {
  using A = pacc_t<T>;
  const int64_t Li = plane_in(p), Lo = plane_out(p);
  over_planes(p, Li + Lo, [&](int64_t pl) {
    const T* g = gy + pl * Lo;
    std::vector<A> acc(Li, A(0));
    avg_walk<T>(p, [&](int64_t q, const int64_t* s, const int64_t* e, int64_t div) {
      const A v = static_cast<A>(g[q]) / static_cast<A>(div);
      for (int64_t i0 = s[0]; i0 < e[0]; ++i0)
        for (int64_t i1 = s[1]; i1 < e[1]; ++i1) {
          A* row = acc.data() + (i0 * p.in[1] + i1) * p.in[2];
          for (int64_t i2 = s[2]; i2 < e[2]; ++i2) row[i2] += v;
        }
    });
    T* dx = gx + pl * Li;
    for (int64_t i = 0; i < Li; ++i) dx[i] = static_cast<T>(acc[i]);
  });
}

// ---- adaptive pooling: window [floor(o * in / out), ceil((o + 1) * in / out)) per dim.
// The windows' bounds per dim, computed once per call: two integer divisions per output element and dim
// were most of a small adaptive pool's time (every plane repeated them).
struct AdaptiveWindows {
  std::vector<int64_t> s[3], e[3];
  explicit AdaptiveWindows(const PoolArgs& p) {
    for (int d = 0; d < 3; ++d)
      for (int64_t o = 0; o < p.out[d]; ++o) {
        s[d].push_back(adaptive_start(o, p.in[d], p.out[d]));
        e[d].push_back(adaptive_end(o, p.in[d], p.out[d]));
      }
  }
};
template <typename F>
void adaptive_walk(const PoolArgs& p, const AdaptiveWindows& w, F&& f) {  // f(q, s[3], e[3])
  int64_t q = 0;
  for (int64_t o0 = 0; o0 < p.out[0]; ++o0)
    for (int64_t o1 = 0; o1 < p.out[1]; ++o1)
      for (int64_t o2 = 0; o2 < p.out[2]; ++o2, ++q) {
        const int64_t s[3] = {w.s[0][o0], w.s[1][o1], w.s[2][o2]};
        const int64_t e[3] = {w.e[0][o0], w.e[1][o1], w.e[2][o2]};
        f(q, s, e);
      }
}

template <typename T>
void adaptive_avg_forward(const PoolArgs& p, const T* in, T* out) {
  const AdaptiveWindows win(p);
  using A = pacc_t<T>;
  const int64_t Li = plane_in(p), Lo = plane_out(p);
  over_planes(p, Li + Lo, [&](int64_t pl) {
    const T* x = in + pl * Li;
    T* y = out + pl * Lo;
    adaptive_walk(p, win, [&](int64_t q, const int64_t* s, const int64_t* e) {
      A sum = 0;
      for (int64_t i0 = s[0]; i0 < e[0]; ++i0)
        for (int64_t i1 = s[1]; i1 < e[1]; ++i1) {
          const T* row = x + (i0 * p.in[1] + i1) * p.in[2];
          for (int64_t i2 = s[2]; i2 < e[2]; ++i2) sum += static_cast<A>(row[i2]);
        }
      y[q] = static_cast<T>(sum / static_cast<A>((e[0] - s[0]) * (e[1] - s[1]) * (e[2] - s[2])));
    });
  });
}

template <typename T>
void adaptive_avg_backward(const PoolArgs& p, const T* gy, T* gx) {
  const AdaptiveWindows win(p);
  using A = pacc_t<T>;
  const int64_t Li = plane_in(p), Lo = plane_out(p);
  over_planes(p, Li + Lo, [&](int64_t pl) {
    const T* g = gy + pl * Lo;
    std::vector<A> acc(Li, A(0));
    adaptive_walk(p, win, [&](int64_t q, const int64_t* s, const int64_t* e) {
      const A v = static_cast<A>(g[q]) / static_cast<A>((e[0] - s[0]) * (e[1] - s[1]) * (e[2] - s[2]));
      for (int64_t i0 = s[0]; i0 < e[0]; ++i0)
        for (int64_t i1 = s[1]; i1 < e[1]; ++i1) {
          A* row = acc.data() + (i0 * p.in[1] + i1) * p.in[2];
          for (int64_t i2 = s[2]; i2 < e[2]; ++i2) row[i2] += v;
        }
    });
    T* dx = gx + pl * Li;
    for (int64_t i = 0; i < Li; ++i) dx[i] = static_cast<T>(acc[i]);
  });
}

template <typename T>
void adaptive_max_forward(const PoolArgs& p, const T* in, T* out, int64_t* idx) {
  const AdaptiveWindows win(p);
  using A = pacc_t<T>;
  const int64_t Li = plane_in(p), Lo = plane_out(p);
  over_planes(p, Li + Lo, [&](int64_t pl) {
    const T* x = in + pl * Li;
    T* y = out + pl * Lo;
    int64_t* ix = idx + pl * Lo;
    adaptive_walk(p, win, [&](int64_t q, const int64_t* s, const int64_t* e) {
      int64_t best = (s[0] * p.in[1] + s[1]) * p.in[2] + s[2];
      A m = std::numeric_limits<A>::has_infinity ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::lowest();
      for (int64_t i0 = s[0]; i0 < e[0]; ++i0)
        for (int64_t i1 = s[1]; i1 < e[1]; ++i1) {
          const int64_t base = (i0 * p.in[1] + i1) * p.in[2];
          for (int64_t i2 = s[2]; i2 < e[2]; ++i2) {
            const A v = static_cast<A>(x[base + i2]);
            if (v > m || is_nan(v)) { m = v; best = base + i2; }
          }
        }
      y[q] = static_cast<T>(m);
      ix[q] = best;
    });
  });
}

template <typename T> void max_like(bool backward, const Tensor& in, Tensor& out, Tensor* indices, const PoolArgs& p, bool adaptive) {
  if (backward) max_backward<T>(p, in.data<T>(), out.data<T>(), indices->data<int64_t>());
  else if (adaptive) adaptive_max_forward<T>(p, in.data<T>(), out.data<T>(), indices->data<int64_t>());
  else max_forward<T>(p, in.data<T>(), out.data<T>(), indices->data<int64_t>());
}

void k_max_pool(bool backward, const Tensor& in, Tensor& out, Tensor* indices, const PoolArgs& p) {
  if (out.numel() == 0) return;
  AG_DISPATCH_NUMERIC(in.dtype(), "max_pool2d", [&] { max_like<scalar_t>(backward, in, out, indices, p, false); });
}
void k_adaptive_max_pool(bool backward, const Tensor& in, Tensor& out, Tensor* indices, const PoolArgs& p) {
  if (out.numel() == 0) return;
  AG_DISPATCH_FLOAT(in.dtype(), "adaptive_max_pool2d", [&] { max_like<scalar_t>(backward, in, out, indices, p, true); });
}
void k_avg_pool(bool backward, const Tensor& in, Tensor& out, Tensor*, const PoolArgs& p) {
  if (out.numel() == 0) return;
  AG_DISPATCH_NUMERIC(in.dtype(), "avg_pool2d", [&] {
    if (backward) avg_backward<scalar_t>(p, in.data<scalar_t>(), out.data<scalar_t>());
    else avg_forward<scalar_t>(p, in.data<scalar_t>(), out.data<scalar_t>());
  });
}
void k_adaptive_avg_pool(bool backward, const Tensor& in, Tensor& out, Tensor*, const PoolArgs& p) {
  if (out.numel() == 0) return;
  AG_DISPATCH_FLOAT(in.dtype(), "adaptive_avg_pool2d", [&] {
    if (backward) adaptive_avg_backward<scalar_t>(p, in.data<scalar_t>(), out.data<scalar_t>());
    else adaptive_avg_forward<scalar_t>(p, in.data<scalar_t>(), out.data<scalar_t>());
  });
}
AG_REGISTER_KERNEL(max_pool, CPU, k_max_pool);
AG_REGISTER_KERNEL(avg_pool, CPU, k_avg_pool);
AG_REGISTER_KERNEL(adaptive_avg_pool, CPU, k_adaptive_avg_pool);
AG_REGISTER_KERNEL(adaptive_max_pool, CPU, k_adaptive_max_pool);

}  // namespace
}  // namespace ampgrad::cpu
