"""ampgrad.save / ampgrad.load against torch.save / torch.load: both directions, every dtype, views,
weights_only's allow-list (and add_safe_globals / safe_globals), mmap=True, state dicts of modules,
optimizers and GradScaler, and corrupted or truncated files (an exception, never a crash)."""
import fractions
import io
import os
import pickle
import zipfile

import numpy as np
import pytest

import ampgrad

torch = pytest.importorskip("torch")

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool"]


def _np(t):
    if t.dtype in (ampgrad.bfloat16, torch.bfloat16):
        t = t.float()
    return t.detach().numpy()


def _make(lib, dt):
    x = lib.arange(24, dtype=lib.float64).reshape(4, 6) * 1.37 - 9
    return (x > 0) if dt == "bool" else x.to(getattr(lib, dt))


@pytest.mark.parametrize("mmap", [False, True])
@pytest.mark.parametrize("writer", ["ampgrad", "torch"])
def test_every_dtype_and_views_both_directions(tmp_path, writer, mmap):
    W, R = (ampgrad, torch) if writer == "ampgrad" else (torch, ampgrad)
    path = str(tmp_path / "ck.pt")
    obj = {}
    for dt in DTYPES:
        x = _make(W, dt)
        obj[dt] = x
        obj[dt + "_t"] = x.t()           # a view of the same storage
        obj[dt + "_s"] = x[1:, ::2]      # offset + strides
    obj["scalar"] = W.tensor(2.5)
    obj["empty"] = W.zeros(0, 3)
    W.save(obj, path)
    out = R.load(path, mmap=mmap)
    for k, v in obj.items():
        got = out[k]
        assert str(got.dtype).split(".")[-1] == str(v.dtype).split(".")[-1], k
        assert tuple(got.shape) == tuple(v.shape), k
        assert tuple(got.stride()) == tuple(v.stride()), k
        np.testing.assert_array_equal(_np(got), _np(v), err_msg=k)
    # views still share one storage after the load (a write through one shows in the other)
    out["float32"][0, 1] = 123.0
    assert float(out["float32_t"][1, 0]) == 123.0


def test_storage_records_are_64_byte_aligned_and_torch_maps_them(tmp_path):
    path = str(tmp_path / "al.pt")
    ampgrad.save({"a": ampgrad.arange(7.), "b": ampgrad.arange(3, dtype=ampgrad.int8),
                  "c": ampgrad.ones(5, dtype=ampgrad.float64)}, path)
    raw = open(path, "rb").read()
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            if "/data/" in info.filename:
                h = info.header_offset
                n = int.from_bytes(raw[h + 26:h + 28], "little")
                m = int.from_bytes(raw[h + 28:h + 30], "little")
                assert (h + 30 + n + m) % 64 == 0, info.filename
    t = torch.load(path, mmap=True)
    np.testing.assert_array_equal(t["a"].numpy(), np.arange(7.0, dtype=np.float32))


def test_mmap_is_copy_on_write(tmp_path):
    path = str(tmp_path / "m.pt")
    ampgrad.save({"w": ampgrad.arange(10.)}, path)
    before = open(path, "rb").read()
    a = ampgrad.load(path, mmap=True)
    a["w"].mul_(2)
    assert float(a["w"][3]) == 6.0
    assert open(path, "rb").read() == before
    np.testing.assert_array_equal(ampgrad.load(path)["w"].numpy(), np.arange(10.0, dtype=np.float32))
    with pytest.raises(ValueError, match="file path"):
        ampgrad.load(io.BytesIO(before), mmap=True)


def test_weights_only_allow_list_like_torch(tmp_path):
    path = str(tmp_path / "w.pt")
    obj = {"frac": fractions.Fraction(1, 3), "t": ampgrad.ones(2)}
    ampgrad.save(obj, path)
    for L in (ampgrad, torch):
        with pytest.raises(pickle.UnpicklingError, match="Unsupported global: GLOBAL fractions.Fraction"):
            L.load(path)
        with pytest.raises(pickle.UnpicklingError, match="fractions.Fraction"):
            L.load(path, weights_only=True)
        assert L.load(path, weights_only=False)["frac"] == fractions.Fraction(1, 3)
        with L.serialization.safe_globals([fractions.Fraction]):
            assert L.load(path)["frac"] == fractions.Fraction(1, 3)
        with pytest.raises(pickle.UnpicklingError):  # the context manager's additions are gone
            L.load(path)
        L.serialization.add_safe_globals([fractions.Fraction])
        try:
            assert fractions.Fraction in L.serialization.get_safe_globals()
            assert L.load(path)["frac"] == fractions.Fraction(1, 3)
        finally:
            L.serialization.clear_safe_globals()
    # what torch allows by default loads: containers, sets, complex, bytearray, dtypes, devices, sizes
    ok = {"set": {1, 2}, "c": complex(1, 2), "ba": bytearray(b"xy"), "dt": ampgrad.float16,
          "dev": ampgrad.device("cpu"), "sz": ampgrad.Size([2, 3]), "od": __import__("collections").OrderedDict(a=1)}
    ampgrad.save(ok, path)
    for L in (ampgrad, torch):
        got = L.load(path)
        assert got["set"] == {1, 2} and got["c"] == complex(1, 2) and got["ba"] == bytearray(b"xy")
        assert str(got["dt"]).split(".")[-1] == "float16" and str(got["dev"]) == "cpu" and tuple(got["sz"]) == (2, 3)
    with pytest.raises(RuntimeError, match="Can not safely load weights when explicit pickle_module"):
        ampgrad.load(path, pickle_module=pickle, weights_only=True)
    # an explicit pickle_module without weights_only means a full unpickle, as torch
    assert ampgrad.load(path, pickle_module=pickle)["c"] == complex(1, 2)


