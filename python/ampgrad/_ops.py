"""ampgrad.ops: the operators defined through ampgrad.library (torch.ops.<ns>.<name>[.<overload>]), their
schemas, and the small dispatcher a call of one runs through, in torch's order of dispatch keys:

    Autocast<Device> (a register_autocast rule: the one autocast gate, Note [Autocast gate])
      -> Autograd (custom_op / register_autograd: one autograd.Function node, GeneratedBackwardFor_*)
        -> backend kernel (CPU / CUDA, else CompositeExplicitAutograd, else CompositeImplicitAutograd)

A call checks its arguments against the schema first (torch's dispatcher messages); a custom_op bumps the
version counter of the arguments the schema marks as written (Tensor(a!)) after the kernel ran.
"""
import threading

from . import _C
from . import _aten_ops
from ._C import Tensor
from .autograd.function import Function
from .autograd.grad_mode import no_grad

__all__ = ["ops", "OpOverload", "OpOverloadPacket", "FunctionSchema", "Tag"]


class Tag:
    """torch.Tag: the operator tags the library API reads (inplace, out) and the ones it records."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name

    def __eq__(self, other):
        return isinstance(other, Tag) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


for _t in ("inplace", "out", "pt2_compliant_tag", "core", "data_dependent_output", "dynamic_output_shape",
           "nondeterministic_bitwise", "nondeterministic_seeded", "pointwise", "view_copy", "needs_fixed_stride_order",
           "flexible_layout", "inplace_view", "generated", "maybe_aliasing_or_mutating", "cudagraph_unsafe"):
    setattr(Tag, _t, Tag(_t))


# ---- schemas: "name.overload(Tensor x, SymInt n=2, *, float val=1.) -> (Tensor, Tensor)"
_BASE_TYPES = ("Tensor", "SymInt", "int", "float", "bool", "str", "Scalar", "ScalarType", "Device", "Layout",
               "MemoryFormat", "Generator", "Dimname", "SymFloat", "SymBool", "Storage", "Stream", "Any", "complex")


class Argument:
    """One argument or return of a schema: type ('Tensor?', 'SymInt[]'), name, default, kwarg_only and the
    alias annotation (alias_set, is_write)."""
    _NO_DEFAULT = object()

    def __init__(self, type_, name, default, kwarg_only, alias, is_write):
        self.type, self.name, self.default = type_, name, default
        self.kwarg_only, self.alias, self.is_write = kwarg_only, alias, is_write

    @property
    def has_default_value(self):
        return self.default is not Argument._NO_DEFAULT

    @property
    def alias_info(self):
        return None if self.alias is None else _AliasInfo(self.alias, self.is_write)

    def base(self):
        return self.type.split("?")[0].split("[")[0]


class _AliasInfo:
    def __init__(self, name, is_write):
        self.before_set = {name}
        self.is_write = is_write


def _split_top(s, sep=","):
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return parts


def _parse_default(text, type_):
    t = text.strip()
    if t == "None":
        return None
    if t in ("True", "False"):
        return t == "True"
    if t[:1] in "\"'":
        return t[1:-1]
    if t.startswith("["):
        inner = t[1:-1].strip()
        return [] if not inner else [_parse_default(x, type_.split("[")[0]) for x in inner.split(",")]
    base = type_.split("?")[0].split("[")[0]
    if base == "ScalarType":
        return getattr(_C, t)
    try:
        v = float(t) if any(c in t for c in ".eE") or base == "float" else int(t)
    except ValueError:
        return t  # an enum-like default (contiguous_format, ...)
    return v


def _parse_type(text, full, offset):
    """'Tensor(a!)?[]' -> ('Tensor?[]', 'a', True)."""
    t = text.strip()
    alias, is_write = None, False
    i = 0
    while i < len(t) and (t[i].isalnum() or t[i] == "_"):
        i += 1
    base, rest = t[:i], t[i:]
    if base not in _BASE_TYPES:
        raise RuntimeError(
            "\nunknown type specifier. Common valid schema types include Tensor, SymInt, int, float, bool, Scalar; "
            "for a full list, please see https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/native/README.md"
            f"#func :\n{full}\n{' ' * offset}{'~' * max(len(base), 1)} <--- HERE\n")
    if rest.startswith("("):
        j = rest.index(")")
        ann = rest[1:j]
        is_write = ann.endswith("!")
        alias = ann.rstrip("!")
        rest = rest[j + 1:]
    return base + rest, alias, is_write


class FunctionSchema:
    """A parsed operator schema; str() gives it back in torch's spelling."""

    def __init__(self, text):
        self._text = text.strip()
        s = self._text
        if "(" not in s or "->" not in s:
            raise RuntimeError(f"Expected the schema to look like name(args) -> returns, got: {s}")
        head, _, tail = s.partition("(")
        self.name, _, self.overload_name = head.strip().partition(".")
        if not self.name.replace("_", "a").isalnum():
            raise RuntimeError(f"expected ident but found '{(self.name or '(')[0]}' here:\n{s}")
        depth, end = 1, None
        for k, ch in enumerate(tail):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0:
                end = k
                break
        if end is None:
            raise RuntimeError(f"Expected ')' in schema: {s}")
        args_text, rest = tail[:end], tail[end + 1:].strip()
        if not rest.startswith("->"):
            raise RuntimeError(f"Expected '->' after the arguments of schema: {s}")
        self.arguments = []
        kwarg_only = False
        pos = len(head) + 1
        for part in _split_top(args_text):
            p = part.strip()
            if p == "*":
                kwarg_only = True
            elif p:
                type_text, _, name_default = p.rpartition(" ")
                name, eq, default = name_default.partition("=")
                if eq and not default.strip():
                    raise RuntimeError(f"expected a default value but found ')' here:\n{s}")
                if not type_text or not name:
                    raise RuntimeError(f"Expected an argument 'Type name' in schema: {s}")
                type_, alias, is_write = _parse_type(type_text, s, pos + len(part) - len(part.lstrip()))
                d = _parse_default(default, type_) if eq else Argument._NO_DEFAULT
                self.arguments.append(Argument(type_, name.strip(), d, kwarg_only, alias, is_write))
            pos += len(part) + 1
        ret = rest[2:].strip()
        self.returns = []
        inner = ret[1:-1] if ret.startswith("(") and ret.endswith(")") else ret
        for part in _split_top(inner):
            p = part.strip()
            while p.startswith("(") and p.endswith(")"):
                p = p[1:-1].strip()
            if not p:
                continue
            type_text, _, rname = p.partition(" ")
            type_, alias, is_write = _parse_type(type_text, s, 0)
            self.returns.append(Argument(type_, rname.strip(), Argument._NO_DEFAULT, False, alias, is_write))
        self._ret_text = ret

    @property
    def is_mutable(self):
        return any(a.is_write for a in self.arguments)

    def _is_view_op(self):
        return any(a.alias is not None and not a.is_write for a in self.arguments) and \
            any(r.alias is not None for r in self.returns)

    def _cpp_text(self):
        """The arguments and returns as torch's C++ FunctionSchema prints them (float defaults as '1.')."""
        def typ(a):
            base = a.base()
            ann = "" if a.alias is None else f"({a.alias}{'!' if a.is_write else ''})"
            return base + ann + a.type[len(base):]

        def fmt(v):
            if isinstance(v, bool) or v is None:
                return str(v)
            if isinstance(v, float):
                return f"{int(v)}." if v == int(v) and abs(v) < 1e16 else repr(v)
            if isinstance(v, str):
                return f'"{v}"'
            if isinstance(v, list):
                return "[" + ", ".join(fmt(x) for x in v) + "]"
            if isinstance(v, _C.dtype):
                return str(v).rpartition(".")[2]
            return str(v)

        parts, star = [], False
        for a in self.arguments:
            if a.kwarg_only and not star:
                parts.append("*")
                star = True
            parts.append(f"{typ(a)} {a.name}" + (f"={fmt(a.default)}" if a.has_default_value else ""))
        rets = [typ(r) + (f" {r.name}" if r.name else "") for r in self.returns]
        ret = rets[0] if len(rets) == 1 and not self._ret_text.startswith("((") else f"({', '.join(rets)})"
        return f"({', '.join(parts)}) -> {ret}"

    def _args_text(self):
        return self._text[self._text.index("("):]

    def __str__(self):
        return self._text

    def __repr__(self):
        return self._text


