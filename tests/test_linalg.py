"""torch.linalg decompositions and solvers (csrc/ops/linalg_decomp.cpp, kernels/cpu/linalg_decomp.cpp) against
torch: values (float64 / float32, batched, empty batch, 0x0), return types, backward node names, gradients
(against torch, gradcheck, gradgradcheck), forward AD, and errors (LinAlgError for singular / not positive
definite inputs, the _ex variants' info)."""
import numpy as np
import pytest

import ampgrad as ag
from ampgrad.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")


def _rng(seed):
    return np.random.default_rng(seed)


def general(shape, seed=0):
    """Well-conditioned square matrices."""
    a = _rng(seed).standard_normal(shape)
    n = shape[-1]
    return a + 2.0 * n ** 0.5 * np.eye(n) if n else a


def spd(shape, seed=0):
    x = _rng(seed).standard_normal(shape)
    n = shape[-1]
    return x @ np.swapaxes(x, -1, -2) + n * np.eye(n)


def rect(shape, seed=0):
    return _rng(seed).standard_normal(shape)


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _flat(r):
    if isinstance(r, tuple):
        return list(r)
    return [r]


def _close(a, t, dtype, what=""):
    a, t = _np(a), _np(t)
    assert a.shape == t.shape, (what, a.shape, t.shape)
    tol = 1e-9 if dtype == np.float64 else 2e-4
    np.testing.assert_allclose(a, t, rtol=tol, atol=tol * 10, err_msg=what)


def _both(fn, *arrays, dtype=np.float64, grad=False):
    ta = [torch.tensor(x.astype(dtype), requires_grad=grad) for x in arrays]
    aa = [ag.tensor(x.astype(dtype), requires_grad=grad) for x in arrays]
    return fn(torch, *ta), fn(ag, *aa), ta, aa


