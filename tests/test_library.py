"""ampgrad.library (issue 18, point 6): the torch 2.13 documentation's custom-op examples (custom_op,
register_kernel, register_autograd, register_fake, register_autocast, Library.define / impl, opcheck,
torch.ops.<ns>.<name>) run once with torch and once with ampgrad; outputs, dtypes under autocast,
gradients (and float64 gradcheck), backward node names and error types / messages are compared."""
import numpy as np
import pytest
import torch

import ampgrad
from ampgrad import library as aglib

BOTH = pytest.mark.parametrize("M", [torch, ampgrad], ids=["torch", "ampgrad"])


def both(fn, *args):
    """fn(torch, *args), fn(ampgrad, *args)."""
    return fn(torch, *args), fn(ampgrad, *args)


def np_(v):
    if isinstance(v, (tuple, list)):
        return [np_(x) for x in v]
    if isinstance(v, (torch.Tensor, ampgrad.Tensor)):
        return v.detach().float().numpy() if v.dtype in (torch.bfloat16, ampgrad.bfloat16) else v.detach().numpy()
    return v


def same(a, b, rtol=1e-6, atol=1e-7):
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y, rtol, atol)
        return
    np.testing.assert_allclose(np_(b), np_(a), rtol=rtol, atol=atol)


def err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type and text are what is compared
        return type(e).__name__, str(e)
    return None


def x_of(M, *shape, seed=0, dtype=np.float32):
    return M.from_numpy(np.random.default_rng(seed).standard_normal(shape).astype(dtype))


# ---- custom_op (torch.library.custom_op docstring examples)
def _numpy_sin(M, ns="mylib"):
    @M.library.custom_op(f"{ns}::numpy_sin", mutates_args=())
    def numpy_sin(x: M.Tensor) -> M.Tensor:
        x_np = x.cpu().numpy()
        y_np = np.sin(x_np)
        return M.from_numpy(y_np).to(device=x.device)
    return numpy_sin


def test_custom_op_numpy_sin():
    def run(M):
        numpy_sin = _numpy_sin(M)
        x = x_of(M, 3)
        y = numpy_sin(x)
        assert M.allclose(y, x.sin())
        return y, M.ops.mylib.numpy_sin(x), M.ops.mylib.numpy_sin.default(x), numpy_sin._schema, repr(numpy_sin), \
            str(M.ops.mylib.numpy_sin.default), M.ops.mylib.numpy_sin.overloads()
    t, a = both(run)
    same(t[:3], a[:3])
    assert t[3:] == a[3:]


def test_custom_op_device_types_inplace_out_factory_list():
    def run(M):
        @M.library.custom_op("mylib::numpy_sin_cpu", mutates_args=(), device_types="cpu")
        def numpy_sin_cpu(x: M.Tensor) -> M.Tensor:
            return M.from_numpy(np.sin(x.numpy()))

        @M.library.custom_op("mylib::numpy_sin_inplace", mutates_args={"x"}, device_types="cpu")
        def numpy_sin_inplace(x: M.Tensor) -> None:
            x_np = x.numpy()
            np.sin(x_np, out=x_np)

        @M.library.custom_op("mylib::numpy_sin_", mutates_args={"x"}, device_types="cpu", tags=M.Tag.inplace)
        def numpy_sin_(x: M.Tensor) -> M.Tensor:
            x_np = x.numpy()
            np.sin(x_np, out=x_np)
            return x

        @M.library.custom_op("mylib::numpy_sin_out", mutates_args={"out"}, device_types="cpu", tags=M.Tag.out)
        def numpy_sin_out(x: M.Tensor, *, out: M.Tensor) -> M.Tensor:
            np.sin(x.numpy(), out=out.numpy())
            return out

        @M.library.custom_op("mylib::bar", mutates_args={}, device_types="cpu")
        def bar(device: M.device) -> M.Tensor:
            return M.ones(3)

        @M.library.custom_op("mylib::weighted_sum", mutates_args=())
        def weighted_sum(tensors: list[M.Tensor], weights: list[float]) -> M.Tensor:
            return sum(t * w for t, w in zip(tensors, weights))

        x = x_of(M, 3)
        r = [numpy_sin_cpu(x)]
        x1 = x.clone()
        v = x1._version
        assert numpy_sin_inplace(x1) is None
        r += [x1, x1._version - v]
        x2 = x.clone()
        assert numpy_sin_(x2) is x2
        out = M.empty_like(x)
        assert numpy_sin_out(x, out=out) is out
        r += [x2, out, bar("cpu"), weighted_sum([x, x_of(M, 3, seed=1)], [0.3, 0.7])]
        schemas = [f._schema for f in (numpy_sin_inplace, numpy_sin_, numpy_sin_out, bar, weighted_sum)]
        return r, schemas
    (t, ts), (a, as_) = both(run)
    same(t, a)
    assert ts == as_


