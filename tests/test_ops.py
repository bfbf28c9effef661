"""Op database tests (tests/op_db.py), parametrized over op x dtype: forward values and result
dtype against torch (NumPy where torch is absent), gradients against torch for float32/float64,
gradients against float64 central finite differences, and non-contiguous inputs."""
import copy

import numpy as np
import pytest

import ampgrad
from op_db import (OPS, GRAD_DTYPES, TList, is_spec, make_tensor, realize_array, rng_for, round_to)

_EXC_ORDER = (NotImplementedError, IndexError, TypeError, ValueError, RuntimeError)


def builtin_exc(e):
    """The builtin exception class torch's (possibly custom) exception stands for."""
    for cls in _EXC_ORDER:
        if isinstance(e, cls):
            return cls
    return type(e)


# ---------------------------------------------------------------- inputs
def realize(op, si, sample, dtype):
    rng = rng_for(op.name, si, dtype)
    out = []
    for a in sample.args:
        if isinstance(a, TList):
            out.append(("list", [realize_array(s, dtype, rng) for s in a.items]))
        elif is_spec(a):
            out.append(("t", realize_array(a, dtype, rng)))
        else:
            out.append(("const", a))
    return out


def instantiate(m, realized, layout="contig", requires_grad=False, override=None):
    """Module-m arguments for realized specs; returns (args, leaves). `override` maps a leaf number
    to a replacement array (finite differences)."""
    args, leaves = [], []
    override = override or {}

    def one(v):
        arr, dt, diff = v
        leaf_no = len(leaves) if (requires_grad and diff and dt.startswith(("float", "bfloat"))) else None
        if leaf_no is not None and leaf_no in override:
            arr = override[leaf_no]
        t = make_tensor(m, arr, dt, layout)
        if leaf_no is not None:
            t = t.detach().requires_grad_(True)
            leaves.append(t)
        return t

    for kind, v in realized:
        if kind == "const":
            args.append(v)
        elif kind == "t":
            args.append(one(v))
        else:
            args.append([one(x) for x in v])
    return args, leaves


def flat_outputs(o):
    if isinstance(o, (tuple, list)):
        return [x for item in o for x in flat_outputs(item)]
    return [o]


def dtype_name(dt):
    return str(dt).split(".")[-1]


def ag_to_torch(t, torch):
    """An ampgrad tensor's values as a torch tensor of the same dtype (via NumPy)."""
    t = t.detach()
    name = dtype_name(t.dtype)
    if name == "bfloat16":
        return torch.from_numpy(np.array(t.float().numpy())).to(torch.bfloat16)
    return torch.from_numpy(np.array(t.numpy()))


def assert_same(actual, expected, tol, what, torch, exact_sign=False):
    """`tol` maps an output dtype name to (atol, rtol). exact_sign: zeros and infinities must carry
    torch's sign bit (assert_close takes -0.0 == 0.0), which special-point samples check."""
    acts, exps = flat_outputs(actual), flat_outputs(expected)
    assert len(acts) == len(exps), f"{what}: {len(acts)} outputs, torch gives {len(exps)}"
    for k, (a, e) in enumerate(zip(acts, exps)):
        where = f"{what} output {k}"
        if isinstance(e, torch.dtype):
            assert isinstance(a, ampgrad.dtype) and dtype_name(a) == dtype_name(e), f"{where}: {a!r} != {e!r}"
            continue
        if not isinstance(e, torch.Tensor):
            assert not isinstance(a, ampgrad.Tensor) and a == e, f"{where}: {a!r} != {e!r}"
            continue
        assert isinstance(a, ampgrad.Tensor), f"{where}: expected a Tensor, got {type(a).__name__}"
        assert dtype_name(a.dtype) == dtype_name(e.dtype), f"{where}: dtype {a.dtype} != torch's {e.dtype}"
        assert tuple(a.shape) == tuple(e.shape), f"{where}: shape {tuple(a.shape)} != torch's {tuple(e.shape)}"
        atol, rtol = tol(dtype_name(e.dtype)) if e.dtype.is_floating_point else (0, 0)
        a_t = ag_to_torch(a, torch)
        torch.testing.assert_close(a_t, e.detach(), atol=atol, rtol=rtol, equal_nan=True,
                                   msg=lambda m: f"{where}: {m}")
        if exact_sign and e.dtype.is_floating_point:
            e_d = e.detach()
            pick = ((e_d == 0) & (a_t == 0)) | e_d.isinf()
            bad = pick & (torch.signbit(a_t) != torch.signbit(e_d))
            assert not bool(bad.any()), (f"{where}: sign of zero/inf differs from torch at {bad.nonzero().flatten().tolist()}: "
                                         f"{a_t[bad].tolist()} vs torch's {e_d[bad].tolist()}")


