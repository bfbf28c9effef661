"""GEMM epilogues (Note [GEMM epilogues] in kernels/kernels.h): linear / addmm with a bias vector and
torch._addmm_activation (addmm + ReLU in one op). On CUDA they run as one cublasLtMatmul with a bias
(+ ReLU) epilogue; on the CPU the same front ends and autograd nodes run over the plain kernels, so
the autograd side (backward from the saved output, forward AD, double backward) is checked here on
any machine. CUDA cases skip without a GPU."""
import numpy as np
import pytest

import ampgrad
from ampgrad.autograd import gradcheck, gradgradcheck

HAS_CUDA = ampgrad.cuda.is_available()
needs_cuda = pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device")


def _t(a, dtype=ampgrad.float64, requires_grad=False, device="cpu"):
    return ampgrad.tensor(np.asarray(a), dtype=dtype, device=device, requires_grad=requires_grad)


def _inputs(m=5, k=4, n=3, seed=0):
    rng = np.random.RandomState(seed)
    return rng.randn(n), rng.randn(m, k), rng.randn(n, k)


def test_addmm_activation_forward_and_grad_fn():
    b, x, w = _inputs()
    out = ampgrad._addmm_activation(_t(b, requires_grad=True), _t(x), _t(w).t())
    expected = np.maximum(x @ w.T + b, 0)
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-12)
    assert type(out.grad_fn).__name__ == "AddmmActivationBackward0"
    # beta / alpha as addmm's; GELU is composed (tanh approximation, as torch's epilogue)
    o2 = ampgrad._addmm_activation(_t(b), _t(x), _t(w).t(), beta=0.5, alpha=2.0)
    np.testing.assert_allclose(o2.numpy(), np.maximum(2 * x @ w.T + 0.5 * b, 0), rtol=1e-12)
    g = ampgrad._addmm_activation(_t(b), _t(x), _t(w).t(), use_gelu=True)
    ref = ampgrad.nn.functional.gelu(ampgrad.addmm(_t(b), _t(x), _t(w).t()), approximate="tanh")
    np.testing.assert_allclose(g.numpy(), ref.numpy(), rtol=1e-12)


@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 2.0)])
def test_addmm_activation_gradients(beta, alpha):
    b, x, w = _inputs(seed=1)
    args = (_t(b, requires_grad=True), _t(x, requires_grad=True), _t(w, requires_grad=True))

    def f(b_, x_, w_):
        return ampgrad._addmm_activation(b_, x_, w_.t(), beta=beta, alpha=alpha)

    assert gradcheck(f, args, check_forward_ad=True)
    assert gradgradcheck(f, args)
    # against the composition, which autograd differentiates op by op
    out = f(*args)
    gs = ampgrad.autograd.grad(out.sum(), args)
    ref = ampgrad.relu(ampgrad.addmm(args[0], args[1], args[2].t(), beta=beta, alpha=alpha))
    gr = ampgrad.autograd.grad(ref.sum(), args)
    for a, r in zip(gs, gr):
        np.testing.assert_allclose(a.numpy(), r.numpy(), rtol=1e-12, atol=1e-12)


def test_addmm_activation_matches_torch(torch):
    """Values as torch's; torch registers no derivative for _addmm_activation (its grad_fn is
    NotImplemented), ampgrad's is differentiable (checked against the composition above)."""
    b, x, w = _inputs(seed=2)
    for beta, alpha in ((1, 1), (0.5, 2.0)):
        o = ampgrad._addmm_activation(_t(b, ampgrad.float32), _t(x, ampgrad.float32), _t(w, ampgrad.float32).t(),
                                      beta=beta, alpha=alpha)
        r = torch._addmm_activation(torch.tensor(b, dtype=torch.float32), torch.tensor(x, dtype=torch.float32),
                                    torch.tensor(w, dtype=torch.float32).t(), beta=beta, alpha=alpha)
        np.testing.assert_allclose(o.numpy(), r.numpy(), rtol=1e-6, atol=1e-6)


def test_addmm_activation_errors_are_addmm_errors():
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        ampgrad._addmm_activation(ampgrad.zeros(3), ampgrad.zeros(2, 4), ampgrad.zeros(5, 3))


