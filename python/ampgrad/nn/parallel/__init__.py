"""ampgrad.nn.parallel: DataParallel runs the module itself (torch does the same when no GPU is
visible: device_ids == []); DistributedDataParallel (parallel/distributed.py) averages gradients
across the ranks of an ampgrad.distributed process group."""
from ..modules.module import Module
from .distributed import DistributedDataParallel


class DataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = [] if device_ids is None else list(device_ids)
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    return module(*inputs, **(module_kwargs or {}))


__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
