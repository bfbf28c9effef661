"""ampgrad.nn.functional: activations, linear and softmax (torch.nn.functional signatures)."""
from .. import _C


def linear(input, weight, bias=None):
    return _C._linear(input, weight, bias)


def relu(input, inplace=False):
    return input.relu_() if inplace else _C.relu(input)


def gelu(input, approximate="none"):
    return _C._gelu(input, approximate)


def silu(input, inplace=False):
    return input.silu_() if inplace else _C.silu(input)


def sigmoid(input):
    return _C.sigmoid(input)


def tanh(input):
    return _C.tanh(input)


def softplus(input, beta=1.0, threshold=20.0):
    return _C._softplus(input, float(beta), float(threshold))


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = 0 if input.dim() in (0, 1, 3) else 1
    return _C._softmax(input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = 0 if input.dim() in (0, 1, 3) else 1
    return _C._log_softmax(input, dim, dtype)
