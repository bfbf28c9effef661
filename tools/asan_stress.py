"""Random calls of common ops on awkward tensors (0-size, 0-d, non-contiguous, expanded, overlapping
views), for the sanitizer build: tools/sanitize.sh runs tests; run this with the same environment via
    tools/sanitize.sh --stress [N] [SEED]
Errors raised as Python exceptions are fine (torch raises for many of these too); what this looks
for is a sanitizer report (the process aborts). With torch importable, results are also compared
with torch's where both succeed, and mismatches are listed (informational, exit status unaffected).
"""
import math
import random
import sys

import numpy as np

import ampgrad as ag

try:
    import torch
except ImportError:  # crash hunting only
    torch = None

SHAPES = [(), (0,), (1,), (5,), (3, 0), (0, 4), (2, 3), (3, 1), (4, 1, 3), (2, 3, 4), (1, 0, 2), (7, 9)]
DTYPES = ["float32", "float64", "int64", "int32", "bool", "float16", "bfloat16", "uint8", "int8"]
FLOAT = ["float32", "float64", "float16", "bfloat16"]
LAYOUTS = ["contig", "transposed", "strided", "expanded", "flipped_view", "offset"]


def make(m, arr, dtype, layout, rng):
    """The same tensor in module m (ampgrad or torch), with a layout made by views in both."""
    src = arr
    if layout == "strided" and arr.ndim:
        src = np.repeat(arr, 2, axis=-1)  # then [..., ::2] below
    elif layout == "offset":
        src = np.concatenate([np.zeros((1,) + arr.shape[1:], arr.dtype), arr]) if arr.ndim else arr
    if dtype in ("float16", "bfloat16"):
        t = m.tensor(src.astype(np.float32).tolist(), dtype=getattr(m, dtype))
    else:
        t = m.tensor(src.tolist(), dtype=getattr(m, dtype))
    if layout == "transposed" and arr.ndim >= 2:
        t = t.transpose(0, -1).contiguous().transpose(0, -1)
    elif layout == "strided" and arr.ndim:
        t = t[..., ::2]
    elif layout == "offset" and arr.ndim:
        t = t[1:]
    elif layout == "expanded":
        shape = list(arr.shape)
        ones = [i for i, s in enumerate(shape) if s == 1]
        if ones:
            i = rng.choice(ones)
            small = t.narrow(i, 0, 1) if t.dim() else t
            shape[i] = rng.choice([1, 3])
            t = small.expand(*shape)
        elif t.dim() == 0:
            t = t.expand(())
    return t


def rand_array(shape, dtype, rng):
    n = int(np.prod(shape)) if shape else 1
    if dtype == "bool":
        return (np.array([rng.random() < 0.5 for _ in range(n)]).reshape(shape))
    if dtype in ("uint8",):
        return np.array([rng.randrange(0, 10) for _ in range(n)], dtype=np.int64).reshape(shape)
    if dtype.startswith("int"):
        return np.array([rng.randrange(-9, 10) for _ in range(n)], dtype=np.int64).reshape(shape)
    vals = [rng.choice([rng.uniform(-3, 3), rng.uniform(-3, 3), 0.0, 1.5, -0.5]) for _ in range(n)]
    return np.array(vals, dtype=np.float64).reshape(shape)


UNARY = ["neg", "exp", "log", "sqrt", "abs", "sign", "sin", "tanh", "sigmoid", "relu", "floor", "round", "frac",
         "isnan", "logical_not", "bitwise_not", "reciprocal", "erf", "clone", "square", "nan_to_num", "trunc"]
BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "eq", "lt", "ge", "logical_and", "bitwise_and",
          "fmod", "remainder", "atan2", "pow", "floor_divide", "bitwise_xor"]


def rdim(t, rng, allow_none=False):
    nd = max(t.dim(), 1)
    if allow_none and rng.random() < 0.25:
        return None
    return rng.randrange(-nd - (1 if rng.random() < 0.05 else 0), nd + (1 if rng.random() < 0.05 else 0))


