"""optim.RAdam (decoupled_weight_decay; torch's rectified update)."""
from ._single import _SingleTensorOptimizer, _check_lr, _scalar, _to_scalar

__all__ = ["RAdam"]


class RAdam(_SingleTensorOptimizer):
    _flag_defaults = {"foreach": None, "maximize": False, "differentiable": False, "decoupled_weight_decay": False,
                      "capturable": False}

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, group, p, state):
        state["step"] = _scalar(0.0, p.device if group["capturable"] else None)
        state["exp_avg"] = p.detach().new_zeros(p.shape)
        state["exp_avg_sq"] = p.detach().new_zeros(p.shape)

    def _update(self, group, params, grads, states):
        lr, (beta1, beta2), eps, wd = _to_scalar(group["lr"]), group["betas"], group["eps"], group["weight_decay"]
        for param, grad, st in zip(params, grads, states):
            grad = grad if not group["maximize"] else -grad
            exp_avg, exp_avg_sq, step_t = st["exp_avg"], st["exp_avg_sq"], st["step"]
            step_t += 1
            step = step_t.item()
            if wd != 0:
                if group["decoupled_weight_decay"]:
                    param.mul_(1 - lr * wd)
                else:
                    grad = grad.add(param, alpha=wd)
            exp_avg.lerp_(grad, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            bias_corrected_exp_avg = exp_avg / bias_correction1
            rho_inf = 2 / (1 - beta2) - 1
            rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
            if rho_t > 5.0:
                rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                exp_avg_sq_sqrt = exp_avg_sq.sqrt()
                exp_avg_sq_sqrt = (exp_avg_sq_sqrt.add(eps) if group["differentiable"]
                                   else exp_avg_sq_sqrt.add_(eps))
                adaptive_lr = (bias_correction2 ** 0.5) / exp_avg_sq_sqrt
                param.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
            else:
                param.add_(bias_corrected_exp_avg * lr, alpha=-1.0)
