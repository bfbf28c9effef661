"""ampgrad.library: user-defined operators as torch.library (torch 2.13) documents them: custom_op (schema
inferred from type hints), register_kernel, register_autograd (setup_context + backward: one graph node
GeneratedBackwardFor_<ns>_<name>_<overload>Backward), register_fake, register_autocast, register_vmap,
Library(ns, kind).define / impl, opcheck, and the ops under ampgrad.ops.<ns>.<name> (ampgrad/_ops.py holds
the registry and the dispatch order).

register_autocast(op, device_type, cast_inputs) puts the op behind the same autocast gate as the op table's
rows (Note [Autocast gate], csrc/bindings/library.cpp): in an autocast region enabled for `device_type`,
the floating, non-float64 tensors of that device among the arguments are cast to `cast_inputs` (through the
cast cache, so an fp32 weight is cast once per region) and the op runs with autocast excluded on that device;
nested regions, enabled=False and ops already inside a gated op behave as for a built-in op.

How it differs from torch (no FakeTensor, no torch.compile in ampgrad): register_fake functions are kept and
checked by opcheck against the real kernel's outputs (shape, dtype, device); register_vmap functions are kept
but ampgrad.func.vmap already runs a custom op once per batch entry; Library(..., "IMPL") cannot replace the
kernels of ampgrad's built-in (aten) ops, which live in the C++ op table.
"""
import collections.abc
import contextlib
import inspect
import math
import typing
import warnings
import weakref
from types import GenericAlias

from . import _C
from . import _ops
from . import types as _types
from ._C import Tensor
from ._creation import ones_like as _ones_like
from .autograd import grad as _autograd_grad
from .autograd.grad_mode import no_grad as _no_grad
from ._ops import OpOverload, Tag, ops

__all__ = ["Library", "custom_op", "CustomOpDef", "infer_schema", "define", "impl", "register_kernel",
           "register_fake", "register_autograd", "register_autocast", "register_vmap", "impl_abstract", "get_ctx",
           "opcheck", "fallthrough_kernel"]

_reserved_namespaces = ["prim"]
_keep_alive = []


def fallthrough_kernel():
    """A dummy function to pass to Library.impl in order to register a fallthrough."""
    raise NotImplementedError("fallthrough_kernel() should never be called.")


# ---- schema inference (torch/_library/infer_schema.py)
def _derived_types(base_type, cpp_type, list_base, optional_base_list, optional_list_base):
    result = [(base_type, cpp_type), (typing.Optional[base_type], f"{cpp_type}?")]

    def seq_types(typ):
        return (typing.Sequence[typ], typing.List[typ], GenericAlias(collections.abc.Sequence, (typ,)),
                GenericAlias(list, (typ,)))

    if list_base:
        result.extend((t, f"{cpp_type}[]") for t in seq_types(base_type))
    if optional_base_list:
        result.extend((t, f"{cpp_type}?[]") for t in seq_types(typing.Optional[base_type]))
    if optional_list_base:
        result.extend((typing.Optional[t], f"{cpp_type}[]?") for t in seq_types(base_type))
    return result


SUPPORTED_PARAM_TYPES = {}
for _line in [(Tensor, "Tensor", True, True, False), (int, "SymInt", True, False, True),
              (float, "float", True, False, True), (bool, "bool", True, False, True), (str, "str", False, False, False),
              (_types.Number, "Scalar", True, False, False), (_C.dtype, "ScalarType", False, False, False),
              (_C.device, "Device", False, False, False)]:
    SUPPORTED_PARAM_TYPES.update(dict(_derived_types(*_line)))

SUPPORTED_RETURN_TYPES = {Tensor: "Tensor", typing.List[Tensor]: "Tensor[]", list[Tensor]: "Tensor[]", int: "SymInt",
                          float: "float", bool: "bool", _types.Number: "Scalar"}


def _parse_return(annotation, error_fn):
    if annotation is None:
        return "()"
    if annotation is inspect.Parameter.empty:
        error_fn("No return type annotation was provided. Please add one.")
    origin = typing.get_origin(annotation)
    if origin is not tuple:
        if annotation not in SUPPORTED_RETURN_TYPES:
            error_fn(f"Return has unsupported type {annotation}. The valid types are: {SUPPORTED_RETURN_TYPES}.")
        return SUPPORTED_RETURN_TYPES[annotation]
    args = typing.get_args(annotation)
    for arg in args:
        if arg not in SUPPORTED_RETURN_TYPES:
            error_fn(f"Return has unsupported type {annotation}. The valid types are: {SUPPORTED_RETURN_TYPES}.")
    output_ty = ", ".join(SUPPORTED_RETURN_TYPES[arg] for arg in args)
    if len(args) == 1:
        output_ty = "(" + output_ty + ")"
    return "(" + output_ty + ")"


def _tuple_to_list(tuple_type):
    type_args = typing.get_args(tuple_type)
    if tuple_type is typing.Tuple or tuple_type is tuple or not type_args:
        return list
    if len(type_args) == 1 or (len(type_args) == 2 and type_args[1] is Ellipsis):
        return list[type_args[0]]
    return list[typing.Union[tuple(type_args)]]


def _dtype_name(d):
    return str(d).rpartition(".")[2]


