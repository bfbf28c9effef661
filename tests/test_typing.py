"""Typing (issue 16): the package ships py.typed and a _C.pyi stub (tools/gen_stubs.py) that lists every
public name of the extension module, so the stub cannot rot as bindings are added."""
import ast
import os

import ampgrad
from ampgrad import _C

_PKG = os.path.dirname(ampgrad.__file__)


def _stub_names():
    tree = ast.parse(open(os.path.join(_PKG, "_C.pyi")).read())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def test_py_typed_marker():
    assert os.path.isfile(os.path.join(_PKG, "py.typed"))


def test_stub_lists_every_public_c_name():
    public = {n for n in dir(_C) if not n.startswith("_")}
    missing = sorted(public - _stub_names())
    assert not missing, f"python/ampgrad/_C.pyi lacks {missing}: run PYTHONPATH=python python tools/gen_stubs.py"


def test_stub_has_tensor_methods():
    tree = ast.parse(open(os.path.join(_PKG, "_C.pyi")).read())
    tensor = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Tensor")
    methods = {n.name for n in tensor.body if isinstance(n, ast.FunctionDef)}
    assert {"add", "matmul", "__add__", "backward", "numpy", "__dlpack__"} <= methods
