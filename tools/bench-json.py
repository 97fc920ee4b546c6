#!/usr/bin/env python3
"""Turns tools/bench's JSON lines into BENCHMARKS.json: each figure beside its peer's figure in
the same run, the ratio between them, and the machine. Ratios, never absolute times, are what
tools/bench --check holds against tools/bench-thresholds.json (the machine is shared).

  tools/bench-json.py RESULTS.jsonl MACHINE-JSON > BENCHMARKS.json

Each figure: id, what, unit, ours, peer (name), peer_value, ratio (ours / peer_value, or for
runs paired with the peer's the median of the pairs' ratios), better
("lower" or "higher": which way of the ratio is the good one); figures with no peer (the
private network's start, the memory bound) have peer null and ratio null, and a goal instead.
"""
import json
import statistics
import sys

rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
machine = json.loads(sys.argv[2])
figures = []


def figure(ident, what, unit, ours, peer=None, peer_value=None, better="lower", goal=None,
           **extra):
    ratio = None
    if ours is not None and peer_value:
        ratio = round(ours / peer_value, 4)
    if extra.get("ratios"):
        # Runs paired with the peer's (one after the other): the median of the pairs' ratios
        # follows the load of the moment better than the ratio of the two medians.
        ratio = round(statistics.median(extra["ratios"]), 4)
    entry = {"id": ident, "what": what, "unit": unit, "ours": ours, "peer": peer,
             "peer_value": peer_value, "ratio": ratio, "better": better}
    if goal is not None:
        entry["goal"] = goal
    entry.update(extra)
    figures.append(entry)


meta = next((r for r in rows if r["section"] == "meta"), None)
audit = {r["name"]: r for r in rows if r["section"] == "audit"}
ours = audit.get("failclosed audit")
tcpdump = audit.get("tcpdump -r (same filter as BPF)")
if meta and ours:
    packets = meta["packets"]
    if tcpdump:
        figure("audit-time-vs-tcpdump", f"audit of {packets:,} packets, wall seconds", "s",
               ours["seconds"], "tcpdump -r (same filter as BPF)", tcpdump["seconds"],
               goal={"ratio_max": 1.0}, packets=packets, runs=ours.get("runs"),
               ratios=ours.get("ratios"))
    tshark = next((r for r in rows if r["section"] == "audit-tshark"), None)
    if tshark:
        scaled = tshark["seconds"] * packets / meta.get("tshark_packets", packets)
        figure("audit-time-vs-tshark", f"audit of {packets:,} packets, wall seconds (tshark's "
               f"time scaled from {meta.get('tshark_packets', packets):,} packets)", "s",
               ours["seconds"], "tshark -Y (same filter)", round(scaled, 3))
    peer_rss = tcpdump["peak_kib"] / 1024 if tcpdump else None
    figure("audit-peak-rss", f"audit of {packets:,} packets, peak resident MiB", "MiB",
           round(ours["peak_kib"] / 1024, 1), "tcpdump -r" if tcpdump else None,
           round(peer_rss, 1) if peer_rss else None, goal={"max": 40, "at_packets": 10_000_000},
           packets=packets)
    small = next((r for r in rows if r["section"] == "audit-small"), None)
    if small:
        figure("audit-rss-growth", "peak RSS on the whole file over that on a tenth of it", "x",
               round(ours["peak_kib"] / max(small["peak_kib"], 1), 3), goal={"max": 1.25})

for r in (r for r in rows if r["section"] == "fidelity" and not r.get("error")):
    kib = r["bufferBytes"] // 1024
    best = r["maxZeroDropRate"]
    peer = [t for t in r.get("tcpdump", []) if t.get("dropped") == 0]
    peer_best = max((t["sentRate"] for t in peer), default=None)
    figure(f"capture-zero-drop-rate-{kib}k", f"highest zero-drop capture rate, {kib} KiB ring "
           f"({'sender-bound' if r['senderBound'] else 'capture-bound'})", "packets/s",
           best, f"tcpdump -B {kib}", peer_best, better="higher",
           sender_bound=r["senderBound"], passed_with_drops=r["passedWithDrops"],
           sender=r.get("sender"), sender_ceiling=r.get("senderCeiling"),
           capture_cpu_s=r["atSaturation"].get("captureCPUSeconds"))

