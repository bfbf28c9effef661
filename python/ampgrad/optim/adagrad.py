"""optim.Adagrad (torch's update; state 'sum' and 'step' created at construction, as torch does)."""
from .._C import Tensor
from ._single import _SingleTensorOptimizer, _check_lr, _scalar, _to_scalar

__all__ = ["Adagrad"]


class Adagrad(_SingleTensorOptimizer):
    _flag_defaults = {"foreach": None, "maximize": False, "differentiable": False, "fused": None}

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_lr(lr)
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(group, p, self.state[p])

    def _init_state(self, group, p, state):
        state["step"] = _scalar(0.0, p.device if group["fused"] else None)
        state["sum"] = p.detach().new_full(p.shape, group["initial_accumulator_value"])

    def share_memory(self):
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p]["sum"].share_memory_()

    def _update(self, group, params, grads, states):
        lr, wd, lr_decay, eps = _to_scalar(group["lr"]), group["weight_decay"], group["lr_decay"], group["eps"]
        for param, grad, st in zip(params, grads, states):
            step_t = st["step"]
            step_t += 1
            step = step_t.item()
            grad = grad if not group["maximize"] else -grad
            if wd != 0:
                grad = grad.add(param, alpha=wd)
            clr = lr / (1 + (step - 1) * lr_decay)
            state_sum = st["sum"]
            state_sum.addcmul_(grad, grad, value=1)
            std = state_sum.sqrt() + eps if group["differentiable"] else state_sum.sqrt().add_(eps)
            param.addcdiv_(grad, std, value=-clr)
