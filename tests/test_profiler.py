"""autograd.profiler: events recorded by the engine, FunctionEvent trees, tables and Chrome traces."""
import json
import threading

import pytest
import torch

import ampgrad
from ampgrad.autograd import profiler

CUDA = ampgrad.cuda.is_available()


def names(prof):
    return [e.name for e in prof.function_events]


def find(prof, name):
    evs = [e for e in prof.function_events if e.name == name]
    assert evs, f"{name} not in {names(prof)}"
    return evs


def test_forward_op_names_and_counts_match_torch():
    counts = {}
    for lib in (ampgrad, torch):
        a, b = lib.ones(4), lib.ones(4)
        with lib.autograd.profiler.profile() as prof:
            for _ in range(5):
                c = a + b
            d = c * b
        avg = {e.key: e.count for e in prof.key_averages()}
        counts[lib.__name__] = (avg["aten::add"], avg["aten::mul"])
    assert counts["ampgrad"] == counts["torch"] == (5, 1)


def test_backward_nodes_are_recorded_with_their_ops():
    x = ampgrad.ones(3, requires_grad=True)
    with profiler.profile() as prof:
        y = (x * x).sum()
        y.backward()
    ev = find(prof, "autograd::engine::evaluate_function: MulBackward0")[0]
    node = find(prof, "MulBackward0")[0]
    assert node.cpu_parent is ev and ev.cpu_children[0] is node
    assert node.sequence_nr >= 0 and node.sequence_nr == ev.sequence_nr
    assert "aten::mul" in [c.name for c in node.cpu_children]  # the formula's ops nest inside the node
    assert find(prof, "SumBackward0")
    acc = find(prof, "torch::autograd::AccumulateGrad")
    assert len(acc) == 1
    assert acc[0].cpu_parent.name == "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"
    assert ev.time_range.start <= node.time_range.start <= node.time_range.end <= ev.time_range.end


def test_backward_event_names_match_torch():
    seen = {}
    for lib in (ampgrad, torch):
        x = lib.ones(2, 3, requires_grad=True)
        w = lib.ones(3, 4, requires_grad=True)
        with lib.autograd.profiler.profile() as prof:
            ((x.mm(w) * 2).relu().sum()).backward()
        seen[lib.__name__] = sorted(e.name for e in prof.function_events
                                    if "Backward" in e.name or "AccumulateGrad" in e.name)
    assert seen["ampgrad"] == seen["torch"]
    assert len(seen["ampgrad"]) == 2 * 6  # 4 nodes + 2 AccumulateGrad, each in an evaluate_function range


def test_backward_node_shapes_match_torch():
    seen = {}
    for lib in (ampgrad, torch):
        x = lib.ones(3, 4, requires_grad=True)
        with lib.autograd.profiler.profile(record_shapes=True) as prof:
            (x * 2).sum().backward()
        seen[lib.__name__] = {e.name: e.input_shapes for e in prof.function_events
                              if e.name in ("MulBackward0", "SumBackward0", "torch::autograd::AccumulateGrad")}
    assert seen["ampgrad"] == seen["torch"] == {"MulBackward0": [[3, 4]], "SumBackward0": [[]],
                                                "torch::autograd::AccumulateGrad": [[3, 4]]}


def test_ops_on_another_thread_are_recorded_with_its_id():
    a = ampgrad.ones(2)
    with profiler.profile() as prof:
        a + a
        t = threading.Thread(target=lambda: a * a)
        t.start()
        t.join()
    add, mul = find(prof, "aten::add")[0], find(prof, "aten::mul")[0]
    assert add.thread != mul.thread and add.thread > 0 and mul.thread > 0
    assert mul.cpu_parent is None


