"""torch.autograd debugging and graph features against torch 2.13 (the reference): Node metadata and
hooks, autograd.graph (saved tensor hooks, save_on_cpu, multi-grad hooks, GradientEdge,
increment_version, allow_mutation_on_saved_tensors), anomaly mode, Variable and
set_multithreading_enabled. Ported from the semantics of PyTorch's test/test_autograd.py."""
import warnings

import numpy as np
import pytest

import ampgrad as ag

G = ag.autograd.graph


def np_of(t):
    return t.detach().numpy()


def close(a, b):
    np.testing.assert_allclose(np_of(a), np_of(b) if not isinstance(b, np.ndarray) else b, rtol=1e-6, atol=1e-7)


def both(torch):
    return (ag, torch)


def error_of(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type and message are what is compared
        return type(e).__name__, str(e)
    return None


# ---------------------------------------------------------------- Node: metadata and hooks
def test_metadata_is_a_persistent_dict():
    a = ag.randn(3, requires_grad=True)
    b = a.exp()
    md = b.grad_fn.metadata
    assert md == {} and isinstance(md, dict)
    md["k"] = 1
    assert b.grad_fn.metadata is md and b.grad_fn.metadata == {"k": 1}
    acc = b.grad_fn.next_functions[0][0]
    acc.metadata["leaf"] = True
    assert b.grad_fn.next_functions[0][0].metadata == {"leaf": True}
    with pytest.raises(AttributeError, match="attribute 'metadata' of 'ExpBackward0' objects is not writable"):
        b.grad_fn.metadata = {}


def test_node_is_graph_node(torch):
    for m in both(torch):
        a = m.ones(2, requires_grad=True)
        b = a * 2
        assert isinstance(b.grad_fn, m.autograd.graph.Node)
        assert isinstance(b.grad_fn.next_functions[0][0], m.autograd.graph.Node)
        assert not isinstance(a, m.autograd.graph.Node)


def _hook_run(m, pre=None, post=None):
    a = m.tensor([1., 2., 3.], requires_grad=True)
    b = m.tensor([4., 5., 6.], requires_grad=True)
    c = a * b
    seen = []
    hs = []
    if pre:
        hs.append(c.grad_fn.register_prehook(lambda go: (seen.append(("pre", [g.tolist() for g in go])), pre(go))[1]))
    if post:
        hs.append(c.grad_fn.register_hook(
            lambda gi, go: (seen.append(("post", [g.tolist() for g in gi], [g.tolist() for g in go])), post(gi, go))[1]))
    c.backward(m.tensor([1., 1., 2.]))
    return a.grad.tolist(), None if b.grad is None else b.grad.tolist(), seen


def test_prehook_replaces_grad_outputs(torch):
    r = [_hook_run(m, pre=lambda go: (go[0] * 10,)) for m in both(torch)]
    assert r[0] == r[1]
    assert r[0][0] == [40., 50., 120.]


def test_post_hook_sees_grads_and_replaces_grad_inputs(torch):
    r = [_hook_run(m, post=lambda gi, go: (gi[0] + 1, None)) for m in both(torch)]
    assert r[0] == r[1]
    assert r[0][0] == [5., 6., 13.] and r[0][1] is None
    assert r[0][2] == [("post", [[4., 5., 12.], [1., 2., 6.]], [[1., 1., 2.]])]


def test_hooks_returning_none_change_nothing_and_order(torch):
    r = [_hook_run(m, pre=lambda go: None, post=lambda gi, go: None) for m in both(torch)]
    assert r[0] == r[1]
    assert [s[0] for s in r[0][2]] == ["pre", "post"]


def test_hook_remove_and_handle_context():
    a = ag.tensor([1., 2.], requires_grad=True)
    b = a * 3
    calls = []
    h = b.grad_fn.register_prehook(lambda go: calls.append("pre"))
    with b.grad_fn.register_hook(lambda gi, go: calls.append("post")):
        b.sum().backward(retain_graph=True)
    h.remove()
    h.remove()  # removing twice is harmless
    b.sum().backward()
    assert calls == ["pre", "post"]
    assert a.grad.tolist() == [6., 6.]


def test_hook_removing_itself_while_running():
    a = ag.tensor([1., 2.], requires_grad=True)
    b = a * 3
    calls = []
    handles = []

    def once(go):
        calls.append(1)
        handles[0].remove()
    handles.append(b.grad_fn.register_prehook(once))
    b.sum().backward(retain_graph=True)
    b.sum().backward()
    assert calls == [1]


_BAD_POST = [lambda gi, go: 3, lambda gi, go: (gi[0], gi[0], gi[0]), lambda gi, go: [gi[0], gi[1]],
             lambda gi, go: (3, None), lambda gi, go: (gi[0][:1], None), lambda gi, go: (gi[0].double(), None)]
_BAD_PRE = [lambda go: 3, lambda go: (go[0], go[0]), lambda go: ("x",), lambda go: (go[0][:2],),
            lambda go: (go[0].double(),)]


@pytest.mark.parametrize("i", range(len(_BAD_POST)))
def test_post_hook_bad_return_matches_torch(torch, i):
    errs = []
    for m in both(torch):
        a = m.tensor([1., 2., 3.], requires_grad=True)
        c = a * m.tensor([4., 5., 6.], requires_grad=True)
        c.grad_fn.register_hook(_BAD_POST[i])
        errs.append(error_of(lambda: c.sum().backward()))
    assert errs[0] is not None and errs[0] == errs[1]


@pytest.mark.parametrize("i", range(len(_BAD_PRE)))
def test_prehook_bad_return_matches_torch(torch, i):
    errs = []
    for m in both(torch):
        a = m.tensor([1., 2., 3.], requires_grad=True)
        c = a.exp()
        c.grad_fn.register_prehook(_BAD_PRE[i])
        errs.append(error_of(lambda: c.sum().backward()))
    assert errs[0] is not None and errs[0] == errs[1]


def _two_outputs(m, a):
    class Two(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3
    return Two.apply(a)


def test_replacing_none_gradient_raises(torch):
    errs = []
    for m in both(torch):
        a = m.tensor([1., 2.], requires_grad=True)
        x, y = _two_outputs(m, a)
        x.grad_fn.register_prehook(lambda go: (m.ones(2), m.ones(2)))
        errs.append(error_of(lambda: x.sum().backward()))
    assert errs[0] == errs[1] == ("RuntimeError", "can't replace a None gradient with a non-None value")


def test_none_entries_reach_hooks(torch):
    outs = []
    for m in both(torch):
        a = m.tensor([1., 2.], requires_grad=True)
        x, y = _two_outputs(m, a)
        seen = []
        x.grad_fn.register_prehook(lambda go: seen.append([g is None for g in go]))
        (x * 2).sum().backward()
        outs.append((seen, a.grad.tolist()))
    assert outs[0] == outs[1] == ([[False, True]], [4., 4.])


def test_accumulate_grad_node_hooks(torch):
    outs = []
    for m in both(torch):
        a = m.tensor([1., 2.], requires_grad=True)
        b = a * 3
        acc = b.grad_fn.next_functions[0][0]
        seen = []
        acc.register_prehook(lambda go: seen.append(("pre", [g.tolist() for g in go])))
        acc.register_hook(lambda gi, go: seen.append(("post", len(gi), [g.tolist() for g in go])))
        b.sum().backward()
        outs.append((seen, a.grad.tolist()))
    assert outs[0] == outs[1] == ([("pre", [[3., 3.]]), ("post", 0, [[3., 3.]])], [3., 3.])


def test_accumulate_grad_prehook_replaces_leaf_grad():
    a = ag.tensor([1., 2.], requires_grad=True)
    b = a * 3
    b.grad_fn.next_functions[0][0].register_prehook(lambda go: (go[0] * 0 + 7,))
    b.sum().backward()
    assert a.grad.tolist() == [7., 7.]


def test_hooks_on_function_node():
    class Double(ag.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    a = ag.tensor([1., 2.], requires_grad=True)
    y = Double.apply(a)
    y.grad_fn.register_prehook(lambda go: (go[0] + 1,))
    y.grad_fn.register_hook(lambda gi, go: (gi[0] * 10,))
    y.grad_fn.metadata["fn"] = "Double"
    y.sum().backward()
    assert a.grad.tolist() == [40., 40.]
    assert y.grad_fn.metadata == {"fn": "Double"}


def test_non_callable_hook_fails_in_backward(torch):
    errs = []
    for m in both(torch):
        b = m.ones(2, requires_grad=True) * 2
        b.grad_fn.register_hook(3)  # torch does not check at registration
        errs.append(error_of(lambda: b.sum().backward()))
    assert errs[0] == errs[1] == ("TypeError", "'int' object is not callable")


def test_handles_and_metadata_do_not_keep_the_graph_alive():
    import gc
    gc.collect()  # garbage cycles of earlier tests must not be collected inside the measurement
    live = ag._C._autograd_live_nodes()
    a = ag.ones(2, requires_grad=True)
    b = (a * 2).exp()
    handles = [b.grad_fn.register_hook(lambda gi, go: None), b.grad_fn.register_prehook(lambda go: None)]
    b.grad_fn.metadata["payload"] = ag.ones(3)
    assert ag._C._autograd_live_nodes() > live
    del b
    gc.collect()
    assert ag._C._autograd_live_nodes() == live
    for h in handles:
        h.remove()  # the node is gone: nothing to do


def test_backward_inside_a_node_hook(torch):
    for m in both(torch):
        ids = []
        x = m.tensor([1., 2.], requires_grad=True)
        y = m.tensor([3., 4.], requires_grad=True)

        def prehook(go):
            ids.append(m._C._current_graph_task_id())
            with m.enable_grad():  # backward runs with grad mode off
                inner, = m.autograd.grad((y * y).sum(), y)
            ids.append(m._C._current_graph_task_id())
            return (go[0] + inner,)
        b = x * 1
        b.grad_fn.register_prehook(prehook)
        b.sum().backward()
        assert x.grad.tolist() == [7., 9.]
        assert ids[0] == ids[1] != -1


def test_tensor_hooks_skip_nodes_backward_does_not_need(torch):
    outs = []
    for m in both(torch):
        a = m.tensor([1., 2.], requires_grad=True)
        b = m.tensor([3., 4.], requires_grad=True)
        called = []
        b.register_hook(lambda g: called.append("b"))
        a.register_hook(lambda g: called.append("a"))
        (a * b).sum().backward(inputs=[a])
        outs.append((called, a.grad.tolist(), b.grad))
    assert outs[0] == outs[1] == (["a"], [3., 4.], None)


# ---------------------------------------------------------------- saved tensor hooks
def _pack_log(m):
    log = []

    def pack(t):
        log.append(("pack", t.tolist(), t.requires_grad, type(t.grad_fn).__name__ if t.grad_fn else None))
        return t

    def unpack(t):
        log.append(("unpack", t.tolist()))
        return t
    a = m.tensor([1., 2.], requires_grad=True)
    b = m.tensor([3., 4.], requires_grad=True)
    with m.autograd.graph.saved_tensors_hooks(pack, unpack):
        d = (a * b).exp()
        e = d * 2          # a Python number is not a saved tensor
        f = (a + 1) * 3.0
    packs = sorted(log)
    log.clear()
    (d.sum() + e.sum() + f.sum()).backward()
    return packs, sorted(log), a.grad.tolist(), b.grad.tolist()


def test_saved_tensors_hooks_see_every_saved_tensor(torch):
    got, want = _pack_log(ag), _pack_log(torch)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-6)
    np.testing.assert_allclose(got[3], want[3], rtol=1e-6)
    assert [p[2:] for p in got[0]] == [p[2:] for p in want[0]]
    assert len(got[0]) == len(want[0]) == 3 and len(got[1]) == len(want[1]) == 3
    for g, w in zip(got[0] + got[1], want[0] + want[1]):
        np.testing.assert_allclose(g[1], w[1], rtol=1e-6)


def test_packed_value_replaces_the_tensor():
    # The graph keeps only what pack returned: here a NumPy copy.
    x = ag.tensor([1., 2., 3.], requires_grad=True)
    with G.saved_tensors_hooks(lambda t: t.detach().numpy().copy(), lambda n: ag.from_numpy(n)):
        y = (x * x * x).sum()
    y.backward()
    assert x.grad.tolist() == [3., 12., 27.]


def test_unpack_must_return_a_tensor(torch):
    errs = []
    for m in both(torch):
        a = m.tensor([1., 2.], requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(lambda t: 1, lambda p: p):
            y = a.exp()
        errs.append(error_of(lambda: y.sum().backward()))
    assert errs[0] == errs[1] == ("TypeError", "Output of saved tensor unpack_hook expected to be a Tensor but got "
                                  "result of type int")


def test_pack_hook_must_not_modify_its_input(torch):
    errs = []
    for m in both(torch):
        a = m.tensor([1., 2.], requires_grad=True)
        b = a * 1
        with m.autograd.graph.saved_tensors_hooks(lambda t: t.mul_(2) if t.grad_fn is not None else t, lambda p: p):
            errs.append(error_of(lambda: b.sin()))
    assert errs[0][0] == "RuntimeError" and errs[0] == errs[1]
    assert "A saved tensor pack hook is modifying its input in place" in errs[0][1]


def test_innermost_hooks_apply():
    log = []
    x = ag.tensor([1., 2.], requires_grad=True)
    with G.saved_tensors_hooks(lambda t: (log.append("outer"), t)[1], lambda t: t):
        with G.saved_tensors_hooks(lambda t: (log.append("inner"), t)[1], lambda t: t):
            x.exp()
        x.sin()
    x.cos()
    assert log == ["inner", "outer"]


def test_hooks_apply_to_function_save_for_backward():
    calls = []

    class Sq(ag.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g

    x = ag.tensor([1., 2., 3.], requires_grad=True)
    with G.saved_tensors_hooks(lambda t: (calls.append("pack"), t * 1)[1], lambda t: (calls.append("unpack"), t)[1]):
        y = Sq.apply(x)
    assert calls == ["pack"]
    y.sum().backward()
    assert calls == ["pack", "unpack"]
    assert x.grad.tolist() == [2., 4., 6.]


def test_double_backward_through_hooks(torch):
    outs = []
    for m in both(torch):
        x = m.tensor([1., 2.], requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
            y = (x ** 3).sum()
            g, = m.autograd.grad(y, x, create_graph=True)
        g.sum().backward()
        outs.append((g.tolist(), x.grad.tolist()))
    assert outs[0] == outs[1] == ([3., 12.], [6., 12.])


def test_hooks_skip_the_version_check_as_torch(torch):
    outs = []
    for m in both(torch):
        x = m.tensor([1., 2.], requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            mid = x.clone()
            y = mid * mid
        mid.mul_(2)
        y.sum().backward()
        outs.append(x.grad.tolist())
    assert outs[0] == outs[1] == [4., 8.]


def test_packed_values_are_freed_with_the_graph():
    x = ag.tensor([1., 2.], requires_grad=True)
    with G.saved_tensors_hooks(lambda t: t, lambda t: t):
        y = x.exp().sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


@pytest.mark.parametrize("op", ["sin_", "mul_", "exp_", "pow_"])
def test_inplace_op_saves_the_original_self_under_hooks(torch, op):
    # The packed value must be the pre-write self even when pack returns its input unchanged.
    outs = []
    for m in both(torch):
        x = m.tensor([0.5, 1.0, 2.0], requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            y = x * 1
            if op == "sin_":
                y.sin_()
            elif op == "mul_":
                y.mul_(y.detach() + 1)
            elif op == "exp_":
                y.exp_()
            else:
                y.pow_(3)
            z = (y * x).sum()
        z.backward()
        outs.append(x.grad.tolist())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-6)


def test_save_on_cpu_with_inplace_ops(torch):
    outs = []
    for m in both(torch):
        x = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
        with m.autograd.graph.save_on_cpu():
            y = x.tanh()
            y.mul_(x)
            y.sigmoid_()
        y.sum().backward()
        outs.append(x.grad.tolist())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-6)


def test_pack_hook_errors_propagate(torch):
    class CustomError(Exception):
        pass

    for m in both(torch):
        def pack(t):
            raise CustomError("pack failed")
        x = m.ones(2, requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(pack, lambda p: p):
            with pytest.raises(CustomError, match="pack failed"):
                x.exp()
        with m.autograd.graph.saved_tensors_hooks(lambda t: t, lambda p: (_ for _ in ()).throw(CustomError("unpack"))):
            y = x.exp().sum()
        with pytest.raises(CustomError, match="unpack"):
            y.backward()
        assert x.exp().grad_fn is not None  # the stack is clean again


def test_hooks_see_function_intermediates(torch):
    outs = []
    for m in both(torch):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                inter = x.exp()
                ctx.save_for_backward(inter, x)
                return inter * 2

            @staticmethod
            def backward(ctx, g):
                inter, x = ctx.saved_tensors
                return g * 2 * inter
        log = []
        x = m.tensor([0., 1.], requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(lambda t: (log.append(t.tolist()), t)[1], lambda t: t):
            F.apply(x).sum().backward()
        outs.append((log, x.grad.tolist()))
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-6)
    assert len(outs[0][0]) == len(outs[1][0]) == 2
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-6)


def test_disable_saved_tensors_hooks(torch):
    for m in both(torch):
        g = m.autograd.graph
        with g.disable_saved_tensors_hooks("disabled here"):
            with pytest.raises(RuntimeError, match="^disabled here$"):
                with g.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass
            with g.disable_saved_tensors_hooks("inner"):
                with pytest.raises(RuntimeError, match="^inner$"):
                    with g.save_on_cpu():
                        pass
            with pytest.raises(RuntimeError, match="^disabled here$"):  # the outer message is back
                with g.save_on_cpu():
                    pass
        with g.saved_tensors_hooks(lambda t: t, lambda t: t):  # enabled again
            pass


@pytest.mark.parametrize("pin_memory", [False, True])
def test_save_on_cpu_gives_the_same_gradients(torch, pin_memory):
    outs = []
    for m in both(torch):
        x = m.tensor([0.5, -1.0, 2.0], dtype=m.float64, requires_grad=True)
        w = m.tensor([1.5, 2.0, -0.5], dtype=m.float64, requires_grad=True)
        with m.autograd.graph.save_on_cpu(pin_memory=pin_memory):
            y = ((x * w).tanh() * x.exp()).sum()
        y.backward()
        outs.append((x.grad.tolist(), w.grad.tolist()))
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-12)


# ---------------------------------------------------------------- register_multi_grad_hook
def _multi(m, call):
    a, b = m.rand(2, 3, requires_grad=True), m.rand(2, 3, requires_grad=True)
    c = a * b
    d = a * b
    seen = []
    h = m.autograd.graph.register_multi_grad_hook((a, b, c, d), lambda grads: seen.append([g is not None for g in grads]))
    call(m, a, b, c)
    h.remove()
    c.sum().backward(retain_graph=True)
    return seen


@pytest.mark.parametrize("case", ["all", "inputs", "grad_nonleaf", "twice"])
def test_multi_grad_hook_all(torch, case):
    calls = {
        "all": lambda m, a, b, c: c.sum().backward(retain_graph=True),
        "inputs": lambda m, a, b, c: c.sum().backward(inputs=(a,), retain_graph=True),
        "grad_nonleaf": lambda m, a, b, c: m.autograd.grad(c.sum(), (c,), retain_graph=True),
        "twice": lambda m, a, b, c: [c.sum().backward(retain_graph=True) for _ in range(2)],
    }
    got, want = _multi(ag, calls[case]), _multi(torch, calls[case])
    assert got == want and len(got) >= 1
    if case == "all":
        assert got == [[True, True, True, False]]
    if case == "inputs":
        assert got == [[True, False, True, False]]


def test_multi_grad_hook_leaf_in_grad_raises(torch):
    errs = []
    for m in both(torch):
        a, b = m.rand(2, requires_grad=True), m.rand(2, requires_grad=True)
        c = a * b
        m.autograd.graph.register_multi_grad_hook((a, b), lambda grads: None)
        errs.append(error_of(lambda: m.autograd.grad(c.sum(), (a,))))
    assert errs[0] == errs[1] and errs[0][0] == "RuntimeError"


def test_multi_grad_hook_gets_the_gradients():
    a = ag.tensor([1., 2.], requires_grad=True)
    b = ag.tensor([3., 4.], requires_grad=True)
    got = []
    G.register_multi_grad_hook((a, b), lambda grads: got.append([g.tolist() for g in grads]))
    (a * b).sum().backward()
    assert got == [[[3., 4.], [1., 2.]]]


def test_multi_grad_hook_any(torch):
    outs = []
    for m in both(torch):
        a, b = m.tensor([1., 2.], requires_grad=True), m.tensor([3., 4.], requires_grad=True)
        c = m.ones(2)
        seen = []
        h = m.autograd.graph.register_multi_grad_hook((a, b, c), lambda g: seen.append(g.tolist()), mode="any")
        (a * b).sum().backward(retain_graph=True)
        (a * b).sum().backward()
        h.remove()
        (a * b).sum().backward()
        outs.append(seen)
    assert outs[0] == outs[1] and len(outs[0]) == 2


def test_multi_grad_hook_bad_mode(torch):
    errs = [error_of(lambda: m.autograd.graph.register_multi_grad_hook((m.ones(1, requires_grad=True),), print, mode="x"))
            for m in both(torch)]
    assert errs[0] == errs[1] and errs[0][0] == "ValueError"


def test_current_graph_task_id():
    assert ag._C._current_graph_task_id() == -1
    ids = []
    a = ag.ones(2, requires_grad=True)
    a.register_hook(lambda g: ids.append(ag._C._current_graph_task_id()))
    (a * 2).sum().backward()
    (a * 2).sum().backward()
    assert len(ids) == 2 and ids[0] != ids[1] and min(ids) >= 0
    with pytest.raises(RuntimeError, match="only be called during the backward pass"):
        ag._C._will_engine_execute_node((a * 2).grad_fn)
    errs = []
    a.register_hook(lambda g: errs.append(error_of(lambda: ag._C._will_engine_execute_node(3))))
    (a * 2).sum().backward()
    assert errs[-1] == ("RuntimeError", "_will_engine_execute_node expects an grad_fn, but got int")


# ---------------------------------------------------------------- GradientEdge
def test_gradient_edge_as_grad_input(torch):
    outs = []
    for m in both(torch):
        g = m.autograd.graph
        x = m.tensor([1., 2., 3.], requires_grad=True)
        mid = x * 2
        out = (mid ** 2).sum()
        e = g.get_gradient_edge(mid)
        assert isinstance(e, g.GradientEdge) and e.output_nr == 0 and e.node.name() == "MulBackward0"
        r1 = m.autograd.grad(out, e, retain_graph=True)[0]
        r2 = m.autograd.grad(out, [g.get_gradient_edge(x), mid], retain_graph=True)
        x.grad = None
        out.backward(inputs=[g.get_gradient_edge(x)])
        outs.append((r1.tolist(), [r.tolist() for r in r2], x.grad.tolist()))
    assert outs[0] == outs[1] == ([4., 8., 12.], [[8., 16., 24.], [4., 8., 12.]], [8., 16., 24.])


def test_gradient_edge_as_output(torch):
    outs = []
    for m in both(torch):
        g = m.autograd.graph
        x = m.tensor([1., 2.], requires_grad=True)
        mid = x * 3
        out = mid.sin()
        e = g.get_gradient_edge(mid)
        r = [m.autograd.grad(e, x, grad_outputs=m.ones(2), retain_graph=True)[0].tolist(),
             m.autograd.grad(g.get_gradient_edge(mid.sum()), x, retain_graph=True)[0].tolist(),
             error_of(lambda: m.autograd.grad(e, x, retain_graph=True)),
             error_of(lambda: m.autograd.grad(e, x, grad_outputs=m.ones(3), retain_graph=True))]
        m.autograd.backward(e, m.ones(2) * 2, retain_graph=True)
        r.append(x.grad.tolist())
        x.grad = None
        m.autograd.backward([g.get_gradient_edge(out)], [m.ones(2)], inputs=[x])
        r.append(x.grad.tolist())
        outs.append(r)
    assert outs[0][:5] == outs[1][:5]
    assert outs[0][:2] == [[3., 3.], [3., 3.]] and outs[0][4] == [6., 6.]
    np.testing.assert_allclose(outs[0][5], outs[1][5], rtol=1e-6)


def test_gradient_edge_of_a_multi_output_node(torch):
    for m in both(torch):
        x = m.tensor([1., 2.], requires_grad=True)
        p, q = _two_outputs(m, x)
        out = (p * 2 + q * 5).sum()
        e = m.autograd.graph.get_gradient_edge(q)
        assert e.output_nr == 1 and e.node is not None
        assert m.autograd.grad(out, e, retain_graph=True)[0].tolist() == [5., 5.]
        assert m.autograd.grad(out, [m.autograd.graph.get_gradient_edge(p), x])[1].tolist() == [19., 19.]


def test_gradient_edge_errors(torch):
    for m in both(torch):
        g = m.autograd.graph
        with pytest.raises(RuntimeError, match="not possible to get the gradient edge for a Tensor that does not"):
            g.get_gradient_edge(m.ones(2))
        x = m.ones(2, requires_grad=True)
        out = (x * 2).sum()
        unused = g.get_gradient_edge(m.ones(2, requires_grad=True))
        with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
            m.autograd.grad(out, [unused], retain_graph=True)
        assert m.autograd.grad(out, [unused], allow_unused=True, retain_graph=True) == (None,)
        with pytest.raises(RuntimeError, match="materialize_grads cannot be used when the given input is a GradientEdge"):
            m.autograd.grad(out, [unused], materialize_grads=True)


# ---------------------------------------------------------------- increment_version
def test_increment_version(torch):
    outs = []
    for m in both(torch):
        t = m.ones(2, requires_grad=True)
        u = t.clone()
        v = u * u
        before = u._version
        m.autograd.graph.increment_version(u)
        m.autograd.graph.increment_version([u, u])
        outs.append((before, u._version, error_of(lambda: v.sum().backward())))
    assert outs[0][:2] == outs[1][:2] == (0, 3)
    assert outs[0][2][0] == "RuntimeError" and "is at version 3; expected version 0 instead" in outs[0][2][1]


def test_increment_version_skips_inference_tensors():
    with ag.inference_mode():
        t = ag.ones(2)
    G.increment_version(t)  # torch: no version counter to bump, no error
    G.increment_version([t, ag.ones(1)])


# ---------------------------------------------------------------- allow_mutation_on_saved_tensors
def test_allow_mutation_doc_example(torch):
    outs = []
    for m in both(torch):
        with m.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            a = m.ones(2, 3, requires_grad=True)
            b = a.clone()
            out = (b ** 2).sum()
            b.sin_()
            out.sum().backward()
            outs.append((a.grad.tolist(), b.tolist(), type(b.grad_fn).__name__))
        assert len(ctx.cloned) == 0 and len(ctx.original) == 0
    assert outs[0][0] == outs[1][0] == [[2.] * 3] * 2
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-6)
    assert outs[0][2] == outs[1][2] == "SinBackward0"


def test_allow_mutation_through_a_view(torch):
    outs = []
    for m in both(torch):
        with m.autograd.graph.allow_mutation_on_saved_tensors():
            a = m.arange(6.).reshape(2, 3).requires_grad_()
            b = a * 1
            out = (b[0] ** 2).sum()
            b.mul_(3)
            out.backward()
            outs.append(a.grad.tolist())
    assert outs[0] == outs[1] == [[0., 2., 4.], [0., 0., 0.]]


@pytest.mark.parametrize("mutate", ["add_", "no_grad_mul_", "fill_", "copy_", "zero_", "exp_", "index_put_"])
def test_allow_mutation_of_untracked_saved_tensors(torch, mutate):
    ops = {
        "add_": lambda m, w: w.add_(10),
        "no_grad_mul_": lambda m, w: w.mul_(0),
        "fill_": lambda m, w: w.fill_(0),
        "copy_": lambda m, w: w.copy_(m.zeros(2)),
        "zero_": lambda m, w: w.zero_(),
        "exp_": lambda m, w: w.exp_(),
        "index_put_": lambda m, w: w.__setitem__(0, 100.),
    }
    outs = []
    for m in both(torch):
        with m.autograd.graph.allow_mutation_on_saved_tensors():
            w = m.tensor([1., 2.])
            x = m.tensor([3., 4.], requires_grad=True)
            y = (x * w).sum()
            if mutate.startswith("no_grad"):
                with m.no_grad():
                    ops[mutate](m, w)
            else:
                ops[mutate](m, w)
            y.backward()
            outs.append(x.grad.tolist())
    assert outs[0] == outs[1] == [1., 2.]


def test_allow_mutation_errors(torch):
    for m in both(torch):
        g = m.autograd.graph
        with g.allow_mutation_on_saved_tensors():
            with pytest.raises(RuntimeError, match="allow_mutation_on_saved_tensors contexts cannot be nested"):
                with g.allow_mutation_on_saved_tensors():
                    pass
        a = m.ones(2, requires_grad=True)
        with g.allow_mutation_on_saved_tensors():
            out = (a.clone() ** 2).sum()
        with pytest.raises(AssertionError, match="Trying to backward outside of the 'allow_mutation_on_saved_tensors'"):
            out.backward()


def test_allow_mutation_outer_context_survives_nesting_error():
    # torch 2.13's failed inner context turns the outer one off; ampgrad keeps it working.
    with G.allow_mutation_on_saved_tensors():
        with pytest.raises(RuntimeError):
            with G.allow_mutation_on_saved_tensors():
                pass
        x = ag.tensor([3., 4.], requires_grad=True)
        w = ag.tensor([1., 2.])
        y = (x * w).sum()
        w.add_(1)
        y.backward()
    assert x.grad.tolist() == [1., 2.]


def test_mutation_outside_the_context_still_raises():
    a = ag.ones(2, requires_grad=True)
    b = a.clone()
    out = (b ** 2).sum()
    b.sin_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()


# ---------------------------------------------------------------- anomaly mode
def _messages(w):
    return [str(x.message) for x in w]


def test_detect_anomaly_warns_and_restores(torch):
    for m in both(torch):
        with pytest.warns(UserWarning, match="Anomaly Detection has been enabled. This mode will increase the runtime "
                                             "and should only be enabled for debugging."):
            ctx = m.autograd.detect_anomaly(check_nan=False)
        assert not m.is_anomaly_enabled()
        with ctx:
            assert m.is_anomaly_enabled() and not m.is_anomaly_check_nan_enabled()
        assert not m.is_anomaly_enabled() and m.is_anomaly_check_nan_enabled()
        m.autograd.set_detect_anomaly(True)
        assert m.is_anomaly_enabled()
        with m.autograd.set_detect_anomaly(False, check_nan=False):
            assert not m.is_anomaly_enabled() and not m.is_anomaly_check_nan_enabled()
        assert m.is_anomaly_enabled() and m.is_anomaly_check_nan_enabled()
        m.autograd.set_detect_anomaly(False)
        assert not m.is_anomaly_enabled()


def test_detect_anomaly_as_decorator():
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        @ag.autograd.detect_anomaly()
        def f():
            return ag.is_anomaly_enabled()
    assert f() is True and not ag.is_anomaly_enabled()


def test_forward_trace_only_in_anomaly_mode(torch):
    for m in both(torch):
        a = m.ones(2, requires_grad=True)
        assert (a * 2).grad_fn.metadata == {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with m.autograd.detect_anomaly():
                b = a * 2
        trace = b.grad_fn.metadata["traceback_"]
        assert list(b.grad_fn.metadata) == ["traceback_"]
        assert "b = a * 2" in "".join(trace) and "test_forward_trace_only_in_anomaly_mode" in "".join(trace)


@pytest.mark.parametrize("case", ["div", "sqrt", "function"])
def test_nan_in_backward_raises(torch, case):
    class NanGrad(object):
        pass

    errs = []
    for m in both(torch):
        class Nan(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                return g * float("nan")

        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with m.autograd.detect_anomaly():
                z = m.tensor([0., 1.], requires_grad=True)
                if case == "div":
                    y = (z / z).sum()
                elif case == "sqrt":
                    y = (z - 1).sqrt().sum()
                else:
                    y = Nan.apply(z).sum()
                err = error_of(y.backward)
        errs.append((err, [s.splitlines()[0] for s in _messages(w) if "Error detected" in s]))
    assert errs[0] == errs[1]
    assert errs[0][0][0] == "RuntimeError" and "returned nan values in its" in errs[0][0][1]
    assert len(errs[0][1]) == 1


@pytest.mark.parametrize("fail_0th", [True, False])
def test_nan_check_names_the_output(torch, fail_0th):
    errs = []
    for m in both(torch):
        class MyFunc(m.autograd.Function):
            @staticmethod
            def forward(ctx, inp1, inp2, fail):
                ctx.fail = fail
                return inp1.sum(0, keepdim=True)

            @staticmethod
            def backward(ctx, gO):
                gI = gO.expand(4) * m.tensor([0., 1., 1., 1.]) / m.tensor([0., 1., 1., 1.])
                return (gI, None, None) if ctx.fail else (None, gI, None)

        inp = m.rand(4, requires_grad=True)
        MyFunc.apply(inp, inp, fail_0th).backward()  # no anomaly mode: no check
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with m.autograd.detect_anomaly():
                out = MyFunc.apply(inp, inp, fail_0th)
                errs.append((error_of(out.backward), sum("MyFunc.apply" in s for s in _messages(w))))
    assert errs[0] == errs[1]
    assert errs[0] == (("RuntimeError", "Function 'MyFuncBackward' returned nan values in its %dth output."
                        % (0 if fail_0th else 1)), 1)


def test_no_nan_check_without_check_nan():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ag.autograd.detect_anomaly(check_nan=False):
            z = ag.tensor([0., 1.], requires_grad=True)
            (z / z).sum().backward()
    assert np.isnan(z.grad.numpy()[0])


def test_backward_error_reports_forward_trace(torch):
    outs = []
    for m in both(torch):
        class MyFunc(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                raise RuntimeError("Some error in backward")

        def run_fn(a):
            out = MyFunc.apply(a)  # the line the report points at
            return out.sum()

        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with m.autograd.detect_anomaly():
                loss = run_fn(m.ones(2, requires_grad=True))
                err = error_of(loss.backward)
        msgs = [s for s in _messages(w) if "Error detected" in s]
        outs.append((err, len(msgs), msgs[0].splitlines()[0], "out = MyFunc.apply(a)" in msgs[0]))
    assert outs[0] == outs[1]
    assert outs[0] == (("RuntimeError", "Some error in backward"), 1,
                       "Error detected in MyFuncBackward. Traceback of forward call that caused the error:", True)


def test_error_without_forward_trace(torch):
    msgs = []
    for m in both(torch):
        class Bad(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                raise ValueError("bad")

        y = Bad.apply(m.ones(2, requires_grad=True)).sum()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with m.autograd.detect_anomaly():
                with pytest.raises(ValueError, match="bad"):
                    y.backward()
        msgs.append([s.splitlines()[0].split(" (Triggered internally")[0] for s in _messages(w) if "Error detected" in s])
    assert msgs[0] == msgs[1] == ["Error detected in BadBackward. No forward pass information available. Enable "
                                  "detect anomaly during forward pass for more information."]


def test_double_backward_error_reports_parent(torch):
    outs = []
    for m in both(torch):
        class BadGrad(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                raise RuntimeError("bad double")

        class F1(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                return BadGrad.apply(g)

        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with m.autograd.detect_anomaly():
                x = m.ones(2, requires_grad=True)
                y = (F1.apply(x) ** 2).sum()
                gx, = m.autograd.grad(y, x, create_graph=True)
                err = error_of(lambda: gx.sum().backward())
        msgs = [s for s in _messages(w) if "Error detected" in s or "Previous calculation" in s]
        outs.append((err, [s.strip().splitlines()[0] for s in msgs]))
    assert outs[0] == outs[1]
    assert outs[0][1] == ["Error detected in BadGradBackward. Traceback of forward call that caused the error:",
                          "Previous calculation was induced by F1Backward. Traceback of forward call that induced the "
                          "previous calculation:"]


def test_anomaly_mode_does_not_change_results(torch):
    x = ag.tensor([0.5, 1.5], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ag.autograd.detect_anomaly():
            y = (x.sin() * x.exp()).sum()
            g, = ag.autograd.grad(y, x, create_graph=True)
            g.sum().backward()
    tx = torch.tensor([0.5, 1.5], requires_grad=True)
    ty = (tx.sin() * tx.exp()).sum()
    tg, = torch.autograd.grad(ty, tx, create_graph=True)
    tg.sum().backward()
    np.testing.assert_allclose(g.tolist(), tg.tolist(), rtol=1e-6)
    np.testing.assert_allclose(x.grad.tolist(), tx.grad.tolist(), rtol=1e-6)


# ---------------------------------------------------------------- Variable, multithreading
def test_variable_is_a_tensor(torch):
    outs = []
    for m in both(torch):
        V = m.autograd.Variable
        t = m.ones(2)
        v = V(t, requires_grad=True)
        x = m.ones(2, requires_grad=True)
        vx = V(x)
        outs.append((type(v) is m.Tensor, v is t, v.requires_grad, v.data_ptr() == t.data_ptr(),
                     isinstance(t, V), isinstance(3, V), tuple(V().shape), V(t).requires_grad,
                     vx.requires_grad, vx.grad_fn is None, vx is x, error_of(lambda: V(3)), error_of(lambda: V("s"))))
    assert outs[0] == outs[1]
    assert outs[0][:4] == (True, False, True, True) and outs[0][-2] == ("TypeError", "Variable data has to be a tensor, "
                                                                        "but got int")
    errs = [error_of(lambda: m.autograd.Variable(m.ones(2, dtype=m.int64), requires_grad=True)) for m in both(torch)]
    assert errs[0] == errs[1] == ("RuntimeError", "Only Tensors of floating point and complex dtype can require gradients")


def test_variable_shares_storage():
    t = ag.zeros(2)
    v = ag.autograd.Variable(t)
    v.add_(1)
    assert t.tolist() == [1., 1.]


def test_set_multithreading_enabled():
    from ampgrad.autograd.grad_mode import _is_multithreading_enabled
    assert _is_multithreading_enabled()
    s = ag.autograd.set_multithreading_enabled(False)
    assert not _is_multithreading_enabled()
    with ag.autograd.set_multithreading_enabled(True):
        assert _is_multithreading_enabled()
    assert not _is_multithreading_enabled()
    with s:
        pass
    assert _is_multithreading_enabled()  # exiting restores what was there before s

    @ag.autograd.set_multithreading_enabled(False)  # as torch's: decorating also sets the mode
    def f():
        return _is_multithreading_enabled()
    assert f() is False and not _is_multithreading_enabled()
    ag.autograd.set_multithreading_enabled(True)
    a = ag.ones(2, requires_grad=True)
    with ag.autograd.set_multithreading_enabled(False):
        (a * 3).sum().backward()
    assert a.grad.tolist() == [3., 3.]


# ---------------------------------------------------------------- together, on a small model
def test_model_gradients_unchanged_by_hooks_and_anomaly_mode():
    ag.manual_seed(0)
    model = ag.nn.Sequential(ag.nn.Linear(4, 8), ag.nn.Tanh(), ag.nn.LayerNorm(8), ag.nn.Linear(8, 3))
    x = ag.randn(5, 4)
    target = ag.tensor([0, 2, 1, 1, 0])

    def grads(ctx):
        model.zero_grad()
        with ctx():  # allow_mutation_on_saved_tensors needs backward inside it too
            ag.nn.functional.cross_entropy(model(x), target).backward()
        return [p.grad.clone() for p in model.parameters()]

    def anomaly():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ag.autograd.detect_anomaly()

    packed = []
    plain = grads(lambda: ag.autograd.set_grad_enabled(True))
    for ctx in (G.save_on_cpu, anomaly, G.allow_mutation_on_saved_tensors,
                lambda: G.saved_tensors_hooks(lambda t: (packed.append(1), t.clone())[1], lambda t: t)):
        for a, b in zip(plain, grads(ctx)):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)
    assert len(packed) > 5


def test_limited_pass_skips_unwanted_input_gradients(torch):
    """torch's task_should_compute_output: autograd.grad(y, a) / backward(inputs=[a]) runs a node's
    backward only for the edges that lead to what was asked for (MmBackward0 computes one product, not
    two; ConvolutionBackward0 one of its input and weight gradients), and the gradients it does compute
    are torch's."""
    rng = np.random.default_rng(3)
    an, bn = rng.standard_normal((4, 5)).astype(np.float32), rng.standard_normal((5, 3)).astype(np.float32)
    xn, wn = rng.standard_normal((2, 3, 8, 8)).astype(np.float32), rng.standard_normal((4, 3, 3, 3)).astype(np.float32)

    def count(fn, name):
        with ag.autograd.profiler.profile() as p:
            out = fn()
        return out, sum(e.count for e in p.key_averages() if e.key == name)

    a, b = ag.tensor(an, requires_grad=True), ag.tensor(bn, requires_grad=True)
    ta, tb = torch.tensor(an, requires_grad=True), torch.tensor(bn, requires_grad=True)
    for want, twant in (([a], [ta]), ([b], [tb]), ([a, b], [ta, tb])):
        gs, n = count(lambda: ag.autograd.grad((a @ b).sin().sum(), want), "aten::mm")
        assert n == 1 + len(want)  # the forward, then one product per wanted gradient
        tgs = torch.autograd.grad((ta @ tb).sin().sum(), twant)
        for g, tg in zip(gs, tgs):
            np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-5, atol=1e-6)
    # backward(inputs=...) limits the pass the same way; the other leaf's .grad stays None
    _, n = count(lambda: (a @ b).sum().backward(inputs=[b]), "aten::mm")
    assert n == 2 and a.grad is None and b.grad is not None
    x, w = ag.tensor(xn, requires_grad=True), ag.tensor(wn, requires_grad=True)
    tx, tw = torch.tensor(xn, requires_grad=True), torch.tensor(wn, requires_grad=True)
    for want, twant in (([x], [tx]), ([w], [tw]), ([x, w], [tx, tw])):
        gs, n = count(lambda: ag.autograd.grad(ag.nn.functional.conv2d(x, w, padding=1).square().sum(), want),
                      "aten::convolution")
        assert n == 1 + len(want)  # the forward, then one kernel per wanted gradient
        tgs = torch.autograd.grad(torch.nn.functional.conv2d(tx, tw, padding=1).square().sum(), twant)
        for g, tg in zip(gs, tgs):
            np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-4, atol=1e-4)
