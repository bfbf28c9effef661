"""gradcheck / gradgradcheck: pass on correct ops and custom Functions (float64), catch wrong backwards
(naming the input and output), mirror torch's results, errors and warnings on the same cases."""
import sys
import warnings

import numpy as np
import pytest

import ampgrad
from ampgrad.autograd import Function, GradcheckError, gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)


def dbl(*shape, lo=None, hi=None):
    x = RNG.standard_normal(shape) if lo is None else RNG.uniform(lo, hi, shape)
    return ampgrad.tensor(x, dtype=ampgrad.float64, requires_grad=True)


def to_torch(x):
    if isinstance(x, ampgrad.Tensor):
        return torch.tensor(x.detach().numpy(), requires_grad=x.requires_grad)
    return x


# ---------------------------------------------------------------- custom Functions, right and wrong
def make_functions(lib):
    """The same custom Functions for ampgrad and torch, so that both checkers see the same bugs."""

    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, i):
            result = i.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            (result,) = ctx.saved_tensors
            return grad_output * result

    class BadExp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, i):
            result = i.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            (result,) = ctx.saved_tensors
            return 2 * grad_output * result  # wrong: twice the derivative

    class MulAdd(lib.autograd.Function):
        """(a * b, a + b) with a correct backward; `wrong` breaks d(out0)/db or d(out1)/da."""
        wrong = None

        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b, a + b

        @staticmethod
        def backward(ctx, g0, g1):
            a, b = ctx.saved_tensors
            ga = g0 * b + g1
            gb = g0 * a + g1
            if MulAdd.wrong == "input1":
                gb = g0 * a * 1.5 + g1
            elif MulAdd.wrong == "output1":
                ga = g0 * b - g1
            return ga, gb

    class NotMulByGrad(lib.autograd.Function):
        """Right Jacobian, but a zero grad_output still yields a nonzero gradient."""

        @staticmethod
        def forward(ctx, x):
            return x * 3

        @staticmethod
        def backward(ctx, g):
            return g * 3 + (g.abs().sum() == 0).to(g.dtype)

    class Cube(lib.autograd.Function):
        """x**3 whose backward is differentiable (double backward correct) unless `detach`."""
        detach = False

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            if Cube.detach:
                x = x.detach()  # wrong second derivative: treats 3x^2 as a constant
            return g * 3 * x * x

    return Exp, BadExp, MulAdd, NotMulByGrad, Cube


A_FUNCS = make_functions(ampgrad)
T_FUNCS = make_functions(torch)


# ---------------------------------------------------------------- correct ops pass
OPS = [
    ("sin", lambda x: x.sin(), [(3, 2)]),
    ("exp_tanh", lambda x: x.exp() * x.tanh(), [(4,)]),
    ("matmul", lambda a, b: a @ b, [(2, 3), (3, 2)]),
    ("sum_dim", lambda x: x.sum(dim=1), [(3, 4)]),
    ("softmax", lambda x: ampgrad.softmax(x, dim=-1), [(2, 3)]),
    ("div_pow", lambda a, b: a / (b * b + 1) + a.pow(2), [(3,), (3,)]),
    ("stack_select", lambda a, b: ampgrad.stack([a, b], 0)[1] * a, [(3,), (3,)]),
    ("two_outputs", lambda a: (a.cos(), a.sum()), [(3,)]),
    ("scalar_input", lambda a: a * a.exp(), [()]),
    ("transposed_input", lambda a: a.t().sin(), [(2, 3)]),
]


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("name,func,shapes", OPS, ids=[o[0] for o in OPS])
def test_gradcheck_passes_on_ops(name, func, shapes, fast_mode):
    inputs = tuple(dbl(*s) for s in shapes)
    if name == "transposed_input":
        inputs = (dbl(3, 2).detach().t().requires_grad_(),)  # a non-contiguous leaf
    assert gradcheck(func, inputs, fast_mode=fast_mode)


