// Pooling front ends: max_pool2d/3d (with indices), avg_pool2d/3d, adaptive_avg_pool2d/3d and
// adaptive_max_pool2d/3d over [N, C, ...] or unbatched [C, ...] inputs (the 1-d ones are the 2-d ones
// on an unsqueezed input, as torch's). torch's shape checks and messages; fused kernels
// (kernels/cpu/pool.cpp); each backward is itself differentiable (the ...BackwardBackward0 nodes).
#include "ops/internal.h"

namespace ampgrad {

namespace {
enum class Kind { Max, Avg, AdaptiveAvg, AdaptiveMax };

struct Pool {
  Kind kind;
  int nd;
  PoolArgs a{};
  Shape in_shape, out_shape;  // the full tensor shapes
  Op op() const {
    switch (kind) {
      case Kind::Max: return Op::max_pool;
      case Kind::Avg: return Op::avg_pool;
      case Kind::AdaptiveAvg: return Op::adaptive_avg_pool;
      default: return Op::adaptive_max_pool;
    }
  }
  const char* bw_name() const {
    const bool three = nd == 3;
    switch (kind) {
      case Kind::Max: return three ? "MaxPool3DWithIndicesBackward0" : "MaxPool2DWithIndicesBackward0";
      case Kind::Avg: return three ? "AvgPool3DBackward0" : "AvgPool2DBackward0";
      case Kind::AdaptiveAvg: return three ? "AdaptiveAvgPool3DBackward0" : "AdaptiveAvgPool2DBackward0";
      default: return three ? "AdaptiveMaxPool3DBackward0" : "AdaptiveMaxPool2DBackward0";
    }
  }
  const char* bwbw_name() const {
    const bool three = nd == 3;
    switch (kind) {
      case Kind::Max: return three ? "MaxPool3DWithIndicesBackwardBackward0" : "MaxPool2DWithIndicesBackwardBackward0";
      case Kind::Avg: return three ? "AvgPool3DBackwardBackward0" : "AvgPool2DBackwardBackward0";
      case Kind::AdaptiveAvg: return three ? "AdaptiveAvgPool3DBackwardBackward0" : "AdaptiveAvgPool2DBackwardBackward0";
      default: return three ? "AdaptiveMaxPool3DBackwardBackward0" : "AdaptiveMaxPool2DBackwardBackward0";
    }
  }
};

std::string join(const Shape& s, const char* sep) {
  std::string r;
  for (size_t i = 0; i < s.size(); ++i) r += (i ? sep : "") + std::to_string(s[i]);
  return r;
}

// torch's pooling_output_shape (with its checks).
int64_t pooling_output_shape(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode) {
  AG_CHECK(stride != 0, "stride should not be zero");
  AG_CHECK(pad >= 0, "pad must be non-negative, but got pad: ", pad);
  AG_CHECK(pad <= ((k - 1) * dil + 1) / 2, "pad should be at most half of effective kernel size, but got pad=", pad,
           ", kernel_size=", k, " and dilation=", dil);
  const int64_t num = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

// Leading dims -> NC and the spatial sizes into a (padded to 3 dims with leading 1s).
void fill_geometry(Pool& P, const Tensor& x) {
  const int64_t lead = x.dim() - P.nd;
  P.a.NC = 1;
  for (int64_t d = 0; d < lead; ++d) P.a.NC *= x.sizes()[d];
  for (int d = 0; d < 3; ++d) {
    const int s = d - (3 - P.nd);
    P.a.in[d] = s < 0 ? 1 : x.sizes()[lead + s];
    P.a.k[d] = 1; P.a.stride[d] = 1; P.a.pad[d] = 0; P.a.dil[d] = 1; P.a.out[d] = 1;
  }
  P.in_shape = x.sizes();
}

// torch's pool2d_shape_check / pool3d_shape_check after the output sizes are known.
void check_window(const Pool& P, const Tensor& x, const IntList& k, const IntList& s, const IntList& pad, const IntList& dil,
                  const Shape& out_sp) {
  const bool three = P.nd == 3;
  const char* kn[] = {"kT", "kH", "kW"};
  const char* sn[] = {"dT", "dH", "dW"};
  const char* dn[] = {"dilationT", "dilationH", "dilationW"};
  auto names = [&](const char* const* n, const IntList& v) {
    std::string r;
    for (int i = 0; i < P.nd; ++i) r += std::string(i ? " " : "") + n[i + (three ? 0 : 1)] + ": " + std::to_string(v[i]);
    return r;
  };
  bool ok = true;
  for (auto v : k) ok &= v > 0;
  AG_CHECK(ok, "kernel size should be greater than zero, but got ", names(kn, k));
  ok = true;
  for (auto v : s) ok &= v > 0;
  AG_CHECK(ok, "stride should be greater than zero, but got ", names(sn, s));
  ok = true;
  for (auto v : dil) ok &= v > 0;
  AG_CHECK(ok, "dilation should be greater than zero, but got ", names(dn, dil));
  const int64_t lead = x.dim() - P.nd;
  bool nonempty = true;
  for (int64_t d = 1; d < x.dim(); ++d) nonempty &= x.sizes()[d] > 0;
  AG_CHECK((lead == 1 || lead == 2) && nonempty, "Expected ", three ? "4D or 5D" : "3D or 4D",
           " (batch mode) tensor with optional 0 dim batch size for input, but got:[", join(x.sizes(), ", "), "]");
  for (int i = 0; i < P.nd; ++i)
    AG_CHECK(k[i] / 2 >= pad[i], "pad should be smaller than or equal to half of kernel size, but got ", three ? "padT = " : "",
             three ? std::to_string(pad[0]) + ", " : std::string(), "padW = ", pad[P.nd - 1], ", padH = ", pad[P.nd - 2],
             ", kW = ", k[P.nd - 1], ", kH = ", k[P.nd - 2]);
  ok = true;
  for (auto v : out_sp) ok &= v >= 1;
  const int64_t C = x.sizes()[lead - 1];
  AG_CHECK(ok, "Given input size: (", C, "x", join(Shape(x.sizes().end() - P.nd, x.sizes().end()), "x"), "). Calculated output size: (",
           C, "x", join(out_sp, "x"), "). Output size is too small");
}

Pool window_pool(Kind kind, const Tensor& x, IntList k, IntList s, IntList pad, IntList dil, bool ceil_mode) {
  Pool P{kind, static_cast<int>(k.size())};
  AG_CHECK(P.nd == 2 || P.nd == 3, "pooling: expected 2 or 3 kernel dims");
  if (s.empty()) s = k;
  AG_CHECK(s.size() == k.size() && pad.size() == k.size() && dil.size() == k.size(), "pooling: argument lengths must match the kernel's");
  AG_CHECK(x.dim() >= P.nd + 1, "Expected ", P.nd == 3 ? "4D or 5D" : "3D or 4D",
           " (batch mode) tensor with optional 0 dim batch size for input, but got:[", join(x.sizes(), ", "), "]");
  Shape out_sp;
  for (int i = 0; i < P.nd; ++i)
    out_sp.push_back(pooling_output_shape(x.sizes()[x.dim() - P.nd + i], k[i], pad[i], s[i], dil[i], ceil_mode));
  check_window(P, x, k, s, pad, dil, out_sp);
  fill_geometry(P, x);
  P.out_shape = Shape(x.sizes().begin(), x.sizes().end() - P.nd);
  for (int i = 0; i < P.nd; ++i) {
    const int d = i + (3 - P.nd);
    P.a.k[d] = k[i]; P.a.stride[d] = s[i]; P.a.pad[d] = pad[i]; P.a.dil[d] = dil[i]; P.a.out[d] = out_sp[i];
    P.out_shape.push_back(out_sp[i]);
  }
  return P;
}

Pool adaptive_pool(Kind kind, const Tensor& x, const IntList& out, const char* name) {
  Pool P{kind, static_cast<int>(out.size())};
  AG_CHECK(P.nd == 2 || P.nd == 3, name, ": output_size must be 2 or 3");
  const int64_t lead = x.dim() - P.nd;
  AG_CHECK(lead == 1 || lead == 2, name, "(): Expected ", P.nd == 3 ? "4D or 5D" : "3D or 4D", " tensor, but got [", join(x.sizes(), ", "), "]");
  for (int64_t d = 1; d < x.dim(); ++d)
    AG_CHECK(x.sizes()[d] > 0, name, "(): Expected input to have non-zero size for non-batch dimensions, but input has sizes [",
             join(x.sizes(), ", "), "] with dimension ", d, " being empty");
  for (auto v : out) AG_CHECK(v >= 0, "Trying to create tensor with negative dimension ", v, ": [", join(out, ", "), "]");
  fill_geometry(P, x);
  P.out_shape = Shape(x.sizes().begin(), x.sizes().end() - P.nd);
  for (int i = 0; i < P.nd; ++i) {
    P.a.out[i + (3 - P.nd)] = out[i];
    P.out_shape.push_back(out[i]);
  }
  return P;
}

// Forward: out (and indices for the max kinds) from x, no autograd.
std::pair<Tensor, Tensor> run_forward(const Pool& P, const Tensor& x) {
  autograd::AutoGradMode off(false);
  Tensor xc = contiguous(detach(x));
  Tensor out = empty(P.out_shape, x.dtype(), x.device()), idx;
  const bool max = P.kind == Kind::Max || P.kind == Kind::AdaptiveMax;
  if (max) idx = empty(P.out_shape, ScalarType::Int64, x.device());
  kernel<PoolKernel>(P.op(), x.device())(false, xc, out, max ? &idx : nullptr, P.a);
  return {out, idx};
}

Tensor pool_forward(const Pool& P, const Tensor& x, Tensor* indices_out);

// grad_input from grad_output (and the forward's indices): linear in gy, so its derivative is the
// forward pooling itself (avg kinds) or a gather at the indices (max kinds).
Tensor pool_backward(const Pool& P, const Tensor& gy, const Tensor& idx) {
  Tensor gx;
  {
    autograd::AutoGradMode off(false);
    Tensor gc = contiguous(detach(gy));
    Tensor ic = idx.defined() ? contiguous(idx) : Tensor();
    gx = empty(P.in_shape, gy.dtype(), gy.device());
    kernel<PoolKernel>(P.op(), gy.device())(true, gc, gx, idx.defined() ? &ic : nullptr, P.a);
  }
  auto again = [P, idx](const Tensor& gg) -> Tensor {
    if (!idx.defined()) return pool_forward(P, gg, nullptr);
    const int64_t Li = P.a.in[0] * P.a.in[1] * P.a.in[2], Lo = P.a.out[0] * P.a.out[1] * P.a.out[2];
    return reshape(gather(reshape(gg, {P.a.NC, Li}), 1, reshape(idx, {P.a.NC, Lo})), P.out_shape);
  };
  fw_rule(gx, {&gy}, [&](const variable_list& t) {
    return pool_backward(P, t[0], idx);
  });
  if (auto node = autograd::make_node(P.bwbw_name(), {&gy}, AG_BW { return {again(g[0])}; }))
    autograd::set_history(node, {&gx});
  return gx;
}

Tensor pool_forward(const Pool& P, const Tensor& x, Tensor* indices_out) {
  std::pair<Tensor, Tensor> r = run_forward(P, x);
  Tensor out = r.first, idx = r.second;
  const bool has_idx = idx.defined();
  if (indices_out) *indices_out = idx;
  fw_rule(out, {&x}, [&](const variable_list& t) {
    if (!idx.defined()) return pool_forward(P, t[0], nullptr);
    const int64_t Li = P.a.in[0] * P.a.in[1] * P.a.in[2], Lo = P.a.out[0] * P.a.out[1] * P.a.out[2];
    return reshape(gather(reshape(t[0], {P.a.NC, Li}), 1, reshape(idx, {P.a.NC, Lo})), P.out_shape);
  });
  if (is_floating(out.dtype()))
    if (auto node = autograd::make_node(P.bw_name(), {&x}, AG_BW { return {pool_backward(P, g[0], has_idx ? c.get(0) : Tensor())}; })) {
      autograd::set_history(node, {&out});
      if (idx.defined()) node->save(idx);
    }
  return out;
}
}  // namespace

std::pair<Tensor, Tensor> max_pool_with_indices(const Tensor& x, IntList k, IntList s, IntList p, IntList d, bool ceil_mode) {
  Pool P = window_pool(Kind::Max, x, k, s, p, d, ceil_mode);
  Tensor idx;
  Tensor out = pool_forward(P, x, &idx);
  return {out, idx};
}

Tensor avg_pool(const Tensor& x, IntList k, IntList s, IntList p, bool ceil_mode, bool count_include_pad,
                std::optional<int64_t> divisor_override) {
  if (divisor_override) AG_CHECK(*divisor_override != 0, "divisor must be not zero");
  Pool P = window_pool(Kind::Avg, x, k, s, p, IntList(k.size(), 1), ceil_mode);
  // torch's CPU kernels: avg_pool2d for floats and int64, avg_pool3d for float32/64 and int64.
  const ScalarType dt = x.dtype();
  const bool three = P.nd == 3;
  AG_CHECK_NOT_IMPL(dt == ScalarType::Float32 || dt == ScalarType::Float64 || dt == ScalarType::Int64 ||
                        (!three && (dt == ScalarType::Float16 || dt == ScalarType::BFloat16)),
                    "\"", three ? "avg_pool3d_out_frame" : "avg_pool2d", "\" not implemented for '", scalar_type_name(dt), "'");
  P.a.count_include_pad = count_include_pad;
  P.a.divisor = divisor_override.value_or(0);
  return pool_forward(P, x, nullptr);
}

Tensor adaptive_avg_pool(const Tensor& x, IntList output_size) {
  const char* name = output_size.size() == 3 ? "adaptive_avg_pool3d" : "adaptive_avg_pool2d";
  Pool P = adaptive_pool(Kind::AdaptiveAvg, x, output_size, name);
  AG_CHECK_NOT_IMPL(is_floating(x.dtype()) || x.numel() == 0, "\"", name, "\" not implemented for '", scalar_type_name(x.dtype()), "'");
  return pool_forward(P, x, nullptr);
}

std::pair<Tensor, Tensor> adaptive_max_pool(const Tensor& x, IntList output_size) {
  const char* name = output_size.size() == 3 ? "adaptive_max_pool3d" : "adaptive_max_pool2d";
  Pool P = adaptive_pool(Kind::AdaptiveMax, x, output_size, name);
  AG_CHECK_NOT_IMPL(is_floating(x.dtype()) || x.numel() == 0, "\"", name, "\" not implemented for '", scalar_type_name(x.dtype()), "'");
  Tensor idx;
  Tensor out = pool_forward(P, x, &idx);
  return {out, idx};
}

}  // namespace ampgrad