def infer_schema(prototype_function, /, *, mutates_args, op_name=None, tags=()):
    """Parses the schema of a function from its type hints, e.g. "(Tensor x) -> Tensor" (torch's rules:
    Tensor, int (SymInt), float, bool, str, Number (Scalar), dtype, device, Optional and lists of them)."""
    UNKNOWN_MUTATES = "unknown"
    pf_globals = prototype_function.__globals__
    sig = inspect.signature(prototype_function)
    if tags is None:
        tags = ()
    elif isinstance(tags, Tag):
        tags = (tags,)
    is_inplace, is_out = Tag.inplace in tags, Tag.out in tags
    if is_inplace and is_out:
        raise AssertionError("torch.Tag.inplace and torch.Tag.out are mutually exclusive")
    if type(mutates_args) is not str:
        mutates_args = tuple(mutates_args)

    def error_fn(what):
        raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

    def convert_type_string(annotation_type):
        try:
            return eval(annotation_type, pf_globals, None)
        except Exception as e:
            error_fn(f"Unsupported type annotation {annotation_type}. It is not a type. ({type(e).__name__}: {e})")

    def unstringify_type(ty):
        if isinstance(ty, str):
            return convert_type_string(ty)
        origin = typing.get_origin(ty)
        if origin:
            args = typing.get_args(ty)
            if any(isinstance(a, str) for a in args):
                return GenericAlias(origin, tuple(unstringify_type(a) for a in args))
        return ty

    params, seen_args = [], set()
    saw_kwarg_only_arg = False
    first_pos_name = first_pos_type = first_pos_alias = None
    out_aliases, out_names = [], []
    for idx, (name, param) in enumerate(sig.parameters.items()):
        if param.kind not in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY):
            error_fn("We do not support positional-only args, varargs, or varkwargs.")
        if param.kind == inspect.Parameter.KEYWORD_ONLY and not saw_kwarg_only_arg:
            params.append("*")
            saw_kwarg_only_arg = True
        if param.annotation is inspect.Parameter.empty:
            error_fn(f"Parameter {name} must have a type annotation.")
        annotation_type = unstringify_type(param.annotation)
        if annotation_type not in SUPPORTED_PARAM_TYPES:
            if hasattr(annotation_type, "__origin__") and annotation_type.__origin__ is tuple:
                list_type = _tuple_to_list(annotation_type)
                example = f"For example, {list_type}.\n\n" if list_type in SUPPORTED_PARAM_TYPES else "\n\n"
                error_fn(f"Parameter {name} has unsupported type {param.annotation}. We do not support Tuple inputs in "
                         f"schema. As a workaround, please try to use List instead. {example}"
                         f"The valid types are: {SUPPORTED_PARAM_TYPES.keys()}.")
            error_fn(f"Parameter {name} has unsupported type {param.annotation}. "
                     f"The valid types are: {SUPPORTED_PARAM_TYPES.keys()}.")
        schema_type = SUPPORTED_PARAM_TYPES[annotation_type]
        if param.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD and first_pos_name is None:
            first_pos_name, first_pos_type, first_pos_alias = name, schema_type, f"a{idx}"
        is_mutated = False
        if type(mutates_args) is str:
            if mutates_args != UNKNOWN_MUTATES:
                raise ValueError("mutates_args must either be a sequence of the names of the arguments that are "
                                 "mutated or the string 'unknown'. ")
            if schema_type.startswith("Tensor"):
                is_mutated = True
                schema_type = f"Tensor(a{idx}!){schema_type[len('Tensor'):]}"
        elif name in mutates_args:
            is_mutated = True
            if not schema_type.startswith("Tensor"):
                error_fn(f"Parameter {name} is in mutable_args but only Tensors or collections of Tensors can be "
                         "mutated")
            schema_type = f"Tensor(a{idx}!){schema_type[len('Tensor'):]}"
        if is_out and is_mutated:
            if param.kind != inspect.Parameter.KEYWORD_ONLY:
                error_fn("torch.Tag.out requires mutable arguments to be keyword-only.")
            if schema_type != f"Tensor(a{idx}!)":
                error_fn("torch.Tag.out only supports mutable keyword-only Tensor arguments.")
            out_aliases.append(f"a{idx}")
            out_names.append(name)
        seen_args.add(name)
        if param.default is inspect.Parameter.empty:
            params.append(f"{schema_type} {name}")
        else:
            d = param.default
            if d is None or isinstance(d, (int, float, bool)):
                default_repr = str(d)
            elif isinstance(d, (str, _C.device)):
                default_repr = f'"{d}"'
            elif isinstance(d, _C.dtype):
                default_repr = _dtype_name(d)
            else:
                error_fn(f"Parameter {name} has an unsupported default value type {type(d)}. "
                         "Please file an issue on GitHub so we can prioritize this.")
            params.append(f"{schema_type} {name}={default_repr}")
    if mutates_args != UNKNOWN_MUTATES:
        not_seen = set(mutates_args) - seen_args
        if not_seen:
            error_fn(f"{not_seen} in mutates_args were not found in the custom op's signature. mutates_args should "
                     "contain the names of all args that the custom op mutates, or just the string 'unknown' if you "
                     "don't know.")
    if is_inplace:
        if first_pos_name is None:
            error_fn("torch.Tag.inplace requires a positional Tensor argument.")
        if first_pos_type != "Tensor":
            error_fn("torch.Tag.inplace requires the first positional argument to be a Tensor.")
        if type(mutates_args) is str or set(mutates_args) != {first_pos_name}:
            error_fn(f"torch.Tag.inplace requires mutates_args to contain exactly the first positional argument, "
                     f"got {mutates_args}.")
    if is_out and not out_aliases:
        error_fn("torch.Tag.out requires at least one mutable keyword-only Tensor argument.")
    ret_ann = unstringify_type(sig.return_annotation)
    if is_out:
        if len(out_aliases) == 1:
            ok = ret_ann is Tensor
        else:
            ok = typing.get_origin(ret_ann) is tuple and typing.get_args(ret_ann) == (Tensor,) * len(out_aliases)
        if not ok:
            error_fn("torch.Tag.out requires the return annotation to match the mutable keyword-only Tensor "
                     f"arguments {tuple(out_names)}.")
        rets = [f"Tensor({a}!)" for a in out_aliases]
        ret = rets[0] if len(rets) == 1 else f"({', '.join(rets)})"
    else:
        ret = _parse_return(ret_ann, error_fn)
    if is_inplace:
        if ret != "Tensor":
            error_fn("torch.Tag.inplace requires the return annotation to be torch.Tensor.")
        ret = f"Tensor({first_pos_alias}!)"
    if op_name is not None:
        return f"{op_name}({', '.join(params)}) -> {ret}"
    return f"({', '.join(params)}) -> {ret}"


