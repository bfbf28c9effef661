"""autograd.functional against torch.autograd.functional: vjp, jvp, jacobian, hessian, vhp, hvp on
several functions (values, return structure, dtypes, create_graph behaviour), torch's errors for bad
inputs / v, strict mode, and the documented vectorize / forward-mode fallbacks."""
import numpy as np
import pytest

import ampgrad
import ampgrad.autograd.functional as AF

torch = pytest.importorskip("torch")
TF = torch.autograd.functional


# ---------------------------------------------------------------- helpers
def to_pair(arrs, requires_grad=False):
    """The same float64 inputs for ampgrad and torch (a tuple in, tuples out)."""
    a = tuple(ampgrad.tensor(x, dtype=ampgrad.float64, requires_grad=requires_grad) for x in arrs)
    t = tuple(torch.tensor(x, dtype=torch.float64, requires_grad=requires_grad) for x in arrs)
    return a, t


def assert_same(a, t, what="result", rtol=1e-7, atol=1e-9):
    """Same nesting (Tensor vs tuple), shapes, dtypes, requires_grad and values."""
    if isinstance(t, tuple):
        assert isinstance(a, tuple), f"{what}: expected a tuple, got {type(a).__name__}"
        assert len(a) == len(t), f"{what}: length {len(a)} != {len(t)}"
        for k, (x, y) in enumerate(zip(a, t)):
            assert_same(x, y, f"{what}[{k}]", rtol, atol)
        return
    assert isinstance(a, ampgrad.Tensor), f"{what}: expected a Tensor, got {type(a).__name__}"
    assert tuple(a.shape) == tuple(t.shape), f"{what}: shape {tuple(a.shape)} != {tuple(t.shape)}"
    assert str(a.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], f"{what}: dtype {a.dtype} vs {t.dtype}"
    assert a.requires_grad == t.requires_grad, f"{what}: requires_grad {a.requires_grad} != {t.requires_grad}"
    np.testing.assert_allclose(a.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol, err_msg=what)


def unpack(inputs, single):
    return inputs[0] if single else inputs


# Functions written with methods that ampgrad and torch share, so one lambda serves both.
def exp_reducer(x):
    return x.exp().sum(dim=1)


def adder(x, y):
    return 2 * x + 3 * y


def two_outputs(x, y):
    return x * y.sin(), (x @ y).tanh()


def pow_reducer(x):
    return x.pow(3).sum()


def scalar_two(x, y):
    return (x.pow(3) * y.exp()).sum() + (x * y).sum()


def quad(x):
    return (x * x).sum() + x.prod()


def independent_second(x, y):
    return x.exp().sum()


RNG = np.random.default_rng(1234)


def arrays(*shapes):
    return [RNG.standard_normal(s) for s in shapes]


# ---------------------------------------------------------------- vjp / jvp
VJP_CASES = [
    # (func, input shapes, single input?, v shapes (None: no v), single output?)
    (exp_reducer, [(4, 4)], True, [(4,)], True),
    (adder, [(2,), (2,)], False, [(2,)], True),
    (two_outputs, [(3, 3), (3, 3)], False, [(3, 3), (3, 3)], False),
    (pow_reducer, [(5,)], True, None, True),
    (independent_second, [(3,), (2,)], False, None, True),
]


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("case", VJP_CASES, ids=lambda c: c[0].__name__)
def test_vjp_matches_torch(case, create_graph):
    func, in_shapes, single_in, v_shapes, single_out = case
    a_in, t_in = to_pair(arrays(*in_shapes))
    a_v = t_v = None
    if v_shapes is not None:
        a_v, t_v = to_pair(arrays(*v_shapes))
        a_v, t_v = unpack(a_v, single_out), unpack(t_v, single_out)
    a = AF.vjp(func, unpack(a_in, single_in), a_v, create_graph=create_graph)
    t = TF.vjp(func, unpack(t_in, single_in), t_v, create_graph=create_graph)
    assert_same(a, t, "vjp")


JVP_CASES = [
    (exp_reducer, [(4, 4)], True, [(4, 4)], True),
    (adder, [(2,), (2,)], False, [(2,), (2,)], True),
    (two_outputs, [(3, 3), (3, 3)], False, [(3, 3), (3, 3)], False),
    (lambda x: x.exp() * 3, [(1,)], True, None, True),
    (independent_second, [(3,), (2,)], False, [(3,), (2,)], True),
]


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("case", JVP_CASES, ids=lambda c: getattr(c[0], "__name__", "lambda"))
def test_jvp_matches_torch(case, create_graph):
    func, in_shapes, single_in, v_shapes, single_out = case
    a_in, t_in = to_pair(arrays(*in_shapes))
    a_v = t_v = None
    if v_shapes is not None:
        a_v, t_v = to_pair(arrays(*v_shapes))
        a_v, t_v = unpack(a_v, single_in), unpack(t_v, single_in)
    a = AF.jvp(func, unpack(a_in, single_in), a_v, create_graph=create_graph)
    t = TF.jvp(func, unpack(t_in, single_in), t_v, create_graph=create_graph)
    assert_same(a, t, "jvp")


