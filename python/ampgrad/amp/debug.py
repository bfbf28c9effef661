"""ampgrad.amp.debug: the AMP inspector (ampgrad's own; no torch counterpart).

    with ampgrad.amp.debug.inspect(model) as insp:      # or: model = ampgrad.amp.debug.wrap(model)
        with ampgrad.autocast("cuda"):
            loss = model(x).float().pow(2).mean()
        loss.backward()
    print(insp.report())            # text table; .to_json(), .to_dict(), .plot("amp.png")

What it records (forward and backward must run inside the `with` block):
- per op: calls per dtype the op ran in, and why. Ops with an autocast policy come from one seam in the
  autocast gate (csrc/amp/inspect.h): the policy, whether the gate cast inputs, found none eligible, or
  hit the cast cache. Every other op (add, relu, ...) comes from the kernel watch (Note [Watched
  kernels]): its forward kernel calls by dtype, "no autocast policy: runs in its inputs' dtype".
  Off, each seam costs one relaxed load (the gate's only under autocast).
- the first op that produced inf/NaN in the forward: the first forward kernel whose tensor inputs were
  all finite and whose output is not (the kernel watch scans every CPU kernel's operands until it finds
  one), with the module that was innermost when it ran (path as named_modules gives it, e.g.
  ``encoder.layers.10.fc2``), its input dtypes and max |x|. Fills with a caller's value (full(-inf),
  masked_fill with -inf: the value is an input) are not overflows. Without a CPU kernel to watch (CUDA),
  the innermost module whose inputs were finite and whose output is not, and the op that made its output
  (from the output's grad_fn).
- the first op that produced inf/NaN in the backward: the first backward node (in execution order)
  whose incoming gradients were finite and whose outgoing ones are not, with its module path.
- per module: max |x| of activations (outputs) and of gradients (w.r.t. the outputs), and the
  fractions of values above the fp16 maximum (65504: would overflow in fp16) and of non-zero values
  below the fp16 smallest normal (2**-14: would flush to zero / lose precision in fp16).

Ideas from Paddle's amp.debugging (per-op dtype counts, first non-finite op), Hugging Face's
DebugUnderflowOverflow / detect_overflow (per-module max |x| and the first overflowing module),
Transformer Engine's tensor statistics (fractions out of fp16/fp8 range).
"""
import json
import math
import re
import sys
import weakref
from collections import defaultdict

from .. import _C
from ..autograd import no_grad

__all__ = ["inspect", "wrap", "AmpInspector", "AmpReport", "InspectedModule"]

FP16_MAX = 65504.0
FP16_TINY = 2.0 ** -14

_active = [None]


def _tensors(x):
    if isinstance(x, _C.Tensor):
        yield x
    elif isinstance(x, (list, tuple)):
        for v in x:
            yield from _tensors(v)
    elif isinstance(x, dict):
        for v in x.values():
            yield from _tensors(v)


class _Paused:
    """The inspector's own reductions are not the model's ops: both seams are off while they run."""

    def __enter__(self):
        insp = _active[0]
        self.on = insp is not None and insp._recording
        if self.on:
            _C._amp_inspect_enable(False)
            _C._amp_watch_enable(False)

    def __exit__(self, *exc):
        if self.on:
            _C._amp_inspect_enable(True)
            _C._amp_watch_enable(True)
        return False


def _stats(t):
    """[max |x| over finite values, #finite > fp16 max, #non-zero < fp16 tiny, #non-finite, numel] (one sync)."""
    with no_grad(), _Paused():
        a = t.detach().float().abs()
        finite = a.isfinite()
        af = a.where(finite, a.new_zeros(()))
        v = _C.stack([af.max() if a.numel() else a.new_zeros(()), (af > FP16_MAX).sum().float(),
                      ((af < FP16_TINY) & (af > 0)).sum().float(), (~finite).sum().float()]).tolist()
    return v + [t.numel()]


