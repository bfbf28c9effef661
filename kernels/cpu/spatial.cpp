// CPU spatial kernels (Note [Spatial kernels]): reflect / replicate / circular padding, nearest /
// linear / cubic upsampling with torch's source-index math (ATen's UpSample.h), im2col / col2im
// (the convolution's, kernels/cpu/im2col.h) and max_unpool, forward and backward, threaded over
// planes. Low precision computes in fp32; a backward accumulates each plane in fp32 and rounds once.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>
#include "kernels/cpu/im2col.h"
#include "kernels/cpu/loops.h"

namespace ampgrad::cpu {
namespace {

template <typename T> using sacc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <typename F>
void over_planes(int64_t n, int64_t per_plane, F&& f) {
  const int64_t grain = std::max<int64_t>(1, kGrain / 4 / std::max<int64_t>(per_plane, 1));
  parallel_for(n, grain, [&](int64_t b, int64_t e) { for (int64_t i = b; i < e; ++i) f(i); });
}

inline int64_t prod3(const int64_t* v) { return v[0] * v[1] * v[2]; }

// Each spatial dim d maps output position o to T_d taps (index, weight); an inactive (padded) dim
// has one tap (0, 1). The sum is nested as ATen's Interpolate: sum_a (sum_b (sum_c x w2) w1) w0.
template <typename A>
struct Taps {
  int n[3] = {1, 1, 1};
  std::vector<int64_t> idx[3];  // [tap * out + o]
  std::vector<A> w[3];
};

// ---- padding: out position o reads in position map[o] along each dim
std::vector<int64_t> pad_map(Op op, int64_t in, int64_t out, int64_t before) {
  std::vector<int64_t> m(out);
  if (op == Op::pad_circular) {
    // torch's _pad_circular: negative pads crop first, then the positive ones wrap the cropped tensor.
    const int64_t after = out - in - before;
    const int64_t lo = std::max<int64_t>(-before, 0), c = in - lo - std::max<int64_t>(-after, 0), b = std::max<int64_t>(before, 0);
    for (int64_t o = 0; o < out; ++o) m[o] = ((o - b) % c + c) % c + lo;
    return m;
  }
  for (int64_t o = 0; o < out; ++o) {
    int64_t i = o - before;
    if (op == Op::pad_reflect) {
      if (i < 0) i = -i;
      if (i >= in) i = 2 * (in - 1) - i;
    } else {
      i = std::min(std::max<int64_t>(i, 0), in - 1);
    }
    m[o] = i;
  }
  return m;
}

template <typename T>
void pad_run(Op op, bool backward, const Tensor& in, Tensor& out, const SpatialArgs& a) {
  // sizes of the padded (forward output) planes
  const int64_t* isz = a.in;
  const int64_t* osz = a.out;
  std::vector<int64_t> m[3];
  for (int d = 0; d < 3; ++d) m[d] = pad_map(op, isz[d], osz[d], a.before[d]);
  const int64_t Li = prod3(isz), Lo = prod3(osz);
  if (!backward) {
    const T* x = in.data<T>();
    T* y = out.data<T>();
    // The last dim's map as runs of consecutive input positions (the interior is one run): copies.
    std::vector<std::array<int64_t, 3>> runs;  // (output start, input start, length)
    for (int64_t o2 = 0; o2 < osz[2]; ++o2) {
      if (!runs.empty() && runs.back()[1] + runs.back()[2] == m[2][o2] && runs.back()[0] + runs.back()[2] == o2) ++runs.back()[2];
      else runs.push_back({o2, m[2][o2], 1});
    }
    over_planes(a.NC, Lo, [&](int64_t p) {
      const T* xp = x + p * Li;
      T* yp = y + p * Lo;
      for (int64_t o0 = 0; o0 < osz[0]; ++o0)
        for (int64_t o1 = 0; o1 < osz[1]; ++o1) {
          const T* row = xp + (m[0][o0] * isz[1] + m[1][o1]) * isz[2];
          T* dst = yp + (o0 * osz[1] + o1) * osz[2];
          for (const auto& r : runs) {
            if (r[2] == 1) dst[r[0]] = row[r[1]];
            else std::memcpy(dst + r[0], row + r[1], sizeof(T) * r[2]);
          }
        }
    });
    return;
  }
  using A = sacc_t<T>;
  const T* g = in.data<T>();
  T* gx = out.data<T>();
  over_planes(a.NC, Lo, [&](int64_t p) {
    const T* gp = g + p * Lo;
    std::vector<A> buf(Li, A(0));
    for (int64_t o0 = 0; o0 < osz[0]; ++o0)
      for (int64_t o1 = 0; o1 < osz[1]; ++o1) {
        A* row = buf.data() + (m[0][o0] * isz[1] + m[1][o1]) * isz[2];
        const T* src = gp + (o0 * osz[1] + o1) * osz[2];
        const int64_t* m2 = m[2].data();
        for (int64_t o2 = 0; o2 < osz[2]; ++o2) row[m2[o2]] += static_cast<A>(src[o2]);
      }
    T* dst = gx + p * Li;
    for (int64_t i = 0; i < Li; ++i) dst[i] = static_cast<T>(buf[i]);
  });
}

void k_pad(Op op, bool backward, const Tensor& in, Tensor& out, const SpatialArgs& a) {
  if (out.numel() == 0) return;
  if (backward) AG_DISPATCH_FLOAT(in.dtype(), "pad_backward", [&] { pad_run<scalar_t>(op, true, in, out, a); });
  else if (op == Op::pad_circular) AG_DISPATCH_ALL(in.dtype(), "pad", [&] { pad_run<scalar_t>(op, false, in, out, a); });
  else {
    const std::string name = std::string(op == Op::pad_reflect ? "reflection_pad" : "replication_pad") + std::to_string(a.nd) + "d";
    AG_DISPATCH_NUMERIC(in.dtype(), name, [&] { pad_run<scalar_t>(op, false, in, out, a); });
  }
}
void k_pad_reflect(bool b, const Tensor& in, Tensor& out, const Tensor*, const SpatialArgs& a) { k_pad(Op::pad_reflect, b, in, out, a); }
void k_pad_replicate(bool b, const Tensor& in, Tensor& out, const Tensor*, const SpatialArgs& a) { k_pad(Op::pad_replicate, b, in, out, a); }
void k_pad_circular(bool b, const Tensor& in, Tensor& out, const Tensor*, const SpatialArgs& a) { k_pad(Op::pad_circular, b, in, out, a); }

// ---- upsampling (scales: a.scale[d] > 0 is the user's scale factor, as ATen's optional<double>)
template <typename A>
A compute_scale(int64_t in, int64_t out, bool align_corners, double scale) {
  if (align_corners) return out > 1 ? static_cast<A>(in - 1) / static_cast<A>(out - 1) : A(0);
  return scale > 0 ? static_cast<A>(1.0 / scale) : static_cast<A>(in) / static_cast<A>(out);
}
template <typename A>
A source_index(A scale, int64_t dst, bool align_corners, bool cubic) {
  if (align_corners) return scale * static_cast<A>(dst);
  const A src = scale * (static_cast<A>(dst) + static_cast<A>(0.5)) - static_cast<A>(0.5);
  return (!cubic && src < A(0)) ? A(0) : src;
}

int64_t nearest_index(int64_t o, int64_t in, int64_t out, double scale, bool exact) {
  const float s = scale > 0 ? static_cast<float>(1.0 / scale) : static_cast<float>(in) / static_cast<float>(out);
  if (exact) return std::min(static_cast<int64_t>(floorf(static_cast<float>((o + 0.5) * s))), in - 1);
  if (out == in) return o;
  if (out == 2 * in) return o >> 1;
  return std::min(static_cast<int64_t>(floorf(o * s)), in - 1);
}

template <typename A>
void cubic_coeffs(A c[4], A t) {
  const A x1 = t, x2 = A(1) - t, Acoef = A(-0.75);
  auto c1 = [&](A x) { return ((Acoef + 2) * x - (Acoef + 3)) * x * x + 1; };
  auto c2 = [&](A x) { return ((Acoef * x - 5 * Acoef) * x + 8 * Acoef) * x - 4 * Acoef; };
  c[0] = c2(x1 + A(1));
  c[1] = c1(x1);
  c[2] = c1(x2);
  c[3] = c2(x2 + A(1));
}

template <typename A>
Taps<A> make_taps(Op op, const SpatialArgs& a) {
  Taps<A> t;
  for (int d = 0; d < 3; ++d) {
    const int64_t in = a.in[d], out = a.out[d];
    const bool active = d >= 3 - a.nd;
    if (!active) {
      t.n[d] = 1;
      t.idx[d].assign(out, 0);
      t.w[d].assign(out, A(1));
      continue;
    }
    if (op == Op::upsample_nearest) {
      t.n[d] = 1;
      t.idx[d].resize(out);
      t.w[d].assign(out, A(1));
      for (int64_t o = 0; o < out; ++o) t.idx[d][o] = nearest_index(o, in, out, a.scale[d], a.exact);
      continue;
    }
    const A scale = compute_scale<A>(in, out, a.align_corners, a.scale[d]);
    if (a.exact) {  // linear / cubic with antialias (SpatialArgs::exact carries it): ATen's separable aa weights
      const bool lin = op == Op::upsample_linear;
      const A interp = lin ? A(2) : A(4);
      const A support = scale >= A(1) ? interp * A(0.5) * scale : interp * A(0.5);
      const int n = static_cast<int>(std::ceil(support)) * 2 + 1;
      const A invscale = scale >= A(1) ? A(1) / scale : A(1);
      auto filter = [lin](A x) -> A {
        x = x < A(0) ? -x : x;
        if (lin) return x < A(1) ? A(1) - x : A(0);
        const A c = A(-0.5);
        if (x < A(1)) return ((c + A(2)) * x - (c + A(3))) * x * x + A(1);
        if (x < A(2)) return (((x - A(5)) * x + A(8)) * x - A(4)) * c;
        return A(0);
      };
      t.n[d] = n;
      t.idx[d].assign(static_cast<size_t>(n) * out, 0);
      t.w[d].assign(static_cast<size_t>(n) * out, A(0));
      for (int64_t o = 0; o < out; ++o) {
        const A center = scale * (static_cast<A>(o) + A(0.5));
        const int64_t xmin = std::max<int64_t>(static_cast<int64_t>(center - support + A(0.5)), 0);
        const int64_t xsize = std::min<int64_t>(static_cast<int64_t>(center + support + A(0.5)), in) - xmin;
        A total = A(0);
        for (int64_t j = 0; j < xsize && j < n; ++j) {
          const A w = filter((static_cast<A>(j + xmin) - center + A(0.5)) * invscale);
          t.w[d][j * out + o] = w;
          total += w;
        }
        for (int j = 0; j < n; ++j) {
          t.idx[d][j * out + o] = j < xsize ? xmin + j : xmin;
          if (total != A(0)) t.w[d][j * out + o] /= total;
        }
      }
      continue;
    }
    if (op == Op::upsample_linear) {
      t.n[d] = 2;
      t.idx[d].resize(2 * out);
      t.w[d].resize(2 * out);
      for (int64_t o = 0; o < out; ++o) {
        int64_t i0, i1;
        A l0, l1;
        if (out == in) {
          i0 = i1 = o; l0 = A(1); l1 = A(0);
        } else {
          const A real = source_index<A>(scale, o, a.align_corners, false);
          i0 = std::min(static_cast<int64_t>(real), in - 1);
          i1 = i0 + (i0 < in - 1 ? 1 : 0);
          l1 = std::min(std::max(real - static_cast<A>(i0), A(0)), A(1));
          l0 = A(1) - l1;
        }
        t.idx[d][o] = i0; t.idx[d][out + o] = i1;
        t.w[d][o] = l0; t.w[d][out + o] = l1;
      }
      continue;
    }
    t.n[d] = 4;  // bicubic
    t.idx[d].resize(4 * out);
    t.w[d].resize(4 * out);
    for (int64_t o = 0; o < out; ++o) {
      const A real = source_index<A>(scale, o, a.align_corners, true);
      const int64_t i = std::min(static_cast<int64_t>(std::floor(real)), in - 1);
      const A lam = std::min(std::max(real - static_cast<A>(i), A(0)), A(1));
      A c[4];
      cubic_coeffs<A>(c, lam);
      for (int j = 0; j < 4; ++j) {
        t.idx[d][j * out + o] = std::max<int64_t>(std::min<int64_t>(i - 1 + j, in - 1), 0);
        t.w[d][j * out + o] = c[j];
      }
    }
  }
  return t;
}

// The weighted (linear / cubic) paths with the tap counts as compile-time constants: per output row
// the N0 * N1 input rows and their weights are fixed, the inner loop walks the last dim through raw
// index / weight arrays. Sums and products in ATen's order (see Taps).
template <typename T, typename A, int N0, int N1, int N2>
void interp_plane(const Taps<A>& t, const SpatialArgs& a, const T* __restrict xp, T* __restrict yp) {
  const int64_t O0 = a.out[0], O1 = a.out[1], O2 = a.out[2], I1 = a.in[1], I2 = a.in[2];
  const int64_t* __restrict ix2[N2];
  const A* __restrict w2[N2];
  for (int c = 0; c < N2; ++c) { ix2[c] = t.idx[2].data() + c * O2; w2[c] = t.w[2].data() + c * O2; }
  for (int64_t o0 = 0; o0 < O0; ++o0)
    for (int64_t o1 = 0; o1 < O1; ++o1) {
      const T* rows[N0][N1];
      A wa[N0], wb[N1];
      for (int i = 0; i < N0; ++i) {
        wa[i] = t.w[0][i * O0 + o0];
        for (int j = 0; j < N1; ++j) rows[i][j] = xp + (t.idx[0][i * O0 + o0] * I1 + t.idx[1][j * O1 + o1]) * I2;
      }
      for (int j = 0; j < N1; ++j) wb[j] = t.w[1][j * O1 + o1];
      T* dst = yp + (o0 * O1 + o1) * O2;
      for (int64_t o2 = 0; o2 < O2; ++o2) {
        A acc0 = A(0);
        for (int i = 0; i < N0; ++i) {
          A acc1 = A(0);
          for (int j = 0; j < N1; ++j) {
            A acc2 = static_cast<A>(rows[i][j][ix2[0][o2]]) * w2[0][o2];
            for (int c = 1; c < N2; ++c) acc2 += static_cast<A>(rows[i][j][ix2[c][o2]]) * w2[c][o2];
            acc1 = j == 0 ? acc2 * wb[j] : acc1 + acc2 * wb[j];
          }
          acc0 = i == 0 ? acc1 * wa[i] : acc0 + acc1 * wa[i];
        }
        dst[o2] = static_cast<T>(acc0);
      }
    }
}

template <typename A, int N0, int N1, int N2, typename T>
void interp_plane_backward(const Taps<A>& t, const SpatialArgs& a, const T* __restrict gp, A* __restrict buf) {
  const int64_t O0 = a.out[0], O1 = a.out[1], O2 = a.out[2], I1 = a.in[1], I2 = a.in[2];
  const int64_t* ix2[N2];
  const A* w2[N2];
  for (int c = 0; c < N2; ++c) { ix2[c] = t.idx[2].data() + c * O2; w2[c] = t.w[2].data() + c * O2; }
  for (int64_t o0 = 0; o0 < O0; ++o0)
    for (int64_t o1 = 0; o1 < O1; ++o1) {
      A* rows[N0][N1];
      A wa[N0], wb[N1];
      for (int i = 0; i < N0; ++i) {
        wa[i] = t.w[0][i * O0 + o0];
        for (int j = 0; j < N1; ++j) rows[i][j] = buf + (t.idx[0][i * O0 + o0] * I1 + t.idx[1][j * O1 + o1]) * I2;
      }
      for (int j = 0; j < N1; ++j) wb[j] = t.w[1][j * O1 + o1];
      const T* src = gp + (o0 * O1 + o1) * O2;
      for (int64_t o2 = 0; o2 < O2; ++o2) {
        const A gv = static_cast<A>(src[o2]);
        for (int i = 0; i < N0; ++i) {
          const A ga = gv * wa[i];  // ATen's order: grad * w0 * w1 * w2
          for (int j = 0; j < N1; ++j) {
            const A gab = ga * wb[j];
            for (int c = 0; c < N2; ++c) rows[i][j][ix2[c][o2]] += gab * w2[c][o2];
          }
        }
      }
    }
}

// Runs f.template operator()<N0, N1, N2>() for the tap counts of t (1, 2 or 4 per dim).
template <typename A, typename F>
bool with_taps(const Taps<A>& t, F&& f) {
  const int k = t.n[0] * 100 + t.n[1] * 10 + t.n[2];
  switch (k) {
    case 112: f(std::integral_constant<int, 1>(), std::integral_constant<int, 1>(), std::integral_constant<int, 2>()); return true;
    case 122: f(std::integral_constant<int, 1>(), std::integral_constant<int, 2>(), std::integral_constant<int, 2>()); return true;
    case 222: f(std::integral_constant<int, 2>(), std::integral_constant<int, 2>(), std::integral_constant<int, 2>()); return true;
    case 144: f(std::integral_constant<int, 1>(), std::integral_constant<int, 4>(), std::integral_constant<int, 4>()); return true;
    default: return false;
  }
}

template <typename T>
void upsample_run(Op op, bool backward, const Tensor& in, Tensor& out, const SpatialArgs& a) {
  using A = sacc_t<T>;
  const Taps<A> t = make_taps<A>(op, a);
  const int64_t* isz = a.in;
  const int64_t* osz = a.out;
  const int64_t Li = prod3(isz), Lo = prod3(osz);
  const int64_t O0 = osz[0], O1 = osz[1], O2 = osz[2];
  const bool nearest = op == Op::upsample_nearest;
  if (!backward) {
    const T* x = in.data<T>();
    T* y = out.data<T>();
    if (!nearest && with_taps(t, [&](auto n0, auto n1, auto n2) {
          over_planes(a.NC, Lo, [&](int64_t p) {
            interp_plane<T, A, decltype(n0)::value, decltype(n1)::value, decltype(n2)::value>(t, a, x + p * Li, y + p * Lo);
          });
        }))
      return;
    over_planes(a.NC, Lo, [&](int64_t p) {
      const T* xp = x + p * Li;
      T* yp = y + p * Lo;
      for (int64_t o0 = 0; o0 < O0; ++o0)
        for (int64_t o1 = 0; o1 < O1; ++o1) {
          T* dst = yp + (o0 * O1 + o1) * O2;
          if (nearest) {
            const T* row = xp + (t.idx[0][o0] * isz[1] + t.idx[1][o1]) * isz[2];
            const int64_t* m2 = t.idx[2].data();
            for (int64_t o2 = 0; o2 < O2; ++o2) dst[o2] = row[m2[o2]];
            continue;
          }
          for (int64_t o2 = 0; o2 < O2; ++o2) {
            A acc0 = A(0);
            for (int ta = 0; ta < t.n[0]; ++ta) {
              const int64_t i0 = t.idx[0][ta * O0 + o0];
              A acc1 = A(0);
              for (int tb = 0; tb < t.n[1]; ++tb) {
                const T* row = xp + (i0 * isz[1] + t.idx[1][tb * O1 + o1]) * isz[2];
                A acc2 = static_cast<A>(row[t.idx[2][o2]]) * t.w[2][o2];
                for (int tc = 1; tc < t.n[2]; ++tc) acc2 += static_cast<A>(row[t.idx[2][tc * O2 + o2]]) * t.w[2][tc * O2 + o2];
                const A wb = t.w[1][tb * O1 + o1];
                acc1 = tb == 0 ? acc2 * wb : acc1 + acc2 * wb;
              }
              const A wa = t.w[0][ta * O0 + o0];
              acc0 = ta == 0 ? acc1 * wa : acc0 + acc1 * wa;
            }
            dst[o2] = static_cast<T>(acc0);
          }
        }
    });
    return;
  }
  const T* g = in.data<T>();
  T* gx = out.data<T>();
  over_planes(a.NC, Lo, [&](int64_t p) {
    const T* gp = g + p * Lo;
    std::vector<A> buf(Li, A(0));
    T* dst = gx + p * Li;
    if (!nearest && with_taps(t, [&](auto n0, auto n1, auto n2) {
          interp_plane_backward<A, decltype(n0)::value, decltype(n1)::value, decltype(n2)::value>(t, a, gp, buf.data());
        })) {
      for (int64_t i = 0; i < Li; ++i) dst[i] = static_cast<T>(buf[i]);
      return;
    }
    for (int64_t o0 = 0; o0 < O0; ++o0)
      for (int64_t o1 = 0; o1 < O1; ++o1) {
        const T* src = gp + (o0 * O1 + o1) * O2;
        if (nearest) {
          A* row = buf.data() + (t.idx[0][o0] * isz[1] + t.idx[1][o1]) * isz[2];
          const int64_t* m2 = t.idx[2].data();
          for (int64_t o2 = 0; o2 < O2; ++o2) row[m2[o2]] += static_cast<A>(src[o2]);
          continue;
        }
        for (int64_t o2 = 0; o2 < O2; ++o2) {
          const A gv = static_cast<A>(src[o2]);
          for (int ta = 0; ta < t.n[0]; ++ta) {
            const int64_t i0 = t.idx[0][ta * O0 + o0];
            const A ga = gv * t.w[0][ta * O0 + o0];  // ATen's order: grad * w0 * w1 * w2
            for (int tb = 0; tb < t.n[1]; ++tb) {
              A* row = buf.data() + (i0 * isz[1] + t.idx[1][tb * O1 + o1]) * isz[2];
              const A gab = ga * t.w[1][tb * O1 + o1];
              for (int tc = 0; tc < t.n[2]; ++tc) row[t.idx[2][tc * O2 + o2]] += gab * t.w[2][tc * O2 + o2];
            }
          }
        }
      }
    for (int64_t i = 0; i < Li; ++i) dst[i] = static_cast<T>(buf[i]);
  });
}

// ---- uint8 bilinear / bicubic: torch's separable uint8 path (UpSampleKernel.cpp, Note [ Weights
// computation for uint8_t and multiplication trick ]). Each axis's weights are computed in double,
// scaled to int16 at the largest precision that keeps the largest weight under 2^15, and each output is
// an integer dot product plus half an LSB, shifted down and clamped to [0, 255]. The width pass runs
// first into a uint8 buffer, then the height pass; an axis whose size does not change is skipped.
struct U8Axis {
  std::vector<int64_t> xmin, xsize;
  std::vector<int16_t> w;  // [out, n]
  int n = 0;
  unsigned prec = 0;
};

U8Axis u8_axis(bool lin, bool aa, int64_t in, int64_t out, bool align_corners, double scale_opt) {
  U8Axis ax;
  const int interp = lin ? 2 : 4;
  const double scale = compute_scale<double>(in, out, align_corners, scale_opt);
  auto filter = [lin, aa](double x) {
    x = std::abs(x);
    if (lin) return x < 1.0 ? 1.0 - x : 0.0;
    const double c = aa ? -0.5 : -0.75;  // Keys (PIL) with antialias, OpenCV's -0.75 without
    if (x < 1.0) return ((c + 2) * x - (c + 3)) * x * x + 1;
    if (x < 2.0) return ((c * x - 5 * c) * x + 8 * c) * x - 4 * c;
    return 0.0;
  };
  double support = interp * 0.5;
  if (aa && scale >= 1.0) support *= scale;
  ax.n = aa ? static_cast<int>(std::ceil(support)) * 2 + 1 : interp;
  const int n = ax.n;
  ax.xmin.resize(out);
  ax.xsize.resize(out);
  std::vector<double> wt(static_cast<size_t>(out) * n, 0.0);
  double wt_max = 0.0;
  for (int64_t o = 0; o < out; ++o) {
    double* w = wt.data() + o * n;
    if (aa) {  // _compute_indices_min_size_weights_aa
      const double center = scale * (o + 0.5), invscale = scale >= 1.0 ? 1.0 / scale : 1.0;
      const int64_t xmin = std::max<int64_t>(static_cast<int64_t>(center - support + 0.5), 0);
      const int64_t xsize = std::min<int64_t>(static_cast<int64_t>(center + support + 0.5), in) - xmin;
      double total = 0.0;
      int64_t j = 0;
      for (; j < xsize && j < n; ++j) {
        w[j] = filter((j + xmin - center + 0.5) * invscale);
        total += w[j];
      }
      if (total != 0.0)
        for (j = 0; j < xsize && j < n; ++j) {
          w[j] /= total;
          wt_max = std::max(wt_max, w[j]);
        }
      ax.xmin[o] = xmin;
      ax.xsize[o] = std::min<int64_t>(xsize, n);
      continue;
    }
    // _compute_indices_min_size_weights: taps outside the input fold onto the border taps
    const double real = source_index<double>(scale, o, align_corners, !lin);
    const int64_t idx = std::min(static_cast<int64_t>(floorf(static_cast<float>(real))), in - 1);
    const double lambda = std::min(std::max(real - static_cast<double>(idx), 0.0), 1.0);
    const int64_t sup = static_cast<int64_t>(n * 0.5);
    const int64_t umin = idx - sup + 1, umax = idx + sup + 1;
    const int64_t xmin = std::max<int64_t>(umin, 0);
    const int64_t xsize = std::clamp<int64_t>(std::min(umax, in) - xmin, 0, n);
    int64_t wi = 0;
    for (int64_t j = 0; j < n; ++j) {
      w[j] = 0.0;
      const double f = filter(static_cast<double>(j + 1 - sup) - lambda);
      if (umin + j <= 0) wi = 0;
      else if (umin + j >= in - 1) wi = xsize - 1;
      w[wi] += f;
      wt_max = std::max(wt_max, w[wi]);
      ++wi;
    }
    ax.xmin[o] = xmin;
    ax.xsize[o] = xsize;
  }
  unsigned prec = 0;
  for (; prec < 22; ++prec)
    if (static_cast<int>(0.5 + wt_max * (1 << (prec + 1))) >= (1 << 15)) break;
  ax.prec = prec;
  ax.w.resize(wt.size());
  for (size_t i = 0; i < wt.size(); ++i) {
    const double v = wt[i] * (1 << prec);
    ax.w[i] = static_cast<int16_t>(v < 0 ? static_cast<int>(-0.5 + v) : static_cast<int>(0.5 + v));
  }
  return ax;
}

inline uint8_t u8_dot(const uint8_t* src, int64_t step, const int16_t* w, int64_t len, unsigned prec) {
  int acc = 1 << (prec - 1);
  for (int64_t j = 0; j < len; ++j) acc += static_cast<int>(src[j * step]) * w[j];
  return static_cast<uint8_t>(std::clamp(acc >> prec, 0, 255));
}

void upsample_uint8(bool lin, const Tensor& in, Tensor& out, const SpatialArgs& a) {
  const int64_t H = a.in[1], W = a.in[2], Ho = a.out[1], Wo = a.out[2];
  const uint8_t* x = in.data<uint8_t>();
  uint8_t* y = out.data<uint8_t>();
  if (H == Ho && W == Wo) {
    std::memcpy(y, x, static_cast<size_t>(a.NC * H * W));
    return;
  }
  std::vector<uint8_t> tmp;
  const uint8_t* src = x;
  if (W != Wo) {  // horizontal pass: [NC, H, W] -> [NC, H, Wo]
    const U8Axis ax = u8_axis(lin, a.exact, W, Wo, a.align_corners, a.scale[2]);
    uint8_t* dst = y;
    if (H != Ho) {
      tmp.resize(static_cast<size_t>(a.NC * H * Wo));
      dst = tmp.data();
    }
    over_planes(a.NC, H * Wo, [&](int64_t p) {
      for (int64_t r = 0; r < H; ++r) {
        const uint8_t* row = x + (p * H + r) * W;
        uint8_t* orow = dst + (p * H + r) * Wo;
        for (int64_t o = 0; o < Wo; ++o) orow[o] = u8_dot(row + ax.xmin[o], 1, ax.w.data() + o * ax.n, ax.xsize[o], ax.prec);
      }
    });
    if (H == Ho) return;
    src = dst;
  }
  const U8Axis ay = u8_axis(lin, a.exact, H, Ho, a.align_corners, a.scale[1]);  // vertical pass
  over_planes(a.NC, Ho * Wo, [&](int64_t p) {
    const uint8_t* plane = src + p * H * Wo;
    for (int64_t o = 0; o < Ho; ++o) {
      uint8_t* orow = y + (p * Ho + o) * Wo;
      const uint8_t* base = plane + ay.xmin[o] * Wo;
      const int16_t* w = ay.w.data() + o * ay.n;
      for (int64_t c = 0; c < Wo; ++c) orow[c] = u8_dot(base + c, Wo, w, ay.xsize[o], ay.prec);
    }
  });
}

void k_upsample(Op op, bool backward, const Tensor& in, Tensor& out, const SpatialArgs& a) {
  if (out.numel() == 0) return;
  if (!backward && in.dtype() == ScalarType::UInt8 && a.nd == 2 && (op == Op::upsample_linear || op == Op::upsample_bicubic)) {
    upsample_uint8(op == Op::upsample_linear, in, out, a);
    return;
  }
  const char* name = op == Op::upsample_nearest ? (a.exact ? "upsample_nearest_exact" : "upsample_nearest")
                     : op == Op::upsample_linear ? "upsample_linear" : "upsample_bicubic2d";
  if (op == Op::upsample_nearest && !backward && !is_floating(in.dtype())) {
    // nearest is a gather: integers and bool as torch's (uint8 and the other integer types)
    AG_DISPATCH_ALL(in.dtype(), name, [&] {
      if constexpr (std::is_integral_v<scalar_t>) {
        // reuse the float path's index math on integer payloads
        using A = float;
        const Taps<A> t = make_taps<A>(op, a);
        const int64_t Li = prod3(a.in), Lo = prod3(a.out);
        const scalar_t* x = in.data<scalar_t>();
        scalar_t* y = out.data<scalar_t>();
        over_planes(a.NC, Lo, [&](int64_t p) {
          for (int64_t o0 = 0; o0 < a.out[0]; ++o0)
            for (int64_t o1 = 0; o1 < a.out[1]; ++o1) {
              const scalar_t* row = x + p * Li + (t.idx[0][o0] * a.in[1] + t.idx[1][o1]) * a.in[2];
              scalar_t* dst = y + p * Lo + (o0 * a.out[1] + o1) * a.out[2];
              for (int64_t o2 = 0; o2 < a.out[2]; ++o2) dst[o2] = row[t.idx[2][o2]];
            }
        });
      }
    });
    return;
  }
  AG_DISPATCH_FLOAT(in.dtype(), name, [&] { upsample_run<scalar_t>(op, backward, in, out, a); });
}
void k_upsample_nearest(bool b, const Tensor& in, Tensor& out, const Tensor*, const SpatialArgs& a) { k_upsample(Op::upsample_nearest, b, in, out, a); }
void k_upsample_linear(bool b, const Tensor& in, Tensor& out, const Tensor*, const SpatialArgs& a) { k_upsample(Op::upsample_linear, b, in, out, a); }
void k_upsample_bicubic(bool b, const Tensor& in, Tensor& out, const Tensor*, const SpatialArgs& a) { k_upsample(Op::upsample_bicubic, b, in, out, a); }

// ---- im2col / col2im: the convolution's column layout with one group; a.in / a.out: the image and
// the block grid, a.C the channels, a.NC the batch.
ConvArgs conv_args(const SpatialArgs& a) {
  ConvArgs g{};
  g.N = a.NC; g.C = a.C; g.O = 1; g.G = 1;
  for (int d = 0; d < 3; ++d) {
    g.in[d] = a.in[d]; g.out[d] = a.out[d]; g.k[d] = a.k[d];
    g.stride[d] = a.stride[d]; g.pad[d] = a.pad[d]; g.dil[d] = a.dil[d];
  }
  return g;
}

template <typename T> struct Bits;
template <> struct Bits<double> { using type = uint64_t; };
template <> struct Bits<float> { using type = uint32_t; };
template <> struct Bits<Half> { using type = uint16_t; };
template <> struct Bits<BFloat16> { using type = uint16_t; };

// im2col is a copy: moved as raw bits (0 bits are +0 in every float format).
template <typename T>
void im2col_run(const Tensor& x, Tensor& cols, const SpatialArgs& a) {
  using B = typename Bits<T>::type;
  const ConvArgs g = conv_args(a);
  const conv_detail::Geo G(g);
  const B* xp = reinterpret_cast<const B*>(x.data<T>());
  B* cp = reinterpret_cast<B*>(cols.data<T>());
  const int64_t per_in = a.C * G.Lin, per_out = G.Kdim * G.L;
  over_planes(a.NC, per_out, [&](int64_t n) {
    conv_detail::im2col<B, B>(G, xp + n * per_in, cp + n * per_out, 0, g.out[0] * g.out[1]);
  });
}

template <typename T>
void col2im_run(const Tensor& cols, Tensor& x, const SpatialArgs& a) {
  using A = sacc_t<T>;
  const ConvArgs g = conv_args(a);
  const conv_detail::Geo G(g);
  const T* cp = cols.data<T>();
  T* xp = x.data<T>();
  const int64_t per_in = a.C * G.Lin, per_out = G.Kdim * G.L;
  over_planes(a.NC, per_out, [&](int64_t n) {
    if constexpr (std::is_same_v<T, A>) {
      std::fill(xp + n * per_in, xp + (n + 1) * per_in, T(0));
      conv_detail::col2im<A>(G, cp + n * per_out, xp + n * per_in, 0, g.out[0] * g.out[1]);
    } else {
      std::vector<A> c(per_out), buf(per_in, A(0));
      for (int64_t i = 0; i < per_out; ++i) c[i] = static_cast<A>(cp[n * per_out + i]);
      conv_detail::col2im<A>(G, c.data(), buf.data(), 0, g.out[0] * g.out[1]);
      for (int64_t i = 0; i < per_in; ++i) xp[n * per_in + i] = static_cast<T>(buf[i]);
    }
  });
}

// im2col: forward in = image, out = columns; backward in = columns' grad, out = image grad (col2im).
void k_im2col(bool backward, const Tensor& in, Tensor& out, const Tensor*, const SpatialArgs& a) {
  if (out.numel() == 0) return;
  if (in.numel() == 0) {  // no blocks: the image gradient is zero
    if (out.dtype() == ScalarType::Bool) { std::fill(out.data<bool>(), out.data<bool>() + out.numel(), false); return; }
    AG_DISPATCH_FLOAT(out.dtype(), "im2col", [&] { std::fill(out.data<scalar_t>(), out.data<scalar_t>() + out.numel(), scalar_t(0)); });
    return;
  }
  if (in.dtype() == ScalarType::Bool) {  // torch's im2col / col2im take bool: a copy / an OR of the overlaps
    const ConvArgs g = conv_args(a);
    const conv_detail::Geo G(g);
    const int64_t per_in = a.C * G.Lin, per_out = G.Kdim * G.L;
    const uint8_t* src = reinterpret_cast<const uint8_t*>(in.data<bool>());
    uint8_t* dst = reinterpret_cast<uint8_t*>(out.data<bool>());
    over_planes(a.NC, per_out, [&](int64_t n) {
      if (!backward) {
        conv_detail::im2col<uint8_t, uint8_t>(G, src + n * per_in, dst + n * per_out, 0, g.out[0] * g.out[1]);
        return;
      }
      std::vector<float> c(per_out), buf(per_in, 0.f);
      for (int64_t i = 0; i < per_out; ++i) c[i] = src[n * per_out + i] ? 1.f : 0.f;
      conv_detail::col2im<float>(G, c.data(), buf.data(), 0, g.out[0] * g.out[1]);
      for (int64_t i = 0; i < per_in; ++i) dst[n * per_in + i] = buf[i] != 0.f;
    });
    return;
  }
  AG_DISPATCH_FLOAT(in.dtype(), backward ? "col2im" : "im2col", [&] {
    if (backward) col2im_run<scalar_t>(in, out, a);
    else im2col_run<scalar_t>(in, out, a);
  });
}
// col2im: forward in = columns, out = image; backward in = image grad, out = columns' grad (im2col).
void k_col2im(bool backward, const Tensor& in, Tensor& out, const Tensor* idx, const SpatialArgs& a) {
  k_im2col(!backward, in, out, idx, a);
}

// ---- max_unpool: out plane [Lo] zeroed, out[idx[i]] = x[i]; backward: gx[i] = g[idx[i]]
template <typename T>
void unpool_run(bool backward, const Tensor& in, Tensor& out, const Tensor& idx, const SpatialArgs& a) {
  const int64_t Li = prod3(a.in), Lo = prod3(a.out);
  const int64_t* ix = idx.data<int64_t>();
  const T* src = in.data<T>();
  T* dst = out.data<T>();
  over_planes(a.NC, Li + Lo, [&](int64_t p) {
    const int64_t* ip = ix + p * Li;
    if (!backward) {
      T* y = dst + p * Lo;
      std::fill(y, y + Lo, T(0));
      const T* x = src + p * Li;
      for (int64_t i = 0; i < Li; ++i) y[ip[i]] = x[i];
    } else {
      const T* g = src + p * Lo;
      T* gx = dst + p * Li;
      for (int64_t i = 0; i < Li; ++i) gx[i] = g[ip[i]];
    }
  });
}
void k_max_unpool(bool backward, const Tensor& in, Tensor& out, const Tensor* idx, const SpatialArgs& a) {
  if (out.numel() == 0) return;
  AG_DISPATCH_NUMERIC(in.dtype(), "max_unpooling2d_forward_out_cpu_frame", [&] { unpool_run<scalar_t>(backward, in, out, *idx, a); });
}

}  // namespace

AG_REGISTER_KERNEL(pad_reflect, CPU, k_pad_reflect);
AG_REGISTER_KERNEL(pad_replicate, CPU, k_pad_replicate);
AG_REGISTER_KERNEL(pad_circular, CPU, k_pad_circular);
AG_REGISTER_KERNEL(upsample_nearest, CPU, k_upsample_nearest);
AG_REGISTER_KERNEL(upsample_linear, CPU, k_upsample_linear);
AG_REGISTER_KERNEL(upsample_bicubic, CPU, k_upsample_bicubic);
AG_REGISTER_KERNEL(im2col, CPU, k_im2col);
AG_REGISTER_KERNEL(col2im, CPU, k_col2im);
AG_REGISTER_KERNEL(max_unpool, CPU, k_max_unpool);

}  // namespace ampgrad::cpu
