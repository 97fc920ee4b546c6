#!/usr/bin/env python3
"""The main job's benchmark (tools/main-job-bench): parse one run's log, gather the runs into
BENCHMARKS-main-job.json, and render its section of BENCHMARKS.md (tools/bench-report.py
renders the same section from the same file, so regenerating BENCHMARKS.md keeps it).

    main_job_report.py parse LABEL START END STATUS LOG   one JSON line for a run
    main_job_report.py json RESULTS MACHINE COMMIT         BENCHMARKS-main-job.json
    main_job_report.py splice JSON BENCHMARKS.md           replace the section in place
    main_job_report.py section JSON                        print the section
"""
import json
import re
import sys

GOAL_S = 300.0
BEGIN = "<!-- main-job: written by tools/main-job-bench -->"
END = "<!-- /main-job -->"


def parse(label, start, end, status, log, cpu=None):
    text = open(log, errors="replace").read()
    user = system = None
    if cpu:
        try:
            words = open(cpu).read().split()[-2:]
            user, system = float(words[0]), float(words[1])
        except (OSError, ValueError, IndexError):
            pass
    builds = [float(m) for m in re.findall(r"Build of product 'failclosed' complete! \(([0-9.]+)s\)", text)]
    driver = re.search(r"bitchat-source: built .* in ([0-9.]+) s", text)
    lanes = {}
    line = re.search(r"^lanes: (.*)$", text, re.M)
    if line:
        for m in re.finditer(r"([\w-]+) ([\w-]+) ([0-9.]+) s \(([0-9.]+)-([0-9.]+) s\)", line.group(1)):
            lanes[f"{m.group(1)} {m.group(2)}"] = float(m.group(3))
    verdicts = re.search(r"^leak-audit: (.*)$", text, re.M)
    known = re.findall(r"^known \(baseline, unchanged\): ([\w-]+):", text, re.M)
    new = re.findall(r"^NEW \(not in the baseline\): ([\w-]+):", text, re.M)
    failed = re.findall(r"^([\w-]+)\s+(?:FAILED|LEAK|INCONCLUSIVE)\s", text, re.M)
    return {
        "label": label, "wall_s": float(end) - float(start), "exit": int(status),
        "cpu_user_s": user, "cpu_sys_s": system,
        "build_s": builds[0] if builds else None,
        "driver_build_s": float(driver.group(1)) if driver else 0.0,
        "lanes_s": lanes, "verdicts": verdicts.group(1) if verdicts else "",
        "known": sorted(set(known)), "new": sorted(set(new)), "failed": sorted(set(failed)),
    }


def section(data):
    out = [BEGIN, "## 7. The main job (`./tools/leak-audit` on a fresh clone, every lane, builds included)\n"]
    out.append(
        f"Commit {data['commit']} on {data['machine']}. Goal: {GOAL_S:.0f} s (5 minutes). Every run "
        "starts from a fresh clone with empty caches (the project's debug build and bitchat's driver "
        "are both made); the last one drops the shipped baseline (`--no-baseline`). Lane spans "
        "overlap: the model's mock lane runs alone, then its real-Tor lane beside both of "
        "bitchat's. Before this work (ef9ca1f, build already made, driver cached) the job took "
        "490 s and exited 5.\n")
    out.append("| run | wall s | vs goal | CPU s (user+sys) | build s | bitchat driver s | model mock | model real-Tor | bitchat mock | bitchat real-Tor | exit | verdicts |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in data["runs"]:
        lanes = r.get("lanes_s", {})

        def lane(name):
            return f"{lanes[name]:.1f}" if name in lanes else "-"
        build = f"{r['build_s']:.1f}" if r.get("build_s") is not None else "-"
        cpu = (f"{r['cpu_user_s'] + r['cpu_sys_s']:.0f}"
               if r.get("cpu_user_s") is not None and r.get("cpu_sys_s") is not None else "-")
        out.append(
            f"| {r['label']} | {r['wall_s']:.1f} | {r['wall_s'] / GOAL_S:.2f}x | {cpu} | {build} | "
            f"{r.get('driver_build_s', 0):.1f} | {lane('model mock')} | {lane('model real-Tor')} | "
            f"{lane('bitchat-source mock')} | {lane('bitchat-source real-Tor')} | {r['exit']} | "
            f"{r['verdicts']}"
            + (f"; known: {', '.join(r['known'])}" if r.get("known") else "")
            + (f"; new: {', '.join(r['new'])}" if r.get("new") else "")
            + (f"; failed or leaked: {', '.join(r['failed'])}" if r.get("failed") else "") + " |")
    out.append("")
    out.append(END)
    return "\n".join(out)


def splice(json_path, md_path):
    data = json.load(open(json_path))
    text = open(md_path).read()
    block = section(data)
    if BEGIN in text and END in text:
        text = text[: text.index(BEGIN)] + block + text[text.index(END) + len(END):]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    open(md_path, "w").write(text)


def main():
    command = sys.argv[1]
    if command == "parse":
        print(json.dumps(parse(*sys.argv[2:8])))
    elif command == "json":
        runs = [json.loads(line) for line in open(sys.argv[2]) if line.strip()]
        print(json.dumps({"machine": sys.argv[3], "commit": sys.argv[4], "goal_s": GOAL_S, "runs": runs}, indent=2))
    elif command == "splice":
        splice(sys.argv[2], sys.argv[3])
    elif command == "section":
        print(section(json.load(open(sys.argv[2]))))
    else:
        sys.exit(f"main_job_report.py: unknown command {command!r}")


if __name__ == "__main__":
    main()
