"""The autograd core against torch (the reference): leaves and grad_fn, detach/data, .grad, the
backward/grad entry points, retain_graph, version counters, in-place ops and views, higher-order
gradients, the AccumulateGrad layout contract, hooks, deep graphs and error handling. Ported from
the semantics of PyTorch's test/test_autograd.py."""
import gc
import sys
import threading
import time
import zlib

import numpy as np
import pytest

import ampgrad as ag

F64 = np.float64
# both libraries warn (once) that backward(create_graph=True) makes a param <-> grad cycle
pytestmark = pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")


# ---------------------------------------------------------------- helpers
def to_np(t):
    return t.detach().numpy()


def dtype_name(dt):
    return str(dt).split(".")[-1]


def assert_close(a, b, rtol=1e-7, atol=1e-10):
    """a: ampgrad tensor (or None), b: torch tensor (or None)."""
    if b is None:
        assert a is None, f"expected None, got {a}"
        return
    assert a is not None, "expected a tensor, got None"
    assert tuple(a.shape) == tuple(b.shape), (tuple(a.shape), tuple(b.shape))
    assert dtype_name(a.dtype) == dtype_name(b.dtype), (a.dtype, b.dtype)
    np.testing.assert_allclose(to_np(a), to_np(b), rtol=rtol, atol=atol)


def leaves(lib, arrays, dtype=F64, requires_grad=True):
    return [lib.tensor(np.asarray(a, dtype=dtype), requires_grad=requires_grad) for a in arrays]


def run_both(torch, fn, *arrays, dtype=F64, rtol=1e-7, atol=1e-10):
    """fn(lib, *leaves) -> a scalar loss (or None when fn runs backward itself). Runs fn on ampgrad
    and torch leaves built from the same arrays, calls backward on the loss, compares outputs and
    the leaves' .grad. Returns (ampgrad leaves, torch leaves)."""
    res = []
    for lib in (ag, torch):
        xs = leaves(lib, arrays, dtype)
        out = fn(lib, *xs)
        if out is not None:
            out.backward()
        res.append((xs, out))
    (xa, oa), (xt, ot) = res
    if ot is not None:
        assert_close(oa, ot, rtol, atol)
    for a, t in zip(xa, xt):
        assert_close(a.grad, t.grad, rtol, atol)
    return xa, xt


def norm_msg(s):
    return s.replace("ampgrad.", "torch.")


def same_error(torch, fn, exact=True):
    """fn(lib) raises in torch; ampgrad raises the same exception type with the same message."""
    with pytest.raises(Exception) as et:
        fn(torch)
    with pytest.raises(Exception) as ea:
        fn(ag)
    assert type(ea.value).__name__ == type(et.value).__name__, (ea.value, et.value)
    if exact:
        assert norm_msg(str(ea.value)) == norm_msg(str(et.value))
    return ea.value, et.value


RNG = np.random.default_rng(0)


def rand(*shape):
    return RNG.standard_normal(shape)


# ---------------------------------------------------------------- requires_grad, leaves, grad_fn
class TestRequiresGrad:
    @pytest.mark.parametrize("dt", ["int64", "int32", "int8", "uint8", "bool", "int16"])
    def test_requires_grad_integral_raises(self, torch, dt):
        same_error(torch, lambda lib: lib.zeros(3, dtype=getattr(lib, dt)).requires_grad_())
        same_error(torch, lambda lib: lib.zeros(3, dtype=getattr(lib, dt), requires_grad=True))

        def setattr_(lib):
            t = lib.zeros(3, dtype=getattr(lib, dt))
            t.requires_grad = True
        same_error(torch, setattr_)
        t = ag.zeros(3, dtype=getattr(ag, dt))
        t.requires_grad_(False)  # turning it off is always fine
        t.requires_grad = False
        assert not t.requires_grad

    @pytest.mark.parametrize("dt", ["float16", "bfloat16", "float32", "float64"])
    def test_requires_grad_floating(self, dt):
        t = ag.zeros(2, dtype=getattr(ag, dt))
        assert t.requires_grad_() is t
        assert t.requires_grad and t.is_leaf and t.grad_fn is None
        t.requires_grad_(False)
        assert not t.requires_grad

    def test_requires_grad_propagation(self, torch):
        x = ag.ones(3, requires_grad=True)
        c = ag.ones(3)
        assert not c.requires_grad and c.is_leaf
        y = x * c
        assert y.requires_grad and not y.is_leaf
        z = c * 2
        assert not z.requires_grad and z.is_leaf and z.grad_fn is None
        # integral results never require grad
        i = x.long()
        assert not i.requires_grad and i.grad_fn is None
        b = x > 0
        assert not b.requires_grad and b.grad_fn is None
        ti = torch.ones(3, requires_grad=True).long()
        assert ti.requires_grad == i.requires_grad

    def test_non_leaf_requires_grad_false_raises(self, torch):
        def f(lib):
            y = lib.ones(3, requires_grad=True) * 2
            y.requires_grad = False
        same_error(torch, f)

        def g(lib):
            y = lib.ones(3, requires_grad=True) * 2
            y.requires_grad_(False)
        same_error(torch, g)
        y = ag.ones(3, requires_grad=True) * 2
        y.requires_grad_(True)  # a no-op on a non-leaf
        assert y.requires_grad

    def test_grad_fn_names(self, torch):
        def names(lib):
            x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
            m = lib.ones(2, 2, requires_grad=True)
            return [
                x * 2, x + 1, x - 1, x / 2, -x, x.exp(), x.tanh(), x.sigmoid(), x.relu(), x.sum(), x.mean(),
                x.pow(2), x ** x, x.clone(), x.double(), x[0], x[:2], x.view(3), x.reshape(3, 1), x.unsqueeze(0),
                m.t(), x.expand(2, 3), lib.addmm(m, m, m), m @ m, m.softmax(0),
            ]
        for a, t in zip(names(ag), names(torch)):
            assert a.grad_fn.name() == t.grad_fn.name()

    def test_next_functions_accumulate_grad(self, torch):
        x = ag.ones(3, requires_grad=True)
        c = ag.ones(3)
        y = x * c
        nf = y.grad_fn.next_functions
        assert len(nf) == 2
        acc, nr = nf[0]
        assert nr == 0 and nf[1][0] is None
        assert type(acc).__name__ == "AccumulateGrad"
        assert acc.variable is x
        # the accumulator is one object per leaf
        z = x + 1
        assert z.grad_fn.next_functions[0][0] is acc or z.grad_fn.next_functions[0][0].variable is x
        w = (y * 2).grad_fn
        assert w.next_functions[0][0].name() == "MulBackward0"
        tx = torch.ones(3, requires_grad=True)
        tn = (tx * torch.ones(3)).grad_fn.next_functions
        assert type(tn[0][0]).__name__ == type(acc).__name__ and tn[1][0] is None

    def test_grad_fn_type_name(self, torch):
        x = ag.ones(3, requires_grad=True)
        assert type((x * 2).grad_fn).__name__ == type((torch.ones(3, requires_grad=True) * 2).grad_fn).__name__

    def test_view_of_leaf(self, torch):
        for lib in (ag, torch):
            x = lib.ones(3, requires_grad=True)
            v = x[0]
            assert v.requires_grad and not v.is_leaf and v.grad_fn.name() == "SelectBackward0"
            assert v._is_view() and v._base is x
            assert not x.detach()._is_view()

    def test_is_leaf(self):
        x = ag.ones(3, requires_grad=True)
        assert x.is_leaf
        assert ag.ones(3).is_leaf
        assert not (x * 2).is_leaf
        assert (x * 2).detach().is_leaf
        with ag.no_grad():
            assert (x * 2).is_leaf


# ---------------------------------------------------------------- detach / data
class TestDetach:
    def test_detach_shares_storage_and_version(self):
        x = ag.ones(3, requires_grad=True)
        y = x * 2
        d = y.detach()
        assert not d.requires_grad and d.is_leaf and d.grad_fn is None
        assert d.data_ptr() == y.data_ptr()
        v = y._version
        d.add_(1)
        assert y._version == v + 1  # detach shares the version counter
        np.testing.assert_allclose(to_np(y), [3, 3, 3])

    def test_detach_inplace_modification_detected(self, torch):
        def f(lib):
            x = lib.ones(3, requires_grad=True)
            y = x.exp()
            y.detach().zero_()
            y.sum().backward()
        same_error(torch, f)

    def test_data_not_version_tracked(self, torch):
        for lib in (ag, torch):
            x = lib.ones(3, requires_grad=True)
            y = x.exp()
            v = y._version
            y.data.add_(1)  # not recorded: no error in backward
            assert y._version == v
            y.sum().backward()
            np.testing.assert_allclose(to_np(x.grad), np.full(3, np.e + 1))
            d = x.data
            assert not d.requires_grad and d.is_leaf and d.data_ptr() == x.data_ptr()

    def test_data_setter(self, torch):
        for lib in (ag, torch):
            x = lib.ones(3, requires_grad=True)
            x.data = lib.zeros(4)
            assert tuple(x.shape) == (4,) and x.requires_grad and x.is_leaf
            (x * 2).sum().backward()
            np.testing.assert_allclose(to_np(x.grad), [2, 2, 2, 2])

    def test_detach_(self, torch):
        for lib in (ag, torch):
            x = lib.ones(3, requires_grad=True)
            y = x * 2
            r = y.detach_()
            assert r is y
            assert not y.requires_grad and y.is_leaf and y.grad_fn is None

        def view_detach(lib):
            x = lib.ones(3, requires_grad=True) * 1
            x[:2].detach_()
        e, _ = same_error(torch, view_detach, exact=False)
        assert "Can't detach views in-place" in str(e)


# ---------------------------------------------------------------- .grad setter
class TestGradSetter:
    def test_wrong_size(self, torch):
        def f(lib):
            x = lib.ones(3, requires_grad=True)
            x.grad = lib.ones(2)
        e, t = same_error(torch, f, exact=False)
        assert "size" in str(e)

    def test_wrong_dtype(self, torch):
        def f(lib):
            x = lib.ones(3, requires_grad=True)
            x.grad = lib.ones(3, dtype=lib.float64)
        same_error(torch, f, exact=False)

    def test_wrong_type(self, torch):
        def f(lib):
            x = lib.ones(3, requires_grad=True)
            x.grad = 3
        same_error(torch, f)

    def test_set_and_accumulate(self, torch):
        for lib in (ag, torch):
            x = lib.ones(3, requires_grad=True)
            g = lib.full((3,), 5.0)
            x.grad = g
            assert x.grad is g
            (x * 2).sum().backward()
            np.testing.assert_allclose(to_np(x.grad), [7, 7, 7])
            assert x.grad is g  # accumulated in place into the assigned tensor
            x.grad = None
            assert x.grad is None


