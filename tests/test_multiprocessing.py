"""ampgrad.multiprocessing (torch.multiprocessing): Tensor.share_memory_ / is_shared, the reductions that
send CPU tensors between processes through shared memory (Note [Shared memory]), Module.share_memory,
spawn / start_processes with their exceptions, and a Hogwild-style run whose shared weights equal a serial
run's. Values are checked against the tensors themselves, torch, or a serial reference."""
import os
import pickle
import signal

import numpy as np
import pytest

import ampgrad
import ampgrad.multiprocessing as mp
from multiprocessing.reduction import ForkingPickler

METHODS = ["fork", "spawn", "forkserver"]


# --------------------------------------------------------------------------------- share_memory_
def test_share_memory_in_place_keeps_values_views_and_grad_state():
    base = ampgrad.arange(12.).reshape(3, 4)
    view = base[1:, ::2]
    before = base.numpy().copy()
    assert not base.is_shared()
    ptr = base.data_ptr()
    assert base.share_memory_() is base
    assert base.is_shared() and view.is_shared()  # one storage: the view moved with it
    assert base.data_ptr() != ptr
    np.testing.assert_array_equal(base.numpy(), before)
    view.mul_(10)  # still a view of the moved storage
    assert base[1, 2].item() == 60.0 and base[2, 0].item() == 80.0
    assert base.share_memory_() is base  # a no-op the second time
    assert base[1, 2].item() == 60.0


def test_share_memory_keeps_an_exported_numpy_array_alive():
    t = ampgrad.arange(1000.)
    arr = t.numpy()  # holds the old bytes' address
    t.share_memory_()
    t.add_(1)
    # The array keeps its own (now unshared) bytes: readable, with the values from before the move.
    np.testing.assert_array_equal(arr, np.arange(1000., dtype=np.float32))
    assert t[999].item() == 1000.0


def test_share_memory_zero_size_and_dtypes():
    for t in (ampgrad.empty(0), ampgrad.tensor([1, 2], dtype=ampgrad.int64), ampgrad.tensor([1.5], dtype=ampgrad.bfloat16),
              ampgrad.tensor(True)):
        ref = t.clone()
        t.share_memory_()
        assert t.is_shared()
        assert ampgrad.equal(t, ref)


def test_module_share_memory_and_adagrad():
    m = ampgrad.nn.Sequential(ampgrad.nn.Linear(3, 4), ampgrad.nn.BatchNorm1d(4))
    params = list(m.parameters())
    assert m.share_memory() is m
    assert all(p.is_shared() for p in m.parameters()) and all(b.is_shared() for b in m.buffers())
    assert all(a is b for a, b in zip(params, m.parameters()))  # the same Parameter objects
    opt = ampgrad.optim.Adagrad(m.parameters())
    opt.share_memory()
    assert all(opt.state[p]["sum"].is_shared() for p in params)


def test_sharing_strategies(torch):
    assert mp.get_sharing_strategy() == "file_descriptor"
    assert mp.get_all_sharing_strategies() == {"file_descriptor"}
    mp.set_sharing_strategy("file_descriptor")
    with pytest.raises(AssertionError, match="invalid sharing strategy 'bogus'"):
        mp.set_sharing_strategy("bogus")
    with pytest.raises(AssertionError):
        torch.multiprocessing.set_sharing_strategy("bogus")
    for name in ("Process", "Queue", "SimpleQueue", "Pipe", "Event", "get_context", "set_start_method", "cpu_count",
                 "spawn", "start_processes", "ProcessContext", "ProcessRaisedException", "ProcessExitedException"):
        assert hasattr(mp, name) and hasattr(torch.multiprocessing, name), name
    assert ampgrad.multiprocessing is mp


# --------------------------------------------------------------------------------- the reductions
def test_non_leaf_requiring_grad_is_refused_as_torch(torch):
    msgs = []
    for L in (torch, ampgrad):
        x = L.ones(3, requires_grad=True) * 2
        with pytest.raises(RuntimeError) as e:
            ForkingPickler.dumps(x)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_pickle_without_multiprocessing_still_copies():
    t = ampgrad.arange(5.)
    u = pickle.loads(pickle.dumps(t))
    u.add_(1)
    assert t[0].item() == 0.0 and not u.is_shared()


