// DLPack capsules both ways (zero-copy): _to_dlpack exports a tensor as a "dltensor" or
// "dltensor_versioned" capsule that holds a reference to the tensor's storage until the consumer
// calls the deleter; _from_dlpack wraps a producer's memory in a Storage whose owner calls the
// producer's deleter. The Python protocol (__dlpack__, from_dlpack) is in python/ampgrad/_dlpack.py.
#include "autograd/grad_mode.h"
#include "bindings/convert.h"
#include "bindings/dlpack.h"

namespace ampgrad::bind {

namespace {

constexpr const char* kName = "dltensor";
constexpr const char* kUsedName = "used_dltensor";
constexpr const char* kNameV = "dltensor_versioned";
constexpr const char* kUsedNameV = "used_dltensor_versioned";

DLDataType to_dl(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return {kDLBool, 8, 1};
    case ScalarType::UInt8: return {kDLUInt, 8, 1};
    case ScalarType::Int8: return {kDLInt, 8, 1};
    case ScalarType::Int16: return {kDLInt, 16, 1};
    case ScalarType::Int32: return {kDLInt, 32, 1};
    case ScalarType::Int64: return {kDLInt, 64, 1};
    case ScalarType::Float16: return {kDLFloat, 16, 1};
    case ScalarType::BFloat16: return {kDLBfloat, 16, 1};
    case ScalarType::Float32: return {kDLFloat, 32, 1};
    case ScalarType::Float64: return {kDLFloat, 64, 1};
    case ScalarType::UInt16: return {kDLUInt, 16, 1};
    case ScalarType::UInt32: return {kDLUInt, 32, 1};
    case ScalarType::UInt64: return {kDLUInt, 64, 1};
    default: throw py::buffer_error("Unsupported ScalarType for DLPack");
  }
}

ScalarType from_dl(DLDataType d) {
  if (d.lanes != 1) throw py::buffer_error("ampgrad does not support lanes != 1 in DLPack (got " + std::to_string(d.lanes) + ")");
  const int b = d.bits;
  switch (d.code) {
    case kDLBool: if (b == 8) return ScalarType::Bool; break;
    case kDLUInt:
      if (b == 8) return ScalarType::UInt8;
      if (b == 16) return ScalarType::UInt16;
      if (b == 32) return ScalarType::UInt32;
      if (b == 64) return ScalarType::UInt64;
      break;
    case kDLInt:
      if (b == 8) return ScalarType::Int8;
      if (b == 16) return ScalarType::Int16;
      if (b == 32) return ScalarType::Int32;
      if (b == 64) return ScalarType::Int64;
      break;
    case kDLFloat:
      if (b == 16) return ScalarType::Float16;
      if (b == 32) return ScalarType::Float32;
      if (b == 64) return ScalarType::Float64;
      break;
    case kDLBfloat: if (b == 16) return ScalarType::BFloat16; break;
    default: break;
  }
  static const char* codes[] = {"kDLInt", "kDLUInt", "kDLFloat", "kDLOpaqueHandle", "kDLBfloat", "kDLComplex", "kDLBool"};
  const std::string code = d.code < 7 ? codes[d.code] : "code " + std::to_string(d.code);
  throw py::buffer_error("Unsupported " + code + " bits " + std::to_string(b) + " in DLPack: ampgrad has no such dtype");
}

// Owns what a capsule points into: the storage reference, the shape/stride arrays and the struct.
struct ExportCtx {
  std::shared_ptr<Storage> storage;
  std::vector<int64_t> shape, strides;
  DLManagedTensor unversioned{};
  DLManagedTensorVersioned versioned{};
};

void fill(DLTensor& dl, ExportCtx* ctx, const Tensor& t) {
  const Device dev = t.device();
  dl.data = t.data_ptr();  // element 0; byte_offset 0, as torch exports
  dl.device = DLDevice{dev.is_cuda() ? kDLCUDA : kDLCPU, dev.is_cuda() ? dev.norm() : 0};
  dl.ndim = static_cast<int32_t>(t.dim());
  dl.dtype = to_dl(t.dtype());
  dl.shape = ctx->shape.data();
  dl.strides = ctx->strides.data();
  dl.byte_offset = 0;
}

// A capsule nobody consumed (still named dltensor*) frees its tensor; a consumed one was renamed.
// It can run while an exception is pending (a consumer that refused the capsule): keep that one.
void capsule_destructor(PyObject* cap) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  if (PyCapsule_IsValid(cap, kName)) {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, kName));
    if (m && m->deleter) m->deleter(m);
  } else if (PyCapsule_IsValid(cap, kNameV)) {
    auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(cap, kNameV));
    if (m && m->deleter) m->deleter(m);
  }
  PyErr_Restore(type, value, tb);
}