def test_infer_schema_matches_torch():
    def run(M):
        def f1(x: M.Tensor, n: int = 2, *, val: float = 1.0) -> M.Tensor: ...
        def f2(x: M.Tensor, y: list[M.Tensor], z: M.Tensor | None, d: M.dtype = M.float32, s: str = "a") \
            -> tuple[M.Tensor, M.Tensor]: ...
        def f3(x: M.Tensor, flag: bool, scale: float | None = None, sizes: list[int] | None = None) -> list[M.Tensor]: ...
        def f4(x: M.Tensor, dev: M.device) -> tuple[M.Tensor, int]: ...
        def f5(x: M.Tensor, ys: list[M.Tensor | None]) -> None: ...
        return [M.library.infer_schema(f1, mutates_args=()), M.library.infer_schema(f2, mutates_args=("x", "y")),
                M.library.infer_schema(f3, mutates_args="unknown"), M.library.infer_schema(f4, mutates_args=()),
                M.library.infer_schema(f5, mutates_args=(), op_name="f5")]
    t, a = both(run)
    assert t == a


def test_infer_schema_errors():
    def run(M):
        def no_ann(x): return x
        def no_ret(x: M.Tensor): return x
        def tup(x: tuple[int, int]) -> M.Tensor: ...
        def var(*xs: M.Tensor) -> M.Tensor: ...
        def m(x: M.Tensor, n: int) -> M.Tensor: ...
        out = []
        for fn, kw in [(no_ann, {}), (no_ret, {}), (tup, {}), (var, {}), (m, {"mutates_args": ("q",)}),
                       (m, {"mutates_args": ("n",)}), (m, {"mutates_args": "all"})]:
            kw = {"mutates_args": (), **kw}
            e = err(lambda: M.library.custom_op("mylib::bad", **kw)(fn))
            out.append((e[0], e[1].split(" Got func")[0].split(" The valid types")[0].split("(")[0]))
        out.append(err(lambda: M.library.custom_op("nonamespace", mutates_args=())(m))[0])
        return out
    t, a = both(run)
    assert t == a


def test_call_errors_match_torch():
    def run(M):
        @M.library.custom_op("mylib::f", mutates_args=())
        def f(x: M.Tensor, n: int = 2, *, val: float = 1.0) -> M.Tensor:
            return x * val * n

        @M.library.custom_op("mylib::g", mutates_args=())
        def g(x: M.Tensor) -> M.Tensor:
            return x

        x = x_of(M, 3)
        res = [f(x, 3, val=0.5), f(x)]
        errs = [err(lambda: f(x, 1, 2)), err(lambda: f(x, 1, val=2, foo=3)), err(lambda: f(x, 1.5)),
                err(lambda: f()), err(lambda: f(3)), err(lambda: g(x, 1)), err(lambda: g(3)), err(lambda: g(y=x)),
                err(lambda: M.ops.mylib.nope), err(lambda: M.ops.mylib.g.foo), err(lambda: g(x))]
        return res, errs
    (tr, te), (ar, ae) = both(run)
    same(tr, ar)
    for t_, a_ in zip(te, ae):
        assert t_[0] == a_[0]
    # messages that carry no C++ float formatting are the same text
    for k in (0, 1, 3, 5, 7, 8, 9):
        assert te[k] == ae[k], (te[k], ae[k])
    assert te[10][1].split("): ", 1)[1] == ae[10][1].split("): ", 1)[1]  # the output aliases the input
    assert te[4][1].split("\n")[0] == ae[4][1].split("\n")[0]


