"""optim.Rprop (torch's sign-based update; state prev / step_size / step)."""
from ._single import _SingleTensorOptimizer, _check_lr, _scalar, _to_scalar

__all__ = ["Rprop"]


class Rprop(_SingleTensorOptimizer):
    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _init_state(self, group, p, state):
        state["step"] = _scalar(0.0, p.device if group["capturable"] else None)
        state["prev"] = p.detach().new_zeros(p.shape)
        state["step_size"] = p.grad.detach().new_full(p.grad.shape, float(_to_scalar(group["lr"])))

    def _update(self, group, params, grads, states):
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        for param, grad, st in zip(params, grads, states):
            grad = grad if not group["maximize"] else -grad
            prev, step_size = st["prev"], st["step_size"]
            st["step"] += 1
            sign = grad.mul(prev.clone() if group["differentiable"] else prev).sign()
            gt, lt, eq = sign.gt(0), sign.lt(0), sign.eq(0)
            sign[gt] = etaplus
            sign[lt] = etaminus
            sign[eq] = 1
            step_size.mul_(sign).clamp_(step_size_min, step_size_max)
            grad = grad.clone()
            grad[sign.eq(etaminus)] = 0
            param.addcmul_(grad.sign(), step_size, value=-1)
            prev.copy_(grad)
