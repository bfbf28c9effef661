// Front ends of the fused normalizations (Note [Fused norms]): layer_norm, rms_norm, group_norm and
// batch_norm each run one forward and one backward kernel. The backward is differentiable: under
// create_graph (or with forward AD on) it is written with ampgrad ops instead of the fused kernel.
#include <cmath>
#include <limits>
#include "ops/internal.h"

namespace ampgrad {

namespace {
bool low_precision(ScalarType t) { return t == ScalarType::Float16 || t == ScalarType::BFloat16; }
ScalarType stat_dtype(ScalarType t) { return t == ScalarType::Float64 ? ScalarType::Float64 : ScalarType::Float32; }

// One normalization, as the kernel sees it (NormArgs) and as the differentiable formulas see it: x
// viewed as `xview`, statistics over `red` (kept as size-1 dims: `statview`), weight viewed as
// `wview`, weight / bias gradients summed over `wsum`.
struct Spec {
  Op op, bw_op;
  const char* node;
  NormArgs a;
  IntList xview, statview, wview, red, wsum;
  bool rms = false;
};

// torch's check_mixed_data_type (CPU norms): a float16 / bfloat16 input may take float32 parameters.
void check_mixed(const Tensor& x, std::initializer_list<const Tensor*> ps) {
  const Tensor* first = nullptr;
  for (auto* p : ps) if (p->defined()) { first = p; break; }
  if (!first) return;
  bool mixed = first->dtype() != x.dtype();
  for (auto* p : ps) mixed |= p->defined() && p->dtype() != x.dtype();
  if (!mixed) return;
  for (auto* p : ps)
    AG_CHECK(!p->defined() || p->dtype() == ScalarType::Float32, "mixed dtype (CPU): expect parameter to have scalar type of Float");
  AG_CHECK(low_precision(x.dtype()), "mixed dtype (CPU): all inputs must share same datatype.");
}

Tensor opt(const std::optional<Tensor>& t) { return t ? *t : Tensor(); }
Tensor flat(const Tensor& t) {
  if (!t.defined()) return t;
  autograd::AutoGradMode off(false);
  return contiguous(detach(t));
}

// d xhat for a tangent (or gradient-weighted) tx: rs * (tx - mean(tx) - xhat * mean(xhat * tx)).
Tensor dxhat(const Spec& sp, const Tensor& tx, const Tensor& xhat, const Tensor& rs, bool use_stats) {
  if (use_stats) return tx * rs;
  Tensor r = tx - xhat * mean(tx * xhat, sp.red, true, std::nullopt);
  if (!sp.rms) r = r - mean(tx, sp.red, true, std::nullopt);
  return r * rs;
}

// The differentiable backward: (dx, dw, db), each undefined unless asked for.
variable_list backward_composite(const Spec& sp, const Tensor& dy, const Tensor& x, const Tensor& w, const Tensor& mean_s,
                                 const Tensor& rstd_s, bool use_stats, bool nx, bool nw, bool nb, const Shape& wshape,
                                 ScalarType wdt, const Shape& bshape, ScalarType bdt) {
  ScalarType ct = stat_dtype(x.dtype());
  Tensor xv = reshape(to_dtype(x, ct), sp.xview), gv = reshape(to_dtype(dy, ct), sp.xview);
  Tensor mu, rs;
  if (use_stats) {
    mu = reshape(mean_s, sp.statview);
    rs = reshape(rstd_s, sp.statview);
  } else {
    mu = sp.rms ? Tensor() : mean(xv, sp.red, true, std::nullopt);
    Tensor xc = sp.rms ? xv : xv - mu;
    rs = rsqrt(mean(xc * xc, sp.red, true, std::nullopt) + sp.a.eps);
  }
  Tensor xhat = (sp.rms ? xv : xv - mu) * rs;
  Tensor dx, dw, db;
  if (nx) {
    Tensor gw = w.defined() ? gv * reshape(to_dtype(w, ct), sp.wview) : gv;
    dx = to_dtype(reshape(dxhat(sp, gw, xhat, rs, use_stats), x.sizes()), x.dtype());
  }
  if (nw) dw = to_dtype(reshape(sum(gv * xhat, sp.wsum, false, std::nullopt), wshape), wdt);
  if (nb) db = to_dtype(reshape(sum(gv, sp.wsum, false, std::nullopt), bshape), bdt);
  return {dx, dw, db};
}

// A device without the fused kernels (CUDA today): the same normalization in ampgrad ops (the nodes
// of those ops are recorded instead of the fused one).
Tensor norm_composite(const Spec& sp, const Tensor& x, const Tensor& w, const Tensor& b, Tensor* mean_out, Tensor* rstd_out,
                      const Tensor& mean_in, const Tensor& rstd_in) {
  ScalarType ct = stat_dtype(x.dtype());
  Tensor xv = reshape(to_dtype(x, ct), sp.xview), mu, rs;
  if (sp.a.use_stats) {
    mu = reshape(mean_in, sp.statview);
    rs = reshape(rstd_in, sp.statview);
  } else {
    mu = sp.rms ? Tensor() : mean(xv, sp.red, true, std::nullopt);
    Tensor xc = sp.rms ? xv : xv - mu;
    rs = rsqrt(mean(xc * xc, sp.red, true, std::nullopt) + sp.a.eps);
  }
  Tensor y = (sp.rms ? xv : xv - mu) * rs;
  if (w.defined()) y = y * reshape(to_dtype(w, ct), sp.wview);
  if (b.defined()) y = y + reshape(to_dtype(b, ct), sp.wview);
  {
    autograd::AutoGradMode off(false);
    if (mean_out) *mean_out = mu.defined() ? reshape(detach(mu), {-1}) : Tensor();
    if (rstd_out) *rstd_out = reshape(detach(rs), {-1});
  }
  return to_dtype(reshape(y, x.sizes()), x.dtype());
}

// Runs the forward kernel and records the node. For batch_norm's eval mode, mean_in / rstd_in are
// the statistics to use (float32 / float64 copies of the running ones).
Tensor norm_forward(const Spec& sp, const Tensor& x0, const Tensor& w0, const Tensor& b0, Tensor* mean_out = nullptr,
                    Tensor* rstd_out = nullptr, const Tensor& mean_in = Tensor(), const Tensor& rstd_in = Tensor()) {
  const bool use_stats = sp.a.use_stats;
  if (!has_kernel(sp.op, x0.device().type)) return norm_composite(sp, x0, w0, b0, mean_out, rstd_out, mean_in, rstd_in);
  Tensor x = flat(x0), w = flat(w0), b = flat(b0);
  ScalarType st = stat_dtype(x.dtype());
  Tensor y = empty(x.sizes(), x.dtype(), x.device());
  int64_t nstat = shape_numel(Shape(sp.statview.begin(), sp.statview.end()));
  Tensor mean_t = use_stats ? mean_in : (sp.rms ? Tensor() : empty({nstat}, st, x.device()));
  Tensor rstd_t = use_stats ? rstd_in : empty({nstat}, st, x.device());
  kernel<NormKernel>(sp.op, x.device())(x, w, b, y, mean_t, rstd_t, sp.a);
  if (mean_out) *mean_out = mean_t;
  if (rstd_out) *rstd_out = rstd_t;
  fw_rule(y, {&x0, &w0, &b0}, [&](const variable_list& t) {
    ScalarType ct = st;
    Tensor xv = reshape(to_dtype(x, ct), sp.xview);
    Tensor rs = reshape(rstd_t, sp.statview);
    Tensor xhat = (sp.rms ? xv : xv - reshape(mean_t, sp.statview)) * rs;
    Tensor wv = w.defined() ? reshape(to_dtype(w, ct), sp.wview) : Tensor();
    Tensor r;
    if (t[0].defined()) {
      r = dxhat(sp, reshape(to_dtype(t[0], ct), sp.xview), xhat, rs, use_stats);
      if (wv.defined()) r = r * wv;
    }
    if (t[1].defined()) r = sum_defined({r, xhat * reshape(to_dtype(t[1], ct), sp.wview)});
    if (t[2].defined()) r = sum_defined({r, expand(reshape(to_dtype(t[2], ct), sp.wview), Shape(sp.xview.begin(), sp.xview.end()))});
    return to_dtype(reshape(r, x.sizes()), x.dtype());
  });
  if (!autograd::records({&x0, &w0, &b0})) return y;
  Shape wshape = w0.defined() ? w0.sizes() : Shape(), bshape = b0.defined() ? b0.sizes() : Shape();
  ScalarType wdt = w0.defined() ? w0.dtype() : x.dtype(), bdt = b0.defined() ? b0.dtype() : x.dtype();
  Spec s = sp;
  auto node = autograd::make_node(sp.node, {&x0, &w0, &b0}, AG_BW {
    Tensor x = c.get(0), w = c.get(1), m = c.get(2), r = c.get(3);
    const bool nx = c.needs_input_grad(0), nw = c.needs_input_grad(1), nb = c.needs_input_grad(2);
    if (autograd::GradMode::is_enabled() || autograd::fw::on())
      return backward_composite(s, g[0], x, w, m, r, use_stats, nx, nw, nb, wshape, wdt, bshape, bdt);
    Tensor xc = flat(x), dy = flat(g[0]), wc = flat(w);
    Tensor dx = nx ? empty(x.sizes(), x.dtype(), x.device()) : Tensor();
    Tensor dw = nw ? empty(wshape, wdt, x.device()) : Tensor();
    Tensor db = nb ? empty(bshape, bdt, x.device()) : Tensor();
    kernel<NormBackwardKernel>(s.bw_op, x.device())(dy, xc, m, r, wc, dx, dw, db, s.a);
    return {dx, dw, db};
  });
  autograd::set_history(node, {&y});
  node->save(x0);
  node->save(w0);
  node->save(mean_t);
  node->save(rstd_t);
  return y;
}

void check_normalized_shape(const Tensor& x, const IntList& ns, const Tensor& w, const Tensor& b, bool rms) {
  AG_CHECK(!ns.empty(), "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, but got normalized_shape = ",
           shape_str(Shape(ns.begin(), ns.end())));
  const Shape nsh(ns.begin(), ns.end());
  AG_CHECK(!w.defined() || w.sizes() == nsh, "Expected weight to be of same shape as normalized_shape, but got weight of shape ",
           shape_str(w.sizes()), " and normalized_shape = ", shape_str(nsh));
  AG_CHECK(!b.defined() || b.sizes() == nsh, "Expected bias to be of same shape as normalized_shape, but got bias of shape ",
           shape_str(b.sizes()), " and normalized_shape = ", shape_str(nsh));
  const int64_t k = static_cast<int64_t>(ns.size()), nd = x.dim();
  bool ok = nd >= k;
  for (int64_t i = 0; ok && i < k; ++i) ok = x.sizes()[nd - k + i] == ns[i];
  if (!ok) {
    std::string s;
    for (size_t i = 0; i < ns.size(); ++i) s += (i ? ", " : "") + std::to_string(ns[i]);
    AG_THROW(RuntimeError, "Given normalized_shape=", shape_str(nsh), ", expected input with shape [*", rms ? "" : ", ", s,
             "], but got input of size", shape_str(x.sizes()));
  }
}

Spec row_spec(Op op, Op bw, const char* node, const Tensor& x, int64_t k, double eps, bool rms) {
  Spec sp{op, bw, node, {}, {}, {}, {}, {}, {}, rms};
  int64_t D = 1;
  for (int64_t i = x.dim() - k; i < x.dim(); ++i) D *= x.sizes()[i];
  const int64_t M = D ? x.numel() / D : shape_numel(Shape(x.sizes().begin(), x.sizes().end() - k));
  sp.a.N = M; sp.a.HW = D; sp.a.eps = eps;
  sp.xview = {M, D}; sp.statview = {M, 1}; sp.wview = {1, D}; sp.red = {1}; sp.wsum = {0};
  return sp;
}
}  // namespace

Tensor layer_norm(const Tensor& x, IntList ns, const std::optional<Tensor>& w0, const std::optional<Tensor>& b0, double eps) {
  Tensor w = opt(w0), b = opt(b0);
  check_normalized_shape(x, ns, w, b, false);
  check_mixed(x, {&w, &b});
  AG_CHECK_NOT_IMPL(is_floating(x.dtype()), "\"LayerNormKernelImpl\" not implemented for '", scalar_type_name(x.dtype()), "'");
  Spec sp = row_spec(Op::layer_norm, Op::layer_norm_backward, "NativeLayerNormBackward0", x, ns.size(), eps, false);
  return norm_forward(sp, x, w, b);
}

// torch 2.13's CPU rms_norm is a composition whose last op is the weight's mul, or the cast back for
// fp16 / bf16 inputs: the fused node takes that node's name.
Tensor rms_norm(const Tensor& x, IntList ns, const std::optional<Tensor>& w0, std::optional<double> eps0) {
  Tensor w = opt(w0);
  check_normalized_shape(x, ns, w, Tensor(), true);
  AG_CHECK_NOT_IMPL(is_floating(x.dtype()), "\"rms_norm\" not implemented for '", scalar_type_name(x.dtype()), "'");
  double eps = eps0 ? *eps0 : x.dtype() == ScalarType::Float64 ? std::numeric_limits<double>::epsilon()
                                                                 : static_cast<double>(std::numeric_limits<float>::epsilon());
  Spec sp = row_spec(Op::rms_norm, Op::rms_norm_backward, low_precision(x.dtype()) ? "ToCopyBackward0" : "MulBackward0", x,
                     ns.size(), eps, true);
  return norm_forward(sp, x, w, Tensor());
}

Tensor group_norm(const Tensor& x, int64_t G, const std::optional<Tensor>& w0, const std::optional<Tensor>& b0, double eps) {
  Tensor w = opt(w0), b = opt(b0);
  AG_CHECK(x.dim() >= 2, "Expected at least 2 dimensions for input tensor but received ", x.dim());
  AG_CHECK(G > 0, "Expected num groups to be greater than 0, got ", G);
  const int64_t N = x.sizes()[0], C = x.sizes()[1];
  AG_CHECK(C % G == 0, "Expected number of channels in input to be divisible by num_groups, but got input of shape ",
           shape_str(x.sizes()), " and num_groups=", G);
  AG_CHECK(!w.defined() || (w.dim() == 1 && w.numel() == C), "Expected weight to be a vector of size equal to the number of channels in input, but got weight of shape ",
           shape_str(w.sizes()), " and input of shape ", shape_str(x.sizes()));
  AG_CHECK(!b.defined() || (b.dim() == 1 && b.numel() == C), "Expected bias to be a vector of size equal to the number of channels in input, but got bias of shape ",
           shape_str(b.sizes()), " and input of shape ", shape_str(x.sizes()));
  check_mixed(x, {&w, &b});
  AG_CHECK_NOT_IMPL(is_floating(x.dtype()), "\"GroupNormKernelImpl\" not implemented for '", scalar_type_name(x.dtype()), "'");
  int64_t HW = 1;
  for (int64_t i = 2; i < x.dim(); ++i) HW *= x.sizes()[i];
  Spec sp{Op::group_norm, Op::group_norm_backward, "NativeGroupNormBackward0", {}, {}, {}, {}, {}, {}, false};
  sp.a.N = N; sp.a.C = C; sp.a.HW = HW; sp.a.G = G; sp.a.eps = eps;
  sp.xview = {N, G, C / G, HW}; sp.statview = {N, G, 1, 1}; sp.wview = {1, G, C / G, 1}; sp.red = {2, 3}; sp.wsum = {0, 3};
  return norm_forward(sp, x, w, b);
}

Tensor batch_norm(const Tensor& x, const std::optional<Tensor>& rm0, const std::optional<Tensor>& rv0, const std::optional<Tensor>& w0,
                  const std::optional<Tensor>& b0, bool training, double momentum, double eps) {
  Tensor rm = opt(rm0), rv = opt(rv0), w = opt(w0), b = opt(b0);
  const int64_t C = x.dim() >= 2 ? x.sizes()[1] : 0;  // torch's num_features
  if (x.numel() > 0) {
    auto check = [&](const Tensor& t, const char* name) {
      AG_CHECK(t.numel() == C, name, " should contain ", C, " elements not ", t.numel());
    };
    if (rm.defined()) check(rm, "running_mean"); else AG_CHECK(training, "running_mean must be defined in evaluation mode");
    if (rv.defined()) check(rv, "running_var"); else AG_CHECK(training, "running_var must be defined in evaluation mode");
    if (w.defined()) check(w, "weight");
    if (b.defined()) check(b, "bias");
  }
  AG_CHECK_INDEX(x.dim() >= 2, "Dimension out of range (expected to be in range of [", -std::max<int64_t>(x.dim(), 1), ", ",
                 std::max<int64_t>(x.dim(), 1) - 1, "], but got 1)");
  const int64_t N = x.sizes()[0];
  if (x.numel() == 0 && !is_floating(x.dtype())) return clone(x);  // torch returns before its dtype dispatch
  check_mixed(x, {&w, &b, &rm, &rv});
  AG_CHECK_NOT_IMPL(is_floating(x.dtype()), "\"batch_norm\" not implemented for '", scalar_type_name(x.dtype()), "'");
  int64_t HW = 1;
  for (int64_t i = 2; i < x.dim(); ++i) HW *= x.sizes()[i];
  const bool use_stats = !training;
  Spec sp{Op::batch_norm, Op::batch_norm_backward, "NativeBatchNormBackward0", {}, {}, {}, {}, {}, {}, false};
  sp.a.N = N; sp.a.C = C; sp.a.HW = HW; sp.a.eps = eps; sp.a.use_stats = use_stats;
  sp.xview = {N, C, HW}; sp.statview = {1, C, 1}; sp.wview = {1, C, 1}; sp.red = {0, 2}; sp.wsum = {0, 2};
  ScalarType st = stat_dtype(x.dtype());
  Tensor mean_in, rstd_in;
  if (use_stats) {
    autograd::AutoGradMode off(false);
    mean_in = contiguous(to_dtype(detach(rm), st, true));
    rstd_in = contiguous(rsqrt(to_dtype(detach(rv), st) + eps));
  }
  Tensor mean_t, rstd_t;
  Tensor y = norm_forward(sp, x, w, b, &mean_t, &rstd_t, mean_in, rstd_in);
  if (training && x.numel() > 0 && (rm.defined() || rv.defined())) {
    // Running statistics: momentum-weighted, with the unbiased variance (var = 1 / rstd^2 - eps).
    autograd::AutoGradMode off(false);
    const double n = static_cast<double>(N * HW);
    if (rm.defined()) {
      Tensor nm = to_dtype(detach(rm) * (1.0 - momentum) + mean_t * momentum, rm.dtype());
      copy_(rm, nm);
    }
    if (rv.defined()) {
      Tensor var = (1.0 / (rstd_t * rstd_t) - eps) * (n / std::max(n - 1.0, 1.0));
      if (n <= 1) var = var * std::numeric_limits<double>::quiet_NaN();
      copy_(rv, to_dtype(detach(rv) * (1.0 - momentum) + var * momentum, rv.dtype()));
    }
  }
  return y;
}

}  // namespace ampgrad
