// CPU elementwise loops over a TensorIter: a serial walker over [begin, end) of the flattened
// index space, an OpenMP split across cores for large tensors, and typed cpu_kernel helpers
// that load T, compute in acc_t<T>, and store.
#pragma once
#include <algorithm>
#include <utility>
#include "kernels/kernels.h"
#ifdef _OPENMP
#include <omp.h>
#endif

namespace ampgrad::cpu {

constexpr int64_t kGrain = 65536;

template <typename Loop>
void serial_range(const TensorIter& it, int64_t begin, int64_t end, Loop& loop) {
  const int n = it.nops;
  const int nd = static_cast<int>(it.shape.size());
  char* p[TensorIter::kMaxOps];
  int64_t s[TensorIter::kMaxOps] = {};
  if (nd == 0) {
    for (int i = 0; i < n; ++i) p[i] = it.data[i];
    if (begin < end) loop(p, s, 1);
    return;
  }
  int64_t idx[16] = {}, rem = begin;
  int64_t* big_idx = nullptr;
  std::vector<int64_t> heap;
  if (nd > 16) { heap.assign(nd, 0); big_idx = heap.data(); }
  int64_t* ix = big_idx ? big_idx : idx;
  for (int d = nd - 1; d >= 0; --d) { ix[d] = rem % it.shape[d]; rem /= it.shape[d]; }
  for (int i = 0; i < n; ++i) s[i] = it.strides[nd - 1][i];
  int64_t pos = begin;
  while (pos < end) {
    for (int i = 0; i < n; ++i) {
      char* q = it.data[i];
      for (int d = 0; d < nd; ++d) q += ix[d] * it.strides[d][i];
      p[i] = q;
    }
    int64_t cnt = std::min(it.shape[nd - 1] - ix[nd - 1], end - pos);
    loop(p, s, cnt);
    pos += cnt;
    ix[nd - 1] += cnt;
    for (int d = nd - 1; d > 0 && ix[d] == it.shape[d]; --d) { ix[d] = 0; ++ix[d - 1]; }
  }
}

// Runs loop(char** ptrs, const int64_t* inner_strides, int64_t n) over every element.
template <typename Loop>
void for_each(const TensorIter& it, Loop&& loop) {
  const int64_t numel = it.numel;
#ifdef _OPENMP
  if (numel >= kGrain && omp_get_max_threads() > 1 && !omp_in_parallel()) {
#pragma omp parallel
    {
      int nt = omp_get_num_threads(), t = omp_get_thread_num();
      int64_t chunk = (numel + nt - 1) / nt;
      int64_t b = std::min<int64_t>(t * chunk, numel), e = std::min<int64_t>(b + chunk, numel);
      serial_range(it, b, e, loop);
    }
    return;
  }
#endif
  serial_range(it, 0, numel, loop);
}

// Parallel loop over [0, n) in chunks; f(begin, end).
template <typename F>
void parallel_for(int64_t n, int64_t grain, F&& f) {
#ifdef _OPENMP
  if (n >= grain && omp_get_max_threads() > 1 && !omp_in_parallel()) {
#pragma omp parallel
    {
      int nt = omp_get_num_threads(), t = omp_get_thread_num();
      int64_t chunk = (n + nt - 1) / nt;
      int64_t b = std::min<int64_t>(t * chunk, n), e = std::min<int64_t>(b + chunk, n);
      if (b < e) f(b, e);
    }
    return;
  }
#endif
  if (n > 0) f(0, n);
}

template <typename T> inline acc_t<T> load(const char* p) { return static_cast<acc_t<T>>(*reinterpret_cast<const T*>(p)); }
template <typename T, typename V> inline void store(char* p, V v) { *reinterpret_cast<T*>(p) = static_cast<T>(v); }

// out = f(a): Out and In are storage types; f receives acc_t<In>.
template <typename Out, typename In, typename F>
void cpu_kernel(TensorIter& it, F f) {
  for_each(it, [&](char** p, const int64_t* s, int64_t n) {
    if (s[0] == sizeof(Out) && s[1] == sizeof(In)) {
      Out* o = reinterpret_cast<Out*>(p[0]);
      const In* a = reinterpret_cast<const In*>(p[1]);
      // In place (o == a) gets its own loop: the compiler's overlap check would refuse to vectorize.
      if constexpr (std::is_same_v<Out, In>)
        if (o == a) { for (int64_t i = 0; i < n; ++i) o[i] = static_cast<Out>(f(static_cast<acc_t<In>>(o[i]))); return; }
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<Out>(f(static_cast<acc_t<In>>(a[i])));
    } else {
      for (int64_t i = 0; i < n; ++i) store<Out>(p[0] + i * s[0], f(load<In>(p[1] + i * s[1])));
    }
  });
}

template <typename Out, typename In, typename F>
void cpu_kernel2(TensorIter& it, F f) {
  for_each(it, [&](char** p, const int64_t* s, int64_t n) {
    if (s[0] == sizeof(Out) && s[1] == sizeof(In) && s[2] == sizeof(In)) {
      Out* o = reinterpret_cast<Out*>(p[0]);
      const In* a = reinterpret_cast<const In*>(p[1]);
      const In* b = reinterpret_cast<const In*>(p[2]);
      if constexpr (std::is_same_v<Out, In>)
        if (o == a && o != b) {
          for (int64_t i = 0; i < n; ++i) o[i] = static_cast<Out>(f(static_cast<acc_t<In>>(o[i]), static_cast<acc_t<In>>(b[i])));
          return;
        }
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<Out>(f(static_cast<acc_t<In>>(a[i]), static_cast<acc_t<In>>(b[i])));
    } else {
      for (int64_t i = 0; i < n; ++i)
        store<Out>(p[0] + i * s[0], f(load<In>(p[1] + i * s[1]), load<In>(p[2] + i * s[2])));
    }
  });
}

template <typename Out, typename In, typename F>
void cpu_kernel3(TensorIter& it, F f) {
  for_each(it, [&](char** p, const int64_t* s, int64_t n) {
    for (int64_t i = 0; i < n; ++i)
      store<Out>(p[0] + i * s[0], f(load<In>(p[1] + i * s[1]), load<In>(p[2] + i * s[2]), load<In>(p[3] + i * s[3])));
  });
}

}  // namespace ampgrad::cpu
