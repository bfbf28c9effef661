"""Internals of ampgrad.utils.data (collate, fetchers, the worker loop), as torch.utils.data._utils."""
from . import collate, fetch, random, worker  # noqa: F401
from .worker import ExceptionWrapper  # noqa: F401

MP_STATUS_CHECK_INTERVAL = 5.0
