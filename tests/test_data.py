"""ampgrad.utils.data against torch.utils.data: datasets, random_split, samplers, default_collate /
default_convert, DataLoader's batching, length rules and argument errors, and worker processes
(map-style and iterable datasets, get_worker_info, worker_init_fn, persistent workers, errors in a
worker, timeout). ampgrad's CPU stream is torch's, and the samplers draw from it as torch does
(a private torch-style generator for RandomSampler), so under the same manual_seed the shuffles,
random splits, sampler draws and worker seeds (torch, random and NumPy) equal torch's."""
import collections
import pickle
import time

import numpy as np
import pytest

import ampgrad
import ampgrad.utils.data as D

torch = pytest.importorskip("torch")
import torch.utils.data as TD  # noqa: E402


def _np(x):
    if isinstance(x, (list, tuple)):
        return type(x)(_np(v) for v in x) if not hasattr(x, "_fields") else type(x)(*(_np(v) for v in x))
    if isinstance(x, dict):
        return {k: _np(v) for k, v in x.items()}
    if isinstance(x, (torch.Tensor, ampgrad.Tensor)):
        return (str(x.dtype).split(".")[-1], x.detach().numpy().tolist())
    return x


def _same(a, b):
    assert type(a).__name__ == type(b).__name__ or {type(a), type(b)} <= {list, tuple}
    assert _np(a) == _np(b)


# ------------------------------------------------------------------------------------------ datasets
def test_tensor_dataset_subset_concat_stack():
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    y = np.arange(6)
    for L, M in ((torch, TD), (ampgrad, D)):
        ds = M.TensorDataset(L.tensor(x), L.tensor(y))
        sub = M.Subset(ds, [4, 0, 2])
        cat = ds + sub
        st = M.StackDataset(ds, sub[:1] if False else M.Subset(ds, [5, 4, 3, 2, 1, 0]))
        sk = M.StackDataset(a=ds, b=M.Subset(ds, [1, 1, 1, 1, 1, 1]))
        out = (len(ds), ds[3], len(sub), sub[1], sub.__getitems__([0, 2]), len(cat), cat[7], cat[-1], cat[-9],
               cat.cumulative_sizes, len(st), st[2], st.__getitems__([0, 1]), sk[0], sk.__getitems__([2]))
        if L is torch:
            ref = out
    for a, b in zip(out, ref):
        _same(a, b)
    for L, M in ((torch, TD), (ampgrad, D)):
        with pytest.raises(AssertionError, match="Size mismatch between tensors"):
            M.TensorDataset(L.zeros(3), L.zeros(4))
        with pytest.raises(AssertionError, match="datasets should not be an empty iterable"):
            M.ConcatDataset([])
        with pytest.raises(ValueError, match="absolute value of index should not exceed dataset length"):
            M.ConcatDataset([M.TensorDataset(L.zeros(3))])[-4]
        with pytest.raises(ValueError, match="Size mismatch between datasets"):
            M.StackDataset(M.TensorDataset(L.zeros(3)), M.TensorDataset(L.zeros(4)))
        with pytest.raises(ValueError, match="Supported either"):
            M.StackDataset(M.TensorDataset(L.zeros(3)), b=M.TensorDataset(L.zeros(3)))


class _Range(D.IterableDataset):
    """An iterable dataset that shards itself across workers (torch's documented pattern)."""

    def __init__(self, start, end, shard=True, lib=ampgrad):
        self.start, self.end, self.shard, self.lib = start, end, shard, lib

    def __iter__(self):
        info = (TD if self.lib is torch else D).get_worker_info()
        if info is None or not self.shard:
            r = range(self.start, self.end)
        else:
            r = range(self.start + info.id, self.end, info.num_workers)
        for i in r:
            yield self.lib.tensor([float(i)])

    def __len__(self):
        return self.end - self.start


class _TRange(TD.IterableDataset, _Range):
    def __init__(self, *a, **k):
        _Range.__init__(self, *a, lib=torch, **k)

    __iter__ = _Range.__iter__
    __len__ = _Range.__len__


