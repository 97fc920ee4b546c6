import BitchatSource
import FailClosedSupport
import Foundation
import Lanes
import Reports
import Scenarios

/// `leak-audit --compare A,B`: each bitchat scenario of the mock lane on two systems under
/// test (the model's `bitchat` or `hardened` profile, bitchat's own code `bitchat-source`),
/// compared item by item (``ScenarioComparison``). Each side's own reports go to DIR/A and
/// DIR/B, the comparison to DIR (report.json, summary.md, index.html). Differences that
/// docs/linux-differences.md explains count as explained; any other fails the run (exit 5).
enum LeakAuditCompare {
  static let sides = [
    "bitchat", "hardened", "bitchat-source", "onion-browser-2", "onion-browser-3",
    "onion-browser-source",
  ]
  /// The sides whose code reads the wall clock (run in real time, first).
  static let realTimeSides: Set = ["bitchat-source", "onion-browser-source"]

  /// The two sides of "A,B", or a usage error naming the option.
  static func parseSides(_ text: String) throws -> (String, String) {
    let parts = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
    guard parts.count == 2, parts[0] != parts[1], parts.allSatisfy(sides.contains) else {
      throw UsageError(
        "--compare: expected two different sides of \(sides.joined(separator: ", ")) "
          + "as A,B, got '\(text)'")
    }
    return (parts[0], parts[1])
  }

  /// The scenarios both sides run: the mock lane's bitchat-family files, and with
  /// bitchat-source on a side only those its driver runs (the arti personality).
  static func comparable(_ scenarios: [Scenarios.Scenario], a: String, b: String) -> [Scenarios
    .Scenario]
  {
    if [a, b].contains("onion-browser-source") {
      // The model's Onion Browser version on the other side; its scenarios that Onion
      // Browser's code runs on the mock lane (the ctor personality).
      let model = a == "onion-browser-source" ? b : a
      return scenarios.filter { scenario in
        scenario.lane == .mock && OnionBrowserSourceSystem.runs(scenario)
          && OnionBrowserSourceSystem.version(of: scenario)?.profileName == model
      }
    }
    let profiles = Set([a, b, "bitchat"]).subtracting(["bitchat-source"])
    let source = a == "bitchat-source" || b == "bitchat-source"
    return scenarios.filter { scenario in
      guard scenario.lane == .mock, profiles.contains(scenario.app.profile.rawValue)
      else { return false }
      return !source || BitchatSourceSystem.runs(scenario)
    }
  }

  /// `scenario` as `side` runs it.
  static func onSide(_ scenario: Scenarios.Scenario, _ side: String) -> Scenarios.Scenario {
    var scenario = scenario
    scenario.app.profile = AppPlan.Profile(rawValue: side) ?? scenario.app.profile
    return scenario
  }

