// The front ends: argument checks, shape and dtype inference, the autocast hook, the kernel call
// and the autograd record. Every public op of the engine is declared here, by family.
#pragma once
#include <array>
#include <optional>
#include <vector>
#include "autograd/autograd_meta.h"  // the inline Tensor::requires_grad() & co. (Note [Autograd meta])
#include "autograd/inplace.h"
#include "core/promotion.h"
#include "core/tensor.h"
#include "ops/op_list.h"

namespace ampgrad {

// A Python number: bool, int or float. Wrapped into a 0-dim "wrapped number" tensor when it
// meets a tensor, so it promotes as a weak type (Note [Type promotion]).
struct Scalar {
  enum Kind : int8_t { Bool, Int, Float } kind = Int;
  double d = 0;
  int64_t i = 0;
  Scalar() = default;
  Scalar(double v) : kind(Float), d(v), i(static_cast<int64_t>(v)) {}
  Scalar(int64_t v) : kind(Int), d(static_cast<double>(v)), i(v) {}
  Scalar(int v) : Scalar(static_cast<int64_t>(v)) {}
  Scalar(bool v) : kind(Bool), d(v), i(v) {}
  double to_double() const { return kind == Float ? d : static_cast<double>(i); }
  ScalarType dtype() const { return kind == Float ? ScalarType::Float64 : kind == Int ? ScalarType::Int64 : ScalarType::Bool; }
};
using IntList = std::vector<int64_t>;
using OptDims = std::optional<IntList>;  // nullopt: all dims

// ---- scalars and broadcasting (promotion itself: core/promotion.h, Note [Type promotion])
Tensor scalar_tensor(Scalar s, ScalarType dtype, Device device = Device());
// torch's checked Scalar conversion: a number an op stores in a tensor of `dtype` (fill value,
// clamp bound, alpha) must fit it; inf/nan are fine for floating types, negatives wrap for uint8.
void check_scalar_fits(Scalar s, ScalarType dtype);
Tensor wrap_scalar(Scalar s);  // 0-dim, wrapped_number=true, dtype float64/int64/bool
Tensor expand(const Tensor& t, const Shape& sizes);
Tensor sum_to(const Tensor& t, const Shape& shape);  // reduce a broadcast gradient

// ---- casts and copies
Tensor to_dtype(const Tensor& t, ScalarType dtype, bool copy = false);
Tensor to_device(const Tensor& t, Device device, bool copy = false);
Tensor contiguous(const Tensor& t);
Tensor clone(const Tensor& t);
Tensor& copy_(Tensor& self, const Tensor& src);

// ---- elementwise unary
// The plain unary ops: one declaration pair per GEN row of the op table (Note [Op table]).
#define AG_UNARY(name, cuda, cpu, dispatch, functor, api) AG_IF_GENERATED(api, Tensor name(const Tensor& a); Tensor& name##_(Tensor& a);)
#define AG_OP(name, cuda, cpu, family)
#include "ops/op_list.def"
Tensor logical_not(const Tensor& a); Tensor& logical_not_(Tensor& a);
Tensor bitwise_not(const Tensor& a); Tensor& bitwise_not_(Tensor& a);
Tensor round(const Tensor& a, int64_t decimals = 0);
Tensor gelu(const Tensor& a, const std::string& approximate = "none");
Tensor softplus(const Tensor& a, double beta = 1.0, double threshold = 20.0);
// torch.nn.functional's parametrized activations (ops/unary.cpp): one kernel each way, float only.
Tensor elu(const Tensor& a, double alpha = 1.0, double scale = 1.0, double input_scale = 1.0);
Tensor celu(const Tensor& a, double alpha = 1.0);
Tensor selu(const Tensor& a);
Tensor leaky_relu(const Tensor& a, double negative_slope = 0.01);
Tensor hardsigmoid(const Tensor& a);
Tensor hardswish(const Tensor& a);
Tensor mish(const Tensor& a);
Tensor log_sigmoid(const Tensor& a);
Tensor& elu_(Tensor& a, double alpha = 1.0, double scale = 1.0, double input_scale = 1.0);
Tensor& celu_(Tensor& a, double alpha = 1.0);
Tensor& selu_(Tensor& a);
Tensor& leaky_relu_(Tensor& a, double negative_slope = 0.01);
Tensor& hardsigmoid_(Tensor& a);
Tensor& hardswish_(Tensor& a);
Tensor& mish_(Tensor& a);
Tensor clamp(const Tensor& a, std::optional<Scalar> min, std::optional<Scalar> max);
Tensor clamp(const Tensor& a, const std::optional<Tensor>& min, const std::optional<Tensor>& max);
Tensor nan_to_num(const Tensor& a, std::optional<double> nan, std::optional<double> posinf, std::optional<double> neginf);
Tensor isnan(const Tensor& a);
Tensor isinf(const Tensor& a);
Tensor isfinite(const Tensor& a);

// ---- elementwise binary
Tensor add(const Tensor& a, const Tensor& b, Scalar alpha = Scalar(int64_t(1)));
Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha = Scalar(int64_t(1)));
Tensor div(const Tensor& a, const Tensor& b, const std::string& rounding_mode = "");
Tensor pow(const Tensor& a, const Tensor& b);
// The plain binary ops: one declaration per generated row of the op table (Note [Op table]).
#define AG_BINARY(name, cuda, cpu, dispatch, out, functor, api) AG_IF_GENERATED(api, Tensor name(const Tensor& a, const Tensor& b);)
#define AG_OP(name, cuda, cpu, family)
#include "ops/op_list.def"
Tensor compare(Op op, const Tensor& a, const Tensor& b);  // eq ne lt le gt ge
Tensor logical(Op op, const Tensor& a, const Tensor& b);  // logical_and/or/xor
Tensor bitwise(Op op, const Tensor& a, const Tensor& b);  // bitwise_and/or/xor
// In place: self op= other, with torch's cast rule (result must be castable to self's dtype).
Tensor& binary_(Op op, Tensor& self, const Tensor& other, Scalar alpha = Scalar(int64_t(1)), const std::string& rounding_mode = "");

