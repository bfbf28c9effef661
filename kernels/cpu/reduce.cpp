// CPU reductions, scans and softmax over the [A, R, B] layout of ops/reduce.cpp (Note [Reduce
// plan]). float32 / fp16 / bf16 sums and means accumulate in float32 vectors, pairwise (Note [Float
// sums]); other sums in double (int64 for integers). Results do not depend on the thread count.
#include <cmath>
#include <cstring>
#include <Eigen/Core>
#include "kernels/common/scalar_math.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/vec_math.h"

namespace ampgrad::cpu {

namespace {
template <typename T> using racc_t = std::conditional_t<std::is_floating_point_v<acc_t<T>>, double, std::conditional_t<std::is_same_v<T, bool>, int64_t, int64_t>>;

// Calls f(a, b, get) for every output (a, b); get(r) loads element r of that row as double/int.
template <typename T, typename F>
void for_rows(const Tensor& in, const ReduceArgs& r, F f) {
  const T* x = in.data<T>();
  const int64_t A = r.A, R = r.R, B = r.B;
  parallel_for(A * B, std::max<int64_t>(1, kGrain / std::max<int64_t>(R, 1)), [&](int64_t b0, int64_t e0) {
    for (int64_t o = b0; o < e0; ++o) {
      int64_t a = o / B, b = o % B;
      const T* row = x + a * R * B + b;
      f(o, row, B);
    }
  });
}

template <typename T, typename Acc, typename Init, typename Step, typename Fin>
void reduce_generic(const Tensor& in, Tensor& out, const ReduceArgs& r, Init init, Step step, Fin fin) {
  T* y = out.data<T>();
  const int64_t R = r.R;
  if (r.B > 1 && r.R > 1) {
    // Outer reduction: walk rows of B contiguous values (vectorizable).
    const T* x = in.data<T>();
    parallel_for(r.A, 1, [&](int64_t a0, int64_t a1) {
      std::vector<Acc> acc(r.B);
      for (int64_t a = a0; a < a1; ++a) {
        std::fill(acc.begin(), acc.end(), init());
        for (int64_t k = 0; k < R; ++k) {
          const T* row = x + (a * R + k) * r.B;
          for (int64_t b = 0; b < r.B; ++b) acc[b] = step(acc[b], static_cast<Acc>(static_cast<acc_t<T>>(row[b])));
        }
        for (int64_t b = 0; b < r.B; ++b) y[a * r.B + b] = static_cast<T>(fin(acc[b]));
      }
    });
    return;
  }
  for_rows<T>(in, r, [&](int64_t o, const T* row, int64_t stride) {
    Acc acc = init();
    for (int64_t k = 0; k < R; ++k) acc = step(acc, static_cast<Acc>(static_cast<acc_t<T>>(row[k * stride])));
    y[o] = static_cast<T>(fin(acc));
  });
}

// ---- Note [Float sums]: float32 / fp16 / bf16 sums (and means) accumulate in float32, as torch's:
// 4 vector accumulators over blocks of kSumBlock values, blocks combined pairwise (torch's cascade
// sum has the same error growth, O(log n) instead of O(n)). A long row is cut into parts of
// kSumPart values summed in parallel and combined pairwise in a fixed order, so the result does
// not depend on the thread count.
constexpr int64_t kSumBlock = 2048, kSumPart = 1 << 16, kSumCols = 64;

template <typename T> inline vec::vf load16(const T* x) {
  if constexpr (std::is_same_v<T, float>) return vec::load(x);
  else if constexpr (std::is_same_v<T, BFloat16>) return vec::load_bf16(reinterpret_cast<const uint16_t*>(x));
  else {
    float t[vec::kW];
    for (int i = 0; i < vec::kW; ++i) t[i] = static_cast<float>(x[i]);
    return vec::load(t);
  }
}

// Elementwise transforms summed by the float reductions: the value, its square (norm 2), its
// magnitude (norm 1); each has a vector and a scalar form.
struct Ident {
  vec::vf operator()(vec::vf v) const { return v; }
  float operator()(float v) const { return v; }
};
struct Square {
  vec::vf operator()(vec::vf v) const { return v * v; }
  float operator()(float v) const { return v * v; }
};
struct Magnitude {
  vec::vf operator()(vec::vf v) const { return v < 0 ? -v : v; }  // -0.0 and nan keep |.| semantics in a sum
  float operator()(float v) const { return std::fabs(v); }
};

template <typename T, typename Tr = Ident> float block_sum(const T* x, int64_t n, Tr tr = Tr()) {
  vec::vf a0 = {}, a1 = {}, a2 = {}, a3 = {};
  int64_t j = 0;
  for (; j + 4 * vec::kW <= n; j += 4 * vec::kW) {
    a0 += tr(load16(x + j));
    a1 += tr(load16(x + j + vec::kW));
    a2 += tr(load16(x + j + 2 * vec::kW));
    a3 += tr(load16(x + j + 3 * vec::kW));
  }
  for (; j + vec::kW <= n; j += vec::kW) a0 += tr(load16(x + j));
  vec::vf v = (a0 + a1) + (a2 + a3);
  float l[vec::kW];
  vec::store(l, v);
  for (int w = vec::kW / 2; w > 0; w /= 2)
    for (int i = 0; i < w; ++i) l[i] += l[i + w];
  float tail = 0;
  for (; j < n; ++j) tail += tr(static_cast<float>(x[j]));
  return l[0] + tail;
}

// Pairwise over blocks (a block boundary is a multiple of kSumBlock from x).
template <typename T, typename Tr = Ident> float cascade_sum(const T* x, int64_t n, Tr tr = Tr()) {
  if (n <= kSumBlock) return block_sum(x, n, tr);
  const int64_t half = ((n / kSumBlock + 1) / 2) * kSumBlock;
  return cascade_sum(x, half, tr) + cascade_sum(x + half, n - half, tr);
}

inline float pairwise(const float* p, int64_t n) {
  if (n == 1) return p[0];
  const int64_t h = (n + 1) / 2;
  return pairwise(p, h) + pairwise(p + h, n - h);
}

// Sum of every row of [A, R] (contiguous) into y, divided by n for a mean.
template <typename T> void sum_rows(const T* x, T* y, int64_t A, int64_t R, float n, bool divide) {
  auto fin = [&](float v) { return static_cast<T>(divide ? v / n : v); };
  if (A == 1 && R > kSumPart) {
    const int64_t np = (R + kSumPart - 1) / kSumPart;
    std::vector<float> parts(np);
    parallel_for(np, 2, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) parts[p] = cascade_sum(x + p * kSumPart, std::min(kSumPart, R - p * kSumPart));
    });
    y[0] = fin(pairwise(parts.data(), np));
    return;
  }
  parallel_for(A, std::max<int64_t>(1, kGrain / std::max<int64_t>(R, 1)), [&](int64_t a0, int64_t a1) {
    for (int64_t a = a0; a < a1; ++a) y[a] = fin(R ? cascade_sum(x + a * R, R) : 0.0f);
  });
}

