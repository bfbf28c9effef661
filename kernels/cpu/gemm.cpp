// CPU GEMM: fp32 and bf16 on ampgrad's AVX-512 micro-kernels where the CPU has them
// (kernels/cpu/gemm_avx512.cpp); otherwise, and for doubles and thin fp32 products, Eigen on
// row-major maps of strided operands (a transposed view maps as column-major, anything else is
// packed first), with fp16 (and bf16 without AVX512-BF16) widened to fp32 and rounded once.
#include <Eigen/Core>
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/loops.h"

namespace ampgrad::cpu {

// kernels/cpu/gemm_avx512.cpp
bool has_avx512_bf16();
bool has_avx512_f32();
void gemm_f32_avx512(const float* a, int64_t ars, int64_t acs, const float* b, int64_t brs, int64_t bcs, float* c,
                     int64_t ldc, int64_t M, int64_t N, int64_t K, float beta, float alpha);
void gemm_bf16_avx512(const uint16_t* a, int64_t ars, int64_t acs, const uint16_t* b, int64_t brs, int64_t bcs,
                      uint16_t* c, int64_t ldc, int64_t M, int64_t N, int64_t K, float beta, float alpha);

namespace {
template <typename T> using RowMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T> using ColMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
using Stride = Eigen::OuterStride<>;

// A 2-d operand: pointer, rows, cols, strides (elements).
template <typename T> struct Mat { const T* p; int64_t rows, cols, rs, cs; };

// An operand Eigen can map as it is (row- or column-major); anything else is packed row-major
// into buf, once, before the product is split across threads.
template <typename T>
Mat<T> mappable(const Mat<T>& m, std::vector<T>& buf) {
  if ((m.cs == 1 && m.rs >= m.cols) || (m.rs == 1 && m.cs >= m.rows)) return m;
  buf.resize(m.rows * m.cols);
  for (int64_t i = 0; i < m.rows; ++i)
    for (int64_t j = 0; j < m.cols; ++j) buf[i * m.cols + j] = m.p[i * m.rs + j * m.cs];
  return {buf.data(), m.rows, m.cols, m.cols, 1};
}

// Calls f with an Eigen map of a mappable operand.
template <typename T, typename F>
void with_map(const Mat<T>& m, F f) {
  if (m.cs == 1 && m.rs >= m.cols)
    f(Eigen::Map<const RowMat<T>, 0, Stride>(m.p, m.rows, m.cols, Stride(std::max<int64_t>(m.rs, 1))));
  else
    f(Eigen::Map<const ColMat<T>, 0, Stride>(m.p, m.rows, m.cols, Stride(std::max<int64_t>(m.cs, 1))));
}

template <typename T>
void gemm_serial(const Mat<T>& a, const Mat<T>& b, T* c, int64_t ldc, T beta, T alpha) {
  Eigen::Map<RowMat<T>, 0, Stride> C(c, a.rows, b.cols, Stride(std::max<int64_t>(ldc, 1)));
  with_map(a, [&](const auto& A) {
    with_map(b, [&](const auto& B) {
      if (a.cols == 0) { if (beta == T(0)) C.setZero(); else C *= beta; return; }
      if (beta == T(0)) C.noalias() = alpha * (A * B);
      else { C *= beta; C.noalias() += alpha * (A * B); }
    });
  });
}

template <typename T>
void gemm_native(const Mat<T>& a, const Mat<T>& b, T* c, int64_t ldc, T beta, T alpha) {
  if (a.rows * a.cols * b.cols <= 4096) {  // tiny: Eigen's blocking setup costs more than the math
    for (int64_t i = 0; i < a.rows; ++i)
      for (int64_t j = 0; j < b.cols; ++j) {
        T acc = 0;
        for (int64_t k = 0; k < a.cols; ++k) acc += a.p[i * a.rs + k * a.cs] * b.p[k * b.rs + j * b.cs];
        T& y = c[i * ldc + j];
        y = alpha * acc + (beta == T(0) ? T(0) : beta * y);
      }
    return;
  }
  if constexpr (std::is_same_v<T, float>) {
    // The AVX-512 kernel's 12x32 tiles waste work on thin products; Eigen takes those.
    if (a.cols > 0 && a.rows >= 16 && b.cols >= 16 && has_avx512_f32()) {
      gemm_f32_avx512(a.p, a.rs, a.cs, b.p, b.rs, b.cs, c, ldc, a.rows, b.cols, a.cols, beta, alpha);
      return;
    }
  }
  // Note [Parallel GEMM]: big products split C into one block of rows (or columns) per thread,
  // each a serial Eigen GEMM: no barriers inside the product, and each element's k-sum order
  // does not depend on timing. (Eigen's own parallel GEMM synchronises on every panel and
  // measured 3x slower than serial whenever the other core was busy.)
  Eigen::setNbThreads(1);
  std::vector<T> pa, pb;
  const Mat<T> ma = mappable(a, pa), mb = mappable(b, pb);
  const int64_t m = ma.rows, n = mb.cols;
  const bool split_rows = m >= n;
  const int64_t extent = split_rows ? m : n, blocks = (extent + 31) / 32;
  const bool big = m * n * ma.cols >= (int64_t{1} << 21);  // ~0.1 ms of math: worth waking a thread
  parallel_for(blocks, big ? 2 : blocks + 1, [&](int64_t b0, int64_t b1) {
    const int64_t lo = b0 * 32, hi = std::min(extent, b1 * 32);
    Mat<T> as = ma, bs = mb;
    T* cs = c;
    if (split_rows) { as.p += lo * ma.rs; as.rows = hi - lo; cs += lo * ldc; }
    else { bs.p += lo * mb.cs; bs.cols = hi - lo; cs += lo; }
    gemm_serial(as, bs, cs, ldc, beta, alpha);
  });
}

// Widens a reduced-precision operand to fp32 in its own layout (row- or column-major), so the
// conversion loop runs over contiguous memory and vectorizes; anything else is gathered.
template <typename T>
Mat<float> widen(const Mat<T>& m, std::vector<float>& buf) {
  buf.resize(m.rows * m.cols);
  float* d = buf.data();
  if (m.rs == 1 && m.cs != 1) {  // column-major: keep it
    parallel_for(m.cols, std::max<int64_t>(1, 65536 / std::max<int64_t>(m.rows, 1)), [&](int64_t c0, int64_t c1) {
      for (int64_t j = c0; j < c1; ++j)
        for (int64_t i = 0; i < m.rows; ++i) d[j * m.rows + i] = static_cast<float>(m.p[j * m.cs + i]);
    });
    return {d, m.rows, m.cols, 1, m.rows};
  }
  parallel_for(m.rows, std::max<int64_t>(1, 65536 / std::max<int64_t>(m.cols, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t i = r0; i < r1; ++i) {
      const T* src = m.p + i * m.rs;
      float* dst = d + i * m.cols;
      if (m.cs == 1) for (int64_t j = 0; j < m.cols; ++j) dst[j] = static_cast<float>(src[j]);
      else for (int64_t j = 0; j < m.cols; ++j) dst[j] = static_cast<float>(src[j * m.cs]);
    }
  });
  return {d, m.rows, m.cols, m.cols, 1};
}

template <typename T>
void gemm_reduced(const Mat<T>& a, const Mat<T>& b, T* c, int64_t ldc, double beta, double alpha) {
  if constexpr (std::is_same_v<T, BFloat16>) {
    if (a.cols > 0 && has_avx512_bf16()) {
      gemm_bf16_avx512(reinterpret_cast<const uint16_t*>(a.p), a.rs, a.cs, reinterpret_cast<const uint16_t*>(b.p), b.rs, b.cs,
                       reinterpret_cast<uint16_t*>(c), ldc, a.rows, b.cols, a.cols, static_cast<float>(beta), static_cast<float>(alpha));
      return;
    }
  }
  // Widen both operands to fp32, multiply in fp32, round once.
  std::vector<float> wa, wb, wc(a.rows * b.cols);
  gemm_native<float>(widen(a, wa), widen(b, wb), wc.data(), b.cols, 0.f, 1.f);
  const float al = static_cast<float>(alpha), be = static_cast<float>(beta);
  parallel_for(a.rows, std::max<int64_t>(1, 65536 / std::max<int64_t>(b.cols, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t i = r0; i < r1; ++i) {
      const float* src = wc.data() + i * b.cols;
      T* dst = c + i * ldc;
      if (be == 0.f) for (int64_t j = 0; j < b.cols; ++j) dst[j] = static_cast<T>(al * src[j]);
      else for (int64_t j = 0; j < b.cols; ++j) dst[j] = static_cast<T>(al * src[j] + be * static_cast<float>(dst[j]));
    }
  });
}

void k_gemm(const Tensor& a, const Tensor& b, Tensor& out, double beta, double alpha) {
  const int o = static_cast<int>(out.dim()) - 2;  // 1 for [batch, m, n], 0 for a plain [m, n]
  const int64_t batch = o ? out.sizes()[0] : 1, m = out.sizes()[o], n = out.sizes()[o + 1], k = a.sizes()[o + 1];
  auto bs = [o](const Tensor& t) { return o ? t.strides()[0] : 0; };
  AG_DISPATCH_NUMERIC(a.dtype(), "addmm", [&] {
    using T = scalar_t;
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* pc = out.data<T>();
    // Note [Batched GEMM threads]: a batch of small products (attention's per-head matrices) is split
    // across threads by batch item, each product serial; threading inside a 128x128 product costs
    // more in wake-ups than it saves. Big products keep their own row/column split.
    const bool by_item = batch > 1 && m * n * k < (int64_t{1} << 22);
    parallel_for(batch, by_item ? 1 : batch + 1, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      Mat<T> A{pa + i * bs(a), m, k, a.strides()[o], a.strides()[o + 1]};
      Mat<T> B{pb + i * bs(b), k, n, b.strides()[o], b.strides()[o + 1]};
      T* C = pc + i * bs(out);
      const int64_t ldc = out.strides()[o];
      if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
        gemm_native<T>(A, B, C, ldc, static_cast<T>(beta), static_cast<T>(alpha));
      } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
        gemm_reduced<T>(A, B, C, ldc, beta, alpha);
      } else {  // integers: a plain triple loop (torch supports integer mm on CPU)
        for (int64_t r = 0; r < m; ++r)
          for (int64_t c = 0; c < n; ++c) {
            int64_t acc = 0;
            for (int64_t q = 0; q < k; ++q) acc += static_cast<int64_t>(A.p[r * A.rs + q * A.cs]) * static_cast<int64_t>(B.p[q * B.rs + c * B.cs]);
            T prev = C[r * ldc + c];
            C[r * ldc + c] = static_cast<T>(static_cast<int64_t>(alpha) * acc + (beta != 0 ? static_cast<int64_t>(beta) * static_cast<int64_t>(prev) : 0));
          }
      }
    }
    });
  });
}
AG_REGISTER_KERNEL(mm, CPU, k_gemm);
}  // namespace

// kernels/cpu/gemm.h: the same products on raw pointers (M, N or K may be 0).
void gemm_f32(const float* a, int64_t ars, int64_t acs, const float* b, int64_t brs, int64_t bcs, float* c, int64_t ldc,
              int64_t M, int64_t N, int64_t K, float beta, float alpha) {
  if (M == 0 || N == 0) return;
  gemm_native<float>(Mat<float>{a, M, K, ars, acs}, Mat<float>{b, K, N, brs, bcs}, c, ldc, beta, alpha);
}
void gemm_f64(const double* a, int64_t ars, int64_t acs, const double* b, int64_t brs, int64_t bcs, double* c,
              int64_t ldc, int64_t M, int64_t N, int64_t K, double beta, double alpha) {
  if (M == 0 || N == 0) return;
  gemm_native<double>(Mat<double>{a, M, K, ars, acs}, Mat<double>{b, K, N, brs, bcs}, c, ldc, beta, alpha);
}

}  // namespace ampgrad::cpu