# name -> (fn, input makers); outputs compared directly (unique decompositions) or through gauge-invariant
# functions (eigenvectors / singular vectors are defined up to sign)
VALUE_CASES = {
    "inv": (lambda m, A: m.linalg.inv(A), [general]),
    "inv_ex": (lambda m, A: tuple(m.linalg.inv_ex(A)), [general]),
    "inverse": (lambda m, A: m.inverse(A), [general]),
    "det": (lambda m, A: m.linalg.det(A), [general]),
    "det_general": (lambda m, A: m.det(A), [rect]),
    "slogdet": (lambda m, A: tuple(m.linalg.slogdet(A)), [rect]),
    "torch_slogdet": (lambda m, A: tuple(m.slogdet(A)), [general]),
    "logdet": (lambda m, A: m.logdet(A), [spd]),
    "solve": (lambda m, A, B: m.linalg.solve(A, B), [general, lambda s, seed: rect(s[:-1] + (2,), seed)]),
    "solve_vec": (lambda m, A, B: m.linalg.solve(A, B), [general, lambda s, seed: rect(s[:-1], seed)]),
    "solve_right": (lambda m, A, B: m.linalg.solve(A, B, left=False), [general, lambda s, seed: rect(s[:-2] + (3, s[-1]), seed)]),
    "solve_ex": (lambda m, A, B: tuple(m.linalg.solve_ex(A, B)), [general, lambda s, seed: rect(s, seed)]),
    "cholesky": (lambda m, A: m.linalg.cholesky(A), [spd]),
    "cholesky_upper": (lambda m, A: m.linalg.cholesky(A, upper=True), [spd]),
    "cholesky_ex": (lambda m, A: tuple(m.linalg.cholesky_ex(A)), [spd]),
    "solve_tri_upper": (lambda m, A, B: m.linalg.solve_triangular(A.triu(), B, upper=True), [general, rect]),
    "solve_tri_lower_right": (lambda m, A, B: m.linalg.solve_triangular(A.tril(), B, upper=False, left=False), [general, rect]),
    "solve_tri_unit": (lambda m, A, B: m.linalg.solve_triangular(A, B, upper=False, unitriangular=True), [general, rect]),
    "qr": (lambda m, A: tuple(m.linalg.qr(A)), [rect]),
    "qr_complete": (lambda m, A: tuple(m.linalg.qr(A, mode="complete")), [rect]),
    "qr_r": (lambda m, A: m.linalg.qr(A, mode="r").R, [rect]),
    "eigvalsh": (lambda m, A: m.linalg.eigvalsh(A), [spd]),
    "eigvalsh_upper": (lambda m, A: m.linalg.eigvalsh(A.triu(), UPLO="U"), [spd]),
    "eigh_recon": (lambda m, A: (lambda w, V: (w, V @ m.diag_embed(w) @ V.mT if hasattr(m, "diag_embed") else (V * w.unsqueeze(-2)) @ V.mT, V * V))(*m.linalg.eigh(A)), [spd]),
    "svdvals": (lambda m, A: m.linalg.svdvals(A), [rect]),
    "svd_recon": (lambda m, A: (lambda U, S, Vh: (S, (U * S.unsqueeze(-2)) @ Vh, U @ Vh))(*m.linalg.svd(A, full_matrices=False)), [rect]),
    "lu_factor": (lambda m, A: tuple(m.linalg.lu_factor(A)), [rect]),
    "lu": (lambda m, A: tuple(m.linalg.lu(A)), [rect]),
    "lu_solve": (lambda m, A, B: m.linalg.lu_solve(*m.linalg.lu_factor(A), B), [general, rect]),
    "lu_solve_adjoint_right": (lambda m, A, B: m.linalg.lu_solve(*m.linalg.lu_factor(A), B.mT, left=False, adjoint=True), [general, rect]),
    "lu_unpack": (lambda m, A: tuple(m.lu_unpack(*m.linalg.lu_factor(A))), [rect]),
    "matrix_exp": (lambda m, A: m.linalg.matrix_exp(A * 0.1), [rect]),
    "pinv": (lambda m, A: m.linalg.pinv(A), [rect]),
    "pinv_hermitian": (lambda m, A: m.linalg.pinv(A, hermitian=True), [spd]),
    "matrix_rank": (lambda m, A: m.linalg.matrix_rank(A), [rect]),
    "matrix_power3": (lambda m, A: m.linalg.matrix_power(A, 3), [rect]),
    "matrix_power_neg": (lambda m, A: m.linalg.matrix_power(A, -2), [general]),
    "matrix_power5": (lambda m, A: m.matrix_power(A, 5), [rect]),
    "cond": (lambda m, A: m.linalg.cond(A), [general]),
    "cond_fro": (lambda m, A: m.linalg.cond(A, "fro"), [general]),
    "norm2": (lambda m, A: m.linalg.matrix_norm(A, 2), [rect]),
    "norm_neg2": (lambda m, A: m.linalg.matrix_norm(A, -2), [rect]),
    "nuc": (lambda m, A: m.linalg.matrix_norm(A, "nuc", keepdim=True), [rect]),
    "cholesky_inverse": (lambda m, A: m.cholesky_inverse(m.linalg.cholesky(A)), [spd]),
    "cholesky_inverse_upper": (lambda m, A: m.cholesky_inverse(m.linalg.cholesky(A, upper=True), upper=True), [spd]),
    "diagonal": (lambda m, A: m.linalg.diagonal(A, offset=1), [rect]),
}
SHAPES = [(4, 4), (2, 3, 5, 5), (0, 3, 3), (2, 0, 0), (1, 1)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", list(VALUE_CASES))
def test_values_match_torch(name, shape, dtype):
    fn, makers = VALUE_CASES[name]
    arrays = [mk(shape, i + 1) for i, mk in enumerate(makers)]
    try:
        fn(torch, *[torch.tensor(x.astype(dtype)) for x in arrays])
    except Exception as e:  # noqa: BLE001  (torch raises for some empty inputs: ampgrad must too)
        with pytest.raises(type(e)):
            fn(ag, *[ag.tensor(x.astype(dtype)) for x in arrays])
        return
    rt, ra, _, _ = _both(fn, *arrays, dtype=dtype)
    for i, (a, t) in enumerate(zip(_flat(ra), _flat(rt))):
        assert str(a.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (name, i, a.dtype, t.dtype)
        _close(a, t, dtype, f"{name}[{i}]")


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 3)], ids=str)
@pytest.mark.parametrize("name", ["qr", "qr_complete", "svdvals", "svd_recon", "lu_factor", "lu", "lu_unpack", "pinv", "matrix_rank",
                                  "norm2", "nuc"])