// acc[0, w) = sum over k in [k0, k1) of x[k * B + j]: runs of 64 rows, combined pairwise.
template <typename T> void col_sum(const T* x, int64_t B, int64_t k0, int64_t k1, int64_t w, float* acc) {
  if (k1 - k0 <= 64) {
    for (int64_t j = 0; j < w; ++j) acc[j] = 0;
    for (int64_t k = k0; k < k1; ++k) {
      const T* row = x + k * B;
      for (int64_t j = 0; j < w; ++j) acc[j] += static_cast<float>(row[j]);
    }
    return;
  }
  const int64_t mid = k0 + (k1 - k0) / 2;
  float tmp[kSumCols];
  col_sum(x, B, k0, mid, w, acc);
  col_sum(x, B, mid, k1, w, tmp);
  for (int64_t j = 0; j < w; ++j) acc[j] += tmp[j];
}

// [A, R, B] with B > 1: out[a, b] = sum_k x[a, k, b], over blocks of kSumCols columns.
template <typename T> void sum_cols(const T* x, T* y, int64_t A, int64_t R, int64_t B, float n, bool divide) {
  const int64_t nc = (B + kSumCols - 1) / kSumCols;
  parallel_for(A * nc, std::max<int64_t>(1, kGrain / std::max<int64_t>(R * kSumCols, 1)), [&](int64_t t0, int64_t t1) {
    float acc[kSumCols];
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t a = t / nc, c0 = (t % nc) * kSumCols, w = std::min(kSumCols, B - c0);
      if (R == 0) std::fill(acc, acc + w, 0.0f);
      else col_sum(x + a * R * B + c0, B, 0, R, w, acc);
      for (int64_t j = 0; j < w; ++j) y[a * B + c0 + j] = static_cast<T>(divide ? acc[j] / n : acc[j]);
    }
  });
}

// The float32 / fp16 / bf16 sum or mean; false for other dtypes.
bool float_sum(const Tensor& in, Tensor& out, const ReduceArgs& r, bool mean) {
  auto go = [&](auto tag) {
    using T = decltype(tag);
    const float n = static_cast<float>(r.R);
    const bool divide = mean && r.R > 0;
    const T* x = in.data<T>();
    T* y = out.data<T>();
    if (r.B == 1) sum_rows(x, y, r.A, r.R, n, divide);
    else sum_cols(x, y, r.A, r.R, r.B, n, divide);
    if (mean && r.R == 0)  // mean of nothing: 0 * scale (nan), as math::mean_finish
      for (int64_t i = 0; i < r.A * r.B; ++i) y[i] = static_cast<T>(static_cast<float>(y[i]) * static_cast<float>(r.s[0]));
  };
  switch (in.dtype()) {
    case ScalarType::Float32: go(float{}); return true;
    case ScalarType::Float16: go(Half{}); return true;
    case ScalarType::BFloat16: go(BFloat16{}); return true;
    default: return false;
  }
}