def gen_call(rng):
    """(description, fn(m, inputs), input specs). Specs: (shape, dtype, layout)."""
    kind = rng.choice(["unary", "binary", "binary", "reduce", "shape", "index", "matmul", "inplace", "misc",
                       "grad", "cast"])
    shape = rng.choice(SHAPES)
    dt = rng.choice(DTYPES)
    lay = rng.choice(LAYOUTS)
    spec = [(shape, dt, lay)]
    if kind == "unary":
        op = rng.choice(UNARY)
        return f"{op}", (lambda m, x: getattr(m, op)(x)), spec
    if kind == "binary":
        op = rng.choice(BINARY)
        oshape = rng.choice([shape, shape[1:], (1,) * len(shape), (), rng.choice(SHAPES)])
        spec.append((oshape, rng.choice([dt, dt, rng.choice(DTYPES)]), rng.choice(LAYOUTS)))
        if rng.random() < 0.2:
            s = rng.choice([2, -1.5, 0, True])
            return f"{op}(x, {s})", (lambda m, x, y: getattr(m, op)(x, s)), spec
        return f"{op}", (lambda m, x, y: getattr(m, op)(x, y)), spec
    if kind == "reduce":
        op = rng.choice(["sum", "mean", "amax", "amin", "prod", "argmax", "argmin", "max", "min", "std", "var",
                         "softmax", "log_softmax", "cumsum", "logsumexp", "norm", "all", "any"])
        kd = rng.random() < 0.5
        d = {"v": None}

        def f(m, x):
            if d["v"] is None:
                d["v"] = rdim(x, rng, allow_none=op not in ("softmax", "log_softmax", "cumsum", "logsumexp"))
            dim = d["v"]
            fn = getattr(m, op)
            if op in ("softmax", "log_softmax", "cumsum"):
                return fn(x, dim)
            if op == "norm":
                return fn(x) if dim is None else fn(x, dim=dim, keepdim=kd)
            if dim is None:
                return fn(x)
            r = fn(x, dim, keepdim=kd) if op not in ("all", "any") else fn(x, dim)
            return r
        return f"{op}(kd={kd})", f, spec
    if kind == "shape":
        op = rng.choice(["transpose", "permute", "reshape", "flatten", "squeeze", "unsqueeze", "narrow", "select",
                         "flip", "roll", "cat", "stack", "split", "chunk", "tril", "triu", "diagonal", "contiguous",
                         "unbind", "movedim", "repeat", "t", "view_neg1", "expand_copy"])
        d = {}

        def f(m, x):
            if "a" not in d:
                d["a"] = rdim(x, rng)
                d["b"] = rdim(x, rng)
                d["k"] = rng.randrange(0, 4)
                d["p"] = list(range(x.dim()))
                rng.shuffle(d["p"])
                d["off"] = rng.randrange(-2, 3)
            a, b, k = d["a"], d["b"], d["k"]
            if op == "transpose":
                return m.transpose(x, a, b).contiguous()
            if op == "permute":
                return x.permute(*d["p"]).contiguous()
            if op == "reshape":
                return x.reshape(-1) if x.numel() else x.reshape(0, -1) if x.dim() else x.reshape(1)
            if op == "flatten":
                return m.flatten(x)
            if op == "squeeze":
                return m.squeeze(x, a)
            if op == "unsqueeze":
                return m.unsqueeze(x, a)
            if op == "narrow":
                return m.narrow(x, a, min(k, 1), min(k, 1))
            if op == "select":
                return m.select(x, a, k - 1)
            if op == "flip":
                return m.flip(x, [a])
            if op == "roll":
                return m.roll(x, d["off"], a)
            if op == "cat":
                return m.cat([x, x], a)
            if op == "stack":
                return m.stack([x, x], a)
            if op == "split":
                return list(m.split(x, max(k, 1), a))
            if op == "chunk":
                if x.dim() == 0:  # KNOWN: ampgrad reads sizes()[0] of a 0-d tensor (left to the dim-wrapping work)
                    raise RuntimeError("skipped: chunk on a 0-d tensor")
                return list(m.chunk(x, max(k, 1), a))
            if op in ("tril", "triu"):
                return getattr(m, op)(x, d["off"])
            if op == "diagonal":
                return m.diagonal(x, d["off"], a, b).contiguous()
            if op == "contiguous":
                return x.contiguous()
            if op == "unbind":
                if x.dim() == 0:  # KNOWN, as chunk
                    raise RuntimeError("skipped: unbind on a 0-d tensor")
                return list(m.unbind(x, a))
            if op == "movedim":
                return m.movedim(x, a, b).contiguous()
            if op == "repeat":
                return x.repeat(*([k] + [1] * x.dim()))
            if op == "t":
                return x.t().contiguous()
            if op == "view_neg1":
                return x.view(-1)
            if op == "expand_copy":
                return x.expand(2, *x.shape).clone()
        return op, f, spec
    if kind == "index":
        op = rng.choice(["gather", "index_select", "masked_fill", "masked_select", "scatter_add", "index_add",
                         "getitem", "setitem", "where", "nonzero", "index_copy", "take_along"])
        d = {}

        def f(m, x):
            if "dim" not in d:
                d["dim"] = rdim(x, rng)
                nd = max(x.dim(), 1)
                dd = d["dim"] % nd if -nd <= d["dim"] < nd else 0
                size = x.shape[dd] if x.dim() else 1
                d["n"] = rng.randrange(0, 4)
                bad = rng.random() < 0.1
                d["idx"] = [rng.randrange(-size if size else 0, size + (1 if bad else 0)) if (size or bad) else 0
                            for _ in range(d["n"])]
                d["mask"] = [rng.random() < 0.5 for _ in range(max(x.numel(), 0))]
                d["ishape"] = [s if i != dd else d["n"] for i, s in enumerate(x.shape)]
                d["ival"] = [rng.randrange(0, max(size, 1)) for _ in range(int(np.prod(d["ishape"])))]
            dim = d["dim"]
            idx = m.tensor(d["idx"], dtype=m.int64)
            if op == "index_select":
                return m.index_select(x, dim, idx.clamp(min=0))
            if op == "getitem":
                return x[idx] if x.dim() else x[...]
            if op == "setitem":
                y = x.clone()
                if y.dim():
                    y[idx] = 1
                return y
            mask = m.tensor(d["mask"], dtype=m.bool).reshape(x.shape)
            if op == "masked_fill":
                return m.masked_fill(x, mask, 2)
            if op == "masked_select":
                return m.masked_select(x, mask)
            if op == "where":
                return m.where(mask, x, m.zeros_like(x))
            if op == "nonzero":
                return m.nonzero(x)
            gi = m.tensor(d["ival"], dtype=m.int64).reshape(d["ishape"])
            if op == "gather":
                return m.gather(x, dim, gi)
            if op == "take_along":
                return m.gather(x, dim, gi.flip(-1) if gi.dim() else gi)
            if op == "scatter_add":
                return m.scatter_add(m.zeros_like(x), dim, gi, m.ones_like(gi).to(x.dtype))
            if op == "index_add":
                src = m.ones(*d["ishape"], dtype=x.dtype)
                return m.index_add(x, dim, idx.clamp(min=0), src)
            if op == "index_copy":
                src = m.ones(*d["ishape"], dtype=x.dtype)
                return m.index_copy(x, dim, idx.clamp(min=0), src)
        return op, f, spec
    if kind == "matmul":
        a, b, c = rng.choice([0, 1, 3, 17]), rng.choice([0, 1, 5, 33]), rng.choice([0, 2, 7, 48])
        bt = rng.choice([(), (2,), (0,), (1,)])
        fdt = rng.choice(FLOAT + ["int64"])
        spec = [(bt + (a, b), fdt, rng.choice(LAYOUTS)), (bt + (b, c), fdt, rng.choice(LAYOUTS)),
                ((c,), fdt, rng.choice(LAYOUTS))]
        op = rng.choice(["matmul", "mm", "bmm", "addmm", "linear", "mv", "outer", "dot", "einsum", "baddbmm"])

        def f(m, x, y, z):
            if op == "matmul":
                return m.matmul(x, y)
            if op == "mm":
                return m.mm(x, y)
            if op == "bmm":
                return m.bmm(x, y)
            if op == "addmm":
                return m.addmm(z, x, y, beta=0.5, alpha=2)
            if op == "linear":
                return m.nn.functional.linear(x, y.transpose(-1, -2), z)
            if op == "mv":
                return m.mv(y, z)
            if op == "outer":
                return m.outer(z, z)
            if op == "dot":
                return m.dot(z, z)
            if op == "einsum":
                return m.einsum("...ij,...jk->...ik", x, y)
            if op == "baddbmm":
                return m.baddbmm(z, x, y)
        return f"{op}{bt}({a}x{b}x{c},{fdt})", f, spec
    if kind == "inplace":
        op = rng.choice(["add_", "mul_", "copy_", "fill_", "zero_", "clamp_", "masked_fill_", "index_fill_",
                         "relu_", "sub_", "div_", "neg_", "exp_"])
        spec.append((rng.choice([shape, shape[1:], ()]), rng.choice([dt, rng.choice(DTYPES)]), rng.choice(LAYOUTS)))

        def f(m, x, y):
            x = x.clone() if rng.random() < 0.5 or lay == "expanded" else x
            if op in ("add_", "mul_", "copy_", "sub_", "div_"):
                getattr(x, op)(y)
            elif op == "fill_":
                x.fill_(3)
            elif op == "zero_":
                x.zero_()
            elif op == "clamp_":
                x.clamp_(min=-1, max=1)
            elif op == "masked_fill_":
                x.masked_fill_(x > 0, 7)
            elif op == "index_fill_":
                if x.dim():
                    x.index_fill_(0, m.tensor([0], dtype=m.int64), 5)
            else:
                getattr(x, op)()
            return x
        return op, f, spec
    if kind == "cast":
        to = rng.choice(DTYPES)
        return f"to({to})", (lambda m, x: x.to(getattr(m, to))), spec
    if kind == "grad":
        op = rng.choice(["sum", "mean", "softmax", "mul", "matmul", "expand", "index", "cat", "norm", "max",
                         "layer_norm", "cumsum", "prod"])
        spec = [(shape, rng.choice(["float32", "float64"]), lay)]

        def f(m, x):
            x = x.detach().requires_grad_(True)
            if op == "sum":
                y = x.sum()
            elif op == "mean":
                y = x.mean()
            elif op == "softmax":
                y = m.softmax(x, -1).mul(m.ones_like(x)).sum() if x.dim() else m.softmax(x, 0).sum()
            elif op == "mul":
                y = (x * x).sum()
            elif op == "matmul":
                y = m.matmul(x, x.transpose(-1, -2)).sum() if x.dim() >= 2 else (x * 2).sum()
            elif op == "expand":
                y = x.expand(3, *x.shape).sum()
            elif op == "index":
                y = x[..., :1].sum() if x.dim() else x.sum()
            elif op == "cat":
                y = m.cat([x.reshape(-1), x.reshape(-1)]).sum()
            elif op == "norm":
                y = x.norm()
            elif op == "max":
                y = x.max()
            elif op == "layer_norm":
                y = m.nn.functional.layer_norm(x, x.shape[-1:]).sum() if x.dim() else x.sum()
            elif op == "cumsum":
                y = m.cumsum(x, -1 if x.dim() else 0).sum()
            else:
                y = x.prod()
            y.backward()
            return x.grad
        return f"grad-{op}", f, spec
    # misc
    op = rng.choice(["sort", "topk", "argsort", "unique", "repr", "tolist", "numpy", "item", "clamp", "lerp",
                     "cumprod", "isclose", "eq_all", "tile", "bincount", "kthvalue"])

    def f(m, x):
        if op == "sort":
            return m.sort(x, -1 if x.dim() else 0)[0]
        if op == "topk":
            return m.topk(x, min(2, x.shape[-1] if x.dim() else 1))[0]
        if op == "argsort":
            return m.argsort(x, -1 if x.dim() else 0)
        if op == "unique":
            return m.unique(x)
        if op == "repr":
            return repr(x)[:0]
        if op == "tolist":
            return x.tolist()
        if op == "numpy":
            return x.numpy() if x.dtype != m.bfloat16 else None
        if op == "item":
            return x.item()
        if op == "clamp":
            return m.clamp(x, -1, 1)
        if op == "lerp":
            return m.lerp(x, m.zeros_like(x), 0.3)
        if op == "cumprod":
            return m.cumprod(x, 0)
        if op == "isclose":
            return m.isclose(x, x)
        if op == "eq_all":
            return m.equal(x, x.clone())
        if op == "tile":
            return m.tile(x, (2,))
        if op == "bincount":
            return m.bincount(x.reshape(-1))
        if op == "kthvalue":
            return m.kthvalue(x, 1, -1 if x.dim() else 0)[0]
    return op, f, spec


