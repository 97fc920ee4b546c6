#!/usr/bin/env python3
"""Turns tools/bench's JSON lines into the Markdown table kept in BENCHMARKS.md."""
import datetime
import json
import statistics
import sys

rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
machine = sys.argv[2]
run = next((r for r in rows if r["section"] == "run"), None)
out = [f"# Benchmarks\n", f"Run {datetime.date.today()} on {machine}. Medians of repeated runs."]
if run:
    out[-1] += (f" `{run['mode']}` took {run['wall_s']:.0f} s; load average (1, 5, 15 min) "
                f"{run['load_start']} at the start, {run['load_end']} at the end (other work "
                f"shares the machine).")
out[-1] += "\n"

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
    if tshark and meta.get("tshark_packets", packets) != packets:
        out.append(f"\ntshark read {meta['tshark_packets']:,} packets (one run) and its time is "
                   "scaled up linearly to the whole file, which flatters it: its time per packet "
                   "grows with the file, so the true ratio on the whole file is higher.")
    small = next((r for r in rows if r["section"] == "audit-small"), None)
    if small:
        out.append(f"\nPeak RSS on a file ten times smaller: {small['peak_kib'] / 1024:.0f} MiB "
                   f"(full file: {ours['peak_kib'] / 1024:.0f} MiB): memory does not grow with the file.\n")

def mbit(probe, wire):
    return probe["sentRate"] * wire * 8 / 1e6

