"""ampgrad.autograd.profiler: the autograd profiler (mirrors torch.autograd.profiler).

The C++ engine records one event per kernel launch (named ``aten::<op>`` after the op table, as
torch names its ops), one ``autograd::engine::evaluate_function: <Node>`` range plus one ``<Node>``
range per backward node, and every ``record_function`` range. This module turns them into
torch's ``FunctionEvent`` / ``EventList`` objects, tables and Chrome traces.

Differences from torch 2.13:
- An ``aten::<op>`` event times the op's kernel, not its whole front end (argument checks, output
  allocation and graph recording happen outside it), and composite ops have no range of their own:
  every GEMM (mm, bmm, matmul, linear, addmm, conv's lowering) shows as ``aten::mm``, softmax as
  ``aten::softmax``; there are no ``aten::empty`` / ``aten::as_strided`` / ``aten::t`` view events.
  (Ranges over the composite front ends measured 3-6% slower small matmuls with the profiler off.)
- ``input_shapes`` are the kernel's input operands (elementwise inputs after broadcasting); outputs
  are not listed. FLOPs: 2·m·n·k per GEMM (so conv, lowered to GEMMs, is counted there), numel for
  add / mul, as torch.
- ``profile_memory`` counts allocations only (no negative entries for frees): a kernel is charged
  with what was allocated since the previous event boundary (its outputs), a range with what its
  children did not claim.
- ``with_stack`` records the Python stack of ``record_function`` ranges only.
- Entering a second ``profile`` while one runs raises RuntimeError; torch starts it and the outer
  one silently loses its events. ``emit_nvtx`` raises without CUDA as torch does; with CUDA it pushes
  NVTX ranges. ``use_cuda`` / ``use_device`` record no device times.
"""
import functools
import json
import math
import os
import traceback
import warnings
from collections import defaultdict

from .. import _C

__all__ = ["profile", "record_function", "emit_nvtx", "emit_itt", "EventList", "FunctionEvent", "FunctionEventAvg",
           "Interval", "DeviceType"]

_KIND_FUNCTION = 1  # profiler::Kind::Function in csrc/autograd/profiler.h


class DeviceType:
    """Stand-in for torch's DeviceType enum: only CPU events are recorded."""
    CPU = "DeviceType.CPU"
    CUDA = "DeviceType.CUDA"


class Interval:
    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        return self.end - self.start


def _format_time(time_us):
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us, total_time_us):
    if total_time_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_time_us:.2f}%"


def _format_memory(nbytes):
    kb, mb, gb = 1024, 1024 ** 2, 1024 ** 3
    if abs(nbytes) >= gb:
        return f"{nbytes * 1.0 / gb:.2f} GB"
    if abs(nbytes) >= mb:
        return f"{nbytes * 1.0 / mb:.2f} MB"
    if abs(nbytes) >= kb:
        return f"{nbytes * 1.0 / kb:.2f} KB"
    return str(nbytes) + " B"


class _FormattedTimes:
    """Shared by FunctionEvent and FunctionEventAvg: averages, device times (always 0) and strings."""
    device_time_total = 0
    self_device_time_total = 0
    device_memory_usage = 0
    self_device_memory_usage = 0
    node_id = -1
    is_async = False
    is_remote = False
    is_legacy = False
    overload_name = ""
    use_device = None

    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def device_time(self):
        return 0.0

    # torch kept the cuda_* spellings as aliases of device_*.
    cuda_time = device_time
    cuda_time_total = property(lambda self: self.device_time_total)
    self_cuda_time_total = property(lambda self: self.self_device_time_total)
    cuda_memory_usage = property(lambda self: self.device_memory_usage)
    self_cuda_memory_usage = property(lambda self: self.self_device_memory_usage)

    cpu_time_str = property(lambda self: _format_time(self.cpu_time))
    cpu_time_total_str = property(lambda self: _format_time(self.cpu_time_total))
    self_cpu_time_total_str = property(lambda self: _format_time(self.self_cpu_time_total))
    device_time_str = property(lambda self: _format_time(self.device_time))
    device_time_total_str = property(lambda self: _format_time(self.device_time_total))
    self_device_time_total_str = property(lambda self: _format_time(self.self_device_time_total))


