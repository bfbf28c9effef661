// CPU elementwise kernels: the per-op functors of kernels/common/scalar_math.h (shared with the
// CUDA kernels), instantiated over dtypes by the dispatch macros; fp16/bf16 compute in fp32
// registers and round once on store.
#include <cmath>
#include "kernels/common/scalar_math.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/vec_math.h"

namespace ampgrad::cpu {

namespace {

// Binary loop with the scalar operand modes of ops/elementwise.cpp: s[1] = 0 (two tensors),
// 1 (b is the scalar s[0]), 2 (a is the scalar s[0]).
template <typename Out, typename T, typename F>
void binary_loop(TensorIter& it, const double* s, F f) {
  using A = acc_t<T>;
  if (it.nops == 3) { cpu_kernel2<Out, T>(it, f); return; }
  A v = static_cast<A>(s[0]);
  if (s[1] == 1) cpu_kernel<Out, T>(it, [&](A a) { return f(a, v); });
  else cpu_kernel<Out, T>(it, [&](A b) { return f(v, b); });
}

// ---- vectorized rows (Note [Vector math]): functors with a 16-lane float32 version. fp16/bf16
// operands are converted in chunks to float32, computed there and rounded once on store; a
// broadcast (stride 0) input is gathered into the chunk buffer. float64 and strided inner loops keep
// the scalar functor.
template <typename F> struct VecUnary { static constexpr bool ok = false; };
#define AG_VEC_UNARY(FN, EXPR)                                                      \
  template <> struct VecUnary<math::FN> {                                           \
    static constexpr bool ok = true;                                                \
    static vec::vf run([[maybe_unused]] const math::FN& f, vec::vf x) { return EXPR; } \
  };
AG_VEC_UNARY(Exp, vec::exp_acc(x))
AG_VEC_UNARY(Expm1, vec::expm1(x))
AG_VEC_UNARY(Log, vec::log(x))
AG_VEC_UNARY(Sin, vec::sin(x))
AG_VEC_UNARY(Cos, vec::cos(x))
AG_VEC_UNARY(Log1p, vec::log1p(x))
AG_VEC_UNARY(Tanh, vec::tanh(x))
AG_VEC_UNARY(Sigmoid, vec::sigmoid(x))
AG_VEC_UNARY(Erf, vec::erf(x))
AG_VEC_UNARY(Gelu, vec::gelu(x))
AG_VEC_UNARY(GeluTanh, vec::gelu_tanh(x))
AG_VEC_UNARY(Silu, vec::silu(x))
AG_VEC_UNARY(Softplus, vec::softplus(x, static_cast<float>(f.beta), static_cast<float>(f.threshold)))
AG_VEC_UNARY(Elu, vec::elu(x, static_cast<float>(f.alpha), static_cast<float>(f.scale), static_cast<float>(f.input_scale)))
AG_VEC_UNARY(LeakyRelu, vec::leaky_relu(x, static_cast<float>(f.slope)))
AG_VEC_UNARY(Hardsigmoid, vec::hardsigmoid(x))
AG_VEC_UNARY(Hardswish, vec::hardswish(x))
AG_VEC_UNARY(Mish, vec::mish(x))
AG_VEC_UNARY(LogSigmoid, vec::log_sigmoid(x))
#undef AG_VEC_UNARY

template <typename F> struct VecBinary { static constexpr bool ok = false; };
#define AG_VEC_BINARY(FN, EXPR)                                                              \
  template <> struct VecBinary<math::FN> {                                                   \
    static constexpr bool ok = true;                                                         \
    static vec::vf run([[maybe_unused]] const math::FN& f, vec::vf a, vec::vf b) { return EXPR; } \
  };
AG_VEC_BINARY(SigmoidBackward, vec::sigmoid_backward(a, b))
AG_VEC_BINARY(TanhBackward, vec::tanh_backward(a, b))
AG_VEC_BINARY(GeluBackward, vec::gelu_backward(a, b))
AG_VEC_BINARY(GeluTanhBackward, vec::gelu_tanh_backward(a, b))
AG_VEC_BINARY(SiluBackward, vec::silu_backward(a, b))
AG_VEC_BINARY(ErfBackward, vec::erf_backward(a, b))
AG_VEC_BINARY(SoftplusBackward, vec::softplus_backward(a, b, static_cast<float>(f.beta), static_cast<float>(f.threshold)))
AG_VEC_BINARY(EluBackward, vec::elu_backward(a, b, static_cast<float>(f.alpha), static_cast<float>(f.scale), static_cast<float>(f.input_scale)))
AG_VEC_BINARY(LeakyReluBackward, vec::leaky_relu_backward(a, b, static_cast<float>(f.slope)))
AG_VEC_BINARY(HardsigmoidBackward, vec::hardsigmoid_backward(a, b))
AG_VEC_BINARY(HardswishBackward, vec::hardswish_backward(a, b))
AG_VEC_BINARY(MishBackward, vec::mish_backward(a, b))
AG_VEC_BINARY(LogSigmoidBackward, vec::log_sigmoid_backward(a, b))
#undef AG_VEC_BINARY

constexpr int64_t kChunk = 256;

// Operand i of chunk [i0, i0 + m) as float32: the data itself when it is dense float32, else
// converted (and gathered) into buf.
template <typename T>
const float* chunk_in(char* p, int64_t s, int64_t i0, int64_t m, float* buf) {
  if constexpr (std::is_same_v<T, float>)
    if (s == sizeof(float)) return reinterpret_cast<const float*>(p) + i0;
  int64_t j0 = 0;
  if constexpr (std::is_same_v<T, BFloat16>)
    if (s == sizeof(T))
      for (; j0 + vec::kW <= m; j0 += vec::kW) vec::store(buf + j0, vec::load_bf16(reinterpret_cast<const uint16_t*>(p) + i0 + j0));
  for (int64_t j = j0; j < m; ++j) buf[j] = static_cast<float>(*reinterpret_cast<const T*>(p + (i0 + j) * s));
  return buf;
}

// out[j] = run(in[j]...) for j < m, whole vectors then a zero-padded tail.
template <int N, typename Run>
inline void vec_span(float* out, const float* const* in, int64_t m, Run run) {
  int64_t j = 0;
  for (; j + vec::kW <= m; j += vec::kW) {
    if constexpr (N == 1) vec::store(out + j, run(vec::load(in[0] + j)));
    else vec::store(out + j, run(vec::load(in[0] + j), vec::load(in[1] + j)));
  }
  if (j < m) {
    float t[N][vec::kW] = {}, r[vec::kW];
    for (int k = 0; k < N; ++k) std::memcpy(t[k], in[k] + j, (m - j) * sizeof(float));
    if constexpr (N == 1) vec::store(r, run(vec::load(t[0])));
    else vec::store(r, run(vec::load(t[0]), vec::load(t[1])));
    std::memcpy(out + j, r, (m - j) * sizeof(float));
  }
}

// Runs a vector functor of N inputs over the iterator; false when the dtype has no vector path.
template <int N, typename Run>
bool vec_loop(TensorIter& it, Run run) {
  auto go = [&](auto tag) {
    using T = decltype(tag);
    for_each(it, [&](char** p, const int64_t* s, int64_t n) {
      alignas(64) float bin[N][kChunk], bout[kChunk];
      int64_t start = 0;
      if constexpr (std::is_same_v<T, BFloat16>) {
        // dense bf16: widen, compute and round in registers, no float32 chunk buffers
        bool dense = s[0] == sizeof(T);
        for (int k = 1; k <= N; ++k) dense = dense && s[k] == sizeof(T);
        if (dense) {
          uint16_t* o = reinterpret_cast<uint16_t*>(p[0]);
          const uint16_t* a = reinterpret_cast<const uint16_t*>(p[1]);
          const uint16_t* b = reinterpret_cast<const uint16_t*>(p[N]);
          for (; start + vec::kW <= n; start += vec::kW) {
            if constexpr (N == 1) vec::store_bf16(o + start, run(vec::load_bf16(a + start)));
            else vec::store_bf16(o + start, run(vec::load_bf16(a + start), vec::load_bf16(b + start)));
          }
        }
      }
      for (int64_t i0 = start; i0 < n; i0 += kChunk) {
        const int64_t m = std::min(kChunk, n - i0);
        const float* in[N];
        for (int k = 0; k < N; ++k) in[k] = chunk_in<T>(p[k + 1], s[k + 1], i0, m, bin[k]);
        const bool dense = std::is_same_v<T, float> && s[0] == sizeof(float);
        float* out = dense ? reinterpret_cast<float*>(p[0]) + i0 : bout;
        vec_span<N>(out, in, m, run);
        if (!dense) {
          int64_t j0 = 0;
          if constexpr (std::is_same_v<T, BFloat16>)
            if (s[0] == sizeof(T))
              for (; j0 + vec::kW <= m; j0 += vec::kW)
                vec::store_bf16(reinterpret_cast<uint16_t*>(p[0]) + i0 + j0, vec::load(bout + j0));
          for (int64_t j = j0; j < m; ++j) *reinterpret_cast<T*>(p[0] + (i0 + j) * s[0]) = static_cast<T>(bout[j]);
        }
      }
    });
  };
  for (int k = 0; k <= N; ++k)
    if (it.dtype(k) != it.dtype(0)) return false;
  // Strided inner loops keep the scalar functor (a gather into the chunk buffer measured 2x slower).
  if (const int nd = static_cast<int>(it.shape.size()); nd > 0)
    for (int k = 0; k <= N; ++k) {
      const int64_t st = it.strides[nd - 1][k];
      if (st != itemsize(it.dtype(k)) && !(k > 0 && st == 0)) return false;
    }
  switch (it.dtype(0)) {
    case ScalarType::Float32: go(float{}); return true;
    case ScalarType::Float16: go(Half{}); return true;
    case ScalarType::BFloat16: go(BFloat16{}); return true;
    default: return false;
  }
}

template <typename F> bool try_vec_unary(TensorIter& it, const F& f) {
  if constexpr (VecUnary<F>::ok) return vec_loop<1>(it, [&](vec::vf x) { return VecUnary<F>::run(f, x); });
  else return false;
}
template <typename F> bool try_vec_binary(TensorIter& it, const F& f) {
  if constexpr (VecBinary<F>::ok) return vec_loop<2>(it, [&](vec::vf a, vec::vf b) { return VecBinary<F>::run(f, a, b); });
  else return false;
}

}  // namespace

#define AG_UNARY_K(OP, DISPATCH, FN)                                                          \
  static void k_##OP(TensorIter& it, const double* s) {                                      \
    const auto f = math::make_op<math::FN>(s);                                                \
    if (try_vec_unary(it, f)) return;                                                         \
    DISPATCH(it.dtype(1), #OP, [&] { cpu_kernel<scalar_t, scalar_t>(it, f); });                \
  }                                                                                           \
  AG_REGISTER_KERNEL(OP, CPU, k_##OP);


#define AG_PRED_K(OP, FN)                                                                     \
  static void k_##OP(TensorIter& it, const double*) {                                        \
    AG_DISPATCH_ALL_U(it.dtype(1), #OP, [&] { cpu_kernel<bool, scalar_t>(it, math::FN{}); }); \
  }                                                                                           \
  AG_REGISTER_KERNEL(OP, CPU, k_##OP);


static void k_bitwise_not(TensorIter& it, const double*) {
  AG_CHECK_NOT_IMPL(!is_floating(it.dtype(1)), "\"bitwise_not_cpu\" not implemented for '", scalar_type_name(it.dtype(1)), "'");
  AG_DISPATCH_ALL(it.dtype(1), "bitwise_not_cpu", [&] { cpu_kernel<scalar_t, scalar_t>(it, math::BitwiseNot{}); });
}
AG_REGISTER_KERNEL(bitwise_not, CPU, k_bitwise_not);

// n copies of the Size-byte value at src into dst, as plain integers of that size (a fill of a class
// type such as BFloat16 did not vectorize: bf16 sum backward was 1.7x torch's).
template <size_t Size> void fill_bits(char* dst, const char* src, int64_t n) {
  using U = std::conditional_t<Size == 1, uint8_t, std::conditional_t<Size == 2, uint16_t, std::conditional_t<Size == 4, uint32_t, uint64_t>>>;
  static_assert(sizeof(U) == Size, "fill_bits: unsupported element size");
  U v;
  std::memcpy(&v, src, Size);
  std::fill_n(reinterpret_cast<U*>(dst), n, v);
}

static void k_copy(TensorIter& it, const double*) {
  AG_DISPATCH_ALL_U(it.dtype(0), "copy_", [&] {
    using O = scalar_t;
    AG_DISPATCH_ALL_U(it.dtype(1), "copy_", [&] {
      if constexpr (std::is_same_v<O, scalar_t>) {
        for_each(it, [&](char** p, const int64_t* s, int64_t n) {
          if (s[0] == sizeof(O) && s[1] == sizeof(O)) std::memcpy(p[0], p[1], n * sizeof(O));
          else if (s[0] == sizeof(O) && s[1] == 0) fill_bits<sizeof(O)>(p[0], p[1], n);  // an expanded scalar (the gradient of a sum)
          else for (int64_t i = 0; i < n; ++i) *reinterpret_cast<O*>(p[0] + i * s[0]) = *reinterpret_cast<const O*>(p[1] + i * s[1]);
        });
      } else {
        cpu_kernel<O, scalar_t>(it, [](acc_t<scalar_t> x) {
          if constexpr (is_barebones_unsigned_v<O> && !std::is_integral_v<acc_t<scalar_t>>) return float_to_unsigned<O>(static_cast<double>(x));
          else return static_cast<acc_t<O>>(x);
        });
      }
    });
  });
}
AG_REGISTER_KERNEL(copy, CPU, k_copy);

static void k_fill(TensorIter& it, const double* s) {
  AG_DISPATCH_ALL_U(it.dtype(0), "fill_", [&] {
    scalar_t v;
    if constexpr (is_barebones_unsigned_v<scalar_t>) v = float_to_unsigned<scalar_t>(s[0]);
    else v = static_cast<scalar_t>(static_cast<acc_t<scalar_t>>(s[0]));
    for_each(it, [&](char** p, const int64_t* st, int64_t n) {
      for (int64_t i = 0; i < n; ++i) *reinterpret_cast<scalar_t*>(p[0] + i * st[0]) = v;
    });
  });
}
AG_REGISTER_KERNEL(fill, CPU, k_fill);

// arange / linspace write a contiguous 1-d output, so the element index is the byte offset.
static void k_arange(TensorIter& it, const double* s) {
  AG_DISPATCH_NUMERIC(it.dtype(0), "arange", [&] {
    scalar_t* base = reinterpret_cast<scalar_t*>(it.data[0]);
    const math::Arange<acc_t<scalar_t>> f{s[0], s[1]};
    for_each(it, [&](char** p, const int64_t*, int64_t n) {
      int64_t i0 = reinterpret_cast<scalar_t*>(p[0]) - base;
      for (int64_t i = 0; i < n; ++i) reinterpret_cast<scalar_t*>(p[0])[i] = static_cast<scalar_t>(f(i0 + i));
    });
  });
}
AG_REGISTER_KERNEL(arange, CPU, k_arange);

static void k_linspace(TensorIter& it, const double* s) {
  AG_DISPATCH_NUMERIC(it.dtype(0), "linspace", [&] {
    using St = std::conditional_t<std::is_integral_v<scalar_t>, double, acc_t<scalar_t>>;
    scalar_t* base = reinterpret_cast<scalar_t*>(it.data[0]);
    const int64_t steps = it.numel, half = static_cast<int64_t>(s[2]);
    const St start = static_cast<St>(static_cast<scalar_t>(static_cast<acc_t<scalar_t>>(s[0])));
    const St end = static_cast<St>(static_cast<scalar_t>(static_cast<acc_t<scalar_t>>(s[3])));
    const St step = steps > 1 ? (end - start) / static_cast<St>(steps - 1) : St(0);
    const math::Linspace<St> f{start, end, step, steps, half};
    for_each(it, [&](char** p, const int64_t*, int64_t n) {
      int64_t i0 = reinterpret_cast<scalar_t*>(p[0]) - base;
      for (int64_t i = 0; i < n; ++i) reinterpret_cast<scalar_t*>(p[0])[i] = static_cast<scalar_t>(f(i0 + i));
    });
  });
}
AG_REGISTER_KERNEL(linspace, CPU, k_linspace);

// ---- binary
#define AG_BINARY_K(OP, DISPATCH, OUT, FN)                                                    \
  static void k_##OP(TensorIter& it, const double* s) {                                      \
    const auto f = math::make_op<math::FN>(s);                                                \
    if (it.nops == 3 && try_vec_binary(it, f)) return;                                        \
    DISPATCH(it.dtype(1), #OP, [&] {                                                         \
      using Out = std::conditional_t<std::is_same_v<OUT, void>, scalar_t, OUT>;              \
      binary_loop<Out, scalar_t>(it, s, f);                                                   \
    });                                                                                       \
  }                                                                                           \
  AG_REGISTER_KERNEL(OP, CPU, k_##OP);


template <int Kind>
static void k_bitwise(TensorIter& it, const double* s) {
  static const char* names[] = {"bitwise_and_cpu", "bitwise_or_cpu", "bitwise_xor_cpu"};
  AG_CHECK_NOT_IMPL(!is_floating(it.dtype(1)), "\"", names[Kind], "\" not implemented for '", scalar_type_name(it.dtype(1)), "'");
  AG_DISPATCH_ALL_U(it.dtype(1), names[Kind], [&] { binary_loop<scalar_t, scalar_t>(it, s, math::Bitwise<Kind>{}); });
}
AG_REGISTER_KERNEL(bitwise_and, CPU, k_bitwise<0>);
AG_REGISTER_KERNEL(bitwise_or, CPU, k_bitwise<1>);
AG_REGISTER_KERNEL(bitwise_xor, CPU, k_bitwise<2>);

// ---- ternary
static void k_where(TensorIter& it, const double*) {
  AG_DISPATCH_ALL_U(it.dtype(0), "where", [&] {
    for_each(it, [&](char** p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<scalar_t*>(p[0] + i * s[0]) = *reinterpret_cast<const bool*>(p[1] + i * s[1])
            ? *reinterpret_cast<const scalar_t*>(p[2] + i * s[2]) : *reinterpret_cast<const scalar_t*>(p[3] + i * s[3]);
    });
  });
}
AG_REGISTER_KERNEL(where, CPU, k_where);

#define AG_TERNARY_K(OP, DISPATCH, FN)                                                        \
  static void k_##OP(TensorIter& it, const double* s) {                                      \
    const auto f = math::make_op<math::FN>(s);                                                \
    DISPATCH(it.dtype(0), #OP, [&] { cpu_kernel3<scalar_t, scalar_t>(it, f); });               \
  }                                                                                           \
  AG_REGISTER_KERNEL(OP, CPU, k_##OP);

// One kernel per elementwise row of the op table (Note [Op table]).
#define AG_UNARY(name, cuda, cpu, dispatch, functor, api) AG_UNARY_K(name, AG_DISPATCH_##dispatch, functor)
#define AG_PRED(name, cuda, cpu, functor) AG_PRED_K(name, functor)
#define AG_BINARY(name, cuda, cpu, dispatch, out, functor, api) AG_BINARY_K(name, AG_DISPATCH_##dispatch, out, functor)
#define AG_TERNARY(name, cuda, cpu, dispatch, functor) AG_TERNARY_K(name, AG_DISPATCH_##dispatch, functor)
#define AG_OP(name, cuda, cpu, family)
#include "ops/op_list.def"

}  // namespace ampgrad::cpu