// ---- elementwise ternary
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor lerp(const Tensor& a, const Tensor& b, const Tensor& weight);
Tensor addcmul(const Tensor& self, const Tensor& t1, const Tensor& t2, Scalar value = Scalar(int64_t(1)));
Tensor addcdiv(const Tensor& self, const Tensor& t1, const Tensor& t2, Scalar value = Scalar(int64_t(1)));

// ---- reductions and scans
Tensor sum(const Tensor& a, OptDims dims, bool keepdim, std::optional<ScalarType> dtype);
Tensor mean(const Tensor& a, OptDims dims, bool keepdim, std::optional<ScalarType> dtype);
Tensor prod(const Tensor& a, std::optional<int64_t> dim, bool keepdim, std::optional<ScalarType> dtype);
// Sorting and order statistics (ops/sort.cpp).
std::pair<Tensor, Tensor> sort(const Tensor& a, int64_t dim, bool descending, bool stable);
Tensor argsort(const Tensor& a, int64_t dim, bool descending, bool stable);
std::pair<Tensor, Tensor> topk(const Tensor& a, int64_t k, int64_t dim, bool largest, bool sorted);
std::pair<Tensor, Tensor> kthvalue(const Tensor& a, int64_t k, int64_t dim, bool keepdim);
std::pair<Tensor, Tensor> median_dim(const Tensor& a, int64_t dim, bool keepdim, bool ignore_nan);
Tensor median_all(const Tensor& a, bool ignore_nan);
std::pair<Tensor, Tensor> max_dim(const Tensor& a, int64_t dim, bool keepdim);
std::pair<Tensor, Tensor> min_dim(const Tensor& a, int64_t dim, bool keepdim);
Tensor max_all(const Tensor& a);
Tensor min_all(const Tensor& a);
Tensor amax(const Tensor& a, OptDims dims, bool keepdim);
Tensor amin(const Tensor& a, OptDims dims, bool keepdim);
Tensor argmax(const Tensor& a, std::optional<int64_t> dim, bool keepdim);
Tensor argmin(const Tensor& a, std::optional<int64_t> dim, bool keepdim);
Tensor var(const Tensor& a, OptDims dims, double correction, bool keepdim);
Tensor std(const Tensor& a, OptDims dims, double correction, bool keepdim);
Tensor norm(const Tensor& a, double p, OptDims dims, bool keepdim, std::optional<ScalarType> dtype);
Tensor logsumexp(const Tensor& a, IntList dims, bool keepdim);
Tensor cumsum(const Tensor& a, int64_t dim, std::optional<ScalarType> dtype);
Tensor cumprod(const Tensor& a, int64_t dim, std::optional<ScalarType> dtype);
Tensor all(const Tensor& a, OptDims dims, bool keepdim);
Tensor any(const Tensor& a, OptDims dims, bool keepdim);
Tensor softmax(const Tensor& a, int64_t dim, std::optional<ScalarType> dtype);
Tensor log_softmax(const Tensor& a, int64_t dim, std::optional<ScalarType> dtype);

