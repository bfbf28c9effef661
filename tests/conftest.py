"""Shared fixtures: torch as the reference oracle (tests that need it skip without it)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))


@pytest.fixture
def torch():
    return pytest.importorskip("torch")
