"""torch's CPU random streams for the samplers, so that shuffling equals torch's for the same seed.

ampgrad's CPU generators reproduce torch's (same mt19937 stream for the same seed). torch's
RandomSampler (generator=None) draws one seed from the global stream and then shuffles with a private
generator seeded with it; _PrivateStream is that private generator (torch's mt19937: NumPy's MT19937
with the legacy 32-bit seeding is the same engine), with torch's randperm (Fisher-Yates on 32-bit
draws) and randint (a 32-bit draw modulo the range). draw_seed() is torch's
`torch.empty((), dtype=torch.int64).random_()` (a 64-bit draw modulo 2**63) on ampgrad's stream.
So, under the same manual_seed and the same sequence of random calls, ampgrad's DataLoader
shuffles, sampler draws and worker seeds equal torch's."""
import numpy as np

from ...._C import int64
from ...._creation import randint

__all__ = ["draw_seed", "_PrivateStream", "generate_numpy_state"]


def draw_seed(generator=None):
    """torch.empty((), dtype=torch.int64).random_(generator=generator).item(): one 64-bit draw v
    of `generator` (the default one when None), returned as v mod 2**63."""
    return int(randint(-2 ** 62, 2 ** 62, (), dtype=int64, generator=generator).item()) + 2 ** 62


class _PrivateStream:
    """torch.Generator().manual_seed(seed) on CPU, for randperm and randint below 2**32."""

    def __init__(self, seed):
        self._bg = np.random.MT19937()
        self._bg._legacy_seeding(int(seed) & 0xFFFFFFFF)  # torch's mt19937 keeps the low 32 bits of the seed

    def _random(self, k):
        return self._bg.random_raw(k) if k > 0 else np.zeros(0, dtype=np.uint64)

    def randperm(self, n):
        if n >= 0xFFFFFFFF // 20:
            raise NotImplementedError("torch's randperm for n >= 2**32 / 20 is not emulated")
        r = list(range(n))
        draws = self._random(n - 1).tolist()
        for i in range(n - 1):
            z = draws[i] % (n - i) + i
            r[i], r[z] = r[z], r[i]
        return r

    def randint(self, high, size):
        if high >= 2 ** 32:
            raise NotImplementedError("torch's randint for ranges >= 2**32 is not emulated")
        return (self._random(size) % np.uint64(high)).astype(np.int64).tolist()


def generate_numpy_state(base_seed, worker_id):
    """torch's _generate_state: the NumPy seed of a DataLoader worker (a SeedSequence-style hash)."""
    INIT_A, MULT_A, INIT_B, MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
    MIX_MULT_L, MIX_MULT_R, XSHIFT, MASK32 = 0xCA01F9DD, 0x4973F715, 16, 0xFFFFFFFF
    entropy = [worker_id, base_seed & MASK32, base_seed >> 32, 0]
    pool = [0] * 4
    hash_const_A = INIT_A

    def hash(value):
        nonlocal hash_const_A
        value = (value ^ hash_const_A) & MASK32
        hash_const_A = (hash_const_A * MULT_A) & MASK32
        value = (value * hash_const_A) & MASK32
        return (value ^ (value >> XSHIFT)) & MASK32

    def mix(x, y):
        result = ((MIX_MULT_L * x) & MASK32) - ((MIX_MULT_R * y) & MASK32)
        result &= MASK32
        return (result ^ (result >> XSHIFT)) & MASK32

    for i in range(4):
        pool[i] = hash(entropy[i])
    for i_src in range(4):
        for i_dst in range(4):
            if i_src != i_dst:
                pool[i_dst] = mix(pool[i_dst], hash(pool[i_src]))
    hash_const_B = INIT_B
    state = []
    for i_dst in range(4):
        data_val = (pool[i_dst] ^ hash_const_B) & MASK32
        hash_const_B = (hash_const_B * MULT_B) & MASK32
        data_val = (data_val * hash_const_B) & MASK32
        state.append((data_val ^ (data_val >> XSHIFT)) & MASK32)
    return state
