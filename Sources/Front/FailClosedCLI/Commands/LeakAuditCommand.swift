import FailClosedSupport
import Foundation
import Lanes
import Reports
import Sandbox
import Scenarios

/// `failclosed leak-audit`: the main job. Every scenario in fresh namespaces with the capture
/// on, judged from the capture and the app's events, with reports a reviewer and a CI can read.
public struct LeakAuditCommand: Command {
  /// The systems `--sut` chooses among and whose options the command takes: the registry
  /// (a test passes it one more, and sees it listed, completed and checked).
  let systems: [TestedSystem]

  public init() { self.init(systems: TestedSystems.all) }
  init(systems: [TestedSystem]) { self.systems = systems }

  public let name = "leak-audit"
  public let summary = "run every scenario in the sandbox, audit the captures, write reports"
  public var usage: String {
    """
    Usage: failclosed leak-audit [PATH ...] [--report DIR] [--filter TEXT] [--shard I/N]
                                 [--lane \(LaneSelection.choices)] [--jobs N] [--keep-pcaps]
                                 [--time-scale N] [--skip-idle|--no-skip-idle]
                                 [--sut \(SystemUnderTestOption.choices(in: systems))[,...]]
                                 [--baseline FILE] [--write-baseline FILE]
                                 \(SystemUnderTestOption.usage(in: systems, indent: Self.usageIndent))
                                 [--compare A,B [--compare-reuse SIDE=FILE]]
           failclosed leak-audit --app [--app-profile FILE] [PATH ...] [--report DIR] -- CMD ARGS...

    Runs each scenario file (PATH: files or directories, default Scenarios/ and Scenarios/ooni/,
    the replayed OONI measurements) in fresh network
    namespaces: the capture opens on the device's link and is proved live by a positive-control
    packet, then the mock Tor and the modelled app run in the device on a clock that runs
    --time-scale times faster than real time (with --skip-idle it also jumps, when every process
    of the run is idle, to the next deadline any of them waits for). Each scenario is judged from its capture (deny by
    default: only the fake Tor guard is allowed) and from the app's events against the file's
    expectations. Each file first passes the checks of `failclosed check`; a malformed one is
    reported, naming the file and field, and the others still run.

    Real-tor scenarios ("lane": "real-tor") run after the mock lane, --jobs at a time (the
    longest first), in one private Tor network (Debian's tor: three authorities, exit, middle,
    obfs4 bridge) started once in a sandbox of its own and torn down on every exit (SIGINT
    included); each scenario runs in a device and censor pair of its own on the network's
    world, with its own capture and censor rules (--jobs 1: one after another). The app starts
    Debian's tor in the device and drives it through its control port, in real time; the
    capture allows only the network's relays (from its consensus) and the bridge. Each report
    carries tor's bootstrap timeline and the seconds the network took to become ready.
    --lane picks the lanes (default all); --filter and --shard apply to both.

    \(SystemUnderTestOption.help(in: systems, guides: true))

    --compare A,B runs each scenario of the mock lane that both sides run, on both, and
    compares them item by item: the verdict, each expectation, the notifications' times, the
    order of events, relay connections, requests, messages, leaks (times within 2 s count as
    the same; the model runs at --time-scale 5 unless given). A side is a system's own code
    (SYSTEM) or an app model a system plays (SYSTEM:PROFILE, as model:bitchat; the model's
    alone as PROFILE); the sides:
    \(HelpTextWrap.lines(ComparisonSide.names(in: systems).joined(separator: ", ") + ".").joined(separator: "\n"))
    Each side's reports go to DIR/A and DIR/B, the comparison to DIR (report.json, summary.md,
    index.html). bitchat against bitchat-source knows the Linux-only differences
    docs/linux-differences.md explains; any other difference fails the run (exit 5).
    --compare-reuse SIDE=FILE takes that side from an earlier comparison's report.json instead
    of running it again (bitchat-source runs in real time). --compare onion-browser-2 or
    onion-browser-3 against onion-browser-source (with --onion-browser-src SRC of that version)
    does the same for Onion Browser's mock-lane scenarios, with the control-port commands as
    one more item; docs/onion-browser-source.md explains each difference. A system's option
    given with --compare belongs to a side's system, as it belongs to --sut's without.

    Verdicts: PASS, LEAK (a leak, or a canary that was not caught), FAILED (an expectation not
    met), INCONCLUSIVE (drops, no positive control, a run error; never shown as a pass).
    Reports (in reports/, or --report DIR): report.json, junit.xml, sarif.json, summary.md,
    index.html, and pcaps/ with the capture of every scenario that did not pass (of all with
    --keep-pcaps), which the reports name relative to DIR.
    --sut A,B runs several systems in one go: the model's mock lane alone first (CPU-bound),
    then the other lanes side by side; the first system's reports go to DIR, each other's to
    DIR/NAME. bitchat-source waits in real time, so all its scenarios of a lane run at once.

    --baseline FILE (a SARIF log written by --write-baseline FILE) holds known findings: each
    finding is new, unchanged or absent (SARIF's baselineState, in sarif.json; the terminal and
    summary.md list them; junit.xml marks a scenario whose every finding is known <skipped>).
    Only new findings, or a known one no longer seen in a scenario that ran, fail the run.
    A timed action the harness performed late (more than 0.5 virtual s) makes that run
    inconclusive; the batch runs it again, at most 3 times in all.
    Exit code: 0 all pass, 5 a leak or failed expectation, 2 inconclusive or setup error.
    Needs root (namespaces, nftables, capture).
    """
  }

