import Foundation

/// One phase of a soak in figures: its runs and wall time, each count's start, end and
/// maximum, memory from run k (``SoakJudge/rssFromRun(runs:firstRound:)``) to the last, the verdicts that changed. Pure: made
/// from the samples, rendered as the tables of soak.md and of BENCHMARKS.md's section.
struct SoakPhaseSummary: Sendable, Codable, Equatable {
  struct Span: Sendable, Codable, Equatable {
    var start: Int
    var end: Int
    var max: Int
  }

  var phase: SoakPhase
  var runs: Int
  var wallSeconds: Double
  var counts: [String: Span]
  var rssFromRun: Int
  var rssFromKiB: Int
  var rssLastKiB: Int
  var rssGrowthPercent: Double
  /// False with fewer than ``SoakJudge/rssMinimumRuns`` runs from run k on: reported, not
  /// judged.
  var rssJudged: Bool
  var threadsMax: Int
  var verdictChanges: Int
  var findings: Int

  /// A summary per phase that ran, in the soak's order.
  static func make(_ samples: [SoakSample], findings: [SoakFinding]) -> [SoakPhaseSummary] {
    let references = SoakJudge.references(samples)
    return SoakPhase.allCases.compactMap { phase in
      let indices = samples.indices.filter {
        samples[$0].phase == phase && samples[$0].point == .run
      }
      guard let first = indices.first, let last = indices.last,
        let growth = SoakJudge.rssGrowth(samples, phase: phase)
      else { return nil }
      let reference = references[first] ?? samples[first].counts
      var counts: [String: Span] = [:]
      for count in SoakCount.allCases {
        let values = indices.map { samples[$0].counts[count] }
        counts[count.rawValue] = Span(
          start: reference[count], end: samples[last].counts[count],
          max: max(values.max() ?? 0, reference[count]))
      }
      // From the sample before the phase (its set-up included) to its last (teardown too).
      let before = samples[..<first].lastIndex { $0.phase != phase } ?? 0
      let end = samples.indices.last { samples[$0].phase == phase } ?? last
      let mine = findings.filter { $0.phase == phase }
      return SoakPhaseSummary(
        phase: phase, runs: indices.count,
        wallSeconds: samples[end].elapsedSeconds - samples[before].elapsedSeconds,
        counts: counts, rssFromRun: growth.fromRun, rssFromKiB: growth.fromKiB,
        rssLastKiB: growth.lastKiB, rssGrowthPercent: growth.percent, rssJudged: growth.judged,
        threadsMax: indices.map { samples[$0].threads }.max() ?? 0,
        verdictChanges: mine.filter { $0.kind == .verdict }.count, findings: mine.count)
    }
  }

  /// The two tables: the phases, then each count's start / end / max per phase.
  static func markdown(_ phases: [SoakPhaseSummary]) -> String {
    func mib(_ kib: Int) -> String { String(format: "%.1f", Double(kib) / 1024) }
    var lines = [
      "| phase | runs | wall s | s per run | RSS MiB at run k | RSS MiB at the last run "
        + "| growth | threads (max) | verdict changes | findings |",
      "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    for phase in phases {
      let growth =
        String(format: "%+.1f%%", phase.rssGrowthPercent)
        + (phase.rssJudged ? "" : " (not judged: under \(SoakJudge.rssMinimumRuns) runs from k)")
      lines.append(
        "| \(phase.phase.rawValue) | \(phase.runs) | \(String(format: "%.1f", phase.wallSeconds)) "
          + "| \(String(format: "%.2f", phase.wallSeconds / Double(max(phase.runs, 1)))) "
          + "| \(mib(phase.rssFromKiB)) (k = \(phase.rssFromRun)) | \(mib(phase.rssLastKiB)) "
          + "| \(growth) | \(phase.threadsMax) | \(phase.verdictChanges) | \(phase.findings) |")
    }
    lines.append("")
    lines.append(
      "| count (start / end / max) | " + phases.map(\.phase.rawValue).joined(separator: " | ")
        + " |")
    lines.append("|---|" + phases.map { _ in "---:|" }.joined())
    for count in SoakCount.allCases {
      let cells = phases.map { phase -> String in
        guard let span = phase.counts[count.rawValue] else { return "-" }
        return "\(span.start) / \(span.end) / \(span.max)"
      }
      lines.append("| \(count.rawValue) | " + cells.joined(separator: " | ") + " |")
    }
    return lines.joined(separator: "\n")
  }
}
