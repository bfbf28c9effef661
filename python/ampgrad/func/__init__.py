"""torch.func for ampgrad: grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian, functional_call and
vmap, as function transforms over the engine's tape.

How the transforms differ from torch's (results are the same): ampgrad has no functorch levels. A
transform marks the inputs it differentiates by an alias that requires grad (a view when the input
already carries a graph, so an outer transform still sees it) and asks autograd.grad for the result
with create_graph exactly when an input already required grad: grad(grad(f)) and jacfwd(jacrev(f))
nest, and an outermost transform returns plain tensors. vmap runs func once per batch entry and
stacks the results (correct for every op; not a batched kernel), so a vmapped function may call
.item() or data-dependent Python control flow, which torch's vmap rejects.
"""
from ..autograd import forward_ad as _fwad
from ..autograd import grad as _autograd_grad
from ..autograd import grad_mode as _grad_mode
from .. import _C
from .._C import Tensor
from .._creation import zeros_like as _zeros_like

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "functional_call", "vmap"]


# ---- pytrees of tensors (dict, list, tuple, leaves)
def _flatten(tree):
    if isinstance(tree, dict):
        keys = list(tree.keys())
        leaves, specs = [], []
        for k in keys:
            l, s = _flatten(tree[k])
            leaves += l
            specs.append(s)
        return leaves, ("dict", keys, specs)
    if isinstance(tree, (list, tuple)):
        leaves, specs = [], []
        for v in tree:
            l, s = _flatten(v)
            leaves += l
            specs.append(s)
        return leaves, (type(tree), None, specs)
    return [tree], None


def _unflatten(leaves, spec):
    it = iter(leaves)

    def build(s):
        if s is None:
            return next(it)
        kind, keys, specs = s
        if kind == "dict":
            return {k: build(c) for k, c in zip(keys, specs)}
        vals = [build(c) for c in specs]
        return kind(vals) if kind is list else (kind(*vals) if hasattr(kind, "_fields") else kind(vals))
    return build(spec)


def _mark(t):
    """An alias of t that requires grad; keeps t's graph when it has one (nested transforms)."""
    if not isinstance(t, Tensor):
        raise TypeError(f"expected tensors in the differentiated arguments, got {type(t).__name__}")
    if not t.dtype.is_floating_point:
        raise RuntimeError("only Tensors of floating point dtype can require gradients")
    return t.view_as(t) if t.requires_grad else t.detach().requires_grad_(True)


def _argnums(argnums, nargs):
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    if not nums:
        raise RuntimeError("argnums must be non-empty")
    for n in nums:
        if not isinstance(n, int):
            raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(n)}")
        if not -nargs <= n < nargs:
            raise RuntimeError(f"Got argnums={n}, but only {nargs} positional inputs")
    return single, tuple(n % nargs for n in nums)


def _outer_needs_graph(leaves):
    return any(isinstance(t, Tensor) and t.requires_grad for t in leaves)