class FunctionEvent(_FormattedTimes):
    """One recorded range: an op's kernel, a backward node, or a record_function block."""

    def __init__(self, id, name, thread, start_us, end_us, input_shapes=None, stack=None, sequence_nr=-1,
                 flops=0, self_bytes=0, is_user_annotation=False):
        self.id = id
        self.name = name
        self.key = name
        self.trace_name = name
        self.thread = thread
        self.time_range = Interval(start_us, end_us)
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.stack = stack if stack is not None else []
        self.sequence_nr = sequence_nr
        self.flops = flops
        self.count = 1
        self.cpu_children = []
        self.cpu_parent = None
        self.kernels = []
        self.device_type = DeviceType.CPU
        self.is_user_annotation = is_user_annotation
        self.scope = 0
        self._self_bytes = self_bytes
        self.cpu_memory_usage = self_bytes  # children's are added once the tree is built

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self):
        return self._self_bytes

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} overload_name= device_type={self.device_type} "
                f"node_id=-1 cpu_time={self.cpu_time_str} start_us={self.time_range.start} "
                f"end_us={self.time_range.end} cpu_children={[c.id for c in self.cpu_children]} "
                f"None_time=0.000us name={self.name} thread={self.thread} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage} None_memory_usage=0 is_async=False is_remote=False "
                f"seq_nr={self.sequence_nr} is_legacy=False>")


class FunctionEventAvg(_FormattedTimes):
    """Events of one key (and input shapes) summed: see EventList.key_averages."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.cpu_time_total = 0
        self.self_cpu_time_total = 0
        self.input_shapes = None
        self.stack = None
        self.scope = None
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.cpu_children = None
        self.cpu_parent = None
        self.device_type = DeviceType.CPU
        self.is_user_annotation = False
        self.flops = 0

    def add(self, other):
        if self.key is None:
            self.key = other.key
            self.input_shapes = other.input_shapes
            self.stack = other.stack
            self.scope = other.scope
            self.cpu_children = other.cpu_children
            self.cpu_parent = other.cpu_parent
            self.device_type = other.device_type
            self.is_user_annotation = other.is_user_annotation
        if not isinstance(other, (FunctionEvent, FunctionEventAvg)):
            raise AssertionError("Expected other to be a FunctionEvent or FunctionEventAvg")
        if other.key != self.key:
            raise AssertionError(f"Expected keys to match, but got {other.key} vs {self.key}")
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.count += other.count
        self.flops += other.flops
        return self

    def __iadd__(self, other):
        return self.add(other)

    def __repr__(self):
        shapes = self.input_shapes if self.input_shapes else ""
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str}  self_cuda_time=0.000us cuda_time=0.000us input_shapes={shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage} cuda_memory_usage=0>")


class EventList(list):
    """A list of FunctionEvent (or FunctionEventAvg) with torch's summaries and exports."""

    def __init__(self, *args, **kwargs):
        self._use_device = kwargs.pop("use_device", None)
        self._profile_memory = kwargs.pop("profile_memory", False)
        self._with_flops = kwargs.pop("with_flops", False)
        super().__init__(*args, **kwargs)

    def _build_tree(self):
        for evt in self:  # children come after their parent
            if evt.cpu_parent is not None:
                evt.cpu_parent.cpu_children.append(evt)
        for evt in reversed(self):
            if evt.cpu_parent is not None:
                evt.cpu_parent.cpu_memory_usage += evt.cpu_memory_usage

    @property
    def self_cpu_time_total(self):
        return sum(evt.self_cpu_time_total for evt in self)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        """Returns the events as torch's formatted table (a string)."""
        return _build_table(self, sort_by=sort_by, row_limit=row_limit, max_src_column_width=max_src_column_width,
                            max_name_column_width=max_name_column_width,
                            max_shapes_column_width=max_shapes_column_width, header=header,
                            profile_memory=self._profile_memory, with_flops=self._with_flops,
                            top_level_events_only=top_level_events_only, time_unit=time_unit)

    def export_chrome_trace(self, path):
        """Writes the events as a Chrome trace (JSON) that chrome://tracing and Perfetto open."""
        pid = os.getpid()
        events = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "python"}}]
        for tid in sorted({evt.thread for evt in self}):
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": f"thread {tid}"}})
        for evt in self:
            args = {"External id": evt.id}
            if evt.sequence_nr >= 0:
                args["Sequence number"] = evt.sequence_nr
            if evt.input_shapes:
                args["Input Dims"] = evt.input_shapes
            if evt.flops:
                args["flops"] = evt.flops
            if evt.stack:
                args["stack"] = evt.stack
            events.append({"ph": "X", "cat": "user_annotation" if evt.is_user_annotation else "cpu_op",
                           "name": evt.trace_name, "pid": pid, "tid": evt.thread, "ts": evt.time_range.start,
                           "dur": evt.time_range.elapsed_us(), "args": args})
        with open(path, "w") as f:
            json.dump({"traceEvents": events, "displayTimeUnit": "ms"}, f)

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0, group_by_overload_name=False):
        """Sums the events of each name (and input shapes / top stack frames) into FunctionEventAvg rows."""
        stats = defaultdict(FunctionEventAvg)
        for evt in self:
            key = [evt.key, str(evt.is_user_annotation)]
            if group_by_input_shapes:
                key.append(str(evt.input_shapes))
            if group_by_stack_n > 0:
                key += evt.stack[:group_by_stack_n]
            stats[tuple(key)].add(evt)
        avg = EventList(stats.values(), use_device=self._use_device, profile_memory=self._profile_memory,
                        with_flops=self._with_flops)
        for evt in avg:
            evt.stack = evt.stack[:group_by_stack_n]
            if not group_by_input_shapes:
                evt.input_shapes = ""
        return avg

    def total_average(self):
        """Sums every event into one FunctionEventAvg keyed "Total"."""
        total = FunctionEventAvg()
        for evt in self:
            total += evt
            total.key = None
        total.key = "Total"
        return total


