"""Known differences between ampgrad and torch that tests/test_fuzz.py tolerates (and reports).

Every entry names the ops it covers (exact names or globs: 'torch.sum', 'Tensor.*_', 'F.relu'), the category
(see fuzz_harness.category: crash, hang, mismatch, input_modified, accepted, rejected, exc_type), the outcome
pair it covers (torch's outcome -> ampgrad's: an exception class, 'value', 'crash', 'hang', 'mismatch'), an
optional condition on the call (`when`), and why. Keep entries narrow; delete an entry when the engine fix lands
(the test reports entries that no longer match anything in a long run: fuzz_run.py --stale).

A crash or a hang is tolerated only through an entry with a `when` that pins the exact case; the campaign runs
such a case at most twice per run (then skips it), so each listed crash still costs a worker restart.

Exception-type differences (category exc_type: both raise, different classes) are listed compactly in EXC_TYPE
below, one line per (torch class -> ampgrad class) with the ops; they are counted and reported."""
import fnmatch
import math
from dataclasses import dataclass
from typing import Callable, Optional

from fuzz_harness import EXC_CLASSES, INTS, Tn, tensors_in


# ----------------------------------------------------------------------------------- conditions on a call
def _ints(v):
    if isinstance(v, bool):
        return
    if isinstance(v, int):
        yield v
    elif isinstance(v, (list, tuple)):
        for x in v:
            yield from _ints(x)
    elif isinstance(v, dict):
        for x in v.values():
            yield from _ints(x)


def huge_int(c):
    """Some int argument (sizes, dims, scalars) is at least 2**31 in magnitude."""
    return any(abs(i) >= 2**31 for i in _ints((c.args, c.kwargs)))


def self_0d(c):
    return bool(c.args) and isinstance(c.args[0], Tn) and c.args[0].shape == ()


def nonfinite(c):
    """Some tensor or float argument holds inf / nan."""
    import numpy as np
    for t in tensors_in((c.args, c.kwargs)):
        if t.dtype not in ("bool",) and t.data.dtype.kind == "f" and not np.isfinite(t.data).all():
            return True

    def floats(v):
        if isinstance(v, float):
            yield v
        elif isinstance(v, (list, tuple)):
            for x in v:
                yield from floats(x)
    return any(not math.isfinite(f) for f in floats((c.args, list(c.kwargs.values()))))


def has_dtype(*names):
    return lambda c: any(t.dtype in names for t in tensors_in((c.args, c.kwargs)))


def no_tensor(c):
    return not any(True for _ in tensors_in((c.args, c.kwargs)))


def int_min_by_minus_one(c):
    """An integer tensor holding its dtype's minimum, divided by -1 (INT_MIN / -1 overflows: SIGFPE)."""
    import numpy as np
    ts = list(tensors_in((c.args, c.kwargs)))
    has_min = any(t.dtype in ("int8", "int16", "int32", "int64") and (t.data == np.iinfo(t.dtype).min).any() for t in ts)
    return has_min and any((t.data == -1).any() for t in ts if t.dtype != "bool") or has_min and -1 in list(_ints(c.args[1:]))


def self_expanded(c):
    return bool(c.args) and isinstance(c.args[0], Tn) and any(v[0] == "e" for v in c.args[0].views)


def operand_requires_grad(c):
    return any(t.requires_grad for t in tensors_in((c.args[1:], c.kwargs)))


def zero_size(c):
    return any(t.data.size == 0 or 0 in t.shape for t in tensors_in((c.args, c.kwargs)))


def bool_index(c):
    return c.kind == "index" and any(isinstance(i, bool) for i in (c.args[1] if isinstance(c.args[1], tuple) else (c.args[1],)))


def float_arg(c):
    return any(isinstance(v, float) for v in list(c.args) + list(c.kwargs.values()))


def any_of(*conds):
    return lambda c: any(f(c) for f in conds)


@dataclass
class K:
    ops: str
    cat: str
    torch: str = "*"
    ampgrad: str = "*"
    when: Optional[Callable] = None
    reason: str = ""

    def covers(self, call, cat, t, a):
        return (cat == self.cat and fnmatch.fnmatchcase(t, self.torch) and fnmatch.fnmatchcase(a, self.ampgrad)
                and any(fnmatch.fnmatchcase(call.op, p) for p in self.ops.split())
                and (self.when is None or bool(self.when(call))))


