"""optim.NAdam (momentum_decay, decoupled_weight_decay; torch's update; state mu_product / step as
0-dim tensors)."""
from ._single import _SingleTensorOptimizer, _check_lr, _scalar, _to_scalar

__all__ = ["NAdam"]


class NAdam(_SingleTensorOptimizer):
    _flag_defaults = {"maximize": False, "foreach": None, "capturable": False, "differentiable": False,
                      "decoupled_weight_decay": False}
    _capturable_what = "params, mu_products and state_steps"

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for p_state in self.state.values():
            if len(p_state) != 0 and not hasattr(p_state["mu_product"], "item"):
                p_state["mu_product"] = _scalar(p_state["mu_product"])

    def _init_state(self, group, p, state):
        dev = p.device if group["capturable"] else None
        state["step"] = _scalar(0.0, dev)
        state["mu_product"] = _scalar(1.0, dev)
        state["exp_avg"] = p.detach().new_zeros(p.shape)
        state["exp_avg_sq"] = p.detach().new_zeros(p.shape)

    def _update(self, group, params, grads, states):
        lr, (beta1, beta2), eps, wd = _to_scalar(group["lr"]), group["betas"], group["eps"], group["weight_decay"]
        momentum_decay = group["momentum_decay"]
        for param, grad, st in zip(params, grads, states):
            grad = grad if not group["maximize"] else -grad
            exp_avg, exp_avg_sq, mu_product, step_t = st["exp_avg"], st["exp_avg_sq"], st["mu_product"], st["step"]
            step_t += 1
            step = step_t.item()
            bias_correction2 = 1 - beta2 ** step
            if wd != 0:
                if group["decoupled_weight_decay"]:
                    param.mul_(1 - lr * wd)
                else:
                    grad = grad.add(param, alpha=wd)
            mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
            mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
            mu_product *= mu
            exp_avg.lerp_(grad, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            denom = exp_avg_sq.div(bias_correction2).sqrt()
            mu_product_v = mu_product.item()
            mu_product_next = mu_product_v * mu_next
            denom.add_(eps)
            param.addcdiv_(grad, denom, value=(-lr * (1.0 - mu) / (1.0 - mu_product_v)))
            param.addcdiv_(exp_avg, denom, value=(-lr * mu_next) / (1.0 - mu_product_next))
