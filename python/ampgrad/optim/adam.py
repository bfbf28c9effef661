"""optim.Adam (amsgrad, maximize, L2 or decoupled weight decay) over the C++ _adam_step."""
from .. import _C
from .._C import Tensor
from ..autograd import enable_grad
from .optimizer import Optimizer, _with_step_hooks
from . import _stochastic_rounding as _sr

__all__ = ["Adam"]


def _lr(v):
    return float(v) if isinstance(v, Tensor) else v


class Adam(Optimizer):
    _step_supports_amp_scaling = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False, fused=None, decoupled_weight_decay=False,
                 stochastic_rounding=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if differentiable:
            raise NotImplementedError("ampgrad's optimizers are not differentiable (differentiable=True)")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        if stochastic_rounding:  # ampgrad: bf16 params rounded stochastically (optim/_stochastic_rounding.py)
            defaults["stochastic_rounding"] = True
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("fused", None)
            group.setdefault("decoupled_weight_decay", False)

    def _init_group(self, group, params, dtype=None):
        for p in params:
            state = self.state[p]
            if len(state) == 0:
                # step: a float32 scalar tensor on the param's device, as torch's fused Adam keeps it
                # (on CUDA the kernel counts it, so no step reads found_inf on the host).
                state["step"] = _C._full([], 0.0, _C.float32, p.device)
                state["exp_avg"] = p.detach().new_zeros(p.shape, dtype=dtype)
                state["exp_avg_sq"] = p.detach().new_zeros(p.shape, dtype=dtype)
                if group["amsgrad"]:
                    state["max_exp_avg_sq"] = p.detach().new_zeros(p.shape, dtype=dtype)

    @_with_step_hooks
    def step(self, closure=None, *, grad_scale=None, found_inf=None):
        """One update of every parameter with a gradient. grad_scale (1-element tensor) divides the
        grads first; a nonzero found_inf skips the update and the step count (no host sync)."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        grad_scale, found_inf = self._amp_args(grad_scale, found_inf)
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            if not params:
                continue
            params, sr_params = _sr.split_sr(group, params)
            beta1, beta2 = group["betas"]
            amsgrad = group["amsgrad"]
            for ps, sr in ((params, False), (sr_params, True)):
                if not ps:
                    continue
                # Stochastic rounding: the same step on float32 copies (state in float32), then rounding.
                self._init_group(group, ps, _C.float32 if sr else None)
                states = [self.state[p] for p in ps]
                ws, gs = _sr.fp32_copies(ps) if sr else (ps, [p.grad for p in ps])
                _C._adam_step(ws, gs, [s["exp_avg"] for s in states], [s["exp_avg_sq"] for s in states],
                              [s["max_exp_avg_sq"] for s in states] if amsgrad else None, [s["step"] for s in states],
                              _lr(group["lr"]), float(beta1), float(beta2), group["eps"], group["weight_decay"],
                              group["decoupled_weight_decay"], amsgrad, group["maximize"], grad_scale, found_inf)
                if sr:
                    _sr.write_back(ps, ws, gs, grad_scale is not None)
        return loss