def _all_finite(t):
    """Any inf/NaN makes the float32 sum non-finite, so a finite sum proves all values finite (one fast
    reduction); a non-finite sum (or a float32 overflow of it) is confirmed exactly."""
    with no_grad(), _Paused():
        t = t.detach()
        if math.isfinite(t.sum(dtype=_C.float32).item()):
            return True
        return bool(t.isfinite().all())


def _nonfinite_kind(t):
    with no_grad(), _Paused():
        if bool(t.detach().isnan().any()):
            return "nan"
        return "inf"


def _op_of(node_name):
    """'AddmmBackward0' -> 'addmm', 'NativeLayerNormBackward0' -> 'native_layer_norm'."""
    base = re.sub(r"Backward\d*$", "", node_name.rsplit("::", 1)[-1])
    return re.sub(r"(?<!^)(?=[A-Z])", "_", base).lower()


class _Acc:
    """Running max |x| and counts of one module's activations or gradients."""
    __slots__ = ("max_abs", "over", "under", "nonfinite", "numel", "calls", "dtypes")

    def __init__(self):
        self.max_abs, self.over, self.under, self.nonfinite, self.numel, self.calls = 0.0, 0, 0, 0, 0, 0
        self.dtypes = set()

    def add(self, t):
        """Adds t's statistics; returns its number of non-finite values."""
        if not t.is_floating_point() or t.numel() == 0:
            return 0
        m, over, under, nonfinite, n = _stats(t)
        self.max_abs = max(self.max_abs, m)
        self.over += int(over)
        self.under += int(under)
        self.nonfinite += int(nonfinite)
        self.numel += n
        self.calls += 1
        self.dtypes.add(str(t.dtype).rsplit(".", 1)[-1])
        return nonfinite

    def to_dict(self):
        n = max(self.numel, 1)
        return {"calls": self.calls, "dtypes": sorted(self.dtypes), "max_abs": self.max_abs,
                "frac_above_fp16_max": self.over / n, "frac_below_fp16_tiny": self.under / n,
                "nonfinite": self.nonfinite, "numel": self.numel}


