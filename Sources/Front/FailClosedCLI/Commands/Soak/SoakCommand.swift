import FailClosedSupport
import Foundation
import Scenarios

/// `failclosed soak`: many runs back to back in one long-lived harness process, counting
/// after each what a run creates (namespaces, links, tables, mounts, pid files, descriptors,
/// children, temporary and cache files) and this process's memory.
public struct SoakCommand: Command {
  public init() {}
  public let name = "soak"
  public let summary = "many runs back to back in one process: nothing may stay behind"
  public let usage = """
    Usage: failclosed soak [PATH ...] [--mock N] [--real N] [--exec N] [--short]
                           [--max-minutes M] [--report DIR] [--filter TEXT]
                           [--canary-leak \(SoakCanary.allCases.map(\.rawValue).joined(separator: "|"))]

    Runs scenarios back to back in this one process, through the code leak-audit and exec
    use: --mock runs round the mock lane's library (the model's mock-lane files of PATH,
    default Scenarios/), then --real runs round the real-Tor lane's (its files of at most
    \(Int(SoakPlan.realDurationLimit)) s, on one private Tor network started for the phase), then --exec runs of `exec`
    with a fetch through the mock Tor:
      \(SoakPlan.execCommand.joined(separator: " "))
    Defaults \(SoakPlan.defaults.mock), \(SoakPlan.defaults.real) and \(SoakPlan.defaults.exec); at most \(SoakPlan.mockLimit), \(SoakPlan.realLimit) and \(SoakPlan.execLimit). Before the first run and after each,
    it counts
    \(SoakCount.allCases.map { "  \($0.rawValue): \($0.source)" }.joined(separator: "\n"))
    and reads its resident memory (VmRSS). The harness names what it makes fc-<6 hex>; what
    another live failclosed process owns (by its pid file in /run/failclosed) is not counted,
    nor are names that are not the harness's (another program's namespaces). A count may take up to 3 s to come back (the
    kernel removes a namespace's links after it). The real phase is held to the counts taken
    once its network is up, and after the network's teardown to the start again (the cache
    keeps the network's authority keys, by design).

    Goals: every count back at its starting value after every run; memory flat: growth under
    \(Int(SoakJudge.rssGrowthLimit))% from run k to the last of a phase, k = min(50, N/10) but never before every
    scenario of the phase has run once (a first run warms the heap), judged when at least
    \(SoakJudge.rssMinimumRuns) runs go from k to the last; every scenario's verdict the same as at its first
    run. A goal broken is a finding naming the count, the run and the scenario.

    --short: \(SoakCommand.short.mock) mock, \(SoakCommand.short.real) real and \(SoakCommand.short.exec) exec runs, at most \(SoakCommand.short.minutes) minutes (CI); counts
    given win. --max-minutes (default \(SoakPlan.defaults.minutes), at most \(SoakPlan.minutesLimit)) stops between runs and says
    so; a stop is not a failure by itself. --filter keeps the scenarios whose name contains
    TEXT. --canary-leak leaks one descriptor, harness namespace or child after the first
    run, on purpose: the soak must report it (exit 5).
    Writes DIR/soak.json (every sample, the findings, the figures) and DIR/soak.md (per
    phase: runs, wall time, each count's start, end and maximum, memory at run k and at the
    last, growth, verdict changes); DIR defaults to \(SoakCommand.defaultReport).
    Exit code: 0 every goal held, 5 one did not, 2 a setup error. Needs root.
    """
  public let options: [OptionSpec] = [
    OptionSpec("mock", .single, valueName: "N", help: "mock-lane runs (default 500, at most 1000)"),
    OptionSpec(
      "real", .single, valueName: "N", help: "real-Tor lane runs (default 50, at most 100)"),
    OptionSpec("exec", .single, valueName: "N", help: "exec runs (default 50, at most 100)"),
    OptionSpec("short", .flag, help: "the CI soak: 12 mock, 2 real, 15 exec runs, 10 minutes"),
    OptionSpec(
      "max-minutes", .single, valueName: "M", help: "stop between runs after M minutes (90)"),
    OptionSpec(
      "report", .single, valueName: "DIR", help: "write soak.json and soak.md into DIR",
      values: .directory),
    OptionSpec(
      "filter", .single, valueName: "TEXT", help: "only scenarios whose name contains TEXT"),
    OptionSpec(
      "canary-leak", .single, valueName: "KIND",
      help: "leak one resource after the first run (the soak's canary)",
      values: .words(SoakCanary.allCases.map(\.rawValue))),
  ]

  /// `--short`: the soak CI runs (about two minutes): the exec phase's 15 runs are the ones
  /// long enough to judge memory on.
  static let short = (mock: 12, real: 2, exec: 15, minutes: 10)
  static let defaultReport = "reports/soak"