void k_sum(const Tensor& in, Tensor& out, Tensor*, const ReduceArgs& r) {
  if (out.dtype() == in.dtype() && float_sum(in, out, r, false)) return;
  AG_DISPATCH_ALL(in.dtype(), "sum", [&] {
    using Acc = racc_t<scalar_t>;
    reduce_generic<scalar_t, Acc>(in, out, r, [] { return Acc(0); }, [](Acc a, Acc v) { return math::wrap_add(a, v); }, [](Acc a) { return a; });
  });
}
AG_REGISTER_KERNEL(sum, CPU, k_sum);

void k_mean(const Tensor& in, Tensor& out, Tensor*, const ReduceArgs& r) {
  if (out.dtype() == in.dtype() && float_sum(in, out, r, true)) return;
  AG_DISPATCH_FLOAT(in.dtype(), "mean", [&] {
    const double scale = r.s[0];
    const int64_t n = r.R;
    reduce_generic<scalar_t, double>(in, out, r, [] { return 0.0; }, [](double a, double v) { return a + v; },
                                     [=](double a) { return math::mean_finish(a, n, scale); });
  });
}
AG_REGISTER_KERNEL(mean, CPU, k_mean);

void k_prod(const Tensor& in, Tensor& out, Tensor*, const ReduceArgs& r) {
  AG_DISPATCH_ALL(in.dtype(), "prod", [&] {
    using Acc = racc_t<scalar_t>;
    reduce_generic<scalar_t, Acc>(in, out, r, [] { return Acc(1); }, [](Acc a, Acc v) { return math::wrap_mul(a, v); }, [](Acc a) { return a; });
  });
}
AG_REGISTER_KERNEL(prod, CPU, k_prod);

// amax / amin of float32 rows (B == 1, no indices): kW-lane max/min, NaN tracked on the side (a
// NaN anywhere in the row is the answer, as torch). bf16 / fp16 rows are widened to float32 in blocks
// (exact) and take the same path; the result converts back exactly.
template <bool IsMax> float minmax_combine(float a, float b) {
  return (a != a || b != b) ? std::numeric_limits<float>::quiet_NaN() : IsMax ? std::max(a, b) : std::min(a, b);
}

template <bool IsMax> float float_row_best(const float* p, int64_t n) {
  if (n < vec::kW) {  // a short last part of a long row
    float best = p[0];
    for (int64_t j = 0; j < n; ++j) {
      if (p[j] != p[j]) return std::numeric_limits<float>::quiet_NaN();
      best = IsMax ? std::max(best, p[j]) : std::min(best, p[j]);
    }
    return best;
  }
  // four independent accumulators (the compare + blend chain of one was the bound) and a NaN mask
  // OR-ed in integer lanes
  auto pick = [](vec::vf a, vec::vf b) { return IsMax ? (b > a ? b : a) : (b < a ? b : a); };
  vec::vf m = vec::load(p), m1 = m, m2 = m, m3 = m;
  vec::vi nanm = vec::isnan(m);
  int64_t j = vec::kW;
  for (; j + 4 * vec::kW <= n; j += 4 * vec::kW) {
    const vec::vf v0 = vec::load(p + j), v1 = vec::load(p + j + vec::kW), v2 = vec::load(p + j + 2 * vec::kW),
                  v3 = vec::load(p + j + 3 * vec::kW);
    nanm |= (vec::isnan(v0) | vec::isnan(v1)) | (vec::isnan(v2) | vec::isnan(v3));
    m = pick(m, v0); m1 = pick(m1, v1); m2 = pick(m2, v2); m3 = pick(m3, v3);
  }
  for (; j + vec::kW <= n; j += vec::kW) {
    const vec::vf v = vec::load(p + j);
    nanm |= vec::isnan(v);
    m = pick(m, v);
  }
  m = pick(pick(m, m1), pick(m2, m3));
  float l[vec::kW];
  int32_t f[vec::kW];
  vec::store(l, m);
  std::memcpy(f, &nanm, sizeof f);
  float best = l[0];
  bool has_nan = best != best;
  for (int i = 0; i < vec::kW; ++i) {
    has_nan |= f[i] != 0 || l[i] != l[i];
    best = IsMax ? std::max(best, l[i]) : std::min(best, l[i]);
  }
  for (; j < n; ++j) {
    has_nan |= p[j] != p[j];
    best = IsMax ? std::max(best, p[j]) : std::min(best, p[j]);
  }
  return has_nan ? std::numeric_limits<float>::quiet_NaN() : best;
}

