"""ampgrad.utils.data: torch.utils.data's datasets, samplers and DataLoader. Random orders follow
torch's streams (sampler.py, _utils/random.py); pin_memory is a no-op without CUDA (dataloader.py)."""
from .dataset import (Dataset, IterableDataset, TensorDataset, StackDataset, ConcatDataset, ChainDataset, Subset,
                      random_split)
from .sampler import (Sampler, SequentialSampler, RandomSampler, SubsetRandomSampler, WeightedRandomSampler,
                      BatchSampler)
from .dataloader import DataLoader, _DatasetKind
from .distributed import DistributedSampler
from ._utils.collate import default_collate, default_convert
from ._utils.worker import get_worker_info, WorkerInfo

__all__ = ["BatchSampler", "ChainDataset", "DistributedSampler", "ConcatDataset", "DataLoader", "Dataset",
           "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "StackDataset", "Subset", "SubsetRandomSampler",
           "TensorDataset", "WeightedRandomSampler", "default_collate", "default_convert", "get_worker_info",
           "random_split"]
