import FailClosedSupport
import Foundation
import Lanes
import OONI
import Reports
import Scenarios

/// `failclosed replay FILE`: one scenario, verbosely: the app's events as they happen, each
/// expectation in the reports' own sentences with its reason, every leak with its evidence,
/// and exposure by the user's choice called exposure.
public struct ReplayCommand: Command {
  /// The systems `--sut` chooses among and whose options the command takes: the registry
  /// (a test passes it one more).
  let systems: [TestedSystem]

  public init() { self.init(systems: TestedSystems.all) }
  init(systems: [TestedSystem]) { self.systems = systems }

  public let name = "replay"
  public let summary = "run one scenario verbosely (events as they happen, expectations, leaks)"
  public var usage: String {
    """
    Usage: failclosed replay Scenarios/NAME.json [--report DIR] [--time-scale N]
                             [--skip-idle|--no-skip-idle]
                             [--sut \(SystemUnderTestOption.choices(in: systems))]
                             \(SystemUnderTestOption.usage(in: systems, indent: Self.usageIndent))
           failclosed replay --from-ooni FILE.json [--profile P] [--force] [--report DIR]

    Runs one scenario as leak-audit does and prints what happened: the app's events (and the
    harness's: a Tor crash, a censor change) on the virtual time axis as they happen, so an
    interrupted replay still shows them; tor's timeline; each expectation met or failed, in
    the reports' words, with its reason; each leak (class, destination, names in clear, first
    time, packets) and the exposure by the user's choice (traffic while the user had Tor off:
    not a leak). A real-tor scenario starts its own private Tor network first (and runs in
    real time; its events are printed at the end). The reports and the capture go to
    reports/NAME (or --report DIR). Exit codes as for leak-audit.
    --from-ooni converts an OONI measurement in memory (as `failclosed ooni convert` does) and
    runs it on the real-Tor lane; it prints measured next to reproduced: the bootstrap stop,
    each target class's reachability, and the app's verdict (a mismatch is a FAILED
    expectation with both values). --sut runs the scenario on another system than the model
    (what each runs: leak-audit --help).

    \(SystemUnderTestOption.help(in: systems, guides: false))
    """
  }

  /// "Usage: failclosed replay ", the column the usage lines continue at.
  static let usageIndent = String(repeating: " ", count: 25)

  /// The options; where the scenario comes from is decided in ``scenario(_:)`` alone.
  public var options: [OptionSpec] {
    [
      OptionSpec(
        "report", .single, valueName: "DIR",
        help: "write the reports and capture here "
          + "(default reports/NAME)", values: .directory),
      OptionSpec("time-scale", .single, valueName: "N", help: "virtual seconds per second (25)"),
    ] + RunClockOption.skipIdleSpecs + [
      OptionSpec(
        "from-ooni", .single, valueName: "FILE", help: "convert an OONI measurement and run it",
        values: .file),
      OptionSpec(
        "profile", .single, valueName: "P",
        help: "--from-ooni: the app (bitchat, hardened, onion-browser)"),
      OptionSpec("force", .flag, help: "--from-ooni: run a measurement that is not censorship"),
    ] + SystemUnderTestOption.specs(in: systems)
  }

  public func run(_ arguments: ParsedArguments) async throws -> Int32 {
    let scale = try arguments.integer("time-scale", in: 1...1000) ?? 25
    let system = try SystemUnderTestOption.system(arguments, in: systems)
    let program = try ProgramOption.spec(arguments)
    guard Privilege.isRoot else {
      throw UsageError("replay needs root (network namespaces, nftables, libpcap capture)")
    }
    guard let loaded = try Self.scenario(arguments) else { return ExitCode.usage }
    guard let adopted = system.adopt(loaded) else {
      throw UsageError("--sut \(system.name): \(loaded.path) \(system.refusal)")
    }
    let setup = system.prepare(
      [adopted], SystemUnderTestOption.inputs(arguments, program: program, in: systems))
    if let unavailable = setup.unavailable {
      FailClosedMain.printError("failclosed replay: \(system.name): \(unavailable.reason)")
      return ExitCode.usage
    }
    // The scenario as the system made it ready (a program's command put in); one it left out
    // (a checkout of another version) is not run on it.
    guard let scenario = setup.scenarios.first else {
      FailClosedMain.printError(
        "failclosed replay: \(system.name): \(loaded.path) is left out as made ready (see above)")
      return ExitCode.usage
    }
    let report =
      arguments.value("report")
      ?? LeakAuditCommand.defaultReportDirectory + "/" + scenario.name
    let work = report + "/work"
    defer { try? FileManager.default.removeItem(atPath: work) }
    Self.emit("\(scenario.name): \(scenario.title)")
    Self.emit("  proves: \(scenario.proves)")
    Self.emit("  tor: \(scenario.tor.summary)" + Self.censorSummary(scenario))
    let result: ScenarioResult
    var networkReady: Double?
    if scenario.lane == .realTor {
      Self.emit("\nstarting a private Tor network (real time); events follow the run")
      // A private Tor network of its own, started and torn down for this one scenario.
      let real = await LeakAuditCommand.runRealLane(
        [scenario], setup: setup, executable: LeakAuditCommand.executablePath(),
        directory: work + "/real-lane", jobs: 1, total: 1, progress: ProgressCounter())
      result = real.results[0]
      networkReady = real.networkReadySeconds
      Self.emit("\nevents (real seconds):")
      for event in result.outcome.events { Self.emit(Self.line(event)) }
    } else {
      Self.emit("\nevents (virtual seconds, as they happen):")
      var runnerOptions = setup.mockRunnerOptions(
        executable: LeakAuditCommand.executablePath(), timeScale: Double(scale),
        workDirectory: work, onEvent: { Self.emit(Self.line($0)) })
      runnerOptions.skipIdle = try RunClockOption.skipIdle(arguments)
      let runner = ScenarioRunner(options: runnerOptions)
      result = ScenarioResult(scenario: scenario, outcome: await runner.run(scenario))
    }
    Self.printResult(result, lane: scenario.lane)
    if scenario.ooni != nil {
      Self.emit("")
      for line in ReplayComparison.lines(result) { Self.emit(line) }
    }
    let runReport = RunReport(
      startedAt: ISO8601DateFormatter().string(from: Date()), versions: LeakAuditCommand.versions(),
      timeScale: Double(scale), results: [result], networkReadySeconds: networkReady)
    do {
      let written = try ReportWriter.write(runReport, to: report, keepAllPcaps: true)
      Self.emit("reports: " + written.joined(separator: " "))
    } catch {
      FailClosedMain.printError("failclosed replay: --report \(report): \(error)")
      return ExitCode.afterReportFailure(runReport.exitCode)
    }
    return runReport.exitCode
  }

