"""Lazy modules (torch.nn.modules.lazy): parameters are UninitializedParameter / UninitializedBuffer until the first
forward, which infers their shapes from the input (initialize_parameters), materializes and initializes them, then
turns the module into cls_to_become (LazyLinear -> Linear, ...)."""
import itertools

from ...autograd import no_grad
from ..._creation import tensor as _tensor
from ... import _C
from ..parameter import UninitializedBuffer, UninitializedParameter, _MaterializedBuffer, is_lazy
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .linear import Linear

__all__ = ["LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
           "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class LazyModuleMixin:
    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self.register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if (is_lazy(param) or keep_vars) else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if (is_lazy(buf) or keep_vars) else buf.detach()

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs):
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None:
                input_param = state_dict[key]
                if is_lazy(param) and not is_lazy(input_param):
                    with no_grad():
                        param.materialize(tuple(input_param.shape))
        self._swap_materialized_buffers()

    def _swap_materialized_buffers(self):
        for name, buf in list(self._buffers.items()):
            if isinstance(buf, _MaterializedBuffer):
                self._buffers[name] = buf.detach()

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self):
        for param in itertools.chain(self._parameters.values(), self._buffers.values()):
            if is_lazy(param):
                return True
        return False

    def _infer_parameters(self, module, args, kwargs=None):
        kwargs = kwargs if kwargs else {}
        module.initialize_parameters(*args, **kwargs)
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._swap_materialized_buffers()
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with `DataParallel`. Run a dummy "
                           "forward pass to correctly initialize the modules")


class LazyLinear(LazyModuleMixin, Linear):
    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


class _LazyConvXdMixin(LazyModuleMixin):
    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                self.weight.materialize((self.in_channels, self.out_channels // self.groups, *self.kernel_size))
            else:
                self.weight.materialize((self.out_channels, self.in_channels // self.groups, *self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            with no_grad():
                self.reset_parameters()

    def _get_in_channels(self, input):
        num_spatial_dims = self._get_num_spatial_dims()
        num_dims_no_batch = num_spatial_dims + 1
        num_dims_batch = num_dims_no_batch + 1
        if input.dim() not in (num_dims_no_batch, num_dims_batch):
            raise RuntimeError(f"Expected {num_dims_no_batch}D (unbatched) or {num_dims_batch}D (batched) input to "
                               f"{self.__class__.__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.dim() == num_dims_batch else input.shape[0]

    def _get_num_spatial_dims(self):
        raise NotImplementedError


def _lazy_conv(base, nd):
    class _Lazy(_LazyConvXdMixin, base):
        cls_to_become = base

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                     padding_mode="zeros", device=None, dtype=None):
            base.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode,
                          device=device, dtype=dtype)
            LazyModuleMixin._lazy_init(self)
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.out_channels = out_channels
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)

        def _get_num_spatial_dims(self):
            return nd

    _Lazy.__name__ = _Lazy.__qualname__ = f"LazyConv{nd}d"
    return _Lazy


def _lazy_conv_transpose(base, nd):
    class _Lazy(_LazyConvXdMixin, base):
        cls_to_become = base

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                     dilation=1, padding_mode="zeros", device=None, dtype=None):
            base.__init__(self, 0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation,
                          padding_mode, device=device, dtype=dtype)
            LazyModuleMixin._lazy_init(self)
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.out_channels = out_channels
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)

        def _get_num_spatial_dims(self):
            return nd

    _Lazy.__name__ = _Lazy.__qualname__ = f"LazyConvTranspose{nd}d"
    return _Lazy


def _lazy_init(self):
    self._load_hook = self.register_load_state_dict_pre_hook(self._lazy_load_hook)
    self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)


LazyModuleMixin._lazy_init = _lazy_init

LazyConv1d = _lazy_conv(Conv1d, 1)
LazyConv2d = _lazy_conv(Conv2d, 2)
LazyConv3d = _lazy_conv(Conv3d, 3)
LazyConvTranspose1d = _lazy_conv_transpose(ConvTranspose1d, 1)
LazyConvTranspose2d = _lazy_conv_transpose(ConvTranspose2d, 2)
LazyConvTranspose3d = _lazy_conv_transpose(ConvTranspose3d, 3)
for _c in (LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d):
    _c.__module__ = __name__


class _LazyNormBase(LazyModuleMixin):
    def _lazy_norm_init(self, eps, momentum, affine, track_running_stats, device, dtype):
        self._norm_base.__init__(self, 0, eps, momentum, False, False, device=device, dtype=dtype)
        LazyModuleMixin._lazy_init(self)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        if self.track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = _tensor(0, dtype=_C.int64, device=device)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            if self.affine:
                self.weight.materialize((self.num_features,))
                self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self._swap_materialized_buffers()
            with no_grad():
                self.reset_parameters()


def _lazy_norm(base, name, default_affine, default_track):
    class _Lazy(_LazyNormBase, base):
        cls_to_become = base
        _norm_base = base

        def __init__(self, eps=1e-5, momentum=0.1, affine=default_affine, track_running_stats=default_track,
                     device=None, dtype=None):
            self._lazy_norm_init(eps, momentum, affine, track_running_stats, device, dtype)

    _Lazy.__name__ = _Lazy.__qualname__ = name
    _Lazy.__module__ = __name__
    return _Lazy


LazyBatchNorm1d = _lazy_norm(BatchNorm1d, "LazyBatchNorm1d", True, True)
LazyBatchNorm2d = _lazy_norm(BatchNorm2d, "LazyBatchNorm2d", True, True)
LazyBatchNorm3d = _lazy_norm(BatchNorm3d, "LazyBatchNorm3d", True, True)
LazyInstanceNorm1d = _lazy_norm(InstanceNorm1d, "LazyInstanceNorm1d", True, True)
LazyInstanceNorm2d = _lazy_norm(InstanceNorm2d, "LazyInstanceNorm2d", True, True)
LazyInstanceNorm3d = _lazy_norm(InstanceNorm3d, "LazyInstanceNorm3d", True, True)
