// CPU gather/put by element offsets (Note [Offset indexing]) and nonzero.
#include "kernels/cpu/loops.h"

namespace ampgrad::cpu {

namespace {
void k_index(const Tensor& src, const Tensor& off, const Tensor& roff, Tensor& out) {
  const int64_t n = off.numel(), nr = roff.numel();
  const int64_t* o = off.data<int64_t>();
  const int64_t* ro = roff.data<int64_t>();
  const size_t sz = itemsize(src.dtype());
  const char* s = static_cast<const char*>(src.data_ptr());
  char* y = static_cast<char*>(out.data_ptr());
  parallel_for(n, std::max<int64_t>(1, kGrain / std::max<int64_t>(nr, 1)), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      for (int64_t r = 0; r < nr; ++r) std::memcpy(y + (i * nr + r) * sz, s + (o[i] + ro[r]) * sz, sz);
  });
}
AG_REGISTER_KERNEL(index, CPU, k_index);

void k_index_put(Tensor& dst, const Tensor& off, const Tensor& roff, const Tensor& vals, bool accumulate) {
  const int64_t n = off.numel(), nr = roff.numel();
  const int64_t* o = off.data<int64_t>();
  const int64_t* ro = roff.data<int64_t>();
  AG_CHECK_NOT_IMPL(!(accumulate && is_barebones_unsigned(dst.dtype())), "\"index_put\" not implemented for '",
                    scalar_type_name(dst.dtype()), "'");
  AG_DISPATCH_ALL_U(dst.dtype(), "index_put", [&] {  // uint16/32/64: the writes of diag and setitem
    scalar_t* d = dst.data<scalar_t>();
    const scalar_t* v = vals.data<scalar_t>();
    // Serial: duplicate indices must accumulate (or overwrite) deterministically, in order.
    for (int64_t i = 0; i < n; ++i)
      for (int64_t r = 0; r < nr; ++r) {
        scalar_t& t = d[o[i] + ro[r]];
        if (accumulate) {
          if constexpr (std::is_same_v<scalar_t, bool>) t = t || v[i * nr + r];
          else t = static_cast<scalar_t>(static_cast<acc_t<scalar_t>>(t) + static_cast<acc_t<scalar_t>>(v[i * nr + r]));
        } else {
          t = v[i * nr + r];
        }
      }
  });
}
AG_REGISTER_KERNEL(index_put, CPU, k_index_put);

Tensor k_nonzero(const Tensor& a) {
  const int64_t n = a.numel(), nd = a.dim();
  std::vector<int64_t> hits;
  AG_DISPATCH_ALL(a.dtype(), "nonzero", [&] {
    const scalar_t* x = a.data<scalar_t>();
    for (int64_t i = 0; i < n; ++i)
      if (static_cast<acc_t<scalar_t>>(x[i]) != acc_t<scalar_t>(0)) hits.push_back(i);
  });
  Tensor out = empty({static_cast<int64_t>(hits.size()), nd}, ScalarType::Int64);
  int64_t* y = out.data<int64_t>();
  for (size_t h = 0; h < hits.size(); ++h) {
    int64_t rem = hits[h];
    for (int64_t d = nd - 1; d >= 0; --d) { y[h * nd + d] = rem % a.sizes()[d]; rem /= a.sizes()[d]; }
  }
  return out;
}
AG_REGISTER_KERNEL(nonzero, CPU, k_nonzero);
}  // namespace

}  // namespace ampgrad::cpu
