// The Tensor accessors of a tensor's autograd metadata (Note [Autograd meta]): core/tensor.h
// declares them, autograd defines them (as torch defines TensorBase::grad_fn with its Variable).
#include "autograd/autograd_meta.h"
#include "autograd/grad_mode.h"

namespace ampgrad {

AutogradMeta& Tensor::ensure_autograd_meta() const {
  if (!impl_->autograd) impl_->autograd = std::make_unique<AutogradMeta>();
  return *autograd_meta();
}

void Tensor::set_requires_grad(bool r) {
  if (r) AG_CHECK(is_floating(dtype()), "only Tensors of floating point and complex dtype can require gradients");
  if (r && is_inference() && !autograd::InferenceMode::is_enabled())
    AG_THROW(RuntimeError, "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.");
  if (!r && !impl_->autograd) return;
  ensure_autograd_meta().requires_grad = r;
}
const std::shared_ptr<autograd::Node>& Tensor::grad_fn() const {
  static const std::shared_ptr<autograd::Node> none;
  AutogradMeta* m = autograd_meta();
  if (!m) return none;
  if (m->is_view && m->attr_version != impl_->version->version) autograd::regenerate_view_grad_fn(*this);
  return m->grad_fn;
}
bool Tensor::is_leaf() const { return !grad_fn(); }
Tensor& Tensor::mutable_grad() const { return ensure_autograd_meta().grad; }
Tensor Tensor::base() const { return impl_->autograd && autograd_meta()->is_view ? autograd_meta()->base : Tensor(); }

}  // namespace ampgrad