def test_rectangular_values_match_torch(name, shape):
    fn, makers = VALUE_CASES[name]
    rt, ra, _, _ = _both(fn, *[mk(shape, 3) for mk in makers])
    for i, (a, t) in enumerate(zip(_flat(ra), _flat(rt))):
        _close(a, t, np.float64, f"{name}[{i}]")


def test_full_matrices_svd_shapes_and_orthogonality():
    A = rect((2, 5, 3), 1)
    U, S, Vh = ag.linalg.svd(ag.tensor(A))
    assert tuple(U.shape) == (2, 5, 5) and tuple(Vh.shape) == (2, 3, 3)
    np.testing.assert_allclose((U.mT @ U).numpy(), np.broadcast_to(np.eye(5), (2, 5, 5)), atol=1e-12)
    np.testing.assert_allclose(S.numpy(), torch.linalg.svdvals(torch.tensor(A)).numpy(), rtol=1e-12)
    U, S, V = ag.svd(ag.tensor(A))
    np.testing.assert_allclose(((U * S.unsqueeze(-2)) @ V.mT).numpy(), A, atol=1e-12)


def test_lstsq_fills_what_torch_fills():
    A, B = rect((6, 3), 1), rect((6, 2), 2)
    for driver in [None, "gelsy", "gels", "gelsd", "gelss"]:
        rt = torch.linalg.lstsq(torch.tensor(A), torch.tensor(B), driver=driver)
        ra = ag.linalg.lstsq(ag.tensor(A), ag.tensor(B), driver=driver)
        assert type(ra).__name__ == "linalg_lstsq"
        for f in ("solution", "residuals", "rank", "singular_values"):
            a, t = getattr(ra, f), getattr(rt, f)
            assert tuple(a.shape) == tuple(t.shape), (driver, f, a.shape, t.shape)
            np.testing.assert_allclose(_np(a), _np(t), rtol=1e-9, atol=1e-9, err_msg=f"{driver} {f}")


def test_return_types_and_fields():
    A = ag.tensor(spd((3, 3), 1))
    assert ag.linalg.inv_ex(A)._fields == ("inverse", "info")
    assert ag.linalg.slogdet(A)._fields == ("sign", "logabsdet")
    assert ag.linalg.eigh(A)._fields == ("eigenvalues", "eigenvectors")
    assert ag.linalg.svd(A)._fields == ("U", "S", "Vh")
    assert ag.linalg.qr(A)._fields == ("Q", "R")
    assert ag.linalg.lu_factor_ex(A)._fields == ("LU", "pivots", "info")
    assert ag.linalg.lu(A)._fields == ("P", "L", "U")
    assert ag.linalg.cholesky_ex(A)._fields == ("L", "info")
    assert ag.linalg.solve_ex(A, A)._fields == ("result", "info")
    assert ag.linalg.lu_factor(A).pivots.dtype == ag.int32
    assert ag.linalg.inv_ex(A).info.dtype == ag.int32
    assert tuple(ag.linalg.qr(A, mode="r").Q.shape) == (0,)