// ---- linear algebra
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor mm(const Tensor& a, const Tensor& b);
Tensor bmm(const Tensor& a, const Tensor& b);
Tensor mv(const Tensor& a, const Tensor& v);
Tensor dot(const Tensor& a, const Tensor& b);
Tensor inner(const Tensor& a, const Tensor& b);  // contracts the last dims: a.shape[:-1] + b.shape[:-1]
Tensor outer(const Tensor& a, const Tensor& b);
Tensor addmm(const Tensor& self, const Tensor& a, const Tensor& b, Scalar beta = Scalar(int64_t(1)), Scalar alpha = Scalar(int64_t(1)));
Tensor addmv(const Tensor& self, const Tensor& a, const Tensor& v, Scalar beta = Scalar(int64_t(1)), Scalar alpha = Scalar(int64_t(1)));
Tensor addr(const Tensor& self, const Tensor& a, const Tensor& b, Scalar beta = Scalar(int64_t(1)), Scalar alpha = Scalar(int64_t(1)));
Tensor addbmm(const Tensor& self, const Tensor& a, const Tensor& b, Scalar beta = Scalar(int64_t(1)), Scalar alpha = Scalar(int64_t(1)));
Tensor baddbmm(const Tensor& self, const Tensor& a, const Tensor& b, Scalar beta = Scalar(int64_t(1)), Scalar alpha = Scalar(int64_t(1)));
Tensor linear(const Tensor& x, const Tensor& w, const std::optional<Tensor>& bias);
Tensor addmm_activation(const Tensor& self, const Tensor& a, const Tensor& b, Scalar beta, Scalar alpha, bool use_gelu);

// ---- views (share storage and version counter; autograd records a view node)
Tensor view(const Tensor& a, IntList sizes);
Tensor reshape(const Tensor& a, IntList sizes);
Tensor as_strided(const Tensor& a, IntList sizes, IntList strides, std::optional<int64_t> offset);
Tensor transpose(const Tensor& a, int64_t d0, int64_t d1);
Tensor matrix_t(const Tensor& a);  // Tensor.t(): TBackward0
Tensor permute(const Tensor& a, IntList dims);
Tensor expand_op(const Tensor& a, IntList sizes);  // torch's expand: -1 keeps a size
Tensor squeeze(const Tensor& a, OptDims dims);
Tensor unsqueeze(const Tensor& a, int64_t dim);
Tensor flatten(const Tensor& a, int64_t start, int64_t end);
Tensor unflatten(const Tensor& a, int64_t dim, IntList sizes);
Tensor narrow(const Tensor& a, int64_t dim, int64_t start, int64_t length);
Tensor select(const Tensor& a, int64_t dim, int64_t index);
Tensor slice(const Tensor& a, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step);
Tensor diagonal(const Tensor& a, int64_t offset, int64_t d0, int64_t d1);
std::vector<Tensor> split(const Tensor& a, int64_t size, int64_t dim);
std::vector<Tensor> split_with_sizes(const Tensor& a, IntList sizes, int64_t dim);
std::vector<Tensor> unbind(const Tensor& a, int64_t dim);
Tensor alias(const Tensor& a);
Tensor view_dtype(const Tensor& a, ScalarType dt);  // Tensor.view(dtype)