def _build_table(events, sort_by=None, header=None, row_limit=100, max_src_column_width=75,
                 max_name_column_width=55, max_shapes_column_width=80, with_flops=False, profile_memory=False,
                 top_level_events_only=False, time_unit=None):
    """torch's table layout (profiler_util._build_table), CPU columns only."""
    if len(events) == 0:
        return ""
    if sort_by is not None:
        key = sort_by.replace("cuda", "device").replace("xpu", "device")
        events = sorted(events, key=lambda evt: getattr(evt, key), reverse=True)
    has_input_shapes = any(evt.input_shapes is not None and len(evt.input_shapes) > 0 for evt in events)
    name_width = min(max(len(evt.key) for evt in events) + 4, max_name_column_width or 10 ** 9)
    shapes_width = min(max(len(str(evt.input_shapes)) for evt in events) + 4, max_shapes_column_width or 10 ** 9)
    stacks = [evt.stack for evt in events if evt.stack]
    width = 12

    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
    headers.append("# of Calls")
    widths = [name_width] + [width] * (len(headers) - 1)
    aligns = [">"] * len(headers)
    if has_input_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_width)
        aligns.append(">")
    src_width = None
    if stacks:
        src_width = min(max(len(entry) for stack in stacks for entry in stack) + 4, max_src_column_width or 10 ** 9)
        headers.append("Source Location")
        widths.append(src_width)
        aligns.append("<")
    raw_flops = [evt.flops for evt in events if evt.flops > 0]
    with_flops = with_flops and bool(raw_flops)
    if with_flops:
        names = ["FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"]
        log_flops = max(0, min(math.log10(min(raw_flops)) / 3, float(len(names) - 1)))
        flops_scale = pow(10, math.floor(log_flops) * -3.0)
        headers.append(f"Total {names[int(log_flops)]}")
        widths.append(width)
        aligns.append(">")

    row_format = "".join("{: " + a + str(w) + "}  " for a, w in zip(aligns, widths))
    header_sep = "".join("-" * w + "  " for w in widths)
    line_length = sum(w + 2 for w in widths) - 2

    def fmt_time(us, default):
        units = {"s": 1e6, "ms": 1e3, "us": 1.0}
        return f"{us / units[time_unit]:.3f}{time_unit}" if time_unit in units else default

    total_self = sum(evt.self_cpu_time_total for evt in events)
    out = []
    if header is not None:
        out += ["=" * line_length, header]
    if top_level_events_only:
        out += ["=" * line_length, "This report only display top-level ops statistics"]
    out += [header_sep, row_format.format(*headers), header_sep]
    shown = 0
    for evt in events:
        if shown == row_limit:
            break
        if top_level_events_only and evt.cpu_parent is not None:
            continue
        shown += 1
        name = evt.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        row = [name, _format_time_share(evt.self_cpu_time_total, total_self),
               fmt_time(evt.self_cpu_time_total, evt.self_cpu_time_total_str),
               _format_time_share(evt.cpu_time_total, total_self),
               fmt_time(evt.cpu_time_total, evt.cpu_time_total_str), fmt_time(evt.cpu_time, evt.cpu_time_str)]
        if profile_memory:
            row += [_format_memory(evt.cpu_memory_usage), _format_memory(evt.self_cpu_memory_usage)]
        row.append(evt.count)
        if has_input_shapes:
            row.append(str(evt.input_shapes)[:shapes_width])
        if stacks:
            row.append(_trim_path(evt.stack[0], src_width) if evt.stack else "")
        if with_flops:
            row.append("--" if evt.flops <= 0 else f"{evt.flops * flops_scale:8.3f}")
        out.append(row_format.format(*row))
        if stacks:
            blank = [""] * (len(headers) - 1 - with_flops)
            for entry in (evt.stack or [])[1:]:
                out.append(row_format.format(*(blank + [_trim_path(entry, src_width)] + [""] * with_flops)))
            out.append(row_format.format(*([""] * len(headers))))
    out += [header_sep, f"Self CPU time total: {fmt_time(total_self, _format_time(total_self))}"]
    return "".join(line + "\n" for line in out)