# ---------------------------------------------------------------- backward / grad
class TestBackwardAPI:
    def test_simple_backward(self, torch):
        run_both(torch, lambda lib, x, y: (x * y + x.exp()).sum(), rand(3), rand(3))

    def test_backward_with_gradient(self, torch):
        g = rand(2, 3)

        def f(lib, x):
            y = x * x
            y.backward(lib.tensor(g))
        run_both(torch, f, rand(2, 3))

    def test_nonscalar_without_gradient(self, torch):
        same_error(torch, lambda lib: (lib.ones(3, requires_grad=True) * 2).backward())
        same_error(torch, lambda lib: lib.autograd.grad(lib.ones(3, requires_grad=True) * 2,
                                                        lib.ones(1, requires_grad=True)))

    def test_gradient_shape_mismatch(self, torch):
        def f(lib):
            x = lib.ones(3, requires_grad=True)
            (x * 2).backward(lib.ones(2))
        same_error(torch, f)

        def g(lib):
            x = lib.ones(3, requires_grad=True)
            (x * 2).sum().backward(lib.ones(3))
        same_error(torch, g)

    def test_backward_no_grad_tensor(self, torch):
        same_error(torch, lambda lib: (lib.ones(3) * 2).sum().backward())
        same_error(torch, lambda lib: lib.autograd.grad((lib.ones(3) * 2).sum(), lib.ones(3, requires_grad=True)))

    def test_backward_inputs_empty(self, torch):
        same_error(torch, lambda lib: (lib.ones(3, requires_grad=True) * 2).sum().backward(inputs=[]))

    def test_grad_inputs_empty(self, torch):
        same_error(torch, lambda lib: lib.autograd.grad((lib.ones(3, requires_grad=True) * 2).sum(), []))

    def test_grad_input_not_requiring_grad(self, torch):
        same_error(torch, lambda lib: lib.autograd.grad((lib.ones(3, requires_grad=True) * 2).sum(), lib.ones(3)))

    def test_accumulation_across_calls(self, torch):
        def f(lib, x):
            (x * x).sum().backward()
            (x * 3).sum().backward()
        run_both(torch, f, rand(4))

    def test_tensor_used_twice(self, torch):
        run_both(torch, lambda lib, x: (x * x + x * 2 + x.exp() * x).sum(), rand(4))

    def test_diamond(self, torch):
        def f(lib, x):
            a = x * 2
            b = a.exp()
            c = a.tanh()
            return (b * c + a).sum()
        run_both(torch, f, rand(5))

    @pytest.mark.parametrize("sa,sb", [((3, 4), (4,)), ((3, 4), (1, 4)), ((3, 1), (1, 4)), ((2, 3, 4), (3, 1)),
                                       ((3, 4), ()), ((), (3,))])
    def test_broadcast_reduced(self, torch, sa, sb):
        for op in (lambda a, b: a * b, lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a / b,
                   lambda a, b: a ** 2 + b * a):
            xa, _ = run_both(torch, lambda lib, a, b: (op(a, b) * 1.5).sum(), rand(*sa) + 3, rand(*sb) + 3)
            assert tuple(xa[0].grad.shape) == sa and tuple(xa[1].grad.shape) == sb

    def test_dtype_cast(self, torch):
        for lib in (ag, torch):
            x = lib.tensor([1.0, 2.0], requires_grad=True)
            y = (x.double() * lib.tensor([3.0, 4.0], dtype=lib.float64)).sum()
            assert dtype_name(y.dtype) == "float64"
            y.backward()
            assert dtype_name(x.grad.dtype) == "float32"
            np.testing.assert_allclose(to_np(x.grad), [3, 4])

    def test_mixed_dtype_promotion_grad(self, torch):
        def f(lib):
            a = lib.tensor([1.0, 2.0], requires_grad=True)
            b = lib.tensor([3.0, 4.0], dtype=lib.float64, requires_grad=True)
            (a * b).sum().backward()
            return a.grad, b.grad
        for ga, gt in zip(f(ag), f(torch)):
            assert_close(ga, gt)

    def test_autograd_backward_function(self, torch):
        g1, g2 = rand(3), rand(3)

        def f(lib, x, y):
            a = x * y
            b = x.exp()
            lib.autograd.backward([a, b], [lib.tensor(g1), lib.tensor(g2)])
        run_both(torch, f, rand(3), rand(3))

        def h(lib, x):
            lib.autograd.backward((x * x).sum())
        run_both(torch, h, rand(3))

        def k(lib, x):  # None seed for a scalar output
            lib.autograd.backward([(x * x).sum(), (x * 3).sum()], [None, None])
        run_both(torch, k, rand(3))

    def test_backward_inputs(self, torch):
        def f(lib, x, y):
            z = (x * y).sum()
            z.backward(inputs=[x])
            assert y.grad is None
        run_both(torch, f, rand(3), rand(3))

        def g(lib, x, y):
            w = x * 2  # a non-leaf input: accumulates into w.grad
            z = (w * y).sum()
            z.backward(inputs=[w, y])
            assert x.grad is None
            return None
        xa, xt = run_both(torch, g, rand(3), rand(3))

        for lib in (ag, torch):
            x = lib.tensor([1.0, 2.0], requires_grad=True)
            w = x * 2
            (w * w).sum().backward(inputs=w)
            np.testing.assert_allclose(to_np(w.grad), [4, 8])
            assert x.grad is None

    def test_grad_basic(self, torch):
        res = []
        for lib in (ag, torch):
            x, y = leaves(lib, [[1.0, 2.0], [3.0, 4.0]])
            z = (x * y * y).sum()
            gx, gy = lib.autograd.grad(z, [x, y])
            assert x.grad is None and y.grad is None
            assert not gx.requires_grad
            (g,) = lib.autograd.grad((x * x).sum(), x)
            res.append((gx, gy, g))
        for a, t in zip(*res):
            assert_close(a, t)

    def test_grad_returns_tuple(self, torch):
        x = ag.ones(2, requires_grad=True)
        r = ag.autograd.grad((x * 2).sum(), x)
        assert isinstance(r, tuple) and len(r) == 1

    def test_grad_grad_outputs(self, torch):
        g = rand(2, 2)
        res = []
        for lib in (ag, torch):
            (x,) = leaves(lib, [[[1.0, 2.0], [3.0, 4.0]]])
            y = x.exp() * x
            res.append(lib.autograd.grad(y, x, grad_outputs=lib.tensor(g), retain_graph=True)[0])
            res.append(lib.autograd.grad([y * 1, (y * 2).sum()], x, grad_outputs=[lib.tensor(g), None])[0])
        assert_close(res[0], res[2])
        assert_close(res[1], res[3])

    def test_grad_unused(self, torch):
        def f(lib):
            x, y = leaves(lib, [[1.0], [2.0]])
            lib.autograd.grad((x * 2).sum(), [x, y])
        e, t = same_error(torch, f, exact=False)
        assert "allow_unused=True" in str(e)
        for lib in (ag, torch):
            x, y = leaves(lib, [[1.0], [2.0]])
            gx, gy = lib.autograd.grad((x * 2).sum(), [x, y], allow_unused=True)
            assert gy is None
            np.testing.assert_allclose(to_np(gx), [2])
            gx, gy = lib.autograd.grad((x * 2).sum(), [x, y], materialize_grads=True)
            np.testing.assert_allclose(to_np(gy), [0])
            assert tuple(gy.shape) == (1,)

    def test_grad_unused_error_message(self, torch):
        def f(lib):
            x, y = leaves(lib, [[1.0], [2.0]])
            lib.autograd.grad((x * 2).sum(), [x, y])
        same_error(torch, f)

    def test_materialize_with_allow_unused_false(self, torch):
        def f(lib):
            x, y = leaves(lib, [[1.0], [2.0]])
            lib.autograd.grad((x * 2).sum(), [x, y], allow_unused=False, materialize_grads=True)
        same_error(torch, f)

    def test_grad_nonleaf_input(self, torch):
        res = []
        for lib in (ag, torch):
            x = lib.tensor([1.0, 2.0], requires_grad=True)
            w = x * 3
            z = (w * w).sum()
            res.append(lib.autograd.grad(z, w)[0])
            assert x.grad is None
        assert_close(*res)

    def test_grad_same_input_twice(self, torch):
        res = []
        for lib in (ag, torch):
            x = lib.tensor([1.0, 2.0], requires_grad=True)
            res.append(lib.autograd.grad((x * x).sum(), [x, x]))
        for a, t in zip(*res):
            assert_close(a, t)

    def test_grad_does_not_touch_other_leaves(self, torch):
        x = ag.tensor([1.0, 2.0], requires_grad=True)
        y = ag.tensor([1.0, 2.0], requires_grad=True)
        ag.autograd.grad((x * y).sum(), [x])
        assert x.grad is None and y.grad is None

    def test_grad_input_is_root(self, torch):
        res = []
        for lib in (ag, torch):
            x = lib.tensor([1.0, 2.0], requires_grad=True)
            y = x * 2
            res.append(lib.autograd.grad(y, y, lib.ones(2))[0])
            res.append(lib.autograd.grad(x, x, lib.ones(2))[0])
        assert_close(res[0], res[2])
        assert_close(res[1], res[3])

    def test_multiple_roots_shared_graph(self, torch):
        def f(lib, x):
            a = x.exp()
            lib.autograd.backward([a.sum(), (a * a).sum()])
        run_both(torch, f, rand(3))

    def test_multiple_outputs_node(self, torch):
        def f(lib, x):
            a, b = x.split(2)
            return (a * 2).sum() + (b.exp()).sum()
        run_both(torch, f, rand(4))

        def g(lib, x):
            v, i = x.max(0)
            return (v * 3).sum()
        run_both(torch, g, rand(3, 4))

    def test_materialize_grads_create_graph(self, torch):
        for lib in (ag, torch):
            x, z = leaves(lib, [[1.0, 2.0], [3.0, 4.0]])
            gx, gz = lib.autograd.grad((x * x).sum(), [x, z], create_graph=True, materialize_grads=True)
            assert gx.requires_grad and gz.requires_grad and gz.is_leaf
            gx, gz = lib.autograd.grad((x * x).sum(), [x, z], materialize_grads=True)
            assert not gz.requires_grad

    def test_grad_dict_inputs(self, torch):
        res = []
        for lib in (ag, torch):
            x, z = leaves(lib, [[1.0, 2.0], [3.0, 4.0]])
            r = lib.autograd.grad((x * z).sum(), {"x": x, "z": z})
            assert isinstance(r, dict) and list(r) == ["x", "z"]
            res.append(r)
        assert_close(res[0]["x"], res[1]["x"])
        assert_close(res[0]["z"], res[1]["z"])

    def test_grad_outputs_cast_and_none(self, torch):
        res = []
        for lib in (ag, torch):
            (x,) = leaves(lib, [[1.0, 2.0]], dtype=np.float32)
            res.append(lib.autograd.grad(x * 2, x, lib.tensor([1, 2]), retain_graph=True)[0])
            res.append(lib.autograd.grad(x * 2, x, lib.tensor([1.0, 2.0], dtype=lib.float64))[0])
            res.append(lib.autograd.grad([(x * 3).sum()], x, [None])[0])
            res.append(lib.autograd.grad((x[:1] * 3), x)[0])  # one element: implicit seed
        for a, t in zip(res[:4], res[4:]):
            assert_close(a, t)

    def test_backward_inputs_unreached(self, torch):
        for lib in (ag, torch):
            x, z = leaves(lib, [[1.0, 2.0], [3.0, 4.0]])
            (x * 2).sum().backward(inputs=[z])
            assert x.grad is None and z.grad is None

    def test_backward_inputs_nonleaf_accumulates(self, torch):
        res = []
        for lib in (ag, torch):
            (x,) = leaves(lib, [[1.0, 2.0]])
            y = x * 2
            (y * y).sum().backward(inputs=[y], retain_graph=True)
            (y * y).sum().backward(inputs=[y])
            assert x.grad is None
            res.append(y.grad)
        assert_close(*res)

    def test_backward_inside_no_grad(self, torch):
        res = []
        for lib in (ag, torch):
            (x,) = leaves(lib, [[1.0, 2.0]])
            y = (x * x * x).sum()
            with lib.no_grad():
                y.backward(create_graph=True)
                assert not lib.is_grad_enabled()
            assert x.grad.requires_grad
            res.append(x.grad)
        assert_close(*res)

    def test_grad_outputs_length_mismatch(self, torch):
        same_error(torch, lambda lib: lib.autograd.grad(
            [lib.ones(3, requires_grad=True).sum(), lib.ones(2, requires_grad=True).sum()],
            lib.ones(1, requires_grad=True), grad_outputs=[lib.tensor(1.0)]))

        def f(lib):
            x = lib.ones(3, requires_grad=True)
            lib.autograd.backward([x.sum(), (x * 2).sum()], [lib.tensor(1.0)])
        same_error(torch, f)

    @pytest.mark.parametrize("call", [
        lambda lib, x: lib.autograd.grad((x * 2).sum(), 3),
        lambda lib, x: lib.autograd.grad((x * 2).sum(), [x, "a"]),
        lambda lib, x: lib.autograd.grad((x * 2).sum(), [None]),
        lambda lib, x: lib.autograd.grad((x * 2).sum(), None),
        lambda lib, x: lib.autograd.grad(None, x),
        lambda lib, x: lib.autograd.grad([None], x),
        lambda lib, x: lib.autograd.grad([x.sum(), "a"], x),
        lambda lib, x: lib.autograd.grad(x * 2, x, 3),
        lambda lib, x: lib.autograd.backward([(x * 2).sum()], [3]),
        lambda lib, x: lib.autograd.backward((x * 2).sum(), "a"),
        lambda lib, x: lib.autograd.backward([None]),
        lambda lib, x: lib.autograd.backward([1, 2]),
        lambda lib, x: lib.autograd.backward(None),
        lambda lib, x: (x * 2).sum().backward(inputs=[None]),
    ])
    def test_grad_bad_arguments(self, torch, call):
        same_error(torch, lambda lib: call(lib, lib.ones(2, requires_grad=True)))


