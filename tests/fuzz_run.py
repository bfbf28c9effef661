"""The long fuzz run: `python tests/fuzz_run.py --n 30000 --seed S` (see tests/FUZZ.md).

Prints a summary (counts by category; groups by op and outcome pair, with a one-line repro each; what is
not in tests/fuzz_known.py), optionally writes every group as JSON lines (--groups FILE), and with --stale
lists known entries that matched nothing. Exit status 1 when something new was found."""
import argparse
import glob
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
if glob.glob(os.path.join(HERE, "..", "python", "ampgrad", "_C*.so")):
    sys.path.insert(0, os.path.join(HERE, "..", "python"))

import fuzz_harness as H  # noqa: E402
import fuzz_known  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=3000, help="calls to draw")
    ap.add_argument("--seed", type=int, default=None, help="hypothesis seed (default: the UTC date)")
    ap.add_argument("--minutes", type=float, default=None, help="stop drawing after this long")
    ap.add_argument("--timeout", type=float, default=10.0, help="per-call timeout (s): longer is a hang")
    ap.add_argument("--ops", default=None, help="only ops matching these globs (space-separated), e.g. 'Tensor.sum*'")
    ap.add_argument("--groups", default=None, help="write every group as JSON lines here")
    ap.add_argument("--stale", action="store_true", help="list known entries that matched nothing")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--emit-known", default=None,
                    help="append the new exc_type / accepted / rejected groups to this file as fuzz_known.LINES lines")
    a = ap.parse_args()
    import fnmatch
    import torch
    import ampgrad
    seed = H.date_seed() if a.seed is None else a.seed
    cat = H.discover(torch, ampgrad)
    if a.ops:
        cat = [o for o in cat if any(fnmatch.fnmatchcase(o.op, p) for p in a.ops.split())]
    print(f"fuzz: {len(cat)} ops, n={a.n}, seed={seed}", flush=True)
    known = fuzz_known.Known()
    runner, report = H.Runner(timeout=a.timeout), H.Report()
    t0 = time.monotonic()
    try:
        H.campaign(a.n, seed, runner, report, cat, known,
                   time_budget=None if a.minutes is None else 60 * a.minutes, progress=1000)
    finally:
        runner.close()
    dt = time.monotonic() - t0
    print(report.summary(a.top))
    print(f"wall: {dt:.0f} s, {report.calls / max(dt, 1e-9):.0f} calls/s, worker restarts: {runner.restarts}")
    if a.groups:
        with open(a.groups, "w") as f:
            for (op, c, t, am), g in sorted(report.groups.items()):
                f.write(json.dumps({"op": op, "cat": c, "torch": t, "ampgrad": am, "count": g[0], "repro": g[1],
                                    "detail": g[2], "known": None if g[3] is None else g[3].reason}) + "\n")
    if a.emit_known:
        by = {}
        for (op, c, t, am), g in report.new_failures().items():
            if c in ("exc_type", "accepted", "rejected"):
                by.setdefault((c, t, am), set()).add(op)
        with open(a.emit_known, "a") as f:
            for (c, t, am), ops in sorted(by.items()):
                f.write(f"{c} {t} -> {am}: {' '.join(sorted(ops))}\n")
    if a.stale:
        hit = set(report.known_hits)
        for e in known.entries:
            if id(e) not in hit:
                print(f"stale? {e.cat} {e.torch}->{e.ampgrad}: {e.ops[:100]}")
    return 1 if report.new_failures() else 0


if __name__ == "__main__":
    sys.exit(main())