socks = {r["proxy"]: r for r in rows if r["section"] == "socks" and not r.get("error")}
mock = socks.get("failclosed mock-tor")
if mock:
    micro, dante = socks.get("microsocks"), socks.get("dante")
    if micro:
        figure("socks-connections-vs-microsocks", "SOCKS connections/s, 16 clients",
               "connections/s", round(mock["connectionsPerSecond"]), "microsocks",
               round(micro["connectionsPerSecond"]), better="higher", goal={"ratio_min": 1.2},
               failed=mock["failedConnections"], peer_failed=micro["failedConnections"])
        if mock.get("manyClients") is not None and micro.get("manyClients") is not None:
            figure("socks-connections-1000-vs-microsocks",
                   f"SOCKS connections/s, {mock.get('manyClientsCount', 1000)} clients at once",
                   "connections/s", round(mock["manyClients"]), "microsocks",
                   round(micro["manyClients"]), better="higher", goal={"ratio_min": 1.2},
                   failed=mock.get("manyClientsFailed"),
                   peer_failed=micro.get("manyClientsFailed"))
        figure("socks-latency-vs-microsocks", "added round-trip latency through the proxy, µs",
               "µs", round(mock["proxiedLatencyMicroseconds"] - mock["directLatencyMicroseconds"]),
               "microsocks",
               round(micro["proxiedLatencyMicroseconds"] - micro["directLatencyMicroseconds"]))
    if dante:
        figure("socks-bulk-vs-dante", "SOCKS bulk MB/s, one stream", "MB/s",
               round(mock["bulkMegabytesPerSecond"], 1), "dante",
               round(dante["bulkMegabytesPerSecond"], 1), better="higher",
               goal={"ratio_min": 1.0})

tn = [r for r in rows if r["section"] == "testnet"]
if tn:
    figure("testnet-ready", f"private network ready, median of {len(tn)} s", "s",
           round(statistics.median(r["network_ready_s"] for r in tn), 2), goal={"max": 10},
           runs=[r["network_ready_s"] for r in tn])
    figure("testnet-client-bootstrap", f"client bootstrap on it, median of {len(tn)} s", "s",
           round(statistics.median(r["client_bootstrap_s"] for r in tn), 2))
for r in (r for r in rows if r["section"] == "scenario-lane"):
    turn = "-in-turn" if r["lane"] == "real" and r.get("jobs") == 1 else ""
    figure(f"lane-{r['lane']}-wall{turn}",
           f"{r['lane']} lane{turn.replace('-', ' ')}, {r['scenarios']} scenarios, wall s",
           "s", round(r["wall_s"], 1), all_passed=r["exit"] == 0)
for st in (r for r in rows if r["section"] == "stall"):
    skip = st["skip_idle"]
    figure("stall-scenario-wall" + ("-skipping" if skip else ""),
           f"stall-past-75s ({st['virtual_s']} s virtual, x{st['time_scale']}"
           + (", skipping idle time" if skip else ", no skipping")
           + f"), wall s, median of {st['runs']}", "s", round(st["wall_s"], 2),
           goal={"max": 2, "passed": "all"}, runs=st["runs"], passed=st["passed"],
           wall_min_s=round(st["wall_min_s"], 2), wall_max_s=round(st["wall_max_s"], 2),
           **({"jumps": st["jumps"], "skipped_virtual_s": st["skipped_s"]} if skip else {}))

for load in ("quiet", "hogs"):
    rs = [r for r in rows if r["section"] == "load" and r["load"] == load]
    if rs:
        figure(f"mock-lane-load-{load}",
               f"mock lane on the event clock, {'quiet' if load == 'quiet' else 'beside two CPU-bound processes'}"
               f": runs set aside as late, {len(rs)} run(s)", "runs",
               sum(r["set_aside"] for r in rs), goal={"max": 0},
               verdicts_changed=sum(r["verdicts_changed"] for r in rs),
               exits=[r["exit"] for r in rs], wall_s=[round(r["wall_s"], 1) for r in rs])
replay = next((r for r in rows if r["section"] == "replay-stall"), None)
if replay:
    figure("replay-stall-wall", f"failclosed replay stall-past-75s, wall s, median of {replay['runs']}",
           "s", round(replay["wall_s"], 2), goal={"max": 1}, passed=replay["passed"],
           wall_min_s=round(replay["wall_min_s"], 2), wall_max_s=round(replay["wall_max_s"], 2))
build = next((r for r in rows if r["section"] == "bitchat-source-build"), None)
if build and not build.get("skipped"):
    figure("bitchat-source-build-first", "bitchat-source package, first build of its key, wall s",
           "s", round(build["cold_s"], 1), "cached build",
           round(build["cached_s"], 2) if build.get("cached_s") is not None else None)
sides = {r["sut"]: r for r in rows if r["section"] == "bitchat-source-lane"}
if "bitchat-source" in sides:
    source, model = sides["bitchat-source"], sides.get("model")
    figure("bitchat-source-lane-wall", f"bitchat-source lane, {source['scenarios']} scenarios "
           f"({source['virtual_s']} s of scenario time), wall s", "s", round(source["wall_s"], 1),
           "model, same files" if model else None,
           round(model["wall_s"], 1) if model else None, all_passed=source["exit"] == 0,
           peer_all_passed=model["exit"] == 0 if model else None)

run = next((r for r in rows if r["section"] == "run"), {})
print(json.dumps({"run": {k: v for k, v in run.items() if k != "section"}, "machine": machine,
                  "figures": figures}, indent=1, ensure_ascii=False))