def sample_tol(op, sample, grad=False):
    """The (atol, rtol) function for a sample: its own `tol` where given, else the op's."""
    base = op.grad_tolerance if grad else op.tolerance
    if sample.tol:
        return lambda dt: sample.tol.get(dt) or base(dt)
    return base


def runs_in(sample, dtype):
    return sample.dtypes is None or dtype in sample.dtypes


def check_forward(op, si, sample, dtype, layout, torch):
    realized = realize(op, si, sample, dtype)
    th_args, _ = instantiate(torch, realized, layout)
    ag_args, _ = instantiate(ampgrad, realized, layout)
    what = f"{op.name} [{sample.desc or si}] {dtype} {layout}"
    try:
        expected = op.call(torch, True, *th_args, **copy.deepcopy(sample.kwargs))
    except Exception as e:  # torch refuses: ampgrad must refuse the same way
        exc = builtin_exc(e)
        with pytest.raises(exc):
            op.call(ampgrad, False, *ag_args, **copy.deepcopy(sample.kwargs))
        return
    actual = op.call(ampgrad, False, *ag_args, **copy.deepcopy(sample.kwargs))
    assert_same(actual, expected, sample_tol(op, sample), what, torch, exact_sign=sample.special)


def _xfail(op, kind, dtype=None):
    reason = op.xfail.get(f"{kind}-{dtype}") or op.xfail.get(kind)
    if reason:
        pytest.xfail(reason)


def _params(ops, dtypes_of):
    return [pytest.param(op, dt, id=f"{op.name}-{dt}") for op in ops for dt in dtypes_of(op)]


# ---------------------------------------------------------------- forward
@pytest.mark.parametrize("op,dtype", _params(OPS, lambda op: op.dtypes))
def test_forward(op, dtype):
    torch = pytest.importorskip("torch")
    _xfail(op, "forward", dtype)
    for si, sample in enumerate(op.samples):
        if runs_in(sample, dtype):
            check_forward(op, si, sample, dtype, "contig", torch)


def _noncontig_dtype(op):
    for dt in ("float32", "int64", "bool"):
        if dt in op.dtypes:
            return [dt]
    return [op.dtypes[-1]]


@pytest.mark.parametrize("op,dtype", _params([op for op in OPS if op.noncontig], _noncontig_dtype))
@pytest.mark.parametrize("layout", ["strided", "transposed"])
def test_forward_noncontiguous(op, dtype, layout):
    torch = pytest.importorskip("torch")
    _xfail(op, "noncontig", layout)
    for si, sample in enumerate(op.samples):
        if not sample.special:
            check_forward(op, si, sample, dtype, layout, torch)


@pytest.mark.parametrize("op", [pytest.param(op, id=op.name) for op in OPS if op.np_ref is not None])
def test_forward_numpy(op):
    """Forward in float64 against NumPy: runs with or without torch."""
    for si, sample in enumerate(op.samples):
        if sample.kwargs or sample.special:
            continue
        realized = realize(op, si, sample, "float64")
        ag_args, _ = instantiate(ampgrad, realized)
        np_args = [v[0] if kind == "t" else v for kind, v in realized]
        actual = op.call(ampgrad, False, *ag_args)
        expected = np.asarray(op.np_ref(*np_args))
        np.testing.assert_allclose(actual.numpy(), expected, rtol=1e-7, atol=1e-7, err_msg=f"{op.name} [{sample.desc or si}]")


# ---------------------------------------------------------------- gradients
def _grad_outputs(m, outs, op, si, dtype):
    rng = rng_for(op.name, si, dtype, "grad_outputs")
    gs = []
    for o in outs:
        g = round_to(rng.uniform(-1, 1, size=tuple(o.shape)), dtype)
        gs.append(make_tensor(m, np.asarray(g), dtype_name(o.dtype)))
    return gs


