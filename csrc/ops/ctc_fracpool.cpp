// CTC loss (torch's _ctc_loss: per-sample negative log likelihood, its backward torch's formula) and
// fractional max pooling (2-d and 3-d; the backward scatters at the forward's indices and is itself
// differentiable: a gather). Kernels: Note [CTC and fractional pool kernels]. torch's checks and
// messages, in torch's order (aten/src/ATen/native/LossCTC.cpp, FractionalMaxPool2d/3d.cpp).
#include <algorithm>
#include <limits>
#include <string>
#include "kernels/ctc_fracpool_args.h"
#include "ops/ctc_fracpool.h"
#include "ops/internal.h"

namespace ampgrad {

namespace {
using CA = CtcFracArgs;

void run(Op op, std::vector<Tensor> in, std::vector<Tensor> out, const CA& a) {
  kernel<CtcFracKernel>(op, in[0].device())(in.data(), out.data(), a);
}

Tensor cont(const Tensor& t) { return t.is_contiguous() ? t : contiguous(t); }

std::string sizes_str(const Tensor& t) {
  std::string r = "[";
  for (int64_t i = 0; i < t.dim(); ++i) r += (i ? ", " : "") + std::to_string(t.sizes()[static_cast<size_t>(i)]);
  return r + "]";
}

Tensor int64_tensor(const IntList& v, Device dev) {
  Tensor t = empty({static_cast<int64_t>(v.size())}, ScalarType::Int64, Device());
  std::copy(v.begin(), v.end(), t.data<int64_t>());
  return dev.type == DeviceType::CPU ? t : to_device(t, dev);
}

Tensor record_ctc(const Tensor& log_probs, Tensor nll, const Tensor& alpha, const Tensor& tg, const Tensor& il_t,
                  const Tensor& tl_t, const Tensor& off_t, const CtcFracArgs& a);

constexpr const char* kCtcFrom = " (while checking arguments for ctc_loss_allocate_outputs)";
}  // namespace

Tensor ctc_loss_nll(const Tensor& log_probs, const Tensor& targets, const IntList& input_lengths,
                    const IntList& target_lengths, int64_t blank, bool zero_infinity) {
  const ScalarType dt = log_probs.dtype();  // torch checks the dtype before the emptiness
  AG_CHECK_NOT_IMPL(dt == ScalarType::Float32 || dt == ScalarType::Float64, "\"ctc_loss_cpu\" not implemented for '",
                    scalar_type_name(dt), "'");
  AG_CHECK(log_probs.numel() > 0, "log_probs tensor must not be empty");
  AG_CHECK(log_probs.dim() == 3, "Expected 3-dimensional tensor, but got ", log_probs.dim(),
           "-dimensional tensor for argument #1 'log_probs'", kCtcFrom);
  AG_CHECK(targets.dim() >= 1 && targets.dim() <= 2, "Expected 1 to 2 dimensions, but got ", targets.dim(),
           "-dimensional tensor for argument #2 'targets'", kCtcFrom);
  check_same_device(log_probs, targets, "ctc_loss");
  const int64_t T = log_probs.sizes()[0], N = log_probs.sizes()[1], C = log_probs.sizes()[2];
  AG_CHECK(blank >= 0 && blank < C, "blank must be in label range");
  AG_CHECK(static_cast<int64_t>(input_lengths.size()) == N, "input_lengths must be of size batch_size");
  AG_CHECK(static_cast<int64_t>(target_lengths.size()) == N, "target_lengths must be of size batch_size");
  Tensor tg;
  {
    autograd::AutoGradMode off(false);
    tg = contiguous(to_dtype(detach(targets), ScalarType::Int64));
  }
  IntList offsets(static_cast<size_t>(N), 0);
  int64_t max_target = 0;
  for (int64_t b = 0; b < N; ++b) {
    const int64_t L = target_lengths[static_cast<size_t>(b)];
    AG_CHECK(L >= 0, "Expected target_lengths to have value at least 0, but got value ", L, kCtcFrom);
    max_target = std::max(max_target, L);
  }
  if (tg.dim() == 1) {
    int64_t pos = 0;
    for (int64_t b = 0; b < N; ++b) {
      offsets[static_cast<size_t>(b)] = pos;
      pos += target_lengths[static_cast<size_t>(b)];
    }
    AG_CHECK(tg.sizes()[0] == pos, "Expected tensor to have size ", pos, " at dimension 0, but got size ", tg.sizes()[0],
             " for argument #2 'targets'", kCtcFrom);
  } else {
    AG_CHECK(tg.sizes()[0] == N, "Expected tensor to have size ", N, " at dimension 0, but got size ", tg.sizes()[0],
             " for argument #2 'targets'", kCtcFrom);
    AG_CHECK(tg.sizes()[1] >= max_target, "Expected tensor to have size at least ", max_target,
             " at dimension 1, but got size ", tg.sizes()[1], " for argument #2 'targets'", kCtcFrom);
    for (int64_t b = 0; b < N; ++b) offsets[static_cast<size_t>(b)] = b * tg.sizes()[1];
  }
  for (int64_t b = 0; b < N; ++b) {
    const int64_t il = input_lengths[static_cast<size_t>(b)];
    AG_CHECK(il >= 0, "Expected input_lengths to have value at least 0, but got value ", il, kCtcFrom);
    AG_CHECK(il <= T, "Expected input_lengths to have value at most ", T, ", but got value ", il, kCtcFrom);
  }
  // torch reads a label outside [0, C) out of bounds; ampgrad refuses it (only the first target_length
  // labels of each sample are read, so padding may hold anything)
  {
    const int64_t* p = tg.data<int64_t>();
    for (int64_t b = 0; b < N; ++b)
      for (int64_t s = 0; s < target_lengths[static_cast<size_t>(b)]; ++s) {
        const int64_t v = p[offsets[static_cast<size_t>(b)] + s];
        AG_CHECK_INDEX(v >= 0 && v < C, "ctc_loss: target ", v, " (sample ", b, ", position ", s,
                       ") is out of the label range [0, ", C, ")");
      }
  }
  CA a;
  Tensor nll, alpha, il_t, tl_t, off_t;
  {
    autograd::AutoGradMode off(false);
    Tensor lp = cont(detach(log_probs));
    il_t = int64_tensor(input_lengths, log_probs.device());
    tl_t = int64_tensor(target_lengths, log_probs.device());
    off_t = int64_tensor(offsets, log_probs.device());
    a.mode = CA::kCtcForward;
    a.T = T;
    a.N = N;
    a.C = C;
    a.blank = blank;
    a.target_stride = 1;
    a.alpha_width = 2 * max_target + 1;
    a.zero_infinity = zero_infinity;
    nll = empty({N}, dt, log_probs.device());
    alpha = empty({N, T, a.alpha_width}, dt, log_probs.device());
    run(Op::ctc_loss, {lp, tg, il_t, tl_t, off_t}, {nll, alpha}, a);
  }
  return record_ctc(log_probs, nll, alpha, tg, il_t, tl_t, off_t, a);
}

namespace {
// The autograd record of ctc_loss_nll (made with grad mode as the caller has it).
Tensor record_ctc(const Tensor& log_probs, Tensor nll, const Tensor& alpha, const Tensor& tg, const Tensor& il_t,
                  const Tensor& tl_t, const Tensor& off_t, const CA& a) {
  if (auto node = autograd::make_node("CtcLossBackward0", {&log_probs}, AG_BW {
        Tensor gy = g[0], lpv = c.get(0), nllv = c.get(1);
        CA b = a;
        b.mode = CA::kCtcBackward;
        Tensor gx;
        {
          autograd::AutoGradMode off(false);
          gx = empty({b.T, b.N, b.C}, lpv.dtype(), lpv.device());
          run(Op::ctc_loss, {cont(to_dtype(detach(gy), lpv.dtype())), cont(detach(lpv)), tg, il_t, tl_t, off_t, cont(detach(nllv)), alpha},
              {gx}, b);
        }
        if (auto nn = autograd::make_node("NotImplemented", {&gy, &lpv}, AG_BW {
              AG_THROW(RuntimeError, "derivative for aten::_ctc_loss_backward is not implemented");
              return variable_list{};
            }))
          autograd::set_history(nn, {&gx});
        return variable_list{gx};
      })) {
    autograd::set_history(node, {&nll});
    node->save(log_probs);
    node->save(nll, true);
  }
  return nll;
}
}  // namespace

std::pair<Tensor, Tensor> fractional_max_pool(const Tensor& x, const IntList& kernel, const IntList& output_size,
                                              const Tensor& samples, int nd) {
  const bool three = nd == 3;
  const char* fn = three ? "fractional_max_pool3d" : "fractional_max_pool2d";
  AG_CHECK(static_cast<int>(kernel.size()) == nd, fn, ": kernel_size must either be a single Int or tuple of ",
           three ? "three Ints" : "Ints");
  AG_CHECK(static_cast<int>(output_size.size()) == nd, fn, ": output_size must either be a single Int or tuple of ",
           three ? "three Ints" : "Ints");
  const int64_t ndim = x.dim();
  AG_CHECK(ndim == nd + 1 || ndim == nd + 2, fn, "(): Expected ", nd + 1, "D or ", nd + 2, "D tensor, but got: ", sizes_str(x));
  for (int64_t i = 1; i < ndim; ++i)
    AG_CHECK(x.sizes()[static_cast<size_t>(i)] > 0, fn, "(): Expected input to have non-zero size for non-batch dimensions, but got",
             sizes_str(x), " with dimension ", i, " being empty.");
  const bool batched = ndim == nd + 2;
  const int64_t N = batched ? x.sizes()[0] : 1, C = x.sizes()[batched ? 1 : 0];
  AG_CHECK(samples.dim() == 3, "Expect _random_samples to have 3 dimensions, got ", samples.dim());
  AG_CHECK(samples.dtype() == x.dtype(), "Expect _random_samples to have the same dtype as input");
  AG_CHECK(samples.sizes()[0] >= N, "Expect _random_samples.size(0) no less then input batch size.");
  AG_CHECK(samples.sizes()[1] == C, "Expect _random_samples.size(1) equals to input channel size.");
  AG_CHECK(samples.sizes()[2] == nd, "Expect _random_samples.size(2) equals to ", nd, "; got ", samples.sizes()[2], ".");
  check_same_device(x, samples, fn);
  CA a;
  a.mode = CA::kFracPool;
  a.nd = nd;
  a.planes = N * C;
  const int64_t off = ndim - nd;
  for (int i = 0; i < nd; ++i) {
    const int slot = three ? i : i + 1;
    a.in[slot] = x.sizes()[static_cast<size_t>(off + i)];
    a.out[slot] = output_size[static_cast<size_t>(i)];
    a.k[slot] = kernel[static_cast<size_t>(i)];
  }
  static const char* dim_names[3] = {"time", "height", "width"};
  for (int slot = three ? 0 : 1; slot < 3; ++slot) {
    if (three)
      AG_CHECK(a.out[slot] + a.k[slot] - 1 < a.in[slot], "fractional_max_pool3d_out(): pool ", dim_names[slot], " ", a.k[slot],
               " too large relative to input ", dim_names[slot], " ", a.in[slot]);
    else
      AG_CHECK(a.out[slot] + a.k[slot] - 1 <= a.in[slot], "fractional_max_pool2d(): pool ", dim_names[slot], " ", a.k[slot],
               " too large relative to input ", dim_names[slot], " ", a.in[slot]);
  }
  Shape out_shape(x.sizes().begin(), x.sizes().begin() + off);
  for (int i = 0; i < nd; ++i) {
    const int64_t o = output_size[static_cast<size_t>(i)];
    out_shape.push_back(o);
  }
  for (int64_t o : out_shape)
    AG_CHECK(o >= 0, "Trying to create tensor with negative dimension ", o, ": ", [&] {
      std::string r = "[";
      for (size_t i = 0; i < out_shape.size(); ++i) r += (i ? ", " : "") + std::to_string(out_shape[i]);
      return r + "]";
    }());
  Tensor out, idx;
  {
    autograd::AutoGradMode off_(false);
    out = empty(out_shape, x.dtype(), x.device());
    idx = empty(out_shape, ScalarType::Int64, x.device());
    if (out.numel() > 0) {
      Tensor s = cont(detach(samples));
      if (s.sizes()[0] != N) s = cont(narrow(s, 0, 0, N));
      run(three ? Op::fractional_max_pool3d : Op::fractional_max_pool2d, {cont(detach(x)), s}, {out, idx}, a);
    }
  }
  const Shape in_shape(x.sizes().begin(), x.sizes().end());
  const int64_t NC = N * C, Li = a.in[0] * a.in[1] * a.in[2], Lo = a.out[0] * a.out[1] * a.out[2];
  auto gather_at = [=](const Tensor& t) { return reshape(gather(reshape(t, {NC, Li}), 1, reshape(idx, {NC, Lo})), out_shape); };
  fw_rule(out, {&x}, [&](const variable_list& t) { return gather_at(t[0]); });
  if (is_floating(out.dtype()))
    if (auto node = autograd::make_node(three ? "FractionalMaxPool3DBackward0" : "FractionalMaxPool2DBackward0", {&x}, AG_BW {
          Tensor gy = g[0], gx;
          {
            autograd::AutoGradMode off(false);
            gx = reshape(scatter_add(full({NC, Li}, Scalar(0), gy.dtype(), gy.device()), 1, reshape(idx, {NC, Lo}),
                                     reshape(contiguous(detach(gy)), {NC, Lo})),
                         in_shape);
          }
          fw_rule(gx, {&gy}, [&](const variable_list& t) {
            return reshape(scatter_add(full({NC, Li}, Scalar(0), t[0].dtype(), t[0].device()), 1, reshape(idx, {NC, Lo}),
                                       reshape(t[0], {NC, Lo})), in_shape);
          });
          if (auto n2 = autograd::make_node(three ? "FractionalMaxPool3DBackwardBackward0" : "FractionalMaxPool2DBackwardBackward0",
                                            {&gy}, AG_BW { return variable_list{gather_at(g[0])}; }))
            autograd::set_history(n2, {&gx});
          return variable_list{gx};
        }))
      autograd::set_history(node, {&out});
  return {out, idx};
}

}  // namespace ampgrad
