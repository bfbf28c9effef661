"""Shared machinery of the optimizers written with tensor ops (Adadelta, Adagrad, RMSprop, Adamax,
NAdam, RAdam, Rprop, ASGD): torch's single-tensor update order, step by step, so that the numbers
equal torch's on CPU (torch's foreach / fused paths compute the same updates; ampgrad accepts those
flags and runs this path). State layout and 'step' tensors are torch's, so state_dicts interchange."""
from .. import _C
from .._C import Tensor
from ..autograd import enable_grad, set_grad_enabled
from .optimizer import Optimizer, _with_step_hooks

_CAPTURABLE_DEVICES = ["cuda", "xpu", "hpu", "privateuseone", "xla"]


def _scalar_dtype():
    return _C.float64 if _C.get_default_dtype() == _C.float64 else _C.float32


def _scalar(value, device=None):
    """A 0-dim tensor in torch's optimizer scalar dtype (float32, or float64 under that default dtype)."""
    return _C._full([], float(value), _scalar_dtype(), device if device is not None else _C.device("cpu"))


def _to_scalar(lr):
    return lr.item() if isinstance(lr, Tensor) else lr


def _check_lr(lr):
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def _check_capturable(params, what="params and state_steps", devices=None):
    devices = devices or _CAPTURABLE_DEVICES
    if not all(p.device.type in devices for p in params):
        raise AssertionError(f"If capturable=True, {what} must be on supported devices: {devices}.")


class _SingleTensorOptimizer(Optimizer):
    """Subclasses set _flag_defaults (for __setstate__) and implement _init_state(group, p, state) and
    _update(group, params, grads, states)."""
    _flag_defaults = {"foreach": None, "maximize": False, "differentiable": False, "capturable": False}
    _capturable_what = "params and state_steps"

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for k, v in self._flag_defaults.items():
                group.setdefault(k, v)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
                    p_state["step"] = _scalar(float(p_state["step"]))

    def _init_state(self, group, p, state):
        raise NotImplementedError

    def _update(self, group, params, grads, states):
        raise NotImplementedError

    @_with_step_hooks
    def step(self, closure=None):
        """Performs a single optimization step (closure: re-evaluates the model and returns the loss)."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with set_grad_enabled(bool(self.defaults.get("differentiable", False))):
            for group in self.param_groups:
                params = [p for p in group["params"] if p.grad is not None]
                if not params:
                    continue
                for p in params:
                    state = self.state[p]
                    if len(state) == 0:
                        self._init_state(group, p, state)
                if group.get("capturable", False):
                    _check_capturable(params, self._capturable_what)
                grads = [p.grad for p in params]
                states = [self.state[p] for p in params]
                self._update(group, params, grads, states)
        return loss