# ---- Library
_impls = set()
_defs = set()


def _dispatch_key_for_device(device_type):
    return {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta"}.get(device_type, device_type.upper())


class Library:
    """Library(ns, kind, dispatch_key=""): registers new operators ("DEF", "FRAGMENT") in namespace ns, or
    kernels for existing ones ("IMPL"). Its registrations are removed when it is destroyed."""

    def __init__(self, ns, kind, dispatch_key=""):
        if kind not in ("IMPL", "DEF", "FRAGMENT"):
            raise ValueError(f"Unsupported kind: {kind}")
        if ns in _reserved_namespaces and kind in ("DEF", "FRAGMENT"):
            raise ValueError(f"{ns} is a reserved namespace. Please try creating a library with another name.")
        if kind == "DEF" and (ns == "aten" or ns in _def_namespaces):
            raise RuntimeError(
                f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; please put all of your "
                "definitions in a single TORCH_LIBRARY block.  If you were trying to specify implementations, "
                "consider using TORCH_LIBRARY_IMPL (which can be duplicated).  If you really intended to define "
                "operators for a single namespace in a distributed way, you can use TORCH_LIBRARY_FRAGMENT to "
                "explicitly indicate this.")
        if kind == "DEF":
            _def_namespaces.add(ns)
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key
        self.m = True
        self._op_defs = set()
        self._op_impls = set()
        self._ops = []  # the OpOverloads this library defined
        self._registrations = []  # (op, kind, key) this library registered
        weakref.finalize(self, _del_library, kind, ns, self._ops, self._registrations, self._op_impls, self._op_defs)

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema, alias_analysis="", *, tags=()):
        """Defines a new operator from its schema ("foo(Tensor x) -> Tensor"); returns its name."""
        if alias_analysis not in ["", "FROM_SCHEMA", "CONSERVATIVE"]:
            raise RuntimeError(f"Invalid alias_analysis type {alias_analysis}")
        if self.m is None:
            raise AssertionError("Library object has been destroyed")
        if isinstance(tags, Tag):
            tags = (tags,)
        op = _ops.define_op(self.ns, schema, tuple(tags))
        self._ops.append(op)
        qualname = self.ns + "::" + schema.split("(")[0]
        self._op_defs.add(qualname)
        _defs.add(qualname)
        for key, fn, with_keyset, lib in _pending.pop((op._qualname, op._overloadname), []):
            _register_impl(op, key, fn, with_keyset, lib)
        return op._name  # without the overload name, as torch's

    def _resolve_op_name(self, op_name, api_name):
        if isinstance(op_name, str):
            return op_name
        if isinstance(op_name, OpOverload):
            name = op_name._qualname
            return name if op_name._overloadname == "default" else name + "." + op_name._overloadname
        raise RuntimeError(f"{api_name} should be passed either a name or an OpOverload object as the first argument, "
                           f"got {type(op_name)}")

    def impl(self, op_name, fn, dispatch_key="", *, with_keyset=False, allow_override=True):
        """Registers `fn` as the kernel of op_name for dispatch_key ("CPU", "CUDA", "CompositeImplicitAutograd"
        (default), "CompositeExplicitAutograd", "Autograd", "AutocastCPU", "AutocastCUDA", "Meta")."""
        if not callable(fn):
            raise TypeError(f"Input function is required to be a callable but found type {type(fn)}")
        if dispatch_key == "":
            dispatch_key = self.dispatch_key
        name = self._resolve_op_name(op_name, "impl")
        key = self.ns + "/" + name.split("::")[-1] + "/" + dispatch_key
        if not allow_override and key in _impls:
            raise RuntimeError(
                "This is not allowed since there's already a kernel registered from python overriding {}"
                "'s behavior for {} dispatch key and {} namespace.".format(name.split("::")[-1], dispatch_key, self.ns))
        if self.m is None:
            raise AssertionError("Library object has been destroyed")
        qualname = name if "::" in name else f"{self.ns}::{name}"
        ns = qualname.split("::")[0]
        if ns == "aten":
            raise NotImplementedError(
                f"ampgrad.library: cannot register a kernel for the built-in op '{qualname}': ampgrad's built-in "
                "ops dispatch through the C++ op table (csrc/ops/op_list.def); define a new op in your own namespace")
        if fn is fallthrough_kernel:
            return
        dispatch_key = dispatch_key or "CompositeImplicitAutograd"
        op = _ops.lookup(qualname)
        if op is None:  # registered before its define(): applied when the op is defined (as torch's)
            base, _, ov = qualname.partition(".")
            _pending.setdefault((base, ov or "default"), []).append((dispatch_key, fn, with_keyset, self))
        else:
            _register_impl(op, dispatch_key, fn, with_keyset, self)
        self._op_impls.add(key)
        _impls.add(key)

    def fallback(self, fn, dispatch_key="", *, with_keyset=False):
        raise NotImplementedError("ampgrad.library: Library.fallback is not supported (ampgrad has no dispatch keys "
                                  "to fall back on)")

    def _destroy(self):
        _del_library(self.kind, self.ns, self._ops, self._registrations, self._op_impls, self._op_defs)
        self.m = None


_def_namespaces = set()
_pending = {}


