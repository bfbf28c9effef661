"""Grad modes against torch: no_grad, enable_grad, set_grad_enabled (context manager, decorator,
function form), inference_mode and inference tensors, is_grad_enabled, thread-locality."""
import threading

import numpy as np
import pytest

import ampgrad as ag


@pytest.fixture(autouse=True)
def _restore_grad_mode():
    yield
    ag.set_grad_enabled(True)
    assert ag.is_grad_enabled() and not ag.is_inference_mode_enabled()


LIBS = ["ag", "torch"]


def get_lib(name):
    return ag if name == "ag" else pytest.importorskip("torch")


@pytest.fixture(params=LIBS)
def lib(request):
    return get_lib(request.param)


def test_module_aliases(lib):
    assert lib.no_grad is lib.autograd.no_grad
    assert lib.enable_grad is lib.autograd.enable_grad
    assert lib.set_grad_enabled is lib.autograd.set_grad_enabled
    assert lib.inference_mode is lib.autograd.inference_mode
    assert lib.is_grad_enabled()


def test_no_grad_context(lib):
    x = lib.ones(3, requires_grad=True)
    with lib.no_grad():
        assert not lib.is_grad_enabled()
        y = x * 2
        assert not y.requires_grad and y.grad_fn is None
        v = x[0]  # a view requires grad through its base, but has no history
        assert v.requires_grad and v.grad_fn is None and v.is_leaf
        w = x.requires_grad_()  # flags can still be set
        assert w.requires_grad
    assert lib.is_grad_enabled()
    assert (x * 2).requires_grad


def test_no_grad_nested_and_exception(lib):
    with lib.no_grad():
        with lib.no_grad():
            assert not lib.is_grad_enabled()
        assert not lib.is_grad_enabled()
        with lib.enable_grad():
            assert lib.is_grad_enabled()
            x = lib.ones(2, requires_grad=True)
            assert (x * 2).requires_grad
        assert not lib.is_grad_enabled()
    with pytest.raises(ValueError):
        with lib.no_grad():
            raise ValueError("x")
    assert lib.is_grad_enabled()
    with pytest.raises(ValueError):
        with lib.no_grad():
            with lib.enable_grad():
                raise ValueError("x")
    assert lib.is_grad_enabled()


def test_no_grad_decorator(lib):
    @lib.no_grad()
    def f(x):
        """doc"""
        return x * 2, lib.is_grad_enabled()

    @lib.no_grad
    def g(x):
        return x * 3

    x = lib.ones(2, requires_grad=True)
    y, mode = f(x)
    assert not mode and not y.requires_grad
    assert f.__name__ == "f" and f.__doc__ == "doc"
    assert not g(x).requires_grad
    assert lib.is_grad_enabled()

    @lib.enable_grad
    def h(x):
        return x * 2

    with lib.no_grad():
        assert h(x).requires_grad
        assert not lib.is_grad_enabled()


def test_decorator_reentrant_and_recursive(lib):
    @lib.no_grad()
    def rec(n):
        assert not lib.is_grad_enabled()
        if n:
            with lib.enable_grad():
                assert lib.is_grad_enabled()
                rec(n - 1)
                assert lib.is_grad_enabled()
            assert not lib.is_grad_enabled()
    rec(3)
    assert lib.is_grad_enabled()


def test_decorated_generator(lib):
    @lib.no_grad()
    def gen(n):
        for i in range(n):
            x = yield (i, lib.is_grad_enabled())
            assert x is None or x == "sent"
        return "done"

    g = gen(3)
    assert next(g) == (0, False)
    assert lib.is_grad_enabled()  # the mode is on only while the generator runs
    assert g.send("sent") == (1, False)
    assert next(g) == (2, False)
    with pytest.raises(StopIteration) as e:
        next(g)
    assert e.value.value == "done"
    assert lib.is_grad_enabled()
    assert list(gen(2)) == [(0, False), (1, False)]


def test_decorated_generator_throw_close(lib):
    seen = []

    @lib.no_grad()
    def gen():
        try:
            yield 1
        except KeyError:
            seen.append(lib.is_grad_enabled())
            yield 2
        finally:
            seen.append(("finally", lib.is_grad_enabled()))

    g = gen()
    next(g)
    assert g.throw(KeyError("k")) == 2
    g.close()
    assert seen == [False, ("finally", False)]
    assert lib.is_grad_enabled()