def test_linear_nd_folds_into_one_addmm(torch):
    """torch's _flatten_nd_linear: a contiguous N-d input with a bias vector is one addmm (and so one
    Lt epilogue call on CUDA); values and gradients match torch, non-contiguous inputs too."""
    rng = np.random.RandomState(3)
    x, w, b = rng.randn(2, 3, 4), rng.randn(5, 4), rng.randn(5)
    for make in (lambda v: v, lambda v: v.transpose(1, 0, 2)):
        xs = make(x)
        ours = [_t(v, requires_grad=True) for v in (xs, w, b)]
        theirs = [torch.tensor(v, requires_grad=True) for v in (xs, w, b)]
        o = ampgrad.nn.functional.linear(*ours)
        r = torch.nn.functional.linear(*theirs)
        np.testing.assert_allclose(o.detach().numpy(), r.detach().numpy(), rtol=1e-12)
        o.pow(2).sum().backward()
        r.pow(2).sum().backward()
        for a, t in zip(ours, theirs):
            np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-10)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        ampgrad.nn.functional.linear(ampgrad.zeros(2, 3, 4), ampgrad.zeros(5, 3), ampgrad.zeros(5))


# ---------------------------------------------------------------- CUDA: the Lt path against the CPU
def _np32(t):
    return t.detach().cpu().float().numpy()


@pytest.mark.cuda
@needs_cuda
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("shape", [(64, 32, 48), (1, 8, 16), (7, 1, 3), (3, 5, 1), (130, 257, 33)])
def test_cuda_linear_bias_epilogue_matches_cpu(dtype, shape):
    m, k, n = shape
    dt = getattr(ampgrad, dtype)
    tol = {"float32": 1e-4, "float16": 2e-2, "bfloat16": 1e-1}[dtype]
    rng = np.random.RandomState(4)
    x, w, b = rng.randn(m, k), rng.randn(n, k), rng.randn(n)
    cpu = [_t(v, dtype=ampgrad.float32, requires_grad=True) for v in (x, w, b)]
    gpu = [_t(v, dtype=dt, requires_grad=True, device="cuda") for v in (x, w, b)]
    oc = ampgrad.nn.functional.linear(*cpu)
    og = ampgrad.nn.functional.linear(*gpu)
    assert og.dtype == dt and og.is_cuda
    np.testing.assert_allclose(_np32(og), _np32(oc), atol=tol, rtol=tol)
    oc.sum().backward()
    og.float().sum().backward()
    for a, c in zip(gpu, cpu):
        np.testing.assert_allclose(_np32(a.grad), _np32(c.grad), atol=tol * k, rtol=tol)
    # 3-d input folds into the same call; a misaligned bias view takes the plain GEMM path
    x3 = _t(rng.randn(2, m, k), dtype=dt, device="cuda")
    bb = _t(rng.randn(n + 1), dtype=dt, device="cuda")[1:]
    o3 = ampgrad.nn.functional.linear(x3, gpu[1].detach(), bb)
    ref = ampgrad.nn.functional.linear(x3.cpu().float(), gpu[1].detach().cpu().float(), bb.cpu().float())
    np.testing.assert_allclose(_np32(o3), _np32(ref), atol=tol * 2, rtol=tol * 2)


@pytest.mark.cuda
@needs_cuda
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_cuda_addmm_activation_relu_epilogue(dtype):
    dt = getattr(ampgrad, dtype)
    tol = {"float32": 1e-4, "float16": 2e-2, "bfloat16": 1e-1}[dtype]
    b, x, w = _inputs(m=96, k=64, n=40, seed=5)
    cpu = [_t(v, dtype=ampgrad.float32, requires_grad=True) for v in (b, x, w)]
    gpu = [_t(v, dtype=dt, requires_grad=True, device="cuda") for v in (b, x, w)]
    oc = ampgrad._addmm_activation(cpu[0], cpu[1], cpu[2].t())
    og = ampgrad._addmm_activation(gpu[0], gpu[1], gpu[2].t())
    np.testing.assert_allclose(_np32(og), _np32(oc), atol=tol, rtol=tol)
    assert float((og == 0).float().mean().cpu()) > 0.2  # the ReLU ran
    oc.sum().backward()
    og.float().sum().backward()
    for a, c in zip(gpu, cpu):
        np.testing.assert_allclose(_np32(a.grad), _np32(c.grad), atol=tol * 64, rtol=tol)
    with ampgrad.autocast("cuda", dtype=ampgrad.float16):  # Linear + ReLU under autocast
        o = ampgrad._addmm_activation(gpu[0].float(), gpu[1].float(), gpu[2].float().t())
    assert o.dtype == ampgrad.float16


# Note [One rounding in GEMM epilogues]: addmv / addr / baddbmm / addbmm in bf16 and fp16 are formed in
# float32 and rounded once, as torch's opmath does. The error against a float64 evaluation of the same
# (already rounded) inputs must not exceed torch's beyond one rounding step of the result.
_EPILOGUE_CASES = [("baddbmm", [(4, 5, 6), (4, 5, 7), (4, 7, 6)]), ("addbmm", [(5, 6), (8, 5, 7), (8, 7, 6)]),
                   ("addmv", [(5,), (5, 9), (9,)]), ("addr", [(5, 6), (5,), (6,)]), ("addmm", [(5, 6), (5, 7), (7, 6)])]