  /// "Usage: failclosed leak-audit ", the column the usage lines continue at.
  static let usageIndent = String(repeating: " ", count: 29)

  public var options: [OptionSpec] {
    [
      OptionSpec(
        "report", .single, valueName: "DIR", help: "write the reports into DIR (default reports)",
        values: .directory),
      OptionSpec(
        "filter", .single, valueName: "TEXT", help: "only scenarios whose name contains TEXT"),
      OptionSpec("shard", .single, valueName: "I/N", help: "only the I-th of N shards (1-based)"),
      OptionSpec(
        "lane", .single, valueName: LaneSelection.choices, help: "which lanes run (default all)",
        values: .words(LaneSelection.allCases.map(\.rawValue))),
      OptionSpec(
        "jobs", .single, valueName: "N",
        help: "scenarios run side by side, both lanes \(ScenarioJobs.leakAuditHelpText)"),
      OptionSpec("keep-pcaps", .flag, help: "keep every capture in DIR/pcaps, not only failures"),
      OptionSpec("time-scale", .single, valueName: "N", help: "virtual seconds per second (25)"),
    ] + RunClockOption.skipIdleSpecs + SystemUnderTestOption.specs(in: systems) + [
      OptionSpec(
        "baseline", .single, valueName: "FILE",
        help: "known findings (a SARIF log from --write-baseline): only new ones fail the run",
        values: .file),
      OptionSpec(
        "write-baseline", .single, valueName: "FILE",
        help: "write this run's findings as a baseline (SARIF) to FILE", values: .file),
      OptionSpec(
        "compare", .single, valueName: "A,B",
        help: "run scenarios on two sides (an app's model or its code), compare"),
      OptionSpec(
        "compare-reuse", .single, valueName: "SIDE=FILE",
        help: "take a side from an earlier comparison's report.json"),
    ]
  }

