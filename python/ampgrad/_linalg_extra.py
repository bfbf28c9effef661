"""Torch-level products and distances composed from ampgrad's differentiable ops: cross, tensordot,
einsum, chain_matmul / multi_dot, cdist, dist, renorm, and the vector/matrix norms of
ampgrad.linalg. Each op with an autocast row starts with the autocast hook."""
import builtins
import math
import numbers
import warnings

import numpy as np

from . import _C
from ._C import Tensor
from ._functions import broadcast_shapes, broadcast_tensors
from ._op_gate import engine_op



# ---------------------------------------------------------------- norms
def _all_dims(x, dim):
    if dim is None:
        return list(builtins.range(x.dim()))
    return [dim] if isinstance(dim, numbers.Integral) else list(dim)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        x = x.to(dtype)
    if not x.is_floating_point():
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{str(x.dtype).split('.')[-1].capitalize()}")
    ord = float(ord)
    dims = _all_dims(x, dim)
    if x.dim() == 0:
        dims = None
    if ord == math.inf:
        return x.abs().amax(dims if dims is not None else (), keepdim)
    if ord == -math.inf:
        return x.abs().amin(dims if dims is not None else (), keepdim)
    if ord == 0:
        r = (x != 0).to(x.dtype).sum(dims, keepdim)
        # torch's count is differentiable with a zero gradient.
        return r + (x * 0).sum(dims, keepdim) if x.requires_grad else r
    return x.norm(ord, dims, keepdim)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    if dtype is not None:
        A = A.to(dtype)
    if A.dim() < 2:
        raise RuntimeError(f"linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    d0, d1 = (d % A.dim() for d in dim)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):  # through the singular values (ampgrad.linalg.svdvals)
        s = _C._linalg_svd(A.movedim((d0, d1), (-2, -1)), False, False)[1]  # linalg.svdvals
        if s.shape[-1] == 0 and ord != -2:  # torch: 0 for empty matrices (-2: amin's error)
            r = s.sum(-1)
        else:
            r = s.sum(-1) if ord == "nuc" else s.amax(-1) if ord == 2 else s.amin(-1)
        if keepdim:
            for d in sorted((d0, d1)):
                r = r.unsqueeze(d)
        return r
    if ord in (1, -1):
        r = A.abs().sum(d0, keepdim=True)
        r = r.amax(d1, keepdim=True) if ord == 1 else r.amin(d1, keepdim=True)
    elif ord in (math.inf, -math.inf):
        r = A.abs().sum(d1, keepdim=True)
        r = r.amax(d0, keepdim=True) if ord > 0 else r.amin(d0, keepdim=True)
    else:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    return r if keepdim else r.squeeze([d0, d1])


def linalg_norm(input, ord=None, dim=None, keepdim=False, *, dtype=None):
    if dim is not None and not isinstance(dim, numbers.Integral):
        dim = tuple(dim)
    if ord is None:
        if isinstance(dim, tuple) and len(dim) == 2:
            return matrix_norm(input, "fro", dim, keepdim, dtype=dtype)
        return vector_norm(input, 2, dim, keepdim, dtype=dtype)
    if dim is None:
        if input.dim() == 1:
            return vector_norm(input, ord, None, keepdim, dtype=dtype)
        if input.dim() == 2:
            return matrix_norm(input, ord, (-2, -1), keepdim, dtype=dtype)
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                           f"{input.dim()}D.")
    if isinstance(dim, tuple) and len(dim) == 2:
        return matrix_norm(input, ord, dim, keepdim, dtype=dtype)
    return vector_norm(input, ord, dim, keepdim, dtype=dtype)


@engine_op("linalg_vecdot")
def vecdot(x, y, *, dim=-1):
    return (x * y).sum(dim)


@engine_op("trace")
def trace(input):
    if input.dtype == _C.bool:  # torch's dispatch refuses bool before the dim check
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    if input.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.dim()}")
    n = builtins.min(input.shape)
    diag = input.as_strided((n,), (input.stride(0) + input.stride(1),), input.storage_offset())
    return diag.sum()


@engine_op("dist")
def dist(input, other, p=2):
    for pos, (name, t) in enumerate((("input", input), ("other", other)), 1):
        if not isinstance(t, Tensor):
            raise TypeError(f"dist(): argument '{name}' (position {pos}) must be Tensor, not {type(t).__name__}")
    if isinstance(p, int) and not -(1 << 63) <= p < (1 << 63):  # torch's Scalar conversion, before any check
        raise OverflowError("int too big to convert" if p > 0 else "can't convert negative int to unsigned")
    return vector_norm(input - other, p)


@engine_op("renorm")
def renorm(input, p, dim, maxnorm):
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.dim() <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} dimensions")
    dim = dim % input.dim()
    dims = [d for d in builtins.range(input.dim()) if d != dim]
    norm = vector_norm(input, p, dims, keepdim=True)
    factor = _C.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0).to(input.dtype)
    return input * factor