# ---- argument checks (torch's dispatcher messages)
def _type_ok(type_, v):
    if type_.endswith("?"):
        return v is None or _type_ok(type_[:-1], v)
    if type_.endswith("]"):
        elem = type_[:type_.rindex("[")]
        if isinstance(v, (list, tuple)):
            return all(_type_ok(elem, x) for x in v)
        return elem in ("SymInt", "int") and isinstance(v, int) and not isinstance(v, bool)
    if type_ == "Tensor":
        return isinstance(v, Tensor)
    if type_ in ("SymInt", "int"):
        return isinstance(v, int) and not isinstance(v, bool) or (isinstance(v, Tensor) and v.dim() == 0
                                                                  and not v.is_floating_point())
    if type_ in ("float", "SymFloat"):
        return isinstance(v, (int, float)) and not isinstance(v, bool) or (isinstance(v, Tensor) and v.dim() == 0)
    if type_ in ("bool", "SymBool"):
        return isinstance(v, bool)
    if type_ == "str":
        return isinstance(v, str)
    if type_ == "Scalar":
        return isinstance(v, (int, float, bool, complex)) or (isinstance(v, Tensor) and v.dim() == 0)
    if type_ == "ScalarType":
        return isinstance(v, _C.dtype)
    if type_ == "Device":
        return isinstance(v, (_C.device, str, int))
    return True


