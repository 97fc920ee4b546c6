import BitchatSource
import FailClosedSupport
import Foundation

/// `failclosed bitchat-source build`: generates and builds the bitchat-source lane's package
/// from a bitchat checkout (cached by the sources' hashes) and prints the driver's path.
public struct BitchatSourceCommand: Command {
  public init() {}
  public let name = "bitchat-source"
  public let summary =
    "build bitchat's real Tor layer with the project's shims (the bitchat-source lane)"
  public let usage = """
    Usage: failclosed bitchat-source build [--bitchat-src DIR] [--cache DIR]
           failclosed bitchat-source --sweep REPO [--since COMMIT] [--max N]
                                     [--expect FILE] [--scenarios A,B] [--lane mock|real|all]
                                     [--no-tests] [--report DIR] [--cache DIR]

    build: finds bitchat's Tor-layer files by path in a bitchat checkout (default
    ../shared/upstream/bitchat beside the package) and compiles them unmodified with what they
    need of the checkout's own code: every symbol they use is looked up in the checkout (the
    app's files and each target of its local packages, BitFoundation and BitLogger among
    them) and the declaring file comes along with its own needs. A stand-in
    (BitchatShims/AppStandIns) is used only where the checkout's file cannot build on Linux
    (it imports an Apple framework, needs such a file, or fails to compile here; the build
    then tries again without it). The generated SwiftPM package sits in a cache directory
    keyed by the files' hashes; the driver's path is printed. A second run does not rebuild.
    A failed build names the bitchat file, the symbol, the file of the checkout that declares
    it and why that could not be used.

    --sweep REPO: every commit of a bitchat clone that touches the Tor layer, from --since
    (default: the switch to Arti) to HEAD, or --max N of them spread over that range:
    exported (sources only), built, bitchat's own tests run (unless --no-tests) and the
    bitchat scenarios run on the bitchat-source lane (--lane, default mock; --scenarios
    names a subset). One table (sweep.md, sweep.json in --report, default
    reports/bitchat-sweep) gives each commit's date, build, own tests passed/failed and
    each scenario's verdict, and the first commit where each changed. --expect FILE sweeps
    the commits and scenarios of a table written before (baselines/bitchat-history.json)
    and exits 1 naming every cell that differs.
    """
  public let options: [OptionSpec] = [
    OptionSpec(
      "bitchat-src", .single, valueName: "DIR", help: "a bitchat checkout", values: .directory),
    OptionSpec(
      "sweep", .single, valueName: "REPO", help: "sweep a bitchat clone's history",
      values: .directory),
    OptionSpec("since", .single, valueName: "COMMIT", help: "sweep from this commit"),
    OptionSpec("max", .single, valueName: "N", help: "sweep N commits spread over the range"),
    OptionSpec(
      "expect", .single, valueName: "FILE",
      help: "sweep a table's commits and scenarios and compare", values: .file),
    OptionSpec(
      "scenarios", .single, valueName: "A,B",
      help: "the scenarios to run (default: all of bitchat's)"),
    OptionSpec(
      "lane", .single, valueName: "LANE", help: "the sweep's lane: mock (default), real or all",
      values: .words(["mock", "real", "all"])),
    OptionSpec("no-tests", .flag, help: "do not run bitchat's own tests in the sweep"),
    OptionSpec(
      "report", .single, valueName: "DIR",
      help: "the sweep's table (default reports/bitchat-sweep)",
      values: .directory),
    OptionSpec(
      "cache", .single, valueName: "DIR", help: "build cache (default ~/.cache/failclosed)",
      values: .directory),
  ]

  public func run(_ arguments: ParsedArguments) async throws -> Int32 {
    if let repository = arguments.value("sweep") {
      return try await sweep(repository, arguments)
    }
    guard arguments.positional.first == "build" else {
      FailClosedMain.printError(
        "failclosed bitchat-source: expected 'build'. Run 'failclosed bitchat-source --help'.")
      return ExitCode.usage
    }
    do {
      let result = try BitchatSourceLocation.prepare(
        bitchatSource: arguments.value("bitchat-src"),
        cacheRoot: arguments.value("cache").map { $0 + "/bitchat-source" },
        progress: { line in FailClosedMain.printError(line) })
      print(result.executable)
      return ExitCode.pass
    } catch let error as BitchatSourceError {
      FailClosedMain.printError("failclosed bitchat-source: \(error)")
      return ExitCode.usage
    }
  }

  /// The bitchat scenarios of the library: files whose profile is bitchat's.
  static func bitchatScenarios(in directory: String) -> [String] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    return names.filter { $0.hasSuffix(".json") && $0 != "scenario.schema.json" }.sorted()
      .filter { name in
        guard let data = FileManager.default.contents(atPath: directory + "/" + name),
          let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
          let app = object["app"] as? [String: Any]
        else { return false }
        return (app["profile"] as? String ?? "bitchat").hasPrefix("bitchat")
      }.map { String($0.dropLast(5)) }
  }

  func sweep(_ repository: String, _ arguments: ParsedArguments) async throws -> Int32 {
    let scenarioDirectory = BitchatSourceLocation.packageRoot + "/Scenarios"
    let expected = try arguments.value("expect").map { path throws(BitchatSourceError) in
      try BitchatSweepTable.read(path)
    }
    do {
      let history = try BitchatHistory(repository: repository)
      let commits: [BitchatHistory.Commit]
      if let expected {
        commits = try expected.rows.map { row throws(BitchatSourceError) in
          try history.commit(row.commit)
        }
      } else {
        commits = try history.commits(
          since: arguments.value("since"), max: try arguments.integer("max", in: 1...10_000))
      }
      let library = Self.bitchatScenarios(in: scenarioDirectory)
      let scenarios =
        expected?.scenarios
        ?? arguments.value("scenarios").map { $0.split(separator: ",").map(String.init) }
        ?? library
      for name in scenarios where !library.contains(name) {
        throw UsageError("--scenarios: no bitchat scenario '\(name)' in \(scenarioDirectory)")
      }
      let report = arguments.value("report") ?? "reports/bitchat-sweep"
      FailClosedMain.printError(
        "bitchat-source sweep: \(commits.count) commits of \(repository), \(scenarios.count) scenarios; "
          + "table in \(report)/sweep.md")
      let sweep = BitchatSweep(
        history: history, commits: commits, scenarios: scenarios,
        lane: arguments.value("lane") ?? "mock", runTests: !arguments.has("no-tests"),
        cache: arguments.value("cache"), report: report, scenarioDirectory: scenarioDirectory)
      let table = try await BlockingIO.run("bitchat-sweep") {
        try sweep.run { FailClosedMain.printError($0) }
      }
      print(table.markdown)
      guard let expected else { return ExitCode.pass }
      let differences = table.differences(from: expected)
      for difference in differences { print("differs: \(difference)") }
      return differences.isEmpty ? ExitCode.pass : 1
    } catch let error as BitchatSourceError {
      FailClosedMain.printError("failclosed bitchat-source: \(error)")
      return ExitCode.usage
    }
  }
}
