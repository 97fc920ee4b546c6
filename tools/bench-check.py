#!/usr/bin/env python3
"""Holds a BENCHMARKS.json against the thresholds kept in the repo; exits 1 on a regression.

  tools/bench-check.py BENCHMARKS.json tools/bench-thresholds.json

A threshold names a figure by id and bounds its ratio to the peer measured in the same run
(ratio_max for times, ratio_min for rates), never an absolute time: the machine is shared and
its speed moves, the ratio much less. Absolute bounds (max) are only for what load does not
move (resident memory). failed_max bounds the failures counted with the figure. A figure the
thresholds name that the run did not produce is a failure too (a check that silently measures
nothing would pass forever).
"""
import json
import sys

bench = json.load(open(sys.argv[1]))
thresholds = json.load(open(sys.argv[2]))["figures"]
figures = {f["id"]: f for f in bench["figures"]}
failures, lines = [], []
for ident, bound in thresholds.items():
    f = figures.get(ident)
    if f is None:
        failures.append(f"{ident}: not measured by this run")
        continue
    checks = []
    if "ratio_max" in bound:
        checks.append(("ratio", f["ratio"], "<=", bound["ratio_max"]))
    if "ratio_min" in bound:
        checks.append(("ratio", f["ratio"], ">=", bound["ratio_min"]))
    if "max" in bound:
        checks.append((f["unit"], f["ours"], "<=", bound["max"]))
    if "failed_max" in bound:
        checks.append(("failed", f.get("failed"), "<=", bound["failed_max"]))
    for name, value, op, limit in checks:
        ok = value is not None and (value <= limit if op == "<=" else value >= limit)
        peer = f" (peer {f['peer']}: {f['peer_value']})" if f.get("peer") and name == "ratio" else ""
        text = f"{ident}: {name} {value} {op} {limit}: {'ok' if ok else 'REGRESSED'}{peer}"
        lines.append(text)
        if not ok:
            failures.append(text)
print("\n".join(lines))
if failures:
    print(f"bench check: {len(failures)} regression(s):", file=sys.stderr)
    for text in failures:
        print(f"  {text}", file=sys.stderr)
    sys.exit(1)
print(f"bench check: {len(lines)} bounds held")