class AmpReport:
    """What an AmpInspector saw: .ops, .first_nonfinite_forward/backward, .modules; .table(),
    .to_dict(), .to_json(), .plot()."""

    def __init__(self, ops, reasons, fwd, bwd, modules):
        self.ops = ops                          # op -> {dtype: calls}
        self.reasons = reasons                  # op -> {"dtype | reason": calls}
        self.first_nonfinite_forward = fwd      # dict or None
        self.first_nonfinite_backward = bwd     # dict or None
        self.modules = modules                  # path -> {"activation": {...}, "gradient": {...}}

    def to_dict(self):
        return {"ops": self.ops, "reasons": self.reasons, "first_nonfinite_forward": self.first_nonfinite_forward,
                "first_nonfinite_backward": self.first_nonfinite_backward, "modules": self.modules}

    def to_json(self, path=None, **kw):
        def clean(o):  # JSON has no inf/NaN
            if isinstance(o, float) and not math.isfinite(o):
                return str(o)
            if isinstance(o, dict):
                return {k: clean(v) for k, v in o.items()}
            if isinstance(o, (list, tuple)):
                return [clean(v) for v in o]
            return o
        s = json.dumps(clean(self.to_dict()), indent=kw.pop("indent", 2), **kw)
        if path is not None:
            with open(path, "w") as f:
                f.write(s)
        return s

    def table(self):
        out = ["AMP inspector report", "", "Ops (calls per dtype the op ran in, and why):"]
        w = max([len(k) for k in self.reasons] + [10])
        for op in sorted(self.reasons):
            first = True
            for why, n in sorted(self.reasons[op].items()):
                out.append(f"  {op if first else '':<{w}}  {n:>6}  {why}")
                first = False
        if not self.reasons:
            out.append("  (none)")
        out.append("")
        for kind, rec in (("forward", self.first_nonfinite_forward), ("backward", self.first_nonfinite_backward)):
            if rec is None:
                out.append(f"First inf/NaN in {kind}: none")
            else:
                where = f"module '{rec['module']}'" if rec["module"] is not None else "no module (outside the model)"
                node = f" ({rec['grad_fn']})" if rec.get("grad_fn") else ""
                out.append(f"First inf/NaN in {kind}: {rec['kind']} in {where}, op {rec['op']}{node}, "
                           f"output {rec['output_dtype']}")
                out.append(f"  input dtypes {rec['input_dtypes']}, input max |x| "
                           f"{[_fmt(v) for v in rec['input_max_abs']]}")
        out.append("")
        out.append("Per module (activations = outputs, gradients = w.r.t. the outputs; fractions of values "
                   f"> fp16 max {FP16_MAX:g} and non-zero < fp16 tiny 2^-14):")
        wm = max([len(k) for k in self.modules] + [8])
        out.append(f"  {'module':<{wm}}  {'dtype':<9} {'act max|x|':>11} {'>max':>8} {'<tiny':>8}  "
                   f"{'grad max|x|':>11} {'>max':>8} {'<tiny':>8}")
        for path, st in self.modules.items():
            a, g = st["activation"], st["gradient"]
            out.append(f"  {path:<{wm}}  {','.join(a['dtypes']) or '-':<9} {_fmt(a['max_abs']):>11} "
                       f"{_pct(a['frac_above_fp16_max']):>8} {_pct(a['frac_below_fp16_tiny']):>8}  "
                       f"{_fmt(g['max_abs']) if g['calls'] else '-':>11} "
                       f"{_pct(g['frac_above_fp16_max']) if g['calls'] else '-':>8} "
                       f"{_pct(g['frac_below_fp16_tiny']) if g['calls'] else '-':>8}")
        return "\n".join(out)

    __str__ = table

    def __repr__(self):
        return f"<AmpReport: {len(self.ops)} ops, {len(self.modules)} modules>"

    def plot(self, path=None):
        """A figure of max |x| per module (activations and gradients) against the fp16 range. Needs
        matplotlib; returns the Figure (saved to `path` when given)."""
        import matplotlib
        if path is not None:
            matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
        names = list(self.modules)
        fig, ax = plt.subplots(figsize=(max(6, 0.35 * len(names)), 4))
        xs = range(len(names))
        for kind, marker in (("activation", "o"), ("gradient", "x")):
            ys = [self.modules[n][kind]["max_abs"] or float("nan") for n in names]
            ax.scatter(list(xs), ys, marker=marker, label=f"{kind} max |x|")
        ax.axhline(FP16_MAX, color="r", ls="--", lw=1, label="fp16 max")
        ax.axhline(FP16_TINY, color="b", ls=":", lw=1, label="fp16 smallest normal")
        ax.set_yscale("log")
        ax.set_xticks(list(xs))
        ax.set_xticklabels([n or "(root)" for n in names], rotation=90, fontsize=7)
        ax.legend(fontsize=7)
        fig.tight_layout()
        if path is not None:
            fig.savefig(path)
        return fig


def _fmt(v):
    return f"{v:.3g}" if isinstance(v, float) else str(v)


def _pct(v):
    return f"{100 * v:.2f}%"