# ---- register_autograd (docstring examples) + gradcheck, double backward, node names
def test_register_autograd_numpy_sin():
    def run(M):
        numpy_sin = _numpy_sin(M, "agrad")

        def setup_context(ctx, inputs, output):
            x, = inputs
            ctx.save_for_backward(x)

        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * x.cos()

        numpy_sin.register_autograd(backward, setup_context=setup_context)
        x = x_of(M, 3).requires_grad_()
        y = numpy_sin(x)
        (grad_x,) = M.autograd.grad(y, x, M.ones_like(y), create_graph=True)
        assert M.allclose(grad_x, x.cos())
        (gg,) = M.autograd.grad(grad_x.sum(), x)  # double backward through the formula's ops
        xd = x_of(M, 4, dtype=np.float64).requires_grad_()
        ok = M.autograd.gradcheck(numpy_sin, (xd,))
        return grad_x, gg, y.grad_fn.name(), ok, y.requires_grad
    t, a = both(run)
    same(t[:2], a[:2])
    assert t[2:] == a[2:]
    assert t[2] == "GeneratedBackwardFor_agrad_numpy_sin_defaultBackward"


def test_register_autograd_kwarg_only_and_multiple_outputs():
    def run(M):
        @M.library.custom_op("mylib::numpy_mul", mutates_args=())
        def numpy_mul(x: M.Tensor, *, val: float) -> M.Tensor:
            return M.from_numpy(x.cpu().numpy() * val).to(device=x.device)

        def setup_context(ctx, inputs, keyword_only_inputs, output):
            ctx.val = keyword_only_inputs["val"]

        def backward(ctx, grad):
            return grad * ctx.val

        numpy_mul.register_autograd(backward, setup_context=setup_context)

        @M.library.custom_op("mylib::split2", mutates_args=())
        def split2(x: M.Tensor, y: M.Tensor, k: int) -> tuple[M.Tensor, M.Tensor]:
            return x * y * k, x + y

        def setup2(ctx, inputs, output):
            x, y, k = inputs
            ctx.save_for_backward(x, y)
            ctx.k = k

        def backward2(ctx, g1, g2):
            x, y = ctx.saved_tensors
            gx = g1 * y * ctx.k + g2 if ctx.needs_input_grad[0] else None
            gy = g1 * x * ctx.k + g2 if ctx.needs_input_grad[1] else None
            return gx, gy, None

        M.library.register_autograd("mylib::split2", backward2, setup_context=setup2)
        x = x_of(M, 3).requires_grad_()
        y = numpy_mul(x, val=3.14)
        (grad_x,) = M.autograd.grad(y, x, M.ones_like(y))
        assert M.allclose(grad_x, M.full_like(x, 3.14))
        a, b = x_of(M, 4, seed=1).requires_grad_(), x_of(M, 4, seed=2)
        o1, o2 = split2(a, b, 3)
        (o1 * 2 + o2 * o2).sum().backward()
        ad, bd = x_of(M, 3, dtype=np.float64).requires_grad_(), x_of(M, 3, seed=3, dtype=np.float64).requires_grad_()
        ok = M.autograd.gradcheck(lambda p, q: split2(p, q, 2), (ad, bd))
        return grad_x, o1, o2, a.grad, b.grad, ok, o1.grad_fn.name()
    t, a = both(run)
    same(t[:4], a[:4])
    assert t[4] is None and a[4] is None
    assert t[5:] == a[5:]


