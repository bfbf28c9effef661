// CUDA GEMM through cuBLAS (cublasGemmStridedBatchedEx): row-major ampgrad operands are read as
// the transposed column-major problem C^T = B^T A^T, so row- and column-major views need no copy;
// other strides are packed first. fp16/bf16 accumulate in fp32; fp32 uses TF32 only when
// torch.backends.cuda.matmul.allow_tf32 is set. addmm with a bias vector (linear) is one
// cublasLtMatmul with a bias (or bias + ReLU) epilogue. Compile-checked only: not yet run on a GPU.
#include <climits>
#include <cstdlib>
#include <string>
#include <cuda_fp16.h>
#include "kernels/cuda/runtime.h"

namespace ampgrad::cuda {
namespace {

struct Operand {
  const char* p;
  cublasOperation_t op;
  int64_t ld, batch_stride;
  Tensor packed;  // keeps a packed copy alive
};

// Reads a logical r x c matrix with element strides (rs, cs) as the c x r column-major matrix
// cuBLAS wants (op N) or as its transpose (op T). Returns false when neither fits.
bool layout(int64_t r, int64_t c, int64_t rs, int64_t cs, cublasOperation_t& op, int64_t& ld) {
  const int64_t r1 = std::max<int64_t>(r, 1), c1 = std::max<int64_t>(c, 1);
  if (c == 1 || cs == 1) {
    ld = r == 1 ? c1 : rs;
    if (ld >= c1) { op = CUBLAS_OP_N; return true; }
  }
  if (r == 1 || rs == 1) {
    ld = c == 1 ? r1 : cs;
    if (ld >= r1) { op = CUBLAS_OP_T; return true; }
  }
  return false;
}

Operand operand(const Tensor& t, int o, int64_t r, int64_t c) {
  Operand x;
  const int64_t isz = itemsize(t.dtype());
  if (layout(r, c, t.strides()[o], t.strides()[o + 1], x.op, x.ld)) {
    x.p = static_cast<const char*>(t.data_ptr());
    x.batch_stride = o ? t.strides()[0] : 0;
    return x;
  }
  // Pack into a contiguous copy with the CUDA copy kernel.
  x.packed = empty(t.sizes(), t.dtype(), t.device());
  TensorIter it;
  it.build({&x.packed, &t});
  kernel<ElementwiseKernel>(Op::copy, t.device())(it, nullptr);
  x.p = static_cast<const char*>(x.packed.data_ptr());
  x.op = CUBLAS_OP_N;
  x.ld = std::max<int64_t>(c, 1);
  x.batch_stride = o ? r * c : 0;
  (void)isz;
  return x;
}

void check_int(int64_t v, const char* what) {
  AG_CHECK(v <= INT_MAX, "CUDA GEMM: ", what, " = ", v, " exceeds cuBLAS's 32-bit limit");
}

void k_gemm(const Tensor& a, const Tensor& b, Tensor& out, double beta, double alpha) {
  const int o = static_cast<int>(out.dim()) - 2;  // 1 for [batch, m, n], 0 for a plain [m, n]
  const int64_t batch = o ? out.sizes()[0] : 1, m = out.sizes()[o], n = out.sizes()[o + 1], k = a.sizes()[o + 1];
  cudaDataType_t dt;
  cublasComputeType_t ct = CUBLAS_COMPUTE_32F;
  switch (a.dtype()) {
    case ScalarType::Float32: dt = CUDA_R_32F; if (allow_tf32()) ct = CUBLAS_COMPUTE_32F_FAST_TF32; break;
    case ScalarType::Float64: dt = CUDA_R_64F; ct = CUBLAS_COMPUTE_64F; break;
    case ScalarType::Float16: dt = CUDA_R_16F; break;
    case ScalarType::BFloat16: dt = CUDA_R_16BF; break;
    default: AG_THROW(NotImplementedError, "\"addmm_cuda\" not implemented for '", scalar_type_name(a.dtype()), "'");
  }
  if (batch == 0 || m == 0 || n == 0) return;
  const Device dev = out.device();
  if (k == 0) {  // C = beta * C (and exactly 0 when beta == 0, whatever C held)
    TensorIter it;
    if (beta == 0) {
      it.build({&out});
      const double s[4] = {0, 0, 0, 0};
      kernel<ElementwiseKernel>(Op::fill, dev)(it, s);
    } else if (beta != 1) {
      it.build({&out, &out});
      const double s[3] = {beta, 1, 1};
      kernel<ElementwiseKernel>(Op::mul, dev)(it, s);
    }
    return;
  }
  AG_CHECK(out.strides()[o + 1] == 1 || n == 1, "internal error: CUDA GEMM needs dense output rows");
  Operand A = operand(a, o, m, k), B = operand(b, o, k, n);
  const int64_t ldc = m == 1 ? n : out.strides()[o];
  for (auto [v, what] : {std::pair<int64_t, const char*>{m, "m"}, {n, "n"}, {k, "k"}, {A.ld, "lda"}, {B.ld, "ldb"}, {ldc, "ldc"}, {batch, "batch"}})
    check_int(v, what);
  const int device = dev.norm();
  DeviceGuard g(device);
  cublasHandle_t h = cublas_handle(device);
  const int64_t sc = o ? out.strides()[0] : 0;
  // Column-major: C^T (n x m) = op(B^T) (n x k) * op(A^T) (k x m).
  if (ct == CUBLAS_COMPUTE_64F) {
    const double al = alpha, be = beta;
    AG_CUBLAS_CHECK(cublasGemmStridedBatchedEx(h, B.op, A.op, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &al,
                                               B.p, dt, static_cast<int>(B.ld), B.batch_stride, A.p, dt, static_cast<int>(A.ld),
                                               A.batch_stride, &be, out.data_ptr(), dt, static_cast<int>(ldc), sc,
                                               static_cast<int>(batch), ct, CUBLAS_GEMM_DEFAULT));
  } else {
    const float al = static_cast<float>(alpha), be = static_cast<float>(beta);
    AG_CUBLAS_CHECK(cublasGemmStridedBatchedEx(h, B.op, A.op, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &al,
                                               B.p, dt, static_cast<int>(B.ld), B.batch_stride, A.p, dt, static_cast<int>(A.ld),
                                               A.batch_stride, &be, out.data_ptr(), dt, static_cast<int>(ldc), sc,
                                               static_cast<int>(batch), ct, CUBLAS_GEMM_DEFAULT));
  }
}
AG_REGISTER_KERNEL(mm, CUDA, k_gemm);

// ---- cuBLASLt with a bias epilogue (Note [GEMM epilogues])
// RAII for the Lt descriptors, so an error thrown mid-way leaks nothing.
struct LtMatmulDesc {
  cublasLtMatmulDesc_t d = nullptr;
  ~LtMatmulDesc() { if (d) (void)cublasLtMatmulDescDestroy(d); }
  template <typename T> void set(cublasLtMatmulDescAttributes_t attr, const T& v) {
    AG_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d, attr, &v, sizeof(v)));
  }
};
struct LtLayout {
  cublasLtMatrixLayout_t l = nullptr;
  LtLayout(cudaDataType_t dt, int64_t rows, int64_t cols, int64_t ld) {
    AG_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&l, dt, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld));
  }
  ~LtLayout() { if (l) (void)cublasLtMatrixLayoutDestroy(l); }
};
struct LtPreference {
  cublasLtMatmulPreference_t p = nullptr;
  LtPreference() { AG_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&p)); }
  ~LtPreference() { if (p) (void)cublasLtMatmulPreferenceDestroy(p); }
  template <typename T> void set(cublasLtMatmulPreferenceAttributes_t attr, const T& v) {
    AG_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(p, attr, &v, sizeof(v)));
  }
};