class AmpInspector:
    """Records ops, dtypes, first inf/NaN and per-module statistics while active (start()/stop(),
    or as a context manager). `model` is optional: without it only the per-op table is recorded."""

    def __init__(self, model=None, *, module_stats=True):
        self.model = model
        self.module_stats = module_stats
        self._handles = []
        self._node_handles = []
        self._ops = defaultdict(lambda: defaultdict(int))
        self._reasons = defaultdict(lambda: defaultdict(int))
        self._fwd = None
        self._bwd = None
        self._acts = defaultdict(_Acc)
        self._grads = defaultdict(_Acc)
        self._stack = []
        self._node_module = {}     # node sequence_nr -> module path (unique per node, unlike id())
        self._modules = {}         # path -> module
        self._recording = False

    # -- seam records ------------------------------------------------------------------------------
    def _drain(self):
        counts, event = _C._amp_watch_take()
        for op, dt, n in counts:
            if not _C._op_has_autocast_policy(_C._op_id(op)):  # (the gate's records count those)
                dt = dt or "-"
                self._ops[op][dt] += n
                self._reasons[op][f"{dt:<9} no autocast policy: runs in its inputs' dtype"] += n
        if event is not None and self._fwd is None:
            path = self._stack[-1] if self._stack else None
            module = self._modules.get(path)
            self._fwd = dict(event, module=path, grad_fn=None, inputs_finite=True,
                             module_type=type(module).__name__ if module is not None else None)
        for op, dev, policy, dt, n_t, n_el, n_cast, hits in _C._amp_inspect_take():
            dt = dt or "-"
            self._ops[op][dt] += 1
            if n_el == 0:
                why = "no eligible input (float64, integer or other device): unchanged"
            elif n_cast:
                why = f"cast {n_cast} of {n_el} eligible input(s)"
            else:
                why = "eligible inputs already in this dtype"
            if hits:
                why += f", {hits} from the cast cache"
            self._reasons[op][f"{dt:<9} {dev} {policy}: {why}"] += 1

    # -- module hooks ------------------------------------------------------------------------------
    def _pre(self, path):
        def hook(module, args):
            self._drain()
            self._stack.append(path)
        return hook

    def _post(self, path):
        def hook(module, args, output):
            self._drain()
            if self._stack and self._stack[-1] == path:
                self._stack.pop()
            outs = [t for t in _tensors(output) if t.is_floating_point()]
            nonfinite = []
            for t in outs:
                if self.module_stats:
                    nonfinite.append(self._acts[path].add(t) > 0)
            if self._fwd is None:
                bad = ([t for t, b in zip(outs, nonfinite) if b] if self.module_stats else
                       [t for t in outs if not _all_finite(t)])
                if bad:
                    ins = [t for t in _tensors(args)]
                    fn = bad[0].grad_fn
                    self._fwd = {"module": path, "kind": _nonfinite_kind(bad[0]),
                                 "op": _op_of(fn.name()) if fn is not None else None,
                                 "grad_fn": fn.name() if fn is not None else None,
                                 "module_type": type(module).__name__,
                                 "input_dtypes": [str(t.dtype).rsplit(".", 1)[-1] for t in ins],
                                 "input_max_abs": [_stats(t)[0] if t.is_floating_point() and t.numel() else None
                                                   for t in ins],
                                 "inputs_finite": all(_all_finite(t) for t in ins if t.is_floating_point()),
                                 "output_dtype": str(bad[0].dtype).rsplit(".", 1)[-1]}
            self._map_nodes(path, args, outs)
        return hook

    def _map_nodes(self, path, args, outs):
        """Assigns the backward nodes this module's forward created (those reachable from its outputs
        that no inner module claimed, stopping at its inputs' nodes) to `path`, and hooks them."""
        stop = set()
        for t in _tensors(args):
            if t.grad_fn is not None:
                stop.add(t.grad_fn._sequence_nr)
        stack = []
        for i, t in enumerate(outs):
            fn = t.grad_fn
            if fn is None:
                continue
            if i == 0 or fn._sequence_nr not in self._node_module:
                self._hook_output_grad(path, fn)
            stack.append(fn)
        while stack:
            n = stack.pop()
            k = n._sequence_nr
            if k in stop or k in self._node_module:
                continue
            self._node_module[k] = path
            self._node_handles.append(n.register_hook(self._node_hook(n, path)))
            for nxt, _ in n.next_functions:
                if nxt is not None and not nxt.name().endswith("AccumulateGrad"):
                    stack.append(nxt)

    def _hook_output_grad(self, path, fn):
        if not self.module_stats:
            return

        def pre(grad_outputs):
            if self._recording:
                for g in grad_outputs:
                    if g is not None:
                        self._grads[path].add(g)
        self._node_handles.append(fn.register_prehook(pre))

    def _node_hook(self, node, path):
        ref = weakref.ref(self)

        def hook(grad_inputs, grad_outputs):
            me = ref()
            if me is None or not me._recording or me._bwd is not None:
                return None
            outs = [g for g in grad_inputs if g is not None and g.is_floating_point()]
            bad = [g for g in outs if not _all_finite(g)]
            if not bad:
                return None
            ins = [g for g in grad_outputs if g is not None]
            me._bwd = {"module": path, "kind": _nonfinite_kind(bad[0]), "op": _op_of(node.name()),
                       "grad_fn": node.name(),
                       "input_dtypes": [str(g.dtype).rsplit(".", 1)[-1] for g in ins],
                       "input_max_abs": [_stats(g)[0] if g.is_floating_point() and g.numel() else None for g in ins],
                       "inputs_finite": all(_all_finite(g) for g in ins if g.is_floating_point()),
                       "output_dtype": str(bad[0].dtype).rsplit(".", 1)[-1]}
            return None
        return hook

    # -- control -----------------------------------------------------------------------------------
    def start(self):
        if _active[0] is not None:
            raise RuntimeError("ampgrad.amp.debug: an inspector is already active on this process")
        _active[0] = self
        _C._amp_inspect_take()  # drop anything recorded before
        _C._amp_watch_reset()
        if self.model is not None:
            for path, m in self.model.named_modules():
                self._modules[path] = m
                self._handles.append(m.register_forward_pre_hook(self._pre(path)))
                self._handles.append(m.register_forward_hook(self._post(path)))
        self._recording = True
        _C._amp_inspect_enable(True)
        _C._amp_watch_enable(True)
        return self

    def stop(self):
        if _active[0] is not self:
            return self
        _C._amp_inspect_enable(False)
        _C._amp_watch_enable(False)
        self._drain()
        self._recording = False
        for h in self._handles + self._node_handles:
            h.remove()
        self._handles, self._node_handles = [], []
        self._node_module = {}
        _active[0] = None
        return self

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    def reset(self):
        """Forgets what was recorded (keeps the hooks)."""
        if self._recording:
            self._drain()
        self._ops.clear()
        self._reasons.clear()
        self._fwd = self._bwd = None
        _C._amp_watch_reset()  # looks for a new first inf/NaN
        self._acts.clear()
        self._grads.clear()

    def report(self):
        if self._recording:
            self._drain()
        paths = list(self._acts) + [p for p in self._grads if p not in self._acts]
        modules = {p: {"activation": self._acts[p].to_dict() if p in self._acts else _Acc().to_dict(),
                       "gradient": self._grads[p].to_dict() if p in self._grads else _Acc().to_dict()}
                   for p in paths}
        return AmpReport({k: dict(v) for k, v in self._ops.items()}, {k: dict(v) for k, v in self._reasons.items()},
                         self._fwd, self._bwd, modules)