def test_gradcheck_custom_function_passes():
    Exp, _, MulAdd, _, Cube = A_FUNCS
    MulAdd.wrong = None
    assert gradcheck(Exp.apply, (dbl(4),))
    assert gradcheck(Exp.apply, dbl(2, 2))  # a single Tensor for inputs
    assert gradcheck(MulAdd.apply, (dbl(3), dbl(3)))
    assert gradcheck(Cube.apply, (dbl(3),), fast_mode=True)


def test_gradcheck_non_tensor_and_non_differentiable_arguments():
    x, c = dbl(3), ampgrad.tensor(RNG.standard_normal(3), dtype=ampgrad.float64)
    assert gradcheck(lambda a, k, b: a * k + b.exp() * a, (x, 3, c))
    # an output that does not require grad is skipped
    assert gradcheck(lambda a: (a * 2, a.detach() + 1), (x,))
    # an output that aliases the input
    assert gradcheck(lambda a: a, (x,))


def test_gradcheck_leaves_inputs_untouched():
    x = dbl(3, 2)
    before, version = x.detach().numpy().copy(), x._version
    assert gradcheck(lambda a: a.sin() * a, (x,))
    np.testing.assert_array_equal(x.detach().numpy(), before)
    assert x._version == version and x.grad is None


# ---------------------------------------------------------------- wrong backwards are caught
@pytest.mark.parametrize("fast_mode", [False, True])
def test_wrong_backward_returns_false_and_raises(fast_mode):
    _, BadExp, *_ = A_FUNCS
    x = dbl(3)
    assert gradcheck(BadExp.apply, (x,), raise_exception=False, fast_mode=fast_mode) is False
    with pytest.raises(GradcheckError) as e:
        gradcheck(BadExp.apply, (x,), fast_mode=fast_mode)
    msg = str(e.value)
    assert msg.startswith("Jacobian mismatch for output 0 with respect to input 0,\nnumerical:")
    assert "\nanalytical:" in msg
    assert isinstance(e.value, RuntimeError)
    if not fast_mode:
        # both Jacobians are printed in full: analytical = 2 * numerical on the diagonal
        expected = np.exp(x.detach().numpy())
        a_part = msg.split("analytical:")[1]
        assert f"{2 * expected[0]:.4f}" in a_part
        assert f"{expected[0]:.4f}" in msg.split("analytical:")[0]
    else:
        assert "Below, we recompute numerical and analytical jacobians in slow mode" in msg


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("wrong,out_idx,in_idx", [("input1", 0, 1), ("output1", 1, 0)])
def test_error_names_input_and_output(wrong, out_idx, in_idx, fast_mode):
    _, _, MulAdd, _, _ = A_FUNCS
    MulAdd.wrong = wrong
    try:
        with pytest.raises(GradcheckError, match=f"^Jacobian mismatch for output {out_idx} with respect to "
                                                 f"input {in_idx},"):
            gradcheck(MulAdd.apply, (dbl(3), dbl(3)), fast_mode=fast_mode)
    finally:
        MulAdd.wrong = None


def test_input_index_counts_differentiable_inputs_only():
    # As torch: "input k" is the k-th input that requires grad.
    _, BadExp, *_ = A_FUNCS
    c = ampgrad.tensor([1.0, 2.0], dtype=ampgrad.float64)
    with pytest.raises(GradcheckError, match="output 0 with respect to input 1,"):
        gradcheck(lambda k, a, b: a * k + BadExp.apply(b), (c, dbl(2), dbl(2)))


def test_backward_not_multiplied_by_grad_output():
    _, _, _, NotMulByGrad, _ = A_FUNCS
    with pytest.raises(GradcheckError, match="backward not multiplied by grad_output"):
        gradcheck(NotMulByGrad.apply, (dbl(3),))


