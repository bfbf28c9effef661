// TensorImpl bookkeeping, allocation and views.
#include "core/tensor.h"
#include <limits>
#include <algorithm>
#include <climits>
#include <sstream>
#include "core/autograd_state.h"

namespace ampgrad {

TensorImpl::~TensorImpl() = default;

void TensorImpl::refresh() {
  numel = shape_numel(sizes);
  contiguous = true;
  int64_t expected = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) { contiguous = false; break; }
    expected *= sizes[d];
  }
  if (numel == 0) contiguous = true;
}

int64_t Tensor::size(int64_t d) const { return impl_->sizes[wrap_dim(d, dim())]; }
int64_t Tensor::stride(int64_t d) const { return impl_->strides[wrap_dim(d, dim())]; }

// Note [Inference tensors]: tensors allocated in inference mode (and views of them) have no
// autograd life: outside inference mode they cannot be written in place, require grad, or be
// saved for backward (torch's rules; the checks sit at bump_version, here and SavedVariable).
void Tensor::check_inference_inplace() const {
  if (!inference_mode_enabled())
    AG_THROW(RuntimeError, "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone "
             "to get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details.");
}

Shape contiguous_strides(const Shape& sizes) {
  Shape st(sizes.size());
  int64_t acc = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    st[d] = acc;
    // saturated on overflow (UBSan found the plain product): the size checks of Note [Checked sizes] then refuse
    if (__builtin_mul_overflow(acc, std::max<int64_t>(sizes[d], 1), &acc)) acc = std::numeric_limits<int64_t>::max();
  }
  return st;
}

// Note [Checked sizes]: every element count and storage size is computed here, with overflow
// checks (torch's safe_compute_numel / computeStorageNbytes), so a huge size raises RuntimeError
// instead of wrapping around into a small allocation that later kernels overrun.
int64_t shape_numel(const Shape& sizes) {
  int64_t n = 1;
  bool overflow = false;
  for (auto s : sizes) overflow |= __builtin_mul_overflow(n, s, &n);
  if (overflow) {
    for (auto s : sizes) if (s == 0) return 0;
    AG_THROW(RuntimeError, "numel: integer multiplication overflow");
  }
  return n;
}

size_t storage_nbytes(const Shape& sizes, const Shape& strides, size_t itemsize) {
  // Bytes spanned by the elements: (1 + sum (size_d - 1) * stride_d) * itemsize, or 0 when empty.
  for (auto s : sizes) if (s == 0) return 0;
  uint64_t last = 0;
  bool overflow = false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    uint64_t term;
    overflow |= __builtin_mul_overflow(static_cast<uint64_t>(sizes[d] - 1), static_cast<uint64_t>(strides[d]), &term);
    overflow |= __builtin_add_overflow(last, term, &last);
  }
  uint64_t bytes;
  overflow |= __builtin_add_overflow(last, uint64_t(1), &last);
  overflow |= __builtin_mul_overflow(last, static_cast<uint64_t>(itemsize), &bytes);
  // Allocations are limited to what an int64 byte count can address (torch's limit too).
  if (overflow || bytes > static_cast<uint64_t>(INT64_MAX))
    AG_THROW(RuntimeError, "Storage size calculation overflowed with sizes=", shape_str(sizes));
  return static_cast<size_t>(bytes);
}

// Note [Fresh tensor block]: a new tensor's Storage and VersionCounter live in one allocation (two
// aliasing shared_ptrs): every op output pays one heap allocation for them instead of two.
namespace {
struct StorageAndVersion {
  Storage storage;
  VersionCounter version;
};
}  // namespace

Tensor empty_strided(Shape sizes, Shape strides, ScalarType dtype, Device device) {
  for (auto s : sizes) AG_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", shape_str(sizes));
  for (auto s : strides) AG_CHECK(s >= 0, "empty_strided: negative strides are not supported: ", shape_str(strides));
  const size_t nbytes = storage_nbytes(sizes, strides, itemsize(dtype));  // Note [Checked sizes]
  auto impl = std::make_shared<TensorImpl>();
  impl->sizes = std::move(sizes);
  impl->strides = std::move(strides);
  impl->dtype = dtype;
  impl->inference = inference_mode_enabled();
  impl->refresh();
  auto block = std::make_shared<StorageAndVersion>();
  Storage::allocate_into(block->storage, nbytes, device);
  if (AllocHook hook = alloc_hook()) hook(block->storage.nbytes);  // Note [Allocation hook]
  impl->storage = std::shared_ptr<Storage>(block, &block->storage);
  impl->version = std::shared_ptr<VersionCounter>(block, &block->version);
  return Tensor(std::move(impl));
}

Tensor empty(Shape sizes, ScalarType dtype, Device device) {
  Shape st = contiguous_strides(sizes);
  return empty_strided(std::move(sizes), std::move(st), dtype, device);
}

Tensor empty_like(const Tensor& t) { return empty(t.sizes(), t.dtype(), t.device()); }

bool is_non_overlapping_and_dense(const Tensor& t) {
  if (t.is_contiguous()) return true;
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.sizes()[d] != 1) dims.push_back(d);
  std::sort(dims.begin(), dims.end(), [&](int64_t a, int64_t b) { return t.strides()[a] < t.strides()[b]; });
  int64_t expected = 1;
  for (int64_t d : dims) {
    if (t.strides()[d] != expected) return false;
    expected *= t.sizes()[d];
  }
  return true;
}

Tensor make_view(const Tensor& base, Shape sizes, Shape strides, int64_t offset) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = base.storage();
  impl->sizes = std::move(sizes);
  impl->strides = std::move(strides);
  impl->offset = offset;
  impl->dtype = base.dtype();
  impl->version = base.impl()->version;
  impl->inference = base.impl()->inference;
  impl->refresh();
  return Tensor(std::move(impl));
}

Tensor detach(const Tensor& t) {
  Tensor out = make_view(t, t.sizes(), t.strides(), t.storage_offset());
  out.impl()->wrapped_number = t.impl()->wrapped_number;
  return out;
}

int64_t wrap_dim(int64_t dim, int64_t ndim, bool scalar_ok) {
  int64_t n = ndim;
  if (n == 0 && scalar_ok) n = 1;
  if (n == 0) AG_THROW(IndexError, "Dimension specified as ", dim, " but tensor has no dimensions");
  if (dim < -n || dim >= n)
    AG_THROW(IndexError, "Dimension out of range (expected to be in range of [", -n, ", ", n - 1, "], but got ", dim, ")");
  return dim < 0 ? dim + n : dim;
}

std::string shape_str(const Shape& s) {
  std::ostringstream ss;
  ss << "[";
  for (size_t i = 0; i < s.size(); ++i) ss << (i ? ", " : "") << s[i];
  ss << "]";
  return ss.str();
}

}  // namespace ampgrad