def test_set_grad_enabled_function_form(lib):
    r = lib.set_grad_enabled(False)
    assert not lib.is_grad_enabled()
    x = lib.ones(2, requires_grad=True)
    assert not (x * 2).requires_grad
    lib.set_grad_enabled(True)
    assert lib.is_grad_enabled()
    assert isinstance(r, lib.set_grad_enabled)


def test_set_grad_enabled_context(lib):
    x = lib.ones(2, requires_grad=True)
    with lib.set_grad_enabled(False):
        assert not lib.is_grad_enabled()
        assert not (x * 2).requires_grad
        with lib.set_grad_enabled(True):
            assert (x * 2).requires_grad
        assert not lib.is_grad_enabled()
    assert lib.is_grad_enabled()
    with lib.no_grad():
        with lib.set_grad_enabled(True):
            assert lib.is_grad_enabled()
        assert not lib.is_grad_enabled()
    for mode in (True, False):
        with lib.set_grad_enabled(mode):
            assert lib.is_grad_enabled() == mode


def test_set_grad_enabled_decorator(lib):
    @lib.set_grad_enabled(False)
    def f():
        return lib.is_grad_enabled()

    assert lib.is_grad_enabled()  # decorating does not leave the mode changed
    assert f() is False
    assert lib.is_grad_enabled()

    with lib.no_grad():
        @lib.set_grad_enabled(True)
        def g():
            return lib.is_grad_enabled()
        assert not lib.is_grad_enabled()
        assert g() is True
        assert not lib.is_grad_enabled()


def test_set_grad_enabled_bad_argument():
    torch = pytest.importorskip("torch")
    for bad in (1, None, "yes"):
        msgs = []
        for lib in (ag, torch):
            with pytest.raises(TypeError) as e:
                lib.set_grad_enabled(bad)
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]
    assert ag.is_grad_enabled()


def test_inference_mode_basic(lib):
    x = lib.ones(3, requires_grad=True)
    with lib.inference_mode():
        assert lib.is_inference_mode_enabled() and not lib.is_grad_enabled()
        y = x * 2
        assert not y.requires_grad and y.is_inference()
        with lib.enable_grad():  # nothing is recorded in inference mode
            assert lib.is_grad_enabled()
            z = x * 2
            assert not z.requires_grad and z.is_inference()
        with lib.inference_mode(False):
            assert not lib.is_inference_mode_enabled() and lib.is_grad_enabled()
            w = x * 2
            assert w.requires_grad and not w.is_inference()
        v = x[0]  # a view of a normal tensor is a normal tensor
        assert not v.is_inference()
        c = lib.ones(2)
        assert c.is_inference()
        c.add_(1)  # in place inside the mode is fine
    assert not lib.is_inference_mode_enabled() and lib.is_grad_enabled()
    assert not x.is_inference()
    assert y[0].is_inference() and y.view(3).is_inference() and y.detach().is_inference()


def test_inference_mode_decorator(lib):
    @lib.inference_mode()
    def f():
        return lib.is_inference_mode_enabled(), lib.is_grad_enabled()

    @lib.inference_mode
    def g():
        return lib.is_inference_mode_enabled()

    @lib.inference_mode(False)
    def h():
        return lib.is_inference_mode_enabled()

    assert f() == (True, False)
    assert g() is True
    with lib.inference_mode():
        assert h() is False
        assert lib.is_inference_mode_enabled()
    assert not lib.is_inference_mode_enabled()


def test_inference_mode_restores_after_exception(lib):
    with lib.no_grad():
        with pytest.raises(KeyError):
            with lib.inference_mode():
                raise KeyError
        assert not lib.is_grad_enabled() and not lib.is_inference_mode_enabled()
    with lib.no_grad():
        with lib.inference_mode(False):
            assert lib.is_grad_enabled()
        assert not lib.is_grad_enabled()


def _inference_errors(lib):
    x = lib.ones(3, requires_grad=True)
    with lib.inference_mode():
        y = lib.ones(3) * 2
    out = []
    for f in (lambda: y._version, lambda: y.add_(1), lambda: y[0].mul_(2), lambda: y.requires_grad_(),
              lambda: (y * x).sum().backward()):
        with pytest.raises(RuntimeError) as e:
            f()
        out.append(str(e.value))
    # allowed: ops that save nothing of y, and a clone
    (y + x).sum().backward()
    (y.clone() * x).sum().backward()
    out.append(x.grad.tolist())
    return out


def test_inference_tensor_errors():
    torch = pytest.importorskip("torch")
    assert _inference_errors(ag) == _inference_errors(torch)


