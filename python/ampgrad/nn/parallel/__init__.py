"""ampgrad.nn.parallel: DataParallel runs the module itself (torch does the same when no GPU is
visible: device_ids == []); DistributedDataParallel needs a process group, which ampgrad lacks, so
constructing one raises torch's ValueError for an uninitialized default group."""
from ..modules.module import Module
from ... import distributed as _dist


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


class DistributedDataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, **kwargs):
        super().__init__()
        if process_group is None and not _dist.is_initialized():
            raise ValueError(_dist._NOT_INIT)
        self.module = module

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
