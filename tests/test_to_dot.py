"""autograd.graph.to_dot (issue 18 point 5): the DOT text of a small model's graph lists exactly the
reachable backward nodes (by grad_fn name) and edges, coloured by dtype, with shapes and the
sizes of the tensors each node saved."""
import re
from collections import Counter

import pytest

import ampgrad as ag
from ampgrad.autograd.graph import to_dot

NODE = re.compile(r'^\s*(n\d+) \[label="((?:[^"\\]|\\.)*)", fillcolor="(#[0-9a-f]{6})"\];$')
EDGE = re.compile(r"^\s*(n\d+) -> (n\d+);$")


def _walk(roots):
    """Reachable nodes (unique) and the number of edges, by a walk independent of to_dot."""
    keep, seen, stack, edges = [], set(), list(roots), 0
    for r in roots:
        seen.add(id(r))
        keep.append(r)
    while stack:
        n = stack.pop()
        for nxt, _ in n.next_functions:
            if nxt is None:
                continue
            edges += 1
            if id(nxt) not in seen:
                seen.add(id(nxt))
                keep.append(nxt)
                stack.append(nxt)
    return keep, edges


def _parse(dot):
    nodes, edges = {}, []
    for line in dot.splitlines():
        m = NODE.match(line)
        if m:
            nodes[m.group(1)] = (m.group(2).split("\\n"), m.group(3))
            continue
        m = EDGE.match(line)
        if m:
            edges.append((m.group(1), m.group(2)))
    return nodes, edges


def _model():
    ag.manual_seed(0)
    return ag.nn.Sequential(ag.nn.Linear(8, 16), ag.nn.GELU(), ag.nn.LayerNorm(16), ag.nn.Linear(16, 4))


@pytest.mark.parametrize("autocast", [False, True])
def test_nodes_and_edges_match_the_graph(autocast):
    model = _model()
    x = ag.randn(5, 8)
    with ag.autocast("cpu", dtype=ag.bfloat16, enabled=autocast):
        out = model(x)
    loss = out.float().pow(2).mean()
    dot = to_dot(loss, params=dict(model.named_parameters()))
    assert isinstance(dot, str) and dot.startswith("digraph autograd {") and dot.rstrip().endswith("}")
    nodes, edges = _parse(dot)
    reachable, n_edges = _walk([loss.grad_fn])
    assert Counter(label[0] for label, _ in nodes.values()) == Counter(n.name() for n in reachable)
    assert len(edges) == n_edges
    assert all(a in nodes and b in nodes for a, b in edges)
    names = [label[0] for label, _ in nodes.values()]
    assert names.count("torch::autograd::AccumulateGrad") == 6
    by_name = {}
    for label, color in nodes.values():
        by_name.setdefault(label[0], []).append((label, color))
    # leaves are named after their parameters, float32 (blue)
    leaves = by_name["torch::autograd::AccumulateGrad"]
    assert sorted(l[1] for l, _ in leaves) == sorted(n for n, _ in model.named_parameters())
    assert all(c == "#a6cee3" for _, c in leaves)
    # the output layer's addmm: shape + dtype of its output, and what it saved (input and weight)
    (label, color), = [e for e in by_name["AddmmBackward0"] if "(5, 4)" in e[0][1]]
    dt = "bfloat16" if autocast else "float32"
    assert label[1] == f"(5, 4) {dt}"
    assert color == ("#b2df8a" if autocast else "#a6cee3")
    saved = [l for l in label if l.startswith("saved")]
    assert saved, label
    # the saved tensors: the (5, 16) activations and the (16, 4) transposed weight or the (4, 16) weight
    shapes = [l.strip() for l in label[label.index(saved[0]) + 1:]]
    assert f"(5, 16) {dt}" in shapes
    assert all(re.fullmatch(r"\((\d+(, \d+)*)?\) \w+", s) for s in shapes), shapes
    assert int(saved[0].split(":")[0].split()[1]) == len(shapes)
    if autocast:
        assert "ToCopyBackward0" in names
        assert "#b2df8a" in {c for _, c in nodes.values()}


def test_multiple_outputs_no_graph_and_errors():
    a = ag.randn(3, requires_grad=True)
    y1, y2 = a * 2, a.exp()
    nodes, edges = _parse(to_dot([y1, y2]))
    assert sorted(l[0] for l, _ in nodes.values()) == ["ExpBackward0", "MulBackward0", "torch::autograd::AccumulateGrad"]
    assert len(edges) == 2
    nodes, edges = _parse(to_dot(ag.randn(2)))
    assert nodes == {} and edges == []
    with pytest.raises(TypeError, match="expected a Tensor or a sequence of Tensors"):
        to_dot([1.0])


def test_saved_bytes_and_render():
    a = ag.randn(64, 32, requires_grad=True)
    b = ag.randn(32, 16, requires_grad=True)
    y = (a @ b).tanh()
    dot = to_dot(y)
    nodes, _ = _parse(dot)
    mm = [l for l, _ in nodes.values() if l[0] == "MmBackward0"][0]
    # mm saves both operands: 64*32*4 + 32*16*4 bytes = 10 KiB
    assert "saved 2: 10.0 KiB" in mm
    tanh = [l for l, _ in nodes.values() if l[0] == "TanhBackward0"][0]
    assert "saved 1: 4.0 KiB" in tanh  # its output, (64, 16) float32
    try:
        import graphviz  # noqa: F401
        have = True
    except ImportError:
        have = False
    if have:
        try:
            svg = dot._repr_svg_()
        except Exception:
            svg = None
        assert svg is None or "<svg" in svg
    else:
        assert dot._repr_svg_() is None
        with pytest.raises(ImportError, match="graphviz"):
            dot.render("/tmp/never")