// ---- shape and indexing (copies)
Tensor cat(const std::vector<Tensor>& ts, int64_t dim);
Tensor stack(const std::vector<Tensor>& ts, int64_t dim);
Tensor gather(const Tensor& a, int64_t dim, const Tensor& index);
Tensor scatter(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce = "");
Tensor scatter_add(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& src);
Tensor index_select(const Tensor& a, int64_t dim, const Tensor& index);
Tensor index_add(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& src, Scalar alpha = Scalar(int64_t(1)));
Tensor index_copy(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& src);
Tensor index(const Tensor& a, const std::vector<std::optional<Tensor>>& indices);  // advanced indexing
Tensor index_put(const Tensor& a, const std::vector<std::optional<Tensor>>& indices, const Tensor& values, bool accumulate);
// Writes into self's memory through its strides (no autograd): through an expanded self every alias
// sees the write, as with torch's index_put_.
void index_put_into(Tensor& self, const std::vector<std::optional<Tensor>>& indices, const Tensor& values, bool accumulate);
Tensor masked_fill(const Tensor& a, const Tensor& mask, const Tensor& value);
Tensor masked_select(const Tensor& a, const Tensor& mask);
Tensor nonzero(const Tensor& a);
Tensor tril(const Tensor& a, int64_t k);
Tensor triu(const Tensor& a, int64_t k);
Tensor flip(const Tensor& a, IntList dims);
Tensor roll(const Tensor& a, IntList shifts, IntList dims);
Tensor repeat(const Tensor& a, IntList repeats);

// ---- convolution and pooling (ops/conv.cpp, ops/pool.cpp)
// torch's aten::convolution: input [N, C, spatial...] (1 to 3 spatial dims), weight [O, C/groups, k...]
// (transposed: [C, O/groups, k...]); stride / padding / dilation / output_padding: one value or one per dim.
Tensor convolution(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntList stride,
                   IntList padding, IntList dilation, bool transposed, IntList output_padding, int64_t groups);
// (grad_input, grad_weight, grad_bias) for the mask's true entries; differentiable.
std::vector<Tensor> convolution_backward(const Tensor& grad, const Tensor& input, const Tensor& weight, IntList stride,
                                         IntList padding, IntList dilation, bool transposed, IntList output_padding,
                                         int64_t groups, std::array<bool, 3> mask);
// Pooling over the last k.size() (2 or 3) dims of a batched or unbatched input; stride empty = kernel.
std::pair<Tensor, Tensor> max_pool_with_indices(const Tensor& x, IntList kernel, IntList stride, IntList padding,
                                                IntList dilation, bool ceil_mode);
Tensor avg_pool(const Tensor& x, IntList kernel, IntList stride, IntList padding, bool ceil_mode, bool count_include_pad,
                std::optional<int64_t> divisor_override);
Tensor adaptive_avg_pool(const Tensor& x, IntList output_size);
std::pair<Tensor, Tensor> adaptive_max_pool(const Tensor& x, IntList output_size);

// ---- creation and random
Tensor full(const Shape& sizes, Scalar value, ScalarType dtype, Device device = Device());
Tensor arange(double start, double end, double step, ScalarType dtype, Device device = Device());
Tensor linspace(double start, double end, int64_t steps, ScalarType dtype, Device device = Device());
Tensor eye(int64_t n, int64_t m, ScalarType dtype, Device device = Device());
void manual_seed(uint64_t seed);
uint64_t initial_seed();
Tensor& uniform_(Tensor& t, double from, double to);
Tensor& exponential_(Tensor& t, double lambd);
Tensor& cauchy_(Tensor& t, double median, double sigma);
Tensor& log_normal_(Tensor& t, double mean, double std);
Tensor& geometric_(Tensor& t, double p);
Tensor multinomial(const Tensor& p, int64_t n, bool replacement);
Tensor& normal_(Tensor& t, double mean, double std);
Tensor& fill_(Tensor& t, Scalar value);
Tensor& fill_(Tensor& t, Scalar value, const char* node_name);
Tensor& zero_(Tensor& t);
Tensor& fill_(Tensor& t, const Tensor& value);
Tensor randint(int64_t low, int64_t high, const Shape& sizes, ScalarType dtype, Device device = Device());
Tensor randperm(int64_t n, ScalarType dtype, Device device = Device());

