"""optim.Adamax (torch's update; state exp_avg / exp_inf / step)."""
from .._C import maximum
from ._single import _SingleTensorOptimizer, _check_lr, _scalar, _to_scalar

__all__ = ["Adamax"]


class Adamax(_SingleTensorOptimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _init_state(self, group, p, state):
        state["step"] = _scalar(0.0, p.device if group["capturable"] else None)
        state["exp_avg"] = p.detach().new_zeros(p.shape)
        state["exp_inf"] = p.detach().new_zeros(p.shape)

    def _update(self, group, params, grads, states):
        lr, (beta1, beta2), eps, wd = _to_scalar(group["lr"]), group["betas"], group["eps"], group["weight_decay"]
        for param, grad, st in zip(params, grads, states):
            grad = grad if not group["maximize"] else -grad
            exp_avg, exp_inf, step_t = st["exp_avg"], st["exp_inf"], st["step"]
            step_t += 1
            if wd != 0:
                grad = grad.add(param, alpha=wd)
            exp_avg.lerp_(grad, 1 - beta1)
            exp_inf.copy_(maximum(exp_inf.mul_(beta2), grad.abs().add_(eps)))
            bias_correction = 1 - beta1 ** step_t.item()
            clr = lr / bias_correction
            param.addcdiv_(exp_avg, exp_inf, value=-clr)