def _del_library(kind, ns, defined, registrations, op_impls, op_defs):
    for op, slot, key, entry in registrations:
        table = op._kernels if slot == "kernel" else op._autocast if slot == "autocast" else None
        if table is not None and table.get(key) is entry:
            del table[key]
        elif slot == "autograd" and op._autograd_kernel is entry:
            op._autograd_kernel = op._default_autograd if hasattr(op, "_default_autograd") else None
        elif slot == "fake" and op._fake is entry:
            op._fake = None
    registrations.clear()
    for op in defined:
        _ops.remove_op(op)
    defined.clear()
    _impls.difference_update(op_impls)
    _defs.difference_update(op_defs)
    if kind == "DEF":
        _def_namespaces.discard(ns)


def _register_impl(op, key, fn, with_keyset, lib):
    if key.startswith("Autocast"):
        dev = key[len("Autocast"):].lower()

        def user_rule(args, kwargs, fn=fn, dev=dev):
            call = (lambda *a, **k: fn(_ops._KeySet(key), *a, **k)) if with_keyset else fn
            return _C._custom_autocast_gate(dev, None, call, tuple(args), kwargs)

        op._autocast[dev] = user_rule
        lib._registrations.append((op, "autocast", dev, user_rule))
    elif key in ("Autograd", "AutogradCPU", "AutogradCUDA"):
        def autograd_kernel(args, kwargs, fn=fn):
            call = (lambda *a, **k: fn(_ops._KeySet(key), *a, **k)) if with_keyset else fn
            return _ops._call_below_autograd(op, call, args, kwargs)

        op._autograd_kernel = autograd_kernel
        lib._registrations.append((op, "autograd", key, autograd_kernel))
    else:
        entry = (fn, with_keyset)
        op._kernels[key] = entry
        lib._registrations.append((op, "kernel", key, entry))
        if key == "Meta" and op._fake is None:
            op._fake = fn
            lib._registrations.append((op, "fake", key, fn))


@contextlib.contextmanager
def _scoped_library(*args, **kwargs):
    lib = Library(*args, **kwargs)
    try:
        yield lib
    finally:
        lib._destroy()


# ---- custom_op
OPDEFS = weakref.WeakValueDictionary()
OPDEF_TO_LIB = {}


def _get_library_allowing_overwrite(namespace, name):
    qualname = f"{namespace}::{name}"
    if qualname in OPDEF_TO_LIB:
        OPDEF_TO_LIB[qualname]._destroy()
        del OPDEF_TO_LIB[qualname]
    lib = Library(namespace, "FRAGMENT")
    OPDEF_TO_LIB[qualname] = lib
    return lib


def _normalize_tags(tags):
    if tags is None:
        return ()
    if isinstance(tags, Tag):
        tags = (tags,)
    return tuple(dict.fromkeys(tags))


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """Wraps a function into a custom operator "namespace::name" (schema inferred from its type hints unless
    given); returns a CustomOpDef. Usable as a decorator."""

    def inner(fn):
        normalized_tags = _normalize_tags(tags)
        schema_str = infer_schema(fn, mutates_args=mutates_args, tags=normalized_tags) if schema is None else schema
        namespace, opname = name.split("::")
        result = CustomOpDef(namespace, opname, schema_str, fn, normalized_tags)
        if schema is not None:
            expected = {a.name for a in result._opoverload._schema.arguments if a.is_write}
            if expected != set(mutates_args):
                raise ValueError(
                    f"Attempted to create a custom op with `mutates_args={mutates_args}` and `schema={schema}. The "
                    f"schema suggests that the op mutates {expected}which is different from what was provided to us "
                    "in `mutates_args`. Please make these consistent.")
        result.register_kernel(device_types)(fn)
        return result

    if fn is None:
        return inner
    return inner(fn)


class _Info:
    def __init__(self, backward, setup_context):
        self._backward_fn, self._setup_context_fn = backward, setup_context


def _aliases(args, kwargs, result):
    """True when an output shares storage with an input or another output (torch's aliasing constraint)."""
    outs = [t for t in _ops._tensors(result if isinstance(result, tuple) else (result,)) if t.numel() > 0]
    if not outs:
        return False
    seen = {t.untyped_storage_ptr() for t in _ops._tensors(args) if t.numel() > 0}
    if kwargs:
        seen.update(t.untyped_storage_ptr() for t in _ops._tensors(kwargs.values()) if t.numel() > 0)
    for t in outs:
        p = t.untyped_storage_ptr()
        if p in seen:
            return True
        seen.add(p)
    return False