# ---------------------------------------------------------------- retain_graph
class TestRetainGraph:
    def test_second_backward_raises(self, torch):
        def f(lib):
            x = lib.ones(3, requires_grad=True)
            y = (x * x).sum()
            y.backward()
            y.backward()
        e, _ = same_error(torch, f)
        assert "retain_graph=True" in str(e)

    def test_second_grad_raises(self, torch):
        def f(lib):
            x = lib.ones(3, requires_grad=True)
            y = (x.exp()).sum()
            lib.autograd.grad(y, x)
            lib.autograd.grad(y, x)
        same_error(torch, f)

    def test_retain_graph_works(self, torch):
        def f(lib, x):
            y = (x * x.exp()).sum()
            y.backward(retain_graph=True)
            y.backward(retain_graph=True)
            y.backward()
        run_both(torch, f, rand(3))

    def test_create_graph_retains(self, torch):
        def f(lib, x):
            y = (x * x).sum()
            y.backward(create_graph=True)
            y.backward(create_graph=True)
            # grads built with create_graph hold history
            assert x.grad.requires_grad
            x.grad = None
        run_both(torch, f, rand(3))

    def test_graph_without_saved_tensors(self, torch):
        # nodes that save nothing can be re-run
        for lib in (ag, torch):
            x = lib.ones(3, requires_grad=True)
            y = (x.view(3, 1) + 1 - x.reshape(1, 3).t()).sum() + x.sum()
            y.backward()
            y.backward()
            np.testing.assert_allclose(to_np(x.grad), [2, 2, 2])


# ---------------------------------------------------------------- version counter
class TestVersionCounter:
    def test_version_bumps(self, torch):
        for lib in (ag, torch):
            x = lib.ones(3)
            assert x._version == 0
            x.add_(1)
            assert x._version == 1
            x.mul_(2)
            x[0] = 5
            x.zero_()
            x += 1
            x.copy_(lib.ones(3))
            assert x._version == 6
            (x + 1)  # out of place: no bump
            assert x._version == 6

    def test_views_share_version(self, torch):
        for lib in (ag, torch):
            x = lib.ones(4, 4)
            views = [x[0], x[:, 1], x.view(16), x.t(), x.transpose(0, 1), x.unsqueeze(0), x.expand(2, 4, 4),
                     x.reshape(16), x.detach(), x.narrow(0, 1, 2), x.diagonal(), x.squeeze()]
            x.add_(1)
            assert all(v._version == 1 for v in views)
            views[0].add_(1)
            assert x._version == 2 and views[3]._version == 2

    def test_modified_saved_input(self, torch):
        def f(lib):
            x = lib.ones(3, requires_grad=True)
            y = x * 2
            z = y * y
            y.add_(1)
            z.sum().backward()
        e, _ = same_error(torch, f)
        assert "version 1; expected version 0" in str(e)

    def test_modified_saved_output(self, torch):
        def f(lib):
            x = lib.ones(3, requires_grad=True)
            y = x.exp()
            y.add_(1)
            y.sum().backward()
        same_error(torch, f)

        def g(lib):
            x = lib.ones(3, requires_grad=True)
            y = x.sigmoid()
            y.mul_(2)
            y.sum().backward()
        same_error(torch, g)

    def test_modified_leaf_under_no_grad(self, torch):
        def f(lib):
            x = lib.ones(3, requires_grad=True)
            y = x * x
            with lib.no_grad():
                x.add_(1)
            y.sum().backward()
        same_error(torch, f)

    def test_modified_through_view(self, torch):
        def f(lib):
            x = lib.ones(3, requires_grad=True)
            y = x.exp()
            z = y * y
            y[1:].mul_(2)
            z.sum().backward()
        same_error(torch, f, exact=False)

    def test_modified_double_dtype(self, torch):
        def f(lib):
            x = lib.ones(2, 2, dtype=lib.float64, requires_grad=True)
            y = x.tanh()
            y.mul_(3)
            y.sum().backward()
        same_error(torch, f)

    def test_unmodified_ok_after_unrelated_inplace(self, torch):
        def f(lib, x):
            y = x * 2
            z = y.exp()  # saves its output, not y
            y.add_(1)
            return (z + y).sum()
        run_both(torch, f, rand(3))