def test_torch_level_products():
    a, b = rect((2, 3), 1), rect((4, 1, 2), 2)
    np.testing.assert_allclose(ag.kron(ag.tensor(a), ag.tensor(b)).numpy(), torch.kron(torch.tensor(a), torch.tensor(b)).numpy())
    ts = [rect((2, 3), 3), rect((1,), 4), rect((), 5)]
    np.testing.assert_allclose(ag.block_diag(*[ag.tensor(t) for t in ts]).numpy(), torch.block_diag(*[torch.tensor(t) for t in ts]).numpy())
    x = rect((3, 7), 6)
    np.testing.assert_allclose(ag.cov(ag.tensor(x)).numpy(), torch.cov(torch.tensor(x)).numpy(), rtol=1e-12)
    np.testing.assert_allclose(ag.cov(ag.tensor(x), correction=0).numpy(), torch.cov(torch.tensor(x), correction=0).numpy(), rtol=1e-12)
    fw = np.array([1, 2, 1, 3, 1, 1, 2])
    aw = np.abs(rect((7,), 7))
    np.testing.assert_allclose(ag.cov(ag.tensor(x), fweights=ag.tensor(fw), aweights=ag.tensor(aw)).numpy(),
                               torch.cov(torch.tensor(x), fweights=torch.tensor(fw), aweights=torch.tensor(aw)).numpy(), rtol=1e-10)
    np.testing.assert_allclose(ag.corrcoef(ag.tensor(x)).numpy(), torch.corrcoef(torch.tensor(x)).numpy(), rtol=1e-12)
    v = rect((4,), 8)
    np.testing.assert_allclose(ag.linalg.vander(ag.tensor(v)).numpy(), torch.linalg.vander(torch.tensor(v)).numpy(), rtol=1e-12)
    np.testing.assert_allclose(ag.linalg.vander(ag.tensor(v), N=2).numpy(), torch.linalg.vander(torch.tensor(v), N=2).numpy())
    T = general((6, 6), 9).reshape(2, 3, 6)
    np.testing.assert_allclose(ag.linalg.tensorinv(ag.tensor(T), ind=2).numpy(), torch.linalg.tensorinv(torch.tensor(T), ind=2).numpy(), rtol=1e-10)
    Bv = rect((2, 3), 10)
    np.testing.assert_allclose(ag.linalg.tensorsolve(ag.tensor(T), ag.tensor(Bv)).numpy(),
                               torch.linalg.tensorsolve(torch.tensor(T), torch.tensor(Bv)).numpy(), rtol=1e-10)


# ---------------------------------------------------------------- gradients
def _sym_pd(m, A):
    return A @ A.mT + 3 * m.eye(A.shape[-1], dtype=A.dtype)