def test_vjp_create_graph_is_differentiable():
    # create_graph=True: the vjp can itself be differentiated w.r.t. the inputs.
    x_np = arrays((3,))[0]
    xa = ampgrad.tensor(x_np, requires_grad=True)
    xt = torch.tensor(x_np, requires_grad=True)
    _, ga = AF.vjp(pow_reducer, xa, create_graph=True)
    _, gt = TF.vjp(pow_reducer, xt, create_graph=True)
    (ha,) = ampgrad.autograd.grad(ga.sum(), xa)
    (ht,) = torch.autograd.grad(gt.sum(), xt)
    np.testing.assert_allclose(ha.numpy(), ht.numpy(), rtol=1e-10)
    # without create_graph nothing carries history, even for inputs that require grad
    out, g = AF.vjp(pow_reducer, xa)
    assert not out.requires_grad and not g.requires_grad and g.grad_fn is None


def test_jvp_equals_jacobian_times_v():
    x, v = arrays((3, 3), (3, 3))
    _, jv = AF.jvp(lambda a: a.sin() @ a, ampgrad.tensor(x), ampgrad.tensor(v))
    jac = AF.jacobian(lambda a: a.sin() @ a, ampgrad.tensor(x)).numpy().reshape(9, 9)
    np.testing.assert_allclose(jv.numpy().reshape(-1), jac @ v.reshape(-1), rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- jacobian / hessian
JAC_CASES = [
    (exp_reducer, [(4, 3)], True),
    (adder, [(2,), (2,)], False),
    (two_outputs, [(2, 2), (2, 2)], False),
    (lambda x: (x.exp(), x.sum()), [(3,)], True),
    (independent_second, [(3,), (2,)], False),
    (lambda x: x * 2, [()], True),
]


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("case", JAC_CASES, ids=lambda c: getattr(c[0], "__name__", "lambda"))
def test_jacobian_matches_torch(case, create_graph):
    func, in_shapes, single_in = case
    a_in, t_in = to_pair(arrays(*in_shapes), requires_grad=create_graph)
    a = AF.jacobian(func, unpack(a_in, single_in), create_graph=create_graph)
    t = TF.jacobian(func, unpack(t_in, single_in), create_graph=create_graph)
    assert_same(a, t, "jacobian")


def test_jacobian_vectorize_falls_back_to_loop():
    (xa,), (xt,) = to_pair(arrays((4, 2)))
    f = exp_reducer
    assert_same(AF.jacobian(f, xa, vectorize=True), TF.jacobian(f, xt, vectorize=True), "vectorized")
    assert_same(AF.jacobian(f, xa, vectorize=True), AF.jacobian(f, xa), "loop")


def test_jacobian_create_graph_second_derivative():
    x_np = arrays((3,))[0]
    xa = ampgrad.tensor(x_np, requires_grad=True)
    xt = torch.tensor(x_np, requires_grad=True)
    ja = AF.jacobian(lambda x: x.pow(3), xa, create_graph=True)
    jt = TF.jacobian(lambda x: x.pow(3), xt, create_graph=True)
    assert ja.requires_grad and jt.requires_grad
    (ga,) = ampgrad.autograd.grad(ja.sum(), xa)
    (gt,) = torch.autograd.grad(jt.sum(), xt)
    np.testing.assert_allclose(ga.numpy(), gt.numpy(), rtol=1e-10)


HESS_CASES = [
    (pow_reducer, [(3,)], True),
    (quad, [(2, 2)], True),
    (scalar_two, [(2,), (2,)], False),
    (independent_second, [(2,), (3,)], False),
]


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("case", HESS_CASES, ids=lambda c: c[0].__name__)
def test_hessian_matches_torch(case, create_graph):
    func, in_shapes, single_in = case
    a_in, t_in = to_pair(arrays(*in_shapes), requires_grad=create_graph)
    a = AF.hessian(func, unpack(a_in, single_in), create_graph=create_graph)
    t = TF.hessian(func, unpack(t_in, single_in), create_graph=create_graph)
    assert_same(a, t, "hessian")


def test_hessian_vectorize_falls_back_to_loop():
    (xa,), (xt,) = to_pair(arrays((3,)))
    assert_same(AF.hessian(quad, xa, vectorize=True), TF.hessian(quad, xt, vectorize=True), "hessian")


# ---------------------------------------------------------------- vhp / hvp
HP_CASES = [
    (pow_reducer, [(3,)], True, [(3,)]),
    (quad, [(2, 2)], True, [(2, 2)]),
    (scalar_two, [(2,), (2,)], False, [(2,), (2,)]),
    (independent_second, [(2,), (3,)], False, [(2,), (3,)]),
    (lambda x: x.pow(4).sum(), [(1,)], True, None),
]


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("api", ["vhp", "hvp"])
@pytest.mark.parametrize("case", HP_CASES, ids=lambda c: getattr(c[0], "__name__", "lambda"))
def test_vhp_hvp_match_torch(case, api, create_graph):
    func, in_shapes, single_in, v_shapes = case
    a_in, t_in = to_pair(arrays(*in_shapes))
    a_v = t_v = None
    if v_shapes is not None:
        a_v, t_v = to_pair(arrays(*v_shapes))
        a_v, t_v = unpack(a_v, single_in), unpack(t_v, single_in)
    a = getattr(AF, api)(func, unpack(a_in, single_in), a_v, create_graph=create_graph)
    t = getattr(TF, api)(func, unpack(t_in, single_in), t_v, create_graph=create_graph)
    assert_same(a, t, api)


def test_vhp_equals_hvp_for_smooth_function():
    x, v = arrays((2, 2), (2, 2))
    _, a = AF.vhp(quad, ampgrad.tensor(x), ampgrad.tensor(v))
    _, b = AF.hvp(quad, ampgrad.tensor(x), ampgrad.tensor(v))
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10)