class CustomOpDef:
    """The custom operator custom_op returns: call it, or register more behaviour (register_kernel,
    register_autograd, register_fake, register_autocast, register_vmap)."""

    def __init__(self, namespace, name, schema, fn, tags=None):
        self._namespace, self._name, self._schema = namespace, name, schema
        self._tags = _normalize_tags(tags)
        self._init_fn = fn
        self._backend_fns = {}
        self._abstract_fn = None
        self._setup_context_fn = None
        self._backward_fn = None
        self._vmap_fn = None
        self._autocast_dtype = {}
        self._disabled_kernel = set()
        self._lib = _get_library_allowing_overwrite(namespace, name)
        parsed = _ops.FunctionSchema(name + schema)
        if any(a.kwarg_only and a.base() == "Tensor" for a in parsed.arguments) and Tag.out not in self._tags:
            raise NotImplementedError(f"custom_op with kwarg-only Tensor args. Please make your tensors not "
                                      f"kwarg-only. Got: {name + schema}")
        self._lib.define(name + schema, tags=(Tag.pt2_compliant_tag, *self._tags))
        self._opoverload = _ops.lookup(f"{namespace}::{name}")
        op = self._opoverload
        op._opdef = self
        op._fake = self._fake_entry
        op._autograd_kernel = op._default_autograd = _ops.make_autograd_kernel(op, self)
        self._is_inplace = Tag.inplace in self._tags
        self._is_out = Tag.out in self._tags
        self._out_kwarg_names = tuple(a.name for a in parsed.arguments if a.kwarg_only and a.is_write) \
            if self._is_out else ()
        OPDEFS[self._qualname] = self

    @property
    def _qualname(self):
        return f"{self._namespace}::{self._name}"

    def __repr__(self):
        return f"<CustomOpDef({self._qualname})>"

    def __call__(self, *args, **kwargs):
        return self._opoverload(*args, **kwargs)

    def _fake_entry(self, *args, **kwargs):
        if self._abstract_fn is None and (self._is_inplace or self._is_out):  # torch's autogenerated fake
            if self._is_inplace:
                return args[0]
            outs = tuple(kwargs[n] for n in self._out_kwarg_names)
            return outs[0] if len(outs) == 1 else outs
        if self._abstract_fn is None:
            if not self._opoverload._schema.returns:
                return None
            raise RuntimeError(f"There was no fake impl registered for {self}. This is necessary for torch.compile/"
                               f"export/fx tracing to work. Please use `{self._init_fn.__name__}.register_fake` to "
                               "add an fake impl.")
        return self._abstract_fn(*args, **kwargs)

    @contextlib.contextmanager
    def set_kernel_enabled(self, device_type, enabled=True):
        """Disables or re-enables the kernel registered for device_type inside the with block."""
        originally_disabled = device_type in self._disabled_kernel
        if not enabled:
            self._disabled_kernel.add(device_type)
        else:
            self._disabled_kernel.discard(device_type)
        try:
            yield
        finally:
            if originally_disabled:
                self._disabled_kernel.add(device_type)
            else:
                self._disabled_kernel.discard(device_type)

    def register_kernel(self, device_types, fn=None, /):
        """Registers an implementation for device types ("cpu", "cuda"; None: all)."""

        def inner(fn):
            dtypes = [device_types] if device_types is None or isinstance(device_types, str) else list(device_types)
            for device_type in dtypes:
                if device_type not in self._backend_fns:
                    def backend_impl(*args, device_type=device_type, **kwargs):
                        result = self._backend_fns[device_type](*args, **kwargs)
                        if self._is_inplace:
                            if result is not args[0]:
                                raise RuntimeError(f"{self._name} (with implementation in {inspect.getmodule(self._backend_fns[device_type])}): An operator "
                                                   "tagged with torch.Tag.inplace must return its first argument.")
                        elif self._is_out:
                            names = self._out_kwarg_names
                            ok = result is kwargs[names[0]] if len(names) == 1 else (
                                isinstance(result, tuple) and len(result) == len(names)
                                and all(r is kwargs[n] for r, n in zip(result, names)))
                            if not ok:
                                raise RuntimeError(f"{self._name} (with implementation in {inspect.getmodule(self._backend_fns[device_type])}): An operator "
                                                   "tagged with torch.Tag.out must return its mutable keyword-only "
                                                   "arguments.")
                        elif not self._opoverload._schema._is_view_op() and _aliases(args, kwargs, result):
                            raise RuntimeError(
                                f"{self._name} (with implementation in {inspect.getmodule(self._backend_fns[device_type])}): The output of this custom operator "
                                "(1) must not also be an input to this custom operator and (2) may not alias any "
                                "inputs to this custom operator or other returns. The most common way to trigger this "
                                "error is if we have y = custom_op(x) and y and x are the same Tensor. Please instead "
                                "return a clone of the offending output tensor(s) (e.g. return x.clone()) or refactor "
                                "the custom operator to not return y.")
                        return result

                    key = "CompositeExplicitAutograd" if device_type is None else _dispatch_key_for_device(device_type)
                    self._lib.impl(self._name, backend_impl, key)

                def wrapped_fn(*args, device_type=device_type, **kwargs):
                    if device_type in self._disabled_kernel:
                        return self._init_fn(*args, **kwargs)
                    return fn(*args, **kwargs)

                self._backend_fns[device_type] = functools_wraps(fn, wrapped_fn)
            return fn

        if device_types is not None and not any(a.base() == "Tensor" for a in self._opoverload._schema.arguments):
            if not any(a.base() == "Device" for a in self._opoverload._schema.arguments):
                raise ValueError("Functions without tensor inputs are required to have a `device: torch.device` "
                                 "argument")
        if fn is None:
            return inner
        return inner(fn)

    def register_fake(self, fn, /):
        """Registers the shape-inference (fake) implementation: given the inputs, it returns empty outputs of the
        right shape, dtype and device (opcheck checks it against the real kernel)."""
        if self._is_inplace or self._is_out:
            tag = "torch.Tag.inplace" if self._is_inplace else "torch.Tag.out"
            warnings.warn(f"The fake registration for {self} is unnecessary. Custom ops tagged with {tag} already get "
                          "an autogenerated fake kernel. The provided fake impl will be used instead.", stacklevel=2)
        self._abstract_fn = fn
        return fn

    def register_autograd(self, backward, /, *, setup_context=None):
        """Registers the backward formula: setup_context(ctx, inputs, output) saves what backward(ctx, *grads)
        needs; the call is recorded as one graph node."""
        schema = self._opoverload._schema
        if self._is_out:
            raise RuntimeError(f"Cannot register autograd formula for operator tagged with torch.Tag.out: {self}. "
                               "Out variants do not support autograd.")
        if schema.is_mutable or any(r.alias is not None for r in schema.returns):
            raise RuntimeError(f"Cannot register autograd formula for non-functional operator {self} with schema "
                               f"{self._opoverload._decl()}. Please create a functional operator and register an "
                               "autograd formula for that.")
        self._backward_fn = backward
        self._setup_context_fn = setup_context

    def register_autocast(self, device_type, cast_inputs):
        """Registers an autocast rule: in an autocast region enabled for device_type, the floating tensors of
        that device are cast to cast_inputs and the op runs with autocast off (the op table's gate)."""
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if not _C._is_autocast_available(device_type):
            raise ValueError(f"Device type '{device_type}' does not support autocast.")
        need_register = self._autocast_dtype.get(device_type) is None
        if need_register:
            self._autocast_dtype[device_type] = cast_inputs
        op = self._opoverload

        def kernel(_, *args, **kwargs):
            return _C._custom_autocast_gate(device_type, cast_inputs, lambda *a, **k: _ops._run(op, list(a), k),
                                            args, kwargs)

        if need_register:
            def rule(args, kwargs):
                return kernel(None, *args, **kwargs)

            op._autocast[device_type] = rule
            self._lib._registrations.append((op, "autocast", device_type, rule))
        return kernel

    def register_vmap(self, func=None):
        """Registers a vmap rule. ampgrad.func.vmap runs the op once per batch entry, so the rule is kept
        (for code that reads it) and not needed for correctness."""

        def register(func):
            self._vmap_fn = func
            return func

        if func is None:
            return register
        return register(func)

    def register_torch_dispatch(self, torch_dispatch_class, fn=None, /):
        raise NotImplementedError("ampgrad.library: register_torch_dispatch is not supported (ampgrad has no "
                                  "__torch_dispatch__ subclasses)")