# ---------------------------------------------------------------- in-place
class TestInplace:
    def test_leaf_inplace_raises(self, torch):
        for op in (lambda t: t.add_(1), lambda t: t.mul_(2), lambda t: t.zero_(), lambda t: t.exp_(),
                   lambda t: t.copy_(t.detach() * 0 + 1), lambda t: t.__iadd__(1), lambda t: t.fill_(2.0)):
            same_error(torch, lambda lib: op(lib.ones(3, requires_grad=True)))

    def test_leaf_setitem_raises(self, torch):
        def f(lib):
            x = lib.ones(3, requires_grad=True)
            x[0] = 2
        same_error(torch, f)

    def test_view_of_leaf_inplace_raises(self, torch):
        same_error(torch, lambda lib: lib.ones(3, requires_grad=True)[0].add_(1))
        same_error(torch, lambda lib: lib.ones(3, 2, requires_grad=True).t().mul_(2))
        same_error(torch, lambda lib: lib.ones(3, requires_grad=True).view(3).zero_())

    def test_leaf_inplace_under_no_grad_ok(self, torch):
        for lib in (ag, torch):
            x = lib.ones(3, requires_grad=True)
            with lib.no_grad():
                x.add_(1)
                x[0] = 7
            assert x.requires_grad and x.is_leaf and x.grad_fn is None
            (x * 2).sum().backward()
            np.testing.assert_allclose(to_np(x), [7, 2, 2])
            np.testing.assert_allclose(to_np(x.grad), [2, 2, 2])

    def test_inplace_non_leaf(self, torch):
        def f(lib, x):
            y = x * 2
            y.add_(1)
            assert y.grad_fn.name() == "AddBackward0"
            y.mul_(x)
            y.div_(x + 3)
            assert y.grad_fn.name() == "DivBackward0" and y._version == 3
            return y.sum()
        run_both(torch, f, rand(4))

    def test_inplace_chain(self, torch):
        def f(lib, x, w):
            y = x.clone()
            y.mul_(w)
            y.sub_(x)
            y.div_(2.0)
            y.add_(w, alpha=2)
            y.sub_(x.exp(), alpha=0.5)
            y.tanh_()  # saves its result: the last in-place op
            return (y * y).sum()
        run_both(torch, f, rand(5), rand(5))

    @staticmethod
    def _self_alias(lib, x, w, inplace):
        y = x * 2
        if inplace:
            y.add_(1)
            y.mul_(y)  # saves self as `other`
            y.tanh_()  # saves its result ...
            y += w  # ... which this modifies
            y *= x
            y.sigmoid_()
        else:
            y = y + 1
            y = y * y
            y = y.tanh()
            y = y + w
            y = y * x
            y = y.sigmoid()
        return (y * y).sum()

    def test_inplace_reading_self_better_than_torch(self, torch):
        # torch raises here ("modified by an inplace operation": mul_ saved self as `other`, tanh_
        # saved its own result). ampgrad's in-place ops save pre-write clones / their out-of-place
        # result (Note [Saved self in in-place ops]) and give the out-of-place gradients instead.
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            xs = leaves(torch, [rand(4), rand(4)])
            self._self_alias(torch, *xs, inplace=True).backward()
        xr = leaves(torch, [rand(4), rand(4)])
        xa = [ag.tensor(t.detach().numpy(), requires_grad=True) for t in xr]
        la = self._self_alias(ag, *xa, inplace=True)
        lt = self._self_alias(torch, *xr, inplace=False)
        la.backward()
        lt.backward()
        assert_close(la, lt)
        for a, t in zip(xa, xr):
            assert_close(a.grad, t.grad)

    def test_inplace_with_other_requiring_grad(self, torch):
        def f(lib, x, w):
            y = lib.zeros(3, dtype=lib.float64)
            y.add_(w)  # y did not require grad before
            assert y.requires_grad and not y.is_leaf
            y.mul_(x)
            return y.sum()
        run_both(torch, f, rand(3), rand(3))

    def test_inplace_broadcast_other(self, torch):
        def f(lib, x, b):
            y = x * 1
            y.add_(b)
            y.mul_(b)
            return (y ** 2).sum()
        run_both(torch, f, rand(3, 4), rand(4))

    def test_inplace_dtype_of_result(self, torch):
        def f(lib, x, w):
            y = x.float() * 1  # float32
            y.mul_(w)  # w float64; result stays float32
            assert dtype_name(y.dtype) == "float32"
            return y.sum()
        run_both(torch, f, rand(3), rand(3), rtol=1e-5)

    def test_inplace_on_view_of_nonleaf(self, torch):
        def f(lib, x):
            y = x * 1
            y[1:3].mul_(2)
            return (y * y).sum()
        run_both(torch, f, rand(5))

    def test_inplace_on_view_copyslices(self, torch):
        def f(lib, x, w):
            y = x * 3
            v = y[1]
            v.mul_(w[0])
            assert y.grad_fn.name() == "torch::autograd::CopySlices"
            assert type(y.grad_fn).__name__ == "CopySlices"
            return (y * x).sum()
        run_both(torch, f, rand(3, 2), rand(2))

    def test_inplace_on_view_then_use_view(self, torch):
        def f(lib, x):
            y = x * 2
            v = y[:, 0]
            v.exp_()
            return (v * 3).sum() + (y * y).sum()
        run_both(torch, f, rand(3, 2))

    def test_inplace_on_transposed_view(self, torch):
        def f(lib, x):
            y = x * 2
            y.t().add_(lib.ones(3, 2, dtype=lib.float64) * x.t())
            return (y ** 2).sum()
        run_both(torch, f, rand(2, 3))

    def test_inplace_on_view_of_view(self, torch):
        def f(lib, x):
            y = x * 2
            v = y[1:]
            w = v[:, 1:]
            w.mul_(3)
            return (y * y.exp()).sum()
        run_both(torch, f, rand(4, 3))

    def test_inplace_view_zero(self, torch):
        def f(lib, x):
            y = x * 3
            y[0].zero_()
            return (y * 3).sum()
        run_both(torch, f, rand(3, 2))

    def test_setitem_with_grad_value(self, torch):
        def f(lib, w):
            x = lib.zeros(3, dtype=lib.float64)
            x[0] = w[0] * 2
            x[1:] = w[1:].exp()
            return (x * x).sum()
        run_both(torch, f, rand(3))

    def test_setitem_advanced_index_grad(self, torch):
        def f(lib, w, x0):
            x = x0 * 1
            x[lib.tensor([0, 2])] = w * 3
            return (x * x).sum()
        run_both(torch, f, rand(2), rand(4))

    def test_setitem_mask(self, torch):
        def f(lib, x0):
            x = x0 * 2
            x[x > 0] = 0.0
            return (x * x0).sum()
        run_both(torch, f, rand(6))

    def test_copy_grad(self, torch):
        def f(lib, a, b):
            y = a * 1
            y.copy_(b * 2)
            return (y * a).sum()
        run_both(torch, f, rand(3), rand(3))

        def g(lib, a, b):
            y = a * 1
            y[:2].copy_(b)
            return (y * y).sum()
        run_both(torch, g, rand(3), rand(2))

    def test_inplace_on_saved_output_view_error(self, torch):
        def f(lib):
            x = lib.ones(3, requires_grad=True)
            y = x.exp()
            y[0].add_(1)
            y.sum().backward()
        same_error(torch, f, exact=False)

    def test_grad_through_view_after_base_inplace(self, torch):
        def f(lib, x):
            y = x * 2
            v = y[:2]
            y.mul_(3)
            return (v * v).sum()
        run_both(torch, f, rand(4))

    def test_inplace_relu_functional(self, torch):
        def f(lib, x):
            y = x * 2
            lib.nn.functional.relu(y, inplace=True)
            return (y * y).sum()
        run_both(torch, f, rand(5))

    def test_setitem_on_base_updates_views(self, torch):
        def f(lib, x):
            y = x * 2
            v = y[1:]
            y[0] = 5.0  # v's grad_fn goes stale and is rebuilt (AsStridedBackward0)
            assert v.grad_fn.name() == "AsStridedBackward0"
            return (v * v).sum()
        run_both(torch, f, rand(3))

    def test_view_of_constant_base_gains_history(self, torch):
        res = []
        for lib in (ag, torch):
            w = lib.tensor([1.0, 2.0], requires_grad=True)
            base = lib.zeros(3)
            v2 = base[1:]
            base[:2] = w * 3
            assert base.requires_grad and v2.requires_grad
            assert type(base.grad_fn).__name__ == "CopySlices"
            res.append(lib.autograd.grad((v2 * v2).sum(), w)[0])
        assert_close(*res)

    def test_detached_alias_inplace_no_history(self, torch):
        res = []
        for lib in (ag, torch):
            x = lib.ones(3, requires_grad=True)
            y = x * 2
            d = y.detach()
            d[0] = 7.0  # changes y's value, not its history
            assert y.grad_fn.name() == "MulBackward0"
            res.append((y, lib.autograd.grad((y * y).sum(), x)[0]))
        for a, t in zip(*res):
            assert_close(a, t)

    @pytest.mark.parametrize("op,name", [
        (lambda y: y.fill_(1.5), "FillBackward2"), (lambda y: y.zero_(), "ZeroBackward0"),
        (lambda y: y.copy_(y.detach() * 0 + 3), "torch::autograd::CopyBackwards"),
        (lambda y: y.uniform_(), "UniformBackward0"), (lambda y: y.normal_(), "NormalBackward0"),
    ])
    def test_inplace_overwrite_cuts_history(self, torch, op, name):
        res = []
        for lib in (ag, torch):
            x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
            y = x * 2
            op(y)
            assert y.requires_grad and y.grad_fn.name() == name
            (y * 1).sum().backward()
            res.append(x.grad)
            z = x * 2
            op(z[1:])
            (z * 1).sum().backward()
            res.append(x.grad)
        assert_close(res[0], res[2])
        assert_close(res[1], res[3])

    def test_fill_with_grad_tensor(self, torch):
        def f(lib, x, w):
            y = x * 1
            y.fill_(w.sum())
            return (y * y).sum()
        run_both(torch, f, rand(3), rand(1))

    def test_copy_broadcast_and_dtype(self, torch):
        def f(lib, x):
            y = lib.zeros(3, 2)  # float32 destination, float64 source, broadcast
            y.copy_(x * 2)
            assert y.grad_fn.name() == "torch::autograd::CopyBackwards"
            return (y * y).sum()
        run_both(torch, f, rand(2))

    def test_masked_fill_and_clamp_inplace(self, torch):
        def f(lib, x):
            y = x * 1
            y.masked_fill_(y < 0, 0.0)
            z = x * 3
            z.clamp_(-1, 2)
            return (y * y).sum() + (z * x).sum()
        run_both(torch, f, rand(6))

    def test_integer_inplace_no_grad_interaction(self, torch):
        for lib in (ag, torch):
            x = lib.ones(3, requires_grad=True)
            i = lib.zeros(3, dtype=lib.int64)
            i.add_(1)
            assert not i.requires_grad
            with pytest.raises(RuntimeError):
                i.add_(x)  # float result can't be cast to int64


# ---------------------------------------------------------------- higher order
def _double_backward(torch, fn, *arrays, rtol=1e-7, atol=1e-10, order=2):
    """g = grad(fn(x), x, create_graph=True); then penalty terms built from g are differentiated."""
    res = []
    for lib in (ag, torch):
        xs = leaves(lib, arrays)
        y = fn(lib, *xs)
        gs = lib.autograd.grad(y, xs, create_graph=True)
        out = sum((g * g).sum() for g in gs)
        if order == 3:
            gg = lib.autograd.grad(out, xs, create_graph=True)
            out = sum((g.sin()).sum() for g in gg)
        out.backward()
        res.append((xs, gs, out))
    (xa, ga, oa), (xt, gt, ot) = res
    for a, t in zip(ga, gt):
        assert_close(a, t, rtol, atol)
    assert_close(oa, ot, rtol, atol)
    for a, t in zip(xa, xt):
        assert_close(a.grad, t.grad, rtol, atol)


