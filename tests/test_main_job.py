"""The README's main job (examples/train_amp.py) runs end to end in a few steps: the validation loss falls,
a sample is generated, and the figure is written when matplotlib is installed; the same script under
--torch gives the same initial validation loss (same model init, same batches)."""
import os
import re
import subprocess
import sys

import pytest

import ampgrad

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "examples", "train_amp.py")


def _run(args, tmp_path):
    env = dict(os.environ)
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(ampgrad.__file__)))
    env["PYTHONPATH"] = pkg_parent + os.pathsep + env.get("PYTHONPATH", "")
    env["MPLBACKEND"] = "Agg"
    r = subprocess.run([sys.executable, SCRIPT] + args, env=env, capture_output=True, text=True, timeout=600,
                       cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def _val_losses(out):
    return [float(v) for v in re.findall(r"validation loss (\d+\.\d+)\n", out)]


def test_main_job_trains_and_plots(tmp_path):
    fig = tmp_path / "fig.png"
    out = _run(["--steps", "40", "--eval-every", "20", "--tput-steps", "2", "--plot", str(fig)], tmp_path)
    vals = _val_losses(out)
    assert len(vals) == 3 and vals[-1] < vals[0] - 0.8, out   # 4.15 -> < 3.3 after 40 steps
    assert "---- sample ----" in out and "throughput (median step): fp32" in out
    try:
        import matplotlib  # noqa: F401
        assert fig.exists() and fig.stat().st_size > 10000
    except ImportError:
        assert "no figure" in out


def test_main_job_same_start_as_torch(tmp_path):
    pytest.importorskip("torch")
    a = _val_losses(_run(["--steps", "1", "--tput-steps", "0", "--plot", ""], tmp_path))
    t = _val_losses(_run(["--steps", "1", "--tput-steps", "0", "--plot", "", "--torch"], tmp_path))
    assert abs(a[0] - t[0]) < 2e-3, (a, t)
