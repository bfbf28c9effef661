"""ampgrad.linalg: the norms and products of torch.linalg that ampgrad composes from its own ops."""
from .._linalg_extra import vector_norm, matrix_norm, linalg_norm as norm, multi_dot, vecdot, linalg_cross as cross

__all__ = ["vector_norm", "matrix_norm", "norm", "multi_dot", "vecdot", "cross"]