fidelity = [r for r in rows if r["section"] == "fidelity"]
if fidelity:
    first = next((r for r in fidelity if not r.get("error")), None)
    if first:
        out.append(f"## 2. Capture fidelity (UDP, {first['wireBytes']}-byte frames, device to censor "
                   f"across the sandbox veth, {first['seconds']:g} s per probe)\n")
        sender = first.get("sender", "connected UDP sockets (sendmmsg)")
        threads = first.get("senderThreads", 2)
        sink = first.get("sinkDrop", "sink socket")
        where = ("the censor's ingress hook drops it (nftables, after the device's link and its "
                 "capture)" if sink == "censor ingress" else "the sink never reads it")
        out.append(f"fcbench sends from {threads} thread{'s' if threads != 1 else ''} through "
                   f"{sender} at a paced rate to an allowed sink, and {where}; "
                   "failclosed's capture (immediate mode, snaplen 2048, as exec opens it: at both "
                   "ends of the device's link, the device's and the censor's, so a frame that "
                   "bypasses the device's packet taps is still seen; a drop at either end makes "
                   "the probe inconclusive; received counts the device's end, dropped both ends) "
                   "audits it and pcap_stats gives the drops. The rate is searched by doubling, "
                   "then bisection; a zero-drop rate has no drop at either end. tcpdump (same interface, snaplen, immediate mode and `-B`, "
                   "writing to /dev/null) runs at the same rates in separate runs; its drops are "
                   "its \"dropped by kernel\" line. Each rate is one probe on a shared machine, "
                   "so the edge moves between runs.\n")
    for r in fidelity:
        size = f"{r['bufferBytes'] / 1048576:g} MiB"
        if r.get("error"):
            out.append(f"Buffer {size}: error (see the bench's output).\n")
            continue
        wire = r["wireBytes"]
        best = r["maxZeroDropRate"]
        sat = r["atSaturation"]
        alone, cpu, send_cpu = (r.get("senderCeiling"), sat.get("captureCPUSeconds"),
                                sat.get("senderCPUSeconds"))
        costs = ""
        if alone and cpu and send_cpu:
            n = max(sat["received"], 1)
            costs = (f"The sender alone (no capture) reached {alone:,.0f} packets/s. In the "
                     f"flat-out probe the sending threads ran {send_cpu:.2f} CPU s (the kernel's "
                     "work for each packet, the veth and the copy into the capture's ring, runs "
                     f"on them) and the capture's threads {cpu:.2f} CPU s for {sat['received']:,} "
                     f"packets: {send_cpu / n * 1e6:.2f} µs a packet on the sending side, "
                     f"{cpu / n * 1e6:.2f} µs on the capture's.")
        if r["senderBound"]:
            head = (f"no drop even at the sender's top speed, {best:,.0f} packets/s "
                    f"({best * wire * 8 / 1e6:.0f} Mbit/s): the capture outran the link")
            if costs:
                head += (f". {costs} Both share the two cores with other work; the cores ran "
                         "out before the capture's ring filled, so this buffer's drop edge was "
                         "not reached in this run (longer probes at a higher load reach it at "
                         "times), and the rate above is the highest measured, bound by the "
                         "sender")
        elif best is None:
            head = "every probe dropped packets"
        else:
            head = (f"highest zero-drop rate {best:,.0f} packets/s "
                    f"({best * wire * 8 / 1e6:.0f} Mbit/s)" + (f". {costs[:-1]}" if costs else ""))
        default = " (the default)" if r["bufferBytes"] == 32 << 20 else ""
        out.append(f"Buffer {size}{default}: {head}.\n")
        out.append("| probe | tool | sent packets/s | Mbit/s | received | dropped | verdict |")
        out.append("|---|---|---:|---:|---:|---:|---|")
        sat = r["atSaturation"]
        named = []
        if not r["senderBound"] and best is not None:
            # The search's answer (a probe at twice it may pass too on a lucky minute).
            top = next((p for p in r["probes"] if p["dropped"] == 0 and p.get("targetRate")
                        and p["sentRate"] == best), None)
            if top:
                named.append(("highest zero-drop", top))
        double = r.get("atDouble")
        if double and double.get("targetRate"):
            named.append(("twice that", double))
            named.append(("flat out (saturating)", sat))
        elif double:
            # Twice the zero-drop rate is at or past the sender's top speed.
            named.append(("twice that = flat out (saturating)", sat))
        else:
            named.append(("flat out (saturating)", sat))
        for label, p in named:
            # Drops at both ends of the link; the far end's named (it alone can turn a probe
            # inconclusive while the device's capture dropped nothing).
            far = p.get("farEndDropped")
            drops = f"{p['dropped']:,}" + (f" ({far:,} at the far end)" if far else "")
            out.append(f"| {label} | failclosed | {p['sentRate']:,.0f} | {mbit(p, wire):.0f} | "
                       f"{p['received']:,} | {drops} | {p['verdict']} |")
            peer = next((t for t in r["tcpdump"] if t.get("targetRate") == p.get("targetRate")), None)
            if peer:
                out.append(f"| {label} | tcpdump -B {r['bufferBytes'] // 1024} | "
                           f"{peer['sentRate']:,.0f} | {mbit(peer, wire):.0f} | "
                           f"{peer['received']:,} | {peer['dropped']:,} | - |")
        dropped = [p for p in r["probes"] if p["dropped"] > 0]
        verdicts = sorted({p["verdict"] for p in dropped})
        count = len(r["probes"])
        out.append(f"\n{count} failclosed probe{'s' if count != 1 else ''}, "
                   + (f"{len(dropped)} with drops, verdicts: {', '.join(verdicts)}"
                      if dropped else "none with drops")
                   + f"; passed with drops: {r['passedWithDrops']} (must be 0).\n")

