import FailClosedSupport
import Foundation

/// A soak's record: soak.json (the plan, every sample, the findings, the phases in figures
/// and their tables, the source of truth) and soak.md (the tables and the findings).
struct SoakReport: Sendable, Codable {
  struct Plan: Sendable, Codable {
    var mock: Int
    var real: Int
    var exec: Int
    var maxMinutes: Double
    var mockLibrary: [String]
    var realLibrary: [String]
    var execCommand: [String]
    var canary: String?
  }

  var startedAt: String
  var version: String
  var plan: Plan
  /// True when every goal held for every run that ran (and nothing failed to set up).
  var goalsHeld: Bool
  var stopped: String?
  var setupError: String?
  var wallSeconds: Double
  var phases: [SoakPhaseSummary]
  /// soak.md's tables, as BENCHMARKS.md's section shows them.
  var tables: String
  var findings: [SoakFinding]
  var samples: [SoakSample]

  init(
    startedAt: String, plan: SoakPlan, outcome: SoakRunner.Outcome, findings: [SoakFinding]
  ) {
    self.startedAt = startedAt
    version = VersionCommand.version
    self.plan = Plan(
      mock: plan.mock, real: plan.real, exec: plan.exec, maxMinutes: plan.maxMinutes,
      mockLibrary: plan.mockLibrary.map(\.name), realLibrary: plan.realLibrary.map(\.name),
      execCommand: plan.execCommand, canary: plan.canary?.rawValue)
    goalsHeld = findings.isEmpty && outcome.setupError == nil
    stopped = outcome.stopped
    setupError = outcome.setupError
    wallSeconds = outcome.samples.last?.elapsedSeconds ?? 0
    phases = SoakPhaseSummary.make(outcome.samples, findings: findings)
    tables = SoakPhaseSummary.markdown(phases)
    self.findings = findings
    samples = outcome.samples
  }

  /// Whonix's convention: 0 every goal held, 5 one did not, 2 a set-up failed.
  var exitCode: Int32 {
    if setupError != nil { return ExitCode.inconclusive }
    return findings.isEmpty ? ExitCode.pass : ExitCode.leak
  }

  /// The findings as lines: each count's first finding per phase with how many runs it was
  /// off in, then memory and verdicts.
  var findingLines: [String] {
    var lines: [String] = []
    var seen: [String: Int] = [:]
    var order: [String] = []
    var first: [String: SoakFinding] = [:]
    for finding in findings {
      let key =
        finding.kind == .count
        ? "\(finding.phase?.rawValue ?? "") \(finding.count?.rawValue ?? "")"
        : "\(order.count) \(finding.text)"
      if first[key] == nil {
        first[key] = finding
        order.append(key)
      }
      seen[key, default: 0] += 1
    }
    for key in order {
      guard let finding = first[key] else { continue }
      let times = seen[key] ?? 1
      lines.append(
        finding.text + (times > 1 ? " (and \(times - 1) later sample(s) off too)" : ""))
    }
    return lines
  }

  var markdown: String {
    var lines = [
      "# Soak", "",
      "failclosed \(version), started \(startedAt): \(plan.mock) mock-lane runs, \(plan.real) "
        + "real-Tor lane runs, \(plan.exec) exec runs planned, at most "
        + "\(SoakState.number(plan.maxMinutes)) minutes; \(String(format: "%.1f", wallSeconds)) s "
        + "in all. Goals: "
        + (goalsHeld ? "every goal held." : "NOT MET (\(findings.count) finding(s))."),
    ]
    if let stopped { lines += ["", "Stopped: \(stopped)."] }
    if let setupError { lines += ["", "Set-up error: \(setupError)."] }
    lines += ["", tables, ""]
    if !findings.isEmpty {
      lines += ["## Findings", ""]
      lines += findingLines.map { "- " + $0 }
      lines.append("")
    }
    lines.append(
      "Counts: " + SoakCount.allCases.map { "\($0.rawValue): \($0.source)" }.joined(separator: "; ")
        + ". Start: before the first run; the real phase is held to the sample taken once its "
        + "network is up, and to the start after its teardown. Memory growth is from run k = "
        + "min(50, N/10), never before every scenario of the phase ran once, to the last run "
        + "(judged over at least \(SoakJudge.rssMinimumRuns) runs, limit "
        + "\(Int(SoakJudge.rssGrowthLimit))%).")
    return lines.joined(separator: "\n") + "\n"
  }

  /// Writes DIR/soak.json and DIR/soak.md; returns their paths.
  func write(to directory: String) throws -> [String] {
    try FileManager.default.createDirectory(
      atPath: directory, withIntermediateDirectories: true)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    let json = directory + "/soak.json"
    let md = directory + "/soak.md"
    try AtomicFile.write(Array(try encoder.encode(self)) + [0x0A], to: json)
    try AtomicFile.write(Array(markdown.utf8), to: md)
    return [json, md]
  }
}