def _roundtrip_child(inq, outq, done, shared_arg):
    # shared_arg arrived with the Process's arguments, the rest through the queue
    shared_arg.add_(1)
    a, b, p, ints, empty = inq.get()
    a.mul_(2)  # a and b share one storage: both see it
    outq.put((a.untyped_storage_ptr() == b.untyped_storage_ptr() and b.storage_offset() == 2,
              type(p).__name__, p.requires_grad, ints.dtype == ampgrad.int64, empty.numel()))
    p.data.sub_(1)
    ints.neg_()
    outq.put(ampgrad.arange(4.)[1:])  # a new tensor, made here
    outq.put(b)  # sent back: the parent gets its own storage again
    done.wait()


@pytest.mark.parametrize("method", METHODS)
def test_queue_and_process_args_share_storage(method):
    ctx = mp.get_context(method)
    inq, outq, done = ctx.Queue(), ctx.Queue(), ctx.Event()
    shared_arg = ampgrad.zeros(3).share_memory_()
    base = ampgrad.arange(6.)
    a, b = base[:4], base[2:]
    p = ampgrad.nn.Parameter(ampgrad.ones(2, 2))
    ints = ampgrad.tensor([1, -2, 3])
    proc = ctx.Process(target=_roundtrip_child, args=(inq, outq, done, shared_arg))
    proc.start()
    try:
        inq.put((a, b, p, ints, ampgrad.empty(0)))
        same_storage, pname, preq, is_int64, n = outq.get(timeout=60)
        made = outq.get(timeout=60)
        back = outq.get(timeout=60)
    finally:
        done.set()
        proc.join(60)
    assert proc.exitcode == 0
    assert same_storage and pname == "Parameter" and preq and is_int64 and n == 0
    np.testing.assert_array_equal(shared_arg.numpy(), [1, 1, 1])
    np.testing.assert_array_equal(base.numpy(), [0, 2, 4, 6, 4, 5])  # a.mul_(2) in the child, on [:4]
    np.testing.assert_array_equal(p.detach().numpy(), np.zeros((2, 2)))
    np.testing.assert_array_equal(ints.numpy(), [-1, 2, -3])
    np.testing.assert_array_equal(made.numpy(), [1, 2, 3])
    assert made.is_shared()
    assert back.untyped_storage_ptr() == base.untyped_storage_ptr()  # found again by the fd's inode
    back.add_(100)
    assert base[5].item() == 105.0


def test_transposed_view_round_trips_with_its_strides():
    ctx = mp.get_context("spawn")
    q, out, done = ctx.Queue(), ctx.Queue(), ctx.Event()
    t = ampgrad.arange(12.).reshape(3, 4).t()[1:]
    proc = ctx.Process(target=_echo_child, args=(q, out, done))
    proc.start()
    try:
        q.put(t)
        r = out.get(timeout=60)
    finally:
        done.set()
        proc.join(60)
    assert r.shape == t.shape and r.stride() == t.stride() and r.storage_offset() == t.storage_offset()
    np.testing.assert_array_equal(r.numpy(), t.numpy())


def _echo_child(q, out, done):
    out.put(q.get())
    done.wait()


# --------------------------------------------------------------------------------- spawn
def _spawn_ok(i, path, scale):
    with open(os.path.join(path, f"r{i}"), "w") as f:
        f.write(str(scale * (i + 1)))


def _spawn_raise(i):
    if i == 1:
        raise ValueError("boom from rank 1")


def _spawn_exit(i):
    if i == 0:
        os._exit(3)


def _spawn_signal(i):
    if i == 1:
        os.kill(os.getpid(), signal.SIGKILL)


def test_spawn_runs_every_rank(tmp_path):
    assert mp.spawn(_spawn_ok, args=(str(tmp_path), 7), nprocs=3) is None
    assert sorted(p.read_text() for p in tmp_path.iterdir()) == ["14", "21", "7"]
    ctx = mp.start_processes(_spawn_ok, args=(str(tmp_path), 2), nprocs=2, join=False, start_method="fork")
    assert isinstance(ctx, mp.ProcessContext) and len(ctx.pids()) == 2
    while not ctx.join():
        pass
    assert ctx.join() is True
    assert (tmp_path / "r1").read_text() == "4"


