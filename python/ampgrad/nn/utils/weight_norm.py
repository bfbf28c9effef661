"""torch.nn.utils.weight_norm / remove_weight_norm (the forward-pre-hook form, deprecated in torch in favour of
parametrizations.weight_norm): weight = g * v / ||v|| with the norm over every dim but `dim`."""
import warnings

from ..._creation import _dtype_name
from ..parameter import Parameter, UninitializedTensorMixin

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm", "norm_except_dim", "_weight_norm"]


def norm_except_dim(v, pow=2, dim=0):
    """torch.norm_except_dim: the p-norm over every dim but `dim` (kept with size, others 1); dim=-1: all dims."""
    if dim == -1:
        return v.norm(pow)
    n = v.dim()
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    dim = dim % n
    if not (v.is_floating_point() or v.is_complex()):   # the norm's dtype check
        raise RuntimeError("norm(): input dtype should be either floating point or complex. Got "
                           f"{_dtype_name(v.dtype)} instead.")
    dims = [d for d in range(v.dim()) if d != dim]
    if not dims:
        return v.abs() if pow != 2 else (v * v).sqrt()
    return v.norm(pow, dims, keepdim=True)


def _weight_norm(v, g, dim=0):
    """torch._weight_norm: v * (g / norm_except_dim(v, 2, dim))."""
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    def __init__(self, name, dim):
        if dim is None:
            dim = -1
        self.name = name
        self.dim = dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module, name, dim):
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=4)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if _is_uninitialized(weight):
            raise ValueError("The module passed to `WeightNorm` can't have uninitialized parameters. Make sure to run "
                             "the dummy forward before applying weight normalization")
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def _is_uninitialized(t):
    return isinstance(t, UninitializedTensorMixin)


def weight_norm(module, name="weight", dim=0):
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
