"""Public programs run unchanged under `import ampgrad as torch` and match torch (issue 14, point 1).

Copies of karpathy/micrograd, karpathy/minGPT, karpathy/nanoGPT and pytorch/examples' mnist live in
tests/programs/ (sources and licenses in tests/programs/SOURCES.md). tests/programs/_shim.py runs
each in a fresh subprocess under torch and under ampgrad (an import hook swaps `torch` for ampgrad;
the files are not edited) with small deterministic settings (CPU, dropout off, synthetic data,
one thread) and saves losses, weights, gradients and generated tokens; this file compares them.

Tolerances: losses 1e-6 relative in float32 (2e-3 under bf16 autocast); generated tokens exactly;
gradients 1e-5 of the tensor's largest entry (reduction order) and 1e-2 of its norm under bf16
autocast (a couple of bf16 roundings). Weights after Adam/AdamW/Adadelta steps compare to 1e-6 of
max(1, largest entry) plus an absolute 2e-5: Adam divides each gradient element by its own running
magnitude, so an element whose gradient is pure rounding noise in both libraries (an attention
key's bias has an exactly zero gradient) moves by a different ~1e-6 in each.
"""
import os
import pickle
import shutil
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("torch")

HERE = os.path.dirname(os.path.abspath(__file__))
SHIM = os.path.join(HERE, "programs", "_shim.py")
# The programs run in subprocesses with the ampgrad this test process imports (the source tree under
# PYTHONPATH=python, site-packages after `pip install .`): its parent directory goes first on their path.
import ampgrad as _ampgrad  # noqa: E402

PYTHON_TREE = os.environ.get("AMPGRAD_TEST_TREE") or os.path.dirname(os.path.dirname(os.path.abspath(_ampgrad.__file__)))
_CACHE = {}