socks = [r for r in rows if r["section"] == "socks"]
if socks:
    out.append("## 3. SOCKS proxies under the same load generator (fcbench socks)\n")
    tried_most = max((r.get("roundsTried", r.get("rounds", 1)) for r in socks), default=1)
    out.append(f"Each figure is the median of {tried_most} rounds, the proxies measured in turn "
               "and each round starting with the next proxy.\n")
    many = next((r.get("manyClientsCount") for r in socks if r.get("manyClientsCount")), None)
    out.append("| proxy | connections/s (16 clients) | failed | "
               + (f"connections/s ({many:,} clients) | failed | " if many else "")
               + "bulk MB/s | added latency µs (median RTT) |")
    out.append("|---|---:|---:|" + ("---:|---:|" if many else "") + "---:|---:|")
    for r in socks:
        if r.get("error"):
            out.append(f"| {r['proxy']} | error | | | |")
            continue
        added = r["proxiedLatencyMicroseconds"] - r["directLatencyMicroseconds"]
        crowd = (f"{r['manyClients']:,.0f} | {r['manyClientsFailed']} | "
                 if many and r.get("manyClients") is not None else ("| | " if many else ""))
        # Each figure is the median of the rounds measured; a round that failed is named.
        tried = r.get("roundsTried", r.get("rounds", 1))
        name = r["proxy"] + (f" ({r['rounds']} of {tried} rounds measured)"
                             if r.get("rounds", tried) < tried else "")
        out.append(f"| {name} | {r['connectionsPerSecond']:,.0f} | {r['failedConnections']} | "
                   f"{crowd}{r['bulkMegabytesPerSecond']:.0f} | {added:.0f} |")
    out.append("")

sc = next((r for r in rows if r["section"] == "scenarios"), None)
lanes = [r for r in rows if r["section"] == "scenario-lane"]
stalls = [r for r in rows if r["section"] == "stall"]
if sc or lanes or stalls:
    out.append("## 4. Scenario suite (sandbox, capture, Tor, app: `failclosed leak-audit`)\n")
    out.append("| what | scenarios | wall s | virtual s | all passed |")
    out.append("|---|---:|---:|---:|---|")
    names = {"mock": "mock lane (mock Tor, x25 clock, default jobs)",
             "real": "real-Tor lane (Debian tor, one private network, side by side)"}
    for r in lanes:
        if r["lane"] == "mock" and r.get("jobs"):
            r = dict(r, lane=f"mock lane (mock Tor, x25 clock, --jobs {r['jobs']})")
        if r["lane"] == "real" and r.get("jobs") == 1:
            r = dict(r, lane="real-Tor lane (Debian tor, one private network, in turn)")
        count = r["scenarios"] if r["scenarios"] is not None else "?"
        passed = "yes" if r["exit"] == 0 else f"no (exit {r['exit']})"
        out.append(f"| {names.get(r['lane'], r['lane'])} | {count} | {r['wall_s']:.1f} | | {passed} |")
    if sc and sc.get("suite_wall_s") is not None:
        out.append(f"| whole library | {sc['scenarios'] - sc.get('not_run', 0)} | "
                   f"{sc['suite_wall_s']:.1f} | | |")
    for st in stalls:
        skipping = (f", skipping idle time: median {st['skipped_s']:g} virtual s in "
                    f"{st['jumps']:g} jumps" if st["skip_idle"] else ", no skipping")
        out.append(f"| stall-past-75s alone (x{st['time_scale']}{skipping}; wall: median of "
                   f"{st['runs']}, min-max {st['wall_min_s']:.1f}-{st['wall_max_s']:.1f}) | 1 | "
                   f"{st['wall_s']:.1f} | {st['virtual_s']} | {st['passed']} of {st['runs']} |")
    out.append("")
loads = [r for r in rows if r["section"] == "load"]
replay = next((r for r in rows if r["section"] == "replay-stall"), None)
if loads or replay:
    out.append("### Load: the mock lane on the event clock, quiet and beside two CPU-bound processes\n")
    out.append("Goal: every run exits 0, no run set aside as late, no verdict changed.\n")
    out.append("| load | runs | exits | passed | set aside | verdicts changed | wall s (min-max) |")
    out.append("|---|---:|---|---|---:|---:|---|")
    for load in ("quiet", "hogs"):
        rs = [r for r in loads if r["load"] == load]
        if not rs:
            continue
        walls = [r["wall_s"] for r in rs]
        out.append(f"| {'quiet' if load == 'quiet' else 'two CPU-bound processes'} | {len(rs)} | "
                   f"{' '.join(str(r['exit']) for r in rs)} | "
                   f"{' '.join(str(r['passed']) + '/' + str(r['scenarios']) for r in rs)} | "
                   f"{sum(r['set_aside'] for r in rs)} | {sum(r['verdicts_changed'] for r in rs)} | "
                   f"{min(walls):.1f}-{max(walls):.1f} |")
    if replay:
        out.append(f"\n`failclosed replay Scenarios/stall-past-75s.json` (100 virtual s, as users run "
                   f"it): median {replay['wall_s']:.2f} s of {replay['runs']} "
                   f"({replay['wall_min_s']:.2f}-{replay['wall_max_s']:.2f}), "
                   f"{replay['passed']} of {replay['runs']} passed; goal at most 1 s.")
    out.append("")