template <bool IsMax, typename S> float row_best_of(const S* p, int64_t n) {
  if constexpr (std::is_same_v<S, float>) {
    return float_row_best<IsMax>(p, n);
  } else {
    constexpr int64_t kBlock = 1024;
    float buf[kBlock];
    float acc = 0;
    for (int64_t s = 0; s < n; s += kBlock) {
      const int64_t m = std::min(kBlock, n - s);
      for (int64_t i = 0; i < m; ++i) buf[i] = static_cast<float>(p[s + i]);
      const float b = float_row_best<IsMax>(buf, m);
      acc = s == 0 ? b : minmax_combine<IsMax>(acc, b);
    }
    return acc;
  }
}

// The max / min of one long row: parts of kSumPart values in parallel, combined in a fixed order.
template <bool IsMax, typename S> float long_row_best(const S* x, int64_t R) {
  const int64_t np = (R + kSumPart - 1) / kSumPart;
  std::vector<float> parts(np);
  parallel_for(np, 2, [&](int64_t p0, int64_t p1) {
    for (int64_t q = p0; q < p1; ++q) parts[q] = row_best_of<IsMax>(x + q * kSumPart, std::min(kSumPart, R - q * kSumPart));
  });
  float best = parts[0];
  for (float v : parts) best = minmax_combine<IsMax>(best, v);
  return best;
}

template <bool IsMax, typename S> void minmax_rows_as_float(const Tensor& in, Tensor& out, const ReduceArgs& r) {
  const S* x = in.data<S>();
  S* y = out.data<S>();
  const int64_t R = r.R;
  if (r.A == 1 && R > kSumPart) {
    y[0] = static_cast<S>(long_row_best<IsMax>(x, R));
    return;
  }
  parallel_for(r.A, std::max<int64_t>(1, kGrain / R), [&](int64_t a0, int64_t a1) {
    for (int64_t a = a0; a < a1; ++a) y[a] = static_cast<S>(row_best_of<IsMax>(x + a * R, R));
  });
}

template <bool IsMax> bool float_minmax_rows(const Tensor& in, Tensor& out, Tensor* idx, const ReduceArgs& r) {
  if (idx || r.B != 1 || r.R < 2 * vec::kW) return false;
  switch (in.dtype()) {
    case ScalarType::Float32: minmax_rows_as_float<IsMax, float>(in, out, r); return true;
    case ScalarType::BFloat16: minmax_rows_as_float<IsMax, BFloat16>(in, out, r); return true;
    case ScalarType::Float16: minmax_rows_as_float<IsMax, Half>(in, out, r); return true;
    default: return false;
  }
}

template <bool IsMax>
void k_minmax(const Tensor& in, Tensor& out, Tensor* idx, const ReduceArgs& r) {
  if (float_minmax_rows<IsMax>(in, out, idx, r)) return;
  AG_DISPATCH_ALL(in.dtype(), IsMax ? "max" : "min", [&] {
    using T = acc_t<scalar_t>;
    scalar_t* y = out.data<scalar_t>();
    int64_t* ix = idx ? idx->data<int64_t>() : nullptr;
    for_rows<scalar_t>(in, r, [&](int64_t o, const scalar_t* row, int64_t stride) {
      T best = static_cast<T>(row[0]);
      int64_t bi = 0;
      for (int64_t k = 1; k < r.R; ++k) {
        T v = static_cast<T>(row[k * stride]);
        if (best != best) break;  // NaN wins, first occurrence
        if (v != v || (IsMax ? v > best : v < best)) { best = v; bi = k; }
      }
      y[o] = static_cast<scalar_t>(best);
      if (ix) ix[o] = bi;
    });
  });
}
AG_REGISTER_KERNEL(max, CPU, k_minmax<true>);
AG_REGISTER_KERNEL(min, CPU, k_minmax<false>);
AG_REGISTER_KERNEL(amax, CPU, k_minmax<true>);
AG_REGISTER_KERNEL(amin, CPU, k_minmax<false>);
AG_REGISTER_KERNEL(argmax, CPU, k_minmax<true>);
AG_REGISTER_KERNEL(argmin, CPU, k_minmax<false>);