def test_register_autograd_tensor_list():
    def run(M):
        @M.library.custom_op("mylib::wsum", mutates_args=())
        def wsum(tensors: list[M.Tensor], weights: list[float]) -> M.Tensor:
            return sum(t * w for t, w in zip(tensors, weights))

        def setup(ctx, inputs, output):
            ctx.w = inputs[1]

        def backward(ctx, g):
            return [g * w for w in ctx.w], None

        wsum.register_autograd(backward, setup_context=setup)
        xs = [x_of(M, 3, seed=i).requires_grad_() for i in range(3)]
        wsum(xs, [0.5, -1.0, 2.0]).sum().backward()
        return [x.grad for x in xs]
    same(*both(run))


def test_missing_backward_error_as_torch():
    def run(M):
        numpy_sin = _numpy_sin(M, "nobw")
        x = x_of(M, 3).requires_grad_()
        y = numpy_sin(x)
        return y.grad_fn.name(), err(lambda: y.sum().backward()), numpy_sin(x.detach()).requires_grad
    t, a = both(run)
    assert t == a


def test_register_autograd_non_functional_error():
    def run(M):
        @M.library.custom_op("mylib::g9", mutates_args=("x",))
        def g9(x: M.Tensor) -> None:
            x.add_(1)
        e = err(lambda: g9.register_autograd(lambda ctx, g: g))
        x = x_of(M, 3)
        v = x._version
        g9(x)
        return e[0], e[1].split(" with schema")[0], x._version - v
    t, a = both(run)
    assert t == a


def test_aliasing_output_error():
    def run(M):
        @M.library.custom_op("mylib::ident", mutates_args=())
        def ident(x: M.Tensor) -> M.Tensor:
            return x
        e = err(lambda: ident(x_of(M, 3)))
        return e[0], e[1].split("): ")[1]
    t, a = both(run)
    assert t == a


# ---- register_fake + opcheck
def test_register_fake_and_opcheck():
    def run(M):
        @M.library.custom_op("mylib::linear", mutates_args=())
        def linear(x: M.Tensor, weight: M.Tensor, bias: M.Tensor) -> M.Tensor:
            return (x @ weight.t()) + bias

        @linear.register_fake
        def _(x, weight, bias):
            assert x.dim() == 2 and weight.dim() == 2 and bias.dim() == 1
            assert x.shape[1] == weight.shape[1] and weight.shape[0] == bias.shape[0]
            return x.new_empty(x.size(0), weight.size(0))

        @M.library.custom_op("mylib::badfake", mutates_args=())
        def badfake(x: M.Tensor) -> M.Tensor:
            return x * 2

        @badfake.register_fake
        def _(x):
            return x.new_empty(x.size(0) + 1)

        @M.library.custom_op("mylib::nofake", mutates_args=())
        def nofake(x: M.Tensor) -> M.Tensor:
            return x * 2

        args = (x_of(M, 2, 3), x_of(M, 4, 3, seed=1), x_of(M, 4, seed=2))
        res = M.library.opcheck(linear, args, test_utils=("test_schema", "test_faketensor"))
        bad = M.library.opcheck(badfake, (x_of(M, 3),), test_utils="test_faketensor", raise_exception=False)
        nof = M.library.opcheck(nofake, (x_of(M, 3),), test_utils="test_faketensor", raise_exception=False)
        with pytest.raises(Exception) as ei:
            M.library.opcheck(badfake, (x_of(M, 3),), test_utils="test_faketensor")
        return res, type(bad["test_faketensor"]).__name__, isinstance(nof["test_faketensor"], Exception), \
            type(ei.value).__name__, linear(*args)
    t, a = both(run)
    assert t[:4] == a[:4]
    assert t[0] == {"test_schema": "SUCCESS", "test_faketensor": "SUCCESS"}
    same(t[4], a[4], rtol=1e-5, atol=1e-6)


