"""The host side of the CUDA random fills, on any machine: Philox4x32-10 against Random123's
known-answer vectors, and the host reference of the fills (Note [Philox streams] in
kernels/common/philox.h) against a Python Philox and against its own stream layout. The CUDA
tests compare device fills with this reference (tests/test_cuda.py)."""
import math

import numpy as np
import pytest

import ampgrad
from ampgrad import _C

# Random123's kat_vectors, philox4x32 with 10 rounds: (counter, key, result).
KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]
M32 = 0xFFFFFFFF


def py_philox(ctr, key):
    """Philox4x32-10 in Python, independent of the C++ header."""
    c, (k0, k1) = list(ctr), key
    for r in range(10):
        if r:
            k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k0, p1 & M32, (p0 >> 32) ^ c[3] ^ k1, p0 & M32]
    return tuple(c)


def py_draw(seed, offset, g):
    c = offset + g
    return py_philox((c & M32, c >> 32, 0, 0), (seed & M32, seed >> 32))


@pytest.mark.parametrize("ctr,key,expected", KAT)
def test_philox_known_answers(ctr, key, expected):
    assert tuple(_C._philox4x32(list(ctr), list(key))) == expected
    assert py_philox(ctr, key) == expected


def test_philox_matches_python_on_more_counters():
    rng = np.random.RandomState(0)
    for _ in range(50):
        ctr = [int(x) for x in rng.randint(0, 2**32, 4, dtype=np.uint64)]
        key = [int(x) for x in rng.randint(0, 2**32, 2, dtype=np.uint64)]
        assert tuple(_C._philox4x32(ctr, key)) == py_philox(ctr, key)


def _fill(kind, n, dtype, seed, offset, a, b):
    t = ampgrad.empty(n, dtype=dtype)
    used = _C._philox_fill(t, kind, seed, offset, a, b)
    return t, used


SEED = 0x1234_5678_9ABC_DEF0


def test_uniform_fp32_values_from_python_philox():
    t, used = _fill("uniform", 10, ampgrad.float32, SEED, 7, 0.0, 1.0)
    assert used == 3  # 4 values per counter
    expected = [py_draw(SEED, 7, i // 4)[i % 4] % (1 << 24) / (1 << 24) for i in range(10)]
    assert t.tolist() == expected  # exact: k / 2^24 and fma(x, 1, 0) are exact


def test_uniform_fp64_uses_64_bit_pairs():
    t, used = _fill("uniform", 5, ampgrad.float64, SEED, 0, 0.0, 1.0)
    assert used == 3  # 2 values per counter
    expected = []
    for i in range(5):
        w = py_draw(SEED, 0, i // 2)
        j = i % 2
        expected.append(((w[2 * j] << 32) | w[2 * j + 1]) % (1 << 53) / (1 << 53))
    assert t.tolist() == expected


def test_randint_values_from_python_philox():
    t, used = _fill("randint", 9, ampgrad.int64, SEED, 3, -5, 12)
    assert used == 3
    assert t.tolist() == [py_draw(SEED, 3, i // 4)[i % 4] % 17 - 5 for i in range(9)]
    w, used = _fill("randint", 3, ampgrad.int64, SEED, 3, 0, 2**40)  # wide range: 64-bit draws
    assert used == 2
    assert w.tolist() == [((py_draw(SEED, 3, i // 2)[2 * (i % 2)] << 32) | py_draw(SEED, 3, i // 2)[2 * (i % 2) + 1])
                          % 2**40 for i in range(3)]


@pytest.mark.parametrize("kind", ["uniform", "normal", "randint"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_fill_is_a_window_of_one_stream(kind, dtype):
    """Value i depends only on (seed, offset + i // per, i % per): a fill at a later offset is the
    tail of a longer fill (what makes the device numbers independent of the launch grid)."""
    dt = getattr(ampgrad, dtype)
    a, b = (0.0, 1.0) if kind != "randint" else (0, 1000)
    full, used = _fill(kind, 37, dt, SEED, 11, a, b)
    per = 2 if (dtype == "float64" and kind != "randint") else 4
    assert used == math.ceil(37 / per)
    tail, _ = _fill(kind, 37 - 3 * per, dt, SEED, 14, a, b)
    assert tail.float().tolist() == full[3 * per:].float().tolist()
    other, _ = _fill(kind, 37, dt, SEED + 1, 11, a, b)
    assert other.float().tolist() != full.float().tolist()


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_uniform_and_normal_distributions(dtype):
    dt = getattr(ampgrad, dtype)
    u, _ = _fill("uniform", 200_000, dt, 42, 0, -2.0, 3.0)
    x = u.double().numpy()
    assert x.min() >= -2 and x.max() < 3
    assert abs(x.mean() - 0.5) < 0.02 and abs(x.std() - 5 / math.sqrt(12)) < 0.02
    z, _ = _fill("normal", 200_000, dt, 42, 0, 1.5, 2.0)
    x = z.double().numpy()
    assert np.isfinite(x).all()
    assert abs(x.mean() - 1.5) < 0.02 and abs(x.std() - 2.0) < 0.02
    # the cos and sin halves of each Box-Muller pair are uncorrelated
    pairs = x[: len(x) // 2 * 2].reshape(-1, 2)
    assert abs(np.corrcoef(pairs[:, 0], pairs[:, 1])[0, 1]) < 0.02


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "uint8", "float32", "bfloat16"])
def test_randint_range_and_coverage(dtype):
    t, _ = _fill("randint", 20_000, getattr(ampgrad, dtype), 5, 0, 3, 20)
    x = np.array(t.tolist())
    assert x.min() == 3 and x.max() == 19
    counts = np.bincount(x.astype(np.int64) - 3)
    assert counts.min() > 20_000 / 17 * 0.85


def test_fill_rejects_bad_arguments():
    with pytest.raises(RuntimeError, match="contiguous CPU tensor"):
        _C._philox_fill(ampgrad.empty(4, 4).t(), "uniform", 0, 0, 0.0, 1.0)
    with pytest.raises(ValueError, match="kind"):
        _C._philox_fill(ampgrad.empty(4), "poisson", 0, 0, 0.0, 1.0)
    with pytest.raises(NotImplementedError):
        _C._philox_fill(ampgrad.empty(4, dtype=ampgrad.int32), "normal", 0, 0, 0.0, 1.0)