// Note [Float var]: var / std of float32 / fp16 / bf16 rows (B == 1) keep the double accumulation
// of the generic loop (two passes: the mean, then squared deviations), in double vectors (kW / 2 lanes) with
// 4 accumulators instead of one scalar chain; parts of a long row run in parallel and combine in a
// fixed order. Columns and float64 take the generic loop.
template <typename T, bool Dev> double dsum_block(const T* x, int64_t n, double mean) {
  vec::vd a0 = {}, a1 = {}, a2 = {}, a3 = {};
  int64_t j = 0;
  auto tr = [&](vec::vfh f) {
    vec::vd d = __builtin_convertvector(f, vec::vd);
    if constexpr (Dev) { d = d - mean; d = d * d; }
    return d;
  };
  for (; j + 2 * vec::kW <= n; j += 2 * vec::kW) {
    vec::vf u = load16(x + j), v = load16(x + j + vec::kW);
    vec::vfh h[4];
    vec::split(u, h[0], h[1]);
    vec::split(v, h[2], h[3]);
    a0 += tr(h[0]); a1 += tr(h[1]); a2 += tr(h[2]); a3 += tr(h[3]);
  }
  vec::vd t = (a0 + a1) + (a2 + a3);
  double acc = 0;
  for (int i = 0; i < vec::kWd; ++i) acc += t[i];
  for (; j < n; ++j) {
    double d = static_cast<double>(static_cast<float>(x[j]));
    if constexpr (Dev) { d -= mean; d *= d; }
    acc += d;
  }
  return acc;
}

template <typename T, bool Dev> double dsum_row(const T* x, int64_t n, double mean, bool parallel) {
  if (!parallel || n <= kSumPart) return dsum_block<T, Dev>(x, n, mean);
  const int64_t np = (n + kSumPart - 1) / kSumPart;
  std::vector<double> parts(np);
  parallel_for(np, 2, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) parts[p] = dsum_block<T, Dev>(x + p * kSumPart, std::min(kSumPart, n - p * kSumPart), mean);
  });
  double acc = 0;
  for (double v : parts) acc += v;
  return acc;
}

bool float_var_rows(const Tensor& in, Tensor& out, const ReduceArgs& r) {
  if (r.B != 1 || r.R < 1) return false;
  auto go = [&](auto tag) {
    using T = decltype(tag);
    const T* x = in.data<T>();
    T* y = out.data<T>();
    const int64_t R = r.R;
    const double corr = r.s[0];
    const bool take_sqrt = r.s[1] != 0;
    auto row = [&](int64_t a, bool par) {
      const T* p = x + a * R;
      const double m = dsum_row<T, false>(p, R, 0.0, par) / static_cast<double>(R);
      const double ss = dsum_row<T, true>(p, R, m, par);
      y[a] = static_cast<T>(static_cast<float>(math::var_finish(ss, R, corr, take_sqrt)));
    };
    if (r.A == 1) { row(0, true); return; }
    parallel_for(r.A, std::max<int64_t>(1, kGrain / R), [&](int64_t a0, int64_t a1) {
      for (int64_t a = a0; a < a1; ++a) row(a, false);
    });
  };
  switch (in.dtype()) {
    case ScalarType::Float32: go(float{}); return true;
    case ScalarType::Float16: go(Half{}); return true;
    case ScalarType::BFloat16: go(BFloat16{}); return true;
    default: return false;
  }
}

void k_var(const Tensor& in, Tensor& out, Tensor*, const ReduceArgs& r) {
  if (out.dtype() == in.dtype() && float_var_rows(in, out, r)) return;
  AG_DISPATCH_FLOAT(in.dtype(), "var", [&] {
    scalar_t* y = out.data<scalar_t>();
    const double corr = r.s[0];
    const bool take_sqrt = r.s[1] != 0;
    for_rows<scalar_t>(in, r, [&](int64_t o, const scalar_t* row, int64_t stride) {
      double m = 0;
      for (int64_t k = 0; k < r.R; ++k) m += static_cast<double>(static_cast<acc_t<scalar_t>>(row[k * stride]));
      m /= static_cast<double>(r.R);
      double ss = 0;
      for (int64_t k = 0; k < r.R; ++k) { double d = static_cast<double>(static_cast<acc_t<scalar_t>>(row[k * stride])) - m; ss += d * d; }
      y[o] = static_cast<scalar_t>(static_cast<acc_t<scalar_t>>(math::var_finish(ss, r.R, corr, take_sqrt)));
    });
  });
}
AG_REGISTER_KERNEL(var, CPU, k_var);
AG_REGISTER_KERNEL(std, CPU, k_var);  // s[1] asks for the square root

