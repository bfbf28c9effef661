"""backward() and grad(), the entry points to the engine's reverse pass, and Tensor.backward.

They live here rather than in ampgrad/autograd/__init__.py so that the autograd modules that call
them (gradcheck, functional) import a sibling, not the package that imports them
(tests/test_import_layers.py). ampgrad.autograd re-exports both."""
import threading
import warnings

from .. import _C
from .graph import GradientEdge

__all__ = ["backward", "grad"]


def _as_list(x):
    if x is None:
        return None
    if isinstance(x, _C.Tensor):
        return [x]
    return list(x)


# Argument checks with torch's exception types and messages.
def _outputs(x):
    out = [x] if isinstance(x, (_C.Tensor, GradientEdge)) else list(x)
    for t in out:
        if not isinstance(t, (_C.Tensor, GradientEdge)):
            raise AssertionError("Expected output to be a torch.Tensor")
    return out


def _grad_list(x):
    if x is None:
        return None
    out = [x] if isinstance(x, _C.Tensor) else list(x)
    for t in out:
        if t is not None and not isinstance(t, _C.Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got {type(t).__name__}")
    return out


def _input_list(x):
    out = [x] if isinstance(x, (_C.Tensor, GradientEdge)) else list(x)
    for t in out:
        if not isinstance(t, (_C.Tensor, GradientEdge)):
            raise RuntimeError(f"all inputs have to be Tensors or GradientEdges, but got {type(t).__name__}")
    return out


_warned_create_graph = False

# Final callbacks (torch's Variable._execution_engine.queue_callback, which DistributedDataParallel uses to
# wait for its gradient all-reduces at the end of backward): one list per running backward()/grad() on this
# thread (nested calls stack); a backward that raises drops its callbacks, as torch's does.
_tls = threading.local()


def _queue_callback(callback):
    stack = getattr(_tls, "stack", None)
    if not stack:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    stack[-1].append(callback)


def _run_engine(fn, *args):
    stack = getattr(_tls, "stack", None)
    if stack is None:
        stack = _tls.stack = []
    callbacks = []
    stack.append(callbacks)
    try:
        out = fn(*args)
        i = 0
        while i < len(callbacks):  # a callback may queue another
            callbacks[i]()
            i += 1
    finally:
        stack.pop()
    return out


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None, inputs=None):
    """Accumulates into .grad of the leaves the gradient of `tensors` (seeded with `grad_tensors`)."""
    global _warned_create_graph
    if create_graph and not _warned_create_graph:  # torch warns once per process
        _warned_create_graph = True
        warnings.warn("Using backward() with create_graph=True will create a reference cycle between the parameter "
                      "and its gradient which can cause a memory leak. We recommend using autograd.grad when creating "
                      "the graph to avoid this. If you have to use this function, make sure to reset the .grad fields "
                      "of your parameters to None after use to break the cycle and avoid the leak.", UserWarning,
                      stacklevel=2)
    if grad_variables is not None:
        grad_tensors = grad_variables
    tensors = _outputs(tensors)
    grads = _grad_list(grad_tensors)
    if inputs is not None:
        inputs = _input_list(inputs)
        if len(inputs) == 0:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    _run_engine(_C._run_backward, tensors, grads, retain_graph, create_graph, inputs)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Returns the gradients of `outputs` with respect to `inputs` (a tuple, one per input)."""
    if is_grads_batched:
        raise NotImplementedError("is_grads_batched=True is not supported by ampgrad")
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = _outputs(outputs)
    keys = list(inputs.keys()) if type(inputs) is dict else None  # torch: a dict in, a dict out
    inputs = _input_list(list(inputs.values()) if keys is not None else inputs)
    grads = _grad_list(grad_outputs)
    res = _run_engine(_C._run_grad, outputs, inputs, grads, retain_graph, create_graph, allow_unused, materialize_grads)
    if keys is not None:
        return dict(zip(keys, res))
    return tuple(res)


def _tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    backward(self, gradient, retain_graph, create_graph, inputs=inputs)


_tensor_backward.__name__ = _tensor_backward.__qualname__ = "backward"
_C.Tensor.backward = _tensor_backward
