"""torch.nn.utils.convert_conv2d/3d_weight_memory_format: re-lays out the weights of the (transposed)
convolutions of a module in `memory_format` (the values are unchanged)."""

from ..modules.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, classes):
    if isinstance(module, classes):
        w = module.weight.detach()
        try:
            module.weight.data = w.clone(memory_format=memory_format)
        except TypeError:  # no memory_format argument for clone: the layout stays contiguous
            module.weight.data = w.clone()
    for child in module.children():
        _convert(child, memory_format, classes)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
