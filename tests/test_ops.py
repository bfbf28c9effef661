"""Op database tests (tests/op_db.py), parametrized over op x dtype x device: forward values and
result dtype against torch (NumPy where torch is absent), gradients against torch for
float32/float64, second order against torch (or, where torch has no double backward, against
finite differences of ampgrad's gradient), gradients against float64 central finite differences,
non-contiguous inputs, and autocast("cpu") against torch's.

Device axis: every op-db check runs on "cpu" and "cuda"; the CUDA entries skip without a device.
torch (on the CPU) stays the oracle there: ampgrad's CUDA results must sit on the device, have
torch's dtypes and match its CPU numbers to the op's tolerance plus a CUDA floor (fp32 accumulation
orders differ). A CUDA op with no kernel yet is an xfail. Known failures are per-entry `xfail`
lists in op_db.py (strict on the CPU)."""
import copy

import numpy as np
import pytest

import ampgrad
from op_db import OPS, GRAD_DTYPES, instantiate, make_tensor, realize, rng_for, round_to  # noqa: F401 (realize: test_forward_ad)

# op_db's "m.nn.functional.softmax(x)" warns about its implicit dim, as torch's does
pytestmark = pytest.mark.filterwarnings("ignore:Implicit dimension choice:UserWarning")

_EXC_ORDER = (NotImplementedError, IndexError, TypeError, ValueError, RuntimeError)
HAS_CUDA = ampgrad.cuda.is_available()
DEVICES = ("cpu", "cuda")
# CUDA vs torch's CPU results: summation orders differ (fp32 accumulators on CUDA), so a floor is
# added to the op's tolerances.
CUDA_TOL = {"float32": (1e-4, 1e-4), "float16": (2e-3, 2e-3), "bfloat16": (1e-2, 2e-2), "float64": (1e-7, 1e-7)}
CUDA_GRAD_TOL = {"float32": (2e-4, 2e-4), "float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2), "float64": (1e-7, 1e-6)}


def builtin_exc(e):
    """The builtin exception class torch's (possibly custom) exception stands for."""
    for cls in _EXC_ORDER:
        if isinstance(e, cls):
            return cls
    return type(e)


def no_cuda_kernel(e):
    return isinstance(e, NotImplementedError) and "'CUDA' backend" in str(e)


def torch_lacks(e):
    """torch (the CPU oracle) has no kernel or derivative for this case: nothing to compare with."""
    return isinstance(e, NotImplementedError) or (isinstance(e, RuntimeError) and "not implemented" in str(e))


# ---------------------------------------------------------------- parametrization
def _marks(op, kind, qual, device):
    marks = []
    if device == "cuda":
        marks += [pytest.mark.cuda, pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device")]
    skip = op.skip.get(f"{kind}-{qual}") or op.skip.get(kind)
    if skip:
        marks.append(pytest.mark.skip(reason=skip))
    reason = op.xfail.get(f"{kind}-{qual}") or op.xfail.get(kind)
    if reason:
        marks.append(pytest.mark.xfail(strict=device == "cpu", reason=reason))
    return marks


def op_params(ops, kind, dtypes_of=None, devices=DEVICES, qual_of=None):
    """pytest params (op[, dtype], device) with ids "<op>-<dtype>-<device>" and the entry's
    skip / xfail marks for test kind `kind` (qualified by the dtype or by qual_of(op))."""
    out = []
    for op in ops:
        for dev in devices:
            if dtypes_of is None:
                q = qual_of(op) if qual_of else None
                out.append(pytest.param(op, dev, id=f"{op.name}-{dev}", marks=_marks(op, kind, q, dev)))
                continue
            for dt in dtypes_of(op):
                out.append(pytest.param(op, dt, dev, id=f"{op.name}-{dt}-{dev}", marks=_marks(op, kind, dt, dev)))
    return out


def _xfail(op, kind, dtype=None):
    """(kept for callers outside the parametrization) an imperative xfail for a known failure."""
    reason = op.xfail.get(f"{kind}-{dtype}") or op.xfail.get(kind)
    if reason:
        pytest.xfail(reason)


# ---------------------------------------------------------------- comparison
def flat_outputs(o):
    if isinstance(o, (tuple, list)):
        return [x for item in o for x in flat_outputs(item)]
    return [o]


def dtype_name(dt):
    return str(dt).split(".")[-1]


def ag_to_torch(t, torch):
    """An ampgrad tensor's values as a torch tensor of the same dtype (via NumPy)."""
    t = t.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    name = dtype_name(t.dtype)
    if name == "bfloat16":
        return torch.from_numpy(np.array(t.float().numpy())).to(torch.bfloat16)
    return torch.from_numpy(np.array(t.numpy()))


def assert_same(actual, expected, tol, what, torch, exact_sign=False, device=None):
    """`tol` maps an output dtype name to (atol, rtol). exact_sign: zeros and infinities must carry
    torch's sign bit (assert_close takes -0.0 == 0.0), which special-point samples check. device:
    the device every tensor result must be on (None: not checked)."""
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
        if device is not None:
            assert a.device.type == device, f"{where}: result on {a.device}, expected {device}"
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


def sample_tol(op, sample, grad=False, device="cpu"):
    """The (atol, rtol) function for a sample: its own `tol` where given, else the op's; on CUDA
    the CUDA floor is added."""
    base = op.grad_tolerance if grad else op.tolerance
    tol = (lambda dt: sample.tol.get(dt) or base(dt)) if sample.tol else base
    if device == "cpu":
        return tol
    floor = CUDA_GRAD_TOL if grad else CUDA_TOL

    def with_floor(dt):
        (a, r), (fa, fr) = tol(dt), floor.get(dt, (0, 0))
        return a + fa, r + fr
    return with_floor


def runs_in(sample, dtype):
    return sample.dtypes is None or dtype in sample.dtypes


def _on_device(call, device):
    """Runs ampgrad's side; on CUDA an op with no kernel yet is an xfail."""
    try:
        return call()
    except NotImplementedError as e:
        if device != "cpu" and no_cuda_kernel(e):
            pytest.xfail(f"no CUDA kernel: {e}")
        raise


def check_forward(op, si, sample, dtype, layout, torch, device="cpu"):
    realized = realize(op, si, sample, dtype)
    th_args, _ = instantiate(torch, realized, layout)
    what = f"{op.name} [{sample.desc or si}] {dtype} {layout} {device}"
    try:
        expected = op.call(torch, True, *th_args, **copy.deepcopy(sample.kwargs))
    except Exception as e:  # torch refuses: ampgrad must refuse the same way
        if device != "cpu" and torch_lacks(e):
            return  # torch's CPU has no kernel for this dtype; a device may well have one
        exc = builtin_exc(e)
        with pytest.raises(exc):
            ag_args, _ = instantiate(ampgrad, realized, layout, device=device)
            _on_device(lambda: op.call(ampgrad, False, *ag_args, **copy.deepcopy(sample.kwargs)), device)
        return
    ag_args, _ = instantiate(ampgrad, realized, layout, device=device)
    actual = _on_device(lambda: op.call(ampgrad, False, *ag_args, **copy.deepcopy(sample.kwargs)), device)
    assert_same(actual, expected, sample_tol(op, sample, device=device), what, torch, exact_sign=sample.special, device=device)


# ---------------------------------------------------------------- forward
@pytest.mark.parametrize("op,dtype,device", op_params(OPS, "forward", lambda op: op.dtypes))
def test_forward(op, dtype, device):
    torch = pytest.importorskip("torch")
    for si, sample in enumerate(op.samples):
        if runs_in(sample, dtype):
            check_forward(op, si, sample, dtype, "contig", torch, device)


def _noncontig_dtype(op):
    for dt in ("float32", "int64", "bool"):
        if dt in op.dtypes:
            return [dt]
    return [op.dtypes[-1]]


@pytest.mark.parametrize("op,dtype,device", op_params([op for op in OPS if op.noncontig], "noncontig", _noncontig_dtype))
@pytest.mark.parametrize("layout", ["strided", "transposed"])
def test_forward_noncontiguous(op, dtype, layout, device):
    torch = pytest.importorskip("torch")
    for si, sample in enumerate(op.samples):
        if not sample.special:
            check_forward(op, si, sample, dtype, layout, torch, device)


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
def _grad_outputs(m, outs, op, si, dtype, device="cpu"):
    rng = rng_for(op.name, si, dtype, "grad_outputs")
    gs = []
    for o in outs:
        g = round_to(rng.uniform(-1, 1, size=tuple(o.shape)), dtype)
        gs.append(make_tensor(m, np.asarray(g), dtype_name(o.dtype), device=device))
    return gs


def _run_grad(m, op, si, sample, realized, dtype, layout, is_torch, device="cpu"):
    args, leaves = instantiate(m, realized, layout, requires_grad=True, device=device)
    if not leaves:
        return None
    outs = flat_outputs(op.call(m, is_torch, *args, **copy.deepcopy(sample.kwargs)))
    diff = [k for k, o in enumerate(outs) if o.dtype.is_floating_point and o.requires_grad]
    if not diff:
        return diff, [], leaves
    gouts = _grad_outputs(m, [outs[k] for k in diff], op, si, dtype, device)
    grads = m.autograd.grad([outs[k] for k in diff], leaves, gouts, allow_unused=True)
    return diff, grads, leaves


def check_grad_vs_torch(op, si, sample, dtype, layout, torch, device="cpu"):
    realized = realize(op, si, sample, dtype)
    what = f"{op.name} [{sample.desc or si}] {dtype} {layout} {device} grad"
    run_ag = lambda: _on_device(lambda: _run_grad(ampgrad, op, si, sample, realized, dtype, layout, False, device), device)  # noqa: E731
    try:
        th = _run_grad(torch, op, si, sample, realized, dtype, layout, True)
    except Exception as e:  # e.g. a saved tensor modified in place: ampgrad must refuse too
        if device != "cpu" and torch_lacks(e):
            return
        with pytest.raises(builtin_exc(e)):
            run_ag()
        return
    if th is None or not th[0]:
        return
    ag = run_ag()
    assert ag is not None and ag[0] == th[0], f"{what}: differentiable outputs {ag and ag[0]} != torch's {th[0]}"
    for k, (ga, gt, leaf) in enumerate(zip(ag[1], th[1], th[2])):
        gt = torch.zeros_like(leaf) if gt is None else gt
        ga = ampgrad.zeros(*leaf.shape, dtype=getattr(ampgrad, dtype_name(leaf.dtype)), device=device) if ga is None else ga
        assert_same(ga, gt, sample_tol(op, sample, grad=True, device=device), f"{what} input {k}", torch,
                    exact_sign=sample.special, device=device)


@pytest.mark.parametrize("op,dtype,device", op_params([op for op in OPS if op.grad], "grad",
                                                      lambda op: [d for d in GRAD_DTYPES if d in op.dtypes]))
def test_grad(op, dtype, device):
    torch = pytest.importorskip("torch")
    for si, sample in enumerate(op.samples):
        if sample.grad and runs_in(sample, dtype):
            check_grad_vs_torch(op, si, sample, dtype, "contig", torch, device)


@pytest.mark.parametrize("op,device", op_params([op for op in OPS if op.grad and op.noncontig and "float32" in op.dtypes],
                                                "noncontig", qual_of=lambda op: "transposed"))
def test_grad_noncontiguous(op, device):
    torch = pytest.importorskip("torch")
    for si, sample in enumerate(op.samples):
        if sample.grad and not sample.special:
            check_grad_vs_torch(op, si, sample, "float32", "transposed", torch, device)


def _run_gradgrad(m, op, si, sample, realized, device="cpu", override=None, second=True):
    """Second order: d/dx sum_k <grad_k(x), v_k> with grads built under create_graph=True
    (second=False: that inner product itself, for finite differences)."""
    args, leaves = instantiate(m, realized, "contig", requires_grad=True, device=device, override=override)
    outs = flat_outputs(op.call(m, m is not ampgrad, *args, **copy.deepcopy(sample.kwargs)))
    diff = [o for o in outs if o.dtype.is_floating_point and o.requires_grad]
    if not diff or not leaves:
        return None
    gouts = _grad_outputs(m, diff, op, si, "float64", device)
    grads = m.autograd.grad(diff, leaves, gouts, create_graph=second, allow_unused=True)
    if any(g is not None and not bool(m.isfinite(g).all()) for g in grads):
        return None  # degenerate point (e.g. var with no degrees of freedom): nothing to differentiate
    rng = rng_for(op.name, si, "gradgrad")
    vs = [make_tensor(m, rng.uniform(-1, 1, size=tuple(leaf.shape)), "float64", device=device) for leaf in leaves]
    if not second:
        return sum(float((g.detach() * v).sum()) for g, v in zip(grads, vs) if g is not None)
    pairs = [(g, v) for g, v in zip(grads, vs) if g is not None and g.requires_grad]
    if not pairs:
        return [None] * len(leaves), leaves
    return m.autograd.grad([g for g, _ in pairs], leaves, [v for _, v in pairs], allow_unused=True), leaves


def _gradgrad_fd(op, si, sample, realized, ag):
    """Where torch has no double backward: ampgrad's second order against central differences of
    its own first-order gradients (small samples only)."""
    leaves = ag[1]
    if sum(int(np.prod(leaf.shape)) for leaf in leaves) > 200:
        return
    base = [np.array(leaf.detach().cpu().numpy()) for leaf in leaves]
    num = numerical_grads(lambda arrays: [np.asarray(_run_gradgrad(ampgrad, op, si, sample, realized, override=dict(enumerate(arrays)),
                                                                   second=False) or 0.0)], base, [np.asarray(1.0)])
    for k, (ga, gn) in enumerate(zip(ag[0], num)):
        ga = np.zeros_like(gn) if ga is None else ga.detach().cpu().numpy()
        np.testing.assert_allclose(ga, gn, atol=1e-5, rtol=1e-4,
                                   err_msg=f"{op.name} [{sample.desc or si}] gradgrad input {k}: vs finite differences of the gradient")


@pytest.mark.parametrize("op,device", op_params([op for op in OPS if op.grad and "float64" in op.dtypes], "gradgrad"))
def test_gradgrad(op, device):
    """Backward formulas are written with ampgrad ops, so create_graph=True differentiates them."""
    torch = pytest.importorskip("torch")
    for si, sample in enumerate(op.samples):
        if not sample.grad or sample.special:
            continue
        realized = realize(op, si, sample, "float64")
        run_ag = lambda: _on_device(lambda: _run_gradgrad(ampgrad, op, si, sample, realized, device), device)  # noqa: E731
        try:
            th = _run_gradgrad(torch, op, si, sample, realized)
        except Exception as e:
            if torch_lacks(e):  # torch has no double backward here: finite differences instead (or the same refusal)
                try:
                    ag = run_ag()
                except Exception as e2:  # noqa: BLE001
                    assert isinstance(e2, builtin_exc(e)), f"{op.name} [{sample.desc or si}]: torch {e!r}, ampgrad {e2!r}"
                    continue
                if ag is not None and device == "cpu":
                    _gradgrad_fd(op, si, sample, realized, ag)
                continue
            with pytest.raises(builtin_exc(e)):
                run_ag()
            continue
        if th is None:
            continue
        ag = run_ag()
        assert ag is not None, f"{op.name} [{sample.desc or si}]: ampgrad has no differentiable output"
        tol = sample_tol(op, sample, grad=True, device=device) if device != "cpu" else (lambda dt: (1e-7, 1e-6))
        for k, (ga, gt, leaf) in enumerate(zip(ag[0], th[0], th[1])):
            gt = torch.zeros_like(leaf) if gt is None else gt
            ga = ampgrad.zeros(*leaf.shape, dtype=ampgrad.float64, device=device) if ga is None else ga
            assert_same(ga, gt, tol, f"{op.name} [{sample.desc or si}] {device} gradgrad input {k}", torch, device=device)


# ---------------------------------------------------------------- autocast
# Under autocast the lowered ops round their inputs to bfloat16 in both libraries, but accumulate
# differently (torch's oneDNN kernels vs ampgrad's): a bfloat16-level floor for lowered outputs.
AUTOCAST_TOL = {"bfloat16": (5e-2, 5e-2), "float16": (1e-2, 1e-2), "float32": (1e-5, 1e-5), "float64": (1e-7, 1e-7)}


@pytest.mark.parametrize("op,device", op_params([op for op in OPS if "float32" in op.dtypes], "autocast", devices=("cpu",)))
def test_autocast(op, device):
    """float32 inputs under ampgrad.autocast("cpu") against torch.autocast("cpu") (bfloat16): the
    same result dtypes (lowered, kept, promoted or passed through) and values. CPU only: CUDA's
    autocast lists differ from the CPU's and torch, the oracle, runs on the CPU."""
    torch = pytest.importorskip("torch")

    def tol(dt):
        (a, r), (fa, fr) = op.tolerance(dt), AUTOCAST_TOL.get(dt, (0, 0))
        return max(a, fa), max(r, fr)
    for si, sample in enumerate(op.samples):
        if sample.special or not runs_in(sample, "float32"):
            continue
        realized = realize(op, si, sample, "float32")
        th_args, _ = instantiate(torch, realized)
        ag_args, _ = instantiate(ampgrad, realized)
        what = f"{op.name} [{sample.desc or si}] autocast"
        try:
            with torch.autocast("cpu"):
                expected = op.call(torch, True, *th_args, **copy.deepcopy(sample.kwargs))
        except Exception as e:
            with pytest.raises(builtin_exc(e)):
                with ampgrad.autocast("cpu"):
                    op.call(ampgrad, False, *ag_args, **copy.deepcopy(sample.kwargs))
            continue
        with ampgrad.autocast("cpu"):
            actual = op.call(ampgrad, False, *ag_args, **copy.deepcopy(sample.kwargs))
        assert_same(actual, expected, tol, what, torch)


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


@pytest.mark.parametrize("op,device", op_params([op for op in OPS if op.grad and op.fd and "float64" in op.dtypes], "fd",
                                                devices=("cpu",)))
def test_grad_finite_differences(op, device):
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


def test_grad_roots_that_feed_each_other():
    """autograd.grad([z, w], ...) where w = -z: both roots' gradients reach x, in either order (the engine's
    post-order must finish a root reachable from another root before that root; it once ran -z's node as
    "not needed" when z was listed first)."""
    for order in ((0, 1), (1, 0)):
        x = ampgrad.tensor([1.0, 2.0], requires_grad=True)
        z = x * 3
        roots, gouts = [z, -z], [ampgrad.tensor([1.0, 1.0]), ampgrad.tensor([10.0, 10.0])]
        (g,) = ampgrad.autograd.grad([roots[i] for i in order], [x], [gouts[i] for i in order])
        assert g.tolist() == [-27.0, -27.0], f"order {order}: {g.tolist()}"


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