def _run_grad(m, op, si, sample, realized, dtype, layout, is_torch):
    args, leaves = instantiate(m, realized, layout, requires_grad=True)
    if not leaves:
        return None
    outs = flat_outputs(op.call(m, is_torch, *args, **copy.deepcopy(sample.kwargs)))
    diff = [k for k, o in enumerate(outs) if o.dtype.is_floating_point and o.requires_grad]
    if not diff:
        return diff, [], leaves
    gouts = _grad_outputs(m, [outs[k] for k in diff], op, si, dtype)
    grads = m.autograd.grad([outs[k] for k in diff], leaves, gouts, allow_unused=True)
    return diff, grads, leaves


def check_grad_vs_torch(op, si, sample, dtype, layout, torch):
    realized = realize(op, si, sample, dtype)
    what = f"{op.name} [{sample.desc or si}] {dtype} {layout} grad"
    try:
        th = _run_grad(torch, op, si, sample, realized, dtype, layout, True)
    except Exception as e:  # e.g. a saved tensor modified in place: ampgrad must refuse too
        with pytest.raises(builtin_exc(e)):
            _run_grad(ampgrad, op, si, sample, realized, dtype, layout, False)
        return
    if th is None or not th[0]:
        return
    ag = _run_grad(ampgrad, op, si, sample, realized, dtype, layout, False)
    assert ag is not None and ag[0] == th[0], f"{what}: differentiable outputs {ag and ag[0]} != torch's {th[0]}"
    for k, (ga, gt, leaf) in enumerate(zip(ag[1], th[1], th[2])):
        gt = torch.zeros_like(leaf) if gt is None else gt
        ga = ampgrad.zeros(*leaf.shape, dtype=getattr(ampgrad, dtype_name(leaf.dtype))) if ga is None else ga
        assert_same(ga, gt, sample_tol(op, sample, grad=True), f"{what} input {k}", torch, exact_sign=sample.special)


def _grad_params():
    return _params([op for op in OPS if op.grad], lambda op: [d for d in GRAD_DTYPES if d in op.dtypes])


@pytest.mark.parametrize("op,dtype", _grad_params())
def test_grad(op, dtype):
    torch = pytest.importorskip("torch")
    _xfail(op, "grad", dtype)
    for si, sample in enumerate(op.samples):
        if sample.grad and runs_in(sample, dtype):
            check_grad_vs_torch(op, si, sample, dtype, "contig", torch)


@pytest.mark.parametrize("op", [pytest.param(op, id=op.name) for op in OPS if op.grad and op.noncontig and "float32" in op.dtypes])
def test_grad_noncontiguous(op):
    torch = pytest.importorskip("torch")
    _xfail(op, "noncontig", "transposed")
    for si, sample in enumerate(op.samples):
        if sample.grad and not sample.special:
            check_grad_vs_torch(op, si, sample, "float32", "transposed", torch)


def _run_gradgrad(m, op, si, sample, realized):
    """Second order: d/dx sum_k <grad_k(x), v_k> with grads built under create_graph=True."""
    args, leaves = instantiate(m, realized, "contig", requires_grad=True)
    outs = flat_outputs(op.call(m, m is not ampgrad, *args, **copy.deepcopy(sample.kwargs)))
    diff = [o for o in outs if o.dtype.is_floating_point and o.requires_grad]
    if not diff or not leaves:
        return None
    gouts = _grad_outputs(m, diff, op, si, "float64")
    grads = m.autograd.grad(diff, leaves, gouts, create_graph=True, allow_unused=True)
    if any(g is not None and not bool(m.isfinite(g).all()) for g in grads):
        return None  # degenerate point (e.g. var with no degrees of freedom): nothing to differentiate
    rng = rng_for(op.name, si, "gradgrad")
    vs = [make_tensor(m, rng.uniform(-1, 1, size=tuple(leaf.shape)), "float64") for leaf in leaves]
    pairs = [(g, v) for g, v in zip(grads, vs) if g is not None and g.requires_grad]
    if not pairs:
        return [None] * len(leaves), leaves
    return m.autograd.grad([g for g, _ in pairs], leaves, [v for _, v in pairs], allow_unused=True), leaves