tn = [r for r in rows if r["section"] == "testnet"]
if tn:
    out.append("## 5. Real-Tor lane (Debian tor, private network on the loopback of a namespace of its own)\n")
    out.append("| runs | network ready s (median, min-max) | client bootstrap s (median, min-max) |")
    out.append("|---:|---|---|")
    n = [r["network_ready_s"] for r in tn]
    c = [r["client_bootstrap_s"] for r in tn]
    out.append(f"| {len(tn)} | {statistics.median(n):.1f} ({min(n):.1f}-{max(n):.1f}) | "
               f"{statistics.median(c):.1f} ({min(c):.1f}-{max(c):.1f}) |\n")

build = next((r for r in rows if r["section"] == "bitchat-source-build"), None)
if build:
    out.append("## 6. bitchat-source lane (bitchat's own Tor layer built with the shims, against the model)\n")
    if build.get("skipped"):
        out.append(f"Skipped: {build['skipped']}\n")
    else:
        cached = build.get("cached_s")
        out.append("| build of the generated package | wall s |")
        out.append("|---|---:|")
        out.append(f"| first build of the key (a fresh cache directory) | {build['cold_s']:.1f} |")
        if cached is not None:
            out.append(f"| cached (same files, same cache) | {cached:.1f} |")
        out.append("")
        sides = {r["sut"]: r for r in rows if r["section"] == "bitchat-source-lane"}
        if sides:
            out.append("| system under test | scenarios | virtual s | wall s | all passed | wall vs model |")
            out.append("|---|---:|---:|---:|---|---:|")
            model = sides.get("model")
            names = {"model": "model (x25 clock, --jobs 2)",
                     "bitchat-source": "bitchat-source (real time, --jobs 2)"}
            for sut in ("model", "bitchat-source"):
                r = sides.get(sut)
                if not r:
                    continue
                passed = "yes" if r["exit"] == 0 else f"no (exit {r['exit']})"
                ratio = (f"{r['wall_s'] / model['wall_s']:.2f}x"
                         if model and model["wall_s"] > 0 else "")
                count = r["scenarios"] if r["scenarios"] is not None else "?"
                out.append(f"| {names[sut]} | {count} | {r['virtual_s']} | {r['wall_s']:.1f} | "
                           f"{passed} | {ratio} |")
            out.append("\nThe same scenario files on both, in the same run. bitchat's code reads the "
                       "wall clock, so its lane runs in real time; the model's clock runs 25 times "
                       "faster.\n")

# The main job's section, measured by tools/main-job-bench (minutes per run, not part of this
# run): kept from its own file so regenerating BENCHMARKS.md keeps it.
import os  # noqa: E402

_main_job = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "BENCHMARKS-main-job.json")
if os.path.exists(_main_job):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import main_job_report  # noqa: E402

    out.append(main_job_report.section(json.load(open(_main_job))))

# The soak's section, measured by tools/soak --benchmarks (an hour for the long one): kept from
# its own file likewise.
_soak = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "BENCHMARKS-soak.json")
if os.path.exists(_soak):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import soak_report  # noqa: E402

    out.append("")
    out.append(soak_report.section(json.load(open(_soak))))

print("\n".join(out))
