import Audit
import Foundation
import Scenarios

/// summary.md: for a CI step summary. The verdict first, a table, then what went wrong.
public enum MarkdownSummary {
  public static func render(_ report: RunReport) -> String {
    var lines = [
      "# failclosed leak audit: \(TerminalFormat.label(report.verdict))",
      "",
      report.countsSentence + ". Started \(report.startedAt)."
        + (report.networkReadySeconds.map {
          " Real-Tor lane: private network ready in \(TerminalFormat.duration($0))."
        } ?? "") + (TerminalFormat.clockSkipSentence(report).map { " \($0)." } ?? ""),
      "",
    ]
    if let baseline = report.baseline {
      lines += ["## Findings against the baseline", ""] + baseline.lines.map { "- " + $0 }
      if baseline.lines.isEmpty { lines.append("- no findings, and none known") }
      lines.append("")
    }
    lines += [
      "| # | Scenario | Verdict | Leaks | Expectations met | Time |",
      "|---:|---|---|---:|---:|---:|",
    ]
    for (i, r) in report.results.enumerated() {
      let met = r.judgement.expectations.filter { $0.status == .met }.count
      lines.append(
        "| \(i + 1) | \(cell(r.scenario.name))\(r.scenario.isCanary ? " (canary)" : "") | "
          + "\(icon(r.verdict)) \(TerminalFormat.label(r.verdict)) | \(r.judgement.leaks.count) | "
          + "\(met)/\(r.judgement.expectations.count) | "
          + "\(TerminalFormat.duration(r.outcome.wallSeconds)) |")
    }
    let notPassing = report.results.filter { $0.verdict != .pass }
    if !notPassing.isEmpty {
      lines += ["", "## What did not pass"]
      for r in notPassing {
        lines += ["", "### \(cell(r.scenario.name)): \(TerminalFormat.label(r.verdict))", ""]
        lines.append("*\(cell(r.scenario.title))*. Proves: \(cell(r.scenario.proves))")
        lines.append("")
        for reason in r.judgement.reasons { lines.append("- \(cell(reason))") }
        for e in r.judgement.expectations where e.status != .met {
          lines.append("- \(e.status.rawValue): \(cell(e.expectation.sentence)): \(cell(e.reason))")
        }
        for line in r.outcome.harnessLines { lines.append("- fault applied: \(cell(line))") }
        if let pcap = r.outcome.capture.pcapPath { lines.append("- capture: `\(pcap)`") }
      }
    }
    let real = report.results.filter { !$0.outcome.torTimeline.isEmpty }
    if !real.isEmpty {
      lines += ["", "## tor's timelines"]
      for r in real {
        let steps = CondensedTorEntry.condense(r.outcome.torTimeline)
          .filter { $0.entry.phase != TorTimelineEntry.commandPhase || $0.repeats < 3 }
        lines += [
          "",
          "<details><summary>\(cell(r.scenario.name)): \(TerminalFormat.label(r.verdict))"
            + (r.outcome.torTimeline.furthestBootstrap.map { ", furthest \($0.progress!)%" } ?? "")
            + "</summary>", "", "```",
        ]
        lines += steps.prefix(120).map(\.line)
        if steps.count > 120 { lines.append("... \(steps.count - 120) more in report.json") }
        lines += ["```", "", "</details>"]
      }
    }
    if !report.loadErrors.isEmpty {
      lines += ["", "## Malformed scenario files", ""]
      for e in report.loadErrors { lines.append("- `\(e.description)`") }
    }
    if !report.versions.isEmpty {
      lines += ["", "Versions: "]
      lines[lines.count - 1] += report.versions.sorted { $0.key < $1.key }
        .map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    }
    return lines.joined(separator: "\n") + "\n"
  }

  static func icon(_ v: ScenarioVerdict) -> String {
    switch v {
    case .pass: return "✅"
    case .leak: return "❌"
    case .failed: return "❌"
    case .inconclusive: return "⚠️"
    }
  }

  /// Keeps a table cell on one line and its pipes literal.
  static func cell(_ text: String) -> String {
    text.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
  }
}
