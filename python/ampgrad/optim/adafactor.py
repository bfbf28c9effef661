"""optim.Adafactor (torch 2.13's variant: lr caps the relative step size and scales decoupled weight
decay; factored second moments for matrices; state row_var / col_var or variance, and step)."""
from .._dtype_info import finfo
from .._functions import norm
from ._single import _SingleTensorOptimizer, _scalar, _to_scalar
from .._C import Tensor

__all__ = ["Adafactor"]


class Adafactor(_SingleTensorOptimizer):
    _flag_defaults = {"foreach": None, "maximize": False}

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize)
        super().__init__(params, defaults)

    def _init_state(self, group, p, state):
        state["step"] = _scalar(0.0)
        g = p.grad
        if g.dim() > 1:
            row_shape = list(g.shape)
            row_shape[-1] = 1
            state["row_var"] = g.new_zeros(row_shape)
            col_shape = list(g.shape)
            col_shape[-2] = 1
            state["col_var"] = g.new_zeros(col_shape)
        else:
            state["variance"] = g.new_zeros(g.shape)

    def _update(self, group, params, grads, states):
        lr, beta2_decay, d, wd = _to_scalar(group["lr"]), group["beta2_decay"], group["d"], group["weight_decay"]
        eps1, eps2 = group["eps"]
        for param, grad, st in zip(params, grads, states):
            grad = grad if not group["maximize"] else -grad
            step_t = st["step"]
            e1 = finfo(param.dtype).eps if eps1 is None else eps1
            step_t += 1
            step_float = step_t.item()
            one_minus_beta2_t = step_float ** beta2_decay
            rho_t = min(lr, 1 / (step_float ** 0.5))
            alpha = max(eps2, param.norm(2).item() / (param.numel() ** 0.5)) * rho_t
            if wd != 0:
                param.mul_(1 - lr * wd)
            if grad.dim() > 1:
                row_var, col_var = st["row_var"], st["col_var"]
                row_mean = norm(grad, dim=-1, keepdim=True).square_().div_(grad.size(-1))
                row_var.lerp_(row_mean, one_minus_beta2_t)
                col_mean = norm(grad, dim=-2, keepdim=True).square_().div_(grad.size(-2))
                col_var.lerp_(col_mean, one_minus_beta2_t)
                var_estimate = row_var @ col_var
                var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=e1))
            else:
                variance = st["variance"]
                variance.lerp_(grad * grad, one_minus_beta2_t)
                var_estimate = variance.clone()
            update = var_estimate.clamp_(min=e1 * e1).rsqrt_()
            update.mul_(grad)
            denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * d))
            param.add_(update, alpha=-alpha / denom)
