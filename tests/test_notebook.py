"""examples/amp_tour.ipynb executes (its cells assert what they show), and its printed outputs match the
same notebook run on torch (tensor reprs, autocast dtypes, the GradScaler history, the graph's node names).
Skipped when Jupyter's nbclient / ipykernel are not installed."""
import copy
import os
import re

import pytest

import ampgrad

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NB = os.path.join(ROOT, "examples", "amp_tour.ipynb")


def _run(nb, monkeypatch):
    # the kernel is a subprocess: it must import the ampgrad this test imported
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(ampgrad.__file__)))
    monkeypatch.setenv("PYTHONPATH", pkg_parent + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": os.path.dirname(NB)}})
    client.execute()
    return nb


def _texts(nb):
    out = []
    for c in nb.cells:
        if c.cell_type != "code":
            continue
        t = ""
        for o in c.outputs:
            if o.output_type == "stream":
                t += o.text
            elif o.output_type == "execute_result":
                t += o.data.get("text/plain", "")
        out.append(re.sub(r"\b(ampgrad|torch)\.(?=\w)", "LIB.", t))
    return out


def test_amp_tour_runs_and_matches_torch(monkeypatch):
    nb = nbformat.read(NB, as_version=4)
    assert not any(c.get("outputs") for c in nb.cells if c.cell_type == "code"), "commit the notebook without outputs"
    ours = _texts(_run(copy.deepcopy(nb), monkeypatch))
    assert "tensor([[" in ours[0]
    torch = pytest.importorskip("torch")  # noqa: F841
    tnb = copy.deepcopy(nb)
    for c in tnb.cells:
        if c.cell_type == "code":
            c.source = c.source.replace("ampgrad", "torch")
    theirs = _texts(_run(tnb, monkeypatch))
    assert ours[0] == theirs[0]  # the repr of a tensor from the same seed
    assert ours[1] == theirs[1]  # the autocast dtypes
    assert ours[3] == theirs[3]  # GradScaler: updates skipped and scales
    assert ours[4] == theirs[4]  # gradcheck
    # the autograd graph: the same node names in the same order
    assert ours[-1].split() == theirs[-1].split()