HIGHER = {
    "mul": lambda lib, x, w: (x * w * x).sum(),
    "exp": lambda lib, x, w: (x.exp() * w).sum(),
    "tanh": lambda lib, x, w: (x.tanh() * w).sum(),
    "sigmoid": lambda lib, x, w: (x.sigmoid() * w).sum(),
    "matmul": lambda lib, x, w: (x.reshape(2, 2) @ w.reshape(2, 2) @ x.reshape(2, 2)).sum(),
    "softmax": lambda lib, x, w: (x.reshape(2, 2).softmax(1) * w.reshape(2, 2)).sum(),
    "log_softmax": lambda lib, x, w: (x.reshape(2, 2).log_softmax(-1) * w.reshape(2, 2)).sum(),
    "pow": lambda lib, x, w: (x.abs().pow(3) * w).sum() + (x.abs() ** w.abs()).sum(),
    "div": lambda lib, x, w: (w / (x * x + 1)).sum(),
    "log": lambda lib, x, w: ((x * x + 1).log() * w).sum(),
    "sqrt": lambda lib, x, w: ((x * x + 1).sqrt() * w).sum(),
    "sin_cos": lambda lib, x, w: (x.sin() * w.cos() + x.cos()).sum(),
    "mean_var": lambda lib, x, w: (x * w).mean() + x.var() * w.sum(),
    "broadcast": lambda lib, x, w: (x.reshape(2, 2) * w[:2] + w[2:].reshape(2, 1)).exp().sum(),
    "views": lambda lib, x, w: (x.reshape(2, 2).t()[0] * w[1:3]).exp().sum(),
    "norm": lambda lib, x, w: (x * w).norm(),
    "relu": lambda lib, x, w: ((x * w).relu() * x).sum(),
    "gelu": lambda lib, x, w: (lib.nn.functional.gelu(x) * w).sum(),
    "silu": lambda lib, x, w: (lib.nn.functional.silu(x) * w).sum(),
    "linear": lambda lib, x, w: lib.nn.functional.linear(x.reshape(2, 2), w.reshape(2, 2), x[:2]).tanh().sum(),
    "addmm": lambda lib, x, w: lib.addmm(x.reshape(2, 2), w.reshape(2, 2), x.reshape(2, 2)).exp().sum(),
    "where": lambda lib, x, w: lib.where(x > 0, x * x * w, w.exp() * x).sum(),
    "max": lambda lib, x, w: (x * w).max() * x.sum(),
    "inplace": lambda lib, x, w: _inplace_chain(x, w),
}


# More ops (6-element inputs), double and triple backward.
HIGHER6 = {
    "sum_dim": lambda lib, x, w: (x.reshape(2,3).sum(1) * w[:2]).sum(),
    "mean_dim": lambda lib, x, w: (x.reshape(2,3).mean(0, keepdim=True) ** 2 * w[:3]).sum(),
    "prod": lambda lib, x, w: (x.reshape(2,3).prod(1) * w[:2]).sum(),
    "cumsum": lambda lib, x, w: (x.cumsum(0) * w).sum(),
    "cumprod": lambda lib, x, w: (x.cumprod(0) * w).sum(),
    "logsumexp": lambda lib, x, w: (x.reshape(2,3) * w.reshape(2,3)).logsumexp(1).sum(),
    "amax": lambda lib, x, w: (x * w).reshape(2,3).amax(1).sum() * x.sum(),
    "max_dim": lambda lib, x, w: (x * w).reshape(2,3).max(1)[0].sum() * x.sum(),
    "var_std": lambda lib, x, w: (x * w).var() + (x * w).reshape(2,3).std(1).sum(),
    "norm": lambda lib, x, w: (x * w).norm() + (x*w).reshape(2,3).norm(dim=1).sum(),
    "abs_clamp": lambda lib, x, w: ((x * w).abs() * x).sum() + (x.clamp(-0.5, 0.5) * w * x).sum(),
    "maximum": lambda lib, x, w: (lib.maximum(x, w) * x * w).sum(),
    "atan2": lambda lib, x, w: lib.atan2(x, w.abs() + 1).sum(),
    "lerp_addcmul": lambda lib, x, w: (lib.lerp(x, w, 0.3) ** 2).sum() + lib.addcmul(x, x, w, value=0.5).pow(2).sum() + lib.addcdiv(x, x, w.abs() + 1).pow(2).sum(),
    "cat_stack": lambda lib, x, w: (lib.cat([x, w * x]) ** 2).sum() + (lib.stack([x, w]) .exp() * x).sum(),
    "gather_index": lambda lib, x, w: (x[lib.tensor([0, 2, 2])] * w[:3] * x[:3]).sum() + (lib.gather(x * w, 0, lib.tensor([1, 1, 0])) ** 2).sum(),
    "index_select": lambda lib, x, w: (lib.index_select(x * x, 0, lib.tensor([0, 2, 2])) * w[:3]).sum(),
    "masked": lambda lib, x, w: (lib.masked_fill(x * w, x > 0, 0.0) ** 2).sum(),
    "bmm_mv_dot": lambda lib, x, w: (lib.bmm(x.reshape(1,2,3), w.reshape(1,3,2)) ** 2).sum() + (lib.mv(x.reshape(2,3), w[:3]) ** 2).sum() + lib.dot(x, w) ** 2,
    "outer_addmv": lambda lib, x, w: (lib.outer(x[:2], w) ** 2).sum() + (lib.addmv(w[:2], x.reshape(2,3), w[3:]) ** 2).sum(),
    "baddbmm": lambda lib, x, w: (lib.baddbmm(x[:4].reshape(1,2,2), x.reshape(1,2,3), w.reshape(1,3,2)) ** 2).sum(),
    "matmul_bcast": lambda lib, x, w: (lib.matmul(x.reshape(2,1,3), w.reshape(3,2)) ** 2).sum(),
    "softplus": lambda lib, x, w: (lib.nn.functional.softplus(x * w) * x).sum(),
    "log_softmax_dim0": lambda lib, x, w: (lib.log_softmax(x.reshape(2,3) * w.reshape(2,3), 0) * w.reshape(2,3)).sum(),
    "erf_log1p": lambda lib, x, w: (lib.erf(x) * w).sum() + lib.log1p(x * x).sum() + lib.expm1(x).mul(w).sum(),
    "rsqrt_recip": lambda lib, x, w: lib.rsqrt(x * x + 1).sum() + lib.reciprocal(w * w + 1).mul(x).sum(),
    "asin_atan": lambda lib, x, w: (lib.asin(x * 0.3) * w).sum() + lib.atan(x * w).sum() + lib.sinh(x).mul(lib.cosh(w)).sum(),
    "tril_flip_roll": lambda lib, x, w: (lib.tril(x.reshape(2,3)) * w.reshape(2,3) * x.reshape(2,3)).sum() + (lib.flip(x, [0]) * w * x).sum() + (lib.roll(x, 1, 0) * w * x).sum(),
    "repeat_expand": lambda lib, x, w: (x.reshape(2,3).repeat(2, 1) ** 2).sum() * w.sum() + (x[:3].expand(2, 3) * w.reshape(2,3)).exp().sum(),
    "diag_narrow": lambda lib, x, w: (x.reshape(2,3).diagonal() * w[:2]).exp().sum() + (x.narrow(0, 1, 3) ** 3).sum(),
    "where_scalar": lambda lib, x, w: lib.where(x > w, x ** 2, w * x).sum(),
    "sub_div_alpha": lambda lib, x, w: (lib.sub(x, w, alpha=2) ** 2 / (w * w + 1)).sum() + lib.add(x, w * x, alpha=3).pow(2).sum(),
    "mixed_dtype": lambda lib, x, w: (x.float() * w).sum() ** 2,
    "scatter_add": lambda lib, x, w: (lib.scatter_add(lib.zeros(3, dtype=lib.float64), 0, lib.tensor([0, 1, 1, 2, 0, 2]), x * w) ** 2).sum(),
    "split_unbind": lambda lib, x, w: sum((p ** 2).sum() * i for i, p in enumerate(x.reshape(2, 3).unbind(1))) + sum((p * w[:2]).exp().sum() for p in x.split(2)[:2]),
    "fmod_remainder": lambda lib, x, w: (lib.fmod(x * 3, 1.5) * w).pow(2).sum() + (lib.remainder(x * 3, w.abs() + 1) * w).pow(2).sum(),
    "gelu_tanh": lambda lib, x, w: (lib.nn.functional.gelu(x * w, approximate="tanh") * x).sum(),
    "silu_relu": lambda lib, x, w: (lib.nn.functional.silu(x) * w * x).sum() + (lib.relu(x * w) * x).sum(),
    "linear_nobias": lambda lib, x, w: lib.nn.functional.linear(x.reshape(2, 3), w.reshape(2, 3)).tanh().sum(),
    "sqrt_pow_tensor": lambda lib, x, w: (x.abs() + 1).pow(w).sum() + lib.sqrt(x * x + w * w).sum(),
}


def _inplace_chain(x, w):
    y = x * 1
    y.mul_(w)
    y.add_(x.exp())
    y[1:].mul_(x[:3])
    y.t().sub_(w)
    return (y.exp() * y).sum()


@pytest.mark.parametrize("name", sorted(HIGHER))
def test_double_backward(torch, name):
    x, w = rand(4) * 0.8, rand(4) * 0.8
    _double_backward(torch, HIGHER[name], x, w)


@pytest.mark.parametrize("name", ["mul", "exp", "tanh", "sigmoid", "matmul", "softmax", "pow", "div", "sin_cos"])
def test_triple_backward(torch, name):
    x, w = rand(4) * 0.8, rand(4) * 0.8
    _double_backward(torch, HIGHER[name], x, w, order=3, rtol=1e-6)


@pytest.mark.parametrize("name", sorted(HIGHER6))
@pytest.mark.parametrize("order", [2, 3])
def test_higher_order_ops(torch, name, order):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    x, w = rng.standard_normal(6) * 0.7, rng.standard_normal(6) * 0.7
    _double_backward(torch, HIGHER6[name], x, w, order=order, rtol=1e-6, atol=1e-9)


def test_scalar_arithmetic_in_formulas_keeps_double(torch):
    # formulas combine wrapped Python numbers (`e - 1.0` for x ** 0.3, `1 - w` for lerp): that
    # must happen in double, not the default dtype
    res = []
    for lib in (ag, torch):
        (a,) = leaves(lib, [[1.7, 0.4]])
        ((a ** 0.3).sum() + lib.lerp(a, a * 2, 0.3).sum() + (0.3 ** a).sum()).backward()
        res.append(a.grad)
        assert lib.tensor(0.3, dtype=lib.float64).item() == 0.3
    np.testing.assert_array_equal(to_np(res[0]), to_np(res[1]))