def test_opcheck_autograd_registration():
    def run(M):
        numpy_sin = _numpy_sin(M, "opc")
        numpy_sin.register_fake(lambda x: M.empty_like(x))
        numpy_sin.register_autograd(lambda ctx, g: g * ctx.saved_tensors[0].cos(),
                                    setup_context=lambda ctx, inputs, output: ctx.save_for_backward(inputs[0]))
        x = x_of(M, 3).requires_grad_()
        return M.library.opcheck(numpy_sin, (x,), test_utils=("test_schema", "test_autograd_registration",
                                                              "test_faketensor"))
    t, a = both(run)
    assert t == a


# ---- register_autocast: the op table's gate (nested regions, enabled=False, eligibility, cast cache)
def _mm_op(M, ns, with_rule, cast_inputs=None):
    @M.library.custom_op(f"{ns}::mm", mutates_args=())
    def mm(x: M.Tensor, y: M.Tensor) -> M.Tensor:
        return x @ y

    @M.library.custom_op(f"{ns}::mm_fp32", mutates_args=())
    def mm_fp32(x: M.Tensor, y: M.Tensor) -> M.Tensor:
        return M.mm(x.float(), y.float())  # built-in: not autocast again inside a gated op

    def setup(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g @ y.t(), x.t() @ g

    mm.register_autograd(backward, setup_context=setup)
    if with_rule:
        M.library.register_autocast(f"{ns}::mm", "cpu", cast_inputs)
        mm_fp32.register_autocast("cpu", cast_inputs)
    return mm, mm_fp32


def test_register_autocast_dtypes_as_torch():
    def run(M):
        plain, plain32 = _mm_op(M, "acnone", False)
        mm, mm32 = _mm_op(M, "acrule", True, M.float16)
        a, b = x_of(M, 4, 4), x_of(M, 4, 4, seed=1)
        out = []
        with M.autocast("cpu", dtype=M.bfloat16):
            out += [plain(a, b), mm(a, b), mm32(a, b), plain32(a, b), mm(a.double(), b.double()),
                    M.ops.acrule.mm(a, b), M.ops.acrule.mm.default(a, b)]
            with M.autocast("cpu", enabled=False):
                out += [mm(a, b)]
            with M.autocast("cpu", dtype=M.float16):
                out += [mm(a, b), plain(a, b)]
            out += [mm(a.to(M.bfloat16), b)]
        out += [mm(a, b)]
        return [(o.dtype, np_(o)) for o in out]
    t, a = both(run)
    assert [str(x[0]).split(".")[-1] for x in t] == [str(x[0]).split(".")[-1] for x in a]
    assert [str(x[0]).split(".")[-1] for x in a] == ["bfloat16", "float16", "float32", "bfloat16", "float64",
                                                     "float16", "float16", "float32", "float16", "float16",
                                                     "float16", "float32"]
    for (_, x), (_, y) in zip(t, a):
        np.testing.assert_allclose(y.astype(np.float64), x.astype(np.float64), rtol=2e-2, atol=2e-2)


def test_register_autocast_gradients_and_cache():
    def run(M):
        mm, _ = _mm_op(M, "acgrad", True, M.float16)
        w = x_of(M, 4, 4, seed=3).requires_grad_()
        x = x_of(M, 2, 4, seed=4).requires_grad_()
        idx = M.tensor([1, 2])
        with M.autocast("cpu", dtype=M.bfloat16):
            y = mm(x, w)
            y2 = mm(x, w)
        (y.float().sum() + y2.float().sum()).backward()
        return y.dtype, y.grad_fn.name(), w.grad.dtype, w.grad, x.grad, idx.dtype
    t, a = both(run)
    assert str(t[0]) == str(a[0]).replace("ampgrad", "torch") and t[1] == a[1]
    assert str(a[2]) == "ampgrad.float32"
    same(t[3:5], a[3:5], rtol=2e-2, atol=2e-2)


def test_register_autocast_uses_the_cast_cache_and_gate():
    mm, _ = _mm_op(ampgrad, "accache", True, ampgrad.float16)
    w = x_of(ampgrad, 4, 4, seed=3).requires_grad_()
    x = x_of(ampgrad, 2, 4, seed=4)
    n0 = ampgrad._C._autocast_cache_size()
    with ampgrad.autocast("cpu", dtype=ampgrad.bfloat16):
        mm(x, w)
        mm(x, w)
        assert ampgrad._C._autocast_cache_size() == n0 + 1  # the fp32 leaf weight is cast once per region
        assert ampgrad._C._autocast_gate_open("cpu")
    assert ampgrad._C._autocast_cache_size() == 0
    assert not ampgrad._C._autocast_gate_open("cpu")
    # inside a custom op's rule, autocast is excluded on that device (as inside a built-in gated op)
    seen = []

    @ampgrad.library.custom_op("accache::probe", mutates_args=())
    def probe(x: ampgrad.Tensor) -> ampgrad.Tensor:
        seen.append(ampgrad._C._autocast_gate_open("cpu"))
        return x.clone()
    probe.register_autocast("cpu", ampgrad.float16)
    with ampgrad.autocast("cpu"):
        assert probe(x).dtype == ampgrad.float16
    assert seen == [False]


def test_register_autocast_errors():
    def run(M):
        mm, _ = _mm_op(M, "acerr", False)
        return [err(lambda: M.library.register_autocast(3, "cpu", M.float16))[0],
                err(lambda: M.library.register_autocast("acerr::nope", "cpu", M.float16)),
                err(lambda: mm.register_autocast(1, M.float16))[0]]
    t, a = both(run)
    assert t == a


# ---- Library(ns, kind).define / impl, torch.library.define / impl
def test_library_define_impl():
    def run(M):
        lib = M.library.Library("agdef", "DEF")
        name = lib.define("sum3(Tensor x, Tensor y, Tensor z) -> Tensor")
        lib.impl("sum3", lambda x, y, z: x + y + z, "CPU")
        lib.define("sin2(Tensor x) -> Tensor")
        lib.impl("sin2", lambda x: x.sin() * 2, "CompositeImplicitAutograd")
        M.library.define("agdef2::scale", "(Tensor x, float s) -> Tensor")

        @M.library.impl("agdef2::scale", "cpu")
        def scale(x, s):
            return x * s

        a = x_of(M, 3).requires_grad_()
        s2 = M.ops.agdef.sin2(a)
        s2.sum().backward()
        out = [M.ops.agdef.sum3(a.detach(), a.detach(), a.detach()), s2, a.grad, M.ops.agdef2.scale(a.detach(), 3.0)]
        errs = [err(lambda: M.library.Library("agdef3", "BAD")), err(lambda: lib.impl("sum3", 3, "CPU")),
                err(lambda: lib.define("sum3(Tensor x, Tensor y, Tensor z) -> Tensor"))[0],
                err(lambda: lib.define("foo(Tensr x) -> Tensor"))[0],
                err(lambda: M.library.define("agdef2::bad", "Tensor x -> Tensor"))]
        lib.define("cpuonly(Tensor x) -> Tensor")
        errs.append(err(lambda: M.ops.agdef.cpuonly(a))[0])
        return name, out, errs, s2.grad_fn.name(), repr(lib)
    t, a = both(run)
    assert t[0] == a[0] and t[2] == a[2] and t[3] == a[3] and t[4] == a[4]
    same(t[1], a[1])


def test_library_autocast_kernel_and_register_autocast_on_defined_op():
    def run(M):
        lib = M.library.Library("agac", "DEF")
        lib.define("mul(Tensor x, Tensor y) -> Tensor")
        lib.impl("mul", lambda x, y: x * y, "CompositeExplicitAutograd")
        M.library.register_autocast("agac::mul", "cpu", M.float16)
        a, b = x_of(M, 3), x_of(M, 3, seed=1)
        with M.autocast("cpu", dtype=M.bfloat16):
            y = M.ops.agac.mul(a, b)
            y2 = M.ops.agac.mul(a, b.double())
            y3 = M.ops.agac.mul(a, M.tensor([1, 2, 3]))
        return [str(v.dtype).split(".")[-1] for v in (y, y2, y3)], [y, y2, y3]
    t, a = both(run)
    assert t[0] == a[0] == ["float16", "float64", "float16"]
    same(t[1], a[1], rtol=1e-3, atol=1e-3)


def test_register_kernel_and_set_kernel_enabled():
    def run(M):
        @M.library.custom_op("mylib::f0", mutates_args=())
        def f(x: M.Tensor) -> M.Tensor:
            return M.zeros(1)

        inp = M.randn(1)
        r = [f(inp)]

        @f.register_kernel("cpu")
        def _(x):
            return M.ones(1)

        r.append(f(inp))
        with f.set_kernel_enabled("cpu", enabled=False):
            r.append(f(inp))
        r.append(f(inp))
        M.library.register_kernel("mylib::f0", "cpu", lambda x: M.full((1,), 5.0))
        r.append(f(inp))
        return r
    same(*both(run))


def test_vmap_of_custom_op():
    def run(M):
        numpy_sin = _numpy_sin(M, "agvmap")
        numpy_sin.register_vmap(lambda info, in_dims, x: (numpy_sin(x), in_dims[0]))
        x = x_of(M, 4, 3)
        return M.vmap(numpy_sin)(x) if hasattr(M, "vmap") else M.func.vmap(numpy_sin)(x)
    same(*both(run))


def test_redefinition_and_namespace_listing():
    def run(M):
        @M.library.custom_op("agredef::f", mutates_args=())
        def f(x: M.Tensor) -> M.Tensor:
            return x + 1

        @M.library.custom_op("agredef::f", mutates_args=())
        def f2(x: M.Tensor) -> M.Tensor:
            return x + 2
        return M.ops.agredef.f(M.zeros(2))
    same(*both(run))


def test_library_destroy_removes_ops():
    with aglib._scoped_library("agscoped", "FRAGMENT") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: x * 3, "CPU")
        assert ampgrad.ops.agscoped.f(ampgrad.ones(2)).tolist() == [3.0, 3.0]
    with pytest.raises(AttributeError):
        ampgrad.ops.agscoped.f


