import FailClosedSupport
import Foundation
import Lanes
import Reports
import Scenarios

/// `leak-audit --compare A,B`: each scenario of the mock lane that both sides run, on both,
/// compared item by item (``ScenarioComparison``). A side is looked up in the registry
/// (``ComparisonSide``: SYSTEM, SYSTEM:PROFILE, or a profile the model plays), and what it runs,
/// whether it waits in real time and which differences the docs explain come from what its
/// system declares. Each side's own reports go to DIR/A and DIR/B, the comparison to DIR
/// (report.json, summary.md, index.html); a difference the docs do not explain fails the run
/// (exit 5).
enum LeakAuditCompare {
  /// The two sides of "A,B", or a usage error naming the option and every registered side.
  static func parseSides(_ text: String, in systems: [TestedSystem] = TestedSystems.all)
    throws -> (a: ComparisonSide, b: ComparisonSide)
  {
    let parts = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
    func expected(_ why: String) -> UsageError {
      UsageError(
        "--compare: expected two different sides of "
          + ComparisonSide.names(in: systems).joined(separator: ", ")
          + " (or SYSTEM:PROFILE, as model:bitchat) as A,B, got '\(text)'" + why)
    }
    guard parts.count == 2 else { throw expected("") }
    var sides: [ComparisonSide] = []
    for part in parts {
      do { sides.append(try ComparisonSide.named(part, in: systems)) } catch {
        throw expected(": \(error)")
      }
    }
    guard !sides[0].isSame(as: sides[1]) else { throw expected(": the same side twice") }
    return (sides[0], sides[1])
  }

  /// The scenarios both sides run (``ComparisonSide/run(_:)``), as loaded.
  static func comparable(_ scenarios: [Scenarios.Scenario], a: ComparisonSide, b: ComparisonSide)
    -> [Scenarios.Scenario]
  {
    scenarios.filter { a.run($0) != nil && b.run($0) != nil }
  }