def functools_wraps(fn, wrapper):
    try:
        wrapper.__name__ = getattr(fn, "__name__", wrapper.__name__)
        wrapper.__wrapped__ = fn
    except (AttributeError, TypeError):
        pass
    return wrapper


def _maybe_get_opdef(op):
    if isinstance(op, CustomOpDef):
        return op
    if isinstance(op, OpOverload):
        op = op._qualname
    return OPDEFS.get(op)


def _resolve_op_for_registration(op, registration_name):
    if not isinstance(op, (str, OpOverload, CustomOpDef)):
        raise ValueError(f"{registration_name}({op}): got unexpected type for op: {type(op)}")
    if isinstance(op, OpOverload):
        op = op._qualname if op._overloadname == "default" else op._qualname + "." + op._overloadname
    opdef = _maybe_get_opdef(op)
    return opdef if opdef is not None else op


def _lookup_op(qualname):
    """The OpOverload of 'ns::name[.overload]'; torch's AttributeError when there is none."""
    ns, _, rest = qualname.partition("::")
    name, _, ov = rest.partition(".")
    return getattr(getattr(getattr(ops, ns), name), ov or "default")


def _library_for_registration(namespace, lib):
    if lib is not None:
        return lib
    use_lib = Library(namespace, "FRAGMENT")
    _keep_alive.append(use_lib)
    return use_lib


def define(qualname, schema, *, lib=None, tags=()):
    """Defines a new operator qualname ("mylib::foo") with schema "(Tensor x) -> Tensor"."""
    if not isinstance(qualname, str):
        raise ValueError(f"define(qualname, schema): expected qualname to be instance of str, got {type(qualname)}")
    namespace, name = qualname.split("::")
    if lib is None:
        lib = Library(namespace, "FRAGMENT")
        _keep_alive.append(lib)
    if not (isinstance(schema, str) and schema.strip().startswith("(") and "->" in schema):
        raise ValueError(f'define(qualname, schema, ...): expected schema to look like e.g. "(Tensor x) -> Tensor" '
                         f'but got "{schema}"')
    lib.define(name + schema, alias_analysis="", tags=tags)


def _device_type_to_key(device_type):
    if device_type == "default":
        return "CompositeExplicitAutograd"
    return _dispatch_key_for_device(device_type)


_DISPATCH_KEYS = {"CPU", "CUDA", "Meta", "CompositeExplicitAutograd", "CompositeImplicitAutograd", "Autograd",
                  "AutogradCPU", "AutogradCUDA", "AutocastCPU", "AutocastCUDA"}


def impl(qualname, types, func=None, *, lib=None):
    """Registers an implementation of qualname for device types ("cpu", "cuda", "default") or dispatch keys.
    Also the legacy form impl(lib, name, dispatch_key) used as a decorator."""
    if isinstance(qualname, Library):
        lib_, name, dispatch_key = qualname, types, func or ""

        def wrap(f):
            lib_.impl(name, f, dispatch_key)
            return f
        return wrap
    if isinstance(types, str):
        types = (types,)
    keys = {t if t in _DISPATCH_KEYS else _device_type_to_key(t) for t in types}

    def register_(func):
        namespace = qualname.split("::")[0]
        use_lib = _library_for_registration(namespace, lib)
        for key in keys:
            use_lib.impl(qualname, func, key)

    if func is None:
        return register_
    register_(func)
    return None


def register_kernel(op, device_types, func=None, /, *, lib=None):
    """Registers an implementation for device types of op (a CustomOpDef, "ns::name" or an OpOverload)."""
    op = _resolve_op_for_registration(op, "register_kernel")
    if isinstance(op, CustomOpDef):
        return op.register_kernel(device_types, func)
    if device_types is None:
        device_types = "CompositeExplicitAutograd"
    return impl(op, device_types, func, lib=lib)


def register_autocast(op, device_type, cast_inputs, /, *, lib=None):
    """Registers an autocast rule for op: see CustomOpDef.register_autocast."""
    op = _resolve_op_for_registration(op, "register_autocast")
    if not _C._is_autocast_available(device_type):
        raise ValueError(f"Device type '{device_type}' does not support autocast.")
    if isinstance(op, CustomOpDef):
        return op.register_autocast(device_type, cast_inputs)
    _op = _lookup_op(op)
    use_lib = _library_for_registration(op.split("::")[0], lib)

    def kernel(_, *args, **kwargs):
        return _C._custom_autocast_gate(device_type, cast_inputs, lambda *a, **k: _ops._run(_op, list(a), k),
                                        args, kwargs)

    def rule(args, kwargs):
        return kernel(None, *args, **kwargs)

    _op._autocast[device_type] = rule
    use_lib._registrations.append((_op, "autocast", device_type, rule))
    return None


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1, allow_override=False):
    """Registers the fake (shape-inference) implementation of op."""
    if not isinstance(op, (str, OpOverload, CustomOpDef)):
        raise ValueError(f"register_fake({op}): got unexpected type for op: {type(op)}")
    opdef = _maybe_get_opdef(op if not isinstance(op, OpOverload) else op._qualname)
    if opdef is not None:
        if func is None:
            return opdef.register_fake
        return opdef.register_fake(func)
    qualname = op if isinstance(op, str) else op._qualname

    def register(func):
        _op = _lookup_op(qualname)
        if _op._fake is not None and not allow_override and _op._opdef is None and _op._fake is not \
                _op._kernels.get("Meta", (None,))[0]:
            raise RuntimeError(f"register_fake(...): the operator {qualname} already has an fake impl registered.")
        _op._fake = func
        use_lib = _library_for_registration(qualname.split("::")[0], lib)
        use_lib._registrations.append((_op, "fake", "fake", func))
        return func

    if func is None:
        return register
    return register(func)


