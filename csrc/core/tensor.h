// Tensor = shared handle to a TensorImpl: strided view (sizes, strides, offset) of a Storage, a
// version counter shared with its views, and autograd metadata when it takes part in a graph.
#pragma once
#include <functional>
#include <memory>
#include <vector>
#include "core/dtype.h"
#include "core/storage.h"

namespace ampgrad {

namespace autograd { struct Node; }
using Shape = std::vector<int64_t>;
struct TensorImpl;
class Tensor;

// Note [Version counter]: shared by a tensor and all its views; every in-place op bumps it, and a
// saved tensor whose version moved since it was saved refuses to unpack.
struct VersionCounter { uint32_t version = 0; };

using TensorHook = std::function<Tensor(const Tensor&)>;  // may return an undefined tensor: keep grad

struct AutogradMeta;

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}
  bool defined() const { return impl_ != nullptr; }
  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }

  const Shape& sizes() const;
  const Shape& strides() const;
  int64_t size(int64_t d) const;
  int64_t stride(int64_t d) const;
  int64_t dim() const;
  int64_t numel() const;
  int64_t storage_offset() const;
  ScalarType dtype() const;
  Device device() const;
  bool is_contiguous() const;
  bool is_floating_point() const { return is_floating(dtype()); }
  void* data_ptr() const;  // address of element 0 (storage + offset)
  template <typename T> T* data() const { return static_cast<T*>(data_ptr()); }
  const std::shared_ptr<Storage>& storage() const;

  // autograd
  bool requires_grad() const;
  void set_requires_grad(bool r);
  const std::shared_ptr<autograd::Node>& grad_fn() const;
  bool is_leaf() const;
  Tensor& mutable_grad() const;
  uint32_t output_nr() const;
  AutogradMeta* autograd_meta() const;
  AutogradMeta& ensure_autograd_meta() const;
  uint32_t version() const;
  void bump_version() const;
  bool is_inference() const;
  void check_inference_inplace() const;  // raises outside inference mode
  bool is_view() const;
  Tensor base() const;

 private:
  std::shared_ptr<TensorImpl> impl_;
};

struct AutogradMeta {
  bool requires_grad = false;
  Tensor grad;
  std::shared_ptr<autograd::Node> grad_fn;
  std::weak_ptr<autograd::Node> grad_accumulator;
  uint32_t output_nr = 0;
  bool retains_grad = false;
  bool is_view = false;
  Tensor base;                        // views: the tensor that owns the memory
  uint32_t attr_version = 0;          // views: the version grad_fn was made for (Note [View history])
  enum class Creation : uint8_t { Default, NoGrad, Inference };
  Creation creation = Creation::Default;  // views: the mode the view was made in (Note [View history])
  std::vector<std::pair<int, TensorHook>> leaf_hooks;  // hooks of a leaf (run before accumulation)
  int next_hook_id = 0;
  std::vector<std::pair<int, TensorHook>> post_accumulate_hooks;
  Tensor fw_grad;       // forward AD tangent, valid while fw_gen is the open level's (Note [Forward AD])
  uint64_t fw_gen = 0;
};

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  Shape sizes, strides;
  int64_t offset = 0;  // in elements
  int64_t numel = 1;
  ScalarType dtype = ScalarType::Float32;
  bool contiguous = true;
  bool wrapped_number = false;  // a Python scalar promoted to a 0-dim tensor (weak dtype)
  bool inference = false;       // made in inference mode (Note [Inference tensors])
  std::shared_ptr<VersionCounter> version;
  std::unique_ptr<AutogradMeta> autograd;
  void refresh();  // recompute numel / contiguity after a metadata change
  ~TensorImpl();
};

inline const Shape& Tensor::sizes() const { return impl_->sizes; }
inline const Shape& Tensor::strides() const { return impl_->strides; }
inline int64_t Tensor::dim() const { return static_cast<int64_t>(impl_->sizes.size()); }
inline int64_t Tensor::numel() const { return impl_->numel; }
inline int64_t Tensor::storage_offset() const { return impl_->offset; }
inline ScalarType Tensor::dtype() const { return impl_->dtype; }
inline Device Tensor::device() const { return impl_->storage->device; }
inline bool Tensor::is_contiguous() const { return impl_->contiguous; }
inline const std::shared_ptr<Storage>& Tensor::storage() const { return impl_->storage; }
inline void* Tensor::data_ptr() const {
  return static_cast<char*>(impl_->storage->data) + impl_->offset * itemsize(impl_->dtype);
}
inline AutogradMeta* Tensor::autograd_meta() const { return impl_->autograd.get(); }
inline bool Tensor::requires_grad() const {
  AutogradMeta* m = impl_->autograd.get();
  if (!m) return false;
  // A view requires grad when its base does, even if made in no_grad (torch's rule).
  return m->requires_grad || (m->is_view && (m->grad_fn || m->base.requires_grad()));
}
inline uint32_t Tensor::version() const { return impl_->version->version; }
inline void Tensor::bump_version() const {
  if (impl_->inference) check_inference_inplace();
  ++impl_->version->version;
}
inline bool Tensor::is_inference() const { return impl_->inference; }
inline uint32_t Tensor::output_nr() const { return impl_->autograd ? impl_->autograd->output_nr : 0; }
inline bool Tensor::is_view() const { return impl_->autograd && impl_->autograd->is_view; }

namespace autograd {
// Note [View history]: an in-place op on a base (or on a sibling view) leaves a view's grad_fn
// stale. Reading grad_fn of a view whose version moved since its grad_fn was set rebuilds it as
// an as_strided of the base's current history, as torch does (defined with the view ops).
void regenerate_view_grad_fn(const Tensor& view);
// An in-place op is about to be recorded on `view` (directly or, `indirect`, through its base or a
// sibling): raises torch's error when the view was made in no_grad or inference mode.
void check_view_rebase(const Tensor& view, bool indirect);
}  // namespace autograd

// Construction
Shape contiguous_strides(const Shape& sizes);
int64_t shape_numel(const Shape& sizes);  // RuntimeError on overflow (Note [Checked sizes])
size_t storage_nbytes(const Shape& sizes, const Shape& strides, size_t itemsize);  // likewise
Tensor empty(Shape sizes, ScalarType dtype, Device device = Device());
Tensor empty_like(const Tensor& t);  // contiguous, same dtype/device
// `strides` must be a permutation of a dense layout of `sizes` (the storage holds numel elements).
Tensor empty_strided(Shape sizes, Shape strides, ScalarType dtype, Device device = Device());
// Every element has its own address and together they fill a block (any dim order): torch's
// is_non_overlapping_and_dense, which decides whether clone() / to() keep a tensor's strides.
bool is_non_overlapping_and_dense(const Tensor& t);
// A view of `base`'s storage with new geometry; shares the version counter (autograd view
// bookkeeping is done by the ops that create views).
Tensor make_view(const Tensor& base, Shape sizes, Shape strides, int64_t offset);
Tensor detach(const Tensor& t);  // shares storage + version, no autograd
// Note [Dim wrapping]: the one place a dim argument is checked and wrapped. By default a 0-d tensor
// has no dims (IndexError, as torch's maybe_wrap_dim(wrap_scalar=false)); an op that accepts dim 0/-1
// on a 0-d tensor (reductions, scans, softmax, transpose, gather/scatter, index_select...) says so
// with kScalarOk and must not index sizes()/strides() with the result.
constexpr bool kScalarOk = true;
int64_t wrap_dim(int64_t dim, int64_t ndim, bool scalar_ok = false);
std::string shape_str(const Shape& s);

}  // namespace ampgrad