# name -> (node name, fn over the inputs, input makers, shape); the fn returns gauge-invariant outputs
GRAD_CASES = {
    "inv": ("LinalgInvExBackward0", lambda m, A: m.linalg.inv(A), [general], (3, 3)),
    "inv_batched": ("LinalgInvExBackward0", lambda m, A: m.linalg.inv_ex(A).inverse, [general], (2, 3, 3)),
    "det": ("LinalgDetBackward0", lambda m, A: m.linalg.det(A), [general], (2, 3, 3)),
    "slogdet": ("LinalgSlogdetBackward0", lambda m, A: m.linalg.slogdet(A).logabsdet, [general], (3, 3)),
    "solve": ("LinalgSolveExBackward0", lambda m, A, B: m.linalg.solve(A, B), [general, lambda s, seed: rect(s[:-1] + (2,), seed)], (2, 3, 3)),
    "solve_vec": ("LinalgSolveExBackward0", lambda m, A, B: m.linalg.solve(A, B), [general, lambda s, seed: rect(s[-1:], seed)], (2, 3, 3)),
    "solve_right": ("LinalgSolveExBackward0", lambda m, A, B: m.linalg.solve(A, B, left=False), [general, rect], (3, 3)),
    "cholesky": ("LinalgCholeskyExBackward0", lambda m, A: m.linalg.cholesky(_sym_pd(m, A)), [rect], (2, 3, 3)),
    "cholesky_upper": ("LinalgCholeskyExBackward0", lambda m, A: m.linalg.cholesky(_sym_pd(m, A), upper=True), [rect], (3, 3)),
    "torch_cholesky": ("CholeskyBackward0", lambda m, A: m.cholesky(_sym_pd(m, A)), [rect], (3, 3)),
    "solve_tri": ("LinalgSolveTriangularBackward0", lambda m, A, B: m.linalg.solve_triangular(A, B, upper=True), [general, rect], (3, 3)),
    "solve_tri_right_unit": ("LinalgSolveTriangularBackward0",
                             lambda m, A, B: m.linalg.solve_triangular(A, B, upper=False, left=False, unitriangular=True), [general, rect], (3, 3)),
    "qr": ("LinalgQrBackward0", lambda m, A: m.linalg.qr(A), [rect], (4, 3)),
    "qr_wide": ("LinalgQrBackward0", lambda m, A: m.linalg.qr(A), [rect], (3, 4)),
    "qr_R": ("LinalgQrBackward0", lambda m, A: m.linalg.qr(A).R, [rect], (2, 3, 3)),
    "eigh": ("LinalgEighBackward0", lambda m, A: (lambda w, V: (w, V * V))(*m.linalg.eigh(A + A.mT)), [rect], (3, 3)),
    "eigvalsh": ("LinalgEighBackward0", lambda m, A: m.linalg.eigvalsh(A + A.mT), [rect], (2, 3, 3)),
    "svd": ("LinalgSvdBackward0", lambda m, A: (lambda U, S, Vh: (S, U @ Vh))(*m.linalg.svd(A, full_matrices=False)), [rect], (4, 3)),
    "svd_wide": ("LinalgSvdBackward0", lambda m, A: (lambda U, S, Vh: (S, U @ Vh))(*m.linalg.svd(A, full_matrices=False)), [rect], (3, 4)),
    "svdvals": ("LinalgSvdBackward0", lambda m, A: m.linalg.svdvals(A), [rect], (2, 4, 3)),
    "lu_factor": ("LinalgLuFactorExBackward0", lambda m, A: m.linalg.lu_factor(A).LU, [general], (3, 3)),
    "lu": ("LinalgLuBackward0", lambda m, A: m.linalg.lu(A)[1:], [rect], (3, 3)),
    "lu_tall": ("LinalgLuBackward0", lambda m, A: m.linalg.lu(A)[1:], [rect], (4, 3)),
    "lu_wide": ("LinalgLuBackward0", lambda m, A: m.linalg.lu(A)[1:], [rect], (3, 4)),
    "lu_solve": ("LinalgLuSolveBackward0", lambda m, A, B: m.linalg.lu_solve(*m.linalg.lu_factor(A), B), [general, rect], (3, 3)),
    "lu_solve_adj": ("LinalgLuSolveBackward0", lambda m, A, B: m.linalg.lu_solve(*m.linalg.lu_factor(A), B, adjoint=True), [general, rect], (3, 3)),
    "lu_solve_right": ("LinalgLuSolveBackward0", lambda m, A, B: m.linalg.lu_solve(*m.linalg.lu_factor(A), B, left=False), [general, rect], (3, 3)),
    "lu_solve_right_adj": ("LinalgLuSolveBackward0", lambda m, A, B: m.linalg.lu_solve(*m.linalg.lu_factor(A), B, left=False, adjoint=True),
                           [general, rect], (3, 3)),
    "lu_unpack": ("LuUnpackBackward0", lambda m, A: m.lu_unpack(*m.linalg.lu_factor(A.detach()))[1:] if False else
                  m.lu_unpack(A, m.linalg.lu_factor(A.detach()).pivots)[1:], [rect], (3, 4)),
    "matrix_exp": ("LinalgMatrixExpBackward0", lambda m, A: m.linalg.matrix_exp(A * 0.3), [rect], (3, 3)),
    "pinv": ("LinalgPinvBackward0", lambda m, A: m.linalg.pinv(A), [rect], (4, 3)),
    "pinv_wide": ("LinalgPinvBackward0", lambda m, A: m.linalg.pinv(A), [rect], (3, 4)),
    "cholesky_inverse": ("CholeskyInverseBackward0", lambda m, A: m.cholesky_inverse(A.tril() + 3 * m.eye(3, dtype=A.dtype)), [rect], (3, 3)),
}


def _scalarize(m, outs, weights):
    total = None
    for o, w in zip(outs, weights):
        s = (o * m.tensor(w)).sum()
        total = s if total is None else total + s
    return total


