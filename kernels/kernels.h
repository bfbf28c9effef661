// The kernel tables: kernel<F>(op, device) -> function (Note [Typed kernel tables]; queries in
// kernels/common/kernel_table.cpp). There is no central registration file: each kernel file registers
// its own kernels with AG_REGISTER_KERNEL(op, device, fn) (a static registrar, defined below), the
// elementwise ones once per row of the op table (csrc/ops/op_list.def). Kernels compute only; shapes,
// dtypes and autograd are settled before.
#pragma once
#include <array>
#include <type_traits>
#include <vector>
#include "core/tensor.h"
#include "kernels/profiler_hooks.h"
#include "ops/op_list.h"

namespace ampgrad {

// A fixed-capacity vector: the iterator is built on every op, so it must not allocate.
template <typename T, int N>
struct SmallVec {
  T v[N];
  int n = 0;
  void clear() { n = 0; }
  void push_back(const T& x) {
    AG_CHECK(n < N, "tensors with more than ", N, " (coalesced) dimensions are not supported");
    v[n++] = x;
  }
  size_t size() const { return static_cast<size_t>(n); }
  bool empty() const { return n == 0; }
  T& back() { return v[n - 1]; }
  T& operator[](size_t i) { return v[i]; }
  const T& operator[](size_t i) const { return v[i]; }
};

// Elementwise operands, already broadcast to one shape: operand 0 is the output. Dimensions are
// coalesced and strides are in bytes, innermost last.
struct TensorIter {
  static constexpr int kMaxOps = 5;
  int nops = 0;
  char* data[kMaxOps];
  ScalarType dtypes[kMaxOps];
  SmallVec<int64_t, 32> shape;
  SmallVec<std::array<int64_t, kMaxOps>, 32> strides;
  int64_t numel = 1;
  // The operands as given (for the profiler's input shapes); set by run_elementwise only.
  const Tensor* const* operands = nullptr;
  void build(const Tensor* const* ops, int n);
  void build(std::initializer_list<const Tensor*> ops) { build(ops.begin(), static_cast<int>(ops.size())); }
  ScalarType dtype(int i) const { return dtypes[i]; }
  bool contiguous(int i) const {  // operand i walks memory densely
    return shape.size() <= 1 && (shape.empty() || strides[0][i] == itemsize(dtypes[i]));
  }
};

// Kernel signatures by family. `s` carries the op's scalar arguments (alpha, bounds, ...).
using ElementwiseKernel = void (*)(TensorIter& it, const double* s);
// Reduction over the middle axis of a contiguous [A, R, B] input into [A, B].
struct ReduceArgs { int64_t A, R, B; double s[4]; };
using ReduceKernel = void (*)(const Tensor& in, Tensor& out, Tensor* indices, const ReduceArgs& r);
// out[b] (=) beta * out[b] + alpha * a[b] @ b[b] for 3-d a [batch, m, k], b [batch, k, n], or the
// same without the batch dim for 2-d operands (no view needed for a plain mm). out rows are dense.
using GemmKernel = void (*)(const Tensor& a, const Tensor& b, Tensor& out, double beta, double alpha);
// Note [GEMM epilogues]: out = act(alpha * a @ b + bias) in one call, for 2-d a [m, k], b [k, n], a
// contiguous bias [n] and out [m, n] with dense rows (CUDA: one cublasLtMatmul with a bias epilogue).
// Returns false when it cannot take the case (layout, dtype, alignment, no algorithm); the front end
// then runs the plain GEMM path. Registered as Op::addmm by backends that have it (CUDA only).
enum class GemmEpilogue : int { kBias = 0, kBiasRelu = 1 };
using GemmBiasKernel = bool (*)(const Tensor& a, const Tensor& b, const Tensor& bias, Tensor& out, double alpha,
                                GemmEpilogue epilogue);


}  // namespace ampgrad

