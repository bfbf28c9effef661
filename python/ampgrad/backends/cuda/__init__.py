"""ampgrad.backends.cuda: matmul.allow_tf32 (default False, as torch's) lets fp32 GEMMs on CUDA use
TF32 tensor cores; the flag lives in the engine (kernels/cuda/gemm.cpp reads it)."""
from ... import _C


class _MatmulFlags:
    def __init__(self):
        object.__setattr__(self, "allow_fp16_reduced_precision_reduction", True)
        object.__setattr__(self, "allow_bf16_reduced_precision_reduction", True)

    @property
    def allow_tf32(self):
        return _C._cuda_get_allow_tf32()

    @allow_tf32.setter
    def allow_tf32(self, value):
        _C._cuda_set_allow_tf32(bool(value))

    def __setattr__(self, name, value):
        if name not in ("allow_tf32", "allow_fp16_reduced_precision_reduction",
                        "allow_bf16_reduced_precision_reduction"):
            raise AttributeError("Unknown attribute " + name)
        object.__setattr__(self, name, value)


matmul = _MatmulFlags()


def is_built():
    """Whether ampgrad was built with CUDA (not whether a device is present)."""
    return _C._cuda_is_built()