// Note [Float norms]: norm 2 and norm 1 of float32 / fp16 / bf16 rows (B == 1) as the float sums:
// |x| or x*x in float32 vectors, pairwise, parts of a long row in parallel (clip_grad_norm_'s hot
// path; torch accumulates these in float too). Other p, dtypes and layouts take the double loop.
template <typename T, typename Tr> void norm_rows(const T* x, T* y, int64_t A, int64_t R, Tr tr, bool root) {
  auto fin = [&](float v) { return static_cast<T>(root ? std::sqrt(v) : v); };
  if (A == 1 && R > kSumPart) {
    const int64_t np = (R + kSumPart - 1) / kSumPart;
    std::vector<float> parts(np);
    parallel_for(np, 2, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) parts[p] = cascade_sum(x + p * kSumPart, std::min(kSumPart, R - p * kSumPart), tr);
    });
    y[0] = fin(pairwise(parts.data(), np));
    return;
  }
  parallel_for(A, std::max<int64_t>(1, kGrain / std::max<int64_t>(R, 1)), [&](int64_t a0, int64_t a1) {
    for (int64_t a = a0; a < a1; ++a) y[a] = fin(R ? cascade_sum(x + a * R, R, tr) : 0.0f);
  });
}

bool float_norm(const Tensor& in, Tensor& out, const ReduceArgs& r) {
  const double p = r.s[0];
  if (r.B != 1 || (p != 2 && p != 1)) return false;
  auto go = [&](auto tag) {
    using T = decltype(tag);
    if (p == 2) norm_rows(in.data<T>(), out.data<T>(), r.A, r.R, Square(), true);
    else norm_rows(in.data<T>(), out.data<T>(), r.A, r.R, Magnitude(), false);
  };
  switch (in.dtype()) {
    case ScalarType::Float32: go(float{}); return true;
    case ScalarType::Float16: go(Half{}); return true;
    case ScalarType::BFloat16: go(BFloat16{}); return true;
    default: return false;
  }
}

void k_norm(const Tensor& in, Tensor& out, Tensor*, const ReduceArgs& r) {
  if (float_norm(in, out, r)) return;
  AG_DISPATCH_FLOAT(in.dtype(), "norm", [&] {
    scalar_t* y = out.data<scalar_t>();
    const math::NormOp<double> norm{r.s[0]};
    for_rows<scalar_t>(in, r, [&](int64_t o, const scalar_t* row, int64_t stride) {
      double acc = norm.init();
      for (int64_t k = 0; k < r.R; ++k) acc = norm.step(acc, static_cast<double>(static_cast<acc_t<scalar_t>>(row[k * stride])));
      y[o] = static_cast<scalar_t>(static_cast<acc_t<scalar_t>>(norm.finish(acc)));
    });
  });
}
AG_REGISTER_KERNEL(norm, CPU, k_norm);

// Note [Float logsumexp]: float32 / fp16 / bf16 rows (B == 1) as torch computes them: the row max in
// float32 (NaN wins), then sum(exp(x - max)) in float32 vectors, pairwise over blocks (Note [Float
// sums]), log and add in double, rounded once. Parts of a long row run in parallel.
struct ExpShift {
  float m;
  vec::vf operator()(vec::vf v) const { return vec::exp(v - m); }
  float operator()(float v) const { return std::exp(v - m); }
};

bool float_lse_rows(const Tensor& in, Tensor& out, const ReduceArgs& r) {
  if (r.B != 1 || r.R < 1) return false;
  auto go = [&](auto tag) {
    using T = decltype(tag);
    const T* x = in.data<T>();
    T* y = out.data<T>();
    const int64_t R = r.R;
    auto finish = [](float m, float s) { return static_cast<float>(math::lse_finish(static_cast<double>(m), static_cast<double>(s))); };
    if (r.A == 1 && R > kSumPart) {
      const float m = long_row_best<true>(x, R);
      const int64_t np = (R + kSumPart - 1) / kSumPart;
      std::vector<float> parts(np);
      float s = 0;
      if (std::isfinite(m)) {
        parallel_for(np, 2, [&](int64_t p0, int64_t p1) {
          for (int64_t q = p0; q < p1; ++q) parts[q] = cascade_sum(x + q * kSumPart, std::min(kSumPart, R - q * kSumPart), ExpShift{m});
        });
        s = pairwise(parts.data(), np);
      }
      y[0] = static_cast<T>(finish(m, s));
      return;
    }
    parallel_for(r.A, std::max<int64_t>(1, kGrain / R), [&](int64_t a0, int64_t a1) {
      for (int64_t a = a0; a < a1; ++a) {
        const T* p = x + a * R;
        const float m = row_best_of<true>(p, R);
        const float s = std::isfinite(m) ? cascade_sum(p, R, ExpShift{m}) : 0.0f;
        y[a] = static_cast<T>(finish(m, s));
      }
    });
  };
  switch (in.dtype()) {
    case ScalarType::Float32: go(float{}); return true;
    case ScalarType::Float16: go(Half{}); return true;
    case ScalarType::BFloat16: go(BFloat16{}); return true;
    default: return false;
  }
}