def test_chain_dataset_and_iterable_add():
    a, b = _Range(0, 3), _Range(10, 12)
    chain = a + b
    assert isinstance(chain, D.ChainDataset) and len(chain) == 5
    assert [float(v) for v in chain] == [0, 1, 2, 10, 11]
    with pytest.raises(AssertionError, match="ConcatDataset does not support IterableDataset"):
        D.ConcatDataset([a])


def test_random_split():
    ds = list(range(10))
    for lengths in ([3, 7], [0.3, 0.7], [0.25, 0.25, 0.5], [1 / 3] * 3):
        tp = TD.random_split(ds, lengths, generator=torch.Generator().manual_seed(0))
        ampgrad.manual_seed(3)
        ap = D.random_split(ds, lengths)
        assert [len(s) for s in ap] == [len(s) for s in tp]
        assert sorted(i for s in ap for i in s) == ds
        ampgrad.manual_seed(3)
        assert [list(s) for s in D.random_split(ds, lengths)] == [list(s) for s in ap]  # reproducible
    for L, M in ((torch, TD), (ampgrad, D)):
        with pytest.raises(ValueError, match="Sum of input lengths does not equal the length of the input dataset!"):
            M.random_split(ds, [3, 3])
        with pytest.raises(ValueError, match="Fraction at index 0 is not between 0 and 1"):
            M.random_split(ds, [1.5, -0.5])
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        D.random_split([1, 2], [1.0, 0.0])


# ------------------------------------------------------------------------------------------ samplers
def test_sequential_and_batch_sampler_equal_torch():
    for n, bs, dl in ((10, 3, False), (10, 3, True), (9, 3, True), (1, 4, False)):
        t = TD.BatchSampler(TD.SequentialSampler(range(n)), bs, dl)
        a = D.BatchSampler(D.SequentialSampler(range(n)), bs, dl)
        assert list(a) == list(t) and len(a) == len(t)
    for args in ((0, False), (True, False), (2.0, False), (2, 1)):
        with pytest.raises(ValueError) as et:
            TD.BatchSampler(range(3), *args)
        with pytest.raises(ValueError) as ea:
            D.BatchSampler(range(3), *args)
        assert str(ea.value) == str(et.value)


def test_random_sampler():
    ampgrad.manual_seed(0)
    first = list(D.RandomSampler(range(20)))
    assert sorted(first) == list(range(20)) and first != list(range(20))
    ampgrad.manual_seed(0)
    assert list(D.RandomSampler(range(20))) == first
    s = D.RandomSampler(range(5), num_samples=12)
    out = list(s)
    assert len(s) == 12 and len(out) == 12
    assert sorted(out[:5]) == sorted(out[5:10]) == list(range(5))  # whole permutations, then a part
    s = D.RandomSampler(range(4), replacement=True, num_samples=70)
    out = list(s)
    assert len(out) == 70 and set(out) <= set(range(4)) and len(set(out)) == 4
    g = ampgrad.Generator()
    assert len(list(D.RandomSampler(range(7), generator=g))) == 7
    for kw in (dict(replacement=1), dict(num_samples=0), dict(num_samples=-2), dict(num_samples=1.5)):
        with pytest.raises(Exception) as et:
            TD.RandomSampler(range(3), **kw)
        with pytest.raises(et.type) as ea:
            D.RandomSampler(range(3), **kw)
        assert str(ea.value) == str(et.value)


