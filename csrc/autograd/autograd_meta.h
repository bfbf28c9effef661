// A tensor's autograd metadata (Note [Autograd meta]): AutogradMeta implements the opaque
// AutogradMetaInterface that core's TensorImpl holds, and the Tensor accessors that read it are
// defined here and in autograd/autograd_meta.cpp (core/tensor.h declares them).
#pragma once
#include <memory>
#include <utility>
#include <vector>
#include "core/tensor.h"

namespace ampgrad {

struct AutogradMeta final : AutogradMetaInterface {
  bool requires_grad = false;
  Tensor grad;
  std::shared_ptr<autograd::Node> grad_fn;
  std::weak_ptr<autograd::Node> grad_accumulator;
  uint32_t output_nr = 0;
  bool retains_grad = false;
  bool is_view = false;
  Tensor base;                        // views: the tensor that owns the memory
  uint32_t attr_version = 0;          // views: the version grad_fn was made for (Note [View history])
  enum class Creation : uint8_t { Default, NoGrad, Inference, MultiOutput };  // MultiOutput: Note [Multi-output views]
  Creation creation = Creation::Default;  // views: the mode the view was made in (Note [View history])
  std::vector<std::pair<int, TensorHook>> leaf_hooks;  // hooks of a leaf (run before accumulation)
  int next_hook_id = 0;
  std::vector<std::pair<int, TensorHook>> post_accumulate_hooks;
  Tensor fw_grad;       // forward AD tangent, valid while fw_gen is the open level's (Note [Forward AD])
  uint64_t fw_gen = 0;
};

inline AutogradMeta* Tensor::autograd_meta() const { return static_cast<AutogradMeta*>(impl_->autograd.get()); }
inline bool Tensor::requires_grad() const {
  AutogradMeta* m = autograd_meta();
  if (!m) return false;
  // A view requires grad when its base does, even if made in no_grad (torch's rule).
  return m->requires_grad || (m->is_view && (m->grad_fn || m->base.requires_grad()));
}
inline uint32_t Tensor::output_nr() const { return impl_->autograd ? autograd_meta()->output_nr : 0; }
inline bool Tensor::is_view() const { return impl_->autograd && autograd_meta()->is_view; }

namespace autograd {
// Note [View history]: an in-place op on a base (or on a sibling view) leaves a view's grad_fn
// stale. Reading grad_fn of a view whose version moved since its grad_fn was set rebuilds it as
// an as_strided of the base's current history, as torch does (defined with the view ops).
void regenerate_view_grad_fn(const Tensor& view);
// An in-place op is about to be recorded on `view` (directly or, `indirect`, through its base or a
// sibling): raises torch's error when the view was made in no_grad or inference mode.
void check_view_rebase(const Tensor& view, bool indirect);
}  // namespace autograd

}  // namespace ampgrad
