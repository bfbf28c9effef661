"""Loads the UCI handwritten digits (8x8, 1797 images) shipped in examples/data (the copy bundled
with scikit-learn; see data/digits.rst for its source and license)."""
import gzip
import os

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))


def load_digits(test_fraction=0.2, seed=0):
    """Returns (x_train, y_train, x_test, y_test) as NumPy arrays; pixels scaled to [0, 1]."""
    with gzip.open(os.path.join(_HERE, "data", "digits.csv.gz"), "rt") as f:
        data = np.loadtxt(f, delimiter=",", dtype=np.float64)
    x, y = (data[:, :-1] / 16.0).astype(np.float32), data[:, -1].astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(x))
    n_test = int(len(x) * test_fraction)
    test, train = order[:n_test], order[n_test:]
    return x[train], y[train], x[test], y[test]
