"""The chunk tables of CUDA multi-tensor apply (Note [Multi-tensor packs] in
kernels/common/multi_tensor.h), checked on any machine: every element of every tensor is covered by
exactly one block of one launch, and no launch exceeds its tensor or block limits."""
import numpy as np
import pytest

from ampgrad import _C


def check_cover(numels, max_tensors, max_blocks, chunk):
    packs = _C._multi_tensor_packs(numels, max_tensors, max_blocks, chunk)
    hits = [np.zeros(n, dtype=np.int64) for n in numels]
    last = -1
    for tensors, block_slot, block_chunk in packs:
        assert 0 < len(tensors) <= max_tensors
        assert 0 < len(block_slot) <= max_blocks and len(block_slot) == len(block_chunk)
        assert sorted(set(block_slot)) == list(range(len(tensors)))  # every slot has a block
        assert len(set(tensors)) == len(tensors)
        assert tensors[0] >= last  # list order; a tensor may continue from the previous pack
        last = tensors[-1]
        for s, c in zip(block_slot, block_chunk):
            t = tensors[s]
            n = numels[t]
            assert numels[t] > 0 and 0 <= c and c * chunk < n
            hits[t][c * chunk:min(n, (c + 1) * chunk)] += 1
    for t, h in enumerate(hits):
        assert (h == 1).all(), f"tensor {t} (numel {numels[t]}): elements covered {set(h.tolist())} times"
    return packs


CHUNK = 65536


@pytest.mark.parametrize("numels", [
    [],
    [0],
    [0, 0, 0],
    [1],
    [CHUNK],
    [CHUNK + 1],
    [CHUNK - 1, 0, CHUNK * 3 + 5, 0, 7],
    [1] * 500,  # more tensors than one pack holds
    [CHUNK * 700 + 3],  # more chunks than one pack holds: the tensor spills into later packs
    [5, CHUNK * 320, 0, 3, CHUNK * 319 + 1, 2],  # a pack that fills its blocks exactly
])
@pytest.mark.parametrize("depth", [1, 2, 3, 4, 5])
def test_packs_cover_every_element_once(numels, depth):
    max_tensors, max_blocks, chunk = _C._multi_tensor_limits(depth)
    assert chunk == CHUNK
    packs = check_cover(numels, max_tensors, max_blocks, chunk)
    if not any(numels):
        assert packs == []


def test_packs_random_small_limits():
    rng = np.random.RandomState(0)
    for trial in range(300):
        k = rng.randint(0, 12)
        numels = [int(x) for x in rng.choice([0, 1, 2, 4, 5, 6, 9, 10, 11, 23, 40], size=k)]
        check_cover(numels, int(rng.randint(1, 5)), int(rng.randint(1, 6)), int(rng.choice([1, 2, 4, 5])))


def test_packs_spill_and_split():
    # 3 tensors of 3 chunks each, 2 slots and 4 blocks per launch
    packs = _C._multi_tensor_packs([10, 10, 10], 2, 4, 4)
    assert packs == [([0, 1], [0, 0, 0, 1], [0, 1, 2, 0]),
                     ([1, 2], [0, 0, 1, 1], [1, 2, 0, 1]),
                     ([2], [0], [2])]
    # a tensor starting exactly when a pack's blocks run out begins the next pack
    assert _C._multi_tensor_packs([4, 4, 4], 8, 2, 2) == [([0], [0, 0], [0, 1]), ([1], [0, 0], [0, 1]),
                                                          ([2], [0, 0], [0, 1])]


def test_limits_fit_the_kernel_parameter_space():
    """The CUDA launcher's limits: the pack (8*depth + 17 bytes per slot, 5 per block) plus 256 bytes
    of functor arguments stay within CUDA's 4 KiB of kernel parameters (static_asserts check the
    real struct sizes in the CUDA build)."""
    for depth in range(1, 7):
        t, b, chunk = _C._multi_tensor_limits(depth)
        assert 0 < t <= 255 and b == 320 and chunk % 8 == 0
        assert t * (8 * depth + 17) + b * 5 + 256 <= 4096
        assert (t + 1) * (8 * depth + 17) + b * 5 + 256 > 4096  # as many as fit


def test_bad_limits():
    with pytest.raises(RuntimeError, match="positive"):
        _C._multi_tensor_packs([1], 0, 1, 1)
    with pytest.raises(RuntimeError, match="positive"):
        _C._multi_tensor_packs([1], 1, 1, 0)