  public func run(_ arguments: ParsedArguments) async throws -> Int32 {
    // Which systems run, and whether each system option given belongs to one of them, before
    // anything else: --compare's sides are its systems, --sut's (or the implied) the others.
    let sides = try arguments.value("compare").map {
      try LeakAuditCompare.parseSides($0, in: systems)
    }
    let chosen: [TestedSystem]
    if let sides {
      try SystemUnderTestOption.check(
        arguments, chosen: [sides.a.system, sides.b.system],
        chosenBy: "--compare \(arguments.value("compare") ?? "")", in: systems)
      chosen = []
    } else {
      chosen = try SystemUnderTestOption.systems(arguments, in: systems)
    }
    let program = try ProgramOption.spec(arguments)
    let paths =
      !arguments.positional.isEmpty
      ? arguments.positional
      : program != nil
        ? [Self.programScenarios]
        : ["Scenarios"] + (Self.isDirectory("Scenarios/ooni") ? ["Scenarios/ooni"] : [])
    var shard: ScenarioSelection.Shard?
    if let text = arguments.value("shard") {
      do { shard = try ScenarioSelection.Shard(parsing: text) } catch {
        throw UsageError("--shard: \(error)")
      }
    }
    let lanes: LaneSelection
    do { lanes = try LaneSelection(option: arguments.value("lane") ?? "all") } catch {
      throw UsageError(error.description)
    }
    let requestedJobs = try arguments.integer("jobs", in: 1...ScenarioJobs.maximum)
    let jobs = requestedJobs ?? ScenarioJobs.defaultCount
    let scale = try arguments.integer("time-scale", in: 1...1000) ?? 25
    guard Privilege.isRoot else {
      throw UsageError("leak-audit needs root (network namespaces, nftables, libpcap capture)")
    }
    let loaded = ScenarioLoader.load(paths)
    var scenarios: [Scenarios.Scenario] = []
    var loadErrors: [ScenarioError] = []
    for item in loaded {
      switch item.result {
      case .success(let scenario): scenarios.append(scenario)
      case .failure(let error):
        loadErrors.append(error)
        FailClosedMain.printError("failclosed leak-audit: \(error)")
      }
    }
    if let sides {
      // The model at x5 unless told otherwise: its real-time hops are multiplied by the scale,
      // and the comparison's time tolerance is 2 s (docs/linux-differences.md, "Time").
      let compareScale = arguments.value("time-scale") == nil ? 5 : scale
      return try await LeakAuditCompare.run(
        arguments, sides: sides, scenarios: scenarios, shard: shard, jobs: jobs,
        scale: compareScale, systems: systems)
    }
    let baseline = try Self.readBaseline(arguments.value("baseline"))
    var findings: [Finding] = []
    let report = arguments.value("report") ?? Self.defaultReportDirectory
    var planned: [PlannedSystem] = []
    var exitCode = ExitCode.pass
    for (index, system) in chosen.enumerated() {
      let setup = TestedSystems.plan(
        scenarios, on: system,
        inputs: SystemUnderTestOption.inputs(arguments, program: program, in: systems))
      if let unavailable = setup.unavailable {
        if unavailable.endsRun {
          FailClosedMain.printError(
            "failclosed leak-audit: \(system.name): \(unavailable.reason)")
          return ExitCode.usage
        }
        FailClosedMain.printError(
          "failclosed leak-audit: skipping the \(setup.unavailableLane ?? system.name) lane: "
            + unavailable.reason)
        // Nothing else was asked for: the skip is the whole outcome, never a failure.
        if setup.scenarios.isEmpty { continue }
      }
      let selected = ScenarioSelection.select(
        setup.scenarios, filter: arguments.value("filter"), shard: shard
      ).filter { lanes.includes($0.lane) }
      // The first system's reports in DIR, each other's in DIR/NAME.
      let directory = index == 0 ? report : report + "/" + system.name
      var runnerOptions = setup.mockRunnerOptions(
        executable: Self.executablePath(), timeScale: Double(scale),
        workDirectory: directory + "/work")
      runnerOptions.skipIdle = try RunClockOption.skipIdle(arguments)
      planned.append(
        PlannedSystem(
          system: system, setup: setup, selected: selected, directory: directory,
          runner: ScenarioRunner(options: runnerOptions), requestedJobs: requestedJobs))
    }
    let keepAll = arguments.has("keep-pcaps")
    let startedAt = ISO8601DateFormatter().string(from: Date())
    for plan in planned {
      print(plan.announcement(scale: scale, prefix: planned.count > 1))
      if let path = plan.setup.bitchatSourceDriver {
        print("\(plan.system.name): bitchat's own code (\(path)), in real time")
      }
      if let path = plan.setup.onionBrowserSourceDriver {
        print("\(plan.system.name): Onion Browser's own code (\(path)), in real time")
      }
    }
    let outcomes = await Self.runPlanned(planned)
    var verdicts: [String] = []
    for (plan, outcome) in zip(planned, outcomes) {
      var versions = Self.versions()
      if !plan.realLane.isEmpty { versions["tor"] = Self.torVersion() }
      var runReport = RunReport(
        startedAt: startedAt, versions: versions, timeScale: Double(scale),
        results: outcome.results, loadErrors: loadErrors,
        networkReadySeconds: outcome.networkReadySeconds)
      let found = Finding.of(runReport, system: plan.system.name)
      findings += found
      if let baseline {
        runReport.baseline = baseline.compare(
          found, system: plan.system.name, scenariosRun: Set(outcome.results.map(\.scenario.name))
        ).runBaseline(for: runReport, system: plan.system.name)
      }
      verdicts.append(
        "\(plan.system.name) \(TerminalFormat.label(runReport.verdict))"
          + (runReport.baseline?.knownScenarios.isEmpty == false
            ? " (against the baseline)" : ""))
      print("")
      if planned.count > 1 { print("\(plan.system.name):") }
      print(TerminalFormat.summaryTable(runReport))
      for note in outcome.results.compactMap(BitchatSourceFindings.note) { print(note) }
      if let lines = runReport.baseline?.lines {
        for line in lines { print(line) }
        let known = runReport.baseline?.knownScenarios.count ?? 0
        if known > 0, runReport.exitCode == ExitCode.pass {
          print(
            "\(plan.system.name): PASS against the baseline: every failure is a known finding "
              + "(\(known) scenario\(known == 1 ? "" : "s"))")
        }
      }
      // The table is out already; a report that cannot be written (a full disk) is named
      // after it and never turns a leak into a setup error.
      do {
        let written = try ReportWriter.write(
          runReport, to: plan.directory, keepAllPcaps: keepAll)
        print("reports: \(written.filter { !$0.contains("/pcaps/") }.joined(separator: " "))")
        exitCode = max(exitCode, runReport.exitCode)
      } catch {
        FailClosedMain.printError("failclosed leak-audit: --report \(plan.directory): \(error)")
        exitCode = max(exitCode, ExitCode.afterReportFailure(runReport.exitCode))
      }
      try? FileManager.default.removeItem(atPath: plan.directory + "/work")
    }
    if let path = arguments.value("write-baseline") {
      do {
        try AtomicFile.write(
          Array(
            FindingBaseline(findings: findings).sarif(toolVersion: VersionCommand.version).utf8),
          to: path)
        print("baseline: \(findings.count) finding(s) written to \(path)")
      } catch {
        FailClosedMain.printError("failclosed leak-audit: --write-baseline \(path): \(error)")
        exitCode = max(exitCode, ExitCode.usage)
      }
    }
    // Where the time went: each lane's span from the start of the runs, for the benchmarks.
    let spans = zip(planned, outcomes).flatMap { plan, outcome in
      outcome.lanes.map { "\(plan.system.name) \($0.lane) \($0.text)" }
    }
    if !spans.isEmpty { print("lanes: " + spans.joined(separator: ", ")) }
    if planned.count > 1 { print("leak-audit: " + verdicts.joined(separator: ", ")) }
    return exitCode
  }

