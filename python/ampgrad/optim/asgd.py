"""optim.ASGD (torch's averaged SGD; state eta / mu / ax / step)."""
from .._creation import as_tensor
from ._single import _SingleTensorOptimizer, _check_lr, _scalar, _to_scalar

__all__ = ["ASGD"]


class ASGD(_SingleTensorOptimizer):
    _capturable_what = "params, mus, etas, and state_steps"

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _init_state(self, group, p, state):
        dev = p.device
        state["step"] = _scalar(0.0, dev)
        state["eta"] = _scalar(_to_scalar(group["lr"]), dev)
        state["mu"] = _scalar(1.0, dev)
        state["ax"] = p.detach().new_zeros(p.shape)

    def _update(self, group, params, grads, states):
        lr, lambd, alpha, t0, wd = (_to_scalar(group["lr"]), group["lambd"], group["alpha"], group["t0"],
                                    group["weight_decay"])
        for param, grad, st in zip(params, grads, states):
            grad = grad if not group["maximize"] else -grad
            mu, ax, eta, step_t = st["mu"], st["ax"], st["eta"], st["step"]
            step_t += 1
            if wd != 0:
                grad = grad.add(param, alpha=wd)
            eta_value = eta.item()
            param.mul_(1 - lambd * eta_value)
            param.add_(grad, alpha=-eta_value)
            if mu.item() != 1:
                ax.add_(param.sub(ax).mul_(mu))
            else:
                ax.copy_(param)
            step = step_t.item()
            eta.copy_(as_tensor(lr / ((1 + lambd * lr * step) ** alpha)))
            mu.copy_(as_tensor(1 / max(1, step - t0)))
