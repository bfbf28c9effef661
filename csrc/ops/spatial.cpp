// Spatial nn front ends (Note [Spatial kernels]): F.pad (constant: a fill plus a copy; reflect /
// replicate / circular: kernels), the upsample kernels of F.interpolate, unfold / fold and max_unpool,
// with torch's checks and messages; pixel_(un)shuffle and channel_shuffle as view compositions. Every
// op here is linear in its input: its backward is the adjoint kernel, whose backward is the op again.
#include "ops/spatial.h"
#include "ops/internal.h"

namespace ampgrad {

namespace {
std::string join(const Shape& s, const char* sep = ", ") {
  std::string r;
  for (size_t i = 0; i < s.size(); ++i) r += (i ? sep : "") + std::to_string(s[i]);
  return r;
}

// A linear spatial op: `op`'s kernel maps in_shape -> out_shape (forward) and back (adjoint).
struct Lin {
  Op op;
  SpatialArgs a;
  Shape in_shape, out_shape;
  const char* fw_node;  // the node of the forward's output
  const char* bw_node;  // the node of the adjoint's output
  Tensor idx;           // max_unpool's indices
};

Tensor run_kernel(const Lin& L, const Tensor& x, bool adjoint) {
  autograd::AutoGradMode off(false);
  Tensor xc = contiguous(detach(x));
  Tensor out = empty(adjoint ? L.in_shape : L.out_shape, x.dtype(), x.device());
  Tensor ic = L.idx.defined() ? contiguous(L.idx) : Tensor();
  kernel<SpatialKernel>(L.op, x.device())(adjoint, xc, out, L.idx.defined() ? &ic : nullptr, L.a);
  return out;
}

Tensor lin_apply(const Lin& L, const Tensor& x, bool adjoint) {
  AG_CHECK(x.sizes() == (adjoint ? L.out_shape : L.in_shape), "spatial op: gradient of shape [", join(x.sizes()),
           "] does not match the expected [", join(adjoint ? L.out_shape : L.in_shape), "]");
  Tensor out = run_kernel(L, x, adjoint);
  fw_rule(out, {&x}, [&](const variable_list& t) { return lin_apply(L, t[0], adjoint); });
  if (is_floating(out.dtype()))
    if (auto node = autograd::make_node(adjoint ? L.bw_node : L.fw_node, {&x}, AG_BW { return {lin_apply(L, g[0], !adjoint)}; }))
      autograd::set_history(node, {&out});
  return out;
}

// The leading dims of x as planes and its last nd dims as the spatial ones (padded to three).
SpatialArgs planes(const Shape& s, int nd) {
  SpatialArgs a;
  a.nd = nd;
  const int64_t lead = static_cast<int64_t>(s.size()) - nd;
  for (int64_t d = 0; d < lead; ++d) a.NC *= s[d];
  for (int d = 0; d < nd; ++d) a.in[3 - nd + d] = s[lead + d];
  return a;
}

const char* kDimNames[3][3] = {{"W"}, {"H", "W"}, {"D", "H", "W"}};
std::string sizes_named(int nd, const int64_t* v) {  // "H: 4, W: 4"
  std::string r;
  for (int i = 0; i < nd; ++i) r += std::string(i ? ", " : "") + kDimNames[nd - 1][i] + ": " + std::to_string(v[3 - nd + i]);
  return r;
}
}  // namespace

// ---------------------------------------------------------------- padding
Tensor constant_pad_nd(const Tensor& x, IntList p, Scalar value) {
  AG_CHECK(p.size() % 2 == 0, "Length of pad must be even but instead it equals ", p.size());
  const int64_t ndim = x.dim(), np = static_cast<int64_t>(p.size()) / 2;
  AG_CHECK(ndim >= np, "Length of pad should be no more than twice the number of dimensions of the input. Pad length is ",
           p.size(), " while the input has ", ndim, " dimensions.");
  Shape out_shape = x.sizes();
  Tensor out;
  {
    autograd::AutoGradMode off(false);
    Tensor c = detach(x);
    for (int64_t k = 0; k < np; ++k) {
      const int64_t dim = ndim - 1 - k, l = p[2 * k], r = p[2 * k + 1];
      if (l < 0) {
        AG_CHECK(c.sizes()[dim] + l >= 0, "narrow(): length must be non-negative.");
        c = narrow(c, dim, -l, c.sizes()[dim] + l);
      }
      if (r < 0) {
        AG_CHECK(c.sizes()[dim] + r >= 0, "narrow(): length must be non-negative.");
        c = narrow(c, dim, 0, c.sizes()[dim] + r);
      }
      const int64_t n = x.sizes()[dim] + l + r;
      AG_CHECK(n >= 0, "The input size ", x.sizes()[dim], ", plus negative padding ", l, " and ", r,
               " resulted in a negative output size, which is invalid. Check dimension ", dim, " of your input.");
      out_shape[dim] = n;
    }
    Scalar v = value;
    if (x.dtype() == ScalarType::Bool) v = Scalar(value.to_double() != 0);
    else if (!is_floating(x.dtype())) v = Scalar(static_cast<int64_t>(value.to_double()));
    out = full(out_shape, v, x.dtype(), x.device());
    Tensor dst = out;
    for (int64_t k = 0; k < np; ++k) {
      const int64_t dim = ndim - 1 - k;
      dst = narrow(dst, dim, std::max<int64_t>(p[2 * k], 0), c.sizes()[dim]);
    }
    if (c.numel() > 0) copy_(dst, c);
  }
  IntList neg(p.size());
  for (size_t i = 0; i < p.size(); ++i) neg[i] = -p[i];
  fw_rule(out, {&x}, [&](const variable_list& t) { return constant_pad_nd(t[0], p, Scalar(0.0)); });
  if (is_floating(out.dtype()))
    if (auto node = autograd::make_node("ConstantPadNdBackward0", {&x}, AG_BW { return {constant_pad_nd(g[0], neg, Scalar(0.0))}; }))
      autograd::set_history(node, {&out});
  return out;
}

Tensor pad(const Tensor& x, IntList p, const std::string& mode, std::optional<double> value) {
  AG_CHECK_NOT_IMPL(mode == "constant" || mode == "reflect" || mode == "replicate" || mode == "circular",
                    "Unrecognised padding mode ", mode);
  AG_CHECK(p.size() % 2 == 0, "Padding length must be divisible by 2");
  const int64_t dim = x.dim();
  AG_CHECK(static_cast<int64_t>(p.size()) <= dim * 2, "Padding length should be less than or equal to two times the input dimension but got padding length ",
           p.size(), " and input of dimension ", dim);
  if (mode == "constant") return constant_pad_nd(x, p, Scalar(value.value_or(0.0)));
  AG_CHECK(!value || *value == 0, "Padding mode \"", mode, "\" doesn't take in value argument");
  const int nd = static_cast<int>(p.size() / 2);
  AG_CHECK_NOT_IMPL(nd >= 1 && nd <= 3 && (dim == nd + 1 || dim == nd + 2), "Padding size ", p.size(), " is not supported for ", dim,
                    "D input tensor.\nSupported combinations for non-constant padding:\n"
                    "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                    "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                    "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)");
  const Shape& s = x.sizes();
  Lin L{};
  L.a = planes(s, nd);
  L.in_shape = s;
  L.out_shape = s;
  for (int k = 0; k < nd; ++k) {
    const int d = 2 - k;  // padded dim index of the k-th pair (from the last dim)
    L.a.before[d] = p[2 * k];
    L.a.out[d] = L.a.in[d] + p[2 * k] + p[2 * k + 1];
    L.out_shape[dim - 1 - k] = L.a.out[d];
  }
  if (mode == "circular") {
    bool empty_wrap = false;
    for (int k = 0; k < nd; ++k) {
      const int64_t size = s[dim - 1 - k], l = p[2 * k], r = p[2 * k + 1];
      AG_CHECK(l <= size && r <= size, "Padding value causes wrapping around more than once.");
      AG_CHECK(size + l + r >= 0, "Negative padding value is resulting in an empty dimension");
      if (size - std::max<int64_t>(-l, 0) - std::max<int64_t>(-r, 0) <= 0 && size + l + r > 0) empty_wrap = true;
    }
    // Cropped to nothing but padded back: nothing to wrap (torch leaves the memory uninitialized); zeros.
    if (empty_wrap) return constant_pad_nd(x, p, Scalar(0.0));
    L.op = Op::pad_circular;
    L.fw_node = "torch::autograd::CopySlices";
    L.bw_node = "SliceBackwardBackward0";
    return lin_apply(L, x, false);
  }
  const bool reflect = mode == "reflect";
  bool ok = true;
  for (int64_t d = dim == nd + 2 ? 1 : 0; d < dim; ++d) ok &= s[d] != 0;
  AG_CHECK(ok, "Expected ", nd + 1, "D or ", nd + 2, "D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: [",
           join(s), "]");
  if (reflect)
    for (int k = 0; k < nd; ++k) {
      const int64_t size = s[dim - 1 - k];
      AG_CHECK(p[2 * k] < size && p[2 * k + 1] < size, "Argument #", 4 + 2 * k,
               ": Padding size should be less than the corresponding input dimension, but got: padding (", p[2 * k], ", ", p[2 * k + 1],
               ") at dimension ", dim - 1 - k, " of input [", join(s), "]");
    }
  bool big = true;
  for (int k = 0; k < nd; ++k) big &= L.a.out[2 - k] >= 1;
  if (!big) {
    std::string o;
    for (int i = 0; i < nd; ++i) o += std::string(i ? (nd == 2 ? " " : ", ") : "") + kDimNames[nd - 1][i] + ": " + std::to_string(L.a.out[3 - nd + i]);
    AG_THROW(RuntimeError, "input (", sizes_named(nd, L.a.in), ") is too small. Calculated output ", o);
  }
  static const char* kNames[2][3][2] = {
      {{"ReplicationPad1DBackward0", "ReplicationPad1DBackwardBackward0"},
       {"ReplicationPad2DBackward0", "ReplicationPad2DBackwardBackward0"},
       {"ReplicationPad3DBackward0", "ReplicationPad3DBackwardBackward0"}},
      {{"ReflectionPad1DBackward0", "ReflectionPad1DBackwardBackward0"},
       {"ReflectionPad2DBackward0", "ReflectionPad2DBackwardBackward0"},
       {"ReflectionPad3DBackward0", "ReflectionPad3DBackwardBackward0"}}};
  L.op = reflect ? Op::pad_reflect : Op::pad_replicate;
  L.fw_node = kNames[reflect][nd - 1][0];
  L.bw_node = kNames[reflect][nd - 1][1];
  return lin_apply(L, x, false);
}

// ---------------------------------------------------------------- upsampling
Tensor upsample(const Tensor& x, const std::string& mode_in, IntList output_size, const std::vector<std::optional<double>>& scales,
                bool align_corners) {
  const int nd = static_cast<int>(output_size.size());
  // "bilinear-aa" / "bicubic-aa": torch's _upsample_{bilinear,bicubic}2d_aa (antialias=True)
  const bool aa = mode_in == "bilinear-aa" || mode_in == "bicubic-aa";
  const std::string mode = mode_in == "bilinear-aa" ? "linear" : mode_in == "bicubic-aa" ? "bicubic" : mode_in;
  const bool nearest = mode == "nearest", exact = mode == "nearest-exact", linear = mode == "linear", cubic = mode == "bicubic";
  AG_CHECK(nearest || exact || linear || cubic, "upsample: unknown mode ", mode_in);
  AG_CHECK(!aa || nd == 2, "upsample: antialias needs 2 spatial dims");
  AG_CHECK(nd >= 1 && nd <= 3 && (!cubic || nd == 2), "upsample: ", mode, " does not support ", nd, " spatial dims");
  AG_CHECK(scales.empty() || scales.size() == output_size.size(), "upsample: expected ", nd, " scales, got ", scales.size());
  static const char* kLinear[3] = {"linear1d", "bilinear2d", "trilinear3d"};
  const std::string name = aa ? (linear ? "_upsample_bilinear2d_aa" : "_upsample_bicubic2d_aa") : std::string("upsample_") +
                           (nearest ? "nearest" + std::to_string(nd) + "d" : exact ? "_nearest_exact" + std::to_string(nd) + "d"
                            : linear ? kLinear[nd - 1] : "bicubic2d");
  AG_CHECK(x.dim() == nd + 2, "It is expected input_size equals to ", nd + 2, ", but got size ", x.dim());
  const Shape& s = x.sizes();
  Lin L{};
  L.a = planes(s, nd);
  L.in_shape = s;
  L.out_shape = Shape(s.begin(), s.begin() + 2);
  bool pos = true;
  for (int i = 0; i < nd; ++i) {
    const int d = 3 - nd + i;
    L.a.out[d] = output_size[i];
    L.a.scale[d] = scales.empty() || !scales[i] ? 0.0 : *scales[i];
    pos &= L.a.in[d] > 0 && L.a.out[d] > 0;
    L.out_shape.push_back(output_size[i]);
  }
  AG_CHECK(pos, "Input and output sizes should be greater than 0, but got input (", sizes_named(nd, L.a.in), ") output (",
           sizes_named(nd, L.a.out), ")");
  bool nonempty = true;
  for (int64_t d = 1; d < x.dim(); ++d) nonempty &= s[d] != 0;
  AG_CHECK(x.numel() != 0 || nonempty, "Non-empty ", nd + 2, "D data tensor expected but got a tensor with sizes [", join(s), "]");
  const ScalarType dt = x.dtype();
  // uint8: nearest (a gather), and bilinear / bicubic 2-d (torch's separable integer kernel)
  AG_CHECK_NOT_IMPL(is_floating(dt) || (dt == ScalarType::UInt8 && (nearest || exact || nd == 2)), "\"",
                    // (torch's names for the integer dtypes: where its dispatch first refuses them)
                    is_floating(dt) ? name.c_str()
                    : linear        ? (nd == 2 ? "upsample_bilinear2d_channels_last" : "compute_indices_weights_linear")
                    : cubic         ? "compute_indices_weights_cubic" : name.c_str(),
                    "\" not implemented for '", scalar_type_name(dt), "'");
  L.a.align_corners = align_corners;
  L.a.exact = exact || aa;  // for the linear / cubic kernels `exact` means antialias (Note [Spatial kernels])
  L.op = nearest || exact ? Op::upsample_nearest : linear ? Op::upsample_linear : Op::upsample_bicubic;
  static const char* kNames[4][3][2] = {
      {{"UpsampleNearest1DBackward0", "UpsampleNearest1DBackwardBackward0"},
       {"UpsampleNearest2DBackward0", "UpsampleNearest2DBackwardBackward0"},
       {"UpsampleNearest3DBackward0", "UpsampleNearest3DBackwardBackward0"}},
      {{"UpsampleNearestExact1DBackward0", "UpsampleNearestExact1DBackwardBackward0"},
       {"UpsampleNearestExact2DBackward0", "UpsampleNearestExact2DBackwardBackward0"},
       {"UpsampleNearestExact3DBackward0", "UpsampleNearestExact3DBackwardBackward0"}},
      {{"UpsampleLinear1DBackward0", "UpsampleLinear1DBackwardBackward0"},
       {"UpsampleBilinear2DBackward0", "UpsampleBilinear2DBackwardBackward0"},
       {"UpsampleTrilinear3DBackward0", "UpsampleTrilinear3DBackwardBackward0"}},
      {{"", ""}, {"UpsampleBicubic2DBackward0", "UpsampleBicubic2DBackwardBackward0"}, {"", ""}}};
  const int k = nearest ? 0 : exact ? 1 : linear ? 2 : 3;
  L.fw_node = kNames[k][nd - 1][0];
  L.bw_node = kNames[k][nd - 1][1];
  if (aa) {
    L.fw_node = linear ? "UpsampleBilinear2DAaBackward0" : "UpsampleBicubic2DAaBackward0";
    L.bw_node = linear ? "UpsampleBilinear2DAaBackwardBackward0" : "UpsampleBicubic2DAaBackwardBackward0";
  }
  return lin_apply(L, x, false);
}

// ---------------------------------------------------------------- shuffles (view compositions)
namespace {
// y = f(x) computed without history (a fresh tensor), recorded as one node whose backward is `inv`.
template <typename F, typename Inv>
Tensor shuffle_op(const Tensor& x, const char* node_name, F f, Inv inv) {
  Tensor y;
  {
    autograd::AutoGradMode off(false);
    Tensor d = detach(x);
    y = f(d);
    if (y.storage() == d.storage()) y = clone(y);
  }
  fw_rule(y, {&x}, [&](const variable_list& t) { return f(t[0]); });
  if (is_floating(y.dtype()))
    if (auto node = autograd::make_node(node_name, {&x}, AG_BW { return {inv(g[0])}; })) autograd::set_history(node, {&y});
  return y;
}
}  // namespace

Tensor pixel_shuffle(const Tensor& x, int64_t r) {
  AG_CHECK(x.dim() >= 3, "pixel_shuffle expects input to have at least 3 dimensions, but got input with ", x.dim(), " dimension(s)");
  AG_CHECK(r > 0, "pixel_shuffle expects a positive upscale_factor, but got ", r);
  const Shape& s = x.sizes();
  const int64_t n = x.dim(), c = s[n - 3], h = s[n - 2], w = s[n - 1];
  AG_CHECK(c % (r * r) == 0, "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, but input.size(-3)=",
           c, " is not divisible by ", r * r);
  auto f = [r](const Tensor& t) {
    const Shape& s = t.sizes();
    const int64_t n = t.dim(), c = s[n - 3], h = s[n - 2], w = s[n - 1], oc = c / (r * r);
    Shape lead(s.begin(), s.end() - 3), s1 = lead, s2 = lead;
    s1.insert(s1.end(), {oc, r, r, h, w});
    s2.insert(s2.end(), {oc, h * r, w * r});
    IntList perm;
    for (int64_t i = 0; i < n - 3; ++i) perm.push_back(i);
    const int64_t b = n - 3;
    perm.insert(perm.end(), {b, b + 3, b + 1, b + 4, b + 2});
    return reshape(contiguous(permute(reshape(t, s1), perm)), s2);
  };
  (void)h; (void)w;
  return shuffle_op(x, "PixelShuffleBackward0", f, [r](const Tensor& g) { return pixel_unshuffle(g, r); });
}

Tensor pixel_unshuffle(const Tensor& x, int64_t r) {
  AG_CHECK(x.dim() >= 3, "pixel_unshuffle expects input to have at least 3 dimensions, but got input with ", x.dim(), " dimension(s)");
  AG_CHECK(r > 0, "pixel_unshuffle expects a positive downscale_factor, but got ", r);
  const Shape& s = x.sizes();
  const int64_t n = x.dim();
  AG_CHECK(s[n - 2] % r == 0, "pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)=", s[n - 2],
           " is not divisible by ", r);
  AG_CHECK(s[n - 1] % r == 0, "pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)=", s[n - 1],
           " is not divisible by ", r);
  auto f = [r](const Tensor& t) {
    const Shape& s = t.sizes();
    const int64_t n = t.dim(), c = s[n - 3], oh = s[n - 2] / r, ow = s[n - 1] / r;
    Shape lead(s.begin(), s.end() - 3), s1 = lead, s2 = lead;
    s1.insert(s1.end(), {c, oh, r, ow, r});
    s2.insert(s2.end(), {c * r * r, oh, ow});
    IntList perm;
    for (int64_t i = 0; i < n - 3; ++i) perm.push_back(i);
    const int64_t b = n - 3;
    perm.insert(perm.end(), {b, b + 2, b + 4, b + 1, b + 3});
    return reshape(contiguous(permute(reshape(t, s1), perm)), s2);
  };
  return shuffle_op(x, "PixelUnshuffleBackward0", f, [r](const Tensor& g) { return pixel_shuffle(g, r); });
}

Tensor channel_shuffle(const Tensor& x, int64_t groups) {
  AG_CHECK(x.dim() > 2, "channel_shuffle expects input with > 2 dims, but got input with sizes [", join(x.sizes()), "]");
  AG_CHECK(groups > 0, "Number of groups to divide channels in must be positive. Value of groups:", groups);
  const int64_t c = x.sizes()[1];
  AG_CHECK(c % groups == 0, "Number of channels must be divisible by groups. Got ", c, " channels and ", groups, " groups.");
  auto f = [groups](const Tensor& t) {
    Shape s = t.sizes(), s1 = {s[0], groups, s[1] / groups};
    s1.insert(s1.end(), s.begin() + 2, s.end());
    return reshape(contiguous(transpose(reshape(t, s1), 1, 2)), s);
  };
  return shuffle_op(x, "ChannelShuffleBackward0", f, [groups, c](const Tensor& g) { return channel_shuffle(g, c / groups); });
}

// ---------------------------------------------------------------- unfold / fold
namespace {
void check_len(const IntList& v, const char* what, size_t n = 2) {
  AG_CHECK(v.size() == n, "It is expected ", what, " equals to ", n, ", but got size ", v.size());
}
void check_window(IntList k, IntList d, IntList p, IntList s, bool fold) {
  auto ks = [&] { AG_CHECK(k[0] > 0 && k[1] > 0, "kernel size should be greater than zero, but got kernel_height: ", k[0], " kernel_width: ", k[1]); };
  auto ss = [&] { AG_CHECK(s[0] > 0 && s[1] > 0, "stride should be greater than zero, but got stride_height: ", s[0], " stride_width: ", s[1]); };
  auto ds = [&] { AG_CHECK(d[0] > 0 && d[1] > 0, "dilation should be greater than zero, but got dilation_height: ", d[0], " dilation_width: ", d[1]); };
  auto ps = [&] { AG_CHECK(p[0] >= 0 && p[1] >= 0, "padding should be non-negative, but got pad_height: ", p[0], " pad_width: ", p[1]); };
  ks();
  if (fold) { ss(); ds(); ps(); }
  else { ds(); ps(); ss(); }
}
int64_t div_rtn(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
SpatialArgs window_args(int64_t N, int64_t C, int64_t H, int64_t W, int64_t oh, int64_t ow, IntList k, IntList d, IntList p, IntList s) {
  SpatialArgs a;
  a.NC = N; a.C = C; a.nd = 2;
  a.in[1] = H; a.in[2] = W; a.out[1] = oh; a.out[2] = ow;
  for (int i = 0; i < 2; ++i) { a.k[i + 1] = k[i]; a.dil[i + 1] = d[i]; a.pad[i + 1] = p[i]; a.stride[i + 1] = s[i]; }
  return a;
}
}  // namespace

Tensor im2col(const Tensor& x, IntList k, IntList d, IntList p, IntList s) {
  check_len(k, "kernel_size"); check_len(d, "dilation"); check_len(p, "padding"); check_len(s, "stride");
  check_window(k, d, p, s, false);
  const int64_t nd = x.dim();
  if (nd < 3) {
    const int64_t bad = nd <= 1 ? 1 : 2, lo = nd == 0 ? -1 : -nd, hi = nd == 0 ? 0 : nd - 1;
    AG_THROW(IndexError, "Dimension out of range (expected to be in range of [", lo, ", ", hi, "], but got ", bad, ")");
  }
  const Shape& sz = x.sizes();
  bool ok = nd == 3 || nd == 4;
  if (ok) for (int64_t i = nd - 3; i < nd; ++i) ok &= sz[i] != 0;
  AG_CHECK(ok, "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: [", join(sz), "]");
  const bool batched = nd == 4;
  const int64_t N = batched ? sz[0] : 1, C = sz[nd - 3], H = sz[nd - 2], W = sz[nd - 1];
  const int64_t oh = div_rtn(H + 2 * p[0] - (d[0] * (k[0] - 1) + 1), s[0]) + 1;
  const int64_t ow = div_rtn(W + 2 * p[1] - (d[1] * (k[1] - 1) + 1), s[1]) + 1;
  AG_CHECK(oh >= 1 && ow >= 1, "Given input with spatial size (", H, ", ", W, "), kernel_size=(", k[0], ", ", k[1], "), dilation=(", d[0], ", ", d[1],
           "), padding=(", p[0], ", ", p[1], "), calculated shape of the array of sliding blocks as (", oh, ", ", ow,
           "), but its components must be at least one.");
  AG_CHECK_NOT_IMPL(is_floating(x.dtype()) || x.dtype() == ScalarType::Bool, "\"im2col_out_cpu\" not implemented for '", scalar_type_name(x.dtype()), "'");
  Lin L{};
  L.op = Op::im2col;
  L.a = window_args(N, C, H, W, oh, ow, k, d, p, s);
  L.in_shape = sz;
  L.out_shape = batched ? Shape{N, C * k[0] * k[1], oh * ow} : Shape{C * k[0] * k[1], oh * ow};
  L.fw_node = "Im2ColBackward0";
  L.bw_node = "Col2ImBackward0";
  return lin_apply(L, x, false);
}

Tensor col2im(const Tensor& x, IntList out, IntList k, IntList d, IntList p, IntList s) {
  check_len(out, "output_size"); check_len(k, "kernel_size"); check_len(d, "dilation"); check_len(p, "padding"); check_len(s, "stride");
  check_window(k, d, p, s, true);
  const int64_t nd = x.dim();
  const Shape& sz = x.sizes();
  AG_CHECK((nd == 2 && sz[0] != 0 && sz[1] != 0) || (nd == 3 && sz[1] != 0 && sz[2] != 0),
           "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions for input, but got: [", join(sz), "]");
  const bool batched = nd == 3;
  const int64_t planes = sz[nd - 2], length = sz[nd - 1], kk = k[0] * k[1];
  AG_CHECK(planes % kk == 0, "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got input.size(1)=", planes,
           " and kernel_size=(", k[0], ", ", k[1], ").");
  const int64_t bh = div_rtn(out[0] + 2 * p[0] - d[0] * (k[0] - 1) - 1, s[0]) + 1;
  const int64_t bw = div_rtn(out[1] + 2 * p[1] - d[1] * (k[1] - 1) - 1, s[1]) + 1;
  const std::string geo = "Given output_size=(" + std::to_string(out[0]) + ", " + std::to_string(out[1]) + "), kernel_size=(" +
                          std::to_string(k[0]) + ", " + std::to_string(k[1]) + "), dilation=(" + std::to_string(d[0]) + ", " +
                          std::to_string(d[1]) + "), padding=(" + std::to_string(p[0]) + ", " + std::to_string(p[1]) + "), stride=(" +
                          std::to_string(s[0]) + ", " + std::to_string(s[1]) + ")";
  AG_CHECK(length == bh * bw, geo, ", expected size of input's dimension 2 to match the calculated number of sliding blocks ", bh, " * ", bw,
           " = ", bh * bw, ", but got input.size(2)=", length, ".");
  AG_CHECK(bh >= 1 && bw >= 1, geo, ", calculated shape of the array of sliding blocks as (", bh, ", ", bw, "), which is too small (non-positive)");
  AG_CHECK_NOT_IMPL(is_floating(x.dtype()) || x.dtype() == ScalarType::Bool, "\"col2im_out_cpu\" not implemented for '", scalar_type_name(x.dtype()), "'");
  const int64_t N = batched ? sz[0] : 1, C = planes / kk;
  Lin L{};
  L.op = Op::col2im;
  L.a = window_args(N, C, out[0], out[1], bh, bw, k, d, p, s);
  L.in_shape = sz;
  L.out_shape = batched ? Shape{N, C, out[0], out[1]} : Shape{C, out[0], out[1]};
  L.fw_node = "Col2ImBackward0";
  L.bw_node = "Im2ColBackward0";
  return lin_apply(L, x, false);
}

// ---------------------------------------------------------------- max_unpool
Tensor max_unpool(const Tensor& x, const Tensor& idx, IntList output_size) {
  const int nd = static_cast<int>(output_size.size());
  const bool three = nd == 3;
  AG_CHECK(idx.dtype() == ScalarType::Int64, "elements in indices should be type int64 but got: ", scalar_type_name(idx.dtype()));
  AG_CHECK(nd == 2 || nd == 3, "There should be exactly ", three ? "three elements (depth, height, width)" : "two elements (height, width)",
           " in output_size, but got ", output_size.size(), " elements.");
  AG_CHECK(x.dim() == nd + 1 || x.dim() == nd + 2, "Input to max_unpooling", nd, "d should be a ", nd + 1, "d or ", nd + 2,
           "d Tensor, but got a tensor with ", x.dim(), " dimensions.");
  AG_CHECK(x.sizes() == idx.sizes(), "Expected shape of indices to be same as that of the input tensor ([", join(x.sizes()),
           "]) but got indices tensor with shape: [", join(idx.sizes()), "]");
  for (int64_t i = 1; i < x.dim(); ++i)
    AG_CHECK(x.sizes()[i] > 0, "max_unpooling", nd, "d_forward_out_cpu(): Expected input to have non-zero size for non-batch dimensions, but got [",
             join(x.sizes()), "] with dimension ", i, " being empty.");
  check_same_device(x, idx, "max_unpool");
  Lin L{};
  L.op = Op::max_unpool;
  L.a = planes(x.sizes(), nd);
  L.in_shape = x.sizes();
  L.out_shape = Shape(x.sizes().begin(), x.sizes().end() - nd);
  int64_t plane = 1;
  for (int i = 0; i < nd; ++i) {
    AG_CHECK(output_size[i] >= 0, "Trying to create tensor with negative dimension ", output_size[i]);
    L.a.out[3 - nd + i] = output_size[i];
    L.out_shape.push_back(output_size[i]);
    plane *= output_size[i];
  }
  L.idx = contiguous(idx);
  if (idx.device().type == DeviceType::CPU) {
    const int64_t* ip = L.idx.data<int64_t>();
    for (int64_t i = 0; i < L.idx.numel(); ++i)
      if (ip[i] < 0 || ip[i] >= plane) {
        std::string dims;
        for (int j = 0; j < nd; ++j) dims += (j ? "x" : "") + std::to_string(output_size[j]);
        AG_THROW(RuntimeError, "Found an invalid max index: ", ip[i], " (output volumes are of size ", dims);
      }
  }
  L.fw_node = three ? "MaxUnpool3DBackward0" : "MaxUnpool2DBackward0";
  L.bw_node = "ViewBackward0";  // torch's max_pool_double_backward: a gather then a view
  return lin_apply(L, x, false);
}

}  // namespace ampgrad