def _trim_path(path, width):
    if len(path) > width:
        path = path[len(path) - width:]
        if len(path) > 3:
            path = "..." + path[3:]
    return path


_with_stack = False  # the running session's with_stack, read by record_function


def _python_stack():
    frames = [f for f in traceback.extract_stack() if f.filename != __file__]  # the caller's frames only
    return [f"{f.filename}({f.lineno}): {f.name}" for f in reversed(frames)]


class profile:
    """Context manager that records the ops, backward nodes and record_function ranges run inside it.

    Only one profile can run at a time: entering a second one raises RuntimeError (torch 2.13 lets
    it start and the outer profile then silently loses every event).
    """

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True,
                 experimental_config=None, acc_events=False, custom_trace_id_callback=None):
        self.enabled = enabled
        self.entered = False
        self._function_events = None
        self._old_function_events = None
        if not enabled:
            return
        self.use_cuda = use_cuda
        if use_cuda:
            warnings.warn("The attribute `use_cuda` will be deprecated soon, please use ``use_device = 'cuda'`` "
                          "instead.", FutureWarning, stacklevel=2)
            use_device = "cuda"
        if use_device == "cuda" and not _C._cuda_is_available():
            warnings.warn("CUDA is not available, disabling CUDA profiling", stacklevel=2)
            use_device = None
        elif use_device not in (None, "cuda"):
            raise AssertionError(f"The {use_device} is not supported by ampgrad's profiler")
        self.use_device = use_device
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.record_shapes |= with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.use_cpu = use_cpu
        self.acc_events = acc_events
        self._t0_ns = 0

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        global _with_stack
        self._t0_ns = _C._profiler_start(self.record_shapes, self.with_flops, self.profile_memory)
        _with_stack = self.with_stack
        self.entered = True
        if self._function_events is not None and self.acc_events:
            self._old_function_events = self._function_events
        self._function_events = None
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.enabled:
            return False
        global _with_stack
        _with_stack = False
        raw = _C._profiler_stop()
        self.entered = False
        self._function_events = self._parse(raw)
        if self._old_function_events is not None:
            self._function_events[:0] = self._old_function_events
            self._old_function_events = None
        return False

    def _parse(self, raw):
        events = EventList(use_device=self.use_device, profile_memory=self.profile_memory,
                           with_flops=self.with_flops)
        for i, (name, kind, start, end, parent, thread, nbytes, flops, seq, shapes, stack) in enumerate(raw):
            evt = FunctionEvent(i, name, thread, (start - self._t0_ns) / 1e3, (end - self._t0_ns) / 1e3,
                                input_shapes=[list(s) for s in shapes], stack=stack.split("\n") if stack else [],
                                sequence_nr=seq, flops=flops, self_bytes=nbytes,
                                is_user_annotation=kind == _KIND_FUNCTION)
            if parent >= 0:
                evt.cpu_parent = events[parent]
            events.append(evt)
        events._build_tree()
        return events

    def __repr__(self):
        return "<unfinished torch.autograd.profile>" if self._function_events is None else repr(self._function_events)

    def __str__(self):
        return "<unfinished torch.autograd.profile>" if self._function_events is None else str(self._function_events)

    @property
    def function_events(self):
        if self._function_events is None:  # never ran (or still running): torch gives an empty list
            return EventList(use_device=getattr(self, "use_device", None))
        return self._function_events

    def events(self):
        return self.function_events

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        return self.function_events.table(sort_by=sort_by, row_limit=row_limit,
                                          max_src_column_width=max_src_column_width,
                                          max_name_column_width=max_name_column_width,
                                          max_shapes_column_width=max_shapes_column_width, header=header,
                                          top_level_events_only=top_level_events_only, time_unit=time_unit)

    def export_chrome_trace(self, path):
        return self.function_events.export_chrome_trace(path)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def total_average(self):
        return self.function_events.total_average()

    @property
    def self_cpu_time_total(self):
        return self.function_events.self_cpu_time_total


