// CPU kernels of the scan / index-reduction / binning ops (Note [Scan-index kernels]): scatter_reduce
// (index_reduce runs it with the index expanded), cummax / cummin, logcumsumexp, searchsorted,
// bincount, histc. Columns that write disjoint outputs split across threads; binning runs serially.
#include <cmath>
#include <limits>
#include <memory>
#include <vector>
#include "kernels/cpu/loops.h"
#include "kernels/scan_index_args.h"

namespace ampgrad::cpu {

namespace {
using SA = ScanIndexArgs;

template <typename V> bool is_nan(V v) {
  if constexpr (std::is_floating_point_v<V>) return std::isnan(v);
  else return false;
}

// ---------------------------------------------------------------- scatter_reduce
template <typename A> A identity(SA::Reduce r) {
  switch (r) {
    case SA::kProd: return A(1);
    case SA::kAmax:
      if constexpr (std::is_floating_point_v<A>) return -std::numeric_limits<A>::infinity();
      else return std::numeric_limits<A>::lowest();
    case SA::kAmin:
      if constexpr (std::is_floating_point_v<A>) return std::numeric_limits<A>::infinity();
      else return std::numeric_limits<A>::max();
    default: return A(0);
  }
}

template <typename T>
void scatter_reduce(const Tensor* in, Tensor* out, const SA& a) {
  // Accumulates in acc_t (float for fp16/bf16) and rounds once; integers wrap as torch's do.
  using Acc = std::conditional_t<std::is_same_v<T, bool>, bool, acc_t<T>>;
  const T* self = in[0].data<T>();
  const int64_t* idx = in[1].data<int64_t>();
  const T* src = in[2].data<T>();
  T* res = out[0].data<T>();
  const int64_t nd = static_cast<int64_t>(a.out_sizes.size()), d = a.dim, N = out[0].numel();
  std::vector<int64_t> ostride(nd, 1);
  for (int64_t k = nd - 2; k >= 0; --k) ostride[k] = ostride[k + 1] * a.out_sizes[k + 1];
  int64_t Ai = 1, K = a.idx_sizes[d], Bi = 1;
  for (int64_t k = 0; k < d; ++k) Ai *= a.idx_sizes[k];
  for (int64_t k = d + 1; k < nd; ++k) Bi *= a.idx_sizes[k];
  std::unique_ptr<Acc[]> acc(new Acc[N > 0 ? N : 1]);  // not vector<bool>: elements are written in parallel
  for (int64_t i = 0; i < N; ++i) acc[i] = static_cast<Acc>(self[i]);
  const bool counting = a.reduce == SA::kMean || !a.include_self;
  std::vector<int64_t> cnt(counting ? N : 0, 0);
  const Acc id = identity<Acc>(a.reduce);
  // The output offset of column (ai, bi) at dim d = 0 is aoff(ai) + boff[bi]; a chunk of columns runs row by
  // row over its contiguous bi range (columns never share outputs, so chunks split across threads).
  std::vector<int64_t> boff(Bi, 0);
  for (int64_t bi = 0; bi < Bi; ++bi) {
    int64_t r = bi;
    for (int64_t k = nd - 1; k > d; --k) { boff[bi] += (r % a.idx_sizes[k]) * ostride[k]; r /= a.idx_sizes[k]; }
  }
  auto aoff = [&](int64_t ai) {
    int64_t o = 0;
    for (int64_t k = d - 1; k >= 0; --k) { o += (ai % a.idx_sizes[k]) * ostride[k]; ai /= a.idx_sizes[k]; }
    return o;
  };
  const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(K * 4, 1));
  parallel_for(Ai * Bi, grain, [&](int64_t c0, int64_t c1) {
    for (int64_t ai = c0 / Bi; ai * Bi < c1; ++ai) {
      const int64_t b0 = std::max(c0, ai * Bi) - ai * Bi, b1 = std::min(c1, (ai + 1) * Bi) - ai * Bi;
      const int64_t ao = aoff(ai);
      for (int64_t j = 0; j < K; ++j) {
        const int64_t row = (ai * K + j) * Bi;
        for (int64_t bi = b0; bi < b1; ++bi) {
          const int64_t i = row + bi;
          const int64_t p = ao + boff[bi] + idx[i] * ostride[d];
          const Acc v = static_cast<Acc>(src[i]);
          if (counting) {
            if (!a.include_self && cnt[p] == 0) acc[p] = id;
            ++cnt[p];
          }
          Acc& o = acc[p];
          switch (a.reduce) {
            case SA::kSum: case SA::kMean:
              if constexpr (std::is_same_v<Acc, bool>) o = o || v;
              else o = static_cast<Acc>(o + v);
              break;
            case SA::kProd:
              if constexpr (std::is_same_v<Acc, bool>) o = o && v;
              else o = static_cast<Acc>(o * v);
              break;
            case SA::kAmax: o = is_nan(v) ? v : std::max(o, v); break;
            case SA::kAmin: o = is_nan(v) ? v : std::min(o, v); break;
          }
        }
      }
    }
  });
  parallel_for(N, kGrain, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      Acc v = acc[i];
      if constexpr (!std::is_same_v<Acc, bool>) {
        if (a.reduce == SA::kMean) {
          int64_t n = cnt[i] + (a.include_self ? 1 : 0);
          if (n == 0) n = 1;
          if constexpr (std::is_floating_point_v<Acc>) {
            v = v / static_cast<Acc>(n);
          } else {  // torch divides integers with rounding_mode='floor'
            Acc q = static_cast<Acc>(v / static_cast<Acc>(n));
            if constexpr (std::is_signed_v<Acc>)
              if ((v % static_cast<Acc>(n) != 0) && (v < 0)) q = static_cast<Acc>(q - 1);
            v = q;
          }
        }
      }
      res[i] = static_cast<T>(v);
    }
  });
}