def _type_name(type_):
    """A schema type as torch's dispatcher names it in errors: Optional[float], List[Tensor], number."""
    if type_.endswith("?"):
        return f"Optional[{_type_name(type_[:-1])}]"
    if type_.endswith("]"):
        return f"List[{_type_name(type_[:type_.rindex('[')])}]"
    return {"SymInt": "int", "SymFloat": "float", "SymBool": "bool", "Scalar": "number",
            "ScalarType": "int"}.get(type_, type_)


def _bind(op, args, kwargs):
    """(positional args with defaults filled, keyword-only args) for op's schema, or torch's RuntimeError."""
    schema = op._schema
    pos_params = [a for a in schema.arguments if not a.kwarg_only]
    if len(args) > len(pos_params):
        if len(pos_params) < len(schema.arguments):
            raise RuntimeError(f"{op._qualname}() takes {len(pos_params)} positional argument(s) but {len(args)} "
                               f"was/were given.  Declaration: {op._decl()}")
        raise RuntimeError(f"{op._qualname}() expected at most {len(schema.arguments)} argument(s) but received "
                           f"{len(args)} argument(s). Declaration: {op._decl()}")
    if len(args) + len(kwargs) > len(schema.arguments):
        raise RuntimeError(f"{op._qualname}() expected at most {len(schema.arguments)} argument(s) but received "
                           f"{len(args) + len(kwargs)} argument(s). Declaration: {op._decl()}")
    out_args, out_kwargs, used = [], {}, 0
    for i, a in enumerate(schema.arguments):
        if not a.kwarg_only and i < len(args):
            v = args[i]
        elif a.name in kwargs:
            v = kwargs[a.name]
            used += 1
        elif a.has_default_value:
            v = a.default
        else:
            raise RuntimeError(f"{op._qualname}() is missing value for argument '{a.name}'. Declaration: {op._decl()}")
        if not _type_ok(a.type, v):
            tname = _type_name(a.type)
            raise RuntimeError(
                f"{op._qualname}() Expected a value of type '{tname}' for argument '{a.name}' but instead found type "
                f"'{type(v).__name__}'.\nPosition: {i}\nValue: {v!r}\nDeclaration: {op._decl()}\nCast error details: "
                f"Unable to cast {v!r} to {tname}")
        if a.kwarg_only:
            out_kwargs[a.name] = v
        else:
            out_args.append(v)
    if used != len(kwargs):
        extra = [k for k in kwargs if k not in {a.name for a in schema.arguments}]
        raise RuntimeError(f"Unknown keyword argument '{extra[0] if extra else next(iter(kwargs))}' for operator "
                           f"'{op._qualname}'. Schema: {op._decl()}")
    return out_args, out_kwargs


def _tensors(values):
    for v in values:
        if isinstance(v, Tensor):
            yield v
        elif isinstance(v, (list, tuple)):
            for x in v:
                if isinstance(x, Tensor):
                    yield x


def _device_types(args, kwargs):
    return {t.device.type for t in _tensors(list(args) + list(kwargs.values()))}