@pytest.mark.parametrize("op", [pytest.param(op, id=op.name) for op in OPS if op.grad and "float64" in op.dtypes])
def test_gradgrad(op):
    """Backward formulas are written with ampgrad ops, so create_graph=True differentiates them."""
    torch = pytest.importorskip("torch")
    _xfail(op, "gradgrad")
    for si, sample in enumerate(op.samples):
        if not sample.grad or sample.special:
            continue
        realized = realize(op, si, sample, "float64")
        try:
            th = _run_gradgrad(torch, op, si, sample, realized)
        except Exception as e:
            with pytest.raises(builtin_exc(e)):
                _run_gradgrad(ampgrad, op, si, sample, realized)
            continue
        if th is None:
            continue
        ag = _run_gradgrad(ampgrad, op, si, sample, realized)
        assert ag is not None, f"{op.name} [{sample.desc or si}]: ampgrad has no differentiable output"
        for k, (ga, gt, leaf) in enumerate(zip(ag[0], th[0], th[1])):
            gt = torch.zeros_like(leaf) if gt is None else gt
            ga = ampgrad.zeros(*leaf.shape, dtype=ampgrad.float64) if ga is None else ga
            assert_same(ga, gt, lambda dt: (1e-7, 1e-6), f"{op.name} [{sample.desc or si}] gradgrad input {k}", torch)


def numerical_grads(fn, arrays, gouts, eps=1e-6):
    """Central differences of L(arrays) = sum_k <fn(arrays)[k], gouts[k]> in float64."""
    grads = []
    for j, a in enumerate(arrays):
        g = np.zeros_like(a)
        flat = a.reshape(-1)
        for e in range(flat.size):
            vals = []
            for sgn in (1, -1):
                pert = [x.copy() for x in arrays]
                pert[j].reshape(-1)[e] = flat[e] + sgn * eps
                outs = fn(pert)
                vals.append(sum(float((np.asarray(o, dtype=np.float64) * go).sum()) for o, go in zip(outs, gouts)))
            g.reshape(-1)[e] = (vals[0] - vals[1]) / (2 * eps)
        grads.append(g)
    return grads


@pytest.mark.parametrize("op", [pytest.param(op, id=op.name) for op in OPS if op.grad and op.fd and "float64" in op.dtypes])
def test_grad_finite_differences(op):
    _xfail(op, "fd")
    for si, sample in enumerate(op.samples):
        if not sample.grad or sample.special:
            continue
        if sum(a[0].size for kind, v in realize(op, si, sample, "float64") if kind != "const"
               for a in (v if kind == "list" else [v])) > 200:
            continue  # large samples exercise the parallel kernels; their gradients are checked against torch
        realized = realize(op, si, sample, "float64")
        res = _run_grad(ampgrad, op, si, sample, realized, "float64", "contig", False)
        if res is None or not res[0]:
            continue
        diff, grads, leaves = res
        base = [np.array(leaf.detach().numpy()) for leaf in leaves]
        rng = rng_for(op.name, si, "float64", "grad_outputs")
        # the same upstream gradients _run_grad used
        args, _ = instantiate(ampgrad, realized, requires_grad=False)
        with ampgrad.no_grad():
            outs = flat_outputs(op.call(ampgrad, False, *args, **copy.deepcopy(sample.kwargs)))
        gouts = [rng.uniform(-1, 1, size=tuple(outs[k].shape)) for k in diff]

        def fn(arrays):
            a, _ = instantiate(ampgrad, realized, requires_grad=True, override=dict(enumerate(arrays)))
            with ampgrad.no_grad():
                o = flat_outputs(op.call(ampgrad, False, *a, **copy.deepcopy(sample.kwargs)))
            return [o[k].detach().numpy() for k in diff]

        num = numerical_grads(fn, base, gouts)
        for k, (ga, gn) in enumerate(zip(grads, num)):
            ga = np.zeros_like(gn) if ga is None else ga.numpy()
            np.testing.assert_allclose(ga, gn, atol=1e-5, rtol=1e-4,
                                       err_msg=f"{op.name} [{sample.desc or si}] input {k}: analytic vs finite differences")