py::object to_dlpack(const Tensor& t, bool versioned, bool copied) {
  to_dl(t.dtype());  // raises before anything is allocated
  auto* ctx = new ExportCtx();
  ctx->storage = t.storage();
  ctx->storage->exported = true;  // Note [Shared memory]
  ctx->shape = t.sizes();
  ctx->strides = t.strides();
  PyObject* cap;
  if (versioned) {
    DLManagedTensorVersioned& m = ctx->versioned;
    m.version = DLPackVersion{AG_DLPACK_MAJOR_VERSION, AG_DLPACK_MINOR_VERSION};
    m.manager_ctx = ctx;
    m.deleter = [](DLManagedTensorVersioned* self) { delete static_cast<ExportCtx*>(self->manager_ctx); };
    m.flags = copied ? DLPACK_FLAG_BITMASK_IS_COPIED : 0;
    fill(m.dl_tensor, ctx, t);
    cap = PyCapsule_New(&m, kNameV, capsule_destructor);
  } else {
    DLManagedTensor& m = ctx->unversioned;
    m.manager_ctx = ctx;
    m.deleter = [](DLManagedTensor* self) { delete static_cast<ExportCtx*>(self->manager_ctx); };
    fill(m.dl_tensor, ctx, t);
    cap = PyCapsule_New(&m, kName, capsule_destructor);
  }
  if (!cap) {
    delete ctx;
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::object>(cap);
}

// Calls the producer's deleter once the last ampgrad tensor on the memory is gone. Producers such
// as NumPy take the GIL in their deleter themselves; ours needs none. Taking it here too (as
// from_numpy's owner does) keeps deleters that assume it safe.
template <typename M>
std::shared_ptr<void> owner_of(M* m) {
  return std::shared_ptr<void>(m, [](void* p) {
    M* mt = static_cast<M*>(p);
    if (!mt->deleter) return;
    if (Py_IsInitialized()) {
      py::gil_scoped_acquire gil;
      mt->deleter(mt);
    } else {
      mt->deleter(mt);
    }
  });
}

Tensor import(const DLTensor& dl, void* managed, bool versioned) {
  Device dev;
  switch (dl.device.device_type) {
    case kDLCPU: case kDLCUDAHost: case kDLCUDAManaged: dev = Device(); break;
    case kDLCUDA:
      if (!cuda::is_available())
        throw py::buffer_error("from_dlpack: a CUDA DLPack tensor needs ampgrad's CUDA backend and a GPU (this build has none)");
      dev = Device(DeviceType::CUDA, dl.device.device_id);
      break;
    default:
      throw py::buffer_error("Unsupported device_type: " + std::to_string(static_cast<int>(dl.device.device_type)));
  }
  const ScalarType dt = from_dl(dl.dtype);
  AG_CHECK(dl.ndim >= 0, "from_dlpack: negative ndim ", dl.ndim);
  Shape sizes(dl.shape, dl.shape + dl.ndim);
  for (auto s : sizes) AG_CHECK(s >= 0, "from_dlpack: negative size in shape ", shape_str(sizes));
  Shape strides = dl.strides && dl.ndim > 0 ? Shape(dl.strides, dl.strides + dl.ndim) : contiguous_strides(sizes);
  const int64_t numel = shape_numel(sizes);
  int64_t extent = numel == 0 ? 0 : 1;
  for (size_t i = 0; i < sizes.size() && numel > 0; ++i) {
    if (sizes[i] == 1) strides[i] = std::max<int64_t>(strides[i], 0);  // a stride on a size-1 dim is free
    AG_CHECK_VALUE(strides[i] >= 0, "from_dlpack: the DLPack tensor has a negative stride (strides ", shape_str(strides),
                   "), which ampgrad tensors do not support. Copy the array first (e.g. array.copy()).");
    extent += (sizes[i] - 1) * strides[i];
  }
  if (numel == 0) for (auto& s : strides) s = std::max<int64_t>(s, 0);
  const size_t isz = itemsize(dt);
  void* data = static_cast<char*>(dl.data) + dl.byte_offset;
  std::shared_ptr<void> owner = versioned ? owner_of(static_cast<DLManagedTensorVersioned*>(managed))
                                          : owner_of(static_cast<DLManagedTensor*>(managed));
  auto st = Storage::wrap(data, static_cast<size_t>(extent) * isz, dev, owner);
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = st; impl->sizes = sizes; impl->strides = strides; impl->dtype = dt;
  impl->version = std::make_shared<VersionCounter>();
  impl->inference = autograd::InferenceMode::is_enabled();
  impl->refresh();
  return Tensor(impl);
}

Tensor from_dlpack(py::handle cap) {
  PyObject* c = cap.ptr();
  const bool versioned = PyCapsule_IsValid(c, kNameV);
  if (!versioned && !PyCapsule_IsValid(c, kName)) {
    PyErr_Clear();
    AG_THROW(RuntimeError, "from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed only "
                           "once, so you might have already constructed a tensor from it once.");
  }
  void* managed = PyCapsule_GetPointer(c, versioned ? kNameV : kName);
  if (!managed) throw py::error_already_set();
  const DLTensor* dl;
  if (versioned) {
    auto* m = static_cast<DLManagedTensorVersioned*>(managed);
    if (m->version.major > AG_DLPACK_MAJOR_VERSION)
      throw py::buffer_error("from_dlpack: DLPack major version " + std::to_string(m->version.major) +
                             " is newer than the supported " + std::to_string(AG_DLPACK_MAJOR_VERSION));
    dl = &m->dl_tensor;
  } else {
    dl = &static_cast<DLManagedTensor*>(managed)->dl_tensor;
  }
  // A failed import (every check precedes the owner's creation) leaves the capsule unconsumed: its
  // destructor then frees the producer's tensor.
  Tensor t = import(*dl, managed, versioned);
  // The tensor owns the producer's memory now: mark the capsule consumed so its destructor skips it.
  PyCapsule_SetName(c, versioned ? kUsedNameV : kUsedName);
  return t;
}

}  // namespace

void init_dlpack(py::module_& m) {
  m.def("_to_dlpack", &to_dlpack, py::arg("tensor"), py::arg("versioned") = false, py::arg("copied") = false,
        "A DLPack capsule sharing the tensor's memory (\"dltensor\", or \"dltensor_versioned\" for DLPack 1.x).");
  m.def("_from_dlpack", &from_dlpack, py::arg("capsule"), "A tensor sharing the memory of a DLPack capsule (consumes it).");
}

}  // namespace ampgrad::bind