_BACKEND_KEY = {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta"}


def _dispatch_device(op, args, kwargs):
    """The device type whose kernel runs: CUDA when a tensor argument is on CUDA (torch's backend priority),
    else the first tensor's; with no tensor argument, the `device` argument's; else CPU."""
    dev = None
    for t in _tensors(args):
        d = t.device.type
        if d == "cuda":
            return d
        dev = dev or d
    if kwargs:
        for t in _tensors(kwargs.values()):
            d = t.device.type
            if d == "cuda":
                return d
            dev = dev or d
    if dev is not None:
        return dev
    for a, v in zip(op._schema.arguments, list(args) + [kwargs.get(a.name) for a in op._schema.arguments
                                                         if a.kwarg_only]):
        if a.base() == "Device" and v is not None:
            return _C.device(v).type if not isinstance(v, _C.device) else v.type
    return "cpu"


class _KeySet:
    """The dispatch key set a with_keyset=True kernel receives first (ampgrad has no key sets: a marker)."""

    def __init__(self, key):
        self.key = key

    def __repr__(self):
        return f"DispatchKeySet({self.key})"


_tls = threading.local()


def _below_autograd():
    s = getattr(_tls, "below", None)
    if s is None:
        s = _tls.below = set()
    return s


def _run(op, args, kwargs):
    """From the top of the dispatch order (Autocast first)."""
    if op._autocast:
        devs = _device_types(args, kwargs)
        for dev in ("cuda", "cpu"):
            rule = op._autocast.get(dev)
            if rule is not None and dev in devs and _C._autocast_gate_open(dev):
                return rule(args, kwargs)
    return _run_autograd(op, args, kwargs)


def _run_autograd(op, args, kwargs):
    k = op._autograd_kernel
    if k is not None and op not in _below_autograd():
        return k(args, kwargs)
    return _run_backend(op, args, kwargs)


def _run_backend(op, args, kwargs):
    dev = _dispatch_device(op, args, kwargs)
    key = _BACKEND_KEY.get(dev, dev.upper())
    for k in (key, "CompositeExplicitAutograd", "CompositeImplicitAutograd"):
        entry = op._kernels.get(k)
        if entry is not None:
            fn, with_keyset = entry
            out = fn(_KeySet(k), *args, **kwargs) if with_keyset else fn(*args, **kwargs)
            break
    else:
        raise NotImplementedError(
            f"Could not run '{op._qualname}' with arguments from the '{key}' backend. This could be because the "
            f"operator doesn't exist for this backend. '{op._qualname}' is only available for these backends: "
            f"[{', '.join(sorted(op._kernels))}].")
    if op._opdef is None:  # only custom_op registers torch's ADInplaceOrView kernel (the version bump)
        return out
    written = [v for a, v in zip([a for a in op._schema.arguments if not a.kwarg_only], args) if a.is_write]
    written += [kwargs[a.name] for a in op._schema.arguments if a.kwarg_only and a.is_write and a.name in kwargs]
    bump = list(_tensors(written))
    if bump:
        _C._increment_version(tuple(bump))
    return out


def _call_below_autograd(op, fn, args, kwargs):
    below = _below_autograd()
    inside = op in below
    below.add(op)
    try:
        return fn(*args, **kwargs)
    finally:
        if not inside:
            below.discard(op)


# ---- the autograd kernel of custom ops (torch/_library/autograd.py: make_autograd_impl)
class _Meta:
    def __init__(self, spec, kwargs):
        self.spec, self.kwargs = spec, kwargs
        self.out_list = None  # lengths when the op returns lists of tensors


def _flatten(args):
    flat, spec = [], []
    for a in args:
        if isinstance(a, list) and a and all(isinstance(x, Tensor) for x in a):
            flat += a
            spec.append(len(a))
        else:
            flat.append(a)
            spec.append(None)
    return flat, spec


def _unflatten(flat, spec):
    out, i = [], 0
    for s in spec:
        if s is None:
            out.append(flat[i])
            i += 1
        else:
            out.append(list(flat[i:i + s]))
            i += s
    return out


def make_autograd_kernel(op, info):
    """The Autograd-key kernel of a custom op: one autograd.Function node (GeneratedBackwardFor_<ns>_<name>_
    <overload>Backward) whose backward is the registered formula; torch's error when there is none."""
    name = f"GeneratedBackwardFor_{op._ns}_{op._name}_{op._overloadname}"
    has_kwarg_only = any(a.kwarg_only for a in op._schema.arguments)

    def forward(ctx, *flat):
        meta = flat[-1]
        args = _unflatten(list(flat[:-1]), meta.spec)
        result = _run_backend(op, args, meta.kwargs)
        if info._setup_context_fn:
            if has_kwarg_only:
                info._setup_context_fn(ctx=ctx, inputs=tuple(args), keyword_only_inputs=dict(meta.kwargs),
                                       output=result)
            else:
                info._setup_context_fn(ctx=ctx, inputs=tuple(args), output=result)
        ctx._ag_meta = meta
        res = result if isinstance(result, tuple) else (result,)
        if any(isinstance(r, list) for r in res):
            meta.out_list = [len(r) if isinstance(r, list) else None for r in res]
            return tuple(_flatten_out(res))
        return result

    def backward(ctx, *grads):
        meta = ctx._ag_meta
        if not info._backward_fn:
            raise RuntimeError(f"Trying to backward through {op} but no autograd formula was registered. "
                               f"Please use register_autograd to add one.")
        if meta.out_list is not None:
            grads = _unflatten(list(grads), meta.out_list)
        prev = ctx.needs_input_grad
        try:
            ctx.needs_input_grad = tuple(_unflatten(list(prev[:-1]), meta.spec))
            result = info._backward_fn(ctx, *grads)
        finally:
            ctx.needs_input_grad = prev
        if not isinstance(result, tuple):
            result = (result,)
        flat = []
        for g, s in zip(result, meta.spec + [None] * (len(result) - len(meta.spec))):
            if s is not None and isinstance(g, (list, tuple)):
                flat += list(g)
            elif s is not None and g is None:
                flat += [None] * s
            else:
                flat.append(g)
        return (*flat, None)

    Generated = type(name, (Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward)})

    def autograd_kernel(args, kwargs):
        if op._is_out:
            if _C.is_grad_enabled() and any(t.requires_grad for t in _tensors(list(args) + list(kwargs.values()))):
                raise RuntimeError(f"{op._name}(): functions with out=... arguments don't support automatic "
                                   "differentiation, but one of the arguments requires grad.")
        elif _C.is_grad_enabled() and any(t.requires_grad for t in _tensors(args)):
            flat, spec = _flatten(args)
            meta = _Meta(spec, kwargs)
            out = Generated.apply(*flat, meta)
            if meta.out_list is not None:
                res = _unflatten(list(out if isinstance(out, tuple) else (out,)), meta.out_list)
                return tuple(res) if len(op._schema.returns) != 1 else res[0]
            return out
        # Below autograd, as torch's: no graph and no forward-AD tangent (torch's custom ops have no jvp rule)
        fw_prev = _C._set_fw_grad_enabled(False)
        try:
            with no_grad():
                return _run_backend(op, args, kwargs)
        finally:
            _C._set_fw_grad_enabled(fw_prev)

    autograd_kernel.generated = Generated
    return autograd_kernel


