"""Coverage of torch's OpInfo database by ampgrad: the figures tests/test_opinfo.py prints, without pytest.

  PYTHONPATH=python python tools/opinfo_coverage.py            # figures + missing ops by family
  PYTHONPATH=python python tools/opinfo_coverage.py -v         # + every failing / skipped OpInfo
  PYTHONPATH=python python tools/opinfo_coverage.py add sort   # only these OpInfos (name or id)"""
import argparse
import collections
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

import opinfo_harness as H  # noqa: E402
import opinfo_skips  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ops", nargs="*", help="OpInfo names or ids to run (default: all)")
    ap.add_argument("-v", "--verbose", action="store_true", help="list failing and skipped OpInfos with reasons")
    args = ap.parse_args()
    if H.torch is None:
        sys.exit("tools/opinfo_coverage.py needs torch (the OpInfo database is torch's)")
    db = H.load_op_db()
    t0 = time.time()
    counts = collections.Counter()
    missing = collections.defaultdict(list)
    details = []
    for op in db:
        oid = H.op_id(op)
        if args.ops and oid not in args.ops and op.name not in args.ops:
            continue
        if H.resolve(op) is None:
            counts["missing"] += 1
            missing[H.family(op)].append(oid)
            continue
        counts["resolvable"] += 1
        results = {d: H.run_opinfo_dtype(op, d, opinfo_skips) for d in H.op_dtypes(op)}
        st = H.classify(results, opinfo_skips, oid)
        counts[st] += 1
        for d, (s, msg) in results.items():
            if s in ("fail", "xfail", "xpass") or (s == "skip" and args.verbose):
                details.append(f"  {s:5} {oid} [{d}]: {msg}")
    total = len(db) if not args.ops else sum(counts[k] for k in ("resolvable", "missing"))
    print(H.summary_line(counts, total) + f"  ({time.time() - t0:.0f} s)")
    for line in details:
        if args.verbose or not line.lstrip().startswith(("xfail", "skip")):
            print(line)
    print(f"missing ({counts['missing']}), by family:")
    for fam in sorted(missing, key=lambda f: (-len(missing[f]), f)):
        print(f"  {fam} ({len(missing[fam])}): {' '.join(sorted(missing[fam]))}")


if __name__ == "__main__":
    main()