namespace ampgrad {
// Gather / put by precomputed element offsets (int64, contiguous): for i < nidx, r < nrest,
// out[i * nrest + r] = src[off[i] + roff[r]], or dst[off[i] + roff[r]] (+)= vals[i * nrest + r].
using IndexGatherKernel = void (*)(const Tensor& src, const Tensor& off, const Tensor& roff, Tensor& out);
using IndexPutKernel = void (*)(Tensor& dst, const Tensor& off, const Tensor& roff, const Tensor& vals, bool accumulate);
using NonzeroKernel = Tensor (*)(const Tensor& a);
// Random fills advance the device's generator: CPU ones reproduce torch's CPU streams, CUDA ones draw
// from a per-device Philox stream (Note [Philox streams]).
using RandomKernel = void (*)(Tensor& t, double a, double b);
// Note [Integer bounds of randint]: randint's int64 bounds would lose bits as doubles beyond 2^53
// (randint(2**62, 2**62 + 10) once drew from an empty range), so they travel bit for bit:
// kernel(t, pack_i64(low), pack_i64(high)), and the kernel unpacks them. randperm has its own slot.
inline double pack_i64(int64_t v) { double d; std::memcpy(&d, &v, sizeof d); return d; }
inline int64_t unpack_i64(double d) { int64_t v; std::memcpy(&v, &d, sizeof v); return v; }
}  // namespace ampgrad