def _flatten_out(res):
    out = []
    for r in res:
        if isinstance(r, list):
            out += r
        else:
            out.append(r)
    return out


# ---- torch.ops.<ns>.<name>.<overload>
class OpOverload:
    """One overload of an operator (torch.ops.mylib.foo.default): callable, with its schema and kernels."""

    def __init__(self, ns, name, overload, schema, tags=()):
        self._ns, self._name, self._overloadname = ns, name, overload or "default"
        self._schema = schema
        self._tags = tuple(tags)
        self._kernels = {}  # dispatch key -> (fn, with_keyset)
        self._autocast = {}  # device type -> rule(args, kwargs)
        self._autograd_kernel = None
        self._fake = None
        self._opdef = None  # the CustomOpDef when made by custom_op
        self._is_out = Tag.out in self._tags
        self.__name__ = f"{name}.{self._overloadname}"
        self.__qualname__ = self.__name__

    @property
    def _qualname(self):
        return f"{self._ns}::{self._name}"

    @property
    def _opname(self):
        return self._name

    @property
    def overloadpacket(self):
        return getattr(getattr(ops, self._ns), self._name)

    @property
    def tags(self):
        return list(self._tags)

    def _decl(self):
        ov = "" if self._overloadname == "default" else "." + self._overloadname
        return f"{self._qualname}{ov}{self._schema._cpp_text()}"

    def __call__(self, *args, **kwargs):
        a, k = _bind(self, args, kwargs)
        return _run(self, a, k)

    def redispatch(self, keyset, *args, **kwargs):
        return _run_backend(self, list(args), kwargs)

    def has_kernel_for_dispatch_key(self, key):
        return str(key) in self._kernels

    def __repr__(self):
        return f"{self._ns}.{self._name}.{self._overloadname}"

    def __str__(self):
        return repr(self)

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other


