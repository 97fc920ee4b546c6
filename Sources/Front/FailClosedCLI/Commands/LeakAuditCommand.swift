import FailClosedSupport
import Foundation
import Lanes
import Reports
import Sandbox
import Scenarios

/// `failclosed leak-audit`: the main job. Every scenario in fresh namespaces with the capture
/// on, judged from the capture and the app's events, with reports a reviewer and a CI can read.
public struct LeakAuditCommand: Command {
  public init() {}
  public let name = "leak-audit"
  public let summary = "run every scenario in the sandbox, audit the captures, write reports"
  public let usage = """
    Usage: failclosed leak-audit [PATH ...] [--report DIR] [--filter TEXT] [--shard I/N]
                                 [--lane \(LaneSelection.choices)] [--jobs N] [--keep-pcaps]
                                 [--time-scale N] [--skip-idle|--no-skip-idle]
                                 [--sut \(SystemUnderTestOption.choices)]
                                 [--bitchat-src DIR] [--compare A,B [--compare-reuse SIDE=FILE]]

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

    --sut bitchat-source runs bitchat's own code instead of the model: the bitchat scenarios of
    the mock lane (arti personality) with the `apple` transport, the naive-port canary with
    stock swift-corelibs URLSession (`linux-foundation`), and the real-Tor lane's bitchat
    scenarios with arti.h over Debian's tor, in real time (bitchat reads the wall clock),
    through the driver built from a bitchat checkout (--bitchat-src DIR, default
    ../shared/upstream/bitchat; see `failclosed bitchat-source`). --bitchat-src DIR alone
    implies --sut bitchat-source (as `app --bitchat-src` does). Files with the profile
    bitchat-source always run on it; without a checkout they are skipped with a note.

    --compare A,B (A and B of bitchat, hardened, bitchat-source) runs each bitchat scenario of
    the mock lane on both and compares them item by item: the verdict, each expectation, the
    notifications' times, the order of events, relay connections, requests, messages, leaks
    (times within 2 s count as the same; the model runs at --time-scale 5 unless given).
    Each side's reports go to DIR/A and DIR/B, the comparison to DIR (report.json, summary.md,
    index.html). bitchat against bitchat-source knows the Linux-only differences
    docs/linux-differences.md explains; any other difference fails the run (exit 5).
    --compare-reuse SIDE=FILE takes that side from an earlier comparison's report.json instead
    of running it again (bitchat-source runs in real time).

    Verdicts: PASS, LEAK (a leak, or a canary that was not caught), FAILED (an expectation not
    met), INCONCLUSIVE (drops, no positive control, a run error; never shown as a pass).
    Reports (in reports/, or --report DIR): report.json, junit.xml, sarif.json, summary.md,
    index.html, and pcaps/ with the capture of every scenario that did not pass (of all with
    --keep-pcaps), which the reports name relative to DIR.
    Exit code: 0 all pass, 5 a leak or failed expectation, 2 inconclusive or setup error.
    Needs root (namespaces, nftables, capture).
    """
  public let options: [OptionSpec] =
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
        help: "scenarios run side by side, both lanes \(ScenarioJobs.helpText)"),
      OptionSpec("keep-pcaps", .flag, help: "keep every capture in DIR/pcaps, not only failures"),
      OptionSpec("time-scale", .single, valueName: "N", help: "virtual seconds per second (25)"),
    ] + RunClockOption.skipIdleSpecs + [
      SystemUnderTestOption.spec,
      OptionSpec(
        "bitchat-src", .single, valueName: "DIR", help: "bitchat checkout for bitchat-source",
        values: .directory),
      OptionSpec(
        "compare", .single, valueName: "A,B", help: "run bitchat scenarios on two sides, compare"),
      OptionSpec(
        "compare-reuse", .single, valueName: "SIDE=FILE",
        help: "take a side from an earlier comparison's report.json"),
    ]

  public func run(_ arguments: ParsedArguments) async throws -> Int32 {
    let paths =
      arguments.positional.isEmpty
      ? ["Scenarios"] + (Self.isDirectory("Scenarios/ooni") ? ["Scenarios/ooni"] : [])
      : arguments.positional
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
    let jobs =
      try arguments.integer("jobs", in: 1...ScenarioJobs.maximum) ?? ScenarioJobs.defaultCount
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
    if arguments.value("compare") != nil {
      // The model at x5 unless told otherwise: its real-time hops are multiplied by the scale,
      // and the comparison's time tolerance is 2 s (docs/linux-differences.md, "Time").
      let compareScale = arguments.value("time-scale") == nil ? 5 : scale
      return try await LeakAuditCompare.run(
        arguments, scenarios: scenarios, shard: shard, jobs: jobs, scale: compareScale)
    }
    let system = try SystemUnderTestOption.system(arguments)
    let setup = TestedSystems.plan(
      scenarios, on: system, inputs: SystemUnderTestOption.inputs(arguments))
    if let unavailable = setup.unavailable {
      if unavailable.endsRun {
        FailClosedMain.printError("failclosed leak-audit: bitchat-source: \(unavailable.reason)")
        return ExitCode.usage
      }
      FailClosedMain.printError(
        "failclosed leak-audit: skipping the bitchat-source lane: \(unavailable.reason)")
      // Nothing else was asked for: the skip is the whole outcome, never a failure.
      if setup.scenarios.isEmpty { return ExitCode.pass }
    }
    let selected = ScenarioSelection.select(
      setup.scenarios, filter: arguments.value("filter"), shard: shard
    ).filter { lanes.includes($0.lane) }
    let mockLane = selected.filter { $0.lane == .mock }
    let realLane = selected.filter { $0.lane == .realTor }
    let report = arguments.value("report") ?? Self.defaultReportDirectory
    let keepAll = arguments.has("keep-pcaps")
    let work = report + "/work"
    var runnerOptions = ScenarioRunner.Options(
      executable: Self.executablePath(), timeScale: Double(scale), workDirectory: work,
      bitchatSourceDriver: setup.bitchatSourceDriver)
    runnerOptions.substituteBitchatSource = setup.substituteBitchatSource
    runnerOptions.skipIdle = try RunClockOption.skipIdle(arguments)
    let runner = ScenarioRunner(options: runnerOptions)
    let startedAt = ISO8601DateFormatter().string(from: Date())
    print(
      "failclosed leak-audit: \(selected.count) scenarios: \(mockLane.count) on the mock lane, "
        + "\(jobs) at a time, time x\(scale); \(realLane.count) on the real-Tor lane, "
        + "\(min(jobs, max(realLane.count, 1))) at a time")
    if let path = setup.bitchatSourceDriver {
      print("bitchat-source: bitchat's own code (\(path)), in real time")
    }
    let progress = ProgressCounter()
    var results = await Self.runAll(
      mockLane, runner: runner, jobs: jobs, total: selected.count, progress: progress)
    var networkReady: Double?
    if !realLane.isEmpty {
      let real = await Self.runRealLane(
        realLane, executable: Self.executablePath(), directory: work + "/real-lane", jobs: jobs,
        total: selected.count, progress: progress, bitchatSourceDriver: setup.bitchatSourceDriver)
      results += real.results
      networkReady = real.networkReadySeconds
    }
    // Reports list scenarios in file order, whichever lane ran them.
    let order = Dictionary(
      selected.enumerated().map { ($0.element.path, $0.offset) }, uniquingKeysWith: { a, _ in a })
    results.sort { (order[$0.scenario.path] ?? 0) < (order[$1.scenario.path] ?? 0) }
    var versions = Self.versions()
    if !realLane.isEmpty { versions["tor"] = Self.torVersion() }
    let runReport = RunReport(
      startedAt: startedAt, versions: versions, timeScale: Double(scale),
      results: results, loadErrors: loadErrors, networkReadySeconds: networkReady)
    print("")
    print(TerminalFormat.summaryTable(runReport))
    for note in results.compactMap(BitchatSourceFindings.note) { print(note) }
    // The table is out already; a report that cannot be written (a full disk) is named
    // after it and never turns a leak into a setup error.
    do {
      let written = try ReportWriter.write(runReport, to: report, keepAllPcaps: keepAll)
      print("reports: \(written.filter { !$0.contains("/pcaps/") }.joined(separator: " "))")
    } catch {
      FailClosedMain.printError("failclosed leak-audit: --report \(report): \(error)")
      try? FileManager.default.removeItem(atPath: work)
      return ExitCode.afterReportFailure(runReport.exitCode)
    }
    try? FileManager.default.removeItem(atPath: work)
    return runReport.exitCode
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
    _ scenarios: [Scenarios.Scenario], executable: String, directory: String, jobs: Int,
    total: Int, progress: ProgressCounter, bitchatSourceDriver: String? = nil
  ) async -> (results: [ScenarioResult], networkReadySeconds: Double?) {
    await RealLaneBatch.run(
      scenarios, executable: executable, directory: directory, jobs: jobs,
      bitchatSourceDriver: bitchatSourceDriver
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
