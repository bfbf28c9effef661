"""The Python package's imports point one way (issue 11, engine architecture).

Every module of python/ampgrad is parsed with `ast` (nothing is imported) and its imports of ampgrad
modules, relative or absolute, at module level or inside functions, become edges of a module graph.
The graph must have no cycle, and no function may import an ampgrad module: a function-local import
is how a cycle hides. On top of that, every module sits in a layer (_LAYERS) and imports only modules of its own
layer or lower ones:

    _C -> leaf helpers (_creation, _dtype_info, _tensor_str, _indexing) -> _tensor -> _functions,
    _linalg_extra -> autograd -> amp, cuda, cpu, backends, nn, optim, linalg, profiler, ... -> __init__

Importing `ampgrad.a.b` runs `ampgrad/__init__.py` and `ampgrad/a/__init__.py` first, so an import
also depends on the packages around its target, except those that already contain the importer.
`from pkg import name`, where `name` is not a submodule, depends on `pkg/__init__.py` itself (that is
what `from .. import tensor` inside a subpackage did: a dependency on the whole of ampgrad)."""
import ast
import importlib.util
import os

import pytest

_PKG = "ampgrad"

# The layers, lowest first: a module (or a package with everything under it) may import modules of
# its own layer and the layers below. A new module must be placed here.
_LAYERS = [
    ["ampgrad._C", "ampgrad._cpuinfo", "ampgrad._load_C"],
    ["ampgrad._creation", "ampgrad._dtype_info", "ampgrad._tensor_str", "ampgrad._indexing", "ampgrad._op_gate",
     "ampgrad.return_types", "ampgrad._signatures", "ampgrad._argparse", "ampgrad._out", "ampgrad._out_ops"],  # leaves
    ["ampgrad._tensor"],
    ["ampgrad._functions", "ampgrad._linalg_extra", "ampgrad._sorting", "ampgrad._scan_index", "ampgrad._legacy", "ampgrad._rnn", "ampgrad._special_ops", "ampgrad._shape_extra", "ampgrad._dlpack", "ampgrad._inplace_methods"],
    ["ampgrad.autograd"],
    ["ampgrad.amp", "ampgrad._autocast_state", "ampgrad.cuda", "ampgrad.cpu", "ampgrad.backends", "ampgrad.nn",
     "ampgrad._nn_ops", "ampgrad.optim", "ampgrad.linalg", "ampgrad.func", "ampgrad.profiler", "ampgrad._surface",
     "ampgrad.accelerator", "ampgrad.utils", "ampgrad.multiprocessing", "ampgrad._nn_ops_more", "ampgrad.distributed", "ampgrad.serialization", "ampgrad.special",
     "ampgrad.testing", "ampgrad.onnx"],
    ["ampgrad._linalg_decomp"],  # torch-level fronts over ampgrad.linalg
    ["ampgrad.masked", "ampgrad.signal", "ampgrad.distributions", "ampgrad._misc_ops", "ampgrad._aten_ops"],  # Python compositions over nn / linalg / sorting
    ["ampgrad.types", "ampgrad._ops", "ampgrad.library"],
    ["ampgrad.sparse"],  # COO tensors over engine ops (Note [Sparse COO])  # torch.library custom ops (issue 18)
]


def _package_dir():
    spec = importlib.util.find_spec(_PKG)  # locates the package without importing it
    assert spec is not None and spec.submodule_search_locations, "ampgrad not found"
    return list(spec.submodule_search_locations)[0]


def _modules(root):
    """{module name: (path or None for an extension module, is_package)}."""
    mods = {}
    # followlinks: the sanitizer build's tree (tools/sanitize.sh) links the subpackages into place
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        dirnames[:] = [d for d in dirnames if not d.startswith((".", "__pycache__"))]
        rel = os.path.relpath(dirpath, root)
        prefix = _PKG if rel == "." else _PKG + "." + rel.replace(os.sep, ".")
        for f in filenames:
            if f == "__init__.py":
                mods[prefix] = (os.path.join(dirpath, f), True)
            elif f.endswith(".py"):
                mods[prefix + "." + f[:-3]] = (os.path.join(dirpath, f), False)
            elif f.endswith((".so", ".pyd")) and f.split(".")[0].isidentifier():
                # (_C-avx2.*.so and _C-avx512.*.so are not importable names: _load_C loads one of them as _C)
                mods[prefix + "." + f.split(".")[0]] = (None, False)
    return mods


