// convolution: torch's aten::convolution (conv1d/2d/3d and conv_transpose1d/2d/3d; F.* parse their
// arguments in python/ampgrad/nn/functional.py) on one kernel (Note [Convolution kernels]), and
// convolution_backward, itself differentiable (ConvolutionBackwardBackward0), so any order works.
#include "ops/internal.h"

namespace ampgrad {

namespace {
struct ConvParams {
  IntList stride, padding, dilation, output_padding;
  bool transposed;
  int64_t groups;
};

std::string sizes_str(const Shape& s, const char* sep) {
  std::string r;
  for (size_t i = 0; i < s.size(); ++i) r += (i ? sep : "") + std::to_string(s[i]);
  return r;
}

// The kernel's geometry from the input, output and weight shapes (Note [Convolution kernels]): a
// transposed convolution's output is the kernel's x, its input the kernel's y.
ConvArgs conv_args(const Shape& in, const Shape& out, const Shape& w, const ConvParams& p) {
  const Shape& xs = p.transposed ? out : in;
  const Shape& ys = p.transposed ? in : out;
  const int nd = static_cast<int>(w.size()) - 2;
  ConvArgs g{};
  g.N = xs[0];
  g.C = xs[1];
  g.O = ys[1];
  g.G = p.groups;
  for (int d = 0; d < 3; ++d) {
    const int s = d - (3 - nd);  // the spatial dim this one stands for, or < 0: a leading size-1 dim
    g.in[d] = s < 0 ? 1 : xs[2 + s];
    g.out[d] = s < 0 ? 1 : ys[2 + s];
    g.k[d] = s < 0 ? 1 : w[2 + s];
    g.stride[d] = s < 0 ? 1 : p.stride[s];
    g.pad[d] = s < 0 ? 0 : p.padding[s];
    g.dil[d] = s < 0 ? 1 : p.dilation[s];
  }
  return g;
}

Tensor run_conv(ConvMode mode, const Tensor& a, const Tensor& b, const Tensor* bias, const Shape& out_shape, const ConvArgs& g) {
  autograd::AutoGradMode off(false);
  Tensor out = empty(out_shape, a.dtype(), a.device());
  Tensor ac = contiguous(detach(a)), bc = contiguous(detach(b)), biasc;
  if (bias) biasc = contiguous(detach(*bias));
  kernel<ConvKernel>(Op::convolution, a.device())(mode, ac, bc, bias ? &biasc : nullptr, out, g);
  return out;
}

// A per-channel vector [C] shaped to broadcast over [N, C, spatial...] and expanded to `shape`.
Tensor channel_broadcast(const Tensor& v, const Shape& shape) {
  IntList s(shape.size(), 1);
  s[1] = shape[1];
  return expand(reshape(v, s), shape);
}

Tensor convolution_impl(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvParams& p);
std::vector<Tensor> convolution_backward_impl(const Tensor& gy, const Tensor& x, const Tensor& w, const ConvParams& p,
                                              std::array<bool, 3> mask);

Shape conv_output_shape(const Tensor& input, const Tensor& weight, const ConvParams& p) {
  const int64_t nd = weight.dim() - 2;
  Shape out{input.sizes()[0], p.transposed ? weight.sizes()[1] * p.groups : weight.sizes()[0]};
  for (int64_t d = 0; d < nd; ++d) {
    const int64_t in = input.sizes()[2 + d], k = weight.sizes()[2 + d];
    out.push_back(p.transposed ? (in - 1) * p.stride[d] - 2 * p.padding[d] + p.dilation[d] * (k - 1) + p.output_padding[d] + 1
                               : (in + 2 * p.padding[d] - p.dilation[d] * (k - 1) - 1) / p.stride[d] + 1);
  }
  return out;
}

void check_conv(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvParams& p) {
  const int64_t k = weight.dim();
  AG_CHECK(k >= 3 && k <= 5, "convolution: expected a 3-, 4- or 5-dimensional weight, but got weight of size [",
           sizes_str(weight.sizes(), ", "), "]");
  const size_t nd = static_cast<size_t>(k - 2);
  AG_CHECK(input.dim() == k, "Expected ", k, "-dimensional input for ", k, "-dimensional weight [", sizes_str(weight.sizes(), ", "),
           "], but got ", input.dim(), "-dimensional input of size [", sizes_str(input.sizes(), ", "), "] instead");
  auto expand_list = [&](const IntList& v, const char* name) {
    AG_CHECK(v.size() == nd || v.size() == 1, "expected ", name, " to be a single integer value or a list of ", nd,
             " values to match the convolution dimensions, but got ", name, "=[", sizes_str(v, ", "), "]");
  };
  expand_list(p.stride, "stride");
  expand_list(p.padding, "padding");
  expand_list(p.dilation, "dilation");
  if (p.transposed) expand_list(p.output_padding, "output_padding");
  check_same_device(input, weight, "convolution");
  AG_CHECK(input.dtype() == weight.dtype(), "Input type (", cpp_type_name(input.dtype()), ") and weight type (",
           cpp_type_name(weight.dtype()), ") should be the same");
  if (bias.defined())
    AG_CHECK(bias.dtype() == input.dtype(), "Input type (", cpp_type_name(input.dtype()), ") and bias type (",
             cpp_type_name(bias.dtype()), ") should be the same");
  // Integer convolution takes torch's CPU slow paths: slow_conv2d / compute_columns3d (every integer
  // dtype), slow_conv_dilated and slow_conv_transpose (int64 only).
  bool dilated = false;
  for (auto d : p.dilation) dilated |= d != 1;
  const bool int64_only = p.transposed || dilated;
  const bool ok_dtype = is_floating(input.dtype()) ||
                        (input.device().is_cpu() && input.dtype() != ScalarType::Bool &&
                         (!int64_only || input.dtype() == ScalarType::Int64));
  AG_CHECK_NOT_IMPL(ok_dtype, "\"",
                    p.transposed ? (nd == 3 ? "slow_conv_transpose3d_out_cpu" : "slow_conv_transpose2d_out_cpu")
                    : dilated    ? "slow_conv_dilated<>"
                                 : (nd == 3 ? "compute_columns3d" : "slow_conv2d_cpu"),
                    "\" not implemented for '", scalar_type_name(input.dtype()), "'");
  for (auto s : p.stride) AG_CHECK(s > 0, "non-positive stride is not supported");
  for (auto s : p.padding) AG_CHECK(s >= 0, "negative padding is not supported");
  for (auto s : p.output_padding) AG_CHECK(s >= 0, "negative output_padding is not supported");
  for (auto s : p.dilation) AG_CHECK(s > 0, "dilation should be greater than zero");
  AG_CHECK(p.groups > 0, "non-positive groups is not supported");
  const auto& ws = weight.sizes();
  const int64_t C = input.sizes()[1];
  if (!p.transposed) {
    AG_CHECK(C == ws[1] * p.groups, "Given groups=", p.groups, ", weight of size [", sizes_str(ws, ", "), "], expected input[",
             sizes_str(input.sizes(), ", "), "] to have ", ws[1] * p.groups, " channels, but got ", C, " channels instead");
    AG_CHECK(ws[0] % p.groups == 0, "Given groups=", p.groups, ", expected weight to be divisible by ", p.groups,
             " at dimension 0, but got weight of size [", sizes_str(ws, ", "), "] instead");
    AG_CHECK(!bias.defined() || (bias.dim() == 1 && bias.sizes()[0] == ws[0]), "Given weight of size [", sizes_str(ws, ", "),
             "], expected bias to be 1-dimensional with ", ws[0], " elements, but got bias of size [",
             bias.defined() ? sizes_str(bias.sizes(), ", ") : "", "] instead");
    Shape padded, kernel;
    for (size_t d = 0; d < nd; ++d) {
      padded.push_back(input.sizes()[2 + d] + 2 * p.padding[d]);
      kernel.push_back(p.dilation[d] * (ws[2 + d] - 1) + 1);
    }
    bool fits = true;
    for (size_t d = 0; d < nd; ++d) fits &= padded[d] >= kernel[d];
    AG_CHECK(fits, "Calculated padded input size per channel: (", sizes_str(padded, " x "), "). Kernel size: (",
             sizes_str(kernel, " x "), "). Kernel size can't be greater than actual input size");
  } else {
    AG_CHECK(C == ws[0] && C % p.groups == 0, "Given transposed=1, weight of size [", sizes_str(ws, ", "), "], expected input[",
             sizes_str(input.sizes(), ", "), "] to have ", ws[0], " channels, but got ", C, " channels instead");
    AG_CHECK(!bias.defined() || (bias.dim() == 1 && bias.sizes()[0] == ws[1] * p.groups), "Given transposed=1, weight of size [",
             sizes_str(ws, ", "), "], expected bias to be 1-dimensional with ", ws[1] * p.groups, " elements, but got bias of size [",
             bias.defined() ? sizes_str(bias.sizes(), ", ") : "", "] instead");
    for (size_t d = 0; d < nd; ++d)
      AG_CHECK(p.output_padding[d] < p.stride[d] || p.output_padding[d] < p.dilation[d],
               "output padding must be smaller than either stride or dilation, but got output_padding: ", p.output_padding[d],
               " stride: ", p.stride[d], " dilation: ", p.dilation[d]);
    Shape out = conv_output_shape(input, weight, p);
    bool ok = true;
    for (size_t d = 0; d < nd; ++d) ok &= out[2 + d] > 0;
    AG_CHECK(ok, "Given input size per channel: (", sizes_str(Shape(input.sizes().begin() + 2, input.sizes().end()), " x "),
             "). Calculated output size per channel: (", sizes_str(Shape(out.begin() + 2, out.end()), " x "), "). Output size is too small");
  }
}

Tensor convolution_impl(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvParams& p) {
  const Shape out_shape = conv_output_shape(input, weight, p);
  const ConvArgs g = conv_args(input.sizes(), out_shape, weight.sizes(), p);
  Tensor out = run_conv(p.transposed ? ConvMode::kBackwardData : ConvMode::kForward, input, weight,
                        bias.defined() ? &bias : nullptr, out_shape, g);
  // convolution is bilinear in (input, weight), affine in bias.
  fw_rule(out, {&input, &weight, &bias}, [&](const variable_list& t) {
    return sum_defined({t[0].defined() ? convolution_impl(t[0], weight, Tensor(), p) : Tensor(),
                        t[1].defined() ? convolution_impl(input, t[1], Tensor(), p) : Tensor(),
                        t[2].defined() ? channel_broadcast(t[2], out_shape) : Tensor()});
  });
  if (auto node = autograd::make_node("ConvolutionBackward0", {&input, &weight, &bias}, AG_BW {
        auto r = convolution_backward_impl(g[0], c.get(0), c.get(1), p,
                                           {c.needs_input_grad(0), c.needs_input_grad(1), c.needs_input_grad(2)});
        return {r[0], r[1], r[2]};
      })) {
    autograd::set_history(node, {&out});
    node->save(input);
    node->save(weight);
  }
  return out;
}

// (grad_input, grad_weight, grad_bias) of convolution at (x, w) for grad gy; mask picks which. The
// result is differentiable (ConvolutionBackwardBackward0): it is linear in gy, and grad_input is linear
// in w, grad_weight in x, so each second derivative is a convolution or a convolution_backward.
std::vector<Tensor> convolution_backward_impl(const Tensor& gy, const Tensor& x, const Tensor& w, const ConvParams& p,
                                              std::array<bool, 3> mask) {
  const ConvArgs a = conv_args(x.sizes(), gy.sizes(), w.sizes(), p);
  std::vector<Tensor> r(3);
  if (mask[0])
    r[0] = p.transposed ? run_conv(ConvMode::kForward, gy, w, nullptr, x.sizes(), a)
                        : run_conv(ConvMode::kBackwardData, gy, w, nullptr, x.sizes(), a);
  if (mask[1])
    r[1] = p.transposed ? run_conv(ConvMode::kBackwardWeight, gy, x, nullptr, w.sizes(), a)
                        : run_conv(ConvMode::kBackwardWeight, x, gy, nullptr, w.sizes(), a);
  if (mask[2]) {
    autograd::AutoGradMode off(false);
    IntList dims{0};
    for (int64_t d = 2; d < gy.dim(); ++d) dims.push_back(d);
    r[2] = sum(detach(gy), dims, false, std::nullopt);
  }
  // grad_input depends on (gy, w), grad_weight on (gy, x), grad_bias on gy.
  const Tensor* xin = mask[1] ? &x : nullptr;
  const Tensor* win = mask[0] ? &w : nullptr;
  if (!autograd::records({&gy, xin, win})) return r;
  std::vector<int> slot;  // output number -> which of (gx, gw, gb)
  std::vector<Tensor> outs;
  for (int i = 0; i < 3; ++i)
    if (r[i].defined()) { slot.push_back(i); outs.push_back(r[i]); }
  const Shape gshape = gy.sizes();
  if (auto node = autograd::make_node("ConvolutionBackwardBackward0", {&gy, xin, win}, AG_BW {
        Tensor gg[3];
        for (size_t k = 0; k < slot.size() && k < g.size(); ++k) gg[slot[k]] = g[k];
        Tensor gy_ = c.get(0), x_ = c.get(1), w_ = c.get(2);
        Tensor dgy, dx, dw;
        if (c.needs_input_grad(0))
          dgy = sum_defined({gg[0].defined() ? convolution_impl(gg[0], w_, Tensor(), p) : Tensor(),
                             gg[1].defined() ? convolution_impl(x_, gg[1], Tensor(), p) : Tensor(),
                             gg[2].defined() ? channel_broadcast(gg[2], gshape) : Tensor()});
        if (c.needs_input_grad(1) && gg[1].defined()) dx = convolution_backward_impl(gy_, x_, gg[1], p, {true, false, false})[0];
        if (c.needs_input_grad(2) && gg[0].defined()) dw = convolution_backward_impl(gy_, gg[0], w_, p, {false, true, false})[1];
        return {dgy, dx, dw};
      })) {
    autograd::set_history(node, outs);
    node->save(gy);
    node->save(x);
    node->save(w);
    for (size_t k = 0; k < slot.size(); ++k) r[slot[k]] = outs[k];
  }
  return r;
}

ConvParams make_params(const Tensor& weight, IntList stride, IntList padding, IntList dilation, bool transposed,
                       IntList output_padding, int64_t groups) {
  const size_t nd = weight.dim() >= 2 ? static_cast<size_t>(weight.dim() - 2) : 0;
  auto full = [nd](IntList v, int64_t dflt) {
    if (v.empty()) v.push_back(dflt);
    if (v.size() == 1 && nd > 1) v.assign(nd, v[0]);
    return v;
  };
  return {full(stride, 1), full(padding, 0), full(dilation, 1), full(output_padding, 0), transposed, groups};
}
}  // namespace

Tensor convolution(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias0, IntList stride,
                   IntList padding, IntList dilation, bool transposed, IntList output_padding, int64_t groups) {
  ConvParams p = make_params(weight, stride, padding, dilation, transposed, output_padding, groups);
  Tensor bias = bias0 ? *bias0 : Tensor();
  check_conv(input, weight, bias, p);
  if (!transposed) p.output_padding.assign(p.stride.size(), 0);  // (ignored, as torch)
  return convolution_impl(input, weight, bias, p);
}

std::vector<Tensor> convolution_backward(const Tensor& grad, const Tensor& input, const Tensor& weight, IntList stride,
                                         IntList padding, IntList dilation, bool transposed, IntList output_padding,
                                         int64_t groups, std::array<bool, 3> mask) {
  ConvParams p = make_params(weight, stride, padding, dilation, transposed, output_padding, groups);
  check_conv(input, weight, Tensor(), p);
  AG_CHECK(grad.sizes() == conv_output_shape(input, weight, p), "convolution_backward: grad_output of size [",
           sizes_str(grad.sizes(), ", "), "] does not match the convolution's output size [",
           sizes_str(conv_output_shape(input, weight, p), ", "), "]");
  return convolution_backward_impl(grad, input, weight, p, mask);
}

}  // namespace ampgrad
