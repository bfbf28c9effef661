// Bindings of ctc_loss's negative log likelihood and fractional max pooling (ops/ctc_fracpool.h) as
// _C._ctc_loss_nll / _C._fractional_max_pool; the torch signatures (torch.ctc_loss, F.ctc_loss,
// F.fractional_max_pool2d/3d and the modules) are python/ampgrad/nn/_ctc_fracpool.py.
#include "bindings/convert.h"
#include "ops/ctc_fracpool.h"

namespace ampgrad::bind {

void init_ctc_fracpool(py::module_& m) {
  m.def("_ctc_loss_nll", [](const Tensor& lp, const Tensor& targets, const IntList& il, const IntList& tl, int64_t blank,
                            bool zero_infinity) { return ctc_loss_nll(lp, targets, il, tl, blank, zero_infinity); });
  m.def("_fractional_max_pool", [](const Tensor& x, const IntList& k, const IntList& out, const Tensor& samples, int nd) {
    return fractional_max_pool(x, k, out, samples, nd);
  });
}

}  // namespace ampgrad::bind