def impl_abstract(qualname, func=None, *, lib=None, _stacklevel=1):
    """Renamed register_fake in torch 2.4."""
    warnings.warn("`torch.library.impl_abstract` was renamed to `torch.library.register_fake`. Please use that "
                  "instead; we will remove `torch.library.impl_abstract` in a future version of PyTorch.",
                  FutureWarning, stacklevel=2)
    return register_fake(qualname, func, lib=lib)


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    """Registers the backward formula of op (see CustomOpDef.register_autograd)."""
    op = _resolve_op_for_registration(op, "register_autograd")
    if isinstance(op, CustomOpDef):
        op.register_autograd(backward, setup_context=setup_context)
        return
    _op = _lookup_op(op)
    schema = _op._schema
    if _op._is_out:
        raise RuntimeError(f"Cannot register autograd formula for operator tagged with torch.Tag.out: {_op}. Out "
                           "variants do not support autograd.")
    if schema.is_mutable or any(r.alias is not None for r in schema.returns):
        raise RuntimeError(f"Cannot register autograd formula for non-functional operator {_op} with schema "
                           f"{_op._decl()}. Please create a functional operator and register an autograd formula for "
                           "that.")
    if any(a.kwarg_only and a.base() == "Tensor" for a in schema.arguments):
        raise NotImplementedError("register_autograd with kwarg-only Tensor args. In the original definition of the "
                                  f"op, please make your tensors not kwarg-only. Got: {_op._decl()}")
    kernel = _ops.make_autograd_kernel(_op, _Info(backward, setup_context))
    _op._autograd_kernel = kernel
    use_lib = _library_for_registration(op.split("::")[0], lib)
    use_lib._registrations.append((_op, "autograd", "Autograd", kernel))


def register_vmap(op, func=None, /, *, lib=None):
    """Registers a vmap rule of op (kept; ampgrad.func.vmap runs the op per batch entry)."""
    op = _resolve_op_for_registration(op, "register_vmap")
    if isinstance(op, CustomOpDef):
        return op.register_vmap(func)
    _op = _lookup_op(op)

    def register(func):
        _op._vmap = func
        return func

    return register if func is None else register(func)


class FakeImplCtx:
    """The ctx get_ctx() gives a fake implementation: new_dynamic_size for data-dependent output sizes."""

    def __init__(self):
        self.dynamic = False

    def new_dynamic_size(self, *, min=0, max=None):
        self.dynamic = True
        return min if min > 0 else 0

    create_unbacked_symint = new_dynamic_size


_fake_ctx = []


def get_ctx():
    """The FakeImplCtx of the fake implementation running now (inside register_fake functions only)."""
    if not _fake_ctx:
        raise RuntimeError("get_ctx() can only be called inside a fake impl (register_fake) while it runs")
    return _fake_ctx[-1]


# ---- opcheck
DEFAULT_TEST_UTILS = ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")


class OpCheckError(Exception):
    pass


class MetadataMismatchError(RuntimeError):
    """A fake impl's output metadata differs from the kernel's (torch._subclasses.fake_utils's name)."""


def _clone(v):
    if isinstance(v, Tensor):
        return v.detach().clone().requires_grad_(v.requires_grad)
    if isinstance(v, (list, tuple)):
        return type(v)(_clone(x) for x in v)
    return v


def _as_list(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _equal(a, b, atol, rtol):
    if isinstance(a, Tensor):
        if not isinstance(b, Tensor) or a.shape != b.shape or a.dtype != b.dtype:
            return False
        if a.numel() == 0:
            return True
        diff = (a.detach().double() - b.detach().double()).abs()
        bound = atol + rtol * b.detach().double().abs()
        same_nan = a.detach().isnan() == b.detach().isnan()
        return bool(((diff <= bound) | (a.detach().isnan() & b.detach().isnan())).all().item()) and \
            bool(same_nan.all().item())
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=rtol, abs_tol=atol) or (a != a and b != b)
    return a == b