def test_subset_random_and_weighted_samplers():
    idx = [3, 9, 27, 81]
    out = list(D.SubsetRandomSampler(idx))
    assert sorted(out) == idx and len(D.SubsetRandomSampler(idx)) == 4
    ampgrad.manual_seed(1)
    w = [0.0, 1.0, 3.0, 0.0, 6.0]
    s = D.WeightedRandomSampler(w, 4000)
    out = np.array(list(s))
    assert len(s) == 4000 and set(out.tolist()) == {1, 2, 4}
    freq = np.bincount(out, minlength=5) / 4000
    np.testing.assert_allclose(freq, np.array(w) / 10, atol=0.03)
    ampgrad.manual_seed(1)
    assert list(D.WeightedRandomSampler(w, 4000)) == out.tolist()  # reproducible
    out = list(D.WeightedRandomSampler(w, 3, replacement=False))
    assert sorted(out) == [1, 2, 4]
    # without replacement the heavy item comes first most often (torch.multinomial's law)
    firsts = [list(D.WeightedRandomSampler([1.0, 9.0], 1, replacement=False))[0] for _ in range(300)]
    assert 0.8 < np.mean(firsts) < 0.97
    for args, kw in (([[1.0, 2.0]], dict(num_samples=0)), ([[1.0, 2.0]], dict(num_samples=True)),
                     ([[1.0, 2.0]], dict(num_samples=2, replacement=1)), ([[[1.0], [2.0]]], dict(num_samples=2))):
        with pytest.raises(ValueError) as et:
            TD.WeightedRandomSampler(*args, **kw)
        with pytest.raises(ValueError) as ea:
            D.WeightedRandomSampler(*args, **kw)
        assert str(ea.value) == str(et.value)
    with pytest.raises(RuntimeError, match="cannot sample n_sample > prob_dist.size\\(-1\\) samples without"):
        list(D.WeightedRandomSampler([1.0, 2.0], 3, replacement=False))


# ------------------------------------------------------------------------------------------- collate
Point = collections.namedtuple("Point", ["x", "y"])


def _batches(L):
    t = L.tensor
    return [
        [t([1.0, 2.0]), t([3.0, 4.0])],
        [np.array([1, 2], dtype=np.int32), np.array([3, 4], dtype=np.int32)],
        [np.float32(1.5), np.float32(2.5)], [np.int64(3), np.int64(4)], [np.bool_(True), np.bool_(False)],
        [1.5, 2.5], [1, 2], [True, False], ["a", "b"], [b"x", b"y"], [np.str_("s"), np.str_("t")],
        [{"a": 1, "b": t([1.0])}, {"a": 2, "b": t([2.0])}],
        [(1, 2.0, "x"), (3, 4.0, "y")], [[1, 2], [3, 4]],
        [Point(1, t([0.5])), Point(2, t([1.5]))],
        [{"nested": [(t([1]), np.zeros(2))]}, {"nested": [(t([2]), np.ones(2))]}],
        [collections.OrderedDict(z=1.0, a=2), collections.OrderedDict(z=3.0, a=4)],
    ]


@pytest.mark.parametrize("i", range(17))
def test_default_collate_matches_torch(i):
    _same(D.default_collate(_batches(ampgrad)[i]), TD.default_collate(_batches(torch)[i]))


@pytest.mark.parametrize("i", range(17))
def test_default_convert_matches_torch(i):
    _same(D.default_convert(_batches(ampgrad)[i]), TD.default_convert(_batches(torch)[i]))


def test_default_collate_errors():
    for bad in ([np.array(["a"]), np.array(["b"])], [object(), object()], [[1, 2], [3]], [None, None]):
        with pytest.raises(Exception) as et:
            TD.default_collate(bad)
        with pytest.raises(et.type) as ea:
            D.default_collate(bad)
        assert str(ea.value) == str(et.value)


# ---------------------------------------------------------------------------------------- DataLoader
class _Squares(D.Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, i):
        return {"x": ampgrad.full((2,), float(i)), "i": i, "pid": __import__("os").getpid()}