def test_library_mutable_schema_and_autograd_key():
    def run(M):
        lib = M.library.Library("agmut", "DEF")
        lib.define("add_one_(Tensor(a!) x) -> ()")

        def add_one_(x):
            x.add_(1)
        lib.impl("add_one_", add_one_, "CPU")
        x = M.zeros(3)
        v = x._version
        M.ops.agmut.add_one_(x)
        bumps = x._version - v

        @M.library.custom_op("agmut::sin_", mutates_args={"x"}, device_types="cpu", tags=M.Tag.inplace)
        def sin_(x: M.Tensor) -> M.Tensor:
            return x.sin_()
        res = M.library.opcheck(sin_, (x_of(M, 3),), test_utils=("test_schema", "test_faketensor"))
        return x, bumps, res
    t, a = both(run)
    same(t[0], a[0])
    assert t[1:] == a[1:]


def test_opcheck_catches_undeclared_mutation():
    def run(M):
        @M.library.custom_op("agmut2::sneaky", mutates_args=())
        def sneaky(x: M.Tensor) -> M.Tensor:
            x.add_(1)
            return x.clone()
        r = M.library.opcheck(sneaky, (x_of(M, 3),), test_utils="test_schema", raise_exception=False)
        return isinstance(r["test_schema"], Exception)
    t, a = both(run)
    assert t is True and a is True