def opcheck(op, args, kwargs=None, *, test_utils=DEFAULT_TEST_UTILS, raise_exception=True, atol=None, rtol=None):
    """Checks that a custom op is registered correctly (torch.library.opcheck): test_schema (arguments outside
    mutates_args are not mutated; outputs don't alias inputs), test_autograd_registration (an op that takes
    tensors requiring grad has an autograd formula or runs through differentiable ops), test_faketensor (the
    fake impl gives the real outputs' shapes, dtypes and devices), test_aot_dispatch_dynamic (a second call
    gives the same outputs and gradients). Returns {test: "SUCCESS" or the exception}."""
    if (atol is None) != (rtol is None):
        raise ValueError("opcheck(op, ...): if you specify one of atol/rtol, you must specify both")
    atol = 1e-5 if atol is None else atol
    rtol = 1.3e-6 if rtol is None else rtol
    kwargs = {} if kwargs is None else kwargs
    if isinstance(test_utils, str):
        test_utils = (test_utils,)
    if not set(test_utils).issubset(DEFAULT_TEST_UTILS):
        raise ValueError(f"opcheck(op, ...): test_utils is expected to only contain {DEFAULT_TEST_UTILS}, got "
                         f"{test_utils}")
    opdef = _maybe_get_opdef(op if not isinstance(op, OpOverload) else op._qualname)
    if isinstance(op, CustomOpDef):
        op = op._opoverload
    elif isinstance(op, _ops.OpOverloadPacket):
        op = op.default
    if not isinstance(op, OpOverload):
        raise ValueError(f"opcheck(op, ...): op must be instance of torch._ops.OpOverload, e.g. torch.ops.aten.sin."
                         f"default, got {type(op)}")
    schema = op._schema
    results = {}

    def check(name, fn):
        if name not in test_utils:
            return
        try:
            fn()
            results[name] = "SUCCESS"
        except Exception as e:
            if raise_exception:
                raise OpCheckError(f"opcheck(op, ...): {name} failed with {e} (scroll up for stack trace)") from e
            results[name] = e

    def test_schema():
        a, k = _clone(args), _clone(kwargs)
        before = [x.detach().clone() for x in _ops._tensors(list(a) + list(k.values()))]
        versions = [x._version for x in _ops._tensors(list(a) + list(k.values()))]
        out = op(*a, **k)
        bound, bkw = _ops._bind(op, a, k)
        written = set()
        for arg, v in zip([s for s in schema.arguments if not s.kwarg_only], bound):
            if arg.is_write:
                written.update(id(t) for t in _ops._tensors([v]))
        for arg in schema.arguments:
            if arg.kwarg_only and arg.is_write:
                written.update(id(t) for t in _ops._tensors([bkw.get(arg.name)]))
        for t, b, ver in zip(_ops._tensors(list(a) + list(k.values())), before, versions):
            if id(t) in written:
                continue
            if t._version != ver or not _equal(t.detach(), b, 0.0, 0.0):
                raise RuntimeError(f"{op}: the op mutated an argument that is not in mutates_args (schema "
                                   f"{op._decl()})")
        if not (schema._is_view_op() or op._opdef is not None and (op._opdef._is_inplace or op._opdef._is_out)) \
                and _aliases(a, k, out if isinstance(out, tuple) else out):
            raise RuntimeError(f"{op}: an output aliases an input or another output")

    def test_autograd_registration():
        tensors = list(_ops._tensors(list(args) + list(kwargs.values())))
        if not any(t.requires_grad for t in tensors):
            return
        if op._autograd_kernel is not None or "CompositeImplicitAutograd" in op._kernels:
            return
        raise AssertionError(f"{op}: the op takes tensors that require grad but has no autograd formula "
                             "(register_autograd) and is not CompositeImplicitAutograd; its outputs would have no "
                             "correct gradient.")

    def test_faketensor():
        a, k = _clone(args), _clone(kwargs)
        with _no_grad():
            real = op(*a, **k)
            bound, bkw = _ops._bind(op, _clone(args), _clone(kwargs))
            ctx = FakeImplCtx()
            _fake_ctx.append(ctx)
            try:
                fake = op._fake(*bound, **bkw) if op._fake is not None else None
            finally:
                _fake_ctx.pop()
        if op._fake is None and schema.returns:
            raise RuntimeError(f"There was no fake impl registered for {opdef or op}.")
        if op._opdef is not None and op._opdef._abstract_fn is None:
            return
        reals, fakes = _as_list(real), _as_list(fake)
        if len(reals) != len(fakes):
            raise RuntimeError(f"{op}: the fake impl returned {len(fakes)} outputs, the kernel {len(reals)}")
        for i, (r, f) in enumerate(zip(reals, fakes)):
            if isinstance(r, Tensor):
                if not isinstance(f, Tensor):
                    raise RuntimeError(f"{op}: output {i}: the kernel returned a Tensor, the fake impl {type(f)}")
                if r.dtype != f.dtype or r.device != f.device or (not ctx.dynamic and r.shape != f.shape) or \
                        r.dim() != f.dim():
                    raise MetadataMismatchError(f"{op}: output {i}: the fake impl gives shape {tuple(f.shape)}, dtype "
                                       f"{f.dtype}, device {f.device}; the kernel gives {tuple(r.shape)}, {r.dtype}, "
                                       f"{r.device}")

    def test_aot_dispatch_dynamic():
        a1, k1 = _clone(args), _clone(kwargs)
        a2, k2 = _clone(args), _clone(kwargs)
        o1, o2 = op(*a1, **k1), op(*a2, **k2)
        for x, y in zip(_as_list(o1), _as_list(o2)):
            if isinstance(x, Tensor) and not _equal(x, y, atol, rtol):
                raise RuntimeError(f"{op}: two calls with the same inputs gave different outputs")
        outs1 = [o for o in _as_list(o1) if isinstance(o, Tensor) and o.requires_grad]
        outs2 = [o for o in _as_list(o2) if isinstance(o, Tensor) and o.requires_grad]
        ins1 = [t for t in _ops._tensors(list(a1)) if t.requires_grad]
        ins2 = [t for t in _ops._tensors(list(a2)) if t.requires_grad]
        if outs1 and ins1:
            gos = [_ones_like(o) for o in outs1]
            g1 = _grad(outs1, ins1, gos)
            g2 = _grad(outs2, ins2, gos)
            for x, y in zip(g1, g2):
                if x is not None and not _equal(x, y, atol, rtol):
                    raise RuntimeError(f"{op}: two backward passes with the same inputs gave different gradients")

    check("test_schema", test_schema)
    check("test_autograd_registration", test_autograd_registration)
    check("test_faketensor", test_faketensor)
    check("test_aot_dispatch_dynamic", test_aot_dispatch_dynamic)
    return results


def _grad(outs, ins, gos):
    return _autograd_grad(outs, ins, gos, allow_unused=True)
