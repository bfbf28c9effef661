"""autograd.graph: graph inspection (Node, GradientEdge), hooks on saved tensors and on the
gradients of several tensors, and allow_mutation_on_saved_tensors (mirrors torch.autograd.graph)."""
import contextlib
import functools
import threading
import weakref
from collections import defaultdict
from typing import NamedTuple, Optional

from .. import _C
from .._creation import empty
from .grad_mode import enable_grad

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks", "register_multi_grad_hook",
           "allow_mutation_on_saved_tensors", "Node", "GradientEdge", "get_gradient_edge", "increment_version"]

# Every grad_fn (C++ op nodes, AccumulateGrad, autograd.Function nodes) is an instance of this.
Node = _C.Node


def _get_grad_fn_or_grad_acc(t):
    if isinstance(t, GradientEdge):
        return t.node
    if t.requires_grad and t.grad_fn is None:
        with enable_grad():
            node = t.view_as(t).grad_fn.next_functions[0][0]
    else:
        node = t.grad_fn
    if node is None:
        raise AssertionError("Expected gradient function to be set")
    return node


class GradientEdge(NamedTuple):
    """Object representing a given gradient edge within the autograd graph: the gradient flowing
    into input `output_nr` of `node`. Get one with get_gradient_edge(tensor)."""
    node: Node
    output_nr: int
    ownership_token: Optional[Node] = None