uint32_t alignment(const void* p) {  // the largest power of two up to 256 dividing the address
  uint32_t a = 1;
  while (a < 256 && reinterpret_cast<uintptr_t>(p) % (a * 2) == 0) a *= 2;
  return a;
}

bool k_gemm_bias(const Tensor& a, const Tensor& b, const Tensor& bias, Tensor& out, double alpha, GemmEpilogue ep) {
  // torch's DISABLE_ADDMM_CUDA_LT, under ampgrad's name: every caller then takes the plain GEMM path.
  static const bool disabled = [] {
    const char* e = std::getenv("AMPGRAD_DISABLE_ADDMM_CUDA_LT");
    return e && std::string(e) == "1";
  }();
  if (disabled || a.dim() != 2 || b.dim() != 2 || out.dim() != 2 || bias.dim() != 1) return false;
  const int64_t m = out.sizes()[0], n = out.sizes()[1], k = a.sizes()[1];
  // torch's filter (isInputCompliesAddmmCudaLt): Lt is used for real matrices only; the degenerate
  // shapes take the plain GEMM.
  if (m <= 1 || n <= 1 || k <= 1) return false;
  cudaDataType_t dt;
  cublasComputeType_t ct = CUBLAS_COMPUTE_32F;
  switch (a.dtype()) {
    case ScalarType::Float32: dt = CUDA_R_32F; if (allow_tf32()) ct = CUBLAS_COMPUTE_32F_FAST_TF32; break;
    case ScalarType::Float16: dt = CUDA_R_16F; break;
    case ScalarType::BFloat16: dt = CUDA_R_16BF; break;
    default: return false;
  }
  if (b.dtype() != a.dtype() || bias.dtype() != a.dtype() || out.dtype() != a.dtype()) return false;
  // The bias is read as a packed vector of n; 16-byte alignment as other Lt users found necessary.
  if (bias.sizes()[0] != n || bias.strides()[0] != 1 || reinterpret_cast<uintptr_t>(bias.data_ptr()) % 16 != 0) return false;
  if (out.strides()[1] != 1 || out.strides()[0] < n) return false;
  Operand A = operand(a, 0, m, k), B = operand(b, 0, k, n);
  const int64_t ldc = out.strides()[0];
  for (auto [v, what] : {std::pair<int64_t, const char*>{m, "m"}, {n, "n"}, {k, "k"}, {A.ld, "lda"}, {B.ld, "ldb"}, {ldc, "ldc"}})
    check_int(v, what);
  const int device = out.device().norm();
  DeviceGuard g(device);
  cublasLtHandle_t h = cublaslt_handle(device);
  const auto [ws, ws_bytes] = cublaslt_workspace(device);

  // Column-major, as in k_gemm: D^T (n x m) = op(B^T) (n x k) * op(A^T) (k x m) + bias (length n,
  // broadcast over the m columns), so Lt's A is our b and Lt's B is our a.
  LtMatmulDesc desc;
  AG_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc.d, ct, CUDA_R_32F));
  desc.set(CUBLASLT_MATMUL_DESC_TRANSA, B.op);
  desc.set(CUBLASLT_MATMUL_DESC_TRANSB, A.op);
  desc.set(CUBLASLT_MATMUL_DESC_EPILOGUE, ep == GemmEpilogue::kBiasRelu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS);
  desc.set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias.data_ptr());
  LtLayout la(dt, B.op == CUBLAS_OP_N ? n : k, B.op == CUBLAS_OP_N ? k : n, B.ld);
  LtLayout lb(dt, A.op == CUBLAS_OP_N ? k : m, A.op == CUBLAS_OP_N ? m : k, A.ld);
  LtLayout lc(dt, n, m, ldc);
  LtPreference pref;
  pref.set(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, static_cast<uint64_t>(ws_bytes));
  pref.set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignment(B.p));
  pref.set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignment(A.p));
  pref.set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignment(out.data_ptr()));
  pref.set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignment(out.data_ptr()));
  cublasLtMatmulHeuristicResult_t best{};
  int found = 0;
  const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(h, desc.d, la.l, lb.l, lc.l, lc.l, pref.p, 1, &best, &found);
  if (st != CUBLAS_STATUS_SUCCESS || found == 0) return false;  // e.g. CUBLAS_STATUS_NOT_SUPPORTED: plain GEMM
  const float al = static_cast<float>(alpha), be = 0.0f;
  AG_CUBLAS_CHECK(cublasLtMatmul(h, desc.d, &al, B.p, la.l, A.p, lb.l, &be, out.data_ptr(), lc.l, out.data_ptr(), lc.l,
                                 &best.algo, ws, ws_bytes, current_stream(device)));
  return true;
}
AG_REGISTER_KERNEL(addmm, CUDA, k_gemm_bias);

}  // namespace
}  // namespace ampgrad::cuda