class record_function:
    """Context manager / function decorator that labels a block of code in the profiler's events."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._handle = -1

    def __enter__(self):
        if _C._profiler_enabled():
            self._handle = _C._record_function_enter(self.name, "\n".join(_python_stack()) if _with_stack else "")
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if self._handle >= 0:
            _C._record_function_exit(self._handle)
            self._handle = -1
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with record_function(self.name, self.args):  # a fresh range per call: recursion nests
                return fn(*args, **kwargs)
        return wrapper


class emit_nvtx:
    """torch's NVTX ranges for nvprof / Nsight: while it is active every kernel, backward node and
    record_function range is pushed as an NVTX range (Note [NVTX ranges] in csrc/autograd/profiler.cpp).
    Without CUDA entering it raises, as torch's does. It runs a profiler session whose events are
    dropped, so it cannot nest with ``profile``."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.entered = False

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError("NVTX annotation context manager is not reentrant")
        if not _C._cuda_is_available():  # as ampgrad.cuda's calls without a device
            raise AssertionError("Torch not compiled with CUDA enabled")
        _C._cuda_synchronize()
        _C._profiler_start_nvtx(bool(self.record_shapes))
        self.entered = True
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if self.enabled and self.entered:
            _C._cuda_synchronize()
            _C._profiler_stop()
            self.entered = False
        return False


class emit_itt(emit_nvtx):
    """Intel ITT ranges: not supported by ampgrad."""

    def __enter__(self):
        if not self.enabled:
            return None
        raise RuntimeError("ITT is not available")