// ---------------------------------------------------------------- scans over [A, R, B]
template <typename F>
void for_columns(const SA& a, F&& f) {
  const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(a.R * 4, 1));
  parallel_for(a.A * a.B, grain, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) f((c / a.B) * a.R * a.B + c % a.B);
  });
}

template <typename T>
void cum_maxmin(const Tensor* in, Tensor* out, const SA& a) {
  using V = std::conditional_t<std::is_same_v<T, bool>, bool, acc_t<T>>;
  const T* x = in[0].data<T>();
  T* vo = out[0].data<T>();
  int64_t* io = out[1].data<int64_t>();
  const bool is_max = a.mode == SA::kCumMax;
  for_columns(a, [&](int64_t base) {
    V best = static_cast<V>(x[base]);
    int64_t bi = 0;
    for (int64_t r = 0; r < a.R; ++r) {
      const int64_t o = base + r * a.B;
      const V v = static_cast<V>(x[o]);
      // torch: a NaN always takes over; ties move to the later index
      if (is_nan(v) || (!is_nan(best) && (is_max ? v >= best : v <= best))) { best = v; bi = r; }
      vo[o] = static_cast<T>(best);
      io[o] = bi;
    }
  });
}

template <typename T>
void logcumsumexp(const Tensor* in, Tensor* out, const SA& a) {
  // torch's CPU accumulator: double for float32, float for fp16/bf16
  using V = std::conditional_t<std::is_same_v<T, float>, double, acc_t<T>>;
  const T* x = in[0].data<T>();
  T* y = out[0].data<T>();
  for_columns(a, [&](int64_t base) {
    V cum = -std::numeric_limits<V>::infinity();
    for (int64_t r = 0; r < a.R; ++r) {
      const int64_t o = base + r * a.B;
      const V v = static_cast<V>(x[o]);
      const V mn = std::isnan(cum) ? cum : std::min(v, cum), mx = std::isnan(cum) ? cum : std::max(v, cum);
      if (mn != mx || std::isfinite(mn)) cum = std::log1p(std::exp(mn - mx)) + mx;  // NaN propagates here
      else cum = v;  // both the same infinity
      y[o] = static_cast<T>(cum);
    }
  });
}

template <typename T>
void cum_backward(const Tensor* in, Tensor* out, const SA& a) {
  using V = acc_t<T>;
  const T* g = in[0].data<T>();
  const int64_t* idx = in[1].data<int64_t>();
  T* o = out[0].data<T>();
  for_columns(a, [&](int64_t base) {
    std::vector<V> acc(a.R, V(0));
    for (int64_t r = 0; r < a.R; ++r) acc[idx[base + r * a.B]] += static_cast<V>(g[base + r * a.B]);
    for (int64_t r = 0; r < a.R; ++r) o[base + r * a.B] = static_cast<T>(acc[r]);
  });
}

// ---------------------------------------------------------------- binning
template <typename T, typename I>
void searchsorted(const Tensor* in, Tensor* out, const SA& a) {
  using V = std::conditional_t<std::is_same_v<T, bool>, bool, acc_t<T>>;
  const T* bd = in[0].data<T>();
  const T* val = in[1].data<T>();
  const int64_t* sorter = in[2].defined() ? in[2].data<int64_t>() : nullptr;
  I* o = out[0].data<I>();
  const int64_t n = a.n;
  parallel_for(out[0].numel(), kGrain / 16, [&](int64_t v0, int64_t v1) {
    for (int64_t v = v0; v < v1; ++v) {
      const int64_t row = a.rows == 1 ? 0 : v / a.per_row;
      const T* b = bd + row * n;
      const int64_t* s = sorter ? sorter + row * n : nullptr;
      const V x = static_cast<V>(val[v]);
      int64_t lo = 0, hi = n;
      while (lo < hi) {  // torch's cus_lower_bound / cus_upper_bound (NaN compares false)
        const int64_t mid = lo + ((hi - lo) >> 1);
        const V m = static_cast<V>(s ? b[s[mid]] : b[mid]);
        if (a.right ? !(m > x) : !(m >= x)) lo = mid + 1;
        else hi = mid;
      }
      o[v] = static_cast<I>(lo);
    }
  });
}