# ---------------------------------------------------------------- errors (same type and text as torch)
def same_error(call_a, call_t, exc=RuntimeError):
    with pytest.raises(exc) as ea:
        call_a()
    with pytest.raises(exc) as et:
        call_t()
    msg_a = str(ea.value).replace("ampgrad.", "torch.").replace("ampgrad", "torch")
    assert msg_a == str(et.value)
    return str(ea.value)


def test_v_errors_match_torch():
    (xa, ya), (xt, yt) = to_pair(arrays((3,), (3,)))
    # v of the wrong size, single output
    msg = same_error(lambda: AF.vjp(lambda x: x * 2, xa, ampgrad.ones(4, dtype=ampgrad.float64)),
                     lambda: TF.vjp(lambda x: x * 2, xt, torch.ones(4, dtype=torch.float64)))
    assert msg.startswith("v has invalid size: should be")
    # a tuple v of the wrong length / one entry of the wrong size
    same_error(lambda: AF.jvp(adder, (xa, ya), (xa,)), lambda: TF.jvp(adder, (xt, yt), (xt,)))
    msg = same_error(lambda: AF.jvp(adder, (xa, ya), (xa, ampgrad.ones(2, dtype=ampgrad.float64))),
                     lambda: TF.jvp(adder, (xt, yt), (xt, torch.ones(2, dtype=torch.float64))))
    assert msg.startswith("Entry 1 in v has invalid size")
    # a tuple v for a single-Tensor output
    same_error(lambda: AF.vjp(lambda x: x * 2, xa, (xa, xa)), lambda: TF.vjp(lambda x: x * 2, xt, (xt, xt)))
    # v omitted where it is required
    for name in ["vjp", "jvp", "vhp", "hvp"]:
        f = (lambda x: x * 2) if name in ("vjp", "jvp") else pow_reducer
        same_error(lambda: getattr(AF, name)(f, xa), lambda: getattr(TF, name)(f, xt))


def test_type_errors_match_torch():
    (xa,), (xt,) = to_pair(arrays((3,)))
    same_error(lambda: AF.vjp(lambda x: x, [xa], xa), lambda: TF.vjp(lambda x: x, [xt], xt), TypeError)
    same_error(lambda: AF.jacobian(lambda x, n: x * n, (xa, 2)), lambda: TF.jacobian(lambda x, n: x * n, (xt, 2)),
               TypeError)
    same_error(lambda: AF.jacobian(lambda x: 3.0, xa), lambda: TF.jacobian(lambda x: 3.0, xt), TypeError)
    # hessian / vhp need a single one-element output
    same_error(lambda: AF.hessian(lambda x: x * 2, xa), lambda: TF.hessian(lambda x: x * 2, xt))
    same_error(lambda: AF.hessian(lambda x: (x.sum(), x.sum()), xa), lambda: TF.hessian(lambda x: (x.sum(), x.sum()), xt))
    same_error(lambda: AF.vhp(lambda x: x * 2, xa, xa), lambda: TF.vhp(lambda x: x * 2, xt, xt))


