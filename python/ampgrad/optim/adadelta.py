"""optim.Adadelta (torch's update, state square_avg / acc_delta / step)."""
from ._single import _SingleTensorOptimizer, _check_lr, _scalar, _to_scalar

__all__ = ["Adadelta"]


class Adadelta(_SingleTensorOptimizer):
    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, capturable=capturable,
                        foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, group, p, state):
        state["step"] = _scalar(0.0, p.device if group["capturable"] else None)
        state["square_avg"] = p.detach().new_zeros(p.shape)
        state["acc_delta"] = p.detach().new_zeros(p.shape)

    def _update(self, group, params, grads, states):
        lr, rho, eps, wd = _to_scalar(group["lr"]), group["rho"], group["eps"], group["weight_decay"]
        for param, grad, st in zip(params, grads, states):
            st["step"] += 1
            grad = grad if not group["maximize"] else -grad
            if wd != 0:
                grad = grad.add(param, alpha=wd)
            square_avg, acc_delta = st["square_avg"], st["acc_delta"]
            square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
            std = square_avg.add(eps).sqrt_()
            delta = acc_delta.add(eps).sqrt_()
            if group["differentiable"]:
                delta = delta.clone()
            delta.div_(std).mul_(grad)
            acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
            param.add_(delta, alpha=-lr)