template <typename W>
void bincount(const Tensor* in, Tensor* out, const SA&) {
  const int64_t* x = in[0].data<int64_t>();
  const int64_t N = in[0].numel();
  W* o = out[0].data<W>();
  for (int64_t i = 0; i < out[0].numel(); ++i) o[i] = W(0);
  if (in[1].defined()) {
    const W* w = in[1].data<W>();
    for (int64_t i = 0; i < N; ++i) o[x[i]] += w[i];
  } else {
    for (int64_t i = 0; i < N; ++i) o[x[i]] += W(1);
  }
}

template <typename T>
void histc(const Tensor* in, Tensor* out, const SA& a) {
  // torch bins in the input's type: each step of (x - lo) * bins / (hi - lo) rounds to T
  using V = acc_t<T>;
  auto rd = [](V v) { return static_cast<V>(static_cast<T>(v)); };
  const T* x = in[0].data<T>();
  const V lo = rd(static_cast<V>(a.lo)), hi = rd(static_cast<V>(a.hi)), width = rd(hi - lo), nb = rd(static_cast<V>(a.bins));
  std::vector<int64_t> cnt(a.bins, 0);
  for (int64_t i = 0; i < in[0].numel(); ++i) {
    const V v = static_cast<V>(x[i]);
    if (!(v >= lo && v <= hi)) continue;
    int64_t pos = static_cast<int64_t>(rd(rd(rd(v - lo) * nb) / width));
    if (pos >= a.bins) pos = a.bins - 1;
    cnt[pos] += 1;
  }
  T* o = out[0].data<T>();
  for (int64_t b = 0; b < a.bins; ++b) o[b] = static_cast<T>(static_cast<V>(cnt[b]));
}

void k_scan_index(const Tensor* in, Tensor* out, const SA& a) {
  switch (a.mode) {
    case SA::kScatterReduce:
      AG_DISPATCH_ALL(in[0].dtype(), "scatter_reduce", [&] { scatter_reduce<scalar_t>(in, out, a); });
      break;
    case SA::kCumMax: case SA::kCumMin:
      if (a.A * a.B * a.R == 0) return;
      AG_DISPATCH_ALL(in[0].dtype(), "cummax_cummin", [&] { cum_maxmin<scalar_t>(in, out, a); });
      break;
    case SA::kLogCumSumExp:
      if (a.A * a.B * a.R == 0) return;
      AG_DISPATCH_FLOAT(in[0].dtype(), "logcumsumexp_out_cpu", [&] { logcumsumexp<scalar_t>(in, out, a); });
      break;
    case SA::kCumBackward:
      if (a.A * a.B * a.R == 0) return;
      AG_DISPATCH_FLOAT(in[0].dtype(), "cummaxmin_backward", [&] { cum_backward<scalar_t>(in, out, a); });
      break;
    case SA::kSearchSorted:
      if (out[0].dtype() == ScalarType::Int32)
        AG_DISPATCH_ALL(in[0].dtype(), "searchsorted_out_cpu", [&] { searchsorted<scalar_t, int32_t>(in, out, a); });
      else
        AG_DISPATCH_ALL(in[0].dtype(), "searchsorted_out_cpu", [&] { searchsorted<scalar_t, int64_t>(in, out, a); });
      break;
    case SA::kBincount:
      if (out[0].dtype() == ScalarType::Int64) bincount<int64_t>(in, out, a);
      else if (out[0].dtype() == ScalarType::Float32) bincount<float>(in, out, a);
      else bincount<double>(in, out, a);
      break;
    case SA::kHistc:
      AG_DISPATCH_FLOAT(in[0].dtype(), "histogram_cpu", [&] { histc<scalar_t>(in, out, a); });
      break;
  }
}
AG_REGISTER_KERNEL(scatter_reduce, CPU, k_scan_index);
AG_REGISTER_KERNEL(index_reduce, CPU, k_scan_index);
AG_REGISTER_KERNEL(cummax, CPU, k_scan_index);
AG_REGISTER_KERNEL(logcumsumexp, CPU, k_scan_index);
AG_REGISTER_KERNEL(searchsorted, CPU, k_scan_index);
AG_REGISTER_KERNEL(bincount, CPU, k_scan_index);
AG_REGISTER_KERNEL(histc, CPU, k_scan_index);
AG_REGISTER_KERNEL(scan_index_backward, CPU, k_scan_index);
}  // namespace

}  // namespace ampgrad::cpu
