"""DistributedDataParallel over ampgrad.distributed (the MPI engine), as torch's Reducer works:
rank 0's parameters and buffers are broadcast at construction; parameters are packed into buckets
(reverse registration order, a 1 MiB first bucket then bucket_cap_mb, one dtype per bucket);
a post-accumulate-grad hook on each parameter marks it ready during backward, and a bucket whose
gradients are all ready is copied into its flat buffer and all-reduced with a non-blocking
MPI_Iallreduce while backward goes on (buckets launch in index order, so every rank issues the same
sequence). The last launch queues an end-of-backward callback (Variable._execution_engine.queue_callback)
that waits for every bucket and writes the averaged gradients back. Open MPI progresses a
non-blocking collective only inside MPI calls, so every hook also tests the buckets in flight.

bf16/fp16 gradients are reduced in a float32 bucket and rounded once (Note [Low-precision reductions]
in distributed/_mpi.py). An inf/NaN gradient on one rank is inf/NaN in the sum, so GradScaler finds
it on every rank and every rank skips the step and backs off the scale identically.

CUDA parameters (a group with the NCCL engine): the buckets are CUDA tensors of the parameters' dtype,
filled by stream-ordered copies and all-reduced by ncclAllReduce on the current stream (Note [NCCL
streams] in distributed/_nccl.py), so backward's later kernels and the reduction overlap on the GPU
without a host wait; bf16/fp16 buckets reduce in their own dtype, as torch's NCCL buckets do."""
from contextlib import contextmanager

import numpy as np

from ... import _C
from ..._creation import empty as _empty
from ... import distributed as _dist
from ...distributed import _mpi
from ...autograd import Variable
from ...autograd.grad_mode import no_grad
from ..modules.module import Module

_FIRST_BUCKET_BYTES = 1024 * 1024
_DEFAULT_BUCKET_MB = 25