def test_nondeterministic_backward_and_nondet_tol():
    calls = {"n": 0}

    class Noisy(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            calls["n"] += 1
            return g * (2 + 1e-9 * calls["n"])

    with pytest.raises(GradcheckError, match="Backward is not reentrant"):
        gradcheck(Noisy.apply, (dbl(3),))
    assert gradcheck(Noisy.apply, (dbl(3),), nondet_tol=1e-6)


def test_no_differentiable_outputs():
    x = dbl(3)
    with pytest.raises(GradcheckError, match="Numerical gradient for function expected to be zero"):
        gradcheck(lambda a: a.detach() * a.detach(), (x,))
    assert gradcheck(lambda a: a.detach() * 0 + 1, (x,))


# ---------------------------------------------------------------- same verdicts as torch
def test_same_verdicts_as_torch():
    a_exp, a_bad, a_muladd, a_notmul, _ = A_FUNCS
    t_exp, t_bad, t_muladd, t_notmul, _ = T_FUNCS
    x, y = dbl(3), dbl(3)
    cases = [(a_exp.apply, t_exp.apply, (x,)), (a_bad.apply, t_bad.apply, (x,)),
             (a_muladd.apply, t_muladd.apply, (x, y)), (a_notmul.apply, t_notmul.apply, (x,)),
             (lambda a: a.tanh() @ a, lambda a: a.tanh() @ a, (x,))]
    for fa, ft, inputs in cases:
        for fast in (False, True):
            ra = gradcheck(fa, inputs, raise_exception=False, fast_mode=fast)
            rt = torch.autograd.gradcheck(ft, tuple(map(to_torch, inputs)), raise_exception=False, fast_mode=fast)
            assert ra == rt
    # identical message head for the wrong backward
    with pytest.raises(GradcheckError) as ea:
        gradcheck(a_bad.apply, (x,))
    from torch.autograd.gradcheck import GradcheckError as TorchGradcheckError
    with pytest.raises(TorchGradcheckError) as et:
        torch.autograd.gradcheck(t_bad.apply, (to_torch(x),))
    assert str(ea.value).split("numerical:")[0] == str(et.value).split("numerical:")[0]


# ---------------------------------------------------------------- input checks, warnings, flags
def test_float32_input_warns_like_torch():
    x = ampgrad.tensor(RNG.standard_normal(3), dtype=ampgrad.float32, requires_grad=True)
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double precision floating point"):
        gradcheck(lambda a: a * 2, (x,), raise_exception=False)


def test_input_errors_match_torch():
    x = ampgrad.tensor(RNG.standard_normal(3), dtype=ampgrad.float64)
    with pytest.raises(ValueError, match="gradcheck expects at least one input tensor to require gradient"):
        gradcheck(lambda a: a * 2, (x,))
    e = ampgrad.tensor([1.0], dtype=ampgrad.float64).expand(3).detach().requires_grad_()
    with pytest.raises(RuntimeError, match="The 0th input has a dimension with stride 0"):
        gradcheck(lambda a: a * 2, (e,))


def test_flag_errors():
    x = dbl(3)
    with pytest.raises(AssertionError, match="at least one of check_forward_ad or check_backward_ad"):
        gradcheck(lambda a: a, (x,), check_backward_ad=False)
    with pytest.raises(AssertionError, match="check_batched_forward_grad=True requires check_forward_ad"):
        gradcheck(lambda a: a, (x,), check_batched_forward_grad=True)
    with pytest.raises(NotImplementedError, match="batched gradients .* not yet supported"):
        gradcheck(lambda a: a, (x,), check_batched_grad=True)
    with pytest.raises(NotImplementedError, match="batched gradients .* not yet supported"):
        gradcheck(lambda a: a, (x,), check_forward_ad=True, check_batched_forward_grad=True)
    with pytest.raises(NotImplementedError, match="batched gradients .* not yet supported"):
        gradgradcheck(lambda a: a, (x,), check_batched_grad=True)
    with pytest.raises(AssertionError, match="check_undefined_grad=True requires check_rev_over_rev"):
        gradgradcheck(lambda a: a, (x,), check_rev_over_rev=False, check_fwd_over_rev=True)
    # a NotImplementedError is not a failed check: raise_exception=False does not swallow it
    with pytest.raises(NotImplementedError):
        gradcheck(lambda a: a, (x,), check_batched_grad=True, raise_exception=False)


def test_exports():
    from ampgrad.autograd.gradcheck import GradcheckError as G, gradcheck as g, gradgradcheck as gg
    assert G is GradcheckError and g is gradcheck and gg is gradgradcheck
    # as in torch, the attribute is the function; the module stays reachable through sys.modules
    assert ampgrad.autograd.gradcheck is gradcheck and issubclass(GradcheckError, RuntimeError)
    assert sys.modules["ampgrad.autograd.gradcheck"].GradcheckError is GradcheckError


def test_legacy_jacobian_helpers_match_torch():
    gc, tgc = sys.modules["ampgrad.autograd.gradcheck"], sys.modules["torch.autograd.gradcheck"]
    x = dbl(3)
    xt = to_torch(x)
    with pytest.warns(FutureWarning):
        (na,) = gc.get_numerical_jacobian(lambda t: t[0].exp(), (x,), eps=1e-6)
    with pytest.warns(FutureWarning):
        (nt,) = tgc.get_numerical_jacobian(lambda t: t[0].exp(), (xt,), eps=1e-6)
    np.testing.assert_allclose(na.numpy(), nt.numpy(), rtol=1e-8)
    with pytest.warns(FutureWarning):
        (ja,), reentrant, sizes_ok, types_ok = gc.get_analytical_jacobian((x,), x.exp())
    assert reentrant and sizes_ok and types_ok
    np.testing.assert_allclose(ja.numpy(), np.diag(np.exp(x.detach().numpy())), rtol=1e-12)
    (wa,) = gc.get_numerical_jacobian_wrt_specific_input(lambda a: a.exp(), 0, (x,), (x.exp(),), 1e-6)
    np.testing.assert_allclose(wa.numpy(), nt.numpy(), rtol=1e-8)


# ---------------------------------------------------------------- gradgradcheck
GG_OPS = [
    ("sin_mul", lambda x: x.sin() * x, [(3,)]),
    ("tanh_matmul", lambda a, b: (a @ b).tanh(), [(2, 3), (3, 2)]),
    ("exp_div", lambda a, b: a.exp() / (b * b + 1), [(3,), (3,)]),
    ("softmax", lambda x: ampgrad.softmax(x, dim=-1), [(2, 3)]),
    ("sum_sq", lambda x: (x * x).sum(), [(2, 2)]),
]


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("name,func,shapes", GG_OPS, ids=[o[0] for o in GG_OPS])
def test_gradgradcheck_passes_on_ops(name, func, shapes, fast_mode):
    assert gradgradcheck(func, tuple(dbl(*s) for s in shapes), fast_mode=fast_mode)


def test_gradgradcheck_options():
    a, b = dbl(2, 3), dbl(3, 2)
    assert gradgradcheck(lambda a, b: (a @ b).sin(), (a, b), gen_non_contig_grad_outputs=True)
    g = ampgrad.tensor(RNG.standard_normal((2, 2)), dtype=ampgrad.float64, requires_grad=True)
    assert gradgradcheck(lambda a, b: (a @ b).sin(), (a, b), grad_outputs=g)
    # a grad_output that does not require grad is held constant
    assert gradgradcheck(lambda a, b: (a @ b).sin(), (a, b), grad_outputs=g.detach())


def test_gradgradcheck_custom_function():
    _, _, _, _, Cube = A_FUNCS
    Cube.detach = False
    assert gradgradcheck(Cube.apply, (dbl(3),))
    Cube.detach = True
    try:
        assert gradcheck(Cube.apply, (dbl(3),))  # first derivative still right
        assert gradgradcheck(Cube.apply, (dbl(3),), raise_exception=False) is False
        with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0,"):
            gradgradcheck(Cube.apply, (dbl(3),))
        _, _, _, _, TCube = T_FUNCS
        TCube.detach = True
        assert torch.autograd.gradgradcheck(TCube.apply, (to_torch(dbl(3)),), raise_exception=False) is False
    finally:
        Cube.detach = False
        T_FUNCS[4].detach = False


def test_gradgradcheck_matches_torch_verdicts():
    for func in [lambda x: x.sin() * x, lambda x: x * 2, lambda x: (x * x).sum()]:
        x = dbl(3)
        assert gradgradcheck(func, (x,)) == torch.autograd.gradgradcheck(func, (to_torch(x),))


def test_gradgradcheck_no_warnings_with_double_inputs():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert gradgradcheck(lambda x: x.exp(), (dbl(2),))