def test_loader_batching_and_len_rules():
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    for kw in (dict(batch_size=3), dict(batch_size=3, drop_last=True), dict(batch_size=None), dict(batch_size=1),
               dict(batch_sampler=[[0, 5], [1], [9, 8, 7]]), dict(sampler=[4, 2, 0], batch_size=2),
               dict(batch_size=4, collate_fn=lambda b: len(b))):
        outs = []
        for L, M in ((torch, TD), (ampgrad, D)):
            dl = M.DataLoader(M.TensorDataset(L.tensor(x)), **kw)
            outs.append((len(dl), list(dl)))
        assert outs[0][0] == outs[1][0]
        _same(outs[1][1], outs[0][1])
    for L, M, R in ((torch, TD, _TRange), (ampgrad, D, _Range)):
        assert [len(M.DataLoader(R(0, 10), batch_size=b, drop_last=d)) for b, d in ((3, False), (3, True),
                                                                                     (None, False))] == [4, 3, 10]
    it = D.DataLoader(D.TensorDataset(ampgrad.tensor(x)), batch_size=4)
    assert len(iter(it)) == 3
    with pytest.raises(ValueError, match="batch_size attribute should not be set after DataLoader is initialized"):
        it.batch_size = 3


_LOADER_BAD = [
    dict(num_workers=-1), dict(timeout=-1), dict(prefetch_factor=2), dict(persistent_workers=True),
    dict(num_workers=1, prefetch_factor=-1), dict(sampler=[0, 1], shuffle=True),
    dict(batch_sampler=[[0]], batch_size=2), dict(batch_sampler=[[0]], shuffle=True),
    dict(batch_sampler=[[0]], drop_last=True), dict(batch_sampler=[[0]], sampler=[0]),
    dict(batch_size=None, drop_last=True), dict(multiprocessing_context="fork"),
    dict(num_workers=1, multiprocessing_context="nope"), dict(batch_size=0),
]


@pytest.mark.parametrize("kw", _LOADER_BAD, ids=lambda k: str(k))
def test_loader_argument_errors_match_torch(kw):
    with pytest.raises(Exception) as et:
        TD.DataLoader(TD.TensorDataset(torch.zeros(4)), **kw)
    with pytest.raises(et.type) as ea:
        D.DataLoader(D.TensorDataset(ampgrad.zeros(4)), **kw)
    assert str(ea.value) == str(et.value)


@pytest.mark.parametrize("kw", [dict(shuffle=True), dict(sampler=[0]), dict(batch_sampler=[[0]])],
                         ids=lambda k: str(k))
def test_iterable_dataset_rejects_sampling_options(kw):
    with pytest.raises(ValueError) as et:
        TD.DataLoader(_TRange(0, 3), **kw)
    with pytest.raises(ValueError) as ea:
        D.DataLoader(_Range(0, 3), **kw)
    assert str(ea.value).split(", but got")[0] == str(et.value).split(", but got")[0]


def _shuffled(L, M, **kw):
    L.manual_seed(1234)
    dl = M.DataLoader(M.TensorDataset(L.arange(23)), batch_size=5, shuffle=True, **kw)
    out = [[b[0].tolist() for b in dl] for _ in range(3)]
    return out, L.rand(3).tolist()  # the global stream advanced as torch's


@pytest.mark.parametrize("workers", [0, 2])
def test_shuffle_orders_match_torch(workers):
    assert _shuffled(ampgrad, D, num_workers=workers) == _shuffled(torch, TD, num_workers=workers)


def _sampled(L, M):
    L.manual_seed(7)
    return (list(M.RandomSampler(range(10), replacement=True, num_samples=70)),
            list(M.RandomSampler(range(9), num_samples=20)), list(M.SubsetRandomSampler([5, 6, 7, 8])),
            [list(x) for x in M.random_split(range(10), [0.3, 0.7])],
            [list(x) for x in M.random_split(range(7), [2, 2, 3])], L.rand(2).tolist())


def test_sampler_draws_match_torch():
    assert _sampled(ampgrad, D) == _sampled(torch, TD)


class _SeedReport:
    def __init__(self, L, M):
        self.L, self.M = L, M

    def __len__(self):
        return 4

    def __getitem__(self, i):
        import random
        return [self.M.get_worker_info().seed, float(np.random.rand()), random.random(), float(self.L.rand(1))]


