"""torch's own OpInfo database (common_methods_invocations.op_db) run against ampgrad as a user would.

One test per (OpInfo, dtype) for every OpInfo that resolves in ampgrad (tests/opinfo_harness.py says
how): values against torch's, and gradients of a fixed random cotangent for OpInfos that support
autograd (float32/float64). Failures known today are listed, with reasons, in tests/opinfo_skips.py;
OpInfos ampgrad lacks count as 'missing'. The session ends with a coverage line (also logged to the
'ampgrad.opinfo' logger); tools/opinfo_coverage.py prints the same figures without pytest."""
import logging
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import opinfo_harness as H  # noqa: E402
import ampgrad  # noqa: E402
import opinfo_skips  # noqa: E402

_DB = H.load_op_db() if H.torch is not None else []
_RESOLVED = [op for op in _DB if H.resolve(op) is not None]
_PARAMS = [pytest.param(op, d, id=f"{H.op_id(op)}-{d}") for op in _RESOLVED for d in H.op_dtypes(op)]
_RESULTS = {}  # op id -> {dtype: (status, message)}


class _Summary:
    """Prints the coverage figures at the end of the session (registered by the first test)."""

    def pytest_terminal_summary(self, terminalreporter):
        if not _RESULTS:
            return
        counts = {"missing": len(_DB) - len(_RESOLVED)}
        partial = False
        for op in _RESOLVED:
            oid = H.op_id(op)
            if not H.op_dtypes(op):
                counts["no samples"] = counts.get("no samples", 0) + 1
                continue
            if oid not in _RESULTS or len(_RESULTS[oid]) < len(H.op_dtypes(op)):
                partial = True
                continue
            counts["resolvable"] = counts.get("resolvable", 0) + 1
            st = H.classify(_RESULTS[oid], opinfo_skips, oid)
            counts[st] = counts.get(st, 0) + 1
        counts["resolvable"] = len(_RESOLVED)
        line = H.summary_line(counts, len(_DB)) + (" (partial run: figures cover the OpInfos run)" if partial else "")
        stale = sorted({f"{oid}[{d}]" for oid, r in _RESULTS.items() for d, (st, _) in r.items() if st == "xpass"})
        terminalreporter.write_sep("-", "OpInfo coverage")
        terminalreporter.write_line(line)
        if stale:
            terminalreporter.write_line("skip-list entries that now pass (delete them): " + ", ".join(stale))
        logging.getLogger("ampgrad.opinfo").warning(line)


@pytest.fixture(scope="module")
def _coverage_summary(request):
    if not hasattr(request.config, "workerinput"):  # under xdist only the controller prints
        plugin = _Summary()
        if not request.config.pluginmanager.is_registered(plugin):
            request.config.pluginmanager.register(plugin, "ampgrad-opinfo-summary")
    yield


@pytest.mark.skipif(H.torch is None, reason="needs torch (the OpInfo database and the oracle)")
@pytest.mark.parametrize("op,dtype", _PARAMS)
def test_opinfo(op, dtype, _coverage_summary):
    oid = H.op_id(op)
    status, msg = H.run_opinfo_dtype(op, dtype, opinfo_skips)
    _RESULTS.setdefault(oid, {})[dtype] = (status, msg)
    if status == "xfail":
        pytest.xfail(msg)
    if status == "skip":
        pytest.skip(msg)
    assert status in ("pass", "xpass"), f"{oid} [{dtype}]: {msg}"


_CUDA = H.torch is not None and ampgrad.cuda.is_available()


@pytest.mark.skipif(not _CUDA, reason="the CUDA axis needs a CUDA device (and torch, the CPU oracle)")
@pytest.mark.parametrize("op,dtype", _PARAMS if _CUDA else [(None, None)])
def test_opinfo_cuda(op, dtype):
    """The device axis: the same samples run on ampgrad's CUDA backend, against torch's CPU results."""
    oid = H.op_id(op)
    H.set_device("cuda")
    try:
        status, msg = H.run_opinfo_dtype(op, dtype, opinfo_skips)
    finally:
        H.set_device("cpu")
    if status == "xfail":
        pytest.xfail(msg)
    if status == "skip":
        pytest.skip(msg)
    assert status in ("pass", "xpass"), f"{oid} [{dtype}] on CUDA: {msg}"


def test_opinfo_skip_list_names_real_opinfos():
    """Every skip-list entry names an OpInfo of the database (a typo would hide nothing)."""
    if H.torch is None:
        pytest.skip("needs torch")
    ids = {H.op_id(op) for op in _DB}
    unknown = sorted(set(opinfo_skips.XFAIL) - ids) + sorted(set(opinfo_skips.UNDEFINED_VALUES) - ids)
    assert not unknown, f"skip-list entries that name no OpInfo: {unknown}"