def _tensors_in(obj, out):
    if isinstance(obj, _C.Tensor):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _tensors_in(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _tensors_in(o, out)
    elif hasattr(obj, "__dataclass_fields__"):
        for k in obj.__dataclass_fields__:
            _tensors_in(getattr(obj, k), out)
    return out


def _np_dtype(dt):
    if dt in (_C.bfloat16, _C.float16):
        return np.float32
    return np.dtype(str(dt).split(".")[-1])


def _device_empty(numel, dtype, device):
    return _empty(numel, dtype=dtype, device=device)


def _broadcast_coalesced(tensors, pg, src=0):
    """Broadcasts tensors from group rank src in one MPI_Ibcast of their raw bytes."""
    if not tensors:
        return
    if tensors[0].device.type == "cuda":  # NCCL: one broadcast per tensor, in place
        for t in tensors:
            d = t.detach()
            c = d if d.is_contiguous() else d.contiguous()
            _dist.broadcast(c, group=pg, group_src=src)
            if c is not d:
                d.copy_(c)
        return
    typed = [_dist._raw(t.detach().contiguous()) for t in tensors]
    raws = [r.view(np.uint8) for r in typed]
    buf = np.concatenate(raws) if pg.rank() == src else np.empty(sum(r.size for r in raws), np.uint8)
    _dist.Work(pg, "BROADCAST", [pg._comm.Ibcast(buf, root=src)]).wait()
    if pg.rank() != src:
        off = 0
        for t, r, ty in zip(tensors, raws, typed):
            _dist._write(t, buf[off:off + r.size].view(ty.dtype))
            off += r.size


class _Bucket:
    def __init__(self, index, dtype):
        self.index = index
        self.dtype = dtype
        self.params = []      # (param index, param, offset, numel)
        self.numel = 0
        self.buffer = None
        self.pending = 0
        self.req = None

    def add(self, i, p):
        self.params.append((i, p, self.numel, p.numel()))
        self.numel += p.numel()

    def nbytes(self):
        return self.numel * (2 if self.dtype in (_C.bfloat16, _C.float16) else _np_dtype(self.dtype).itemsize)


class DistributedDataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True, init_sync=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, delay_all_reduce_named_params=None,
                 param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None,
                 skip_all_reduce_unused_params=False):
        super().__init__()
        pg = _dist._get_default_group() if process_group is None else process_group
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter that "
                               "requires a gradient.")
        devices = {p.device for p in module.parameters()}
        if device_ids is not None and all(d.type == "cpu" for d in devices):
            raise ValueError("DistributedDataParallel device_ids and output_device arguments only work with "
                             "single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                             f"{device_ids}, output_device {output_device}, and module parameters {devices}.")
        self.module = module
        self.process_group = pg
        self.device_ids = None
        self.output_device = None
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.bucket_bytes_cap = int((_DEFAULT_BUCKET_MB if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        self._verify_params(module)
        if init_sync:
            _broadcast_coalesced([p for p in module.parameters()] + [b for b in module.buffers()], pg)
        self._params = params
        self._build_buckets()
        self._expect_hooks = False
        self._require_finalize = False
        self._finalize_deferred = False
        self._hooks = [p.register_post_accumulate_grad_hook(self._make_hook(i)) for i, p in enumerate(params)]

    # ---------------------------------------------------------------- construction
    def _verify_params(self, module):
        desc = [(tuple(p.shape), str(p.dtype)) for p in module.parameters()]
        everyone = [None] * self.process_group.size()
        _dist.all_gather_object(everyone, desc, group=self.process_group)
        me = self.process_group.rank()
        for r, d in enumerate(everyone):
            if len(d) != len(desc):
                raise RuntimeError(f"DDP expects same model across all ranks, but Rank {me} has {len(desc)} params, "
                                   f"while rank {r} has inconsistent {len(d)} params.")
            for i, (a, b) in enumerate(zip(desc, d)):
                if a != b:
                    raise RuntimeError(f"DDP expects same model across all ranks, but Rank {me} has param {i} of "
                                       f"shape {list(a[0])} ({a[1]}), while rank {r} has shape {list(b[0])} ({b[1]}).")

    def _build_buckets(self):
        self._buckets = []
        self._bucket_of = [None] * len(self._params)
        open_by_dtype = {}
        for i in reversed(range(len(self._params))):
            p = self._params[i]
            b = open_by_dtype.get(p.dtype)
            first = not self._buckets or b is self._buckets[0]  # torch: a 1 MiB first bucket (here at most the cap)
            cap = min(_FIRST_BUCKET_BYTES, self.bucket_bytes_cap) if first else self.bucket_bytes_cap
            if b is not None and b.nbytes() >= cap:
                b = None
            if b is None:
                b = _Bucket(len(self._buckets), p.dtype)
                self._buckets.append(b)
                open_by_dtype[p.dtype] = b
            b.add(i, p)
            self._bucket_of[i] = b
        self._cuda = self._params[0].device.type == "cuda"
        dev = self._params[0].device
        if self._cuda and len({p.device for p in self._params}) != 1:
            raise ValueError("DistributedDataParallel: every parameter must be on one CUDA device")
        for b in self._buckets:
            b.buffer = _device_empty(b.numel, b.dtype, dev) if self._cuda else np.empty(b.numel, _np_dtype(b.dtype))

    # ---------------------------------------------------------------- forward
    def forward(self, *inputs, **kwargs):
        if self._finalize_deferred:  # the previous forward used no parameter: its (zero) buckets are done
            self._finalize_deferred = False
            self._finalize()
        if self._require_finalize:
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a new one. This error "
                "indicates that your module has parameters that were not used in producing loss. You can enable "
                "unused parameter detection by passing the keyword argument `find_unused_parameters=True` to "
                "`torch.nn.parallel.DistributedDataParallel`, and by \nmaking sure all `forward` function outputs "
                "participate in calculating loss. \nIf you already have done the above, then the distributed data "
                "parallel module wasn't able to locate the output tensors in the return value of your module's "
                "`forward` function. Please include the loss function and the structure of the return value of "
                "`forward` of your module when reporting this issue (e.g. list, dict, iterable).")
        if self.require_forward_param_sync and self.broadcast_buffers:
            bufs = list(self.module.buffers())
            if bufs:
                _broadcast_coalesced(bufs, self.process_group)
        out = self.module(*inputs, **kwargs)
        self._expect_hooks = False
        if _C.is_grad_enabled() and self.require_backward_grad_sync:
            self._prepare_for_backward(out)
        return out

    def _prepare_for_backward(self, out):
        self._expect_hooks = True
        self._finalize_deferred = False
        self._ready = [False] * len(self._params)
        self._used = np.ones(len(self._params), np.int32)
        self._next_bucket = 0
        self._in_flight = []
        self._used_req = None
        for b in self._buckets:
            b.pending = len(b.params)
            b.req = None
        if self.find_unused_parameters:
            reached = set()
            seen = set()
            stack = [t.grad_fn for t in _tensors_in(out, []) if t.grad_fn is not None]
            while stack:
                fn = stack.pop()
                if fn in seen:
                    continue
                seen.add(fn)
                var = getattr(fn, "variable", None)
                if var is not None:
                    reached.add(var.data_ptr())
                for nf, _ in fn.next_functions:
                    if nf is not None and nf not in seen:
                        stack.append(nf)
            unused = [i for i, p in enumerate(self._params) if p.data_ptr() not in reached]
            for i in unused:
                self._used[i] = 0
            for i in unused:
                self._mark_ready(i)

    # ---------------------------------------------------------------- backward
    def _make_hook(self, i):
        def hook(param):
            if self._expect_hooks:
                self._require_finalize = True
                if self._finalize_deferred:
                    self._finalize_deferred = False
                    Variable._execution_engine.queue_callback(self._finalize)
                self._mark_ready(i)
        return hook

    def _mark_ready(self, i):
        if self._ready[i]:
            raise RuntimeError(
                f"Expected to mark a variable ready only once. This error is caused by one of the following reasons: "
                f"1) Use of a module parameter outside the `forward` function. 2) Reused parameters in multiple "
                f"reentrant backward passes. Parameter at index {i} has been marked as ready twice.")
        self._ready[i] = True
        b = self._bucket_of[i]
        b.pending -= 1
        while self._next_bucket < len(self._buckets) and self._buckets[self._next_bucket].pending == 0:
            self._launch(self._buckets[self._next_bucket])
            self._next_bucket += 1
            if self._next_bucket == len(self._buckets):
                if self.find_unused_parameters:
                    self._used_req = self.process_group._comm.Iallreduce(
                        _mpi._MPI.IN_PLACE, self._used, op=_mpi._MPI.MAX)
                    self._in_flight.append(self._used_req)
                try:
                    Variable._execution_engine.queue_callback(self._finalize)
                except RuntimeError:  # every bucket launched in forward (no parameter is used): at the first hook
                    self._finalize_deferred = True
        _mpi.progress(self._in_flight)

    def _launch(self, b):
        buf = b.buffer
        if self._cuda:  # stream-ordered copies, then an async ncclAllReduce on the same stream
            with no_grad():
                for i, p, off, n in b.params:
                    g = p.grad
                    if g is None:
                        buf[off:off + n].zero_()
                    else:
                        buf[off:off + n].copy_(g.detach().reshape(-1))
            b.req = _dist.all_reduce(buf, group=self.process_group, async_op=True)
            return
        for i, p, off, n in b.params:
            g = p.grad
            if g is None:
                buf[off:off + n] = 0
            elif b.dtype in (_C.bfloat16, _C.float16):
                buf[off:off + n] = g.detach().float().numpy().reshape(-1)
            else:
                buf[off:off + n] = g.detach().numpy().reshape(-1)
        b.req = self.process_group._comm.Iallreduce(_mpi._MPI.IN_PLACE, buf, op=_mpi._MPI.SUM)
        self._in_flight.append(b.req)

    def _finalize(self):
        pg = self.process_group
        work = _dist.Work(pg, "ALLREDUCE", self._in_flight, numel=sum(b.numel for b in self._buckets))
        work.wait()
        n = pg.size()
        if self._cuda:
            self._finalize_cuda(n)
            return
        for b in self._buckets:
            buf = b.buffer
            buf /= n
            for i, p, off, k in b.params:
                if self.find_unused_parameters and self._used[i] == 0:
                    continue  # unused on every rank: its .grad stays as it is, as torch's
                g = p.grad
                src = buf[off:off + k]
                if g is not None and g.is_contiguous() and b.dtype not in (_C.bfloat16, _C.float16):
                    g.detach().numpy().reshape(-1)[...] = src
                elif g is not None and g.is_contiguous():
                    g.detach().copy_(_C.from_numpy(src).view(tuple(p.shape)))
                else:  # no gradient yet, or an expanded / strided one: a fresh tensor
                    p.grad = _C.from_numpy(src.copy()).view(tuple(p.shape)).to(p.dtype)
        self._expect_hooks = False
        self._require_finalize = False
        self._in_flight = []

    def _finalize_cuda(self, n):
        with no_grad():
            for b in self._buckets:
                b.req.wait()
                buf = b.buffer
                buf.div_(n)
                for i, p, off, k in b.params:
                    if self.find_unused_parameters and self._used[i] == 0:
                        continue
                    g = p.grad
                    src = buf[off:off + k].view(tuple(p.shape))
                    if g is not None and g.is_contiguous():
                        g.detach().copy_(src)
                    else:
                        p.grad = src.clone()
        self._expect_hooks = False
        self._require_finalize = False
        self._in_flight = []

    # ---------------------------------------------------------------- API
    @contextmanager
    def no_sync(self):
        """Gradients of backward passes of forwards run inside accumulate locally, without all-reduce."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def _get_ddp_logging_data(self):
        return {"bucket_sizes": [b.nbytes() for b in self._buckets], "num_buckets": len(self._buckets),
                "backend_name": "mpi", "world_size": self.process_group.size()}

    def __getstate__(self):
        raise RuntimeError("ampgrad DistributedDataParallel cannot be pickled; save .module or its state_dict")
