// CPU order statistics (Note [Sort kernels]): each [A, B] slice is gathered into (value, index) pairs
// and ordered with NaN above every number; slices split across threads.
#include <algorithm>
#include <cmath>
#include <vector>
#include "kernels/cpu/loops.h"

namespace ampgrad::cpu {

namespace {
template <typename V> bool is_nan(V v) {
  if constexpr (std::is_floating_point_v<V>) return std::isnan(v);
  else return false;
}

// Strict orders on (value, index): ties keep index order, so every mode is deterministic.
template <typename V> struct Asc {
  bool operator()(const std::pair<V, int64_t>& x, const std::pair<V, int64_t>& y) const {
    const bool nx = is_nan(x.first), ny = is_nan(y.first);
    if (nx || ny) return nx != ny ? ny : x.second < y.second;
    return x.first < y.first || (!(y.first < x.first) && x.second < y.second);
  }
};
template <typename V> struct Desc {
  bool operator()(const std::pair<V, int64_t>& x, const std::pair<V, int64_t>& y) const {
    const bool nx = is_nan(x.first), ny = is_nan(y.first);
    if (nx || ny) return nx != ny ? nx : x.second < y.second;
    return y.first < x.first || (!(x.first < y.first) && x.second < y.second);
  }
};

template <typename T>
void sort_slices(const Tensor& in, Tensor& values, Tensor& indices, const SortArgs& a) {
  using V = std::conditional_t<std::is_same_v<T, bool>, bool, acc_t<T>>;
  const T* x = in.data<T>();
  T* vo = values.data<T>();
  int64_t* io = indices.data<int64_t>();
  const int64_t R = a.R, B = a.B, k = a.k;
  const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(R * 8, 1));
  parallel_for(a.A * B, grain, [&](int64_t s0, int64_t s1) {
    std::vector<std::pair<V, int64_t>> buf(R);
    for (int64_t s = s0; s < s1; ++s) {
      const int64_t ai = s / B, bi = s % B;
      const T* src = x + ai * R * B + bi;
      for (int64_t r = 0; r < R; ++r) buf[r] = {static_cast<V>(src[r * B]), r};
      auto first = buf.begin();
      int64_t lo = 0, n_out = k;  // the output is buf[lo, lo + n_out)
      switch (a.mode) {
        case SortArgs::kSort:
          if (a.descending) std::sort(first, buf.end(), Desc<V>());
          else std::sort(first, buf.end(), Asc<V>());
          break;
        case SortArgs::kTopk:
          if (a.descending) std::partial_sort(first, first + k, buf.end(), Desc<V>());
          else std::partial_sort(first, first + k, buf.end(), Asc<V>());
          break;
        case SortArgs::kKth:
          std::nth_element(first, first + (k - 1), buf.end(), Asc<V>());
          lo = k - 1; n_out = 1;
          break;
        case SortArgs::kMedian: {
          auto nan = std::find_if(first, buf.end(), [](const auto& p) { return is_nan(p.first); });
          if (nan != buf.end()) { lo = nan - first; n_out = 1; break; }
          lo = (R - 1) / 2; n_out = 1;
          std::nth_element(first, first + lo, buf.end(), Asc<V>());
          break;
        }
        case SortArgs::kNanMedian: {
          const int64_t m = std::count_if(first, buf.end(), [](const auto& p) { return !is_nan(p.first); });
          n_out = 1;
          if (m == 0) { lo = 0; break; }  // all NaN: NaN at index 0, as torch
          lo = (m - 1) / 2;
          std::nth_element(first, first + lo, buf.end(), Asc<V>());
          break;
        }
      }
      T* vd = vo + ai * n_out * B + bi;
      int64_t* id = io + ai * n_out * B + bi;
      for (int64_t j = 0; j < n_out; ++j) {
        vd[j * B] = static_cast<T>(buf[lo + j].first);
        id[j * B] = buf[lo + j].second;
      }
    }
  });
}

void k_sort(const Tensor& in, Tensor& values, Tensor& indices, const SortArgs& a) {
  if (a.A * a.B == 0 || a.R == 0) return;
  static const char* names[] = {"sort", "topk_cpu", "kthvalue_cpu", "median_out", "median_out"};
  // torch sorts the barebones unsigned dtypes (sort, argsort, msort, unique) but has no topk/kthvalue/median for them
  if (is_barebones_unsigned(in.dtype()) && a.mode != SortArgs::kSort)
    AG_THROW(NotImplementedError, "\"", names[a.mode], "\" not implemented for '", scalar_type_name(in.dtype()), "'");
  AG_DISPATCH_ALL_U(in.dtype(), "sort", [&] { sort_slices<scalar_t>(in, values, indices, a); });
}
AG_REGISTER_KERNEL(sort, CPU, k_sort);
}  // namespace

}  // namespace ampgrad::cpu