@pytest.mark.parametrize("key", list(GRAD_CASES))
def test_gradients_match_torch(key):
    node, fn, makers, shape = GRAD_CASES[key]
    arrays = [mk(shape, i + 5) for i, mk in enumerate(makers)]
    rt, ra, ta, aa = _both(fn, *arrays, grad=True)
    outs_t, outs_a = _flat(rt), _flat(ra)
    assert outs_a[0].grad_fn is not None
    if key not in ("eigh", "svd", "svd_wide", "lu_unpack", "cholesky", "cholesky_upper", "torch_cholesky"):
        assert outs_a[0].grad_fn.name() == outs_t[0].grad_fn.name() == node, (outs_a[0].grad_fn.name(), outs_t[0].grad_fn.name())
    ws = [_rng(11 + i).standard_normal(tuple(o.shape)) for i, o in enumerate(outs_t)]
    _scalarize(torch, outs_t, ws).backward()
    _scalarize(ag, outs_a, ws).backward()
    for x, y in zip(aa, ta):
        np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-8, atol=1e-9)


SLOW_GG = {"svd", "svd_wide", "pinv", "pinv_wide", "lu_tall", "lu_wide", "matrix_exp"}


@pytest.mark.parametrize("key", list(GRAD_CASES))
def test_gradcheck_and_gradgradcheck(key):
    _, fn, makers, shape = GRAD_CASES[key]
    arrays = [ag.tensor(mk(shape, i + 7), requires_grad=True) for i, mk in enumerate(makers)]
    f = lambda *xs: fn(ag, *xs)  # noqa: E731
    assert gradcheck(f, tuple(arrays))
    if key not in SLOW_GG:
        assert gradgradcheck(f, tuple(arrays))


@pytest.mark.parametrize("key", ["inv", "det", "solve", "cholesky", "solve_tri", "matrix_exp"])
def test_forward_ad_matches_torch(key):
    import ampgrad.autograd.forward_ad as fwad
    import torch.autograd.forward_ad as tfw
    _, fn, makers, shape = GRAD_CASES[key]
    arrays = [mk(shape, i + 9) for i, mk in enumerate(makers)]
    tangents = [_rng(20 + i).standard_normal(a.shape) for i, a in enumerate(arrays)]
    if key == "cholesky":  # the tangent of a symmetric input is symmetric
        tangents[0] = tangents[0] + np.swapaxes(tangents[0], -1, -2)
    with fwad.dual_level():
        out = fn(ag, *[fwad.make_dual(ag.tensor(a), ag.tensor(t)) for a, t in zip(arrays, tangents)])
        tan = fwad.unpack_dual(_flat(out)[0]).tangent.numpy()
    with tfw.dual_level():
        ref = tfw.unpack_dual(_flat(fn(torch, *[tfw.make_dual(torch.tensor(a), torch.tensor(t)) for a, t in zip(arrays, tangents)]))[0]).tangent.numpy()
    np.testing.assert_allclose(tan, ref, rtol=1e-8, atol=1e-10)


def _cofactor(a):
    """The cofactor matrix (the derivative of det) in float64 from the minors, batched."""
    a = np.asarray(a, dtype=np.float64)
    n = a.shape[-1]
    out = np.empty_like(a)
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(a, i, axis=-2), j, axis=-1)
            out[..., i, j] = (-1) ** (i + j) * np.linalg.det(minor)
    return out