def test_record_function_nests_and_decorates():
    @profiler.record_function("deco")
    def double(t, depth):
        return t * 2 if depth == 0 else double(t, depth - 1)

    a = ampgrad.ones(2)
    with profiler.profile() as prof:
        with profiler.record_function("outer"):
            with profiler.record_function("inner"):
                a + a
        double(a, 1)
    outer, inner = find(prof, "outer")[0], find(prof, "inner")[0]
    assert inner.cpu_parent is outer and outer.cpu_parent is None
    assert [c.name for c in inner.cpu_children] == ["aten::add"]
    assert outer.cpu_time_total >= inner.cpu_time_total >= inner.cpu_children[0].cpu_time_total
    d0, d1 = find(prof, "deco")
    assert d1.cpu_parent is d0 and "aten::mul" in [c.name for c in d1.cpu_children]
    assert outer.is_user_annotation and not inner.cpu_children[0].is_user_annotation


def test_record_function_outside_a_profile_is_a_no_op():
    with profiler.record_function("nothing") as rf:
        ampgrad.ones(2) + 1
    assert rf._handle == -1
    with profiler.profile() as prof:
        pass
    assert names(prof) == []


def test_self_time_excludes_children():
    a = ampgrad.ones(64, 64)
    with profiler.profile() as prof:
        with profiler.record_function("block"):
            for _ in range(3):
                a @ a
    block = find(prof, "block")[0]
    kids = sum(c.cpu_time_total for c in block.cpu_children)
    assert len(block.cpu_children) == 3
    assert block.self_cpu_time_total == pytest.approx(block.cpu_time_total - kids)
    assert prof.self_cpu_time_total == pytest.approx(block.cpu_time_total)  # self times sum to the top level


def test_table_has_torch_columns_rows_and_sorting():
    a = ampgrad.ones(8)
    with profiler.profile(profile_memory=True) as prof:
        for _ in range(4):
            a + a
        a * a
        a.exp()
    table = prof.key_averages().table(sort_by="count", row_limit=2)
    lines = table.splitlines()
    for col in ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "CPU Mem",
                "Self CPU Mem", "# of Calls"]:
        assert col in lines[1]
    rows = lines[3:-2]
    assert len(rows) == 2  # row_limit
    assert rows[0].split()[0] == "aten::add" and rows[0].split()[-1] == "4"
    assert lines[-1].startswith("Self CPU time total: ")
    plain = prof.table()
    assert len(plain.splitlines()) == 3 + 6 + 2  # one row per event, in order
    assert profiler.profile().table() == ""  # never ran: an empty list, as torch


def test_chrome_trace_is_json_with_op_events(tmp_path):
    x = ampgrad.ones(3, 3, requires_grad=True)
    with profiler.profile(record_shapes=True) as prof:
        with profiler.record_function("step"):
            loss = (x @ x).sum()
        loss.backward()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    by_name = {}
    for e in spans:
        by_name.setdefault(e["name"], e)  # the first of each name
    for name in ["step", "aten::mm", "aten::sum", "MmBackward0", "autograd::engine::evaluate_function: MmBackward0",
                 "torch::autograd::AccumulateGrad"]:
        assert name in by_name, name
    assert len(spans) == len(prof.function_events)
    for e in spans:
        assert e["ts"] >= 0 and e["dur"] >= 0 and isinstance(e["tid"], int) and e["cat"] in ("cpu_op", "user_annotation")
    step, mm = by_name["step"], by_name["aten::mm"]
    assert step["cat"] == "user_annotation" and mm["cat"] == "cpu_op"
    assert step["ts"] <= mm["ts"] and mm["ts"] + mm["dur"] <= step["ts"] + step["dur"] + 1e-3
    assert mm["args"]["Input Dims"] == [[3, 3], [3, 3]]


@pytest.mark.parametrize("lib", [ampgrad, torch], ids=["ampgrad", "torch"])
def test_mm_flops_are_2mnk(lib):
    a, b = lib.ones(3, 4), lib.ones(4, 5)
    with lib.autograd.profiler.profile(with_flops=True) as prof:
        a.mm(b)
    (mm,) = [e for e in prof.function_events if e.name == "aten::mm"]
    assert mm.flops == 2 * 3 * 4 * 5
    assert "Total FLOPs" in prof.key_averages().table()