def _contains(pkg, mod):
    return mod == pkg or mod.startswith(pkg + ".")


class _Imports(ast.NodeVisitor):
    """Collects (target module, line, inside a function) for each import of an ampgrad module."""

    def __init__(self, name, is_pkg, mods):
        self.name, self.mods = name, mods
        self.package = name if is_pkg else name.rpartition(".")[0]
        self.depth = 0
        self.found = []

    def _function(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def _add(self, target, node):
        self.found.append((target, node.lineno, self.depth > 0))

    def visit_Import(self, node):
        for alias in node.names:
            if _contains(_PKG, alias.name):
                self._add(alias.name, node)

    def visit_ImportFrom(self, node):
        if node.level:
            parts = self.package.split(".")
            base = ".".join(parts[:len(parts) - (node.level - 1)])
            if node.module:
                base += "." + node.module
        else:
            base = node.module
        if not _contains(_PKG, base):
            return
        for alias in node.names:
            sub = base + "." + alias.name
            self._add(sub if sub in self.mods else base, node)


def _graph():
    """({module: {module it depends on: [(line, in a function)]}}, {module: path})."""
    mods = _modules(_package_dir())
    graph, paths = {}, {}
    for name, (path, is_pkg) in sorted(mods.items()):
        graph[name] = {}
        if path is None:
            continue
        paths[name] = path
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        v = _Imports(name, is_pkg, mods)
        v.visit(tree)
        for target, line, local in v.found:
            # the target itself, then the packages whose __init__ runs first (not those holding the importer)
            parts = target.split(".")
            deps = [target] + [".".join(parts[:i]) for i in range(1, len(parts))
                               if not _contains(".".join(parts[:i]), name)]
            for d in deps:
                if d != name:
                    graph[name].setdefault(d, []).append((line, local))
    return graph, paths


def _find_cycle(graph):
    """One cycle as a list of modules (first == last), or None."""
    WHITE, GREY, BLACK = 0, 1, 2
    color = dict.fromkeys(graph, WHITE)
    stack = []

    def visit(n):
        color[n] = GREY
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if color.get(m, BLACK) == GREY:
                return stack[stack.index(m):] + [m]
            if color.get(m) == WHITE:
                c = visit(m)
                if c:
                    return c
        stack.pop()
        color[n] = BLACK
        return None

    for n in sorted(graph):
        if color[n] == WHITE:
            c = visit(n)
            if c:
                return c
    return None


def test_graph_sees_the_package():
    graph, _ = _graph()
    assert {"ampgrad", "ampgrad._C", "ampgrad._tensor", "ampgrad.autograd", "ampgrad.nn.functional"} <= set(graph)
    assert "ampgrad._tensor" in graph["ampgrad"]
    assert "ampgrad._C" in graph["ampgrad._tensor"]


def test_no_import_cycle():
    graph, _ = _graph()
    cycle = _find_cycle(graph)
    if cycle:
        steps = []
        for a, b in zip(cycle, cycle[1:]):
            line, local = graph[a][b][0]
            steps.append(f"{a} -> {b} (line {line}{', in a function' if local else ''})")
        pytest.fail("import cycle:\n  " + "\n  ".join(steps))


def test_no_function_level_import_of_ampgrad():
    graph, paths = _graph()
    bad = sorted({f"{os.path.relpath(paths[a], _package_dir())}:{line} imports {b}"
                 for a, deps in graph.items() for b, uses in deps.items() for line, local in uses if local})
    assert not bad, "function-level imports of ampgrad modules:\n  " + "\n  ".join(bad)


def _layer(mod):
    if mod == _PKG:
        return len(_LAYERS)  # ampgrad/__init__.py: above everything
    for rank, names in enumerate(_LAYERS):
        if any(_contains(n, mod) for n in names):
            return rank
    return None


def test_imports_point_down_the_layers():
    graph, _ = _graph()
    unplaced = sorted(m for m in graph if _layer(m) is None)
    assert not unplaced, f"modules missing from _LAYERS: {unplaced}"
    up = sorted(f"{a} (layer {_layer(a)}) -> {b} (layer {_layer(b)})"
                for a, deps in graph.items() for b in deps if _layer(b) > _layer(a))
    assert not up, "imports of a higher layer:\n  " + "\n  ".join(up)
