#!/usr/bin/env python3
"""Turns tools/bench's JSON lines into the Markdown table kept in BENCHMARKS.md."""
import datetime
import json
import statistics
import sys

rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
machine = sys.argv[2]
out = [f"# Benchmarks\n", f"Run {datetime.date.today()} on {machine}. Medians of repeated runs.\n"]

meta = next((r for r in rows if r["section"] == "meta"), None)
audit = [r for r in rows if r["section"] == "audit"]
if meta and audit:
    packets, size = meta["packets"], meta["bytes"]
    ours = next(r for r in audit if r["name"] == "failclosed audit")
    out.append(f"## 1. Audit throughput ({packets:,} packets, {size / 1e6:.0f} MB, mixed traffic with leaks)\n")
    out.append("| tool | seconds | packets/s | MB/s | peak RSS MiB | time vs failclosed |")
    out.append("|---|---:|---:|---:|---:|---:|")
    tshark = next((r for r in rows if r["section"] == "audit-tshark"), None)
    if tshark:
        # Scale tshark's time on its (smaller) file to the full packet count.
        scaled = dict(tshark)
        scaled["seconds"] = tshark["seconds"] * packets / meta.get("tshark_packets", packets)
        scaled["name"] = tshark["name"] + (
            f" ({meta['tshark_packets']:,} packets, time scaled)"
            if meta.get("tshark_packets", packets) != packets else "")
        audit = audit + [scaled]
    for r in audit:
        s = max(r["seconds"], 1e-3)
        out.append(f"| {r['name']} | {s:.2f} | {packets / s:,.0f} | {size / 1e6 / s:.0f} | "
                   f"{r['peak_kib'] / 1024:.0f} | {s / max(ours['seconds'], 1e-3):.2f}x |")
    small = next((r for r in rows if r["section"] == "audit-small"), None)
    if small:
        out.append(f"\nPeak RSS on a file ten times smaller: {small['peak_kib'] / 1024:.0f} MiB "
                   f"(full file: {ours['peak_kib'] / 1024:.0f} MiB): memory does not grow with the file.\n")

socks = [r for r in rows if r["section"] == "socks"]
if socks:
    out.append("## 3. SOCKS proxies under the same load generator (fcbench socks)\n")
    out.append("| proxy | connections/s | failed | bulk MB/s | added latency µs (median RTT) |")
    out.append("|---|---:|---:|---:|---:|")
    for r in socks:
        if r.get("error"):
            out.append(f"| {r['proxy']} | error | | | |")
            continue
        added = r["proxiedLatencyMicroseconds"] - r["directLatencyMicroseconds"]
        out.append(f"| {r['proxy']} | {r['connectionsPerSecond']:,.0f} | {r['failedConnections']} | "
                   f"{r['bulkMegabytesPerSecond']:.0f} | {added:.0f} |")
    out.append("")

sc = next((r for r in rows if r["section"] == "scenarios"), None)
if sc:
    out.append("## 4. Scenario suite (sandbox, capture, mock Tor, app; --jobs 2)\n")
    out.append("| what | wall s | virtual s |")
    out.append("|---|---:|---:|")
    if sc["suite_wall_s"] is not None:
        out.append(f"| whole library ({sc['scenarios']} scenarios) | {sc['suite_wall_s']:.1f} | |")
    out.append(f"| stall-past-75s alone | {sc['stall_wall_s']:.1f} | {sc['stall_virtual_s']} |\n")
tn = [r for r in rows if r["section"] == "testnet"]
if tn:
    out.append("## 5. Real-Tor lane (Debian tor, loopback private network)\n")
    out.append("| runs | network ready s (median, min-max) | client bootstrap s (median, min-max) |")
    out.append("|---:|---|---|")
    n = [r["network_ready_s"] for r in tn]
    c = [r["client_bootstrap_s"] for r in tn]
    out.append(f"| {len(tn)} | {statistics.median(n):.1f} ({min(n):.1f}-{max(n):.1f}) | "
               f"{statistics.median(c):.1f} ({min(c):.1f}-{max(c):.1f}) |\n")

out.append("Not measured yet: capture fidelity (highest zero-drop rate across the sandbox link).")
print("\n".join(out))