def get_gradient_edge(tensor):
    """The gradient edge for computing the gradient of `tensor`: autograd.grad(loss, input) and
    autograd.grad(loss, get_gradient_edge(input)) are equivalent."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require gradients")
    return GradientEdge(_get_grad_fn_or_grad_acc(tensor), tensor.output_nr)


def increment_version(tensor):
    """Bumps the version counter of `tensor` (or of each tensor in an iterable), for code that
    modifies tensor data in a way autograd cannot see. Inference tensors are left alone."""
    if isinstance(tensor, _C.Tensor):
        tensor = (tensor,)
    _C._increment_version(tuple(tensor))


class saved_tensors_hooks:
    """Context manager setting pack/unpack hooks for tensors saved for backward (by every op and
    by Function's save_for_backward): the graph keeps pack_hook(tensor) and backward reads
    unpack_hook(packed). Nested: the innermost pair applies."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        _C._push_saved_tensors_default_hooks(self.pack_hook, self.unpack_hook)

    def __exit__(self, *args):
        _C._pop_saved_tensors_default_hooks()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are stored on CPU and moved back to their device for backward (no copy for
    tensors already on CPU). pin_memory=True pins the CPU copy when CUDA is available."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack_to_cpu(tensor):
            if not pin_memory:
                return (tensor.device, tensor.cpu())
            packed = empty(tensor.size(), dtype=tensor.dtype, pin_memory=_C._cuda_is_available())
            packed.copy_(tensor)
            return (tensor.device, packed)

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Inside, entering saved_tensors_hooks (or save_on_cpu) raises RuntimeError(error_message)."""
    maybe_prev_message = None
    try:
        maybe_prev_message = _C._saved_tensors_hooks_get_disabled_error_message()
        _C._saved_tensors_hooks_disable(error_message)
        yield
    finally:
        if maybe_prev_message is None:
            _C._saved_tensors_hooks_enable()
        else:
            _C._saved_tensors_hooks_disable(maybe_prev_message)


class _MultiHandle:
    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for handle in self.handles:
            handle.remove()

    def __enter__(self):
        return self

    def __exit__(self, *args):
        self.remove()


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """mode="all": fn(grads) runs once the gradients of every tensor the current backward will
    compute are ready (None for the others). mode="any": fn(grad) runs on the first of them.
    Returns a handle whose remove() unregisters the hook."""
    supported_modes = ("all", "any")
    lock = threading.Lock()
    if mode not in supported_modes:
        raise ValueError(f"Expects mode to be one of {supported_modes} but got {mode}")

    if mode == "all":
        count = {}
        nb_calls = None
        buffer = {}
        grad_fns = list(map(_get_grad_fn_or_grad_acc, tensors))
        len_tensors = len(tensors)

        def get_inner_hook(idx):
            def inner_hook(grad):
                nonlocal nb_calls
                id = _C._current_graph_task_id()
                if id == -1:
                    raise AssertionError("expected this hook to be called inside a backward call")
                count[id] = count.get(id, 0)
                buffer[id] = buffer.get(id, [None] * len_tensors)
                with lock:
                    curr_count, count[id] = count[id], count[id] + 1
                    if curr_count == 0:  # the first call computes how many calls this backward makes
                        nb_calls = sum(map(_C._will_engine_execute_node, grad_fns))
                buffer[id][idx] = grad
                if curr_count == nb_calls - 1:
                    fn(buffer[id])
                    del count[id]
                    del buffer[id]
            return inner_hook

        handles = tuple(t.register_hook(get_inner_hook(i)) for i, t in enumerate(tensors))
    else:
        ran_hook = defaultdict(bool)

        @functools.wraps(fn)
        def wrapped_fn(grad):
            id = _C._current_graph_task_id()
            if id == -1:
                raise AssertionError("expected this hook to be called inside a backward call")
            with lock:
                prev, ran_hook[id] = ran_hook[id], True
            if prev:
                return
            fn(grad)

        handles = tuple(t.register_hook(wrapped_fn) for t in tensors if t.requires_grad)
    return _MultiHandle(handles)


# ---- allow_mutation_on_saved_tensors: saved tensors are packed as handles; an in-place op on a
# saved tensor's storage first clones it (torch does this in a dispatch mode; ampgrad's in-place
# ops call _C's mutation hook before writing), and backward unpacks the clone.
_allow_mutation_on_saved_tensors_enabled = False


def _get_tid(tensor):
    return (id(tensor), tensor.untyped_storage_ptr(), tensor._version)


def _get_sid(tensor):
    return (tensor.untyped_storage_ptr(), tensor._version)


class _Handle:
    pass


class _swap_with_cloned(saved_tensors_hooks):
    def __init__(self, ctx):
        def pack_hook(tensor):
            tid = _get_tid(tensor)
            sid = _get_sid(tensor)
            ctx.sid_to_tid[sid].add(tid)
            # The same tensor (of the same version) can be saved several times: one handle.
            if tid not in ctx.tid_to_weakhandle:
                handle = _Handle()
                ctx.tid_to_weakhandle[tid] = handle
                ctx.original[handle] = tensor
            else:
                handle = ctx.tid_to_weakhandle[tid]
            return handle

        def unpack_hook(handle):
            error_msg = ("Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
                         "in which the graph was originally recorded.")
            if not _allow_mutation_on_saved_tensors_enabled:
                raise AssertionError(error_msg)
            if handle in ctx.cloned:
                return ctx.cloned[handle]
            if handle not in ctx.original:
                raise AssertionError(error_msg)
            return ctx.original[handle]

        super().__init__(pack_hook, unpack_hook)


class _AllowMutationOnSavedContext:
    def __init__(self):
        self.cloned = weakref.WeakKeyDictionary()
        self.original = weakref.WeakKeyDictionary()
        self.tid_to_weakhandle = weakref.WeakValueDictionary()
        self.sid_to_tid = defaultdict(set)

    def clear(self):
        self.cloned.clear()
        self.original.clear()
        self.tid_to_weakhandle.clear()
        self.sid_to_tid.clear()

    def _before_mutation(self, t):
        # Called (with grad mode off) before an in-place op writes into t's storage.
        sid = _get_sid(t)
        for tid in self.sid_to_tid.get(sid, ()):
            handle = self.tid_to_weakhandle.get(tid)
            if handle is None or handle in self.cloned:  # freed by backward, or cloned already
                continue
            self.cloned[handle] = self.original[handle].clone()
            del self.original[handle]


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Context manager under which tensors saved for backward may be mutated in place: they are
    cloned on mutation so backward sees the saved values. Run forward and backward inside it.
    Yields the _AllowMutationOnSavedContext (its state is cleared on exit). Cannot be nested."""
    global _allow_mutation_on_saved_tensors_enabled
    # Better than torch 2.13, whose failed inner context also turns the outer one off.
    if _allow_mutation_on_saved_tensors_enabled:
        raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
    ctx = _AllowMutationOnSavedContext()
    with _swap_with_cloned(ctx):
        try:
            _allow_mutation_on_saved_tensors_enabled = True
            _C._set_mutation_hook(ctx._before_mutation)
            yield ctx
        finally:
            _C._set_mutation_hook(None)
            ctx.clear()
            _allow_mutation_on_saved_tensors_enabled = False


# ---- to_dot (amptools): a picture of the autograd graph, nodes coloured by dtype ----------------------

_DTYPE_COLORS = {"float32": "#a6cee3", "float16": "#fdbf6f", "bfloat16": "#b2df8a", "float64": "#cab2d6"}
_OTHER_COLOR = "#dddddd"


def _dtype_str(dt):
    return str(dt).rsplit(".", 1)[-1]


def _nbytes_str(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024.0


def _shape_str(shape):
    return "(" + ", ".join(str(int(s)) for s in shape) + ")"


def _dot_escape(s):
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


class AutogradDot(str):
    """The DOT source of an autograd graph (a str). render() writes SVG/PNG/PDF with the `graphviz`
    package; in Jupyter the object shows itself as SVG when graphviz is installed."""

    @property
    def source(self):
        return str(self)

    def _graphviz(self):
        try:
            import graphviz
        except ImportError as e:
            raise ImportError("rendering the autograd graph needs the `graphviz` Python package (and Graphviz's "
                              "`dot` program); the DOT source is this string itself") from e
        return graphviz.Source(str(self))

    def render(self, filename, format="svg", cleanup=True):
        """Writes filename.<format> with graphviz; returns the path it wrote."""
        return self._graphviz().render(filename, format=format, cleanup=cleanup)

    def pipe(self, format="svg"):
        return self._graphviz().pipe(format=format)

    def _repr_svg_(self):
        try:
            return self.pipe("svg").decode("utf-8")
        except Exception:  # no graphviz: Jupyter falls back to the text repr
            return None


def to_dot(output, params=None, show_saved=True):
    """The autograd graph that produced `output` (a tensor or a sequence of tensors) as DOT source.

    One node per backward node reachable from the outputs' grad_fn (torch's node names, e.g.
    ``AddmmBackward0``, ``torch::autograd::AccumulateGrad``), labelled with the shape and dtype of
    the gradient it receives (the forward output's) and, with show_saved, the shapes, dtypes and bytes
    of the tensors it saved for backward; filled by dtype (float32 blue, bfloat16 green, float16
    orange, float64 purple). An edge goes from each node to the node that consumes its gradient's
    producer, i.e. from every next_functions entry to the node listing it. `params` (a dict name ->
    tensor, e.g. dict(model.named_parameters())) names the AccumulateGrad leaves.
    Returns an AutogradDot (a str): .render(path, format="svg"|"png") with the graphviz package, and
    an inline SVG in Jupyter."""
    outputs = [output] if isinstance(output, _C.Tensor) else list(output)
    names = {}
    if params is not None:
        for k, v in dict(params).items():
            names[id(v)] = k
    roots = []
    for o in outputs:
        if not isinstance(o, _C.Tensor):
            raise TypeError(f"to_dot(): expected a Tensor or a sequence of Tensors, got {type(o).__name__}")
        if o.grad_fn is not None:
            roots.append(o.grad_fn)
    keep, ids, order = [], {}, []  # keep: the Python node objects alive so their ids stay unique

    def key(n):
        if id(n) not in ids:
            ids[id(n)] = f"n{len(ids)}"
            keep.append(n)
            order.append(n)
            return ids[id(n)], True
        return ids[id(n)], False

    stack = []
    for r in roots:
        k, new = key(r)
        if new:
            stack.append(r)
    edges = []
    while stack:
        n = stack.pop()
        for nxt, _ in n.next_functions:
            if nxt is None:
                continue
            k, new = key(nxt)
            edges.append((k, ids[id(n)]))
            if new:
                stack.append(nxt)

    lines = ["digraph autograd {", "  rankdir=BT;",
             '  node [shape=box, style="filled,rounded", fontname="monospace", fontsize=10];']
    for n in order:
        name = n.name()
        label = [name]
        dtype = None
        if name.endswith("AccumulateGrad"):
            v = n.variable
            dtype = _dtype_str(v.dtype)
            if id(v) in names:
                label.append(names[id(v)])
            label.append(f"{_shape_str(v.shape)} {dtype}")
        else:
            meta = n._input_metadata()
            for shape, dt in meta:
                dtype = dtype or _dtype_str(dt)
                label.append(f"{_shape_str(shape)} {_dtype_str(dt)}")
            if show_saved and hasattr(n, "_saved_tensors_info"):
                saved = [s for s in n._saved_tensors_info() if s is not None]
                if saved:
                    total = sum(s[2] for s in saved)
                    label.append(f"saved {len(saved)}: {_nbytes_str(total)}")
                    for shape, dt, _ in saved:
                        label.append(f"  {_shape_str(shape)} {_dtype_str(dt)}")
        color = _DTYPE_COLORS.get(dtype, _OTHER_COLOR)
        lines.append(f'  {ids[id(n)]} [label="{_dot_escape(chr(10).join(label))}", fillcolor="{color}"];')
    for a, b in edges:
        lines.append(f"  {a} -> {b};")
    legend = "  ".join(f"{k}: {v}" for k, v in _DTYPE_COLORS.items())
    lines.append(f'  label="fill colour = dtype of the gradient a node receives ({legend})"; fontsize=9;')
    lines.append("}")
    return AutogradDot("\n".join(lines) + "\n")
