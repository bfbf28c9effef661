"""Shared fixtures: torch as the reference oracle (tests that need it skip without it).

A development build (cmake into python/ampgrad, or the tree AMPGRAD_TEST_TREE names) is tested in
place; otherwise the installed package is (pip install .)."""
import glob
import os
import sys
import warnings

import pytest

# AMPGRAD_TEST_TREE names another python/ tree to test (tools/sanitize.sh: the sanitized module).
_TREE = os.environ.get("AMPGRAD_TEST_TREE") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python")
if glob.glob(os.path.join(_TREE, "ampgrad", "_C*.so")):
    sys.path.insert(0, _TREE)


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


# ---------------------------------------------------------------- ampgrad's own warnings are errors
# pyproject.toml turns warnings attributed to an ampgrad module into errors (tests that expect one
# use pytest.warns, or catch_warnings with a filter of their own). ampgrad warns like torch, with
# stacklevel=2, so Python would attribute its warnings to the caller (a test module) and no module
# filter could single them out; torch's own warnings reach tests the same way. So warnings.warn is
# wrapped: a warning issued *by ampgrad code* keeps the file and line that stacklevel points at
# (what a user sees) but is filtered under the issuing module's name ("ampgrad.nn.functional").
# Warnings that ampgrad's C++ code raises (PyErr_WarnEx) are attributed to their Python caller and
# are not covered.
_python_warn = warnings.warn


def _ampgrad_aware_warn(message, category=None, stacklevel=1, source=None, **kwargs):
    issuer = sys._getframe(1)
    name = issuer.f_globals.get("__name__", "")
    if kwargs or not (name == "ampgrad" or name.startswith("ampgrad.")):
        return _python_warn(message, category, stacklevel + 1, source, **kwargs)
    if isinstance(message, Warning):
        category = message.__class__
    elif category is None:
        category = UserWarning
    frame = issuer
    for _ in range(max(stacklevel, 1) - 1):
        if frame.f_back is None:
            break
        frame = frame.f_back
    # (the issuer's registry: torch warning the same text from the same test line must not swallow it)
    warnings.warn_explicit(message, category, frame.f_code.co_filename, frame.f_lineno, module=name,
                           registry=issuer.f_globals.setdefault("__warningregistry__", {}), module_globals=frame.f_globals,
                           source=source)


warnings.warn = _ampgrad_aware_warn