def test_bmm_flops_and_shapes():
    a, b = ampgrad.ones(2, 3, 4), ampgrad.ones(2, 4, 5)
    with profiler.profile(with_flops=True) as prof:
        ampgrad.bmm(a, b)
    (mm,) = find(prof, "aten::mm")  # every GEMM runs as the mm kernel
    assert mm.flops == 2 * 2 * 3 * 4 * 5 and mm.input_shapes == [[2, 3, 4], [2, 4, 5]]


def test_record_shapes_groups_by_input_shape():
    a, b = ampgrad.ones(2, 3), ampgrad.ones(4)
    with profiler.profile(record_shapes=True) as prof:
        a + a
        a + a
        b + b
    assert find(prof, "aten::add")[0].input_shapes == [[2, 3], [2, 3]]
    rows = {(e.key, str(e.input_shapes)): e.count for e in prof.key_averages(group_by_input_shape=True)}
    assert rows[("aten::add", str([[2, 3], [2, 3]]))] == 2
    assert rows[("aten::add", str([[4], [4]]))] == 1
    assert {e.key: e.count for e in prof.key_averages()}["aten::add"] == 3
    assert "Input Shapes" in prof.key_averages(group_by_input_shape=True).table()
    with profiler.profile() as prof:
        a + a
    assert find(prof, "aten::add")[0].input_shapes == []  # not recorded unless asked


def test_record_shapes_with_absent_operands():
    """An op called without an optional tensor (sdpa without a mask, nll_loss without weights, conv
    without a bias) records [] for it, as torch records a None; reading the absent operand's sizes
    crashed the process (a null tensor dereferenced)."""
    q = ampgrad.randn(2, 4, 8, 16)
    logp = ampgrad.randn(5, 3).log_softmax(1)
    t = ampgrad.tensor([0, 2, 1, 1, 0])
    with profiler.profile(record_shapes=True, with_flops=True) as prof:
        y = ampgrad.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
        ampgrad.nn.functional.nll_loss(logp, t)
        ampgrad.nn.functional.conv2d(ampgrad.randn(1, 2, 5, 5), ampgrad.randn(3, 2, 3, 3))
    ref = torch.nn.functional.scaled_dot_product_attention(*(torch.from_numpy(q.numpy()),) * 3, is_causal=True)
    assert torch.allclose(torch.from_numpy(y.numpy()), ref, atol=1e-5)
    (sdpa,) = find(prof, "aten::scaled_dot_product_attention")
    assert sdpa.input_shapes[:3] == [[2, 4, 8, 16]] * 3 and [] in sdpa.input_shapes
    (nll,) = find(prof, "aten::nll_loss")
    assert nll.input_shapes[:2] == [[5, 3], [5]] and [] in nll.input_shapes


def test_profile_memory_counts_fresh_outputs():
    a = ampgrad.ones(1000)
    with profiler.profile(profile_memory=True) as prof:
        with profiler.record_function("block"):
            a + a
            (a * 2).sum()
    add = find(prof, "aten::add")[0]
    assert add.self_cpu_memory_usage == 4000 and add.cpu_memory_usage == 4000
    block = find(prof, "block")[0]
    assert block.cpu_memory_usage >= 4000 + 4000 + 4
    avg = {e.key: e for e in prof.key_averages()}
    assert avg["aten::add"].cpu_memory_usage == 4000
    with profiler.profile() as prof:
        a + a
    assert find(prof, "aten::add")[0].cpu_memory_usage == 0


