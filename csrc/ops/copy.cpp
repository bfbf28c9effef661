// Scalars, casts and copies: scalar_tensor / wrap_scalar / item_double, to_dtype, to_device,
// clone, contiguous, copy_, zeros_like / ones_like.
#include <cmath>
#include "ops/internal.h"

namespace ampgrad {

Tensor scalar_tensor(Scalar s, ScalarType dtype, Device device) { return full({}, s, dtype, device); }

void check_scalar_fits(Scalar s, ScalarType dtype) {
  static const char* names[] = {"bool", "uint8_t", "int8_t", "int16_t", "int", "int64_t", "c10::Half", "c10::BFloat16", "float", "double",
                                "uint16_t", "uint32_t", "uint64_t"};
  // c10::overflows: an integer Scalar may wrap into uint8 from down to -255 (two's complement); a float
  // Scalar must lie in [lowest, max] of an integer dtype (NaN and inf never fit one), while a floating
  // dtype takes inf and NaN.
  const bool from_float = s.kind == Scalar::Float;
  double lo = 0, hi = 0;
  switch (dtype) {
    case ScalarType::UInt8: lo = from_float ? 0 : -255; hi = 255; break;
    case ScalarType::Int8: lo = -128; hi = 127; break;
    case ScalarType::Int16: lo = -32768; hi = 32767; break;
    case ScalarType::Int32: lo = -2147483648.0; hi = 2147483647.0; break;
    // The barebones unsigned dtypes wrap an int Scalar down to -(max) as uint8 does (c10::overflows
    // for unsigned types); an int64 Scalar fits uint64 from -2**63 on.
    case ScalarType::UInt16: lo = from_float ? 0 : -65535; hi = 65535; break;
    case ScalarType::UInt32: lo = from_float ? 0 : -4294967295.0; hi = 4294967295.0; break;
    case ScalarType::UInt64:
      if (!from_float) return;
      lo = 0; hi = 18446744073709551615.0; break;
    case ScalarType::Int64:
      if (!from_float) return;  // an int64 Scalar always fits
      lo = -9223372036854775808.0; hi = 9223372036854775807.0; break;
    case ScalarType::Float16: lo = -65504; hi = 65504; break;
    case ScalarType::BFloat16: lo = -3.3895313892515355e38; hi = 3.3895313892515355e38; break;
    case ScalarType::Float32: lo = -static_cast<double>(std::numeric_limits<float>::max()); hi = -lo; break;
    default: return;  // bool (anything converts), float64
  }
  double v = from_float ? s.d : static_cast<double>(s.i);
  if (is_floating(dtype) && !std::isfinite(v)) return;
  AG_CHECK(v >= lo && v <= hi, "value cannot be converted to type ", names[static_cast<int>(dtype)], " without overflow");
}

Tensor wrap_scalar(Scalar s) {
  Tensor t = full({}, s, s.dtype());
  t.impl()->wrapped_number = true;
  return t;
}

double item_double(const Tensor& t) {
  AG_CHECK(t.numel() == 1, "a Tensor with ", t.numel(), " elements cannot be converted to Scalar");
  Tensor c = t.device().is_cpu() ? t : to_device(t, Device());
  double v = 0;
  AG_DISPATCH_ALL_U(c.dtype(), "item", [&] { v = static_cast<double>(static_cast<acc_t<scalar_t>>(*c.data<scalar_t>())); });
  return v;
}

// ---------------------------------------------------------------- casts and copies
// A copy keeps src's strides when src is non-overlapping and dense, and src's dim order otherwise
// (torch's preserve_format for clone() and to()); contiguous_out asks for row-major.
static Tensor copy_kernel_out(const Tensor& src, ScalarType dtype, bool contiguous_out = false) {
  Shape st = contiguous_out ? contiguous_strides(src.sizes())
             : is_non_overlapping_and_dense(src) ? src.strides() : output_strides(src.sizes(), {&src});
  Tensor out = empty_strided(src.sizes(), st, dtype, src.device());
  run_elementwise(Op::copy, out, {&src});
  return out;
}

Tensor to_dtype(const Tensor& t, ScalarType dtype, bool copy) {
  if (t.dtype() == dtype && !copy) return t;
  Tensor out = copy_kernel_out(t, dtype);
  fw_rule(out, {&t}, [&](const variable_list& tt) { return to_dtype(tt[0], dtype, true); });
  if (is_floating(dtype)) {
    ScalarType from = t.dtype();
    if (auto node = autograd::make_node("ToCopyBackward0", {&t}, AG_BW { return {to_dtype(g[0], from)}; }))
      autograd::set_history(node, {&out});
  }
  return out;
}

Tensor clone(const Tensor& t) {
  Tensor out = copy_kernel_out(t, t.dtype());
  fw_rule(out, {&t}, [](const variable_list& tt) { return clone(tt[0]); });
  if (auto node = autograd::make_node("CloneBackward0", {&t}, AG_BW { return {g[0]}; }))
    autograd::set_history(node, {&out});
  return out;
}

Tensor contiguous(const Tensor& t) {
  if (t.is_contiguous()) return t;
  Tensor out = copy_kernel_out(t, t.dtype(), true);
  fw_rule(out, {&t}, [](const variable_list& tt) { return contiguous(tt[0]); });
  if (auto node = autograd::make_node("CloneBackward0", {&t}, AG_BW { return {g[0]}; }))
    autograd::set_history(node, {&out});
  return out;
}

Tensor& copy_(Tensor& self, const Tensor& src0) {
  check_same_device(self, src0, "copy_");
  expand(src0, self.sizes());  // raises torch's "The expanded size of the tensor ..." when src does not broadcast
  check_inplace_operands(self, {&src0});
  bool grad = autograd::GradMode::is_enabled() && (self.requires_grad() || src0.requires_grad());
  if (grad) check_inplace(self, "copy_", true);
  Tensor src = expand(src0, self.sizes());
  if (src.device() != self.device()) src = to_device(src, self.device());
  if (!grad) {
    autograd::before_mutation(self);
    run_elementwise(Op::copy, self, {&src});
    self.bump_version();
    fw_inplace(self, src0);
    return self;
  }
  // Differentiable copy: self's old history gets zero, src the gradient (the engine reduces the
  // broadcast and casts to src's dtype).
  Device sd = src0.device();
  auto node = autograd::make_node("torch::autograd::CopyBackwards", {&self, &src0}, AG_BW {
    Tensor gs;
    if (c.needs_input_grad(1)) gs = g[0].device() == sd ? g[0] : to_device(g[0], sd);
    return {c.needs_input_grad(0) ? zeros_like(g[0]) : Tensor(), gs};
  });
  {
    autograd::AutoGradMode off(false);
    run_elementwise(Op::copy, self, {&src});
  }
  self.bump_version();
  Tensor r = detach(self);
  autograd::set_history(node, {&r});
  rebase_history(self, r);
  fw_inplace(self, src0);
  return self;
}

Tensor zeros_like(const Tensor& a) { return full(a.sizes(), Scalar(0.0), a.dtype(), a.device()); }
Tensor ones_like(const Tensor& a) { return full(a.sizes(), Scalar(1.0), a.dtype(), a.device()); }

Tensor to_device(const Tensor& t, Device device, bool copy) {
  if (t.device() == device) return copy ? clone(t) : t;
  if (device.is_cuda()) AG_CHECK(cuda::is_available(), "Torch not compiled with CUDA enabled");
  Tensor src = contiguous(detach(t));
  Tensor out = empty(t.sizes(), t.dtype(), device);
  cuda::memcpy_device(out.data_ptr(), out.device(), src.data_ptr(), src.device(), static_cast<size_t>(t.numel() * itemsize(t.dtype())));
  Device from = t.device();
  fw_rule(out, {&t}, [&](const variable_list& tt) { return to_device(tt[0], device); });
  if (is_floating(t.dtype()))
    if (auto node = autograd::make_node("ToCopyBackward0", {&t}, AG_BW { return {to_device(g[0], from)}; }))
      autograd::set_history(node, {&out});
  return out;
}

}  // namespace ampgrad
