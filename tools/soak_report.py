#!/usr/bin/env python3
"""The soak's figures (tools/soak --benchmarks): BENCHMARKS-soak.json from a soak.json (its
samples left out), and its section of BENCHMARKS.md (tools/bench-report.py renders the same
section from the same file, so regenerating BENCHMARKS.md keeps it). The tables are the ones
`failclosed soak` wrote in soak.json, never made again here.

    soak_report.py json SOAK.json LABEL PRIVATE MACHINE COMMIT   BENCHMARKS-soak.json
    soak_report.py splice JSON BENCHMARKS.md                    replace the section in place
    soak_report.py section JSON                                 print the section

A "note" in the JSON (a reader's summary of the findings, written by hand) is printed above
the findings; a new run's JSON has none.
"""
import json
import sys

BEGIN = "<!-- soak: written by tools/soak --benchmarks -->"
END = "<!-- /soak -->"


def summary(path, label, private, machine, commit):
    soak = json.load(open(path))
    return {
        "label": label, "privateDirs": private == "yes", "machine": machine, "commit": commit,
        "startedAt": soak["startedAt"], "plan": soak["plan"], "goalsHeld": soak["goalsHeld"],
        "stopped": soak.get("stopped"), "setupError": soak.get("setupError"),
        "wallSeconds": soak["wallSeconds"], "phases": soak["phases"], "tables": soak["tables"],
        "findings": [f["text"] for f in soak["findings"]],
    }


def section(data):
    plan = data["plan"]
    kind = ("the long soak (the issue's 500, 50 and 50)" if data["label"] == "long"
            else "the SHORT soak (CI's `tools/soak --short`), not the long one")
    out = [BEGIN, "## 8. Soak (`tools/soak`: many runs back to back in one harness process)\n"]
    out.append(
        f"{kind[0].upper() + kind[1:]}: commit {data['commit']} on {data['machine']}, started "
        f"{data['startedAt']}; {plan['mock']} mock-lane runs round {len(plan['mockLibrary'])} "
        f"scenarios, {plan['real']} real-Tor lane runs round {len(plan['realLibrary'])} on one "
        f"private network, {plan['exec']} `exec` runs (`{' '.join(plan['execCommand'])}`), "
        f"{data['wallSeconds']:.0f} s in all"
        + (", with a temporary directory and cache of its own (`--private-dirs`: other jobs ran "
           "on the machine meanwhile)" if data.get("privateDirs") else "") + ". "
        "Each count is taken before the first run and after every run (the real phase against "
        "its network once up, then the start again after its teardown); start / end / max per "
        "phase. RSS: the harness's VmRSS at run k (min(50, N/10), never before every scenario "
        "of the phase ran once) and at the last run; goal under 5% growth. Goals: "
        + ("**every goal held**." if data["goalsHeld"] else "**not met**.") + "\n")
    if data.get("stopped"):
        out.append(f"Stopped: {data['stopped']}.\n")
    if data.get("setupError"):
        out.append(f"Set-up error: {data['setupError']}.\n")
    out.append(data["tables"])
    out.append("")
    if data.get("note"):
        out.append(data["note"] + "\n")
    for finding in data["findings"][:20]:
        out.append(f"- {finding}")
    if len(data["findings"]) > 20:
        out.append(f"- ... and {len(data['findings']) - 20} more (soak.json)")
    if data["findings"]:
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
    if command == "json":
        print(json.dumps(summary(*sys.argv[2:7]), indent=2))
    elif command == "splice":
        splice(sys.argv[2], sys.argv[3])
    elif command == "section":
        print(section(json.load(open(sys.argv[2]))))
    else:
        sys.exit(f"soak_report.py: unknown command {command!r}")


if __name__ == "__main__":
    main()