def to_np(r, m):
    if isinstance(r, (list, tuple)):
        return [to_np(v, m) for v in r]
    if isinstance(r, m.Tensor):
        r = r.detach()
        if r.dtype in (m.bfloat16, m.float16):
            r = r.float()
        return np.asarray(r.tolist())
    return r


def same(a, b):
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return False
        if a.dtype.kind in "fc" or b.dtype.kind in "fc":
            return np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=2e-2, atol=2e-2, equal_nan=True)
        return np.array_equal(a, b)
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b)) or abs(a - b) < 1e-2
    return a == b


def main(n=400, seed=0):
    rng = random.Random(seed)
    stats = {"ok": 0, "raised": 0, "both_raised": 0, "unsupported": 0, "mismatch": 0}
    mismatches = []
    for i in range(n):
        desc, fn, specs = gen_call(rng)
        arrays = [rand_array(s, d, rng) for s, d, _ in specs]
        lay_seed = rng.random()
        label = f"#{i} {desc} " + " ".join(f"{s}/{d}/{l}" for s, d, l in specs)
        print(label, flush=True)  # the last line before a sanitizer report names the call
        results = {}
        for name, m in (("ag", ag), ("torch", torch)):
            if m is None:
                continue
            r = random.Random(lay_seed)
            state = rng.getstate()
            try:
                xs = [make(m, a, d, l, r) for a, (s, d, l) in zip(arrays, specs)]
            except Exception as e:  # noqa: BLE001
                results[name] = ("input", e)
                continue
            try:
                out = fn(m, *xs)
                results[name] = ("ok", to_np(out, m))
            except Exception as e:  # noqa: BLE001
                results[name] = ("raised", f"{type(e).__name__}: {str(e)[:120]}")
            if name == "ag":
                rng.setstate(state)  # torch's run draws the same lazily drawn arguments
        a = results.get("ag")
        t = results.get("torch")
        if a is None or a[0] == "input":
            stats["raised"] += 1
            continue
        if a[0] == "ok":
            stats["ok"] += 1
        else:
            stats["raised"] += 1
        if t is None or t[0] == "input":
            continue
        if a[0] == "raised" and a[1].startswith("AttributeError"):
            stats["unsupported"] += 1
        elif a[0] == "raised" and t[0] == "raised":
            stats["both_raised"] += 1
        elif a[0] != t[0] or (a[0] == "ok" and not same(a[1], t[1])):
            stats["mismatch"] += 1
            mismatches.append((label, a if a[0] == "raised" else ("ok", "..."), t if t[0] == "raised" else ("ok", "...")))
    print(f"done: {n} calls, seed {seed}: {stats}")
    for m in mismatches:
        print("MISMATCH", m)
    return 0


if __name__ == "__main__":
    sys.exit(main(*(int(a) for a in sys.argv[1:])))