def test_inplace_nondifferentiable_overwrite_gets_zero_grad():
    """Overwriting with values that carry no gradient (logical_or_, comparisons, constants) leaves
    those elements with zero gradient. torch keeps the old grad_fn for logical_*_ and lets the
    gradient through unchanged; ampgrad does better here on purpose."""
    x = ampgrad.tensor([1.0, 0.0, 2.0], requires_grad=True)
    for f in (lambda y: y.logical_or_(ampgrad.zeros(3)), lambda y: y.eq_(ampgrad.zeros(3)),
              lambda y: y.copy_(ampgrad.ones(3)), lambda y: y.fill_(2.0), lambda y: y.zero_(),
              lambda y: y.__setitem__(slice(None), 2.0)):
        y = x.clone()
        f(y)
        (g,) = ampgrad.autograd.grad((y * 3).sum(), [x], allow_unused=True)
        assert y.requires_grad and g is not None and g.tolist() == [0.0, 0.0, 0.0], g


# ---------------------------------------------------------------- random op chains
def _chain_ops():
    def sliceset(m, x):
        y = x.clone()
        if y.dim() and y.shape[0] > 1:
            y[0] = y[1] * 3
        return y
    return [
        lambda m, x: x.exp(), lambda m, x: x.sin(), lambda m, x: x * 2, lambda m, x: x.t() if x.dim() == 2 else x,
        lambda m, x: x.sum(0, keepdim=True) if x.dim() else x, lambda m, x: x[1:] if x.dim() and x.shape[0] > 1 else x,
        lambda m, x: x.softmax(-1) if x.dim() else x, lambda m, x: x.clamp(-0.5, 0.5), lambda m, x: x.abs().sqrt(),
        lambda m, x: x.reshape(-1), lambda m, x: x.unsqueeze(0), lambda m, x: x.flip(0) if x.dim() else x,
        lambda m, x: m.cat([x, x], 0) if x.dim() else x, lambda m, x: x.cumsum(0) if x.dim() else x,
        lambda m, x: x.max(0)[0] if x.dim() else x, lambda m, x: x.mean(), lambda m, x: x @ x.mT if x.dim() >= 2 else x,
        lambda m, x: x.expand(2, *x.shape), lambda m, x: x.clone().mul_(2), sliceset,
        lambda m, x: x.var(0) if x.dim() and x.shape[0] > 1 else x, lambda m, x: m.where(x > 0, x, x * x),
        lambda m, x: x.permute(*reversed(range(x.dim()))) if x.dim() else x, lambda m, x: x.contiguous(),
        lambda m, x: x.to(m.float64).to(m.float32)]


def _chain_ops2():
    """Two-input steps: x is the running tensor, y a 0-dim leaf."""
    def inplace_views(m, x, y):
        z = x * 1
        if z.dim() >= 1 and z.shape[-1] >= 2:
            z[..., 0] += y
            (z.t()[..., -1] if z.dim() == 2 else z[..., -1]).mul_(2)
        return z

    def adv_set(m, x, y):
        z = x.clone()
        if z.dim() >= 1 and z.shape[0] >= 2:
            z[[1, 0, 1]] = z[[0, 1, 0]] * y
        return z

    def mask_set(m, x, y):
        z = x.clone()
        z[z > 0] = y
        return z
    return [
        lambda m, x, y: x.sum((0, -1), keepdim=True) if x.dim() >= 2 else x.sum(),
        lambda m, x, y: x.amin((0,)) if x.dim() else x, lambda m, x, y: x.var(-1, correction=0) if x.dim() else x,
        lambda m, x, y: m.matmul(x, x.mT) if x.dim() >= 2 else x * y, lambda m, x, y: m.bmm(x.reshape(1, -1, 1), x.reshape(1, 1, -1)),
        inplace_views, adv_set, mask_set, lambda m, x, y: m.where(x > 0, y, x), lambda m, x, y: x.transpose(0, -1) if x.dim() else x,
        lambda m, x, y: m.cat([x.reshape(-1), y.reshape(-1)]), lambda m, x, y: m.stack([x, x * y]), lambda m, x, y: x[..., ::2],
        lambda m, x, y: x.index_add(0, m.tensor([0] * x.shape[0]), x * 2) if x.dim() else x,
        lambda m, x, y: x.index_copy(0, m.arange(x.shape[0] - 1, -1, -1), x.exp()) if x.dim() else x,
        lambda m, x, y: x.masked_fill(x < 0, 1.0), lambda m, x, y: x.t().contiguous().t() if x.dim() == 2 else x,
        lambda m, x, y: m.nn.functional.silu(x) * m.nn.functional.softplus(x), lambda m, x, y: x.norm(dim=-1) if x.dim() else x,
        lambda m, x, y: x.clone().clamp_(min=-0.2), lambda m, x, y: x.expand(2, *x.shape).sum(0),
        lambda m, x, y: x.movedim(0, -1) if x.dim() else x, lambda m, x, y: x.repeat(2, *([1] * x.dim())),
        lambda m, x, y: x.prod(0) if x.dim() else x, lambda m, x, y: x.flip(-1) if x.dim() else x]


