// Autocast state and GradScaler op bindings (ampgrad.amp is the Python side).
#include "amp/autocast.h"
#include "amp/inspect.h"
#include "amp/scaler.h"
#include "bindings/convert.h"
#include "kernels/profiler_hooks.h"
#include <cmath>

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
  // The AMP inspector's seam (amp/inspect.h, python/ampgrad/amp/debug.py).
  m.def("_amp_inspect_enable", [](bool on) { amp::inspect::g_on.store(on, std::memory_order_relaxed); });
  m.def("_amp_inspect_take", [] {
    static const char* policies[] = {"none", "lower_precision_fp", "fp32", "fp32_set_opt_dtype", "fp32_append_dtype",
                                     "promote", "banned"};
    py::list out;
    for (const auto& r : amp::inspect::records())
      out.append(py::make_tuple(op_name(static_cast<Op>(r.op)), r.device == 1 ? "cuda" : "cpu", policies[r.policy],
                                r.run_dtype < 0 ? py::object(py::none()) : py::object(py::str(dtype_name(static_cast<ScalarType>(r.run_dtype)))),
                                r.n_tensors, r.n_eligible, r.n_cast, r.n_cache_hits));
    amp::inspect::records().clear();
    return out;
  });
  // The kernel watch (Note [Watched kernels]): counts of forward kernels by op and dtype, and the first
  // forward kernel that turned finite inputs into inf/NaN.
  m.def("_amp_watch_enable", [](bool on, bool scan) {
    amp::inspect::g_scan.store(scan, std::memory_order_relaxed);
    profiler_hooks::g_watch.store(on, std::memory_order_relaxed);
  }, py::arg("on"), py::arg("scan") = true);
  m.def("_amp_watch_reset", [] { amp::inspect::reset_watch(); });
  m.def("_amp_watch_take", [] {
    std::vector<amp::inspect::WatchCount> counts;
    amp::inspect::WatchEvent ev;
    const bool had = amp::inspect::take_watch(counts, ev);
    auto dt = [](int8_t d) -> py::object {
      return d < 0 ? py::object(py::none()) : py::object(py::str(dtype_name(static_cast<ScalarType>(d))));
    };
    py::list cl;
    for (auto& c : counts) cl.append(py::make_tuple(op_name(static_cast<Op>(c.op)), dt(c.dtype), c.n));
    py::object event = py::none();
    if (had) {
      py::list dts, mags;
      for (auto& [d, m] : ev.inputs) {
        dts.append(dt(d));
        mags.append(std::isnan(m) ? py::object(py::none()) : py::object(py::float_(m)));
      }
      py::dict e;
      e["op"] = op_name(static_cast<Op>(ev.op));
      e["output_dtype"] = dt(ev.out_dtype);
      e["kind"] = ev.nan && ev.inf ? "inf and nan" : ev.nan ? "nan" : "inf";
      e["input_dtypes"] = dts;
      e["input_max_abs"] = mags;
      event = e;
    }
    return py::make_tuple(cl, event);
  });
  m.def("_amp_foreach_non_finite_check_and_unscale_", [](std::vector<Tensor> grads, Tensor found_inf, const Tensor& inv_scale) {
    amp::non_finite_check_and_unscale_(grads, found_inf, inv_scale);
  });
  m.def("_amp_update_scale_", [](Tensor scale, Tensor tracker, const Tensor& found_inf, double growth, double backoff, int64_t interval) {
    amp::update_scale_(scale, tracker, found_inf, growth, backoff, interval);
    return scale;
  });
}

}  // namespace ampgrad::bind