def test_argument_type_errors_name_types_as_torch():
    def run(M):
        @M.library.custom_op("agtn::h", mutates_args=())
        def h(x: M.Tensor, a: list[M.Tensor], b: M.Tensor | None, c: list[int], d: M.dtype, e: M.device, f: bool,
              s: str, fl: float | None, n: M.types.Number) -> M.Tensor:
            return x.clone()
        good = [M.ones(1), [M.ones(1)], None, [1], M.float32, "cpu", True, "s", None, 2]
        out = [h(*good)]
        for i in range(1, 10):
            bad = list(good)
            bad[i] = "x" if i in (8, 9) else object()
            out.append(err(lambda: h(*bad)))
        return [o if isinstance(o, tuple) is False else (o[0], o[1].split("\n")[0]) for o in out[1:]], out[0]
    t, a = both(run)
    assert t[0] == a[0]
    same(t[1], a[1])


def test_explicit_schema_and_mismatch():
    def run(M):
        def g6(x):
            return x * 3
        op = M.library.custom_op("agsch::g7", mutates_args=(), schema="(Tensor x) -> Tensor")(g6)
        e = err(lambda: M.library.custom_op("agsch::g8", mutates_args=(), schema="(Tensor(a!) x) -> Tensor")(g6))
        e2 = err(lambda: M.library.custom_op("agsch::g9", mutates_args=())(lambda x: x))
        return op._schema, op(M.ones(2)).tolist(), e, e2[0]
    t, a = both(run)
    assert t == a


