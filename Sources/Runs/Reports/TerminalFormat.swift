import Audit
import Scenarios

/// Lines for the terminal: one progress line per finished scenario, then a summary table.
/// Pure: the runner prints what these return.
public enum TerminalFormat {
  /// "[ 3/23] healthy-baseline                         PASS           1.2 s"
  public static func progressLine(
    index: Int, total: Int, name: String, verdict: ScenarioVerdict, wallSeconds: Double,
    nameWidth: Int = 44, earlierRuns: Int = 0
  ) -> String {
    let width = String(total).count
    let counter = "[" + pad(String(index), width, left: true) + "/\(total)]"
    let rerun =
      earlierRuns == 0
      ? ""
      : "  (run \(earlierRuns + 1): the run\(earlierRuns == 1 ? "" : "s") before could not be judged: "
        + "the harness's fault)"
    return counter + " " + pad(clip(name, nameWidth), nameWidth) + " "
      + pad(label(verdict), 12) + " " + pad(duration(wallSeconds), 8, left: true) + rerun
  }

  /// The verdict as shown on a terminal; inconclusive is spelled out, never abbreviated.
  public static func label(_ verdict: ScenarioVerdict) -> String {
    switch verdict {
    case .pass: return "PASS"
    case .leak: return "LEAK"
    case .failed: return "FAILED"
    case .inconclusive: return "INCONCLUSIVE"
    }
  }

  /// A table of every scenario with its verdict, time and first reason, then the counts.
  public static func summaryTable(_ report: RunReport, reasonWidth: Int = 60) -> String {
    let nameWidth = max(8, report.results.map(\.scenario.name.count).max() ?? 8)
    let header =
      pad("Scenario", nameWidth) + "  " + pad("Verdict", 12) + "  " + pad("Time", 8, left: true)
      + "  Why"
    var lines = [header, String(repeating: "-", count: header.count + reasonWidth - 3)]
    for r in report.results {
      let reason = r.verdict == .pass ? "" : clip(r.judgement.reasons.first ?? "", reasonWidth)
      lines.append(
        pad(r.scenario.name, nameWidth) + "  " + pad(label(r.verdict), 12) + "  "
          + pad(duration(r.outcome.wallSeconds), 8, left: true) + "  " + reason)
    }
    for e in report.loadErrors {
      lines.append(
        pad(ScenarioParser.defaultName(e.file), nameWidth) + "  " + pad("MALFORMED", 12) + "  "
          + pad("-", 8, left: true) + "  " + clip("\(e.path): \(e.message)", reasonWidth))
    }
    lines.append("")
    lines.append("\(label(report.verdict)): \(report.countsSentence)")
    if let skip = clockSkipSentence(report) { lines.append(skip) }
    return lines.joined(separator: "\n")
  }

  /// How the runs' event clocks moved, when any ran on one: "Clock: 23 scenarios on the
  /// event clock (time moves only while every process waits): 1234.5 virtual s jumped in 456
  /// jumps, 12.5 s at the scale while a real-time wait held".
  public static func clockSkipSentence(_ report: RunReport) -> String? {
    let skips = report.results.compactMap(\.outcome.clockSkip)
    guard !skips.isEmpty else { return nil }
    let seconds = skips.reduce(0) { $0 + $1.skippedSeconds }
    let jumps = skips.reduce(0) { $0 + $1.idleJumps }
    let held = skips.reduce(0) { $0 + $1.heldSeconds }
    return "Clock: \(skips.count) scenario\(skips.count == 1 ? "" : "s") on the event clock "
      + "(time moves only while every process waits): \(String(format: "%.1f", seconds)) "
      + "virtual s jumped in \(jumps) jump\(jumps == 1 ? "" : "s"), "
      + "\(String(format: "%.1f", held)) s at the scale while a real-time wait held"
  }

  /// "14.7 s": seconds for a terminal line.
  public static func durationText(_ seconds: Double) -> String { duration(seconds) }

  static func duration(_ seconds: Double) -> String {
    let tenths = Int((seconds * 10).rounded())
    return "\(tenths / 10).\(tenths % 10) s"
  }

  static func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
    guard text.count < width else { return text }
    let fill = String(repeating: " ", count: width - text.count)
    return left ? fill + text : text + fill
  }

  static func clip(_ text: String, _ width: Int) -> String {
    text.count <= width ? text : String(text.prefix(width - 3)) + "..."
  }
}