  /// Real seconds at most that the other real-Tor lanes wait for the real-time systems' runs
  /// to set up (they take about 40 s: a private network, then 31 runs one per core at a time).
  static let setUpWaitCap = 90.0

  /// `--baseline FILE`, read before anything runs; an unreadable or malformed file is a usage
  /// error naming it.
  static func readBaseline(_ path: String?) throws -> FindingBaseline? {
    guard let path else { return nil }
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
      throw UsageError("--baseline \(path): cannot be read")
    }
    do { return try FindingBaseline(sarif: text, file: path) } catch {
      throw UsageError("--baseline \(error)")
    }
  }

  /// The lanes of every system, scheduled: the mock lanes of systems on the compressed clock
  /// first, one after another (CPU-bound, they run alone); then every lane of the systems that
  /// wait in real time, side by side; the other real-Tor lanes once those systems' runs have
  /// all set up (their start-up is their CPU burst: with the model's real lane starting beside
  /// it, bitchat's 75 s stall poll drifted to 76.1 s and its first actions came 0.3 s late).
  /// Results per system in file order.
  static func runPlanned(_ planned: [PlannedSystem]) async -> [PlannedSystem.Outcome] {
    let total = planned.reduce(0) { $0 + $1.selected.count }
    let progress = ProgressCounter()
    let wall = SystemClock()
    var mockResults: [[ScenarioResult]] = Array(repeating: [], count: planned.count)
    var lanes: [[PlannedSystem.LaneTime]] = Array(repeating: [], count: planned.count)
    for (index, plan) in planned.enumerated() where !plan.system.waitsInRealTime {
      let start = wall.now
      mockResults[index] = await runAll(
        plan.mockLane, runner: plan.runner, jobs: plan.mockJobs, total: total, progress: progress)
      if !plan.mockLane.isEmpty {
        lanes[index].append(.init(lane: "mock", from: start, to: wall.now))
      }
    }
    let setUpBefore = StartGate.shared.setUpCount
    // Every run of the systems that wait in real time (both their lanes).
    let realTimeRuns = planned.filter(\.system.waitsInRealTime).reduce(0) {
      $0 + $1.selected.count
    }
    typealias Finished = (
      index: Int, results: [ScenarioResult], ready: Double?, lane: PlannedSystem.LaneTime?
    )
    return await withTaskGroup(of: Finished.self) { group in
      for (index, plan) in planned.enumerated() where plan.system.waitsInRealTime {
        group.addTask {
          let start = wall.now
          let results = await runAll(
            plan.mockLane, runner: plan.runner, jobs: plan.mockJobs, total: total,
            progress: progress)
          let lane =
            plan.mockLane.isEmpty
            ? nil : PlannedSystem.LaneTime(lane: "mock", from: start, to: wall.now)
          return (index, results, nil, lane)
        }
      }
      for (index, plan) in planned.enumerated() {
        guard !plan.realLane.isEmpty else { continue }
        let waitForSetUps = plan.system.waitsInRealTime ? 0 : setUpBefore + realTimeRuns
        group.addTask {
          if waitForSetUps > 0 {
            _ = try? await BlockingIO.run("leak-audit.wait") {
              StartGate.shared.waitForSetUps(waitForSetUps, timeout: Self.setUpWaitCap)
            }
          }
          let start = wall.now
          let real = await runRealLane(
            plan.realLane, setup: plan.setup, executable: executablePath(),
            directory: plan.directory + "/work/real", jobs: plan.realJobs, total: total,
            progress: progress)
          return (
            index, real.results, real.networkReadySeconds,
            PlannedSystem.LaneTime(lane: "real-Tor", from: start, to: wall.now)
          )
        }
      }
      var results = mockResults
      var ready: [Double?] = Array(repeating: nil, count: planned.count)
      for await finished in group {
        results[finished.index] += finished.results
        if let seconds = finished.ready { ready[finished.index] = seconds }
        if let lane = finished.lane { lanes[finished.index].append(lane) }
      }
      return planned.indices.map { index in
        // Reports list scenarios in file order, whichever lane ran them.
        let order = Dictionary(
          planned[index].selected.enumerated().map { ($0.element.path, $0.offset) },
          uniquingKeysWith: { a, _ in a })
        let sorted = results[index].sorted {
          (order[$0.scenario.path] ?? 0) < (order[$1.scenario.path] ?? 0)
        }
        return PlannedSystem.Outcome(
          results: sorted, networkReadySeconds: ready[index],
          lanes: lanes[index].sorted { $0.from < $1.from })
      }
    }
  }

  /// The mock lane's batch (Lanes' ``MockLaneBatch``) with a progress line as each finishes;
  /// results come back in file order.
  static func runAll(
    _ scenarios: [Scenarios.Scenario], runner: ScenarioRunner, jobs: Int, total: Int? = nil,
    progress: ProgressCounter = ProgressCounter()
  ) async -> [ScenarioResult] {
    let total = total ?? scenarios.count
    return await MockLaneBatch.run(scenarios, runner: runner, jobs: jobs) { result in
      print(
        TerminalFormat.progressLine(
          index: progress.increment(), total: total, name: result.scenario.name,
          verdict: result.verdict, wallSeconds: result.outcome.wallSeconds,
          earlierRuns: result.outcome.earlierRuns.count))
    }
  }

  /// The real-Tor lane's batch (Lanes' ``RealLaneBatch``) with its status and a progress line
  /// as each scenario finishes.
  static func runRealLane(
    _ scenarios: [Scenarios.Scenario], setup: TestedSystemSetup, executable: String,
    directory: String, jobs: Int, total: Int, progress: ProgressCounter
  ) async -> (results: [ScenarioResult], networkReadySeconds: Double?) {
    await setup.runRealLane(
      scenarios, executable: executable, directory: directory, jobs: jobs
    ) { event in
      switch event {
      case .starting: print("real-Tor lane: starting the private Tor network ...")
      case .networkReady(let seconds, let slots):
        print(
          "real-Tor lane: network ready in \(TerminalFormat.durationText(seconds)), "
            + "\(slots) at a time")
      case .result(let result):
        print(
          TerminalFormat.progressLine(
            index: progress.increment(), total: total, name: result.scenario.name,
            verdict: result.verdict, wallSeconds: result.outcome.wallSeconds,
            earlierRuns: result.outcome.earlierRuns.count))
      case .failed(let reason):
        FailClosedMain.printError("failclosed leak-audit: real-Tor lane: \(reason)")
      }
    }
  }

  static func isDirectory(_ path: String) -> Bool {
    var directory: ObjCBool = false
    return FileManager.default.fileExists(atPath: path, isDirectory: &directory)
      && directory.boolValue
  }

  /// "0.4.9.11" from `tor --version`, or "unknown".
  static func torVersion() -> String {
    guard let output = try? CommandRunner.capture(["tor", "--version"]) else { return "unknown" }
    let words = output.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" })
    guard let index = words.firstIndex(of: "version"), index + 1 < words.count else {
      return "unknown"
    }
    return String(words[index + 1]).trimmingCharacters(in: CharacterSet(charactersIn: "."))
  }

  /// Where the reports go without --report (README: `reports/`).
  static let defaultReportDirectory = "reports"
  /// The library's black-box scenarios, which `--app` runs unless PATHs are given.
  static let programScenarios = "Scenarios/program"

  /// The running binary, which the device runs as `mock-tor` and `app`.
  static func executablePath() -> String {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
      ?? CommandLine.arguments[0]
  }

  static func versions() -> [String: String] {
    var versions = ["failclosed": VersionCommand.version]
    var name = utsname()
    uname(&name)
    versions["kernel"] = withUnsafeBytes(of: &name.release) {
      String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
    }
    #if swift(>=6.3)
      versions["swift"] = "6.3"
    #endif
    return versions
  }
}

/// Counts finished scenarios across tasks.
final class ProgressCounter: @unchecked Sendable {
  private let lock = NSLock()
  private var value = 0
  func increment() -> Int {
    lock.withLock {
      value += 1
      return value
    }
  }
}