# ----------------------------------------------------------------------------------- the table
KNOWN = [
    # ---- crashes and hangs (repro in tests/fuzz_findings.txt); delete once the engine fix lands
    K("torch.ones torch.zeros torch.eye torch.rand torch.randn torch.empty torch.full torch.logspace torch.linspace",
      "crash", "*", "crash", huge_int, "size overflow: numel / nbytes of a huge size wraps (segfault), e.g. ones(2**63-1)"),
    K("torch.arange torch.range", "crash", "*", "crash", huge_int, "size overflow in arange (issue: arange(2**62))"),
    K("torch.arange torch.range", "hang", "*", "hang", huge_int,
      "arange(2**31, dtype=int8): loops / fills for ever instead of rejecting the range"),
    K("Tensor.fmod* Tensor.remainder* Tensor.__mod__ Tensor.__imod__ Tensor.__rmod__ torch.fmod torch.remainder "
      "Tensor.div* Tensor.floor_divide* Tensor.__floordiv__ Tensor.__ifloordiv__ torch.div torch.floor_divide",
      "crash", "*", "crash", int_min_by_minus_one, "integer INT_MIN % -1 (and // -1): SIGFPE"),

    # ---- wrong values (silent); each is a bug to fix unless the reason says otherwise
    K("*", "mismatch", when=huge_int,
      reason="Python scalar outside the tensor dtype's range: torch casts it to the dtype (wraps / becomes inf) before "
             "computing, ampgrad keeps its value (or saturates)"),
    K("torch.add torch.sub torch.mul torch.div torch.true_divide torch.floor_divide torch.subtract torch.multiply "
      "torch.divide torch.pow torch.remainder torch.fmod torch.atan2 torch.maximum torch.minimum", "mismatch",
      when=no_tensor, reason="two Python numbers: torch makes a default-dtype (float32) tensor, ampgrad float64"),
    K("F.hardtanh F.relu6 F.dropout F.hardtanh_", "mismatch", when=has_dtype(*INTS),
      reason="integer input: torch keeps the integer dtype, ampgrad returns float32"),
    K("F.celu F.elu F.selu", "mismatch", when=nonfinite, reason="inf alpha / inf input: nan vs -0.0"),
    K("Tensor.square torch.square", "mismatch", when=has_dtype("bool"), reason="square of bool: torch int64, ampgrad bool"),
    K("Tensor.stride", "mismatch", when=zero_size, reason="strides of a 0-size tensor differ"),
    K("Tensor.tril_ Tensor.triu_", "mismatch", when=self_expanded,
      reason="in-place write into an expanded (overlapping) tensor: result depends on the write order"),
    K("Tensor.*_ Tensor.__i*__", "mismatch", when=operand_requires_grad,
      reason="in-place op with an operand that requires grad: torch's result requires grad, ampgrad's does not"),
    K("torch.gather Tensor.gather", "mismatch", when=zero_size,
      reason="gather with an empty index: result does not require grad in ampgrad"),
    K("Tensor.chunk torch.chunk", "mismatch", when=zero_size, reason="chunk of a 0-size dim returns too few chunks"),
    K("Tensor.all Tensor.any torch.all torch.any", "mismatch", when=zero_size,
      reason="all / any with dim=() on a 0-size tensor: reduces everything instead of nothing"),
    K("Tensor.__getitem__", "mismatch", when=bool_index,
      reason="a bool in an index tuple combined with advanced indices: wrong result shape"),
    K("torch.inner Tensor.inner", "mismatch", when=zero_size, reason="inner with a 0-size operand: wrong result shape"),
    K("torch.var_mean torch.std_mean", "mismatch", reason="var_mean(x, True): the bool is read as dim, not unbiased"),
    K("torch.arange torch.range", "mismatch", when=float_arg,
      reason="float start / end with an integer dtype: torch computes in double then casts, ampgrad differs"),
    K("Tensor.logsumexp torch.logsumexp", "mismatch", when=has_dtype("bfloat16", "float16"),
      reason="low-precision logsumexp: torch accumulates in the low-precision dtype, ampgrad in float32"),
]

# Differences in the outcome class, one line per (category, torch outcome -> ampgrad outcome) with the ops
# ('#' starts a comment; REASONS below says what each kind of line means):
#   exc_type  both raise, with different exception classes
#   accepted  torch raises, ampgrad returns a value (invalid input accepted)
#   rejected  torch returns a value, ampgrad raises (a supported call or argument spelling ampgrad lacks)
LINES = """
"""


_WHAT = {"exc_type": "torch raises {t}, ampgrad raises {a}",
         "accepted": "invalid input accepted: torch raises {t}, ampgrad returns a value",
         "rejected": "torch returns a value, ampgrad raises {a} (unsupported argument spelling, dtype or case)"}
REASONS = {(c, t, a): _WHAT[c].format(t=t, a=a) for c in _WHAT for t in EXC_CLASSES + ("value",)
           for a in EXC_CLASSES + ("value",)}


class Known:
    def __init__(self, entries=None, lines=None):
        self.entries = list(KNOWN if entries is None else entries)
        for line in (LINES if lines is None else lines).strip().splitlines():
            line, _, reason = line.partition("#")
            if not line.strip():
                continue
            pair, _, ops = line.partition(":")
            cat, t, _, a = pair.split()
            self.entries.append(K(ops.strip(), cat, t, a, None, reason.strip() or REASONS.get((cat, t, a), "")))
        self.crashes = [e for e in self.entries if e.cat in ("crash", "hang")]

    def match(self, call, cat, res):
        for e in self.entries:
            if e.covers(call, cat, res["torch"], res["ampgrad"]):
                return e
        return None

    def crash_entry(self, call):
        """The known crash / hang entry this call matches before running it (None: run it)."""
        for e in self.crashes:
            if any(fnmatch.fnmatchcase(call.op, p) for p in e.ops.split()) and (e.when is None or e.when(call)):
                return e
        return None