  /// The scenario to replay, from the arguments; nil after printing why there is none.
  static func scenario(_ arguments: ParsedArguments) throws -> Scenarios.Scenario? {
    if let fromOONI = arguments.value("from-ooni") {
      guard arguments.positional.isEmpty else {
        throw UsageError("expected exactly one scenario file, or --from-ooni FILE.json")
      }
      do {
        return try OONICommand.scenario(
          fromOONI,
          options: OONIConversion.Options(
            profile: try OONICommand.profile(arguments), force: arguments.has("force")))
      } catch let error as UsageError {
        throw error
      } catch {
        FailClosedMain.printError("failclosed replay: \(fromOONI): \(error)")
        return nil
      }
    }
    guard arguments.positional.count == 1, let file = arguments.positional.first else {
      throw UsageError("expected exactly one scenario file, or --from-ooni FILE.json")
    }
    switch ScenarioLoader.loadFile(file) {
    case .success(let scenario): return scenario
    case .failure(let error):
      FailClosedMain.printError("failclosed replay: \(error)")
      return nil
    }
  }

  /// "; censor: drop tor-guards tcp until 30 s; DNS poisoned: nos.lol".
  static func censorSummary(_ scenario: Scenarios.Scenario) -> String {
    var parts: [String] = []
    let rules = scenario.network.censor.map { rule in
      [
        rule.action.rawValue, rule.target.description, rule.transport?.rawValue,
        rule.port.map { "port \($0)" }, rule.longerThan.map { "longer than \($0) bytes" },
        rule.from.map { "from \(formatSeconds($0))" },
        rule.until.map { "until \(formatSeconds($0))" },
      ].compactMap { $0 }.joined(separator: " ")
    }
    if !rules.isEmpty { parts.append("censor: " + rules.joined(separator: ", ")) }
    if !scenario.network.dnsPoisoning.isEmpty {
      parts.append(
        "DNS poisoned (A and AAAA): "
          + scenario.network.dnsPoisoning.map(\.name).joined(separator: ", "))
    }
    return parts.isEmpty ? "" : "; " + parts.joined(separator: "; ")
  }

  static func line(_ event: ScenarioEvent) -> String {
    let fields = event.fields.keys.sorted().map { "\($0)=\(event.fields[$0]!)" }
    return "  " + formatSeconds(event.time).padding(toLength: 9, withPad: " ", startingAt: 0)
      + event.name + (fields.isEmpty ? "" : " " + fields.joined(separator: " "))
  }

  /// Everything after the events, in the reports' words.
  static func printResult(_ result: ScenarioResult, lane: Scenarios.Lane) {
    let outcome = result.outcome
    let torTimeline = CondensedTorEntry.condense(outcome.torTimeline)
    if !torTimeline.isEmpty {
      emit("\ntor's timeline (\(lane == .realTor ? "real" : "virtual") seconds):")
      for entry in torTimeline { emit("  " + entry.line) }
    }
    if let fetched = outcome.fetchThroughExit {
      emit("fetch through the exit: \(fetched ? "succeeded" : "failed")")
    }
    emit("\nexpectations:")
    for item in result.judgement.expectations {
      let status = item.status == .met ? "met" : item.status.rawValue.uppercased()
      emit(
        "  " + status.padding(toLength: 13, withPad: " ", startingAt: 0)
          + "\(item.expectation.sentence): \(item.reason)")
    }
    emit(
      "\ncapture: \(outcome.capture.packets) packets, \(outcome.capture.dropped) dropped, "
        + "positive control \(outcome.capture.positiveControlSeen ? "seen" : "NOT seen")")
    let leaks = result.judgement.leaks
    emit(
      leaks.isEmpty
        ? "leaks: none" : "leaks (\(result.scenario.isCanary ? "expected: a canary" : "LEAK")):")
    for leak in leaks { emit("  " + evidence(leak)) }
    let exposure = result.judgement.exposure
    if !exposure.isEmpty {
      emit("exposure by the user's choice (Tor was off: reported, not a leak):")
      for flow in exposure { emit("  " + evidence(flow)) }
    }
    if let error = outcome.runError { emit("run error: \(error)") }
    for reason in result.judgement.reasons where result.verdict != .pass {
      emit("why: \(reason)")
    }
    emit("\nverdict: \(TerminalFormat.label(result.verdict))")
  }

  static func evidence(_ leak: ScenarioLeak) -> String {
    "\(leak.leakClass.rawValue) \(leak.transport) to \(leak.destination)"
      + (leak.names.isEmpty ? "" : " names \(leak.names.joined(separator: ", "))")
      + " first at \(formatSeconds(leak.firstTime)), \(leak.packets) packets"
  }

  /// Written at once (not buffered): events stream while the run goes on.
  static func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
  }
}