def test_register_autocast_nested_ops_and_other_device_rule():
    def run(M):
        @M.library.custom_op("agnest::inner", mutates_args=())
        def inner(x: M.Tensor) -> M.Tensor:
            return x * 2

        @M.library.custom_op("agnest::outer", mutates_args=())
        def outer(x: M.Tensor) -> M.Tensor:
            return inner(x.float()) + 1  # inner's rule does not fire inside outer's (autocast excluded)

        @M.library.custom_op("agnest::cuda_only", mutates_args=())
        def cuda_only(x: M.Tensor, w: M.Tensor) -> M.Tensor:
            return x @ w  # no CPU rule: the built-in matmul inside is autocast on CPU

        inner.register_autocast("cpu", M.float16)
        outer.register_autocast("cpu", M.bfloat16)
        cuda_only.register_autocast("cuda", M.float16)
        x = x_of(M, 3, 3)
        with M.autocast("cpu", dtype=M.bfloat16):
            r = [outer(x), inner(x), cuda_only(x, x)]
        return [str(v.dtype).split(".")[-1] for v in r], r
    t, a = both(run)
    assert t[0] == a[0] == ["float32", "float16", "bfloat16"]
    same(t[1], a[1], rtol=1e-2, atol=1e-2)


def test_define_schema_parse_errors_as_torch():
    def run(M):
        lib = M.library.Library("agbs", "FRAGMENT")
        out = []
        for s in ["foo(Tensor x -> Tensor", "foo", "(Tensor x) -> Tensor", "foo(Tensor) -> Tensor",
                  "foo(Tensor x) -> Tensr", "foo(Tensor x, *) -> Tensor", "foo(Tensor x=) -> Tensor",
                  "foo.ov(Tensor x) -> (Tensor a, Tensor b)", "foo(int[2] s, Tensor(a) x) -> Tensor(a)", ""]:
            r = err(lambda: out.append(lib.define(s)))
            out.append(r[0] if r else None)
        return out
    t, a = both(run)
    assert t == a


@pytest.mark.cuda
@pytest.mark.skipif(not ampgrad.cuda.is_available(), reason="no CUDA device")
def test_register_autocast_cuda():
    mm, mm32 = _mm_op(ampgrad, "agcuda", False)
    mm.register_autocast("cuda", ampgrad.float16)
    a = x_of(ampgrad, 4, 4)
    w = x_of(ampgrad, 4, 4, seed=1).cuda().requires_grad_()
    with ampgrad.autocast("cuda"):
        y = mm(a.cuda(), w)
        y_cpu = mm(a, a)  # CPU tensors: the CUDA rule does not apply; CPU autocast is off
    assert y.dtype == ampgrad.float16 and y.is_cuda and y_cpu.dtype == ampgrad.float32
    y.float().sum().backward()
    assert w.grad.dtype == ampgrad.float32
    ref = (a.double() @ w.detach().cpu().double()).numpy()
    np.testing.assert_allclose(y.float().cpu().numpy(), ref, rtol=1e-2, atol=1e-2)