class OpOverloadPacket:
    """torch.ops.mylib.foo: the overloads of one name; calling it calls the default overload."""

    def __init__(self, ns, name):
        self._ns, self._name = ns, name
        self._overloads = {}
        self.__name__ = name

    @property
    def _qualified_op_name(self):
        return f"{self._ns}::{self._name}"

    def overloads(self):
        return list(self._overloads)

    def __getattr__(self, key):
        if key.startswith("__"):
            raise AttributeError(key)
        try:
            return self.__dict__["_overloads"][key]
        except KeyError:
            raise AttributeError(f"The underlying op of '{self._ns}.{self._name}' has no overload name '{key}'") \
                from None

    def __call__(self, *args, **kwargs):
        if "default" not in self._overloads:
            raise RuntimeError(f"{self._ns}::{self._name}() has no default overload; call one of "
                               f"{self.overloads()}")
        return self._overloads["default"](*args, **kwargs)

    @property
    def _schema(self):
        return self._overloads["default"]._schema

    def __repr__(self):
        return f"{self._ns}.{self._name}"


class _AtenPacket:
    """torch.ops.aten.<name> for an op ampgrad has as a function (ampgrad.<name>, a Tensor method, or an
    aten-only function of _aten_ops): every overload name (.default, .Tensor, .Scalar, ...) calls it."""

    def __init__(self, name, fn):
        self._name, self._fn = name, fn
        self.__name__ = name

    def __getattr__(self, key):
        if key.startswith("__"):
            raise AttributeError(key)
        return self.__dict__["_fn"]

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def overloads(self):
        return ["default"]

    def __repr__(self):
        return f"aten.{self._name}"


_aten_names = {}  # ampgrad's top-level namespace, handed over by ampgrad/__init__.py once it is complete


def _aten_fallback(key):
    fn = _aten_ops.ATEN_ONLY.get(key) or _aten_names.get(key)
    if not callable(fn) or isinstance(fn, type) or isinstance(fn, _C.dtype):
        fn = getattr(Tensor, key, None)
    return _AtenPacket(key, fn) if callable(fn) and not isinstance(fn, type) else None


class _OpNamespace:
    def __init__(self, name):
        self.name = name
        self._packets = {}

    def __getattr__(self, key):
        if key.startswith("__"):
            raise AttributeError(key)
        try:
            return self.__dict__["_packets"][key]
        except KeyError:
            if self.__dict__["name"] == "aten":
                packet = _aten_fallback(key)
                if packet is not None:
                    return packet
            raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{key}'") from None

    def __iter__(self):
        return iter(self._packets)

    def __repr__(self):
        return f"<module 'torch.ops.{self.name}'>"


class _Ops:
    """ampgrad.ops: one namespace per library namespace (created on first access, as torch's)."""

    def __init__(self):
        self._namespaces = {}

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        spaces = self.__dict__["_namespaces"]
        if name not in spaces:
            spaces[name] = _OpNamespace(name)
        return spaces[name]

    def __iter__(self):
        return iter(self._namespaces)

    def __repr__(self):
        return "<module 'ampgrad.ops'>"


ops = _Ops()


def lookup(qualname, overload="default"):
    """The OpOverload of 'ns::name[.overload]', or None."""
    ns, _, rest = qualname.partition("::")
    name, _, ov = rest.partition(".")
    packet = getattr(ops, ns)._packets.get(name)
    if packet is None:
        return None
    return packet._overloads.get(ov or overload)


def define_op(ns, schema_text, tags=()):
    """Registers the operator of `schema_text` ('name.overload(args) -> rets') in ns; torch's error if defined."""
    schema = FunctionSchema(schema_text)
    space = getattr(ops, ns)
    packet = space._packets.get(schema.name)
    ov = schema.overload_name or "default"
    if packet is not None and ov in packet._overloads:
        raise RuntimeError(
            f"Tried to register an operator ({ns}::{schema_text}) with the same name and overload name multiple "
            "times. Each overload's schema should only be registered with a single call to def(). Duplicate "
            "registration: registered here.")
    if packet is None:
        packet = space._packets[schema.name] = OpOverloadPacket(ns, schema.name)
    op = OpOverload(ns, schema.name, ov, schema, tags)
    packet._overloads[ov] = op
    return op


def remove_op(op):
    space = getattr(ops, op._ns)
    packet = space._packets.get(op._name)
    if packet is not None and packet._overloads.get(op._overloadname) is op:
        del packet._overloads[op._overloadname]
        if not packet._overloads:
            del space._packets[op._name]
