"""optim.RMSprop (centered, momentum; torch's update and state layout)."""
from ._single import _SingleTensorOptimizer, _check_lr, _scalar, _to_scalar

__all__ = ["RMSprop"]


class RMSprop(_SingleTensorOptimizer):
    _flag_defaults = {"momentum": 0, "centered": False, "foreach": None, "maximize": False, "differentiable": False,
                      "capturable": False}

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay,
                        capturable=capturable, foreach=foreach, maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, group, p, state):
        state["step"] = _scalar(0.0, p.device if group["capturable"] else None)
        state["square_avg"] = p.detach().new_zeros(p.shape)
        if group["momentum"] > 0:
            state["momentum_buffer"] = p.detach().new_zeros(p.shape)
        if group["centered"]:
            state["grad_avg"] = p.detach().new_zeros(p.shape)

    def _update(self, group, params, grads, states):
        lr, alpha, eps = _to_scalar(group["lr"]), group["alpha"], group["eps"]
        wd, momentum, centered = group["weight_decay"], group["momentum"], group["centered"]
        for param, grad, st in zip(params, grads, states):
            grad = grad if not group["maximize"] else -grad
            square_avg = st["square_avg"]
            st["step"] += 1
            if wd != 0:
                grad = grad.add(param, alpha=wd)
            square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
            if centered:
                grad_avg = st["grad_avg"]
                grad_avg.lerp_(grad, 1 - alpha)
                avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
            else:
                avg = square_avg.sqrt()
            avg = avg.add(eps) if group["differentiable"] else avg.add_(eps)
            if momentum > 0:
                buf = st["momentum_buffer"]
                buf.mul_(momentum).addcdiv_(grad, avg)
                param.add_(buf, alpha=-lr)
            else:
                param.addcdiv_(grad, avg, value=-lr)
