// Scans, index reductions and binning (ops/scan_index.cpp): scatter_reduce, index_reduce, cummax,
// cummin, logcumsumexp, searchsorted, bucketize, bincount, histc.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include "core/tensor.h"

namespace ampgrad {

Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce,
                      bool include_self);
// The argument checks alone (torch's errors, in its order; returns the wrapped dim): the in-place forms
// run them before their own in-place checks.
int64_t check_scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce);
int64_t check_index_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const std::string& reduce,
                           bool include_self);
Tensor index_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const std::string& reduce,
                    bool include_self);
std::pair<Tensor, Tensor> cummax(const Tensor& a, int64_t dim);
std::pair<Tensor, Tensor> cummin(const Tensor& a, int64_t dim);
Tensor logcumsumexp(const Tensor& a, int64_t dim);
Tensor searchsorted(const Tensor& boundaries, const Tensor& values, bool out_int32, bool right,
                    const std::optional<std::string>& side, const std::optional<Tensor>& sorter);
Tensor bucketize(const Tensor& values, const Tensor& boundaries, bool out_int32, bool right);
Tensor bincount(const Tensor& x, const std::optional<Tensor>& weights, int64_t minlength);
Tensor histc(const Tensor& x, int64_t bins, double min, double max);

}  // namespace ampgrad