  static func run(
    _ arguments: ParsedArguments, sides: (a: ComparisonSide, b: ComparisonSide),
    scenarios loaded: [Scenarios.Scenario], shard: ScenarioSelection.Shard?, jobs: Int,
    scale: Int, systems: [TestedSystem] = TestedSystems.all
  ) async throws -> Int32 {
    let (a, b) = sides
    var reused: [String: [String: ComparisonObservation]] = [:]
    if let value = arguments.value("compare-reuse") {
      let parts = value.split(separator: "=", maxSplits: 1).map(String.init)
      let side = parts.count == 2 ? try? ComparisonSide.named(parts[0], in: systems) : nil
      guard let side, let which = [a, b].first(where: { $0.isSame(as: side) }) else {
        throw UsageError(
          "--compare-reuse: expected SIDE=FILE with SIDE \(a.name) or \(b.name), got '\(value)'")
      }
      guard let data = FileManager.default.contents(atPath: parts[1]) else {
        throw UsageError("--compare-reuse: cannot read \(parts[1])")
      }
      do {
        reused[which.name] = try ComparisonReport.observations(
          fromJSON: Array(data), side: which.name)
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
    // Each side made ready as its system makes itself ready (a driver built, a checkout's
    // version read); a side taken from an earlier report needs nothing.
    let inputs = SystemUnderTestOption.inputs(arguments, in: systems)
    var setups: [String: TestedSystemSetup] = [:]
    for side in [a, b] where reused[side.name] == nil {
      let scenarios = selected.compactMap(side.run)
      let setup = side.system.prepare(scenarios, inputs)
      if let unavailable = setup.unavailable {
        FailClosedMain.printError(
          "failclosed leak-audit --compare: \(side.name): \(unavailable.reason)")
        return ExitCode.usage
      }
      guard setup.scenarios.count == scenarios.count else {
        FailClosedMain.printError(
          "failclosed leak-audit --compare: \(side.name) runs \(setup.scenarios.count) of the "
            + "\(scenarios.count) scenarios of \(a.name),\(b.name) as made ready (see above): "
            + "compare it with a side it runs all of")
        return ExitCode.usage
      }
      setups[side.name] = setup
    }
    let report = arguments.value("report") ?? LeakAuditCommand.defaultReportDirectory
    let work = report + "/work"
    let executable = LeakAuditCommand.executablePath()
    func runner(for side: ComparisonSide) -> ScenarioRunner {
      let setup = setups[side.name] ?? TestedSystemSetup(scenarios: [])
      return ScenarioRunner(
        options: setup.mockRunnerOptions(
          executable: executable, timeScale: Double(scale), workDirectory: work + "/" + side.name))
    }
    // The side that waits in real time first, so the model's quick runs fill the gaps.
    var tasks: [(scenario: Int, side: ComparisonSide)] = []
    for side in [a, b].sorted(by: { $0.system.waitsInRealTime && !$1.system.waitsInRealTime }) {
      for index in selected.indices where reused[side.name]?[selected[index].name] == nil {
        tasks.append((index, side))
      }
    }
    print(
      "failclosed leak-audit --compare \(a.name),\(b.name): \(selected.count) scenarios, "
        + "\(tasks.count) runs, \(jobs) at a time (the model x\(scale), the source in real time)"
    )
    let startedAt = ISO8601DateFormatter().string(from: Date())
    let runners = Dictionary(uniqueKeysWithValues: [a, b].map { ($0.name, runner(for: $0)) })
    let results = await runPool(tasks, selected: selected, runners: runners, jobs: jobs)
    var rows: [ComparisonReport.Row] = []
    for (index, scenario) in selected.enumerated() {
      func observation(_ side: ComparisonSide) -> ComparisonObservation {
        reused[side.name]?[scenario.name]
          ?? results[Key(scenario: index, side: side.name)].map(ComparisonObservation.init)
          ?? ComparisonObservation(verdict: "inconclusive", runError: "not run")
      }
      let oa = observation(a)
      let ob = observation(b)
      let known = a.knownDifferences(with: b)
      rows.append(
        .init(
          comparison: ScenarioComparison(scenario: scenario.name, a: oa, b: ob, explained: known),
          a: oa, b: ob))
    }
    let comparison = ComparisonReport(
      sideA: a.name, sideB: b.name, tolerance: ScenarioComparison.defaultTolerance,
      startedAt: startedAt,
      rows: rows)
    print("")
    print(comparison.terminalText())
    do {
      try FileManager.default.createDirectory(atPath: report, withIntermediateDirectories: true)
      for side in [a, b] {
        let sideResults = selected.indices.compactMap {
          results[Key(scenario: $0, side: side.name)]
        }
        guard !sideResults.isEmpty else { continue }
        try ReportWriter.write(
          RunReport(
            startedAt: startedAt, versions: LeakAuditCommand.versions(),
            timeScale: side.system.waitsInRealTime ? 1 : Double(scale), results: sideResults),
          to: report + "/" + side.name)
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
    _ tasks: [(scenario: Int, side: ComparisonSide)], selected: [Scenarios.Scenario],
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
        // comparable() kept only the scenarios both sides run.
        let scenario = side.run(selected[index]) ?? selected[index]
        let runner = runners[side.name]!
        let total = tasks.count
        group.addTask {
          // A run the harness made late is run again, as the batches do: under load the
          // model's x5 clock made both sides' comparisons differ on the harness, not the app.
          let outcome = await LateRunRetry.outcome(scenario) { await runner.run(scenario) }
          let result = ScenarioResult(scenario: scenario, outcome: outcome)
          print(
            TerminalFormat.progressLine(
              index: progress.increment(), total: total, name: "\(side.name): \(scenario.name)",
              verdict: result.verdict, wallSeconds: outcome.wallSeconds))
          return (Key(scenario: index, side: side.name), result)
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
