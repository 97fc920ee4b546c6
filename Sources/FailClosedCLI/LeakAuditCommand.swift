import FailClosedSupport
import Foundation
import Scenarios

/// `failclosed leak-audit`: the main job. Every scenario in fresh namespaces with the capture
/// on, judged from the capture and the app's events, with reports a reviewer and a CI can read.
public struct LeakAuditCommand: Command {
  public init() {}
  public let name = "leak-audit"
  public let summary = "run every scenario in the sandbox, audit the captures, write reports"
  public let usage = """
    Usage: failclosed leak-audit [PATH ...] [--report DIR] [--filter TEXT] [--shard I/N]
                                 [--jobs N] [--keep-pcaps] [--time-scale N]

    Runs each scenario file (PATH: files or directories, default Scenarios/) in fresh network
    namespaces: the capture opens on the device's link and is proved live by a positive-control
    packet, then the mock Tor and the modelled app run in the device on a clock that runs
    --time-scale times faster than real time. Each scenario is judged from its capture (deny by
    default: only the fake Tor guard is allowed) and from the app's events against the file's
    expectations. A malformed file is reported, naming the file and field; the others still run.

    Verdicts: PASS, LEAK (a leak, or a canary that was not caught), FAILED (an expectation not
    met), INCONCLUSIVE (drops, no positive control, a run error; never shown as a pass).
    Reports (--report DIR): report.json, junit.xml, sarif.json, summary.md, index.html, and
    pcaps/ with the capture of every scenario that did not pass (of all with --keep-pcaps).
    Exit code: 0 all pass, 5 a leak or failed expectation, 2 inconclusive or setup error.
    Needs root (namespaces, nftables, capture).
    """
  public let options: [OptionSpec] = [
    OptionSpec("report", .single, valueName: "DIR", help: "write the reports into DIR"),
    OptionSpec(
      "filter", .single, valueName: "TEXT", help: "only scenarios whose name contains TEXT"),
    OptionSpec("shard", .single, valueName: "I/N", help: "only the I-th of N shards (1-based)"),
    OptionSpec("jobs", .single, valueName: "N", help: "scenarios run side by side (default 2)"),
    OptionSpec("keep-pcaps", .flag, help: "keep every capture in DIR/pcaps, not only failures"),
    OptionSpec("time-scale", .single, valueName: "N", help: "virtual seconds per second (25)"),
  ]

  public func run(_ arguments: ParsedArguments) async throws -> Int32 {
    let paths = arguments.positional.isEmpty ? ["Scenarios"] : arguments.positional
    var shard: ScenarioSelection.Shard?
    if let text = arguments.value("shard") {
      do { shard = try ScenarioSelection.Shard(parsing: text) } catch {
        throw UsageError("--shard: \(error)")
      }
    }
    let jobs = try arguments.integer("jobs", in: 1...16) ?? 2
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
    let chosen = ScenarioSelection.select(
      scenarios, filter: arguments.value("filter"), shard: shard)
    // The real-Tor lane's runner joins leak-audit in the next step; until then those files
    // are listed, not run.
    let selected = chosen.filter { $0.lane == .mock }
    let realTor = chosen.filter { $0.lane == .realTor }
    if !realTor.isEmpty {
      print(
        "failclosed leak-audit: \(realTor.count) real-tor scenario(s) not run by this build: "
          + realTor.map(\.name).joined(separator: ", "))
    }
    let report = arguments.value("report")
    let keepAll = arguments.has("keep-pcaps")
    let work =
      report.map { $0 + "/work" }
      ?? NSTemporaryDirectory() + "failclosed-leak-audit-\(getpid())"
    let runner = ScenarioRunner(
      options: ScenarioRunner.Options(
        executable: Self.executablePath(), timeScale: Double(scale), workDirectory: work))
    let startedAt = ISO8601DateFormatter().string(from: Date())
    print("failclosed leak-audit: \(selected.count) scenarios, \(jobs) at a time, time x\(scale)")
    let results = await Self.runAll(selected, runner: runner, jobs: jobs)
    let runReport = RunReport(
      startedAt: startedAt, versions: Self.versions(), timeScale: Double(scale),
      results: results, loadErrors: loadErrors)
    print("")
    print(TerminalFormat.summaryTable(runReport))
    if let report {
      let written = try ReportWriter.write(runReport, to: report)
      if keepAll { try Self.copyAllPcaps(results, to: report + "/pcaps") }
      print("reports: \(written.filter { !$0.contains("/pcaps/") }.joined(separator: " "))")
    }
    try? FileManager.default.removeItem(atPath: work)
    return runReport.exitCode
  }

  /// Runs scenarios `jobs` at a time, printing a progress line as each finishes; results come
  /// back in file order.
  static func runAll(_ scenarios: [Scenarios.Scenario], runner: ScenarioRunner, jobs: Int) async
    -> [ScenarioResult]
  {
    let total = scenarios.count
    let progress = ProgressCounter()
    return await withTaskGroup(of: (Int, ScenarioResult).self) { group in
      var next = 0
      var results: [ScenarioResult?] = Array(repeating: nil, count: total)
      func launch() {
        guard next < total else { return }
        let index = next
        let scenario = scenarios[index]
        next += 1
        group.addTask {
          let outcome = await runner.run(scenario)
          let result = ScenarioResult(scenario: scenario, outcome: outcome)
          let done = progress.increment()
          print(
            TerminalFormat.progressLine(
              index: done, total: total, name: scenario.name, verdict: result.verdict,
              wallSeconds: outcome.wallSeconds))
          return (index, result)
        }
      }
      for _ in 0..<min(jobs, total) { launch() }
      for await (index, result) in group {
        results[index] = result
        launch()
      }
      return results.compactMap { $0 }
    }
  }

  static func copyAllPcaps(_ results: [ScenarioResult], to directory: String) throws {
    let files = FileManager.default
    try files.createDirectory(atPath: directory, withIntermediateDirectories: true)
    for result in results {
      guard let pcap = result.outcome.capture.pcapPath, files.fileExists(atPath: pcap) else {
        continue
      }
      let target = directory + "/\(result.scenario.name).pcap"
      if !files.fileExists(atPath: target) { try files.copyItem(atPath: pcap, toPath: target) }
    }
  }

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