def _run(tmp, backend, program, *args):
    key = (backend, program) + args
    if key in _CACHE:
        return _CACHE[key]
    out = os.path.join(tmp, f"{backend}_{program}_{abs(hash(args))}.npz")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.abspath(PYTHON_TREE) + os.pathsep + env.get("PYTHONPATH", "")
    env["OMP_NUM_THREADS"] = "1"
    p = subprocess.run([sys.executable, SHIM, backend, out, program, *args], env=env, cwd=tmp,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, f"{program} under {backend} failed:\n{p.stdout[-3000:]}\n{p.stderr[-6000:]}"
    r = dict(np.load(out))
    r["_stdout"] = p.stdout
    _CACHE[key] = r
    return r


@pytest.fixture(scope="module")
def tmp(tmp_path_factory):
    return str(tmp_path_factory.mktemp("programs"))


def _ratio(name, t, a):
    print(f"\n{name}: ampgrad {float(a['wall_s']):.2f}s, torch {float(t['wall_s']):.2f}s, "
          f"ratio {float(a['wall_s']) / float(t['wall_s']):.2f}")


def _compare(t, a, *, loss_rtol=1e-6, grad_rel=1e-5, grad_norm_rel=None, w_atol=2e-5):
    keys = [k for k in t if k not in ("wall_s", "_stdout")]
    assert set(keys) <= set(a), sorted(set(keys) - set(a))
    for k in keys:
        x, y = np.asarray(t[k]), np.asarray(a[k])
        assert x.shape == y.shape, (k, x.shape, y.shape)
        if x.dtype.kind in "iub":
            np.testing.assert_array_equal(y, x, err_msg=k)
        elif "loss" in k or k == "ok":
            np.testing.assert_allclose(y, x, rtol=loss_rtol, atol=0, err_msg=k)
        elif k.startswith("grad0.") or ".opt." in k:
            if grad_norm_rel is not None:
                assert np.linalg.norm(y - x) <= grad_norm_rel * np.linalg.norm(x) + 1e-30, k
            else:
                assert np.max(np.abs(y - x)) <= grad_rel * max(np.max(np.abs(x)), 1e-30), k
        elif k.startswith("init."):
            # same seed, torch's CPU stream; torch's AVX2 normal_fill rounds log/cos/sin with SLEEF (1 ulp)
            assert np.max(np.abs(y - x), initial=0) <= 1e-6 * max(float(np.max(np.abs(x), initial=0)), 1e-30), k
        else:
            scale = max(1.0, float(np.max(np.abs(x)))) if x.size else 1.0
            assert np.max(np.abs(y - x), initial=0) <= 1e-6 * scale + w_atol, (k, np.max(np.abs(y - x)))


def test_micrograd_test_engine(tmp):
    """micrograd's own test file: it compares micrograd's Value with `torch` (here ampgrad)."""
    t = _run(tmp, "torch", "micrograd")
    a = _run(tmp, "ampgrad", "micrograd")
    _ratio("micrograd", t, a)


def test_mingpt_model_trainer_generate(tmp):
    """minGPT's GPT, its Trainer (DataLoader with a RandomSampler drawing with replacement, AdamW
    from configure_optimizers, clip_grad_norm_) and generate() greedy, sampled and top-k."""
    t = _run(tmp, "torch", "mingpt")
    a = _run(tmp, "ampgrad", "mingpt")
    _ratio("minGPT", t, a)
    _compare(t, a)


@pytest.mark.parametrize("autocast", ["fp32", "bf16"])
def test_nanogpt_model(tmp, autocast):
    """nanoGPT's model.py: GPT, configure_optimizers (fused AdamW probe), training steps (under CPU
    bf16 autocast for "bf16"), generate() greedy, top-k and plain sampling."""
    t = _run(tmp, "torch", "nanogpt_model", autocast)
    a = _run(tmp, "ampgrad", "nanogpt_model", autocast)
    _ratio(f"nanoGPT model {autocast}", t, a)
    if autocast == "fp32":
        _compare(t, a)
    else:
        # weights after AdamW steps on bf16 gradients differ by up to lr per step: not compared
        for k in list(t):
            if k.startswith("final."):
                del t[k]
        _compare(t, a, loss_rtol=2e-3, grad_norm_rel=1e-2)


def _nanogpt_dir(tmp, name):
    d = os.path.join(tmp, name)
    if not os.path.isdir(d):
        os.makedirs(os.path.join(d, "data", "synth"))
        rng = np.random.default_rng(0)
        rng.integers(0, 50, size=4000).astype(np.uint16).tofile(os.path.join(d, "data", "synth", "train.bin"))
        rng.integers(0, 50, size=1000).astype(np.uint16).tofile(os.path.join(d, "data", "synth", "val.bin"))
        with open(os.path.join(d, "data", "synth", "meta.pkl"), "wb") as f:  # train.py reads vocab_size here
            pickle.dump({"vocab_size": 64}, f)
        shutil.copy(os.path.join(HERE, "programs", "nanogpt", "configurator.py"), d)
    return d


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_nanogpt_train_script(tmp, dtype):
    """nanoGPT's train.py as a script (globals + configurator.py reading sys.argv), CPU, synthetic
    train.bin/val.bin memmaps; ampgrad runs with compile=True (ampgrad.compile is the identity),
    torch with compile=False. On CPU train.py's ctx is a nullcontext, so every dtype computes in
    float32 (float16 asks for a CUDA GradScaler, which disables itself with a warning)."""
    d = _nanogpt_dir(tmp, "nanogpt_" + dtype)
    common = ["--dataset=synth", "--n_layer=2", "--n_head=2", "--n_embd=32", "--block_size=16", "--batch_size=4",
              "--max_iters=5", "--eval_iters=2", "--eval_interval=5", "--log_interval=1", "--device=cpu",
              f"--dtype={dtype}", "--gradient_accumulation_steps=2", "--dropout=0.0"]
    t = _run(tmp, "torch", "nanogpt_train", d, *common, "--compile=False", "--out_dir=out_torch")
    a = _run(tmp, "ampgrad", "nanogpt_train", d, *common, "--compile=True", "--out_dir=out_ampgrad")
    _ratio(f"nanoGPT train.py {dtype}", t, a)
    assert "compiling the model" in a["_stdout"]
    assert len(t["train_losses"]) == 6 and t["eval_losses"].shape == (2, 2)
    # printed losses have 4 decimals: equal strings; the last loss itself to 1e-6
    np.testing.assert_array_equal(a["train_losses"], t["train_losses"])
    np.testing.assert_array_equal(a["eval_losses"], t["eval_losses"])
    _compare(t, a)


def test_mnist_main(tmp):
    """pytorch/examples mnist/main.py (Conv2d, max_pool2d, Dropout, Adadelta, StepLR, DataLoader,
    nll_loss, torch.save of the state_dict) with a synthetic torchvision MNIST; 2 epochs."""
    dt = os.path.join(tmp, "mnist_torch")
    da = os.path.join(tmp, "mnist_ampgrad")
    os.makedirs(dt, exist_ok=True)
    os.makedirs(da, exist_ok=True)
    t = _run(tmp, "torch", "mnist", dt)
    a = _run(tmp, "ampgrad", "mnist", da)
    _ratio("mnist", t, a)
    _compare(t, a)
    assert "Test set: Average loss" in a["_stdout"]


def test_checkpoints_cross_load(tmp):
    """The checkpoints the programs wrote (torch.save) load in the other library."""
    import torch
    import ampgrad
    for sub in ("mnist_torch", "mnist_ampgrad"):
        path = os.path.join(tmp, sub, "mnist_cnn.pt")
        if not os.path.exists(path):
            pytest.skip("test_mnist_main did not run")
        st, sa = torch.load(path), ampgrad.load(path)
        assert list(st) == list(sa)
        for k in st:
            np.testing.assert_array_equal(sa[k].numpy(), st[k].numpy())


def test_regression_main(tmp):
    """pytorch/examples regression/main.py as a script: random polynomial, Linear, smooth_l1_loss,
    manual SGD on param.data until the loss is below 1e-3. The target is torch's (same seed); the
    number of batches to converge is not compared: the batches come from randn, whose normal_fill
    values differ from torch's AVX2 (SLEEF) ones in the last bit, and hundreds of SGD steps to a
    threshold turn that into a different stopping batch (821 vs 830 seen)."""
    t = _run(tmp, "torch", "regression")
    a = _run(tmp, "ampgrad", "regression")
    _ratio("regression", t, a)
    np.testing.assert_allclose(a["W_target"], t["W_target"], rtol=1e-5)
    assert float(a["loss"]) < 1e-3 and float(t["loss"]) < 1e-3
    assert abs(int(a["batches"]) - int(t["batches"])) <= 0.1 * int(t["batches"])
    for k in ("final.weight", "final.bias"):  # both fitted the same polynomial
        np.testing.assert_allclose(a[k], t[k], rtol=0, atol=0.2)


def test_vae_main(tmp):
    """pytorch/examples vae/main.py (randn_like reparameterisation, binary_cross_entropy, Adam, saved
    reconstructions and samples) with a synthetic torchvision MNIST, 2 epochs."""
    d = {b: os.path.join(tmp, "vae_" + b) for b in ("torch", "ampgrad")}
    for v in d.values():
        os.makedirs(v, exist_ok=True)
    t = _run(tmp, "torch", "vae", d["torch"])
    a = _run(tmp, "ampgrad", "vae", d["ampgrad"])
    _ratio("vae", t, a)
    assert len(t["train_losses"]) == 6 and len(t["test_losses"]) == 2
    _compare(t, a)  # printed losses (6 and 4 decimals) to 1e-6, saved images and weights


def test_dcgan_main(tmp):
    """pytorch/examples dcgan/main.py with torchvision's FakeData (synthetic), tiny widths, 2 epochs."""
    d = {b: os.path.join(tmp, "dcgan_" + b) for b in ("torch", "ampgrad")}
    for v in d.values():
        os.makedirs(v, exist_ok=True)
    t = _run(tmp, "torch", "dcgan", d["torch"])
    a = _run(tmp, "ampgrad", "dcgan", d["ampgrad"])
    _ratio("dcgan", t, a)
    assert len(t["loss_Loss_D"]) == 4
    _compare(t, a)


def test_mnist_forward_forward_main(tmp):
    """pytorch/examples mnist_forward_forward/main.py with a synthetic MNIST, 5 epochs per layer."""
    d = {b: os.path.join(tmp, "ff_" + b) for b in ("torch", "ampgrad")}
    for v in d.values():
        os.makedirs(v, exist_ok=True)
    t = _run(tmp, "torch", "forward_forward", d["torch"])
    a = _run(tmp, "ampgrad", "forward_forward", d["ampgrad"])
    _ratio("mnist_forward_forward", t, a)
    assert len(t["losses"]) >= 2
    _compare(t, a)


@pytest.mark.parametrize("model", ["LSTM", "GRU", "RNN_TANH", "Transformer"])
def test_word_language_model_main(tmp, model):
    """pytorch/examples word_language_model/main.py as a script, for each --model: training with
    clip_grad_norm_ and SGD on p.data, the best model saved whole with torch.save and loaded back with
    torch.load under serialization.safe_globals naming classes by torch's module paths
    (torch.nn.modules.activation.MultiheadAttention, Note [torch's module paths]), then tested."""
    t = _run(tmp, "torch", "word_lm", tmp, model)
    a = _run(tmp, "ampgrad", "word_lm", tmp, model)
    _ratio(f"word_language_model {model}", t, a)
    assert "End of training" in a["_stdout"]
    _compare(t, a, loss_rtol=1e-5)


def _dirs(tmp, name):
    d = {b: os.path.join(tmp, f"{name}_{b}") for b in ("torch", "ampgrad")}
    for v in d.values():
        os.makedirs(v, exist_ok=True)
    return d


def test_mnist_rnn_main(tmp):
    """pytorch/examples mnist_rnn/main.py as a script (LSTM batch_first, BatchNorm1d, Dropout2d on a 2-D
    input, Adadelta, StepLR, torch.save of the state_dict) with a synthetic MNIST, 2 epochs."""
    d = _dirs(tmp, "mnist_rnn")
    t = _run(tmp, "torch", "mnist_rnn", d["torch"])
    a = _run(tmp, "ampgrad", "mnist_rnn", d["ampgrad"])
    _ratio("mnist_rnn", t, a)
    assert len(t["train_losses"]) == 12 and len(t["test_losses"]) == 2
    _compare(t, a)  # printed losses (6 and 4 decimals) to 1e-6, test accuracy exactly, saved weights


@pytest.mark.parametrize("program", ["reinforce", "actor_critic"])
def test_reinforcement_learning(tmp, program):
    """pytorch/examples reinforcement_learning/{reinforce,actor_critic}.py as scripts: torch.distributions.
    Categorical (samples from torch.multinomial's stream, log_prob), torch.tensor of a deque, returns
    normalised with std, smooth_l1_loss, Adam; a synthetic CartPole (_shim.py: gymnasium's dynamics),
    12 episodes. The sampled actions decide the episodes, so equal rewards mean equal samples."""
    t = _run(tmp, "torch", "reinforce", program)
    a = _run(tmp, "ampgrad", "reinforce", program)
    _ratio(program, t, a)
    assert len(t["rewards"]) == 12 and "Solved!" in a["_stdout"]
    np.testing.assert_array_equal(a["rewards"], t["rewards"])
    _compare(t, a)


def _graph_example(tmp, name):
    d = _dirs(tmp, name)
    t = _run(tmp, "torch", name, d["torch"])
    a = _run(tmp, "ampgrad", name, d["ampgrad"])
    _ratio(name, t, a)
    assert len(t["eval_losses"]) == 9 and "Test set results" in a["_stdout"]
    _compare(t, a)  # every train/val/test loss to 1e-6, accuracies exactly (to 1e-6), weights


def test_gat_main(tmp):
    """pytorch/examples gat/main.py: its GAT model and its own main block (argparse, randperm split,
    train_iter/test, Adam with weight decay, NLLLoss) on a synthetic 1700-node Cora written where it
    looks for it; its load_cora as written (sparse COO: to_sparse, sparse_coo_tensor, sparse @ dense), 4
    epochs."""
    _graph_example(tmp, "gat")


def test_gcn_main(tmp):
    """pytorch/examples gcn/main.py unchanged: load_cora's sparse COO normalization (D^-1/2 (I + A) D^-1/2
    through sparse_coo_tensor, dense + sparse, sparse @ dense, dense @ sparse, to_sparse), GraphConv's
    torch.mm(sparse features, W) and torch.spmm(adjacency, support), Adam with weight decay, NLLLoss, its
    own main block (the Cora download served from a synthetic .tgz), 4 epochs."""
    _graph_example(tmp, "gcn")


def test_mnist_hogwild_main(tmp):
    """pytorch/examples mnist_hogwild unchanged (torch.multiprocessing with the 'spawn' start method,
    model.share_memory(), the model and dataset pickled into an mp.Process): the weights the parent tests
    are the ones the child trained, through shared memory. One training process (deterministic), synthetic
    MNIST; the child's printed losses, the parent's test loss and the final weights match torch's."""
    d = _dirs(tmp, "hogwild")
    t = _run(tmp, "torch", "hogwild", d["torch"])
    a = _run(tmp, "ampgrad", "hogwild", d["ampgrad"])
    _ratio("hogwild", t, a)
    train_t, train_a = (_child_losses(r["_stdout"]) for r in (t, a))
    assert len(train_t) == 12 and len(train_a) == 12  # 6 batches, the driver runs twice
    np.testing.assert_allclose(train_a, train_t, rtol=1e-5)
    assert len(a["test_loss"]) == 1
    _compare(t, a, loss_rtol=1e-5)


def _child_losses(stdout):
    return np.array([float(line.rsplit("Loss: ", 1)[1]) for line in stdout.splitlines() if "Train Epoch" in line])