# ---------------------------------------------------------------- products
def _cross_impl(a, b, dim):
    a, b = broadcast_tensors(a, b)
    dev = a.device
    i1 = _C.from_numpy(np.array([1, 2, 0])).to(dev)
    i2 = _C.from_numpy(np.array([2, 0, 1])).to(dev)
    return a.index_select(dim, i1) * b.index_select(dim, i2) - a.index_select(dim, i2) * b.index_select(dim, i1)


@engine_op("cross")
def cross(input, other, dim=None):
    if input.dim() != other.dim():
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions.")
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                      "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree "
                      "with that of linalg.cross in a future release.", stacklevel=3)  # the caller of the gated cross
        shape = broadcast_shapes(input.shape, other.shape)
        dim = next((d for d, s in enumerate(shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return linalg_cross(input, other, dim=dim)


@engine_op("cross")
def linalg_cross(input, other, *, dim=-1):
    if input.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = dim % builtins.max(input.dim(), 1)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[d]} and "
                           f"{other.shape[d]}")
    return _cross_impl(input, other, d)


@engine_op("tensordot")
def tensordot(a, b, dims=2):
    if not isinstance(dims, (tuple, list, Tensor, numbers.Integral)):   # torch.functional.tensordot's first check
        raise RuntimeError("tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] "
                           f"containing two lists, but got dims={dims}")
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, numbers.Integral):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > builtins.min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da = list(builtins.range(a.dim() - dims, a.dim()))
        db = list(builtins.range(dims))
    else:
        da, db = dims
        for v, arg in ((da, "'dims_self' (position 3)"), (db, "'dims_other' (position 4)")):
            if isinstance(v, numbers.Integral):   # torch passes them on to _VF.tensordot's int[] parameters
                raise TypeError(f"tensordot(): argument {arg} must be tuple of ints, not {type(v).__name__}")
        da, db = list(da), list(db)
        if len(da) != len(db):
            raise RuntimeError("both dimension lists should have same length")
    da = [d % a.dim() for d in da]
    db = [d % b.dim() for d in db]
    for x, y in zip(da, db):  # a size-1 contracted dim broadcasts against the other operand's (torch)
        if a.shape[x] == 1 and b.shape[y] != 1:
            b = b.sum(y, keepdim=True, dtype=b.dtype)
        elif b.shape[y] == 1 and a.shape[x] != 1:
            a = a.sum(x, keepdim=True, dtype=a.dtype)
    for x, y in zip(da, db):
        if a.shape[x] != b.shape[y]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[x]} in dim {x} and "
                               f"second has size {b.shape[y]} in dim {y}")
    fa = [d for d in builtins.range(a.dim()) if d not in da]
    fb = [d for d in builtins.range(b.dim()) if d not in db]
    k = 1
    for d in da:
        k *= a.shape[d]
    am = a.permute(fa + da).reshape(-1, k)
    bm = b.permute(db + fb).reshape(k, -1)
    return _C.mm(am, bm).reshape([a.shape[d] for d in fa] + [b.shape[d] for d in fb])


def _chain_order(shapes):
    """Matrix-chain parenthesisation with the fewest multiplications (torch's multi_dot order)."""
    n = len(shapes)
    p = [shapes[0][0]] + [s[1] for s in shapes]
    cost = [[0] * n for _ in builtins.range(n)]
    split = [[0] * n for _ in builtins.range(n)]
    for length in builtins.range(1, n):
        for i in builtins.range(n - length):
            j = i + length
            cost[i][j] = None
            for k in builtins.range(i, j):
                c = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _multi_dot(tensors, name):
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"{name}(): expected at least 2 tensors but got {n}")
    first_1d, last_1d = tensors[0].dim() == 1, tensors[-1].dim() == 1
    mats = list(tensors)
    if first_1d:
        mats[0] = mats[0].unsqueeze(0)
    if last_1d:
        mats[-1] = mats[-1].unsqueeze(1)
    for i, m in enumerate(mats):
        if m.dim() != 2:
            raise RuntimeError(f"{name}(): tensor {i} must be 2D but got {tensors[i].dim()}D")
    for i in builtins.range(n - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise RuntimeError(f"{name}(): tensors {i} and {i + 1} with shapes {list(mats[i].shape)} and "
                               f"{list(mats[i + 1].shape)} cannot be multiplied")
    split = _chain_order([tuple(m.shape) for m in mats])

    def prod(i, j):
        if i == j:
            return mats[i]
        k = split[i][j]
        return _C.mm(prod(i, k), prod(k + 1, j))

    out = prod(0, n - 1)
    if first_1d and last_1d:
        return out.reshape(())
    if first_1d:
        return out.squeeze(0)
    if last_1d:
        return out.squeeze(1)
    return out


@engine_op("multi_dot")
def multi_dot(tensors):
    return _multi_dot(tensors, "multi_dot")


@engine_op("chain_matmul")
def chain_matmul(*matrices):
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                  "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than multiple "
                  "parameters.", stacklevel=3)  # the caller of the gated chain_matmul
    if len(matrices) == 1:
        if matrices[0].dim() != 2:
            raise RuntimeError(f"chain_matmul(): Expected 2D tensors, but got {matrices[0].dim()}D")
        return matrices[0].clone()
    for i, m in enumerate(matrices):
        if m.dim() != 2:
            raise RuntimeError(f"chain_matmul(): Expected 2D tensors, but got {m.dim()}D tensor at index {i}")
    return _multi_dot(matrices, "chain_matmul")


