"""Shared fixtures: torch as the reference oracle (tests that need it skip without it).

A development build (cmake into python/ampgrad, or the tree AMPGRAD_TEST_TREE names) is tested in
place; otherwise the installed package is (pip install .)."""
import glob
import os
import sys

import pytest

# AMPGRAD_TEST_TREE names another python/ tree to test (tools/sanitize.sh: the sanitized module).
_TREE = os.environ.get("AMPGRAD_TEST_TREE") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python")
if glob.glob(os.path.join(_TREE, "ampgrad", "_C*.so")):
    sys.path.insert(0, _TREE)


@pytest.fixture
def torch():
    return pytest.importorskip("torch")
