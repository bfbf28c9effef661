"""torch.nn.utils.stateless.functional_call: calls a module with some parameters and buffers replaced
(ampgrad.func.functional_call)."""
import sys

__all__ = ["functional_call"]


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    import warnings
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed in "
                  "a future version of PyTorch. Please use `torch.func.functional_call` instead which is a drop-in "
                  "replacement.", FutureWarning, stacklevel=2)
    _fc = sys.modules["ampgrad.func"].functional_call  # (ampgrad.func imports nn: looked up, not imported)
    return _fc(module, parameter_and_buffer_dicts, args, kwargs, tie_weights=tie_weights, strict=strict)