class TestHigherOrder:
    def test_gradient_penalty(self, torch):
        def f(lib, x, W):
            y = (x @ W).tanh().sum()
            (g,) = lib.autograd.grad(y, x, create_graph=True)
            ((g ** 2).sum() + y).backward()
        run_both(torch, f, rand(3, 4), rand(4, 5))

    def test_backward_create_graph_then_grad(self, torch):
        res = []
        for lib in (ag, torch):
            x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
            y = (x ** 3).sum()
            y.backward(create_graph=True)
            g = x.grad
            assert g.requires_grad and g.grad_fn is not None
            (h,) = lib.autograd.grad(g.sum(), x)
            res.append((g, h))
        for a, t in zip(*res):
            assert_close(a, t)

    def test_grad_of_grad_wrt_grad_output(self, torch):
        res = []
        for lib in (ag, torch):
            x = lib.tensor([0.5, -1.0], dtype=lib.float64, requires_grad=True)
            v = lib.tensor([2.0, 3.0], dtype=lib.float64, requires_grad=True)
            y = x.exp() * x
            (g,) = lib.autograd.grad(y, x, grad_outputs=v, create_graph=True)
            gv, gx = lib.autograd.grad(g.sum(), [v, x])
            res.append((g, gv, gx))
        for a, t in zip(*res):
            assert_close(a, t)

    def test_no_create_graph_grad_is_constant(self):
        x = ag.tensor([1.0, 2.0], requires_grad=True)
        (g,) = ag.autograd.grad((x ** 3).sum(), x)
        assert not g.requires_grad and g.grad_fn is None

    def test_create_graph_linear_op_grad_no_history(self, torch):
        # d(sum(2x))/dx is a constant: torch returns a tensor that does not require grad
        for lib in (ag, torch):
            x = lib.tensor([1.0, 2.0], requires_grad=True)
            (g,) = lib.autograd.grad((x * 2).sum(), x, create_graph=True)
            np.testing.assert_allclose(to_np(g), [2, 2])
        gt = torch.autograd.grad((torch.ones(2, requires_grad=True) * 2).sum(),
                                 torch.ones(2, requires_grad=True), allow_unused=True)[0]
        assert gt is None


# ---------------------------------------------------------------- AccumulateGrad layout contract
class TestAccumulateGrad:
    def test_first_backward_steals_second_adds_in_place(self, torch):
        for lib in (ag, torch):
            x = lib.ones(3, requires_grad=True)
            (x * 2).sum().backward()
            g = x.grad
            ptr = g.data_ptr()
            (x * 3).sum().backward()
            assert x.grad is g and x.grad.data_ptr() == ptr
            np.testing.assert_allclose(to_np(x.grad), [5, 5, 5])
            assert not x.grad.requires_grad

    def test_steal_observed_through_hooks(self, torch):
        for lib in (ag, torch):
            x = lib.ones(3, requires_grad=True)
            seen = []
            x.register_hook(lambda g: seen.append(g.data_ptr()))
            (x * 2).sum().backward()
            assert x.grad.data_ptr() == seen[0]  # the incoming buffer became .grad: no copy
            x2 = lib.ones(3, requires_grad=True)
            keep = []
            x2.register_hook(lambda g: keep.append(g))  # someone else holds it: copied
            (x2 * 2).sum().backward()
            assert x2.grad is not keep[0] and x2.grad.data_ptr() != keep[0].data_ptr()

    def test_steal_incoming_gradient(self, torch):
        # the seed passed to backward() is not stolen (the caller still owns it)
        for lib in (ag, torch):
            x = lib.ones(3, requires_grad=True)
            seed = lib.ones(3)
            x.backward(seed)
            assert x.grad.data_ptr() != seed.data_ptr() or lib is torch and x.grad is not seed
            seed.mul_(5)
            np.testing.assert_allclose(to_np(x.grad), [1, 1, 1])

    def test_grad_not_aliased_between_leaves(self, torch):
        for lib in (ag, torch):
            x = lib.ones(3, requires_grad=True)
            y = lib.ones(3, requires_grad=True)
            (x + y).sum().backward()
            assert x.grad.data_ptr() != y.grad.data_ptr()
            x.grad.add_(1)
            np.testing.assert_allclose(to_np(y.grad), [1, 1, 1])

    def test_grad_of_expanded_leaf_is_contiguous_copy(self, torch):
        for lib in (ag, torch):
            x = lib.ones(3, requires_grad=True)
            x.expand(4, 3).sum().backward()
            assert x.grad.is_contiguous()
            np.testing.assert_allclose(to_np(x.grad), [4, 4, 4])

    def test_create_graph_grad_has_history(self, torch):
        for lib in (ag, torch):
            x = lib.tensor([1.0, 2.0], requires_grad=True)
            (x * x).sum().backward(create_graph=True)
            assert x.grad.requires_grad and x.grad.grad_fn.name() == "torch::autograd::CopyBackwards"
            old = x.grad
            (x * x).sum().backward(create_graph=True)
            assert x.grad is not old  # out of place under create_graph
            np.testing.assert_allclose(to_np(x.grad), [4, 8])
            np.testing.assert_allclose(to_np(old), [2, 4])

    def test_create_graph_accumulate_into_existing_plain_grad(self, torch):
        for lib in (ag, torch):
            x = lib.tensor([1.0, 2.0], requires_grad=True)
            (x * 3).sum().backward()
            old = x.grad
            (x * x).sum().backward(create_graph=True)
            np.testing.assert_allclose(to_np(x.grad), [5, 7])
            assert x.grad.requires_grad

    def test_grad_mode_off_accumulate_in_place(self, torch):
        for lib in (ag, torch):
            x = lib.ones(2, requires_grad=True)
            x.grad = lib.zeros(2)
            g = x.grad
            (x * 2).sum().backward()
            assert x.grad is g

    def test_accumulate_grad_dtype(self, torch):
        for lib in (ag, torch):
            x = lib.ones(2, dtype=lib.float64, requires_grad=True)
            (x.float() * 2).sum().backward()
            assert dtype_name(x.grad.dtype) == "float64"

    def test_layout_contract_non_contiguous_leaf(self, torch):
        res = []
        for lib in (ag, torch):
            x = lib.ones(3, 2).t().detach().requires_grad_()  # dense, strides (1, 2)
            (x * 2).sum().backward()
            assert x.grad.stride() == x.stride()
            (x * 3).sum().backward()
            assert x.grad.stride() == x.stride()
            e = lib.ones(3, 1).expand(3, 2).detach().requires_grad_()  # overlapping: contiguous grad
            (e * 2).sum().backward()
            assert e.grad.is_contiguous()
            p = lib.ones(2, 3, 4).permute(2, 0, 1).detach().requires_grad_()
            (p.exp() * 2).sum().backward(create_graph=True)
            assert p.grad.stride() == p.stride() and p.grad.requires_grad
            res.append((x.grad, e.grad, p.grad))
        for a, t in zip(*res):
            assert_close(a, t)

    def test_zero_grad_pattern(self, torch):
        for lib in (ag, torch):
            x = lib.ones(2, requires_grad=True)
            for _ in range(3):
                if x.grad is not None:
                    x.grad.zero_()
                (x * 2).sum().backward()
            np.testing.assert_allclose(to_np(x.grad), [2, 2])