def test_disabled_profile_records_nothing():
    a = ampgrad.ones(2)
    p = profiler.profile(enabled=False)
    with p as prof:
        a + a
        assert not ampgrad.autograd._profiler_enabled()
    assert prof is None and len(p.function_events) == 0
    a + a  # ops outside a profile are not recorded
    with profiler.profile() as prof:
        a * a
    assert names(prof) == ["aten::mul"]


def test_exception_inside_leaves_profiler_off():
    a = ampgrad.ones(2)
    with pytest.raises(ValueError):
        with profiler.profile() as prof:
            with profiler.record_function("failing"):
                a + a
                raise ValueError("boom")
    assert not ampgrad.autograd._profiler_enabled()
    assert names(prof) == ["failing", "aten::add"]
    with profiler.profile() as prof2:  # a new session starts clean
        a * a
    assert names(prof2) == ["aten::mul"]


def test_failing_op_is_still_recorded_and_closed():
    a, b = ampgrad.ones(2, 3), ampgrad.ones(4, 5)
    with profiler.profile() as prof:
        with pytest.raises(RuntimeError):
            a.mm(b)
        a + a
    assert names(prof) == ["aten::add"]  # the check failed before any kernel ran
    assert prof.function_events[0].cpu_parent is None


def test_nested_profile_raises_and_outer_keeps_events():
    a = ampgrad.ones(2)
    with profiler.profile() as outer:
        a + a
        with pytest.raises(RuntimeError, match="already enabled"):
            with profiler.profile():
                pass
        a * a
    assert names(outer) == ["aten::add", "aten::mul"]


def test_total_average_and_event_fields():
    a = ampgrad.ones(2)
    with profiler.profile() as prof:
        a + a
        a + a
    total = prof.total_average()
    assert total.key == "Total" and total.count == 2
    assert total.self_cpu_time_total == pytest.approx(prof.self_cpu_time_total)
    ev = prof.function_events[0]
    assert ev.count == 1 and ev.cpu_time == ev.cpu_time_total > 0 and ev.thread > 0
    assert ev.time_range.end > ev.time_range.start >= 0
    assert "FunctionEvent" in repr(ev) and "FunctionEventAvg" in repr(prof.key_averages()[0])


def test_with_stack_records_python_frames_for_ranges():
    with profiler.profile(with_stack=True) as prof:
        with profiler.record_function("here"):
            pass
    (ev,) = find(prof, "here")
    assert any("test_profiler.py" in f and "test_with_stack_records_python_frames_for_ranges" in f for f in ev.stack[:2])
    assert "Source Location" in prof.table()

    @profiler.record_function("decorated")
    def f():
        pass

    with profiler.profile(with_stack=True) as prof:
        f()
    assert "test_with_stack_records_python_frames_for_ranges" in find(prof, "decorated")[0].stack[0]


@pytest.mark.skipif(CUDA, reason="needs a build without CUDA")
def test_emit_nvtx_without_cuda_raises_as_torch():
    with pytest.raises(AssertionError, match="not compiled with CUDA enabled"):
        with profiler.emit_nvtx():
            pass
    with profiler.emit_nvtx(enabled=False):
        pass


@pytest.mark.cuda
@pytest.mark.skipif(not CUDA, reason="needs CUDA")
def test_emit_nvtx_with_cuda_runs():
    with profiler.emit_nvtx():
        ampgrad.ones(2, device="cuda") + 1


def test_profiler_alias_module():
    assert ampgrad.profiler.record_function is profiler.record_function


def test_nvtx_session_records_and_blocks_a_nested_profile():
    # emit_nvtx's session (without a device only reachable directly): ranges are taken, events dropped.
    _C = ampgrad._C
    _C._profiler_start_nvtx(False)
    try:
        with pytest.raises(RuntimeError, match="already enabled"):
            with profiler.profile():
                pass
        ampgrad.ones(3) + 1
    finally:
        names = [e[0] for e in _C._profiler_stop()]
    assert "aten::add" in names and not _C._profiler_enabled()
