"""optim.SGD (momentum, dampening, Nesterov, weight decay, maximize) over the C++ _sgd_step."""
from .. import _C
from .._C import Tensor
from ..autograd import enable_grad
from .optimizer import Optimizer, _with_step_hooks
from . import _stochastic_rounding as _sr

__all__ = ["SGD"]


def _lr(v):
    return float(v) if isinstance(v, Tensor) else v


class SGD(Optimizer):
    _step_supports_amp_scaling = True

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *, maximize=False,
                 foreach=None, differentiable=False, fused=None, stochastic_rounding=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if differentiable:
            raise NotImplementedError("ampgrad's optimizers are not differentiable (differentiable=True)")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
                        maximize=maximize, foreach=foreach, differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        if stochastic_rounding:  # ampgrad: bf16 params rounded stochastically (optim/_stochastic_rounding.py)
            defaults["stochastic_rounding"] = True
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    @_with_step_hooks
    def step(self, closure=None, *, grad_scale=None, found_inf=None):
        """One update of every parameter with a gradient. grad_scale (1-element tensor) divides the
        grads first; a nonzero found_inf skips the update (decided in the kernel, no host sync)."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        grad_scale, found_inf = self._amp_args(grad_scale, found_inf)
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            if not params:
                continue
            momentum = group["momentum"]
            params, sr_params = _sr.split_sr(group, params)
            if params:
                bufs = [self.state[p].get("momentum_buffer") for p in params] if momentum != 0 else None
                new_bufs = _C._sgd_step(params, [p.grad for p in params], bufs, _lr(group["lr"]), momentum,
                                        group["dampening"], group["nesterov"], group["weight_decay"], group["maximize"],
                                        grad_scale, found_inf)
                if momentum != 0:
                    for p, b in zip(params, new_bufs):
                        self.state[p]["momentum_buffer"] = b
            if sr_params:  # the same step on float32 copies, then stochastic rounding (momentum kept in fp32)
                p32, g32 = _sr.fp32_copies(sr_params)
                bufs = [self.state[p].get("momentum_buffer") for p in sr_params] if momentum != 0 else None
                new_bufs = _C._sgd_step(p32, g32, bufs, _lr(group["lr"]), momentum, group["dampening"],
                                        group["nesterov"], group["weight_decay"], group["maximize"], grad_scale,
                                        found_inf)
                if momentum != 0:
                    for p, b in zip(sr_params, new_bufs):
                        self.state[p]["momentum_buffer"] = b
                _sr.write_back(sr_params, p32, g32, grad_scale is not None)
        return loss
