// Autocast state and GradScaler op bindings (ampgrad.amp is the Python side).
#include "amp/autocast.h"
#include "amp/scaler.h"
#include "bindings/convert.h"

namespace ampgrad::bind {

namespace {
int amp_device(const std::string& dev) {
  if (dev == "cpu") return 0;
  if (dev == "cuda") return 1;
  AG_THROW(RuntimeError, "unsupported autocast device_type '", dev, "'");
}
}  // namespace

void init_amp(py::module_& m) {
  m.def("_is_autocast_available", [](const std::string& dev) { return dev == "cpu" || dev == "cuda"; });
  m.def("is_autocast_enabled", [](std::optional<std::string> dev) {
    return amp::state().enabled[amp_device(dev.value_or("cuda"))];
  }, py::arg("device_type") = py::none());
  m.def("_set_autocast_enabled", [](const std::string& dev, bool on) { amp::state().enabled[amp_device(dev)] = on; });
  m.def("get_autocast_dtype", [](const std::string& dev) { return amp::state().dtype[amp_device(dev)]; });
  m.def("_set_autocast_dtype", [](const std::string& dev, ScalarType t) { amp::state().dtype[amp_device(dev)] = t; });
  m.def("is_autocast_cache_enabled", [] { return amp::state().cache_enabled; });
  m.def("set_autocast_cache_enabled", [](bool on) { amp::state().cache_enabled = on; });
  m.def("clear_autocast_cache", [] { amp::clear_cache(); });
  m.def("autocast_increment_nesting", [] { return ++amp::state().nesting; });
  m.def("autocast_decrement_nesting", [] { return --amp::state().nesting; });
  m.def("_autocast_cache_size", [] { return amp::cache_size(); });
  m.def("_amp_foreach_non_finite_check_and_unscale_", [](std::vector<Tensor> grads, Tensor found_inf, const Tensor& inv_scale) {
    amp::non_finite_check_and_unscale_(grads, found_inf, inv_scale);
  });
  m.def("_amp_update_scale_", [](Tensor scale, Tensor tracker, const Tensor& found_inf, double growth, double backoff, int64_t interval) {
    amp::update_scale_(scale, tracker, found_inf, growth, backoff, interval);
    return scale;
  });
}

}  // namespace ampgrad::bind