def test_spawn_errors_as_torch(torch):
    with pytest.raises(mp.ProcessRaisedException) as e:
        mp.spawn(_spawn_raise, nprocs=2)
    assert e.value.error_index == 1
    msg = str(e.value)
    assert msg.startswith("\n\n-- Process 1 terminated with the following error:\nTraceback (most recent call last):")
    assert msg.rstrip().endswith("ValueError: boom from rank 1")
    with pytest.raises(mp.ProcessExitedException, match="process 0 terminated with exit code 3") as e:
        mp.start_processes(_spawn_exit, nprocs=2, start_method="fork")
    assert e.value.exit_code == 3 and e.value.error_index == 0
    with pytest.raises(mp.ProcessExitedException, match="process 1 terminated with signal SIGKILL") as e:
        mp.start_processes(_spawn_signal, nprocs=2, start_method="fork")
    assert e.value.exit_code == -9 and e.value.signal_name == "SIGKILL"
    # torch's own: the same exception classes and words for the same failures
    with pytest.raises(torch.multiprocessing.ProcessExitedException, match="process 0 terminated with exit code 3"):
        torch.multiprocessing.start_processes(_spawn_exit, nprocs=2, start_method="fork")
    with pytest.warns(FutureWarning, match="only supports start_method=spawn"):
        mp.spawn(_spawn_ok, args=(os.devnull + "_unused_dir_is_not_written", 0), nprocs=0, start_method="fork")
    err = pickle.loads(pickle.dumps(mp.ProcessExitedException("m", 1, 2, 3, "SIGX")))
    assert (err.msg, err.error_index, err.pid, err.exit_code, err.signal_name) == ("m", 1, 2, 3, "SIGX")


# --------------------------------------------------------------------------------- Hogwild
def _hogwild_train(rank, model, xs, ys, lr):
    # pytorch/examples mnist_hogwild's train(): each process steps the shared model with its own data
    opt = ampgrad.optim.SGD(model.parameters(), lr=lr, momentum=0.5)
    for x, y in zip(xs[rank], ys[rank]):
        opt.zero_grad()
        loss = ampgrad.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()


def _make_data(L, n_proc=2, steps=3):
    g = np.random.default_rng(0)
    xs = [[L.tensor(g.standard_normal((8, 5)).astype(np.float32)) for _ in range(steps)] for _ in range(n_proc)]
    ys = [[L.tensor(g.integers(0, 3, 8)) for _ in range(steps)] for _ in range(n_proc)]
    return xs, ys


def _model(L):
    m = L.nn.Sequential(L.nn.Linear(5, 6), L.nn.Tanh(), L.nn.Linear(6, 3))
    g = np.random.default_rng(1)
    with L.no_grad():
        for p in m.parameters():
            p.copy_(L.tensor(g.standard_normal(tuple(p.shape)).astype(np.float32)))
    return m


def test_hogwild_shared_model_equals_serial_training(torch):
    xs, ys = _make_data(ampgrad)
    model = _model(ampgrad)
    model.share_memory()
    ctx = mp.get_context("spawn")
    for rank in range(2):  # one after the other, so the result is deterministic
        p = ctx.Process(target=_hogwild_train, args=(rank, model, xs, ys, 0.1))
        p.start()
        p.join(120)
        assert p.exitcode == 0
    # torch, one process, the same two trainings in turn (each with a fresh optimizer, as each process has)
    txs, tys = _make_data(torch)
    tm = _model(torch)
    for rank in range(2):
        opt = torch.optim.SGD(tm.parameters(), lr=0.1, momentum=0.5)
        for x, y in zip(txs[rank], tys[rank]):
            opt.zero_grad()
            torch.nn.functional.cross_entropy(tm(x), y).backward()
            opt.step()
    start = _model(ampgrad)
    for a, b, s in zip(model.parameters(), tm.parameters(), start.parameters()):
        assert not np.allclose(a.detach().numpy(), s.detach().numpy())  # the children's steps reached us
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.skipif(not ampgrad.cuda.is_available(), reason="no CUDA device")
def test_cuda_tensor_is_refused():
    with pytest.raises(RuntimeError, match="no CUDA IPC"):
        ForkingPickler.dumps(ampgrad.ones(2, device="cuda"))