# ---------------------------------------------------------------- einsum
def _parse_einsum(equation, operands):
    eq = equation.replace(" ", "")
    if "->" in eq:
        lhs, rhs = eq.split("->")
    else:
        lhs, rhs = eq, None
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise RuntimeError(f"einsum(): more operands were provided than specified in the equation"
                         if len(operands) > len(terms) else
                         "einsum(): fewer operands were provided than specified in the equation")
    # Ellipsis dims become private symbols (uppercase-free: chr(0x100+i)).
    ell_n = 0
    for t, op in zip(terms, operands):
        if "..." in t:
            ell_n = builtins.max(ell_n, op.dim() - (len(t) - 3))
    ell = [chr(0x100 + i) for i in builtins.range(ell_n)]
    subs = []
    for i, (t, op) in enumerate(zip(terms, operands)):
        for ch in t.replace("...", ""):
            if not ch.isalpha():
                raise RuntimeError(f"einsum(): invalid subscript given at index {equation.find(ch)} in the equation "
                                   f"string, subscripts must be in [a-zA-Z]")
        if "..." in t:
            pre, post = t.split("...")
            k = op.dim() - len(pre) - len(post)
            s = list(pre) + ell[ell_n - k:] + list(post)
        else:
            s = list(t)
        if len(s) != op.dim():
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(s)}) does not match the "
                               f"number of dimensions ({op.dim()}) for operand {i}"
                               + ("" if "..." in t else " and no ellipsis was given"))
        subs.append(s)
    if rhs is None:
        counts = {}
        for s in subs:
            for ch in s:
                counts[ch] = counts.get(ch, 0) + 1
        out = [c for c in ell] + sorted(c for c, n in counts.items() if n == 1 and c not in ell)
    else:
        out = []
        if "..." in rhs:
            pre, post = rhs.split("...")
            out = list(pre) + ell + list(post)
        else:
            out = list(rhs)
        for ch in out:
            if not builtins.any(ch in s for s in subs):
                raise RuntimeError(f"einsum(): output subscript {ch} does not appear in the equation for any input "
                                   "operand")
        if len(set(out)) != len(out):
            raise RuntimeError("einsum(): output subscript appears more than once in the output")
    return subs, out


def _take_diagonals(op, s):
    """Repeated subscripts within one operand select its diagonal."""
    while True:
        seen = {}
        dup = None
        for i, ch in enumerate(s):
            if ch in seen:
                dup = (seen[ch], i)
                break
            seen[ch] = i
        if dup is None:
            return op, s
        i, j = dup
        if op.shape[i] != op.shape[j]:
            raise RuntimeError(f"einsum(): subscript {s[i]} is repeated for operand but the sizes don't match, "
                               f"{op.shape[i]} != {op.shape[j]}")
        op = op.diagonal(0, i, j)
        s = [c for k, c in enumerate(s) if k not in (i, j)] + [s[i]]