# ---------------------------------------------------------------- hooks
class TestHooks:
    def test_leaf_hook_modifies(self, torch):
        def f(lib, x):
            x.register_hook(lambda g: g * 10)
            return (x * x).sum()
        run_both(torch, f, rand(3))

    def test_nonleaf_hook_modifies(self, torch):
        def f(lib, x):
            y = x * 2
            y.register_hook(lambda g: g + 1)
            return (y * y).sum()
        run_both(torch, f, rand(3))

    def test_hook_returning_none_keeps(self, torch):
        seen = []

        def f(lib, x):
            y = x.exp()
            y.register_hook(lambda g: seen.append(to_np(g).copy()))
            x.register_hook(lambda g: seen.append(to_np(g).copy()))
            return (y * 3).sum()
        run_both(torch, f, rand(3))
        assert len(seen) == 4
        np.testing.assert_allclose(seen[0], seen[2])
        np.testing.assert_allclose(seen[1], seen[3])

    def test_multiple_hooks_order(self, torch):
        def f(lib, x):
            y = x * 1
            y.register_hook(lambda g: g * 2)
            y.register_hook(lambda g: g + 1)
            x.register_hook(lambda g: g * 3)
            x.register_hook(lambda g: g - 1)
            return (y * 1).sum()
        run_both(torch, f, rand(3))

    def test_handle_remove(self, torch):
        def f(lib, x):
            y = x * 1
            h1 = y.register_hook(lambda g: g * 100)
            h2 = x.register_hook(lambda g: g * 100)
            h3 = y.register_hook(lambda g: g + 1)
            h1.remove()
            h2.remove()
            h2.remove()  # idempotent
            return (y * 2).sum()
        run_both(torch, f, rand(3))

    def test_hook_on_grad_and_autograd_grad(self, torch):
        res = []
        for lib in (ag, torch):
            x = lib.tensor([1.0, 2.0], requires_grad=True)
            y = x * x
            y.register_hook(lambda g: g * 2)
            res.append(lib.autograd.grad(y.sum(), x)[0])
        assert_close(*res)

    def test_hook_wrong_type_raises_type_error(self, torch):
        for lib in (ag, torch):
            x = lib.ones(3, requires_grad=True)
            x.register_hook(lambda g: 3)
            with pytest.raises(TypeError):
                (x * 2).sum().backward()
            y = lib.ones(3, requires_grad=True)
            z = y * 2
            z.register_hook(lambda g: "bad")
            with pytest.raises(TypeError):
                z.sum().backward()

    def test_hook_wrong_size_raises(self, torch):
        def f(lib):
            x = lib.ones(3, requires_grad=True)

            def myhook(g):
                return lib.ones(2)
            x.register_hook(myhook)
            x.sum().backward()
        same_error(torch, f)

    def test_hook_error_messages(self, torch):
        def ret_int(lib):
            x = lib.ones(3, requires_grad=True)
            (x * 2).register_hook(lambda g: 3)
            y = x * 2
            y.register_hook(lambda g: 3)
            y.sum().backward()
        same_error(torch, ret_int)

        def change_dtype(lib):
            x = lib.ones(3, requires_grad=True)
            x.register_hook(lambda g: g.double())
            x.sum().backward()
        same_error(torch, change_dtype)

        def change_dtype_nonleaf(lib):
            x = lib.ones(3, dtype=lib.float64, requires_grad=True)
            y = x * 2
            y.register_hook(lambda g: g.float())
            y.sum().backward()
        same_error(torch, change_dtype_nonleaf)

        def post_returns_tensor(lib):
            x = lib.ones(3, requires_grad=True)
            x.register_post_accumulate_grad_hook(lambda t: t * 2)
            (x * 2).sum().backward()
        same_error(torch, post_returns_tensor)

        def post_returns_int(lib):
            x = lib.ones(3, requires_grad=True)
            x.register_post_accumulate_grad_hook(lambda t: 5)
            (x * 2).sum().backward()
        same_error(torch, post_returns_int)

    def test_hook_exception_propagates(self, torch):
        class Boom(Exception):
            pass

        def bad(g):
            raise Boom("hook failed")
        x = ag.ones(3, requires_grad=True)
        y = x * 2
        y.register_hook(bad)
        with pytest.raises(Boom):
            y.sum().backward()
        # the interpreter and the engine are fine afterwards
        x2 = ag.ones(3, requires_grad=True)
        (x2 * 2).sum().backward()
        np.testing.assert_allclose(to_np(x2.grad), [2, 2, 2])

    def test_register_hook_no_grad_tensor(self, torch):
        same_error(torch, lambda lib: lib.ones(3).register_hook(lambda g: g))

    def test_retain_grad(self, torch):
        res = []
        for lib in (ag, torch):
            x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
            y = x * 2
            assert not y.retains_grad
            y.retain_grad()
            y.retain_grad()  # idempotent
            assert y.retains_grad
            z = (y * y).sum()
            z.backward(retain_graph=True)
            g1 = y.grad.clone()
            z.backward()
            res.append((g1, y.grad, x.grad))
            assert not x.retains_grad  # leaves don't "retain"
            x.retain_grad()
            assert not x.retains_grad
        for a, t in zip(*res):
            assert_close(a, t)

    def test_retain_grad_no_grad_raises(self, torch):
        same_error(torch, lambda lib: lib.ones(3).retain_grad())

    def test_retain_grad_sees_hooked_gradient(self, torch):
        res = []
        for lib in (ag, torch):
            x = lib.tensor([1.0, 2.0], requires_grad=True)
            y = x * 2
            y.retain_grad()
            y.register_hook(lambda g: g * 5)
            (y * y).sum().backward()
            res.append((y.grad, x.grad))
        for a, t in zip(*res):
            assert_close(a, t)

    def test_leaf_hook_applies_to_autograd_grad(self, torch):
        res = []
        for lib in (ag, torch):
            x = lib.tensor([1.0, 2.0], requires_grad=True)
            x.register_hook(lambda g: g * 2)
            res.append(lib.autograd.grad((x * x).sum(), x)[0])
            assert x.grad is None
        assert_close(*res)

    def test_retain_grad_with_autograd_grad(self, torch):
        res = []
        for lib in (ag, torch):
            x = lib.tensor([1.0, 2.0], requires_grad=True)
            y = x * 2
            y.retain_grad()
            lib.autograd.grad((y * y).sum(), x)
            res.append(y.grad)
        assert_close(*res)

    def test_hooks_and_inplace(self, torch):
        res = []
        for lib in (ag, torch):
            seen = []
            x = lib.tensor([1.0, 2.0], requires_grad=True)
            y = x * 2
            y.register_hook(lambda g: seen.append(g.clone()))  # sees the grad of y before mul_
            y.mul_(3)
            y.register_hook(lambda g: seen.append(g.clone()))  # after: the grad of the new y
            (y * y).sum().backward()
            res.append(seen + [x.grad])
        for a, t in zip(*res):
            assert_close(a, t)

    def test_retain_grad_view(self, torch):
        res = []
        for lib in (ag, torch):
            x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
            v = (x * 2)[:2]
            v.retain_grad()
            (v * v).sum().backward()
            res.append((v.grad, x.grad))
        for a, t in zip(*res):
            assert_close(a, t)

    def test_retain_grad_inplace(self, torch):
        res = []
        for lib in (ag, torch):
            x = lib.tensor([1.0, 2.0], requires_grad=True)
            y = x * 2
            y.retain_grad()
            y.mul_(3)
            (y * y).sum().backward()
            res.append((y.grad, x.grad))
        for a, t in zip(*res):
            assert_close(a, t)

    def test_post_accumulate_grad_hook(self, torch):
        for lib in (ag, torch):
            seen = []
            x = lib.tensor([1.0, 2.0], requires_grad=True)

            def hook(t):
                assert t is x
                seen.append(to_np(t.grad).copy())
                return None
            h = x.register_post_accumulate_grad_hook(hook)
            (x * 2).sum().backward()
            (x * 3).sum().backward()
            h.remove()
            (x * 3).sum().backward()
            assert len(seen) == 2
            np.testing.assert_allclose(seen[1], [5, 5])

    def test_post_accumulate_grad_hook_nonleaf_raises(self, torch):
        same_error(torch, lambda lib: (lib.ones(3, requires_grad=True) * 2).register_post_accumulate_grad_hook(
            lambda t: None))
        same_error(torch, lambda lib: lib.ones(3).register_post_accumulate_grad_hook(lambda t: None))

    def test_hooks_removed_or_added_inside_hooks(self, torch):
        for lib in (ag, torch):
            calls = []
            x = lib.ones(2, requires_grad=True)
            handles = {}

            def leaf_hook(g):
                calls.append("leaf")
                handles["leaf"].remove()
                x.register_hook(lambda g: calls.append("added") or None)
            handles["leaf"] = x.register_hook(leaf_hook)

            def post(t):
                calls.append("post")
                handles["post"].remove()
            handles["post"] = x.register_post_accumulate_grad_hook(post)
            (x * 2).sum().backward()
            (x * 2).sum().backward()
            assert calls[:2] == ["leaf", "post"] and "added" in calls and calls.count("post") == 1

    def test_reentrant_backward_in_hook(self, torch):
        res = []
        for lib in (ag, torch):
            y = lib.ones(2, requires_grad=True)
            z = y * 3

            def hook(g):
                w = lib.tensor([1.0, 2.0], requires_grad=True)
                with lib.enable_grad():
                    (w * w).sum().backward()
                return g * w.grad
            z.register_hook(hook)
            a = y.exp()
            b = a * 2

            def hook2(g):  # backward through part of the graph being run
                with lib.enable_grad():
                    a.sum().backward(retain_graph=True)
                return g
            b.register_hook(hook2)
            (z.sum() + b.sum()).backward()
            res.append(y.grad)
        assert_close(*res)

    def test_base_exception_in_hook(self):
        y = ag.ones(2, requires_grad=True)
        z = y * 2

        def hook(g):
            raise KeyboardInterrupt
        z.register_hook(hook)
        with pytest.raises(KeyboardInterrupt):
            z.sum().backward()
        assert ag.is_grad_enabled()

    def test_hook_drops_last_reference(self):
        y = ag.ones(2, requires_grad=True)
        holder = [y * 2]

        def hook(g):
            holder.clear()
            gc.collect()
            return g
        holder[0].register_hook(hook)
        s = holder[0].sum()
        s.backward()
        np.testing.assert_allclose(to_np(y.grad), [2, 2])

    def test_hook_can_be_removed_inside_hook(self, torch):
        handles = []
        x = ag.ones(2, requires_grad=True)
        y = x * 1

        def hook(g):
            handles[0].remove()
            return g * 2
        handles.append(y.register_hook(hook))
        (y * 1).sum().backward(retain_graph=True)
        (y * 1).sum().backward()
        np.testing.assert_allclose(to_np(x.grad), [3, 3])


# ---------------------------------------------------------------- deep graphs
class TestDeepGraph:
    def test_deep_chain_backward_and_free(self):
        n = 100_000
        x = ag.tensor([1.0], dtype=ag.float64, requires_grad=True)
        t0 = time.time()
        y = x
        for _ in range(n):
            y = y * 1.0001
        y.sum().backward()
        np.testing.assert_allclose(to_np(x.grad), [1.0001 ** n], rtol=1e-3)
        del y
        gc.collect()
        assert time.time() - t0 < 60

    def test_deep_chain_freed_without_backward(self):
        x = ag.tensor([1.0], requires_grad=True)
        y = x
        for _ in range(150_000):
            y = y + 1.0
        del y  # must not recurse
        y = x
        for _ in range(100_000):
            y = y.tanh()  # saves its output: weak self reference
        del y
        y = x
        for _ in range(100_000):
            y = y.sin()  # saves its input: the chain runs through saved tensors
        del y
        y = x
        for _ in range(50_000):
            y = y[0:1] * 1.0  # views: the chain also runs through view bases
        del y

    def test_deep_chain_retain_graph_views(self):
        x = ag.ones(4, requires_grad=True)
        y = x
        for _ in range(20_000):
            y = y.view(2, 2).view(4) * 1.0
        y.sum().backward()
        np.testing.assert_allclose(to_np(x.grad), [1, 1, 1, 1])
        del y

    def test_deep_inplace_chain(self):
        x = ag.ones(3, requires_grad=True)
        y = x * 1
        for _ in range(50_000):
            y.mul_(1.0)
        y.sum().backward()
        np.testing.assert_allclose(to_np(x.grad), [1, 1, 1])
        del y

    def test_wide_graph(self):
        x = ag.ones(2, requires_grad=True)
        total = x.sum() * 0
        for i in range(2000):
            total = total + (x * float(i)).sum()
        total.backward()
        np.testing.assert_allclose(to_np(x.grad), [sum(range(2000))] * 2)