@pytest.mark.parametrize("name,shapes", _EPILOGUE_CASES, ids=[c[0] for c in _EPILOGUE_CASES])
@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
def test_epilogue_low_precision_rounds_once(torch, name, shapes, dt):
    rng = np.random.default_rng(1)
    arrs = [rng.standard_normal(s) * 3 for s in shapes]
    tq = [torch.tensor(a, dtype=getattr(torch, dt)) for a in arrs]
    kw = dict(beta=0.37, alpha=1.9)
    ref = getattr(torch, name)(*[t.double() for t in tq], **kw).numpy()
    mine = getattr(ampgrad, name)(*[ampgrad.tensor(t.double().numpy()).to(getattr(ampgrad, dt)) for t in tq], **kw)
    assert mine.dtype == getattr(ampgrad, dt)
    err_t = np.abs(getattr(torch, name)(*tq, **kw).double().numpy() - ref).max()
    err_a = np.abs(mine.double().numpy() - ref).max()
    ulp = np.abs(ref).max() * (2.0 ** -8 if dt == "bfloat16" else 2.0 ** -11)
    assert err_a <= err_t + ulp, (err_a, err_t)


@pytest.mark.parametrize("name,shapes", [("baddbmm", [(5, 6), (4, 5, 7), (4, 7, 6)]), ("addbmm", [(1, 6), (4, 5, 7), (4, 7, 6)]),
                                         ("addmv", [(1,), (5, 7), (7,)]), ("addr", [(5, 1), (5,), (6,)])])
@pytest.mark.parametrize("beta", [0.5, 0.0])
def test_epilogue_nodes_and_grads_match_torch(torch, name, shapes, beta):
    rng = np.random.default_rng(2)
    arrs = [rng.standard_normal(s) for s in shapes]
    if beta == 0:
        arrs[0][...] = np.nan  # beta == 0 ignores self, nan included
    ta = [torch.tensor(a, requires_grad=True) for a in arrs]
    aa = [ampgrad.tensor(a, requires_grad=True) for a in arrs]
    rt = getattr(torch, name)(*ta, beta=beta, alpha=1.5)
    ra = getattr(ampgrad, name)(*aa, beta=beta, alpha=1.5)
    assert ra.grad_fn.name() == rt.grad_fn.name()
    np.testing.assert_allclose(ra.detach().numpy(), rt.detach().numpy(), rtol=1e-12, atol=1e-12)
    gw = rng.standard_normal(tuple(rt.shape))
    rt.backward(torch.tensor(gw))
    ra.backward(ampgrad.tensor(gw))
    for x, y in zip(aa, ta):
        np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name,shapes", [("baddbmm", [(5, 6), (4, 5, 7), (4, 7, 6)]), ("addbmm", [(1, 6), (3, 5, 7), (3, 7, 6)]),
                                         ("addmv", [(5,), (5, 7), (7,)]), ("addr", [(5, 6), (5,), (6,)])])
def test_epilogue_gradcheck_and_gradgradcheck(name, shapes):
    rng = np.random.default_rng(3)
    xs = [_t(rng.standard_normal(s), requires_grad=True) for s in shapes]
    f = lambda *a: getattr(ampgrad, name)(*a, beta=0.7, alpha=-1.3)  # noqa: E731
    assert gradcheck(f, xs)
    assert gradgradcheck(f, xs)


def test_epilogue_dtype_mismatch_errors_as_torch(torch):
    def both(fn):
        out = []
        for m in (torch, ampgrad):
            f, b = m.randn, m.bfloat16
            try:
                fn(m, f, b)
                out.append(None)
            except Exception as e:  # noqa: BLE001
                out.append((type(e).__name__, str(e).splitlines()[0]))
        return out
    for fn in [lambda m, f, b: m.baddbmm(f(2, 3, 4), f(2, 3, 5, dtype=b), f(2, 5, 4, dtype=b)),
               lambda m, f, b: m.addbmm(f(3, 4), f(2, 3, 5, dtype=b), f(2, 5, 4, dtype=b)),
               lambda m, f, b: m.addmv(f(3), f(3, 5, dtype=b), f(5, dtype=b))]:
        t, a = both(fn)
        assert t is not None and a is not None and t[0] == a[0] and t[1].replace("c10::", "") == a[1].replace("c10::", ""), (t, a)
    # addr promotes, as torch
    r = ampgrad.addr(ampgrad.randn(3, 4), ampgrad.randn(3, dtype=ampgrad.bfloat16), ampgrad.randn(4, dtype=ampgrad.bfloat16))
    assert r.dtype == ampgrad.float32
