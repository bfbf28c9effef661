"""Samplers with torch.utils.data's semantics and torch's random streams: RandomSampler without a
generator draws a seed from ampgrad's global stream and shuffles with a private torch-style generator
(_utils/random.py), SubsetRandomSampler and random_split use ampgrad.randperm on the global stream, as
torch does; so for the same seed and the same sequence of random calls the orders equal torch's.
An explicit `generator` (an ampgrad.Generator: its own torch-compatible stream) is drawn from
directly, as torch does, so a generator seeded like torch's gives torch's order.
WeightedRandomSampler uses ampgrad.multinomial when the engine has it, else an exact sampler of the
same law on ampgrad's uniforms (not torch's draws)."""
from itertools import islice as itertools_islice

import numpy as np

from ..._C import Tensor, int64, float64
from ..._creation import randperm, randint, rand, as_tensor, multinomial
from ._utils.random import _PrivateStream, draw_seed

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
           "BatchSampler"]


class Sampler:
    """Base class: __iter__ yields dataset indices (or batches of them)."""

    def __init__(self, data_source=None):
        if data_source is not None:
            import warnings
            warnings.warn("`data_source` argument is not used and will be removed in 2.2.0."
                          "You may still have custom implementation that utilizes it.")

    def __iter__(self):
        raise NotImplementedError

    def __class_getitem__(cls, item):
        return cls


class SequentialSampler(Sampler):
    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


def _is_pos_int(v):
    return isinstance(v, int) and not isinstance(v, bool) and v > 0


class RandomSampler(Sampler):
    """Random order without replacement (num_samples > len repeats whole permutations), or num_samples
    uniform draws with replacement."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        if self.generator is None:
            stream = _PrivateStream(draw_seed())  # torch: a fresh generator seeded from the global stream
            perm = stream.randperm
            ints = stream.randint
        else:
            g = self.generator
            perm = lambda n: randperm(n, generator=g).tolist()  # noqa: E731
            ints = lambda high, k: randint(0, high, (k,), dtype=int64, generator=g).tolist()  # noqa: E731
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from ints(n, 32)
            yield from ints(n, self.num_samples % 32)
        else:
            for _ in range(self.num_samples // n):
                yield from perm(n)
            yield from perm(n)[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in random order."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


def _weighted_draw(weights, num_samples, replacement):
    """torch.multinomial's distribution over a 1-d float64 weight vector from ampgrad's uniforms:
    with replacement by inverse CDF, without by the exponential-race (Gumbel top-k) order."""
    w = weights.numpy() if isinstance(weights, Tensor) else np.asarray(weights, dtype=np.float64)
    n = w.shape[0]
    if (w < 0).any() or not np.isfinite(w).all():
        raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)"
                           if (w < 0).any() else "invalid multinomial distribution (sum of probabilities <= 0)")
    if w.sum() <= 0:
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement and num_samples > n:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    u = rand(num_samples if replacement else n, dtype=float64).numpy()
    if replacement:
        cdf = np.cumsum(w)
        cdf /= cdf[-1]
        idx = np.searchsorted(cdf, u, side="right")
        # a zero-weight tail never wins: clamp to the last positive weight
        last = int(np.nonzero(w > 0)[0][-1])
        return np.minimum(idx, last).tolist()
    with np.errstate(divide="ignore"):
        keys = -np.log1p(-u) / w      # Exp(w_i) arrival times; zero weights never arrive
    if num_samples > int((w > 0).sum()):
        raise RuntimeError("invalid multinomial distribution (with replacement=False, not enough non-negative "
                           "category to sample)")
    return np.argsort(keys, kind="stable")[:num_samples].tolist()


class WeightedRandomSampler(Sampler):
    """num_samples indices drawn with probabilities proportional to `weights` (torch.multinomial's law)."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not _is_pos_int(num_samples):
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        weights_tensor = as_tensor(weights, dtype=float64)
        if len(weights_tensor.shape) != 1:
            raise ValueError("weights should be a 1d sequence but given weights have shape "
                             f"{tuple(weights_tensor.shape)}")
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        try:
            rand_tensor = multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator)
            yield from iter(rand_tensor.tolist())
        except NotImplementedError:
            yield from iter(_weighted_draw(self.weights, self.num_samples, self.replacement))

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups another sampler's indices into lists of batch_size (the last one shorter unless drop_last)."""

    def __init__(self, sampler, batch_size, drop_last):
        if not _is_pos_int(batch_size):
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        sampler_iter = iter(self.sampler)
        if self.drop_last:
            args = [sampler_iter] * self.batch_size
            for batch_droplast in zip(*args):
                yield [*batch_droplast]
        else:
            batch = [*itertools_islice(sampler_iter, self.batch_size)]
            while batch:
                yield batch
                batch = [*itertools_islice(sampler_iter, self.batch_size)]

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size