def inspect(model=None, *, module_stats=True):
    """A context manager recording what autocast did (see the module docstring); `model` adds module
    paths, first inf/NaN and per-module statistics."""
    return AmpInspector(model, module_stats=module_stats)


def _module_base():
    # nn sits above amp in the import layers: a model exists, so ampgrad.nn is loaded already.
    return sys.modules["ampgrad.nn"].Module


class InspectedModule:
    """Placeholder replaced by the nn.Module subclass on first use of wrap() (avoids an import cycle)."""


def wrap(model, *, module_stats=True):
    """Returns a module that runs `model` and inspects every forward and backward from now on (until
    .remove()); .report() gives the AmpReport."""
    global InspectedModule
    if not isinstance(InspectedModule, type) or not issubclass(InspectedModule, _module_base()):
        class InspectedModule(_module_base()):  # noqa: F811
            """`model` under a running AmpInspector (ampgrad.amp.debug.wrap)."""

            def __init__(self, model, module_stats=True):
                super().__init__()
                self.module = model
                self.inspector = AmpInspector(model, module_stats=module_stats).start()

            def forward(self, *args, **kwargs):
                return self.module(*args, **kwargs)

            def report(self):
                return self.inspector.report()

            def remove(self):
                """Stops inspecting and returns the wrapped model."""
                self.inspector.stop()
                return self.module
        globals()["InspectedModule"] = InspectedModule
    return InspectedModule(model, module_stats=module_stats)