def test_weights_only_refuses_code_execution(tmp_path):
    class Evil:
        def __reduce__(self):
            return (os.system, ("echo pwned > " + str(tmp_path / "pwned"),))

    path = str(tmp_path / "evil.pt")
    torch.save({"x": Evil()}, path)
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global"):
        ampgrad.load(path)
    assert not (tmp_path / "pwned").exists()


def _train_steps(lib, model, opt, scaler, xs):
    for x in xs:
        opt.zero_grad()
        with lib.autocast("cpu", dtype=lib.bfloat16):
            loss = model(lib.tensor(x)).float().square().mean()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()


@pytest.mark.parametrize("writer", ["ampgrad", "torch"])
@pytest.mark.parametrize("opt_name", ["Adam", "SGD"])
def test_resume_model_optimizer_scaler_across_libraries(tmp_path, writer, opt_name):
    """Train 3 steps in one library, checkpoint, resume in the other: the 4th step equals the writer's."""
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((8, 5)).astype(np.float32) for _ in range(4)]
    W, R = (ampgrad, torch) if writer == "ampgrad" else (torch, ampgrad)
    kw = {"lr": 0.01, "momentum": 0.9} if opt_name == "SGD" else {"lr": 0.01}
    W.manual_seed(0)
    wm = W.nn.Sequential(W.nn.Linear(5, 7), W.nn.ReLU(), W.nn.Linear(7, 3))
    wopt = getattr(W.optim, opt_name)(wm.parameters(), **kw)
    wsc = W.amp.GradScaler("cpu", init_scale=2.0 ** 10, growth_interval=2)
    _train_steps(W, wm, wopt, wsc, xs[:3])
    path = str(tmp_path / "resume.pt")
    W.save({"model": wm.state_dict(), "opt": wopt.state_dict(), "scaler": wsc.state_dict()}, path)
    ck = R.load(path)
    rm = R.nn.Sequential(R.nn.Linear(5, 7), R.nn.ReLU(), R.nn.Linear(7, 3))
    rm.load_state_dict(ck["model"])
    ropt = getattr(R.optim, opt_name)(rm.parameters(), **kw)
    ropt.load_state_dict(ck["opt"])
    rsc = R.amp.GradScaler("cpu")
    rsc.load_state_dict(ck["scaler"])
    assert rsc.get_scale() == wsc.get_scale() and rsc.state_dict() == wsc.state_dict()
    _train_steps(W, wm, wopt, wsc, xs[3:])
    _train_steps(R, rm, ropt, rsc, xs[3:])
    for (k, a), b in zip(wm.state_dict().items(), rm.state_dict().values()):
        np.testing.assert_allclose(_np(b), _np(a), rtol=2e-5, atol=1e-7, err_msg=k)
    assert rsc.get_scale() == wsc.get_scale()


def test_map_location_forms(tmp_path):
    path = str(tmp_path / "ml.pt")
    torch.save({"a": torch.arange(3.)}, path)
    seen = []
    for ml in (None, "cpu", ampgrad.device("cpu"), {"cpu": "cpu"},
               lambda s, loc: seen.append(loc) or s):
        out = ampgrad.load(path, map_location=ml)
        np.testing.assert_array_equal(out["a"].numpy(), [0.0, 1.0, 2.0])
    assert seen == ["cpu"]


def test_truncated_and_corrupted_files_raise(tmp_path):
    path = str(tmp_path / "c.pt")
    ampgrad.save({"a": ampgrad.arange(100.), "b": [1, 2, {"c": ampgrad.ones(3, dtype=ampgrad.int64)}]}, path)
    data = open(path, "rb").read()
    errors = (RuntimeError, pickle.UnpicklingError, EOFError)
    bad = str(tmp_path / "bad.pt")
    for cut in list(range(0, len(data), max(1, len(data) // 97))) + [len(data) - 1]:
        with open(bad, "wb") as f:
            f.write(data[:cut])
        for mm in (False, True):
            with pytest.raises(errors):
                ampgrad.load(bad, mmap=mm)
    rng = np.random.default_rng(1)
    survived = 0
    for _ in range(200):  # random byte flips: an exception or a result, never a crash
        b = bytearray(data)
        for i in rng.integers(0, len(b), 3):
            b[i] ^= int(rng.integers(1, 256))
        with open(bad, "wb") as f:
            f.write(bytes(b))
        try:
            ampgrad.load(bad)
            survived += 1
        except errors:
            pass
    assert survived < 200
    # a storage record shorter than the pickle says
    with zipfile.ZipFile(path) as z, zipfile.ZipFile(bad, "w") as out:
        for info in z.infolist():
            payload = z.read(info)
            out.writestr(info, payload[:8] if info.filename.endswith("/data/0") else payload)
    with pytest.raises(RuntimeError, match="data/0"):
        ampgrad.load(bad)
    # torch raises RuntimeError for the same truncation
    with open(bad, "wb") as f:
        f.write(data[: len(data) // 2])
    with pytest.raises(RuntimeError):
        torch.load(bad)
    with pytest.raises(RuntimeError, match="PytorchStreamReader"):
        ampgrad.load(bad)
