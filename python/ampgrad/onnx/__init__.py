"""ampgrad.onnx: the names scripts import from torch.onnx. ampgrad has no ONNX exporter: `export` raises
(programs that `import torch.onnx` at the top and export only on request run unchanged), and
`is_in_onnx_export()` is False, as it is in torch outside an export."""

__all__ = ["export", "is_in_onnx_export", "is_onnxrt_backend_supported"]


def is_in_onnx_export():
    return False


def is_onnxrt_backend_supported():
    return False


def export(model, args=(), f=None, *a, **kw):
    raise RuntimeError("ampgrad.onnx.export: ampgrad has no ONNX exporter; export the model with torch "
                       "(ampgrad.save writes torch's checkpoint format, which torch.load reads)")