void k_logsumexp(const Tensor& in, Tensor& out, Tensor*, const ReduceArgs& r) {
  if (out.dtype() == in.dtype() && float_lse_rows(in, out, r)) return;
  AG_DISPATCH_FLOAT(in.dtype(), "logsumexp", [&] {
    scalar_t* y = out.data<scalar_t>();
    for_rows<scalar_t>(in, r, [&](int64_t o, const scalar_t* row, int64_t stride) {
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < r.R; ++k) {
        double v = static_cast<double>(static_cast<acc_t<scalar_t>>(row[k * stride]));
        m = math::nan_max_step(m, v);  // nan wins, also in a row of nans and -infs
        if (m != m) break;
      }
      double s = 0;
      if (std::isfinite(m))
        for (int64_t k = 0; k < r.R; ++k) s += std::exp(static_cast<double>(static_cast<acc_t<scalar_t>>(row[k * stride])) - m);
      y[o] = static_cast<scalar_t>(static_cast<acc_t<scalar_t>>(math::lse_finish(m, s)));
    });
  });
}
AG_REGISTER_KERNEL(logsumexp, CPU, k_logsumexp);

template <bool IsAll>
void k_allany(const Tensor& in, Tensor& out, Tensor*, const ReduceArgs& r) {
  auto run = [&](auto tag) {
    using T = decltype(tag);
    T* y = out.data<T>();
    for_rows<T>(in, r, [&](int64_t o, const T* row, int64_t stride) {
      if (stride == 1) {  // a contiguous row of bytes: memchr for a zero (all), 8 bytes at a time (any)
        const auto* p = reinterpret_cast<const unsigned char*>(row);
        bool acc;
        if (IsAll) {
          acc = std::memchr(p, 0, static_cast<size_t>(r.R)) == nullptr;
        } else {
          acc = false;
          int64_t k = 0;
          for (; !acc && k + 64 <= r.R; k += 64) {
            uint64_t w[8];
            std::memcpy(w, p + k, sizeof w);
            acc = ((w[0] | w[1]) | (w[2] | w[3]) | (w[4] | w[5]) | (w[6] | w[7])) != 0;
          }
          for (; !acc && k < r.R; ++k) acc = p[k] != 0;
        }
        y[o] = static_cast<T>(acc);
        return;
      }
      bool acc = IsAll;
      for (int64_t k = 0; k < r.R; ++k) {
        bool v = row[k * stride] != 0;
        if (IsAll ? !v : v) { acc = !IsAll; break; }
      }
      y[o] = static_cast<T>(acc);
    });
  };
  if (in.dtype() == ScalarType::UInt8) run(uint8_t{}); else run(bool{});
}
AG_REGISTER_KERNEL(all, CPU, k_allany<true>);
AG_REGISTER_KERNEL(any, CPU, k_allany<false>);

// ---- scans and softmax: [A, R, B] -> [A, R, B]
template <typename F>
void for_lines(const ReduceArgs& r, F f) {
  parallel_for(r.A * r.B, std::max<int64_t>(1, kGrain / std::max<int64_t>(r.R, 1)), [&](int64_t b0, int64_t e0) {
    for (int64_t o = b0; o < e0; ++o) f((o / r.B) * r.R * r.B + o % r.B);
  });
}

template <bool IsSum>
void k_scan(const Tensor& in, Tensor& out, Tensor*, const ReduceArgs& r) {
  AG_DISPATCH_NUMERIC(in.dtype(), IsSum ? "cumsum" : "cumprod", [&] {
    using Acc = std::conditional_t<std::is_same_v<scalar_t, double> || std::is_same_v<scalar_t, float>, double,
                                   std::conditional_t<std::is_floating_point_v<acc_t<scalar_t>>, float, int64_t>>;
    const scalar_t* x = in.data<scalar_t>();
    scalar_t* y = out.data<scalar_t>();
    for_lines(r, [&](int64_t base) {
      Acc acc = IsSum ? Acc(0) : Acc(1);
      for (int64_t k = 0; k < r.R; ++k) {
        Acc v = static_cast<Acc>(static_cast<acc_t<scalar_t>>(x[base + k * r.B]));
        acc = IsSum ? math::wrap_add(acc, v) : math::wrap_mul(acc, v);  // int64: wraps, as torch
        y[base + k * r.B] = static_cast<scalar_t>(static_cast<acc_t<scalar_t>>(acc));
      }
    });
  });
}
AG_REGISTER_KERNEL(cumsum, CPU, k_scan<true>);
AG_REGISTER_KERNEL(cumprod, CPU, k_scan<false>);

