// NumPy interop: zero-copy from_numpy / Tensor.numpy() on CPU, and tensor() from array data.
#include "autograd/grad_mode.h"
#include "bindings/convert.h"
#include "ops/internal.h"

namespace ampgrad::bind {

namespace {
ScalarType from_np(const py::dtype& d) {
  char kind = d.kind();
  int64_t sz = d.itemsize();
  if (kind == 'b') return ScalarType::Bool;
  if (kind == 'u') {
    if (sz == 1) return ScalarType::UInt8;
    if (sz == 2) return ScalarType::UInt16;
    if (sz == 4) return ScalarType::UInt32;
    if (sz == 8) return ScalarType::UInt64;
  }
  if (kind == 'i') {
    if (sz == 1) return ScalarType::Int8;
    if (sz == 2) return ScalarType::Int16;
    if (sz == 4) return ScalarType::Int32;
    if (sz == 8) return ScalarType::Int64;
  }
  if (kind == 'f') {
    if (sz == 2) return ScalarType::Float16;
    if (sz == 4) return ScalarType::Float32;
    if (sz == 8) return ScalarType::Float64;
  }
  AG_THROW(TypeError, "can't convert np.ndarray of type numpy.", std::string(py::str(d)),
           ". The only supported types are: float64, float32, float16, int64, int32, int16, int8, uint64, uint32, uint16, uint8, and bool.");
}

py::dtype to_np(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return py::dtype("bool");
    case ScalarType::UInt8: return py::dtype("uint8");
    case ScalarType::Int8: return py::dtype("int8");
    case ScalarType::Int16: return py::dtype("int16");
    case ScalarType::Int32: return py::dtype("int32");
    case ScalarType::Int64: return py::dtype("int64");
    case ScalarType::Float16: return py::dtype("float16");
    case ScalarType::Float32: return py::dtype("float32");
    case ScalarType::Float64: return py::dtype("float64");
    case ScalarType::UInt16: return py::dtype("uint16");
    case ScalarType::UInt32: return py::dtype("uint32");
    case ScalarType::UInt64: return py::dtype("uint64");
    default: AG_THROW(TypeError, "Got unsupported ScalarType BFloat16");
  }
}
}  // namespace

void init_numpy(py::module_& m) {
  m.def("from_numpy", [](py::array arr) {
    AG_CHECK_TYPE(!(arr.flags() & py::array::c_style) || true, "");
    ScalarType dt = from_np(arr.dtype());
    int64_t isz = itemsize(dt);
    Shape sizes, strides;
    for (py::ssize_t i = 0; i < arr.ndim(); ++i) {
      sizes.push_back(arr.shape(i));
      AG_CHECK_VALUE(arr.strides(i) >= 0, "At least one stride in the given numpy array is negative, and tensors with negative strides "
                     "are not currently supported. (You can probably work around this by making a copy of your array  with array.copy().) ");
      AG_CHECK(arr.strides(i) % isz == 0, "given numpy array strides not a multiple of the element byte size. Copy the numpy array to reallocate the memory.");
      strides.push_back(arr.strides(i) / isz);
    }
    py::object keep = arr;
    auto owner = std::shared_ptr<void>(new py::object(keep), [](void* p) {
      py::gil_scoped_acquire gil;
      delete static_cast<py::object*>(p);
    });
    int64_t extent = 1;
    for (size_t i = 0; i < sizes.size(); ++i) if (sizes[i] > 0) extent += (sizes[i] - 1) * strides[i]; else extent = 0;
    auto st = Storage::wrap(const_cast<void*>(arr.data()), static_cast<size_t>(std::max<int64_t>(extent, 0) * isz), Device(), owner);
    auto impl = std::make_shared<TensorImpl>();
    impl->storage = st; impl->sizes = sizes; impl->strides = strides; impl->dtype = dt;
    impl->version = std::make_shared<VersionCounter>();
    impl->inference = autograd::InferenceMode::is_enabled();
    impl->refresh();
    return Tensor(impl);
  });
  auto cls = py::reinterpret_borrow<py::class_<TensorImpl, std::shared_ptr<TensorImpl>>>(m.attr("Tensor"));
  cls.def("_numpy", [](const Tensor& t) {
    AG_CHECK_TYPE(t.device().is_cpu(), "can't convert ", t.device().type_str(), ":", t.device().norm(),
                  " device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.");
    t.storage()->exported = true;  // Note [Shared memory]: share_memory_ keeps these bytes
    auto holder = new std::shared_ptr<Storage>(t.storage());
    py::capsule base(holder, [](void* p) { delete static_cast<std::shared_ptr<Storage>*>(p); });
    std::vector<py::ssize_t> shape(t.sizes().begin(), t.sizes().end()), strides;
    // In bytes. A stride of a size-0/1 dim (or of an empty tensor) is never stepped over and may be huge
    // (as_strided([1], [2**62])): its byte count would overflow, so it becomes 0 (UBSan found the overflow).
    for (auto s : t.strides()) {
      py::ssize_t b;
      strides.push_back(__builtin_mul_overflow(s, itemsize(t.dtype()), &b) ? 0 : b);
    }
    return py::array(to_np(t.dtype()), shape, strides, t.data_ptr(), base);
  });
}

}  // namespace ampgrad::bind