def einsum(*args):
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, or at least one "
                         "operand and its subscripts list")
    if isinstance(args[0], Tensor):
        # the sublist format, as torch.functional.einsum spells it: einsum(op1, [0, 1], op2, [1, 2], [0, 2])
        def sub(n):
            if n is Ellipsis:
                return "..."
            if 0 <= n < 26:
                return chr(ord("A") + n)
            if 26 <= n < 52:
                return chr(ord("a") + n - 26)
            raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")
        equation = ",".join("".join(sub(s) for s in sl) for sl in args[1::2])
        if len(args) % 2 == 1:
            equation += "->" + "".join(sub(s) for s in args[-1])
            operands = list(args[:-1:2])
        else:
            operands = list(args[::2])
    else:
        equation, operands = args[0], list(args[1:])
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): argument 'equation' (position 1) must be str, not {type(equation).__name__}")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = list(operands[0])
    bad = next((i for i, o in enumerate(operands) if not isinstance(o, Tensor)), None)
    if bad is not None:
        raise TypeError(f"expected Tensor as element {bad} in argument 1, but got {type(operands[bad]).__name__}")
    subs, out = _parse_einsum(equation, operands)
    ops = []
    sizes = {}
    for i, (op, s) in enumerate(zip(operands, subs)):
        op, s = _take_diagonals(op, s)
        for ch, n in zip(s, op.shape):
            if ch in sizes and sizes[ch] != n and n != 1 and sizes[ch] != 1:
                raise RuntimeError(f"einsum(): subscript {ch} has size {n} for operand {i} which does not broadcast "
                                   f"with previously seen size {sizes[ch]}")
            sizes[ch] = builtins.max(sizes.get(ch, 1), n)
        ops.append((op, s))

    def needed(k, exclude):
        # Letters used by the output or by operands other than those in `exclude`.
        keep = set(out)
        for j, (_, s) in enumerate(ops):
            if j not in exclude:
                keep.update(s)
        return keep

    # Sum out letters private to one operand and absent from the output.
    for i in builtins.range(len(ops)):
        op, s = ops[i]
        keep = needed(i, {i})
        drop = [d for d, ch in enumerate(s) if ch not in keep]
        if drop:
            op = op.sum(drop)
            s = [ch for ch in s if ch in keep]
        ops[i] = (op, s)

    # Contract left to right: batch letters (shared, still needed), contracted (shared only here).
    a, sa = ops[0]
    for i in builtins.range(1, len(ops)):
        b, sb = ops[i]
        keep = set(out)
        for _, s in ops[i + 1:]:
            keep.update(s)
        batch = [c for c in sa if c in sb and c in keep]
        contract = [c for c in sa if c in sb and c not in keep]
        only_a = [c for c in sa if c not in sb]
        only_b = [c for c in sb if c not in sa]
        # A letter of one side needed nowhere else is summed before the product.
        drop_a = [c for c in only_a if c not in keep]
        drop_b = [c for c in only_b if c not in keep]
        if drop_a:
            a = a.sum([sa.index(c) for c in drop_a])
            sa = [c for c in sa if c not in drop_a]
            only_a = [c for c in only_a if c not in drop_a]
        if drop_b:
            b = b.sum([sb.index(c) for c in drop_b])
            sb = [c for c in sb if c not in drop_b]
            only_b = [c for c in only_b if c not in drop_b]

        def arrange(t, st, order, shape):
            t = t.permute([st.index(c) for c in order])
            return t.expand([sizes[c] if c in batch or c in contract else t.shape[k] for k, c in enumerate(order)]) \
                .reshape(shape)

        nb = 1
        for c in batch:
            nb *= sizes[c]
        nk = 1
        for c in contract:
            nk *= sizes[c]
        na = 1
        for c in only_a:
            na *= a.shape[sa.index(c)]
        nbb = 1
        for c in only_b:
            nbb *= b.shape[sb.index(c)]
        a3 = arrange(a, sa, batch + only_a + contract, [nb, na, nk])
        b3 = arrange(b, sb, batch + contract + only_b, [nb, nk, nbb])
        shape = [sizes[c] for c in batch] + [a.shape[sa.index(c)] for c in only_a] + \
                [b.shape[sb.index(c)] for c in only_b]
        a = _C.bmm(a3, b3).reshape(shape)
        sa = batch + only_a + only_b
    # Remaining private letters (single operand), then the output order.
    drop = [d for d, ch in enumerate(sa) if ch not in out]
    if drop:
        a = a.sum(drop)
        sa = [ch for ch in sa if ch in out]
    if len(sa) == 0 and len(out) == 0:
        return a
    return a.permute([sa.index(c) for c in out]) if sa != out else a


@engine_op("cdist")
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    modes = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")
    if compute_mode not in modes:   # torch.cdist's Python body checks this before the op's own checks
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    if x1.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D")
    if x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {x2.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    r1, r2 = x1.shape[-2], x2.shape[-2]
    use_mm = p == 2 and (compute_mode == "use_mm_for_euclid_dist" or
                         (compute_mode == modes[0] and (r1 > 25 or r2 > 25)))
    batch = list(broadcast_shapes(x1.shape[:-2], x2.shape[:-2]))
    x1 = x1.expand(batch + list(x1.shape[-2:]))
    x2 = x2.expand(batch + list(x2.shape[-2:]))
    if use_mm:
        # torch's _euclidean_dist: one matmul of [-2 x1, |x1|^2, 1] and [x2, 1, |x2|^2].
        n1 = (x1 * x1).sum(-1, keepdim=True)
        n2 = (x2 * x2).sum(-1, keepdim=True)
        a = _C.cat([x1 * -2, n1, n1.new_ones(n1.shape)], -1)
        b = _C.cat([x2, n2.new_ones(n2.shape), n2], -1)
        return _C.matmul(a, b.transpose(-1, -2)).clamp_min(0).sqrt()
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return vector_norm(diff, p, -1)
