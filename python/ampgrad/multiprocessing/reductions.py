"""Tensors through multiprocessing's pickler by shared memory, as torch.multiprocessing's reductions do.

Note [Shared memory] (csrc/core/storage.h): a CPU tensor sent through a multiprocessing queue, a Pipe or
a spawned Process's arguments has its storage moved into a memfd (``share_memory_()``, in place, as
torch's file_descriptor strategy does); the receiving process maps the same pages, so in-place updates
on either side are seen by both (Hogwild training). The fd travels as multiprocessing's ``DupFd``:
in the arguments of a spawned process, or through multiprocessing's resource sharer for queues.
"""
from multiprocessing.reduction import DupFd, ForkingPickler

from .. import _C
from .._tensor import Tensor
from ..nn.parameter import Parameter

__all__ = ["init_reductions", "reduce_tensor", "rebuild_tensor"]


def rebuild_tensor(cls, fd_holder, nbytes, dtype_name, size, stride, offset, requires_grad):
    fd = fd_holder.detach()
    t = _C._new_shared_fd_cpu(fd, nbytes, getattr(_C, dtype_name), list(size), list(stride), offset)
    if cls is Parameter:
        return Parameter(t, requires_grad)
    t.requires_grad_(requires_grad)
    return t


def reduce_tensor(tensor):
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does not support "
            "crossing process boundaries.  If you just want to transfer the data, call detach() on the tensor "
            "before serializing (e.g., putting it on the queue).")
    if not tensor.is_cpu:
        raise RuntimeError(
            f"ampgrad.multiprocessing: a {tensor.device.type} tensor can't be shared between processes (ampgrad has "
            "no CUDA IPC); send tensor.cpu() and move it to the device in the receiving process")
    fd, nbytes = tensor._share_fd_cpu_()
    dtype_name = repr(tensor.dtype).split(".")[-1]
    return (rebuild_tensor, (type(tensor) if type(tensor) is Parameter else Tensor, DupFd(fd), nbytes, dtype_name,
                             tuple(tensor.shape), tensor.stride(), tensor.storage_offset(), tensor.requires_grad))


def init_reductions():
    ForkingPickler.register(Tensor, reduce_tensor)
    ForkingPickler.register(Parameter, reduce_tensor)