def grad_and_value(func, argnums=0, has_aux=False):
    """(gradient of func's scalar output w.r.t. args[argnums], output) [, aux]."""
    def wrapper(*args, **kwargs):
        single, nums = _argnums(argnums, len(args))
        args = list(args)
        flat, specs, nested = [], [], False
        with _grad_mode.enable_grad():
            for n in nums:
                leaves, spec = _flatten(args[n])
                nested = nested or _outer_needs_graph(leaves)
                marked = [_mark(t) for t in leaves]
                args[n] = _unflatten(marked, spec)
                flat.append(marked)
                specs.append(spec)
            out = func(*args, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError("grad_and_value(f)(*args): output of function f should be a tuple: (output, aux) "
                                       "if has_aux is True")
                out, aux = out
            if not isinstance(out, Tensor):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(out)}")
            if out.dim() != 0:
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor with "
                                   f"{out.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
            all_in = [t for group in flat for t in group]
            gs = _autograd_grad(out, all_in, create_graph=nested, allow_unused=True, materialize_grads=True) \
                if out.requires_grad else tuple(_zeros_like(t) for t in all_in)
        gs = list(gs)
        grads, k = [], 0
        for group, spec in zip(flat, specs):
            grads.append(_unflatten([g if nested else g.detach() for g in gs[k:k + len(group)]], spec))
            k += len(group)
        g = grads[0] if single else tuple(grads)
        value = out if nested else out.detach()
        return (g, (value, aux)) if has_aux else (g, value)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of func's scalar output w.r.t. args[argnums] (a pytree of tensors)."""
    gv = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn[, aux]); vjp_fn(cotangents) returns one gradient per primal."""
    leaves, spec = _flatten(list(primals))
    nested = _outer_needs_graph(leaves)
    with _grad_mode.enable_grad():
        marked = [_mark(t) for t in leaves]
        out = func(*_unflatten(marked, spec))
    aux = None
    if has_aux:
        out, aux = out
    out_leaves, out_spec = _flatten(out)

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        ct_leaves, _ = _flatten(cotangents)
        if len(ct_leaves) != len(out_leaves):
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of outputs")
        cg = nested or _outer_needs_graph(ct_leaves) if create_graph is None else create_graph
        with _grad_mode.enable_grad():
            gs = _autograd_grad(out_leaves, marked, ct_leaves, retain_graph=retain_graph, create_graph=cg,
                                allow_unused=True, materialize_grads=True)
        gs = [g if cg else g.detach() for g in gs]
        return tuple(_unflatten(gs, spec))
    outv = out if nested else _unflatten([o.detach() for o in out_leaves], out_spec)
    return (outv, vjp_fn, aux) if has_aux else (outv, vjp_fn)


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), the directional derivative along tangents) by forward-mode AD."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to be tuples")
    p_leaves, spec = _flatten(list(primals))
    t_leaves, _ = _flatten(list(tangents))
    if len(p_leaves) != len(t_leaves):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the same python structure")
    with _fwad.dual_level():
        duals = [_fwad.make_dual(p, t) for p, t in zip(p_leaves, t_leaves)]
        out = func(*_unflatten(duals, spec))
        aux = None
        if has_aux:
            out, aux = out
        o_leaves, o_spec = _flatten(out)
        prim, tan = [], []
        for o in o_leaves:
            u = _fwad.unpack_dual(o)
            prim.append(u.primal)
            tan.append(u.tangent if u.tangent is not None else u.primal * 0)
    res = (_unflatten(prim, o_spec), _unflatten(tan, o_spec))
    return res + (aux,) if has_aux else res


def _jac(func, argnums, has_aux, forward):
    def wrapper(*args):
        single, nums = _argnums(argnums, len(args))
        args = list(args)
        nested = _outer_needs_graph([args[n] for n in nums if isinstance(args[n], Tensor)])
        with _grad_mode.enable_grad():
            marked = {n: _mark(args[n]) for n in nums}
            for n, t in marked.items():
                args[n] = t
            out = func(*args)
            aux = None
            if has_aux:
                out, aux = out
            if not isinstance(out, Tensor):
                raise RuntimeError("jacrev/jacfwd: expected func to return a Tensor")
            flat_out = out.reshape(-1)
            jacs = []
            for n in nums:
                x = marked[n]
                rows = []
                for i in range(flat_out.numel()):
                    (g,) = _autograd_grad(flat_out[i], x, retain_graph=True, create_graph=True,
                                          allow_unused=True, materialize_grads=True)
                    rows.append(g)
                j = _C.stack(rows, 0) if rows else x.new_zeros((0,) + tuple(x.shape))
                j = j.reshape(tuple(out.shape) + tuple(x.shape))
                jacs.append(j if nested else j.detach())
        res = jacs[0] if single else tuple(jacs)
        return (res, aux) if has_aux else res
    return wrapper


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian of func w.r.t. args[argnums]: shape out.shape + in.shape (one VJP per output)."""
    return _jac(func, argnums, has_aux, False)


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of func w.r.t. args[argnums] (same values as jacrev)."""
    if randomness not in ("error", "same", "different"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    return _jac(func, argnums, has_aux, True)


def hessian(func, argnums=0):
    """jacfwd(jacrev(func)): shape in.shape + in.shape for a scalar func."""
    return jacfwd(jacrev(func, argnums), argnums)


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """Calls module with the given tensors in place of its parameters and buffers (names as in
    state_dict), restoring them afterwards."""
    if isinstance(parameter_and_buffer_dicts, dict):
        values = dict(parameter_and_buffer_dicts)
    else:
        values = {}
        for d in parameter_and_buffer_dicts:
            for k, v in d.items():
                if k in values:
                    raise ValueError(f"['{k}'] appeared in multiple dictionaries; behavior of functional call is ambiguous")
                values[k] = v
    named = dict(module.named_parameters(remove_duplicate=False)) if _has_kw(module.named_parameters) else dict(module.named_parameters())
    named_b = dict(module.named_buffers())
    originals = {**named, **named_b}
    if strict:
        missing = [k for k in originals if k not in values]
        unexpected = [k for k in values if k not in originals]
        if missing or unexpected:
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t"
                               f"Unexpected key(s): {unexpected}.\n\tMissing key(s): {missing}.")
    if tie_weights:
        by_id = {}
        for k, t in originals.items():
            by_id.setdefault(id(t), []).append(k)
        for k in list(values):
            if k in originals:
                for other in by_id[id(originals[k])]:
                    values.setdefault(other, values[k])
    saved = []
    try:
        for name, v in values.items():
            owner, attr = _owner(module, name)
            if attr in owner._parameters:
                saved.append((owner, "_parameters", attr, owner._parameters[attr]))
                owner._parameters[attr] = v
            elif attr in owner._buffers:
                saved.append((owner, "_buffers", attr, owner._buffers[attr]))
                owner._buffers[attr] = v
            else:
                saved.append((owner, None, attr, owner.__dict__.get(attr, _MISSING)))
                owner.__dict__[attr] = v
        args = () if args is None else (args if isinstance(args, tuple) else (args,))
        return module(*args, **(kwargs or {}))
    finally:
        for owner, where, attr, old in reversed(saved):
            if where is None:
                if old is _MISSING:
                    owner.__dict__.pop(attr, None)
                else:
                    owner.__dict__[attr] = old
            else:
                getattr(owner, where)[attr] = old


_MISSING = object()


def _has_kw(fn):
    import inspect
    try:
        return "remove_duplicate" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _owner(module, name):
    parts = name.split(".")
    m = module
    for p in parts[:-1]:
        m = getattr(m, p)
    return m, parts[-1]


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """func mapped over a batch dimension of its inputs: in_dims per argument (int, or None for an
    argument passed whole), out_dims per output. Runs func per batch entry and stacks the results."""
    if randomness not in ("error", "same", "different"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")

    def wrapper(*args, **kwargs):
        dims = in_dims if isinstance(in_dims, (tuple, list)) else (in_dims,) * len(args)
        if len(dims) != len(args):
            raise ValueError(f"vmap(f, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the structure of "
                             f"`inputs`. in_dims has structure with {len(dims)} entries but inputs has {len(args)}.")
        size = None
        for a, d in zip(args, dims):
            if d is None:
                continue
            for t in _flatten(a)[0]:
                if isinstance(t, Tensor):
                    dd = d % t.dim() if t.dim() else d
                    if t.dim() == 0 or not -t.dim() <= d < t.dim():
                        raise ValueError(f"vmap(f, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but the "
                                         f"input is of type {type(t)} with {t.dim()} dims")
                    n = t.shape[dd]
                    if size is not None and n != size:
                        raise ValueError("vmap: Expected all tensors to have the same size in the mapped dimension, got "
                                         f"sizes {size} and {n} for the mapped dimension")
                    size = n
        if size is None:
            raise ValueError("vmap(f, in_dims=..., ...)(<inputs>): at least one input must be batched (in_dims not all None)")
        outs = []
        for i in range(size):
            call = []
            for a, d in zip(args, dims):
                if d is None:
                    call.append(a)
                else:
                    leaves, spec = _flatten(a)
                    call.append(_unflatten([t.select(d, i) if isinstance(t, Tensor) else t for t in leaves], spec))
            outs.append(func(*call, **kwargs))
        o_leaves0, o_spec = _flatten(outs[0])
        od = out_dims if isinstance(out_dims, (tuple, list)) else (out_dims,) * len(o_leaves0)
        cols = list(zip(*[_flatten(o)[0] for o in outs]))
        stacked = []
        for col, d in zip(cols, od):
            if not all(isinstance(c, Tensor) for c in col):
                raise ValueError(f"vmap: `{getattr(func, '__name__', 'func')}` must only return Tensors, got type "
                                 f"{type(next(c for c in col if not isinstance(c, Tensor)))}")
            if d is None:
                stacked.append(col[0])
            else:
                stacked.append(_C.stack(list(col), d))
        return _unflatten(stacked, o_spec)
    return wrapper
