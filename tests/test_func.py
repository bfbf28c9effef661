"""ampgrad.func (torch.func): grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian, functional_call,
vmap, against torch.func on the same functions and inputs, nested transforms included."""
import numpy as np
import pytest

import ampgrad as ag

torch = pytest.importorskip("torch")


def _np(x):
    return x.detach().numpy()


def f(m, x, y):
    return (m.sin(x) * y).sum() + (x * x).sum()


def vec(m, x):
    return m.tanh(x) * x.sum()


A = np.random.default_rng(0).standard_normal(5)
B = np.random.default_rng(1).standard_normal(5)


def both(fn):
    return fn(ag, ag.tensor(A), ag.tensor(B)), fn(torch, torch.tensor(A), torch.tensor(B))


@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_grad_and_value(argnums):
    a, t = both(lambda m, x, y: m.func.grad_and_value(lambda p, q: f(m, p, q), argnums=argnums)(x, y))
    ga, gt = (a[0], t[0]) if isinstance(argnums, tuple) else ((a[0],), (t[0],))
    for x, y in zip(ga, gt):
        np.testing.assert_allclose(_np(x), _np(y), rtol=1e-12)
        assert not x.requires_grad
    np.testing.assert_allclose(_np(a[1]), _np(t[1]), rtol=1e-12)


def test_nested_grad_is_second_derivative():
    a, t = both(lambda m, x, y: m.func.grad(lambda p: m.func.grad(lambda q: (q ** 3).sum())(p).sum())(x))
    np.testing.assert_allclose(_np(a), 6 * A, rtol=1e-12)
    np.testing.assert_allclose(_np(a), _np(t), rtol=1e-12)


def test_grad_has_aux_and_dict_params():
    lin_a, lin_t = ag.nn.Linear(3, 2).double(), torch.nn.Linear(3, 2).double()
    with ag.no_grad():
        lin_a.weight.copy_(ag.tensor(lin_t.weight.detach().numpy()))
        lin_a.bias.copy_(ag.tensor(lin_t.bias.detach().numpy()))
    x = np.random.default_rng(2).standard_normal((4, 3))
    res = []
    for m, lin in ((ag, lin_a), (torch, lin_t)):
        params = {k: v.detach() for k, v in lin.named_parameters()}
        loss = lambda p: (m.func.functional_call(lin, p, (m.tensor(x),)) ** 2).mean()  # noqa: E731
        g, aux = m.func.grad(lambda p: (loss(p), m.tensor(7.0)), has_aux=True)(params)
        assert aux.item() == 7
        res.append({k: _np(v) for k, v in g.items()})
    for k in res[1]:
        np.testing.assert_allclose(res[0][k], res[1][k], rtol=1e-12)
    assert lin_a.weight.requires_grad and lin_a.weight.grad is None  # restored, untouched


def test_functional_call_restores_and_ties():
    m = ag.nn.Linear(2, 2)
    w = m.weight
    out = ag.func.functional_call(m, {"weight": ag.zeros(2, 2), "bias": ag.ones(2)}, (ag.ones(1, 2),))
    np.testing.assert_array_equal(out.numpy(), np.ones((1, 2)))
    assert m.weight is w
    with pytest.raises(RuntimeError):
        ag.func.functional_call(m, {"weight": ag.zeros(2, 2)}, (ag.ones(1, 2),), strict=True)


def test_vjp_and_jvp():
    (oa, fa), (ot, ft) = both(lambda m, x, y: m.func.vjp(lambda p: vec(m, p), x))
    ct = np.random.default_rng(3).standard_normal(5)
    np.testing.assert_allclose(_np(fa(ag.tensor(ct))[0]), _np(ft(torch.tensor(ct))[0]), rtol=1e-12)
    np.testing.assert_allclose(_np(oa), _np(ot), rtol=1e-12)
    a, t = both(lambda m, x, y: m.func.jvp(lambda p: vec(m, p), (x,), (y,)))
    for x, y in zip(a, t):
        np.testing.assert_allclose(_np(x), _np(y), rtol=1e-12)


@pytest.mark.parametrize("name", ["jacrev", "jacfwd"])
def test_jacobians_and_hessian(name):
    a, t = both(lambda m, x, y: getattr(m.func, name)(lambda p, q: vec(m, p) * q, argnums=(0, 1))(x, y))
    for x, y in zip(a, t):
        np.testing.assert_allclose(_np(x), _np(y), rtol=1e-12, atol=1e-14)
    ha, ht = both(lambda m, x, y: m.func.hessian(lambda p: f(m, p, y))(x))
    np.testing.assert_allclose(_np(ha), _np(ht), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("in_dims,out_dims", [(0, 0), ((1, None), 0), ((0, 0), (1, 0))])
def test_vmap_matches_torch(in_dims, out_dims):
    X = np.random.default_rng(4).standard_normal((3, 4))
    Y = np.random.default_rng(5).standard_normal((4,)) if in_dims == (1, None) else np.random.default_rng(5).standard_normal((3, 4))
    fn = lambda m: m.func.vmap(lambda p, q: (m.tanh(p) * q, (p * q).sum()), in_dims=in_dims, out_dims=out_dims)  # noqa: E731
    Xa = X.T.copy() if in_dims == (1, None) else X
    a = fn(ag)(ag.tensor(Xa), ag.tensor(Y))
    t = fn(torch)(torch.tensor(Xa), torch.tensor(Y))
    for x, y in zip(a, t):
        np.testing.assert_allclose(_np(x), _np(y), rtol=1e-12)


def test_vmap_of_grad_per_sample_gradients():
    X = np.random.default_rng(6).standard_normal((6, 3))
    W = np.random.default_rng(7).standard_normal(3)
    res = []
    for m in (ag, torch):
        g = m.func.vmap(m.func.grad(lambda w, x: m.tanh((w * x).sum())), in_dims=(None, 0))(m.tensor(W), m.tensor(X))
        res.append(_np(g))
    np.testing.assert_allclose(res[0], res[1], rtol=1e-12)


def test_errors():
    with pytest.raises(RuntimeError):
        ag.func.grad(lambda x: x * 2)(ag.ones(3))  # not a scalar output
    with pytest.raises(ValueError):
        ag.func.vmap(lambda x, y: x + y, in_dims=(0, 0))(ag.ones(3), ag.ones(4))
    with pytest.raises(RuntimeError):
        ag.func.grad(lambda x: x.sum(), argnums=3)(ag.ones(3))