@pytest.mark.parametrize("kind,seed", [(k, s) for k in ("unary", "binary") for s in range(0, 600, 100)])
def test_random_op_chains(kind, seed):
    """Seeded chains of views, in-place writes (also through views), advanced indexing,
    reductions and elementwise ops: values, gradients and result strides (size-1 dims aside)
    agree with torch; a chain torch refuses must be refused with the same exception type."""
    import random
    torch = pytest.importorskip("torch")
    ops = _chain_ops() if kind == "unary" else _chain_ops2()
    for trial in range(seed, seed + 100):
        rng = random.Random(trial)
        shape = [rng.randint(1, 4) for _ in range(rng.randint(0, 3))]
        seq = [rng.randrange(len(ops)) for _ in range(rng.randint(1, 6))]
        data = np.random.RandomState(trial).uniform(-1, 1, size=shape)
        res = []
        for m in (torch, ampgrad):
            x = m.tensor(data, dtype=m.float64).to(m.float32).requires_grad_()
            y = m.tensor(0.7, requires_grad=True)
            try:
                z = x
                for k in seq:
                    z = ops[k](m, z) if kind == "unary" else ops[k](m, z, y)
                grads = m.autograd.grad(z.sum(), [x, y], allow_unused=True)
                res.append((z, grads))
            except Exception as e:
                res.append(e)
        what = f"{kind} chain {trial}: shape {shape}, ops {seq}"
        if isinstance(res[0], Exception) or isinstance(res[1], Exception):
            assert isinstance(res[1], builtin_exc(res[0])), f"{what}: torch {res[0]!r}, ampgrad {res[1]!r}"
            continue
        (tz, tg), (az, ag) = res
        assert_same(az, tz, lambda dt: (1e-5, 1e-4), what, torch)
        for a, t, leaf in zip(ag, tg, (x, y)):
            assert_same(a if a is not None else ampgrad.zeros(list(leaf.shape)), t if t is not None else torch.zeros(list(leaf.shape)),
                        lambda dt: (1e-4, 1e-3), what + " grad", torch)
        assert all(a == t for a, t, n in zip(az.stride(), tz.stride(), tz.shape) if n != 1), \
            f"{what}: strides {az.stride()} != torch's {tz.stride()}"


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_gelu_infinities(approximate, dtype):
    """gelu(+inf) = inf and gelu(-inf) = 0 (the limits). torch returns nan there, a known bug
    (pytorch#185770, #187293) that ampgrad does not copy."""
    x = ampgrad.tensor([float("inf"), -float("inf"), float("nan"), 1.0]).to(getattr(ampgrad, dtype))
    y = ampgrad.nn.functional.gelu(x, approximate=approximate).float().tolist()
    assert y[0] == float("inf") and y[1] == 0.0 and y[2] != y[2] and abs(y[3] - 0.8413) < 1e-2