def test_det_of_singular_matrices_has_the_cofactor_gradient():
    # torch's gradient at an exactly singular matrix (no create_graph) is LAPACK's rounding: zeros for
    # [[1, 2], [2, 4]] and the cofactor matrix for S on one Intel CPU, zeros for both on an AMD CPU.
    # ampgrad gives the exact derivative everywhere: the cofactor matrix.
    S = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, -1.0, 2.0]])  # rank 2
    S2 = np.array([[1.0, 2.0], [2.0, 4.0]])
    R1 = np.array([[1.0, 0, 0], [0, 0, 0], [0, 0, 0]])  # rank 1: cofactor matrix 0
    batch = np.stack([S, general((3, 3), 3)])
    for a in (S, S2, R1, batch):
        xt, xa = torch.tensor(a, requires_grad=True), ag.tensor(a, requires_grad=True)
        dt, da = torch.linalg.det(xt), ag.linalg.det(xa)
        np.testing.assert_allclose(da.detach().numpy(), dt.detach().numpy(), atol=1e-12)
        da.sum().backward()
        np.testing.assert_allclose(xa.grad.numpy(), _cofactor(a), rtol=1e-8, atol=1e-10)
        assert np.isfinite(xa.grad.numpy()).all()
        # with create_graph torch switches to the SVD formula: the cofactor matrix, differentiable again
        xt, xa = torch.tensor(a, requires_grad=True), ag.tensor(a, requires_grad=True)
        gt, = torch.autograd.grad(torch.linalg.det(xt).sum(), xt, create_graph=True)
        ga, = ag.autograd.grad(ag.linalg.det(xa).sum(), xa, create_graph=True)
        np.testing.assert_allclose(ga.detach().numpy(), gt.detach().numpy(), rtol=1e-7, atol=1e-9)
    # float32 too
    xa = ag.tensor(S2.astype(np.float32), requires_grad=True)
    ag.linalg.det(xa).backward()
    np.testing.assert_allclose(xa.grad.numpy(), _cofactor(S2), rtol=1e-6, atol=1e-6)


def test_slogdet_and_logdet_of_singular_and_negative():
    S = np.array([[1.0, 2.0], [2.0, 4.0]])
    N = np.array([[0.0, 1.0], [1.0, 0.0]])
    for a in (S, N):
        st, sa = torch.linalg.slogdet(torch.tensor(a)), ag.linalg.slogdet(ag.tensor(a))
        np.testing.assert_array_equal(sa.sign.numpy(), st.sign.numpy())
        np.testing.assert_array_equal(sa.logabsdet.numpy(), st.logabsdet.numpy())
        np.testing.assert_array_equal(ag.logdet(ag.tensor(a)).numpy(), torch.logdet(torch.tensor(a)).numpy())


def test_singular_and_not_positive_definite_raise_linalg_error():
    assert issubclass(ag.linalg.LinAlgError, RuntimeError)
    sing = np.zeros((3, 3))
    sing[0, 0] = sing[1, 1] = 1
    batch = np.stack([np.eye(3), sing])
    cases = [
        lambda m, s, b: m.linalg.inv(s), lambda m, s, b: m.linalg.inv(b), lambda m, s, b: m.inverse(s),
        lambda m, s, b: m.linalg.solve(s, m.ones(3)), lambda m, s, b: m.linalg.solve(b, m.ones(2, 3, 1)),
        lambda m, s, b: m.linalg.cholesky(-b), lambda m, s, b: m.linalg.cholesky(s - 2 * m.eye(3, dtype=s.dtype)),
        lambda m, s, b: m.linalg.lu_factor(s),
    ]
    for i, c in enumerate(cases):
        msgs = []
        for m in (torch, ag):
            try:
                c(m, m.tensor(sing), m.tensor(batch))
            except m.linalg.LinAlgError as e:
                msgs.append(str(e).splitlines()[0])
            except RuntimeError as e:
                msgs.append("RuntimeError: " + str(e).splitlines()[0])
        assert len(msgs) == 2 and msgs[0] == msgs[1], (i, msgs)


def test_ex_variants_return_info():
    sing = np.zeros((2, 3, 3))
    sing[0] = np.eye(3)
    sing[1, 0, 0] = 1
    for f in [lambda m, x: m.linalg.inv_ex(x).info, lambda m, x: m.linalg.cholesky_ex(x).info,
              lambda m, x: m.linalg.lu_factor_ex(x).info, lambda m, x: m.linalg.solve_ex(x, m.ones(2, 3, 1, dtype=x.dtype)).info]:
        np.testing.assert_array_equal(f(ag, ag.tensor(sing)).numpy(), f(torch, torch.tensor(sing)).numpy())


