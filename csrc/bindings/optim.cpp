// ampgrad._C._sgd_step / _adam_step: the multi-tensor optimizer steps that python/ampgrad/optim
// calls (Note [Fused optimizer steps]).
#include "bindings/convert.h"

namespace ampgrad::bind {

namespace {
// None entries (absent state) become undefined tensors.
std::vector<Tensor> tensor_list(py::handle h) {
  std::vector<Tensor> out;
  if (h.is_none()) return out;
  for (auto item : py::reinterpret_borrow<py::sequence>(h)) out.push_back(item.is_none() ? Tensor() : as_tensor(item));
  return out;
}
}  // namespace

void init_optim(py::module_& m) {
  m.def("_sgd_step", [](py::handle params, py::handle grads, py::handle bufs, double lr, double momentum, double dampening,
                        bool nesterov, double weight_decay, bool maximize, std::optional<Tensor> grad_scale,
                        std::optional<Tensor> found_inf) {
    auto ps = tensor_list(params);
    auto bs = tensor_list(bufs);
    if (bs.empty()) bs.resize(ps.size());
    return sgd_step(ps, tensor_list(grads), bs, lr, momentum, dampening, nesterov, weight_decay, maximize, grad_scale, found_inf);
  }, py::arg("params"), py::arg("grads"), py::arg("momentum_buffers"), py::arg("lr"), py::arg("momentum"),
     py::arg("dampening"), py::arg("nesterov"), py::arg("weight_decay"), py::arg("maximize"),
     py::arg("grad_scale") = py::none(), py::arg("found_inf") = py::none(),
     "Updates params in place (torch's SGD); returns the momentum buffers, creating missing ones.");
  m.def("_adam_step", [](py::handle params, py::handle grads, py::handle exp_avgs, py::handle exp_avg_sqs,
                         py::handle max_exp_avg_sqs, py::handle state_steps, double lr, double beta1, double beta2,
                         double eps, double weight_decay, bool decoupled, bool amsgrad, bool maximize,
                         std::optional<Tensor> grad_scale, std::optional<Tensor> found_inf) {
    adam_step(tensor_list(params), tensor_list(grads), tensor_list(exp_avgs), tensor_list(exp_avg_sqs),
              tensor_list(max_exp_avg_sqs), tensor_list(state_steps), lr, beta1, beta2, eps, weight_decay, decoupled,
              amsgrad, maximize, grad_scale, found_inf);
  }, py::arg("params"), py::arg("grads"), py::arg("exp_avgs"), py::arg("exp_avg_sqs"), py::arg("max_exp_avg_sqs"),
     py::arg("state_steps"), py::arg("lr"), py::arg("beta1"), py::arg("beta2"), py::arg("eps"), py::arg("weight_decay"),
     py::arg("decoupled"), py::arg("amsgrad"), py::arg("maximize"), py::arg("grad_scale") = py::none(),
     py::arg("found_inf") = py::none(),
     "Updates params, exp_avgs, exp_avg_sqs (max_exp_avg_sqs) and state_steps in place (torch's Adam/AdamW).");
}

}  // namespace ampgrad::bind