def _dtype_chain_ops():
    F = lambda m: m.nn.functional  # noqa: E731
    return [
        lambda m, x, y: x + y, lambda m, x, y: x * 3, lambda m, x, y: x / 2, lambda m, x, y: x // 2, lambda m, x, y: x % 3,
        lambda m, x, y: -x, lambda m, x, y: x.abs(), lambda m, x, y: x.sum(0) if x.dim() else x, lambda m, x, y: x.sum(dtype=m.int32),
        lambda m, x, y: x.mean(), lambda m, x, y: x.cumsum(0) if x.dim() else x, lambda m, x, y: x.max(), lambda m, x, y: x.argmax(),
        lambda m, x, y: x.exp(), lambda m, x, y: x.sqrt(), lambda m, x, y: x.clamp(0, 2), lambda m, x, y: x.clamp(min=0.5),
        lambda m, x, y: x > y, lambda m, x, y: x == 1, lambda m, x, y: x & y, lambda m, x, y: x | 1, lambda m, x, y: ~x,
        lambda m, x, y: x ** 2, lambda m, x, y: 2 ** x, lambda m, x, y: x.float(), lambda m, x, y: x.to(m.int64), lambda m, x, y: x.bool(),
        lambda m, x, y: m.where(x > 0, x, y), lambda m, x, y: m.maximum(x, y), lambda m, x, y: x.sign(), lambda m, x, y: x.floor(),
        lambda m, x, y: x.round(), lambda m, x, y: m.cat([x.reshape(-1), y.reshape(-1)]), lambda m, x, y: x.softmax(-1) if x.dim() else x,
        lambda m, x, y: x.logsumexp(0) if x.dim() else x, lambda m, x, y: x.var(), lambda m, x, y: x.norm(), lambda m, x, y: x.all(),
        lambda m, x, y: x.any(0) if x.dim() else x, lambda m, x, y: x.masked_fill(x > 1, 7), lambda m, x, y: x.nonzero(),
        lambda m, x, y: x.t() @ x if x.dim() == 2 else x, lambda m, x, y: x.reciprocal(), lambda m, x, y: x.sigmoid(),
        lambda m, x, y: x.logical_not(), lambda m, x, y: x.isnan(), lambda m, x, y: x.nan_to_num(), lambda m, x, y: x.lerp(y, 0.5),
        lambda m, x, y: m.addcmul(x, x, y), lambda m, x, y: x.frac(), lambda m, x, y: x.relu(), lambda m, x, y: m.atan2(x, y),
        lambda m, x, y: x.fmod(2), lambda m, x, y: x.remainder(-2), lambda m, x, y: x.div(y, rounding_mode="floor"),
        lambda m, x, y: x.sub(y, alpha=2), lambda m, x, y: x.add(1, alpha=3), lambda m, x, y: x.clone().add_(y),
        lambda m, x, y: x.clone().mul_(1.5), lambda m, x, y: x.clone().div_(2), lambda m, x, y: x.clone().clamp_(0, 1),
        lambda m, x, y: x.tril() if x.dim() == 2 else x, lambda m, x, y: x.amax(), lambda m, x, y: x.min(0)[1] if x.dim() else x,
        lambda m, x, y: x.std(), lambda m, x, y: x.log1p(), lambda m, x, y: F(m).silu(x), lambda m, x, y: x.erfinv(),
        lambda m, x, y: x[x > 0], lambda m, x, y: x.index_select(0, m.tensor([0])) if x.dim() else x]


@pytest.mark.parametrize("seed", range(0, 1200, 200))
def test_random_dtype_chains(seed):
    """Seeded forward chains over random dtype pairs: result dtypes, shapes and values agree with
    torch, and a chain torch refuses is refused with the same exception type."""
    import random
    torch = pytest.importorskip("torch")
    dts = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
    ops = _dtype_chain_ops()
    for trial in range(seed, seed + 200):
        rng = random.Random(trial)
        shape = [rng.randint(1, 3) for _ in range(rng.randint(0, 2))]
        dx, dy = rng.choice(dts), rng.choice(dts)
        seq = [rng.randrange(len(ops)) for _ in range(rng.randint(1, 3))]
        d1 = np.random.RandomState(trial).uniform(-3, 3, size=shape).round(1)
        d2 = np.random.RandomState(trial + 7).uniform(-3, 3, size=shape).round(1)
        res = []
        for m in (torch, ampgrad):
            x = m.tensor(d1, dtype=m.float64).to(getattr(m, dx))
            y = m.tensor(d2, dtype=m.float64).to(getattr(m, dy))
            try:
                z = x
                for k in seq:
                    z = ops[k](m, z, y)
                res.append(z)
            except Exception as e:
                res.append(e)
        what = f"dtype chain {trial}: {dx}{shape} / {dy}, ops {seq}"
        if isinstance(res[0], Exception) or isinstance(res[1], Exception):
            assert isinstance(res[1], builtin_exc(res[0])), f"{what}: torch {res[0]!r}, ampgrad {res[1]!r}"
            continue
        lowp = {"float16": (2e-2, 2e-2), "bfloat16": (3e-2, 3e-2)}
        assert_same(res[1], res[0], lambda dt: lowp.get(dt, (1e-5, 1e-5)), what, torch)