def test_worker_seeds_match_torch():
    out = []
    for L, M in ((torch, TD), (ampgrad, D)):
        L.manual_seed(99)
        out.append(list(M.DataLoader(_SeedReport(L, M), batch_size=None, num_workers=2)))
    assert out[0] == out[1]


def test_shuffle_is_reproducible_under_manual_seed():
    ds = D.TensorDataset(ampgrad.arange(10))
    ampgrad.manual_seed(7)
    a = [b[0].tolist() for b in D.DataLoader(ds, batch_size=4, shuffle=True)]
    ampgrad.manual_seed(7)
    b = [b[0].tolist() for b in D.DataLoader(ds, batch_size=4, shuffle=True)]
    assert a == b and sorted(sum(a, [])) == list(range(10)) and sum(a, []) != list(range(10))


def test_pin_memory_accepted():
    dl = D.DataLoader(D.TensorDataset(ampgrad.zeros(4)), batch_size=2, pin_memory=True)
    if not ampgrad.cuda.is_available():
        with pytest.warns(UserWarning, match="'pin_memory' argument is set as true but no accelerator is found"):
            out = list(dl)
    else:
        out = list(dl)
    assert len(out) == 2


def test_tensor_pickles():
    for t in (ampgrad.randn(2, 3), ampgrad.arange(5), ampgrad.tensor([True, False]),
              ampgrad.randn(3, dtype=ampgrad.float64, requires_grad=True), ampgrad.randn(4).to(ampgrad.bfloat16),
              ampgrad.randn(3, 4).t()):
        u = pickle.loads(pickle.dumps(t))
        assert u.dtype == t.dtype and u.shape == t.shape and u.requires_grad == t.requires_grad
        assert u.float().tolist() == t.float().tolist()


# ------------------------------------------------------------------------------------------- workers
def _init_fn(worker_id):
    np.random.seed(100 + worker_id)