ERROR_CASES = [
    lambda m: m.linalg.inv(m.ones(2, 3)), lambda m: m.linalg.inv(m.ones(3)), lambda m: m.linalg.inv(m.ones(3, 3, dtype=m.float16)),
    lambda m: m.linalg.inv(m.ones(3, 3, dtype=m.bfloat16)), lambda m: m.linalg.inv(m.ones(3, 3, dtype=m.int64)),
    lambda m: m.linalg.det(m.ones(2, 3)), lambda m: m.linalg.det(m.ones(3, 3, dtype=m.float16)),
    lambda m: m.linalg.slogdet(m.ones(2, 3)), lambda m: m.linalg.solve(m.eye(3), m.ones(4)),
    lambda m: m.linalg.solve(m.eye(3), m.ones(3, 3, dtype=m.float64)), lambda m: m.linalg.cholesky(m.ones(2, 3)),
    lambda m: m.linalg.cholesky(m.eye(3, dtype=m.float16)), lambda m: m.linalg.qr(m.eye(3), mode="x"),
    lambda m: m.linalg.qr(m.eye(3, dtype=m.float16)), lambda m: m.linalg.eigh(m.eye(3), UPLO="X"),
    lambda m: m.linalg.eigh(m.eye(3, dtype=m.float16)), lambda m: m.linalg.svd(m.eye(3, dtype=m.float16)),
    lambda m: m.linalg.solve_triangular(m.eye(3, dtype=m.float16), m.eye(3, dtype=m.float16), upper=True),
    lambda m: m.linalg.solve_triangular(m.eye(3), m.ones(4, 2), upper=True),
    lambda m: m.linalg.lstsq(m.eye(3), m.ones(3, 1), driver="x"),
    lambda m: m.linalg.matrix_exp(m.ones(2, 3)),
    lambda m: m.linalg.svdvals(m.eye(3, dtype=m.bfloat16)),
]


@pytest.mark.parametrize("i", range(len(ERROR_CASES)))
def test_errors_match_torch(i):
    def err(m):
        try:
            ERROR_CASES[i](m)
        except Exception as e:  # noqa: BLE001
            return type(e).__name__.lstrip("_"), str(e).splitlines()[0]
        return None
    t, a = err(torch), err(ag)
    assert t is not None and a == t, (a, t)


def test_qr_r_mode_backward_raises_as_torch():
    for m in (torch, ag):
        A = m.tensor(rect((3, 3), 1), requires_grad=True)
        with pytest.raises(RuntimeError, match="mode='r'"):
            m.linalg.qr(A, mode="r").R.sum().backward()


def test_matrix_exp_low_precision_rounds_once():
    # torch 2.13's fp16 / bf16 CPU matrix_exp computes in the low precision type (and can overflow); ampgrad
    # computes in float32 and rounds once, so the reference is the float64 result rounded to the type.
    a = rect((4, 4), 2) * 0.3
    ref = torch.linalg.matrix_exp(torch.tensor(a))
    for dt in ("float16", "bfloat16"):
        ra = ag.linalg.matrix_exp(ag.tensor(a).to(getattr(ag, dt)))
        assert ra.dtype == getattr(ag, dt)
        want = torch.linalg.matrix_exp(torch.tensor(a).to(getattr(torch, dt)).double()).to(getattr(torch, dt)).double()
        np.testing.assert_allclose(ra.double().numpy(), want.numpy(), rtol=2e-2, atol=2e-2)
        np.testing.assert_allclose(ra.double().numpy(), ref.numpy(), rtol=5e-2, atol=5e-2)


def test_broadcast_batch_gradients_reduce_to_input_shape():
    A, B = general((3, 3), 1), rect((4, 3, 2), 2)
    rt, ra, ta, aa = _both(lambda m, a, b: m.linalg.solve(a, b), A, B, grad=True)
    rt.sum().backward()
    ra.sum().backward()
    for x, y in zip(aa, ta):
        assert tuple(x.grad.shape) == tuple(y.grad.shape)
        np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-9, atol=1e-12)
