"""The autocast gate of the ops composed in Python (Note [Autocast gate] in csrc/amp/autocast.h).

`@engine_op("conv2d")` marks a function as the op of that row of the op table (csrc/ops/op_list.def):
when autocast is on, a call casts its tensor arguments (and lists of tensors) per the row's policy and
runs the body with autocast excluded, so the ops it is composed of are not cast again, as torch's
autocast does for its composite ops. A function whose row has no policy is returned unchanged.
"""
import functools

from . import _C

_gate = _C._autocast_gate


def engine_op(name):
    op = _C._op_id(name)  # a name without a row is an error at import time

    def decorate(fn):
        if not _C._op_has_autocast_policy(op):
            return fn

        @functools.wraps(fn)
        def gated(*args, **kwargs):
            return _gate(op, fn, args, kwargs)

        gated.__ampgrad_op__ = name
        return gated

    return decorate