namespace ampgrad {
// AMP: unscale every grad of one (device, dtype) group by inv_scale and raise found_inf (a 1-element
// fp32 tensor) when any value is not finite; update the scale on the device.
using AmpUnscaleKernel = void (*)(std::vector<Tensor>& grads, Tensor& found_inf, const Tensor& inv_scale);
using AmpUpdateScaleKernel = void (*)(Tensor& scale, Tensor& growth_tracker, const Tensor& found_inf, double growth,
                                      double backoff, int64_t interval);
// Note [Fused optimizer steps]: one call updates a whole list of parameters in place. The kernel
// reads found_inf and grad_scale itself (1-element float32 tensors on the params' device), so a
// GradScaler step needs no host sync: found_inf != 0 skips every update, grad_scale divides the
// grads first (and the unscaled grads are written back, as torch's fused optimizers do).
struct SgdArgs { double lr, momentum, dampening, weight_decay; bool nesterov, maximize; };
// bufs[i] is undefined when momentum == 0; fresh[i]: the buffer starts as the gradient.
using SgdStepKernel = void (*)(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                               const std::vector<Tensor>& bufs, const std::vector<bool>& fresh, const SgdArgs& a,
                               const Tensor* grad_scale, const Tensor* found_inf);
struct AdamArgs { double lr, beta1, beta2, eps, weight_decay; bool decoupled, amsgrad, maximize; };
// steps[i]: a 1-element float32 tensor on params[i]'s device, incremented before use (not when
// found_inf skips the step); max_sqs[i] undefined unless amsgrad.
// Note [Sort kernels]: order statistics along the middle axis of a contiguous [A, R, B] input, into
// contiguous values (input dtype) and int64 indices of shape [A, k, B]. NaN orders above every number
// (torch's rule). kSort: all R, ascending or descending, stable. kTopk: the k largest (descending) or
// smallest, sorted. kKth: the k-th smallest (1-based; k = 1 output). kMedian: the lower median, NaN if
// the slice has one (the first NaN's index). kNanMedian: the lower median of the non-NaN values.
struct SortArgs {
  enum Mode : int { kSort, kTopk, kKth, kMedian, kNanMedian };
  int64_t A, R, B, k;
  Mode mode;
  bool descending;
};
// Note [Multinomial kernel]: draws with replacement from each row of contiguous probabilities [D, C]
// (checked finite, >= 0, positive sums) given uniform doubles [D, n] already drawn: torch's CPU
// sampler (a cumulative distribution in the input's type, normalised, its last entry set to 1, and a
// binary search per draw), so the same uniforms give torch's samples. out: int64 [D, n].
using MultinomialKernel = void (*)(const Tensor& probs, const Tensor& uniforms, Tensor& out, int64_t num_samples);
using SortKernel = void (*)(const Tensor& in, Tensor& values, Tensor& indices, const SortArgs& a);
using AdamStepKernel = void (*)(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                                const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                                const std::vector<Tensor>& max_sqs, const std::vector<Tensor>& steps, const AdamArgs& a,
                                const Tensor* grad_scale, const Tensor* found_inf);

// ---- fused nn ops (kernels/cpu/attention.cpp, kernels/cpu/nn_misc.cpp)
// Note [Fused attention]: q [B, Hq, L, E], k [B, Hk, S, E], v [B, Hk, S, Ev] (last stride 1, any
// other strides), Hq % Hk == 0 (query head h reads key head h / (Hq / Hk)); mask undefined or a
// [B, Hq, L, S] view (bool: keep; float32/float64 in the compute type: added). out [B, Hq, L, Ev] and
// lse [B, Hq, L] (compute type; +inf for a row with no key) are contiguous. Causal: key j <= query i.
struct SdpaArgs { double scale; bool causal; };
using SdpaKernel = void (*)(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, Tensor& out, Tensor& lse,
                            const SdpaArgs& a);
// Recomputes P from lse; dq, dk, dv contiguous, shaped as q, k, v.
using SdpaBackwardKernel = void (*)(const Tensor& gout, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                                    const Tensor& out, const Tensor& lse, Tensor& dq, Tensor& dk, Tensor& dv, const SdpaArgs& a);
// Elementwise losses over contiguous operands of one shape and dtype (weight / pos_weight undefined
// or the same); reduction 0 none (out shaped as input), 1 mean, 2 sum (out 0-d). Backward: grad_in =
// grad * dloss/dinput (grad 0-d for mean / sum, already divided for mean).
enum class LossKind : int { MSE, SMOOTH_L1, HUBER, BCE, BCE_LOGITS };
struct LossArgs { LossKind kind; int reduction; double beta; };
using LossKernel = void (*)(const Tensor& in, const Tensor& target, const Tensor& weight, const Tensor& pos_weight, Tensor& out,
                            const LossArgs& a);
using LossBackwardKernel = void (*)(const Tensor& grad, const Tensor& in, const Tensor& target, const Tensor& weight,
                                    const Tensor& pos_weight, Tensor& grad_in, const LossArgs& a);
// Dropout: mask (contiguous, in's dtype) = keep ? scale : 0 drawn from the CPU generator, and, when
// out is defined (in and out contiguous, same shape as mask), out = in * mask in the same pass.
using DropoutKernel = void (*)(const Tensor& in, Tensor& out, Tensor& mask, double p);
// Embedding: out[i, :] = weight[idx[i], :] (idx int64 / int32 contiguous, indices checked before);
// backward: grad_weight (zeroed, contiguous [V, D]) += grad rows (grad [n, D] contiguous), the row
// padding_idx (-1: none) left zero, each row divided by its index's count when scale_by_freq.
using EmbeddingKernel = void (*)(const Tensor& weight, const Tensor& idx, Tensor& out);
using EmbeddingBackwardKernel = void (*)(const Tensor& grad, const Tensor& idx, Tensor& grad_weight, int64_t padding_idx,
                                         bool scale_by_freq);
// Note [Convolution kernels]: one kernel serves convolution and transposed convolution, forward and
// backward, in "conv space": x [N, C, in...], y [N, O, out...], w [O, C/G, k...], spatial dims padded to
// three with leading size-1 dims; output position o and tap t read input position o * stride - pad +
// t * dilation. kForward: out = y from (a = x, b = w) (+ bias [O]); kBackwardData: out = x-shaped from
// (a = y-shaped, b = w) (+ bias [C]: a transposed convolution's forward); kBackwardWeight: out = w-shaped
// from (a = x, b = y-shaped). Contiguous operands of one floating dtype; low precision computes in fp32.
struct ConvArgs { int64_t N, C, O, G; int64_t in[3], out[3], k[3], stride[3], pad[3], dil[3]; };
enum class ConvMode : int { kForward, kBackwardData, kBackwardWeight };
using ConvKernel = void (*)(ConvMode mode, const Tensor& a, const Tensor& b, const Tensor* bias, Tensor& out,
                            const ConvArgs& g);
// Pooling over the last three dims of contiguous [NC, in...] planes (fewer dims padded with size 1).
// Forward: out [NC, out...] (and int64 indices into the plane for max / adaptive max); backward:
// in = grad_out, out = grad_in (and indices as the forward returned them).
struct PoolArgs {
  int64_t NC; int64_t in[3], out[3], k[3], stride[3], pad[3], dil[3];
  bool count_include_pad; int64_t divisor;  // avg: divisor_override, 0 for none
};
using PoolKernel = void (*)(bool backward, const Tensor& in, Tensor& out, Tensor* indices, const PoolArgs& p);
// Note [Fused norms]: the normalizations run as one forward and one backward kernel each. x is
// contiguous and viewed as [N, C, HW]; statistics are float32 for fp16/bf16 inputs (opmath), one
// per row of HW for layer_norm / rms_norm (C = 1, affine per element of the row), per (n, group)
// for group_norm (G groups, affine per channel) and per channel for batch_norm. mean / rstd are the
// outputs of the forward (inputs of batch_norm's eval mode: use_stats) and inputs of the backward.
// An undefined w / b means no affine; an undefined dx / dw / db is not wanted.
struct NormArgs {
  int64_t N = 0, C = 1, HW = 0, G = 1;
  double eps = 0;
  bool use_stats = false;  // batch_norm eval: normalize with the given mean / rstd
};
using NormKernel = void (*)(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y, Tensor& mean, Tensor& rstd,
                            const NormArgs& a);
using NormBackwardKernel = void (*)(const Tensor& dy, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                                    const Tensor& w, Tensor& dx, Tensor& dw, Tensor& db, const NormArgs& a);
// softmax / log_softmax backward over the [A, R, B] plan of the forward (Note [Reduce plan]):
// gin = y * (g - sum(g * y)) or g - exp(y) * sum(g), sums along R in float32 (float64 for double).
using SoftmaxBackwardKernel = void (*)(const Tensor& g, const Tensor& y, Tensor& gin, const ReduceArgs& r);
// nll_loss over logp [N, C, S] (contiguous) and int64 target [N, S]: reduction 0 none (out [N, S]),
// 1 mean, 2 sum; total_weight is a 1-element tensor of logp's dtype. Returns the flat index of
// the first target that is neither ignore_index nor in [0, C), or -1 (the front end raises).
struct NllArgs { int64_t N, C, S, ignore_index; int reduction; };
using NllKernel = int64_t (*)(const Tensor& logp, const Tensor& target, const Tensor& weight, Tensor& out,
                              Tensor& total_weight, const NllArgs& a);
// gin [N, C, S] (=) -w[t] * grad (/ total_weight for mean) at the target class, 0 elsewhere.
using NllBackwardKernel = void (*)(const Tensor& grad, const Tensor& target, const Tensor& weight,
                                   const Tensor& total_weight, Tensor& gin, const NllArgs& a);
// Note [Fused RNN cells]: the pointwise part of an LSTM / GRU cell in one pass over contiguous [B, *]
// operands of one dtype (fp16 / bf16 compute in fp32; ws is fp32 then, the input dtype otherwise).
// LSTM: a = gates [B, 4H] (i|f|g|o, biases added), b = c [B, H], c undefined -> y0 = h', y1 = c',
// ws = the activated gates [B, 4H]. GRU: a = input gates [B, 3H], b = hidden gates [B, 3H] (r|z|n, each
// with its bias), c = h -> y0 = h' = n + z * (h - n), n = tanh(a_n + r * b_n), y1 undefined,
// ws = [B, 4H] (r, z, n, b_n). Backward (gradients g0 = dh', g1 = dc' or undefined = zero):
// LSTM s0 = c, s1 = c' -> d0 = dgates, d1 = dc; GRU s0 = h -> d0 = dgi, d1 = dgh, d2 = dh.
using RnnCellKernel = void (*)(const Tensor& a, const Tensor& b, const Tensor& c, Tensor& y0, Tensor& y1, Tensor& ws);
using RnnCellBackwardKernel = void (*)(const Tensor& g0, const Tensor& g1, const Tensor& s0, const Tensor& s1,
                                       const Tensor& ws, Tensor& d0, Tensor& d1, Tensor& d2);

// Note [Spatial kernels]: pad (reflect / replicate / circular), upsample, im2col / col2im and
// max_unpool over contiguous [NC, in...] planes, spatial dims padded to three with leading size-1 dims
// (in / out: the op's input / output sizes, whichever direction runs). backward: in = grad of the
// output, out = grad of the input (zeroed by the kernel). pad: before[d] (negative crops).
// upsample: scale[d] = torch's scale passed to the source-index math (<= 0: none), align_corners,
// exact (nearest-exact). im2col: in = [N, C, in...], out = [N, C*k..., L]; col2im the reverse (C: channels).
// max_unpool: indices (int64, shaped as the pooled input) into each output plane. Low precision
// computes in float32.
struct SpatialArgs {
  int64_t NC = 1, C = 1;
  int nd = 0;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  int64_t before[3] = {0, 0, 0};
  double scale[3] = {0, 0, 0};
  bool align_corners = false, exact = false;
  int64_t k[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, pad[3] = {0, 0, 0}, dil[3] = {1, 1, 1};
};
using SpatialKernel = void (*)(bool backward, const Tensor& in, Tensor& out, const Tensor* indices, const SpatialArgs& a);

// Note [Linalg kernels]: matrix decompositions over batches of matrices; LinalgArgs (the mode and
// sizes) is defined in kernels/linalg_args.h, the front ends are ops/linalg_decomp.cpp.
struct LinalgArgs;
using LinalgKernel = void (*)(const Tensor* in, Tensor* out, const LinalgArgs& a);
// Note [Scan-index kernels]: scatter_reduce / index_reduce / cummax / logcumsumexp / searchsorted /
// bincount / histc and their backward; ScanIndexArgs (mode, sizes) is in kernels/scan_index_args.h.
struct ScanIndexArgs;
using ScanIndexKernel = void (*)(const Tensor* in, Tensor* out, const ScanIndexArgs& a);
// Note [CTC and fractional pool kernels]: ctc_loss's forward (nll and log alpha) and backward, and
// fractional max pooling's forward (its backward is max pooling's index scatter, the POOL family);
// CtcFracArgs (the mode and sizes) is in kernels/ctc_fracpool_args.h.
struct CtcFracArgs;
using CtcFracKernel = void (*)(const Tensor* in, Tensor* out, const CtcFracArgs& a);
// ---------------------------------------------------------------- the kernel tables
// Note [Typed kernel tables]: each kernel family has its own table of its own function type, indexed
// by (op, device). A registration type-checks against the family of the op's row (Note [Op table]),
// and a lookup returns the family's type: no cast anywhere, and an op reads only its own slot (two
// rows may register the same function, e.g. max and argmax, but each under its own name).
template <KernelFamily F> struct KernelSig;
#define AG_KERNEL_SIG(F, T) \
  template <> struct KernelSig<KernelFamily::F> { using type = T; }; \
  template <> struct FamilyOf<T> { static constexpr KernelFamily value = KernelFamily::F; };
template <typename Fn> struct FamilyOf;
AG_KERNEL_SIG(ELEMENTWISE, ElementwiseKernel)
AG_KERNEL_SIG(REDUCE, ReduceKernel)
AG_KERNEL_SIG(GEMM, GemmKernel)
AG_KERNEL_SIG(GEMM_BIAS, GemmBiasKernel)
AG_KERNEL_SIG(INDEX_GATHER, IndexGatherKernel)
AG_KERNEL_SIG(INDEX_PUT, IndexPutKernel)
AG_KERNEL_SIG(NONZERO, NonzeroKernel)
AG_KERNEL_SIG(RANDOM, RandomKernel)
AG_KERNEL_SIG(AMP_UNSCALE, AmpUnscaleKernel)
AG_KERNEL_SIG(AMP_UPDATE_SCALE, AmpUpdateScaleKernel)
AG_KERNEL_SIG(SGD_STEP, SgdStepKernel)
AG_KERNEL_SIG(ADAM_STEP, AdamStepKernel)
AG_KERNEL_SIG(SORT, SortKernel)
AG_KERNEL_SIG(MULTINOMIAL, MultinomialKernel)
AG_KERNEL_SIG(SDPA, SdpaKernel)
AG_KERNEL_SIG(SDPA_BACKWARD, SdpaBackwardKernel)
AG_KERNEL_SIG(LOSS, LossKernel)
AG_KERNEL_SIG(LOSS_BACKWARD, LossBackwardKernel)
AG_KERNEL_SIG(DROPOUT, DropoutKernel)
AG_KERNEL_SIG(EMBEDDING, EmbeddingKernel)
AG_KERNEL_SIG(EMBEDDING_BACKWARD, EmbeddingBackwardKernel)
AG_KERNEL_SIG(CONV, ConvKernel)
AG_KERNEL_SIG(POOL, PoolKernel)
AG_KERNEL_SIG(NORM, NormKernel)
AG_KERNEL_SIG(NORM_BACKWARD, NormBackwardKernel)
AG_KERNEL_SIG(SOFTMAX_BACKWARD, SoftmaxBackwardKernel)
AG_KERNEL_SIG(NLL, NllKernel)
AG_KERNEL_SIG(NLL_BACKWARD, NllBackwardKernel)
AG_KERNEL_SIG(RNN_CELL, RnnCellKernel)
AG_KERNEL_SIG(RNN_CELL_BACKWARD, RnnCellBackwardKernel)
AG_KERNEL_SIG(SPATIAL, SpatialKernel)
AG_KERNEL_SIG(LINALG, LinalgKernel)
AG_KERNEL_SIG(SCAN_INDEX, ScanIndexKernel)
AG_KERNEL_SIG(CTC_FRACPOOL, CtcFracKernel)
#undef AG_KERNEL_SIG

template <typename Fn> struct KernelTable {
  static inline Fn slots[kNumOps][kNumDeviceTypes] = {};
};

bool has_kernel(Op op, DeviceType dev);  // for optional fast paths (kernel<F>() throws when absent)
[[noreturn]] void throw_no_kernel(Op op, DeviceType dev);
[[noreturn]] void throw_wrong_family(Op op, KernelFamily asked);

// Input shapes for the profiler: const tensors are inputs, mutable ones outputs (skipped).
namespace profiled {
using profiler_hooks::Shapes;
// An absent operand (sdpa without a mask, nll_loss without weights) is [], as torch records a None.
inline void note(Shapes& s, const Tensor& t) { s.push_back(t.defined() ? t.sizes() : Shape{}); }
inline void note(Shapes&, Tensor&) {}
inline void note(Shapes& s, const std::vector<Tensor>& v) { for (auto& t : v) note(s, t); }
inline void note(Shapes& s, const TensorIter& it) {
  if (it.operands) for (int i = 1; i < it.nops; ++i) s.push_back(it.operands[i]->sizes());
}
template <typename T> void note(Shapes&, const T&) {}

// The kernel watch's operands (Note [Watched kernels]).
using profiler_hooks::WatchOperands;
using profiler_hooks::WatchView;
inline WatchView view_of(const Tensor& t) {
  WatchView v{static_cast<const char*>(t.data_ptr()), t.dtype(), {}, {}};
  const int64_t isz = itemsize(t.dtype());
  for (int64_t d = 0; d < t.dim(); ++d) {
    v.shape.push_back(t.sizes()[d]);
    v.strides.push_back(t.strides()[d] * isz);
  }
  return v;
}
inline void watch_note(WatchOperands& w, const Tensor& t) { if (t.defined()) w.in.push_back(view_of(t)); }
inline void watch_note(WatchOperands& w, Tensor& t) { if (t.defined()) w.out.push_back(view_of(t)); }
inline void watch_note(WatchOperands& w, const std::vector<Tensor>& v) {
  for (auto& t : v) if (t.defined()) w.in.push_back(view_of(t));
}
inline void watch_note(WatchOperands& w, const TensorIter& it) {
  for (int i = 0; i < it.nops; ++i) {
    WatchView v{it.data[i], it.dtypes[i], {}, {}};
    for (size_t d = 0; d < it.shape.size(); ++d) {
      v.shape.push_back(it.shape[d]);
      v.strides.push_back(it.strides[d][i]);
    }
    (i == 0 ? w.out : w.in).push_back(std::move(v));
  }
}
template <typename T> void watch_note(WatchOperands&, const T&) {}

// Note [Profiled kernels]: while the profiler is on, kernel<F>() pushes the looked-up kernel on
// `pending` and returns the trampoline `call`, which records the op's scope and runs it.
template <typename F> struct Kernel;
template <typename R, typename... A> struct Kernel<R (*)(A...)> {
  struct Entry { Op op; R (*fn)(A...); bool cpu; };  // cpu: the watch may read the operands
  static inline thread_local std::vector<Entry> pending;
  static R call(A... a) {
    namespace hooks = profiler_hooks;
    AG_CHECK(!pending.empty(), "profiler: a profiled kernel was called without its lookup");
    auto [op, fn, cpu] = pending.back();
    pending.pop_back();
    hooks::KernelScope scope(op);
    if (scope.handle >= 0 && hooks::wants_shapes()) {
      Shapes s;
      (note(s, a), ...);
      hooks::set_shapes(scope.handle, op, std::move(s));
    }
    if (__builtin_expect(hooks::watching(), 0)) {
      WatchOperands w;
      (watch_note(w, a), ...);
      const int64_t token = hooks::watch_before(op, w, cpu);
      try {
        if constexpr (std::is_void_v<R>) {
          fn(std::forward<A>(a)...);
          hooks::watch_after(token, op, w, true);
        } else {
          R r = fn(std::forward<A>(a)...);
          if constexpr (std::is_same_v<R, Tensor>) {
            if (r.defined()) w.out.push_back(view_of(r));
          }
          hooks::watch_after(token, op, w, true);
          return r;
        }
      } catch (...) {
        hooks::watch_after(token, op, w, false);
        throw;
      }
    } else {
      return fn(std::forward<A>(a)...);
    }
  }
};
}  // namespace profiled

// The kernel of `op` on `dev`, typed by its family: kernel<ReduceKernel>(Op::sum, dev).
template <typename Fn> Fn kernel(Op op, Device dev) {
  if (__builtin_expect(op_family(op) != FamilyOf<Fn>::value, 0)) throw_wrong_family(op, FamilyOf<Fn>::value);
  Fn fn = KernelTable<Fn>::slots[static_cast<int>(op)][static_cast<int>(dev.type)];
  if (__builtin_expect(!fn, 0)) throw_no_kernel(op, dev.type);
  if (__builtin_expect(profiler_hooks::enabled() || profiler_hooks::watching(), 0)) {
    profiled::Kernel<Fn>::pending.push_back({op, fn, dev.type == DeviceType::CPU});
    return &profiled::Kernel<Fn>::call;
  }
  return fn;
}

template <KernelFamily F> struct KernelRegistrar {
  KernelRegistrar(Op op, DeviceType dev, typename KernelSig<F>::type fn) {
    KernelTable<typename KernelSig<F>::type>::slots[static_cast<int>(op)][static_cast<int>(dev)] = fn;
  }
};
// Registers FN as OP's kernel on DEV; FN must have the function type of OP's kernel family.
#define AG_REGISTER_KERNEL(OP, DEV, FN)                                                                     \
  static_assert(::ampgrad::op_family(::ampgrad::Op::OP) != ::ampgrad::KernelFamily::NONE,                  \
                "op " #OP " has no kernel family in ops/op_list.def");                                    \
  static ::ampgrad::KernelRegistrar<::ampgrad::op_family(::ampgrad::Op::OP)> AG_CONCAT(ag_reg_, __COUNTER__)( \
      ::ampgrad::Op::OP, ::ampgrad::DeviceType::DEV, FN)
#define AG_CONCAT_(a, b) a##b
#define AG_CONCAT(a, b) AG_CONCAT_(a, b)
}  // namespace ampgrad

namespace ampgrad {
// Raised when the CUDA caching allocator cannot get memory even after freeing its cache; Python
// sees ampgrad.cuda.OutOfMemoryError (a RuntimeError subclass, as torch.cuda.OutOfMemoryError).
struct OutOfMemoryError : std::runtime_error { using std::runtime_error::runtime_error; };
}  // namespace ampgrad

namespace ampgrad::cpu {
// The intra-op thread pool's size (OpenMP; 1 without it): torch.get_num_threads / set_num_threads.
int get_num_threads();
void set_num_threads(int n);
}  // namespace ampgrad::cpu

namespace ampgrad::cuda {
// The CUDA runtime API the bindings see: kernels/cuda/runtime.cpp, or kernels/cuda_stub.cpp
// (which raises "not compiled with CUDA enabled" for everything except the queries that can say 0).
int device_count();
int current_device();
void set_device(int device);
void synchronize(int device);  // -1: the current device
struct DeviceProperties {
  std::string name;
  int major = 0, minor = 0, multi_processor_count = 0, warp_size = 0;
  int64_t total_memory = 0, l2_cache_size = 0, shared_memory_per_block_optin = 0;
};
DeviceProperties get_device_properties(int device);
std::pair<int64_t, int64_t> mem_get_info(int device);  // (free, total) bytes
// Caching allocator statistics in bytes for one device (torch.cuda.memory_stats' "all" counters).
struct MemoryStats {
  int64_t allocated = 0, max_allocated = 0, reserved = 0, max_reserved = 0;
  int64_t num_alloc_retries = 0, num_ooms = 0, num_allocs = 0, num_frees = 0;
};
MemoryStats memory_stats(int device);
void reset_peak_memory_stats(int device);
void empty_cache();
// torch.backends.cuda.matmul.allow_tf32 (default False): fp32 GEMMs may use TF32 tensor cores.
void set_allow_tf32(bool allow);
bool allow_tf32();
// Events on the current stream (opaque handles); elapsed time in milliseconds.
intptr_t event_create(bool enable_timing);
void event_destroy(intptr_t ev);
void event_record(intptr_t ev);
void event_synchronize(intptr_t ev);
bool event_query(intptr_t ev);
float event_elapsed_ms(intptr_t start, intptr_t end);
intptr_t current_stream_handle(int device);
void stream_synchronize(intptr_t stream, int device);
// The per-device Philox generators of the random fills (Note [Philox streams] in
// kernels/common/philox.h); device -1 is the current device. Seeding resets the offset to 0.
void manual_seed(int device, uint64_t seed);
void manual_seed_all(uint64_t seed);
uint64_t initial_seed(int device);
std::pair<uint64_t, uint64_t> get_rng_state(int device);  // (seed, offset)
void set_rng_state(int device, uint64_t seed, uint64_t offset);
}  // namespace ampgrad::cuda
