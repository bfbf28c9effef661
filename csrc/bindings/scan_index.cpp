// Bindings of the scan / index-reduction / binning ops (ops/scan_index.h) as _C._<name>; the torch
// signatures (functions, Tensor methods, in-place forms) are python/ampgrad/_scan_index.py.
#include "bindings/convert.h"
#include "ops/scan_index.h"

namespace ampgrad::bind {

void init_scan_index(py::module_& m) {
  m.def("_scatter_reduce", [](const Tensor& a, int64_t dim, const Tensor& idx, const Tensor& src, const std::string& reduce, bool include_self) {
    return scatter_reduce(a, dim, idx, src, reduce, include_self);
  });
  m.def("_index_reduce", [](const Tensor& a, int64_t dim, const Tensor& idx, const Tensor& src, const std::string& reduce, bool include_self) {
    return index_reduce(a, dim, idx, src, reduce, include_self);
  });
  m.def("_scatter_reduce_", [](py::object self, int64_t dim, const Tensor& idx, const Tensor& src, const std::string& reduce, bool include_self) {
    Tensor t = self.cast<Tensor>();
    check_inplace(t, "scatter_reduce_", t.requires_grad() || src.requires_grad());  // torch: autograd's check comes first
    check_scatter_reduce(t, dim, idx, src, reduce);
    apply_inplace(t, [&] { return scatter_reduce(t, dim, idx, src, reduce, include_self); }, "scatter_reduce_", {&idx, &src});
    return self;
  });
  m.def("_index_reduce_", [](py::object self, int64_t dim, const Tensor& idx, const Tensor& src, const std::string& reduce, bool include_self) {
    Tensor t = self.cast<Tensor>();
    check_inplace(t, "index_reduce_", t.requires_grad() || src.requires_grad());
    check_index_reduce(t, dim, idx, src, reduce, include_self);
    apply_inplace(t, [&] { return index_reduce(t, dim, idx, src, reduce, include_self); }, "index_reduce_", {&idx, &src});
    return self;
  });
  m.def("_cummax", [](const Tensor& a, int64_t dim) { return cummax(a, dim); });
  m.def("_cummin", [](const Tensor& a, int64_t dim) { return cummin(a, dim); });
  m.def("_logcumsumexp", [](const Tensor& a, int64_t dim) { return logcumsumexp(a, dim); });
  m.def("_searchsorted", [](const Tensor& b, py::handle v, bool out_int32, bool right, std::optional<std::string> side,
                            std::optional<Tensor> sorter) { return searchsorted(b, tensor_or_scalar(v), out_int32, right, side, sorter); });
  m.def("_bucketize", [](py::handle v, const Tensor& b, bool out_int32, bool right) {
    return bucketize(tensor_or_scalar(v), b, out_int32, right);
  });
  m.def("_bincount", [](const Tensor& x, std::optional<Tensor> w, int64_t minlength) { return bincount(x, w, minlength); });
  m.def("_histc", [](const Tensor& x, int64_t bins, double min, double max) { return histc(x, bins, min, max); });
}

}  // namespace ampgrad::bind