// Contiguous rows (B == 1): Eigen's vectorized exp in opmath (float32 for fp16 / bf16, converted
// through a row buffer): max, exp and sum, then one scaling pass (a multiply by the reciprocal). A
// row holding inf / NaN (the max or the sum is not finite) is redone by the scalar path, which
// gives torch's results there.
template <bool IsLog, typename A>
void softmax_row_scalar(const A* xr, A* yr, int64_t R) {
  A mm = -std::numeric_limits<A>::infinity();
  for (int64_t k = 0; k < R; ++k) mm = math::nan_max_step(mm, xr[k]);
  A sum = 0;
  for (int64_t k = 0; k < R; ++k) sum += std::exp(xr[k] - mm);
  for (int64_t k = 0; k < R; ++k) yr[k] = IsLog ? xr[k] - mm - std::log(sum) : std::exp(xr[k] - mm) / sum;
}

template <bool IsLog, typename scalar_t>
bool softmax_rows_fast(const scalar_t* x, scalar_t* y, const ReduceArgs& r) {
  if (r.B != 1) return false;
  using A = acc_t<scalar_t>;
  using Arr = Eigen::Array<A, Eigen::Dynamic, 1>;
  const int64_t R = r.R;
  // Short rows go through an aligned buffer padded with -inf to whole packets (exp(-inf) = 0): Eigen
  // would otherwise peel the unaligned head and the tail of every row with scalar exp calls.
  constexpr bool kSame = std::is_same_v<scalar_t, A>;
  const bool pad = !kSame || (R <= 4096 && R % 16 != 0);
  const int64_t Rp = pad ? (R + 15) / 16 * 16 : R;
  parallel_for(r.A, std::max<int64_t>(1, kGrain / std::max<int64_t>(R, 1)), [&](int64_t a0, int64_t a1) {
    Arr bx(pad ? Rp : 0), by(pad ? Rp : 0);
    if (pad) bx.tail(Rp - R).setConstant(-std::numeric_limits<A>::infinity());
    for (int64_t a = a0; a < a1; ++a) {
      const A* xp;
      A* yp;
      if (pad) {
        for (int64_t k = 0; k < R; ++k) bx[k] = static_cast<A>(x[a * R + k]);
        xp = bx.data();
        yp = by.data();
      } else {
        xp = reinterpret_cast<const A*>(x + a * R);
        yp = reinterpret_cast<A*>(y + a * R);
      }
      Eigen::Map<const Arr> xr(xp, Rp);
      Eigen::Map<Arr> yr(yp, Rp);
      A m = R ? xr.maxCoeff() : A(0);
      bool ok = std::isfinite(m);
      if (ok) {
        if (IsLog) {
          const A s = (xr - m).exp().sum();
          ok = std::isfinite(s);
          if (ok) yr = xr - (m + std::log(s));
        } else {
          yr = (xr - m).exp();
          const A s = yr.sum();
          ok = std::isfinite(s);
          if (ok) yr *= A(1) / s;
        }
      }
      if (!ok) softmax_row_scalar<IsLog>(xp, yp, R);
      if (pad)
        for (int64_t k = 0; k < R; ++k) y[a * R + k] = static_cast<scalar_t>(by[k]);
    }
  });
  return true;
}

template <bool IsLog>
void k_softmax(const Tensor& in, Tensor& out, Tensor*, const ReduceArgs& r) {
  AG_DISPATCH_FLOAT(in.dtype(), IsLog ? "log_softmax" : "softmax", [&] {
    using T = acc_t<scalar_t>;
    const scalar_t* x = in.data<scalar_t>();
    scalar_t* y = out.data<scalar_t>();
    if (softmax_rows_fast<IsLog>(x, y, r)) return;
    for_lines(r, [&](int64_t base) {
      T m = -std::numeric_limits<T>::infinity();
      for (int64_t k = 0; k < r.R; ++k) m = math::nan_max_step(m, static_cast<T>(x[base + k * r.B]));
      T s = 0;
      for (int64_t k = 0; k < r.R; ++k) s += std::exp(static_cast<T>(x[base + k * r.B]) - m);
      if (IsLog) {
        T ls = std::log(s);
        for (int64_t k = 0; k < r.R; ++k) y[base + k * r.B] = static_cast<scalar_t>(static_cast<T>(x[base + k * r.B]) - m - ls);
      } else {
        for (int64_t k = 0; k < r.R; ++k) y[base + k * r.B] = static_cast<scalar_t>(std::exp(static_cast<T>(x[base + k * r.B]) - m) / s);
      }
    });
  });
}
AG_REGISTER_KERNEL(softmax, CPU, k_softmax<false>);
AG_REGISTER_KERNEL(log_softmax, CPU, k_softmax<true>);

}  // namespace
}  // namespace ampgrad::cpu
