// Front ends of the fused RNN cells (Note [Fused RNN cells]): one forward and one backward kernel for
// the pointwise part of an LSTM / GRU cell, recording torch's fused-cell nodes. Under create_graph the
// backward is written with ampgrad ops from the saved gates (double backward); a device without the
// kernels, or forward AD, runs the same cell composed of ampgrad ops.
#include "ops/rnn.h"
#include "ops/internal.h"

namespace ampgrad {

namespace {
ScalarType ws_dtype(ScalarType t) { return t == ScalarType::Float64 ? t : ScalarType::Float32; }
Tensor flat(const Tensor& t) {
  autograd::AutoGradMode off(false);
  return contiguous(detach(t));
}
Tensor chunk(const Tensor& t, int64_t k, int64_t H) { return narrow(t, 1, k * H, H); }

void check_cell(const char* op, const Tensor& a, int64_t gates, const Tensor& state, const char* sname) {
  AG_CHECK(a.dim() == 2 && state.dim() == 2, op, ": expected 2-D gates and ", sname, ", got ", a.dim(), "-D and ", state.dim(), "-D");
  AG_CHECK(a.sizes()[0] == state.sizes()[0] && a.sizes()[1] == gates * state.sizes()[1], op, ": gates of shape ",
           shape_str(a.sizes()), " do not match ", sname, " of shape ", shape_str(state.sizes()));
  check_same_device(a, state, op);
  AG_CHECK_NOT_IMPL(is_floating(a.dtype()) && is_floating(state.dtype()), "\"", op, "\" not implemented for '",
                    scalar_type_name(is_floating(a.dtype()) ? state.dtype() : a.dtype()), "'");
}

// The LSTM cell in ampgrad ops (torch's CPU formula): {hy, cy}.
std::vector<Tensor> lstm_composite(const Tensor& gates, const Tensor& cx) {
  const int64_t H = cx.sizes()[1];
  Tensor i = sigmoid(chunk(gates, 0, H)), f = sigmoid(chunk(gates, 1, H)), g = tanh(chunk(gates, 2, H)),
         o = sigmoid(chunk(gates, 3, H));
  Tensor cy = f * cx + i * g;
  return {o * tanh(cy), cy};
}

Tensor gru_composite(const Tensor& gi, const Tensor& gh, const Tensor& hx) {
  const int64_t H = hx.sizes()[1];
  Tensor r = sigmoid(chunk(gi, 0, H) + chunk(gh, 0, H)), z = sigmoid(chunk(gi, 1, H) + chunk(gh, 1, H));
  Tensor n = tanh(chunk(gi, 2, H) + r * chunk(gh, 2, H));
  return (hx - n) * z + n;
}

}  // namespace

std::vector<Tensor> lstm_cell_fused(const Tensor& gates0, const Tensor& cx0) {
  check_cell("_thnn_fused_lstm_cell", gates0, 4, cx0, "cx");
  const ScalarType dt = promote_types(gates0.dtype(), cx0.dtype());
  Tensor gates = to_dtype(gates0, dt), cx = to_dtype(cx0, dt);
  if (!has_kernel(Op::lstm_cell_fused, gates.device().type) || fw_has(gates) || fw_has(cx)) return lstm_composite(gates, cx);
  const int64_t B = cx.sizes()[0], H = cx.sizes()[1];
  Tensor gf = flat(gates), cf = flat(cx), none;
  Tensor hy = empty({B, H}, dt, gf.device()), cy = empty({B, H}, dt, gf.device()), ws = empty({B, 4 * H}, ws_dtype(dt), gf.device());
  kernel<RnnCellKernel>(Op::lstm_cell_fused, gf.device())(gf, cf, none, hy, cy, ws);
  if (!autograd::records({&gates, &cx})) return {hy, cy};
  auto node = autograd::make_node("ThnnFusedLstmCellBackward0", {&gates, &cx}, AG_BW {
    Tensor gt = c.get(0), cxs = c.get(1), cys = c.get(2), w = c.get(3);
    const bool ng = c.needs_input_grad(0), nc = c.needs_input_grad(1);
    if (!g[0].defined() && !g[1].defined()) return {Tensor(), Tensor()};
    if (autograd::GradMode::is_enabled()) {  // differentiable: recompute from the saved gates
      const int64_t H = cxs.sizes()[1];
      Tensor i = sigmoid(chunk(gt, 0, H)), f = sigmoid(chunk(gt, 1, H)), gg = tanh(chunk(gt, 2, H)), o = sigmoid(chunk(gt, 3, H));
      Tensor cy = f * cxs + i * gg, tc = tanh(cy);
      Tensor gh = or_zeros(g[0], cxs), gc = or_zeros(g[1], cxs);
      Tensor dcy = gc + gh * o * (1.0 - tc * tc);
      Tensor dg, dc;
      if (ng)
        dg = cat({dcy * gg * i * (1.0 - i), dcy * cxs * f * (1.0 - f), dcy * i * (1.0 - gg * gg), gh * tc * o * (1.0 - o)}, 1);
      if (nc) dc = dcy * f;
      return {dg, dc};
    }
    Tensor gh = g[0].defined() ? flat(g[0]) : Tensor(), gc = g[1].defined() ? flat(g[1]) : Tensor();
    Tensor cc = flat(cxs);
    Tensor dg = empty(gt.sizes(), gt.dtype(), gt.device());
    Tensor dc = nc ? empty(cxs.sizes(), cxs.dtype(), cxs.device()) : Tensor();
    Tensor none;
    kernel<RnnCellBackwardKernel>(Op::lstm_cell_fused_backward, gt.device())(gh, gc, cc, flat(cys), w, dg, dc, none);
    return {ng ? dg : Tensor(), dc};
  });
  autograd::set_history(node, {&hy, &cy});
  node->save(gates);
  node->save(cx);
  node->save(cy, true);
  node->save(ws);
  return {hy, cy};
}

Tensor gru_cell_fused(const Tensor& gi0, const Tensor& gh0, const Tensor& hx0) {
  check_cell("_thnn_fused_gru_cell", gi0, 3, hx0, "hx");
  AG_CHECK(gh0.sizes() == gi0.sizes(), "_thnn_fused_gru_cell: input gates of shape ", shape_str(gi0.sizes()),
           " and hidden gates of shape ", shape_str(gh0.sizes()), " differ");
  check_same_device(gi0, gh0, "_thnn_fused_gru_cell");
  const ScalarType dt = promote_types(promote_types(gi0.dtype(), gh0.dtype()), hx0.dtype());
  Tensor gi = to_dtype(gi0, dt), gh = to_dtype(gh0, dt), hx = to_dtype(hx0, dt);
  if (!has_kernel(Op::gru_cell_fused, gi.device().type) || fw_has(gi) || fw_has(gh) || fw_has(hx)) return gru_composite(gi, gh, hx);
  const int64_t B = hx.sizes()[0], H = hx.sizes()[1];
  Tensor a = flat(gi), b = flat(gh), h = flat(hx);
  Tensor hy = empty({B, H}, dt, a.device()), ws = empty({B, 4 * H}, ws_dtype(dt), a.device()), none;
  kernel<RnnCellKernel>(Op::gru_cell_fused, a.device())(a, b, h, hy, none, ws);
  if (!autograd::records({&gi, &gh, &hx})) return hy;
  auto node = autograd::make_node("ThnnFusedGruCellBackward0", {&gi, &gh, &hx}, AG_BW {
    Tensor gis = c.get(0), ghs = c.get(1), hs = c.get(2), w = c.get(3);
    const bool ni = c.needs_input_grad(0), nh = c.needs_input_grad(1), nx = c.needs_input_grad(2);
    if (!g[0].defined()) return {Tensor(), Tensor(), Tensor()};
    if (autograd::GradMode::is_enabled()) {
      const int64_t H = hs.sizes()[1];
      Tensor r = sigmoid(chunk(gis, 0, H) + chunk(ghs, 0, H)), z = sigmoid(chunk(gis, 1, H) + chunk(ghs, 1, H));
      Tensor hn = chunk(ghs, 2, H), n = tanh(chunk(gis, 2, H) + r * hn);
      Tensor go = g[0];
      Tensor dn = go * (1.0 - z) * (1.0 - n * n), dz = go * (hs - n) * z * (1.0 - z), dr = dn * hn * r * (1.0 - r);
      Tensor di = ni ? cat({dr, dz, dn}, 1) : Tensor();
      Tensor dh = nh ? cat({dr, dz, dn * r}, 1) : Tensor();
      Tensor dx = nx ? go * z : Tensor();
      return {di, dh, dx};
    }
    Tensor di = ni ? empty(gis.sizes(), gis.dtype(), gis.device()) : Tensor();
    Tensor dh = nh ? empty(ghs.sizes(), ghs.dtype(), ghs.device()) : Tensor();
    Tensor dx = nx ? empty(hs.sizes(), hs.dtype(), hs.device()) : Tensor();
    Tensor none;
    kernel<RnnCellBackwardKernel>(Op::gru_cell_fused_backward, hs.device())(flat(g[0]), none, flat(hs), none, w, di, dh, dx);
    return {di, dh, dx};
  });
  autograd::set_history(node, {&hy});
  node->save(gi);
  node->save(gh);
  node->save(hx);
  node->save(ws);
  return hy;
}

}  // namespace ampgrad