def test_strict_errors_match_torch():
    (xa, ya), (xt, yt) = to_pair(arrays((3,), (2,)))
    msg = same_error(lambda: AF.vjp(independent_second, (xa, ya), strict=True),
                     lambda: TF.vjp(independent_second, (xt, yt), strict=True))
    assert msg == ("The output of the user-provided function is independent of input 1. "
                   "This is not allowed in strict mode.")
    same_error(lambda: AF.jacobian(independent_second, (xa, ya), strict=True),
               lambda: TF.jacobian(independent_second, (xt, yt), strict=True))
    # an output that does not require grad at all
    same_error(lambda: AF.vjp(lambda x: x.detach(), xa, xa, strict=True),
               lambda: TF.vjp(lambda x: x.detach(), xt, xt, strict=True))
    same_error(lambda: AF.jvp(independent_second, (xa, ya), (xa, ya), strict=True),
               lambda: TF.jvp(independent_second, (xt, yt), (xt, yt), strict=True))
    # linear function: its jacobian does not depend on the input (hessian / vhp / hvp)
    lin = lambda x: (x * 2).sum()  # noqa: E731
    same_error(lambda: AF.hessian(lin, xa, strict=True), lambda: TF.hessian(lin, xt, strict=True))
    same_error(lambda: AF.vhp(lin, xa, xa, strict=True), lambda: TF.vhp(lin, xt, xt, strict=True))
    same_error(lambda: AF.hvp(lin, xa, xa, strict=True), lambda: TF.hvp(lin, xt, xt, strict=True))
    # create_graph + strict: a jacobian independent of the input
    same_error(lambda: AF.jacobian(lambda x: x * 2, xa, create_graph=True, strict=True),
               lambda: TF.jacobian(lambda x: x * 2, xt, create_graph=True, strict=True))
    msg = same_error(lambda: AF.vjp(lambda x: x * 2, xa, xa, create_graph=True, strict=True),
                     lambda: TF.vjp(lambda x: x * 2, xt, xt, create_graph=True, strict=True))
    assert msg.endswith("This is not allowed in strict mode when create_graph=True.")
    sq = lambda x: (x * x).sum()  # noqa: E731  (constant hessian)
    msg = same_error(lambda: AF.vhp(sq, xa, xa, create_graph=True, strict=True),
                     lambda: TF.vhp(sq, xt, xt, create_graph=True, strict=True))
    assert msg.startswith("The hessian of the user-provided function is independent")
    # strict passes when everything is connected
    assert_same(AF.vjp(pow_reducer, xa, strict=True), TF.vjp(pow_reducer, xt, strict=True))
    same_error(lambda: AF.jacobian(exp_reducer, xa.reshape(1, 3), strict=True, vectorize=True),
               lambda: TF.jacobian(exp_reducer, xt.reshape(1, 3), strict=True, vectorize=True))


def test_strategy_errors():
    (xa,), (xt,) = to_pair(arrays((3,)))
    same_error(lambda: AF.jacobian(exp_reducer, xa, strategy="sideways"),
               lambda: TF.jacobian(exp_reducer, xt, strategy="sideways"), AssertionError)
    same_error(lambda: AF.jacobian(lambda x: x * 2, xa, strategy="forward-mode", create_graph=True),
               lambda: TF.jacobian(lambda x: x * 2, xt, strategy="forward-mode", create_graph=True),
               NotImplementedError)
    same_error(lambda: AF.jacobian(lambda x: x * 2, xa, strategy="forward-mode"),
               lambda: TF.jacobian(lambda x: x * 2, xt, strategy="forward-mode"), NotImplementedError)
    same_error(lambda: AF.jacobian(lambda x: x * 2, xa, strategy="forward-mode", strict=True, vectorize=True),
               lambda: TF.jacobian(lambda x: x * 2, xt, strategy="forward-mode", strict=True, vectorize=True))
    same_error(lambda: AF.hessian(pow_reducer, xa, outer_jacobian_strategy="forward-mode"),
               lambda: TF.hessian(pow_reducer, xt, outer_jacobian_strategy="forward-mode"), NotImplementedError)
    same_error(lambda: AF.hessian(pow_reducer, xa, outer_jacobian_strategy="nope"),
               lambda: TF.hessian(pow_reducer, xt, outer_jacobian_strategy="nope"), AssertionError)


def test_inputs_not_modified_and_grad_mode_restored():
    (xa,), _ = to_pair(arrays((3,)), requires_grad=True)
    before = xa.detach().numpy().copy()
    with ampgrad.no_grad():
        out, g = AF.vjp(pow_reducer, xa)
        assert not ampgrad.is_grad_enabled()
    assert xa.grad is None and not g.requires_grad
    np.testing.assert_array_equal(xa.detach().numpy(), before)