class TestMemory:
    def test_graphs_are_freed(self):
        # every step builds a graph with views, in-place ops, hooks, retain_grad and (every third
        # step) a double backward; afterwards no graph node may be left alive (no C++ cycles)
        x = ag.randn(8, 8, requires_grad=True)
        w = ag.randn(8, 8, requires_grad=True)

        def step(i):
            y = (x @ w).tanh()
            z = y * 1
            z[:2].mul_(2)
            z.retain_grad()
            z.register_hook(lambda g: g * 1)
            v = z[1:]
            z.add_(1)
            loss = (z.exp() * y).sum() + v.sum()
            if i % 3 == 0:
                (g,) = ag.autograd.grad(loss, x, create_graph=True)
                (g * g).sum().backward()
            elif i % 3 == 1:
                loss.backward(create_graph=True)
            else:
                loss.backward()
            x.grad = None  # breaks the create_graph cycle (as torch warns)
            w.grad = None
        gc.collect()
        base = ag._C._autograd_live_nodes()
        for i in range(9):
            step(i)
        gc.collect()
        assert ag._C._autograd_live_nodes() == base
        y = (x * 2).sum()
        assert ag._C._autograd_live_nodes() > base
        del y
        assert ag._C._autograd_live_nodes() == base

    def test_create_graph_backward_warns_once(self, torch):
        import warnings
        for lib in (ag, torch):
            x = lib.ones(2, requires_grad=True)
            with warnings.catch_warnings(record=True):
                (x * x).sum().backward(create_graph=True)  # the first may have warned already
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                (x * x).sum().backward(create_graph=True)
            assert not [m for m in w if "reference cycle" in str(m.message)]
            x.grad = None


# ---------------------------------------------------------------- errors never crash
class TestNoCrash:
    def test_bad_inputs_raise(self):
        x = ag.ones(3, requires_grad=True)
        bad_calls = [
            lambda: ag.autograd.grad(None, x),
            lambda: ag.autograd.grad((x * 2).sum(), None),
            lambda: ag.autograd.backward(None),
            lambda: ag.autograd.backward([1, 2]),
            lambda: ag.autograd.grad([x.sum()], [x], grad_outputs=[ag.ones(3)]),
            lambda: ag.autograd.grad([x.sum(), x.sum()], [x], grad_outputs=[None]),
            lambda: x.backward(gradient="a"),
            lambda: x.register_hook(None),
            lambda: x.register_hook(3),
            lambda: (x * 2).grad_fn(),
            lambda: (x * 2).grad_fn(ag.ones(3), ag.ones(3), ag.ones(3)),
            lambda: (x * 2).grad_fn("a"),
            lambda: setattr(x, "grad", "abc"),
            lambda: setattr(x, "requires_grad", "yes"),
            lambda: setattr(x, "data", 3),
            lambda: x.requires_grad_(None),
        ]
        for c in bad_calls:
            with pytest.raises((RuntimeError, TypeError, ValueError, IndexError, AttributeError, AssertionError)):
                c()

    def test_node_call_directly(self, torch):
        x = ag.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        r = y.grad_fn(ag.ones(2))
        assert isinstance(r, (tuple, list)) or r is not None

    def test_backward_after_grad_fn_freed(self):
        x = ag.ones(3, requires_grad=True)
        y = (x * x).sum()
        fn = y.grad_fn
        del y
        gc.collect()
        assert fn.name() == "SumBackward0"

    def test_exception_inside_backward_leaves_state_clean(self):
        x = ag.ones(3, requires_grad=True)
        y = x.exp()
        z = y.sum() + (y * 1).sum()
        y.add_(1)  # version error in backward
        with pytest.raises(RuntimeError):
            z.backward()
        assert ag.is_grad_enabled()
        with pytest.raises(RuntimeError):
            z.backward(create_graph=False)
        (x * 2).sum().backward()
        np.testing.assert_allclose(to_np(x.grad), [2, 2, 2])

    def test_grad_mode_restored_after_failed_create_graph(self):
        x = ag.ones(3, requires_grad=True)
        y = x.exp()
        z = y.sum()
        y.add_(1)
        with ag.no_grad():
            with pytest.raises(RuntimeError):
                ag.autograd.grad(z, x, create_graph=True)
            assert not ag.is_grad_enabled()
        assert ag.is_grad_enabled()


# ---------------------------------------------------------------- random programs
def _random_program(lib, seed, a0, b0, functional, create_graph, n_ops=25):
    """A random graph over (3, 4) tensors: binary/unary/view ops, reductions, and in-place ops
    (mul_, add_, copy_, tanh_) through views (whole, slice, column, transpose, row) of non-leaf
    tensors. With `functional`, every in-place op first replaces its target by a clone (the
    semantics ampgrad promises where torch raises its own-saved-self version errors)."""
    r = np.random.default_rng(seed + 1000)
    a = lib.tensor(a0, requires_grad=True)
    b = lib.tensor(b0, requires_grad=True)
    pool = [a * 1, b * 1, a, b]
    views = [lambda z: z, lambda z: z[1:], lambda z: z[:, 2], lambda z: z.t(), lambda z: z[0]]
    for _ in range(n_ops):
        k = r.integers(0, 11)
        i, j = r.integers(0, len(pool), 2)
        x, y = pool[i], pool[j]
        s = float(np.round(r.uniform(-1.5, 1.5), 2))
        if k == 0:
            pool.append(x * y)
        elif k == 1:
            pool.append(x + y * s)
        elif k == 2:
            pool.append(x / (y * y + 1))
        elif k == 3:
            pool.append([x.tanh(), x.sin(), x.sigmoid(), x.exp().clamp(max=5)][r.integers(0, 4)])
        elif k == 4:
            pool.append(x.t().reshape(3, 4) + y)
        elif k == 5:
            pool.append(x.sum(0, keepdim=True) * y)
        else:
            cand = [q for q in range(len(pool)) if q not in (2, 3)]
            q = cand[r.integers(0, len(cand))]
            if r.uniform() < 0.7:
                pool.append(pool[q] * 1)
                q = len(pool) - 1
            view = views[r.integers(0, 5)]
            if functional:
                pool[q] = pool[q].clone()
            v = view(pool[q])
            op = r.integers(0, 5)
            other = view(y)
            if op == 0:
                v.mul_(s)
            elif op == 1:
                v.add_(other, alpha=s)
            elif op == 2:
                v.mul_(other)
            elif op == 3:
                v.copy_(other * s)
            else:
                v.tanh_()
    w = r.standard_normal(len(pool))
    loss = sum(float(wi) * p.sum() for wi, p in zip(w, pool))
    if not create_graph:
        loss.backward()
        return [a.grad, b.grad]
    ga, gb = lib.autograd.grad(loss, [a, b], create_graph=True)
    ((ga * ga).sum() + (gb * gb).sum()).backward()
    return [ga, gb, a.grad, b.grad]


@pytest.mark.parametrize("create_graph", [False, True])
def test_random_programs(torch, create_graph):
    counts = {"same": 0, "both_raise": 0, "functional": 0}
    for seed in range(30 if create_graph else 50):
        rng = np.random.default_rng(seed)
        a0, b0 = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
        try:
            ref = _random_program(torch, seed, a0, b0, False, create_graph)
            torch_error = None
        except RuntimeError as e:
            torch_error = e
        try:
            got = _random_program(ag, seed, a0, b0, False, create_graph)
        except RuntimeError as e:
            # ampgrad raises only where torch does (a saved tensor modified in place)
            assert torch_error is not None, f"seed {seed}: ampgrad raised {e}, torch did not"
            assert "modified by an inplace operation" in str(e)
            counts["both_raise"] += 1
            continue
        if torch_error is not None:
            # torch raised for an in-place op that saved its own self/result: ampgrad must give
            # the gradients of the functional program
            ref = _random_program(torch, seed, a0, b0, True, create_graph)
            counts["functional"] += 1
        else:
            counts["same"] += 1
        for x, y in zip(got, ref):
            assert_close(x, y, rtol=1e-6, atol=1e-8)
    assert counts["same"] > 5 and counts["both_raise"] > 5, counts


def test_relu_backward_is_threshold_backward():
    # One fused pass, torch's threshold_backward: where the result is <= 0 the gradient is 0,
    # even a NaN one (g * (x > 0) would keep NaN * 0 = NaN).
    torch = pytest.importorskip("torch")
    xv = np.array([-2.0, -0.0, 0.0, 1.5, np.nan, 3.0], np.float32)
    gv = np.array([np.nan, np.inf, 5.0, np.nan, 7.0, -1.0], np.float32)
    for dt in ("float32", "bfloat16", "float64"):
        x = ag.tensor(xv).to(getattr(ag, dt)).requires_grad_()
        (gx,) = ag.autograd.grad(x.relu(), x, ag.tensor(gv).to(getattr(ag, dt)))
        t = torch.tensor(xv).to(getattr(torch, dt)).requires_grad_()
        (gt,) = torch.autograd.grad(t.relu(), t, torch.tensor(gv).to(getattr(torch, dt)))
        np.testing.assert_array_equal(gx.float().numpy(), gt.float().numpy())
        assert gx.dtype == x.dtype


def test_relu_double_backward():
    x = ag.tensor([-1.0, 0.5, 2.0, -3.0], dtype=ag.float64, requires_grad=True)
    assert ag.autograd.gradgradcheck(lambda t: t.relu() * t, (x,))
    g = ag.ones(4, dtype=ag.float64, requires_grad=True)
    (gx,) = ag.autograd.grad(x.relu(), x, g, create_graph=True)
    (gg,) = ag.autograd.grad(gx.sum(), g)
    np.testing.assert_array_equal(gg.numpy(), [0.0, 1.0, 1.0, 0.0])


def test_linear_weight_grad_is_stolen_not_copied():
    # mm_mat2_backward's transposed product, transposed back by TBackward, becomes .grad as is
    # (torch steals it too): no copy in backward, and .grad is a plain contiguous tensor.
    lin = ag.nn.Linear(64, 32)
    x = ag.randn(8, 64)
    y = lin(x)
    with ag.autograd.profiler.profile() as prof:
        y.backward(ag.ones(8, 32))
    assert not [e for e in prof.function_events if e.name == "aten::copy"]
    assert lin.weight.grad.is_contiguous() and not lin.weight.grad._is_view()
    np.testing.assert_allclose(lin.weight.grad.numpy(), np.ones((32, 8)) @ x.numpy(), rtol=1e-5)


@pytest.mark.parametrize("order", ["a_first", "p_first"])
def test_stolen_grads_never_alias(order):
    # The same incoming gradient reaches a (as is) and p (as a transposed view of it): at most one
    # of them may own that memory.
    a = ag.randn(4, 3, requires_grad=True)
    p = ag.randn(3, 4, requires_grad=True)
    y = a + p.t() if order == "a_first" else p.t() + a
    y.backward(ag.ones(4, 3))
    a.grad.mul_(5.0)
    np.testing.assert_array_equal(p.grad.numpy(), np.ones((3, 4)))
    np.testing.assert_array_equal(a.grad.numpy(), np.full((4, 3), 5.0))