// ---- fused nn ops (ops/attention.cpp, ops/nn_misc.cpp)
// torch's fused CPU attention; nullopt where torch takes the math path (composed in Python then).
std::optional<Tensor> sdpa_flash(const Tensor& q, const Tensor& k, const Tensor& v, const std::optional<Tensor>& mask,
                                 double dropout_p, bool is_causal, std::optional<double> scale, bool enable_gqa);
// kind: LossKind (kernels/kernels.h); reduction 0 none, 1 mean, 2 sum.
Tensor fused_loss(int64_t kind, const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& pos_weight, int64_t reduction, double beta);
Tensor dropout_mask(const Shape& shape, ScalarType dtype, Device device, double p);
Tensor fused_dropout(const Tensor& input, double p);
Tensor fused_embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool scale_grad_by_freq);
// ---- fused nn ops (ops/norm.cpp, ops/loss.cpp; Note [Fused norms])
Tensor layer_norm(const Tensor& x, IntList normalized_shape, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias, double eps);
Tensor rms_norm(const Tensor& x, IntList normalized_shape, const std::optional<Tensor>& weight, std::optional<double> eps);
Tensor group_norm(const Tensor& x, int64_t num_groups, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias, double eps);
// Updates running_mean / running_var in place in training mode.
Tensor batch_norm(const Tensor& x, const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
                  const std::optional<Tensor>& weight, const std::optional<Tensor>& bias, bool training, double momentum, double eps);
Tensor nll_loss(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight, const std::string& reduction,
                int64_t ignore_index);
// The gradient of softmax / log_softmax output y along dim d (wrapped) for the output gradient g.
Tensor softmax_backward_data(const Tensor& g, const Tensor& y, int64_t d, bool is_log);

// ---- optimizer steps: in place over lists, no autograd (Note [Fused optimizer steps]).
// Returns the momentum buffers, creating the missing (undefined) ones when momentum != 0.
std::vector<Tensor> sgd_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                             const std::vector<Tensor>& momentum_buffers, double lr, double momentum, double dampening,
                             bool nesterov, double weight_decay, bool maximize, const std::optional<Tensor>& grad_scale,
                             const std::optional<Tensor>& found_inf);
void adam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& exp_avgs,
               const std::vector<Tensor>& exp_avg_sqs, const std::vector<Tensor>& max_exp_avg_sqs,
               const std::vector<Tensor>& state_steps, double lr, double beta1, double beta2, double eps,
               double weight_decay, bool decoupled, bool amsgrad, bool maximize, const std::optional<Tensor>& grad_scale,
               const std::optional<Tensor>& found_inf);

}  // namespace ampgrad

// Operators for writing backward formulas in one line (tinygrad style): g * y, 1.0 - y * y, ...
namespace ampgrad {
inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator-(const Tensor& a) { return neg(a); }
inline Tensor operator+(const Tensor& a, double s) { return add(a, wrap_scalar(s)); }
inline Tensor operator-(const Tensor& a, double s) { return sub(a, wrap_scalar(s)); }
inline Tensor operator*(const Tensor& a, double s) { return mul(a, wrap_scalar(s)); }
inline Tensor operator/(const Tensor& a, double s) { return div(a, wrap_scalar(s)); }
inline Tensor operator+(double s, const Tensor& a) { return add(a, wrap_scalar(s)); }
inline Tensor operator-(double s, const Tensor& a) { return sub(wrap_scalar(s), a); }
inline Tensor operator*(double s, const Tensor& a) { return mul(a, wrap_scalar(s)); }
inline Tensor operator/(double s, const Tensor& a) { return div(wrap_scalar(s), a); }
Tensor zeros_like(const Tensor& a);
Tensor ones_like(const Tensor& a);
double item_double(const Tensor& t);
}  // namespace ampgrad
