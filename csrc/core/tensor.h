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

// Note [Autograd meta]: core holds a tensor's autograd state opaquely, as torch's TensorImpl holds
// autograd_meta_: TensorImpl::autograd is an AutogradMetaInterface, which autograd/ implements
// (AutogradMeta, autograd/autograd_meta.h). The Tensor accessors below that read it (autograd_meta,
// requires_grad, grad_fn, is_leaf, output_nr, is_view, base, ...) are declared here and defined
// with AutogradMeta in autograd/ (as torch defines TensorBase::grad_fn in autograd/variable.cpp);
// the inline ones need autograd/autograd_meta.h where they are used. Core never looks inside.
struct AutogradMetaInterface {
  virtual ~AutogradMetaInterface() = default;
};
struct AutogradMeta;  // autograd/autograd_meta.h

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
  inline bool requires_grad() const;
  void set_requires_grad(bool r);
  const std::shared_ptr<autograd::Node>& grad_fn() const;
  bool is_leaf() const;
  Tensor& mutable_grad() const;
  inline uint32_t output_nr() const;
  inline AutogradMeta* autograd_meta() const;
  AutogradMeta& ensure_autograd_meta() const;
  uint32_t version() const;
  void bump_version() const;
  bool is_inference() const;
  void check_inference_inplace() const;  // raises outside inference mode
  inline bool is_view() const;
  Tensor base() const;

 private:
  std::shared_ptr<TensorImpl> impl_;
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
  std::unique_ptr<AutogradMetaInterface> autograd;  // Note [Autograd meta]
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
inline uint32_t Tensor::version() const { return impl_->version->version; }
inline void Tensor::bump_version() const {
  if (impl_->inference) check_inference_inplace();
  ++impl_->version->version;
}
inline bool Tensor::is_inference() const { return impl_->inference; }

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
