// The autocast gate of user ops (ampgrad.library.register_autocast / Library.impl(..., "AutocastCPU"),
// python/ampgrad/library.py): the same gate as the op table's rows (Note [Autocast gate]), with the
// rule given at run time instead of a row: torch's per-device Autocast key for a custom op.
#include "amp/autocast.h"
#include "bindings/convert.h"

namespace ampgrad::bind {

namespace {
int gate_device(const std::string& dev) {
  if (dev == "cpu") return 0;
  if (dev == "cuda") return 1;
  AG_THROW(ValueError, "Device type '", dev, "' does not support autocast.");
}

// As amp::ExcludeGuard, for one device type (the device of the user's rule).
struct DeviceExcludeGuard {
  int d;
  bool prev;
  explicit DeviceExcludeGuard(int dev) : d(dev), prev(amp::state().excluded[dev]) { amp::state().excluded[dev] = true; }
  ~DeviceExcludeGuard() { amp::state().excluded[d] = prev; }
  DeviceExcludeGuard(const DeviceExcludeGuard&) = delete;
  DeviceExcludeGuard& operator=(const DeviceExcludeGuard&) = delete;
};

// The eligible tensors of `v` (a tensor, or a list/tuple of values) cast to `dtype` through the cast
// cache (Note [Cast cache]); anything else is returned as is.
py::object cast_value(py::handle v, DeviceType dev, ScalarType dtype) {
  if (is_tensor(v)) {
    Tensor t = v.cast<Tensor>();
    if (!amp::is_eligible(t, dev)) return py::reinterpret_borrow<py::object>(v);
    Tensor c = amp::cached_cast(t, dtype);
    if (c.impl() == t.impl()) return py::reinterpret_borrow<py::object>(v);
    return py::cast(c);
  }
  bool is_list = PyList_Check(v.ptr()), is_tuple = PyTuple_Check(v.ptr());
  if (!is_list && !is_tuple) return py::reinterpret_borrow<py::object>(v);
  py::list l;
  for (py::handle x : v) l.append(cast_value(x, dev, dtype));
  return is_list ? py::object(l) : py::object(py::tuple(l));
}
}  // namespace

void init_library(py::module_& m) {
  // True when a call on `device_type` would pass its autocast gate (autocast on for that device
  // type and no gated op of that device running).
  m.def("_autocast_gate_open", [](const std::string& dev) {
    int d = gate_device(dev);
    return amp::state().enabled[d] && !amp::state().excluded[d];
  });
  // fn(*args, **kwargs) behind a user op's autocast rule for `device_type`: when the gate is open for
  // that device, the eligible tensors (floating, on that device, not float64) of args, kwargs and
  // their lists are cast to `dtype` (none: not cast, the kernel casts itself), and fn runs with
  // autocast excluded on that device, as torch's Autocast kernel of a custom op.
  m.def("_custom_autocast_gate", [](const std::string& dev, std::optional<ScalarType> dtype, py::handle fn,
                                    py::tuple args, py::dict kwargs) -> py::object {
    int d = gate_device(dev);
    if (!amp::state().enabled[d] || amp::state().excluded[d]) return fn(*args, **kwargs);
    py::tuple new_args = args;
    py::dict new_kwargs = kwargs;
    if (dtype) {
      DeviceType dt = static_cast<DeviceType>(d);
      py::list a;
      for (py::handle x : args) a.append(cast_value(x, dt, *dtype));
      new_args = py::tuple(a);
      new_kwargs = py::dict();
      for (auto kv : kwargs) new_kwargs[kv.first] = cast_value(kv.second, dt, *dtype);
    }
    DeviceExcludeGuard excluded(d);
    return fn(*new_args, **new_kwargs);
  });
}

}  // namespace ampgrad::bind