class _SeedProbe(D.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = D.get_worker_info()
        return ampgrad.tensor([i, info.id, info.num_workers, info.seed % 1000, float(ampgrad.rand(1))])


def test_workers_map_style():
    ds = _Squares()
    ref = list(D.DataLoader(ds, batch_size=3))
    dl = D.DataLoader(ds, batch_size=3, num_workers=2, prefetch_factor=1)
    got = list(dl)
    assert [b["i"].tolist() for b in got] == [b["i"].tolist() for b in ref]  # sampler order
    assert all(ampgrad.equal(a["x"], b["x"]) for a, b in zip(got, ref))
    pids = {p for b in got for p in b["pid"].tolist()}
    assert len(pids) == 2 and __import__("os").getpid() not in pids  # real processes
    assert D.get_worker_info() is None
    # worker info: id, num_workers, seed = base_seed + id; seeding makes a run reproducible
    ampgrad.manual_seed(5)
    a = ampgrad.cat(list(D.DataLoader(_SeedProbe(), batch_size=2, num_workers=2, worker_init_fn=_init_fn)))
    ampgrad.manual_seed(5)
    b = ampgrad.cat(list(D.DataLoader(_SeedProbe(), batch_size=2, num_workers=2)))
    assert ampgrad.equal(a, b)
    assert a[:, 1].tolist() == [0, 0, 1, 1, 0, 0, 1, 1] and set(a[:, 2].tolist()) == {2}
    assert (a[2, 3] - a[0, 3]).item() in (1, -999)


def test_workers_iterable_dataset_matches_torch():
    for shard in (True, False):
        for bs in (3, None):
            t = [x.flatten().tolist() for x in TD.DataLoader(_TRange(0, 10, shard), batch_size=bs, num_workers=2)]
            a = [x.flatten().tolist() for x in D.DataLoader(_Range(0, 10, shard), batch_size=bs, num_workers=2)]
            assert a == t


def test_persistent_workers_across_epochs():
    dl = D.DataLoader(_Squares(), batch_size=4, num_workers=2, persistent_workers=True)
    e1 = [b["i"].tolist() for b in dl]
    pids1 = {p for b in dl for p in b["pid"].tolist()}
    e2 = [b["i"].tolist() for b in dl]
    pids2 = {p for b in dl for p in b["pid"].tolist()}
    assert e1 == e2 == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert pids1 == pids2  # the same worker processes
    it = dl._iterator
    del dl
    assert it._shutdown
    # an iterable dataset restarts in each epoch
    dl = D.DataLoader(_Range(0, 6), batch_size=2, num_workers=2, persistent_workers=True)
    assert [x.flatten().tolist() for x in dl] == [x.flatten().tolist() for x in dl]


class _Boom(D.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 2:
            raise KeyError("no item 2")
        return i


class _Slow(D.Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        time.sleep(1.0)
        return i


def test_worker_errors():
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process 0"):
        list(D.DataLoader(_Boom(), batch_size=None, num_workers=1))
    with pytest.raises(ZeroDivisionError, match="Caught ZeroDivisionError in DataLoader worker process"):
        list(D.DataLoader(_Squares(), num_workers=1, worker_init_fn=lambda i: 1 / 0))
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.2 seconds"):
        list(D.DataLoader(_Slow(), num_workers=1, timeout=0.2))


def test_training_loop_with_workers_matches_torch():
    """A small classifier trained from a DataLoader with 2 workers: the same batches and weights as torch
    (torch's loader runs in-process here: the batches are the same, and its workers start slowly)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((24, 4)).astype(np.float32)
    y = rng.integers(0, 3, 24)
    w0 = rng.standard_normal((3, 4)).astype(np.float32) * 0.1
    res = []
    for L, M in ((torch, TD), (ampgrad, D)):
        lin = L.nn.Linear(4, 3)
        with L.no_grad():
            lin.weight.copy_(L.tensor(w0))
            lin.bias.zero_()
        dl = M.DataLoader(M.TensorDataset(L.tensor(x), L.tensor(y)), batch_size=5,
                          num_workers=2 if L is ampgrad else 0)
        for _ in range(2):
            for xb, yb in dl:
                lin.zero_grad()
                L.nn.functional.cross_entropy(lin(xb), yb).backward()
                with L.no_grad():  # plain SGD (torch's optimizers import torch._dynamo: seconds)
                    for p in lin.parameters():
                        p.sub_(0.5 * p.grad)
        res.append(lin.weight.detach().numpy().copy())
    np.testing.assert_allclose(res[1], res[0], rtol=1e-5, atol=1e-7)


# ------------------------------------------------------------------- scripts' loops, end to end
def _mnist_shaped(L, M, workers):
    """pytorch/examples mnist/main.py's setup and loop (a conv net without max_pool2d, synthetic data):
    accelerator check, DataLoader(shuffle=True, num_workers, pin_memory), Adadelta, StepLR, nll_loss."""
    F = L.nn.functional
    use_accel = L.accelerator.is_available()
    device = L.accelerator.current_accelerator() if use_accel else L.device("cpu")
    L.manual_seed(1)
    rng = np.random.default_rng(0)
    x = L.tensor(rng.standard_normal((40, 1, 8, 8)).astype(np.float32))
    y = L.tensor(rng.integers(0, 10, 40))
    kw = {"batch_size": 8, "shuffle": True}
    if workers:
        kw.update({"num_workers": workers, "pin_memory": True})
    loader = M.DataLoader(M.TensorDataset(x, y), **kw)

    class Net(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = L.nn.Conv2d(1, 4, 3, 1)
            self.fc1 = L.nn.Linear(4 * 6 * 6, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = L.flatten(x, 1)
            return F.log_softmax(self.fc1(x), dim=1)
    model = Net().to(device)
    optimizer = L.optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = L.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
    losses = []
    for epoch in range(1, 3):
        model.train()
        for data, target in loader:
            data, target = data.to(device), target.to(device)
            optimizer.zero_grad()
            loss = F.nll_loss(model(data), target)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        scheduler.step()
    return losses, model.fc1.weight.detach().numpy().copy()


def test_mnist_shaped_script_matches_torch():
    with warnings_ignored():
        lt, wt = _mnist_shaped(torch, TD, 0)
        la, wa = _mnist_shaped(ampgrad, D, 2)
    np.testing.assert_allclose(la, lt, rtol=1e-5)
    np.testing.assert_allclose(wa, wt, rtol=1e-5, atol=1e-6)


class warnings_ignored:
    def __enter__(self):
        import warnings
        self._c = warnings.catch_warnings()
        self._c.__enter__()
        warnings.simplefilter("ignore")  # pin_memory without an accelerator warns, as torch's

    def __exit__(self, *a):
        return self._c.__exit__(*a)


class _CharDataset(D.Dataset):
    """minGPT's chargpt-style dataset: windows of a token stream."""

    def __init__(self, L, data, block):
        self.L, self.data, self.block = L, data, block

    def __len__(self):
        return len(self.data) - self.block

    def __getitem__(self, idx):
        chunk = self.data[idx:idx + self.block + 1]
        return self.L.tensor(chunk[:-1], dtype=self.L.long), self.L.tensor(chunk[1:], dtype=self.L.long)


def _mingpt_trainer_shaped(L, M, workers):
    """minGPT trainer.py's data pipeline: an endless RandomSampler with replacement, iter/next with
    StopIteration restarts, AdamW, clip_grad_norm_."""
    L.manual_seed(3)
    data = list(np.random.default_rng(1).integers(0, 11, 60))
    ds = _CharDataset(L, data, 6)
    model = L.nn.Sequential(L.nn.Embedding(11, 8), L.nn.Linear(8, 11))
    opt = L.optim.AdamW(model.parameters(), lr=1e-2, betas=(0.9, 0.95), weight_decay=0.1)
    loader = M.DataLoader(ds, sampler=M.RandomSampler(ds, replacement=True, num_samples=int(1e10)), shuffle=False,
                          pin_memory=True, batch_size=4, num_workers=workers)
    model.train()
    data_iter = iter(loader)
    losses = []
    for _ in range(12):
        try:
            batch = next(data_iter)
        except StopIteration:
            data_iter = iter(loader)
            batch = next(data_iter)
        x, y = batch
        logits = model(x)
        loss = L.nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1), ignore_index=-1)
        model.zero_grad(set_to_none=True)
        loss.backward()
        L.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
    return losses


def test_mingpt_trainer_shaped_matches_torch():
    with warnings_ignored():
        lt = _mingpt_trainer_shaped(torch, TD, 0)
        la = _mingpt_trainer_shaped(ampgrad, D, 2)
    np.testing.assert_allclose(la, lt, rtol=1e-5)


@pytest.mark.parametrize("n,replicas,shuffle,drop_last", [(10, 3, True, False), (10, 3, False, False),
                                                           (10, 3, True, True), (2, 4, True, False),
                                                           (12, 4, True, True)])
def test_distributed_sampler_matches_torch(n, replicas, shuffle, drop_last):
    for epoch in (0, 3):
        for rank in range(replicas):
            kw = dict(num_replicas=replicas, rank=rank, shuffle=shuffle, seed=5, drop_last=drop_last)
            t = TD.DistributedSampler(range(n), **kw)
            a = D.DistributedSampler(range(n), **kw)
            t.set_epoch(epoch)
            a.set_epoch(epoch)
            assert list(a) == list(t) and len(a) == len(t)
    with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval \[0, 1\]"):
        D.DistributedSampler(range(5), num_replicas=2, rank=2)
    with pytest.raises(ValueError, match="Default process group has not been initialized") as ea:
        D.DistributedSampler(range(5))  # torch: no default group -> get_world_size's ValueError
    with pytest.raises(ValueError) as et:
        TD.DistributedSampler(range(5))
    assert str(ea.value) == str(et.value)