  static func run(
    _ arguments: ParsedArguments, scenarios loaded: [Scenarios.Scenario],
    shard: ScenarioSelection.Shard?,
    jobs: Int, scale: Int
  ) async throws -> Int32 {
    let (a, b) = try parseSides(arguments.value("compare") ?? "")
    var reused: [String: [String: ComparisonObservation]] = [:]
    if let value = arguments.value("compare-reuse") {
      let parts = value.split(separator: "=", maxSplits: 1).map(String.init)
      guard parts.count == 2, [a, b].contains(parts[0]) else {
        throw UsageError(
          "--compare-reuse: expected SIDE=FILE with SIDE \(a) or \(b), got '\(value)'")
      }
      guard let data = FileManager.default.contents(atPath: parts[1]) else {
        throw UsageError("--compare-reuse: cannot read \(parts[1])")
      }
      do {
        reused[parts[0]] = try ComparisonReport.observations(fromJSON: Array(data), side: parts[0])
      } catch {
        throw UsageError("--compare-reuse \(parts[1]): \(error)")
      }
    }
    let selected = ScenarioSelection.select(
      comparable(loaded, a: a, b: b), filter: arguments.value("filter"), shard: shard)
    guard !selected.isEmpty else {
      FailClosedMain.printError(
        "failclosed leak-audit --compare: no scenario of both sides selected")
      return ExitCode.usage
    }
    var driver: String?
    var onionBrowserDriver: String?
    if [a, b].contains(where: { $0 == "onion-browser-source" && reused[$0] == nil }) {
      guard let source = arguments.value("onion-browser-src") else {
        FailClosedMain.printError(
          "failclosed leak-audit --compare: onion-browser-source needs --onion-browser-src SRC")
        return ExitCode.usage
      }
      do {
        let built = try OnionBrowserSourceLocation.prepare(
          onionBrowserSource: source, progress: { FailClosedMain.printError($0) })
        let model = a == "onion-browser-source" ? b : a
        guard built.version.profileName == model else {
          FailClosedMain.printError(
            "failclosed leak-audit --compare: \(source) is Onion Browser "
              + "\(built.version.rawValue).X; compare it with \(built.version.profileName)")
          return ExitCode.usage
        }
        onionBrowserDriver = built.executable
      } catch {
        FailClosedMain.printError("failclosed leak-audit --compare: onion-browser-source: \(error)")
        return ExitCode.usage
      }
    }
    let needsSource = [a, b].contains { $0 == "bitchat-source" && reused[$0] == nil }
    if needsSource {
      switch BitchatSourceSystem.driver(SystemUnderTestOption.inputs(arguments)) {
      case .failure(let error):
        FailClosedMain.printError("failclosed leak-audit --compare: bitchat-source: \(error)")
        return ExitCode.usage
      case .success(let path): driver = path
      }
    }
    let report = arguments.value("report") ?? LeakAuditCommand.defaultReportDirectory
    let work = report + "/work"
    let executable = LeakAuditCommand.executablePath()
    func runner(for side: String) -> ScenarioRunner {
      var options = ScenarioRunner.Options(
        executable: executable, timeScale: Double(scale), workDirectory: work + "/" + side,
        bitchatSourceDriver: side == "bitchat-source" ? driver : nil)
      options.onionBrowserSourceDriver = side == "onion-browser-source" ? onionBrowserDriver : nil
      return ScenarioRunner(options: options)
    }
    // The slow real-time side first, so the model's quick runs fill the gaps.
    var tasks: [(scenario: Int, side: String)] = []
    for side in [a, b].sorted(by: {
      (realTimeSides.contains($0) ? 0 : 1) < (realTimeSides.contains($1) ? 0 : 1)
    }) {
      for index in selected.indices where reused[side]?[selected[index].name] == nil {
        tasks.append((index, side))
      }
    }
    print(
      "failclosed leak-audit --compare \(a),\(b): \(selected.count) scenarios, "
        + "\(tasks.count) runs, \(jobs) at a time (the model x\(scale), the source in real time)"
    )
    let startedAt = ISO8601DateFormatter().string(from: Date())
    let runners = Dictionary(uniqueKeysWithValues: [a, b].map { ($0, runner(for: $0)) })
    let results = await runPool(tasks, selected: selected, runners: runners, jobs: jobs)
    var rows: [ComparisonReport.Row] = []
    for (index, scenario) in selected.enumerated() {
      func observation(_ side: String) -> ComparisonObservation {
        reused[side]?[scenario.name]
          ?? results[Key(scenario: index, side: side)].map(ComparisonObservation.init)
          ?? ComparisonObservation(verdict: "inconclusive", runError: "not run")
      }
      let oa = observation(a)
      let ob = observation(b)
      let known: KnownDifferences =
        Set([a, b]) == ["bitchat", "bitchat-source"]
        ? .linux : [a, b].contains("onion-browser-source") ? .onionBrowser : .none
      rows.append(
        .init(
          comparison: ScenarioComparison(scenario: scenario.name, a: oa, b: ob, explained: known),
          a: oa, b: ob))
    }
    let comparison = ComparisonReport(
      sideA: a, sideB: b, tolerance: ScenarioComparison.defaultTolerance, startedAt: startedAt,
      rows: rows)
    print("")
    print(comparison.terminalText())
    do {
      try FileManager.default.createDirectory(atPath: report, withIntermediateDirectories: true)
      for side in [a, b] {
        let sideResults = selected.indices.compactMap { results[Key(scenario: $0, side: side)] }
        guard !sideResults.isEmpty else { continue }
        try ReportWriter.write(
          RunReport(
            startedAt: startedAt, versions: LeakAuditCommand.versions(),
            timeScale: realTimeSides.contains(side) ? 1 : Double(scale), results: sideResults),
          to: report + "/" + side)
      }
      try AtomicFile.write(comparison.jsonText(), to: report + "/report.json")
      try AtomicFile.write(comparison.markdown(), to: report + "/summary.md")
      try AtomicFile.write(comparison.html(), to: report + "/index.html")
      print("reports: \(report)/report.json \(report)/summary.md \(report)/index.html")
    } catch {
      FailClosedMain.printError("failclosed leak-audit --compare: --report \(report): \(error)")
      try? FileManager.default.removeItem(atPath: work)
      return ExitCode.afterReportFailure(comparison.exitCode)
    }
    try? FileManager.default.removeItem(atPath: work)
    return comparison.exitCode
  }

  struct Key: Hashable {
    var scenario: Int
    var side: String
  }

  /// Runs the (scenario, side) pairs `jobs` at a time, printing a line as each finishes.
  static func runPool(
    _ tasks: [(scenario: Int, side: String)], selected: [Scenarios.Scenario],
    runners: [String: ScenarioRunner], jobs: Int
  ) async -> [Key: ScenarioResult] {
    let progress = ProgressCounter()
    return await withTaskGroup(of: (Key, ScenarioResult).self) { group in
      var next = 0
      var results: [Key: ScenarioResult] = [:]
      func launch() {
        guard next < tasks.count else { return }
        let (index, side) = tasks[next]
        next += 1
        let scenario = onSide(selected[index], side)
        let runner = runners[side]!
        let total = tasks.count
        group.addTask {
          // A run the harness made late is run again, as the batches do: under load the
          // model's x5 clock made both sides' comparisons differ on the harness, not the app.
          let outcome = await LateRunRetry.outcome(scenario) { await runner.run(scenario) }
          let result = ScenarioResult(scenario: scenario, outcome: outcome)
          print(
            TerminalFormat.progressLine(
              index: progress.increment(), total: total, name: "\(side): \(scenario.name)",
              verdict: result.verdict, wallSeconds: outcome.wallSeconds))
          return (Key(scenario: index, side: side), result)
        }
      }
      for _ in 0..<min(jobs, tasks.count) { launch() }
      for await (key, result) in group {
        results[key] = result
        launch()
      }
      return results
    }
  }
}