  public func run(_ arguments: ParsedArguments) async throws -> Int32 {
    let short = arguments.has("short")
    let mock =
      try arguments.integer("mock", in: 0...SoakPlan.mockLimit)
      ?? (short ? Self.short.mock : SoakPlan.defaults.mock)
    let real =
      try arguments.integer("real", in: 0...SoakPlan.realLimit)
      ?? (short ? Self.short.real : SoakPlan.defaults.real)
    let exec =
      try arguments.integer("exec", in: 0...SoakPlan.execLimit)
      ?? (short ? Self.short.exec : SoakPlan.defaults.exec)
    let minutes =
      try arguments.integer("max-minutes", in: 1...SoakPlan.minutesLimit)
      ?? (short ? Self.short.minutes : SoakPlan.defaults.minutes)
    var canary: SoakCanary?
    if let text = arguments.value("canary-leak") {
      guard let kind = SoakCanary(rawValue: text) else {
        throw UsageError(
          "--canary-leak: expected \(SoakCanary.allCases.map(\.rawValue).joined(separator: ", ")),"
            + " got '\(text)'")
      }
      canary = kind
    }
    guard mock + real + exec > 0 else {
      throw UsageError("nothing to run: --mock, --real and --exec are 0")
    }
    guard Privilege.isRoot else {
      throw UsageError("soak needs root (network namespaces, nftables, libpcap capture)")
    }
    let paths = arguments.positional.isEmpty ? ["Scenarios"] : arguments.positional
    var scenarios: [Scenario] = []
    for item in ScenarioLoader.load(paths) {
      switch item.result {
      case .success(let scenario): scenarios.append(scenario)
      case .failure(let error):
        FailClosedMain.printError("failclosed soak: \(error)")
        return ExitCode.usage
      }
    }
    let filter = arguments.value("filter")
    let plan = SoakPlan(
      mock: mock, real: real, exec: exec, maxMinutes: Double(minutes),
      mockLibrary: SoakPlan.mockLibrary(scenarios, filter: filter),
      realLibrary: SoakPlan.realLibrary(scenarios, filter: filter),
      execCommand: SoakPlan.execCommand, canary: canary)
    if mock > 0 && plan.mockLibrary.isEmpty {
      FailClosedMain.printError(
        "failclosed soak: no mock-lane scenario in \(paths.joined(separator: " "))"
          + (filter.map { " matching '\($0)'" } ?? "") + " (run from the repository, or give PATH)")
      return ExitCode.usage
    }
    if real > 0 && plan.realLibrary.isEmpty {
      FailClosedMain.printError(
        "failclosed soak: no real-tor scenario of at most \(Int(SoakPlan.realDurationLimit)) s in "
          + paths.joined(separator: " ") + (filter.map { " matching '\($0)'" } ?? ""))
      return ExitCode.usage
    }
    let report = arguments.value("report") ?? Self.defaultReport
    print(
      "failclosed soak: \(mock) mock-lane runs round \(plan.mockLibrary.count) scenarios, "
        + "\(real) real-Tor lane runs round \(plan.realLibrary.count), \(exec) exec runs; "
        + "at most \(minutes) minutes")
    let startedAt = ISO8601DateFormatter().string(from: Date())
    var runner = SoakRunner(
      plan: plan, executable: LeakAuditCommand.executablePath(),
      workDirectory: report + "/work", sampler: .standard())
    runner.onSample = { sample, reference in
      print(Self.progressLine(sample, reference: reference))
      // A soak runs for an hour, often into a log: each line as it happens.
      fflush(nil)
    }
    let outcome = await runner.run()
    _ = try? await BlockingIO.run("soak.clean") {
      try FileManager.default.removeItem(atPath: report + "/work")
    }
    let soak = SoakReport(
      startedAt: startedAt, plan: plan, outcome: outcome,
      findings: SoakJudge.findings(outcome.samples))
    print("")
    print(soak.tables)
    if let stopped = soak.stopped { print("soak: \(stopped)") }
    for line in soak.findingLines { print("soak: finding: " + line) }
    do {
      print("reports: " + (try soak.write(to: report)).joined(separator: " "))
    } catch {
      FailClosedMain.printError("failclosed soak: --report \(report): \(error)")
      return ExitCode.afterReportFailure(soak.exitCode)
    }
    print(
      "soak: "
        + (soak.exitCode == ExitCode.pass
          ? "every goal held: every count back at its start after every run, memory flat, "
            + "no verdict changed"
          : soak.setupError.map { "setup error: \($0)" }
            ?? "\(soak.findings.count) finding(s): the goals did not hold"))
    return soak.exitCode
  }

  /// One line per sample: `[mock 12/500] healthy-baseline PASS 2.6 s, rss 85.1 MiB`, and the
  /// counts that are off.
  static func progressLine(_ sample: SoakSample, reference: ResourceCounts?) -> String {
    let place: String
    switch sample.point {
    case .start: place = "[start]"
    case .setUp: place = "[\(sample.phase?.rawValue ?? "") set up]"
    case .tornDown: place = "[\(sample.phase?.rawValue ?? "") torn down]"
    case .run: place = "[\(sample.phase?.rawValue ?? "") \(sample.run ?? 0)]"
    }
    var line = place
    if let scenario = sample.scenario { line += " " + scenario }
    if let verdict = sample.verdict { line += " " + verdict.uppercased() }
    if let seconds = sample.runSeconds { line += String(format: " %.1f s", seconds) }
    if let why = sample.why, !why.isEmpty { line += " (" + why.joined(separator: "; ") + ")" }
    line += String(format: ", rss %.1f MiB", Double(sample.rssKiB) / 1024)
    if let reference {
      let off = sample.counts.differences(from: reference).map {
        "\($0.rawValue) \(sample.counts[$0]) (start \(reference[$0]))"
      }
      if !off.isEmpty { line += "; OFF: " + off.joined(separator: ", ") }
    }
    return line
  }
}