def test_inference_mode_cannot_save_for_backward_inside():
    # inside the mode, saving is not an error (nothing is recorded at all)
    torch = pytest.importorskip("torch")
    for lib in (ag, torch):
        x = lib.ones(3, requires_grad=True)
        with lib.inference_mode():
            y = lib.ones(3)
            z = (x * y).sum()
            assert not z.requires_grad


def _thread_state(lib, out):
    out.append(lib.is_grad_enabled())
    out.append(lib.is_inference_mode_enabled())
    x = lib.ones(2, requires_grad=True)
    out.append((x * 2).requires_grad)


def test_thread_local(lib):
    out = []
    with lib.no_grad():
        t = threading.Thread(target=_thread_state, args=(lib, out))
        t.start()
        t.join()
        assert not lib.is_grad_enabled()
    assert out == [True, False, True]
    out = []
    with lib.inference_mode():
        t = threading.Thread(target=_thread_state, args=(lib, out))
        t.start()
        t.join()
    assert out == [True, False, True]


def test_thread_does_not_leak_mode_back(lib):
    def worker():
        lib.set_grad_enabled(False)
        assert not lib.is_grad_enabled()
    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert lib.is_grad_enabled()


def test_backward_in_thread(lib):
    res = {}

    def worker():
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (x * x).sum().backward()
        res["g"] = x.grad.tolist()
    with lib.no_grad():
        t = threading.Thread(target=worker)
        t.start()
        t.join()
    assert res["g"] == [2.0, 4.0]


def test_concurrent_backward_threads():
    # independent graphs on several threads at once
    errors = []

    def worker(k):
        try:
            for _ in range(20):
                x = ag.tensor([1.0, 2.0, 3.0], requires_grad=True)
                y = x
                for _ in range(50):
                    y = (y * 1.01).tanh() + x * 0.1
                y.sum().backward()
                assert np.isfinite(x.grad.numpy()).all()
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)
    ts = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors


def test_grad_mode_in_backward_hooks(lib):
    modes = []
    x = lib.ones(2, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: modes.append(lib.is_grad_enabled()))
    y.sum().backward(retain_graph=True)
    y.sum().backward(create_graph=True)
    assert modes == [False, True]
    assert lib.is_grad_enabled()


def test_class_decoration_warns(lib):
    class A:
        def __init__(self):
            self.mode = lib.is_grad_enabled()
    with pytest.warns(FutureWarning):
        B = lib.no_grad()(A)
    assert B().mode is False


# ---------------------------------------------------------------- views made in no_grad / inference
def _view_mode_errors(lib):
    out = []

    def catch(f):
        try:
            r = f()
            out.append(("ok", r if isinstance(r, (bool, tuple, type(None))) else "Tensor"))
        except RuntimeError as e:
            out.append(("err", str(e)))

    x = lib.ones(3, requires_grad=True)
    with lib.no_grad():
        v = x[:2]
    catch(lambda: (v.requires_grad, v.grad_fn is None, v.is_leaf, v._is_view()))
    catch(lambda: v.mul_(2))  # direct: made in no_grad, modified with grad on
    catch(lambda: v[0].mul_(2))  # a view of it: "Output 0 of Select is a view of a view ..."
    catch(lambda: (v * 2).grad_fn.next_functions[0][0])  # no edge to x
    catch(lambda: v.backward(lib.ones(2)))
    catch(lambda: lib.autograd.grad((x * 2).sum(), v))
    with lib.no_grad():
        v.mul_(2)  # fine inside no_grad
    catch(lambda: v.grad_fn)  # base modified with a moved version: indirect error

    y = x * 1
    with lib.no_grad():
        vy = y[1:]
    y.mul_(2)  # recorded in-place on the base
    catch(lambda: vy.grad_fn)
    catch(lambda: (vy * 2).sum())

    a = lib.ones(3)
    with lib.no_grad():
        va = a[1:]
    catch(lambda: va.add_(lib.ones(2, requires_grad=True)))
    catch(lambda: va.add_(1))  # nothing requires grad: fine

    with lib.inference_mode():
        vi = x[:2]
    catch(lambda: (vi.requires_grad, vi.is_inference()))
    catch(lambda: vi.mul_(2))
    z = x * 1
    with lib.inference_mode():
        vz = z[:2]
    z.mul_(2)
    catch(lambda: vz.grad_fn)
    return out


def test_views_created_in_no_grad_and_inference_mode():
    torch = pytest.importorskip("torch")
    a, t = _view_mode_errors(ag), _view_mode_errors(torch)
    assert len(a) == len(t)
    for ra, rt in zip(a, t):
        assert ra == rt
