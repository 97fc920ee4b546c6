import FailClosedSupport
import Foundation
import Scenarios

/// `failclosed replay FILE`: one scenario, verbosely: the app's events as they happened, each
/// expectation with its reason, and every leak with its evidence.
public struct ReplayCommand: Command {
  public init() {}
  public let name = "replay"
  public let summary = "run one scenario verbosely (events, expectations, leaks)"
  public let usage = """
    Usage: failclosed replay Scenarios/NAME.json [--report DIR] [--time-scale N]
                             [--sut model|bitchat-source] [--bitchat-src DIR]

    Runs one scenario as leak-audit does and prints what happened: the app's events on the
    virtual time axis, tor's timeline, each expectation met or failed with its reason, and
    each leak (class, destination, names in clear, first time, packets). A real-tor scenario
    starts its own private Tor network first (and runs in real time). With --report the
    reports and the capture are kept in DIR. --sut bitchat-source runs a bitchat scenario on
    bitchat's own code (see leak-audit --help), in real time. Exit codes as for leak-audit.
    """
  public let options: [OptionSpec] = [
    OptionSpec("report", .single, valueName: "DIR", help: "write the reports and capture here"),
    OptionSpec("time-scale", .single, valueName: "N", help: "virtual seconds per second (25)"),
    OptionSpec(
      "sut", .single, valueName: "model|bitchat-source",
      help: "the system under test for a bitchat scenario (default model)"),
    OptionSpec(
      "bitchat-src", .single, valueName: "DIR", help: "bitchat checkout for bitchat-source"),
  ]

  public func run(_ arguments: ParsedArguments) async throws -> Int32 {
    guard arguments.positional.count == 1, let file = arguments.positional.first else {
      throw UsageError("expected exactly one scenario file")
    }
    guard Privilege.isRoot else {
      throw UsageError("replay needs root (network namespaces, nftables, libpcap capture)")
    }
    var scenario: Scenarios.Scenario
    switch ScenarioLoader.loadFile(file) {
    case .success(let loaded): scenario = loaded
    case .failure(let error):
      FailClosedMain.printError("failclosed replay: \(error)")
      return ExitCode.usage
    }
    let sut = arguments.value("sut") ?? "model"
    guard ["model", "bitchat-source"].contains(sut) else {
      throw UsageError("--sut: expected model or bitchat-source, got '\(sut)'")
    }
    if sut == "bitchat-source" {
      guard BitchatSourceLane.runsOnSource(scenario) else {
        throw UsageError(
          "--sut bitchat-source: \(file) is not a bitchat scenario of the mock lane with the arti "
            + "personality")
      }
      scenario = BitchatSourceLane.onSource(scenario)
    }
    var driver: String?
    switch BitchatSourceLane.prepareIfNeeded(
      [scenario], sut: sut, bitchatSource: arguments.value("bitchat-src"))
    {
    case .success(let path)?: driver = path
    case .failure(let error)?:
      FailClosedMain.printError("failclosed replay: bitchat-source: \(error)")
      return ExitCode.usage
    case nil: break
    }
    let scale = try arguments.integer("time-scale", in: 1...1000) ?? 25
    let report = arguments.value("report")
    let work =
      report.map { $0 + "/work" } ?? NSTemporaryDirectory() + "failclosed-replay-\(getpid())"
    var runnerOptions = ScenarioRunner.Options(
      executable: LeakAuditCommand.executablePath(), timeScale: Double(scale),
      workDirectory: work, bitchatSourceDriver: driver)
    runnerOptions.substituteBitchatSource = sut == "bitchat-source"
    let runner = ScenarioRunner(options: runnerOptions)
    print("\(scenario.name): \(scenario.title)\n  proves: \(scenario.proves)")
    let result: ScenarioResult
    var networkReady: Double?
    if scenario.lane == .realTor {
      // A private Tor network of its own, started and torn down for this one scenario.
      let real = await LeakAuditCommand.runRealLane(
        [scenario], executable: LeakAuditCommand.executablePath(),
        directory: work + "/real-lane", total: 1, progress: ProgressCounter())
      result = real.results[0]
      networkReady = real.networkReadySeconds
    } else {
      result = ScenarioResult(scenario: scenario, outcome: await runner.run(scenario))
    }
    let outcome = result.outcome
    print("\nevents (virtual seconds):")
    for event in outcome.events {
      let fields = event.fields.keys.sorted().map { "\($0)=\(event.fields[$0]!)" }
      print(
        "  " + formatSeconds(event.time).padding(toLength: 9, withPad: " ", startingAt: 0)
          + event.name + (fields.isEmpty ? "" : " " + fields.joined(separator: " ")))
    }
    let torTimeline = CondensedTorEntry.condense(outcome.torTimeline)
    if !torTimeline.isEmpty {
      print("\ntor's timeline (\(scenario.lane == .realTor ? "real" : "virtual") seconds):")
      for entry in torTimeline { print("  " + entry.line) }
    }
    if let fetched = outcome.fetchThroughExit {
      print("fetch through the exit: \(fetched ? "succeeded" : "failed")")
    }
    print("\nexpectations:")
    for item in result.judgement.expectations {
      print("  [\(item.status)] \(item.expectation): \(item.reason)")
    }
    print("\ncapture: \(outcome.capture.packets) packets, \(outcome.capture.dropped) dropped")
    for leak in outcome.audit.leaks {
      print(
        "  LEAK \(leak.leakClass.rawValue) \(leak.transport) to \(leak.destination)"
          + (leak.names.isEmpty ? "" : " names \(leak.names.joined(separator: ","))")
          + " first at \(formatSeconds(leak.firstTime)), \(leak.packets) packets")
    }
    if let error = outcome.runError { print("run error: \(error)") }
    print("\nverdict: \(TerminalFormat.label(result.verdict))")
    let runReport = RunReport(
      startedAt: ISO8601DateFormatter().string(from: Date()), versions: LeakAuditCommand.versions(),
      timeScale: Double(scale), results: [result], networkReadySeconds: networkReady)
    if let report {
      try ReportWriter.write(runReport, to: report)
      try LeakAuditCommand.copyAllPcaps([result], to: report + "/pcaps")
    }
    try? FileManager.default.removeItem(atPath: work)
    return runReport.exitCode
  }
}
