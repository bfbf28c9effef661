"""autograd.Function: user-defined forward/backward pairs. forward runs under no_grad; the call is
recorded as one graph node (a C++ PyNode) whose backward calls the class's Python backward."""
import functools

from .. import _C
from .._creation import zeros_like
from .grad_mode import no_grad

__all__ = ["Function", "FunctionCtx", "once_differentiable", "InplaceFunction", "NestedIOFunction"]


class FunctionCtx:
    """The `ctx` passed to forward/backward: saves tensors and marks outputs; arbitrary attributes allowed."""

    def save_for_backward(self, *tensors):
        for t in tensors:
            if t is not None and not isinstance(t, _C.Tensor):
                raise TypeError("save_for_backward can only save variables, but argument "
                                f"{tensors.index(t)} is of type {type(t).__name__}")
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args):
        self.non_differentiable = args

    def set_materialize_grads(self, value):
        self.materialize_grads = value

    @property
    def saved_tensors(self):
        if getattr(self, "_in_jvp", False):  # jvp reads what forward gave save_for_forward
            return tuple(getattr(self, "saved_for_forward", ()))
        saved = getattr(self, "_saved", None)
        if saved is None:
            return tuple(getattr(self, "to_save", ()))
        return saved.unpack()

    @property
    def saved_variables(self):
        return self.saved_tensors


class _FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_name = name + "Backward"


class Function(FunctionCtx, metaclass=_FunctionMeta):
    """Subclass and define staticmethods forward(ctx, *args) [or forward(*args) + setup_context(ctx,
    inputs, output)] and backward(ctx, *grad_outputs); call with .apply(*args)."""

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please use "
                           "new-style autograd function with static forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it "
                                  "with forward mode AD.")

    @classmethod
    def _uses_setup_context(cls):
        return cls.setup_context is not Function.setup_context

    @classmethod
    def apply(cls, *args, **kwargs):
        if cls.forward is Function.forward:
            raise NotImplementedError("You must implement the forward function for custom autograd.Function.")
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, _C.Tensor) and a.requires_grad for a in args)
        tangents = _input_tangents(args)
        fw_prev = _C._set_fw_grad_enabled(False)  # forward sees primals only (torch's rule)
        try:
            with no_grad():
                if cls._uses_setup_context():
                    outputs = cls.forward(*args, **kwargs)
                else:
                    outputs = cls.forward(ctx, *args, **kwargs)
        finally:
            _C._set_fw_grad_enabled(fw_prev)
        if cls._uses_setup_context():
            cls.setup_context(ctx, args, outputs)
        is_tuple = isinstance(outputs, tuple)
        outs = list(outputs) if is_tuple else [outputs]
        tensor_outs = [o if isinstance(o, _C.Tensor) else None for o in outs]
        backward = cls._backward_entry(cls)
        new_outs, saved, _node = _C._function_apply(
            ctx, cls._backward_name, backward, list(args), tensor_outs,
            list(getattr(ctx, "non_differentiable", ())), list(getattr(ctx, "dirty_tensors", ())),
            list(getattr(ctx, "to_save", ())), getattr(ctx, "materialize_grads", True))
        ctx._saved = saved
        if hasattr(ctx, "to_save"):
            del ctx.to_save
        outs = [n if isinstance(o, _C.Tensor) else o for o, n in zip(outs, new_outs)]
        if tangents is not None:
            cls._forward_ad(ctx, tangents, outs)
        return tuple(outs) if is_tuple else outs[0]

    @classmethod
    def _forward_ad(cls, ctx, tangents, outs):
        ctx._in_jvp = True
        fw_prev = _C._set_fw_grad_enabled(False)
        try:
            out_tangents = cls.jvp(ctx, *tangents)
        finally:
            _C._set_fw_grad_enabled(fw_prev)
            ctx._in_jvp = False
        if not isinstance(out_tangents, tuple):
            out_tangents = (out_tangents,)
        if len(out_tangents) != len(outs):
            raise RuntimeError(f"Function's jvp returned an invalid number of forward gradients (expected {len(outs)} "
                               f"but got {len(out_tangents)})")
        for o, t in zip(outs, out_tangents):
            if isinstance(o, _C.Tensor) and t is not None and o.is_floating_point():
                _C._set_fw_grad(o, t)

    @staticmethod
    def _backward_entry(cls):
        def run(ctx, *grads):
            return cls.backward(ctx, *grads)
        return run


def _input_tangents(args):
    """The tangents jvp() receives (zeros for tensors without one, None for non-tensors), or None when
    no input carries a tangent."""
    if not _C._is_fw_grad_enabled():
        return None
    tangents = [_C._fw_grad(a) if isinstance(a, _C.Tensor) else None for a in args]
    if all(t is None for t in tangents):
        return None
    return tuple(zeros_like(a) if t is None and isinstance(a, _C.Tensor) else t for a, t in zip(args, tangents))


def once_differentiable(fn):
    """Marks a backward that is not itself differentiable: it runs under no_grad."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            return fn(ctx, *args)
    return wrapper


class InplaceFunction(Function):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class NestedIOFunction(Function):
    pass
