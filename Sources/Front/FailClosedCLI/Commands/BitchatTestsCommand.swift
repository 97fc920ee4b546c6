import Audit
import BitchatSource
import FailClosedSupport
import Foundation
import Sandbox

/// `failclosed bitchat-tests`: builds bitchat's own unit tests against its real sources and the
/// project's shims, runs them in the sandbox with the capture on, and prints bitchat's pass and
/// fail counts per file and the audit's verdict on what the tests sent.
public struct BitchatTestsCommand: Command {
  public init() {}
  public let name = "bitchat-tests"
  public let summary = "run bitchat's own unit tests on Linux against its real code and the shims"
  public let usage = """
    Usage: failclosed bitchat-tests [--bitchat-src DIR] [--cache DIR] [--report DIR]
                                    [--timeout SECONDS]

    Finds bitchat's unit tests for its Tor layer by path in a bitchat checkout (default
    ../shared/upstream/bitchat beside the package): GeoRelayDirectoryTests,
    NostrRelaySettingsTests, NetworkActivationServiceTests, NetworkReachabilityGateTests,
    NostrRelayManagerTests, TorPreferenceReadTests and TestConstants (a missing optional file
    is named and left out). Builds them unmodified against bitchat's files and the shims
    (BitchatShims/), with the app's files as the module `bitchat` their @testable import
    names, in the bitchat-source lane's cache (keyed by every file's hash; a second run does
    not rebuild). Runs them in a fresh sandbox (device, censor and world namespaces, no Tor)
    with the capture on the device's link, then prints pass, fail, not-runnable and not-run
    counts per test file and the audit of every packet the tests sent.

    A test that cannot run on Linux for a reason no shim can fix is listed by name with the
    reason (BitchatNotRunnableTest.linux; today the list is empty); it still runs, and a
    listed test that passes, or a listed name no test has, is a fault of the list.

    Exit codes: 0 every test passes and nothing left the device; 1 a test failed, did not
    run, or the list is out of date; 5 the tests sent a packet off the device; 2 a build or
    setup error (named: the bitchat file, the symbol and the shim that lacks it).
    """
  public let options: [OptionSpec] = [
    OptionSpec(
      "bitchat-src", .single, valueName: "DIR", help: "a bitchat checkout", values: .directory),
    OptionSpec(
      "cache", .single, valueName: "DIR", help: "build cache (default ~/.cache/failclosed)",
      values: .directory),
    OptionSpec(
      "report", .single, valueName: "DIR",
      help: "keep the tests' output, results, report.json and capture.pcap in DIR",
      values: .directory),
    OptionSpec(
      "timeout", .single, valueName: "SECONDS",
      help: "kill the tests after this long (default 900)"),
  ]

  /// A test run failed or the not-runnable list is out of date.
  static let testsFailed: Int32 = 1

  public func run(_ arguments: ParsedArguments) async throws -> Int32 {
    if let stray = arguments.positional.first {
      throw UsageError("unexpected '\(stray)': bitchat-tests takes options only")
    }
    let timeout = try arguments.seconds("timeout", in: 1...SandboxExec.maximumSeconds) ?? 900
    let built: BitchatTestsBuilder.Result
    do {
      built = try BitchatSourceLocation.prepareTests(
        bitchatSource: arguments.value("bitchat-src"),
        cacheRoot: arguments.value("cache").map { $0 + "/bitchat-source" },
        progress: { FailClosedMain.printError($0) })
    } catch let error as BitchatSourceError {
      FailClosedMain.printError("failclosed bitchat-tests: \(error)")
      return ExitCode.usage
    }
    let package = built.package
    let keep = arguments.value("report")
    let directory = keep ?? NSTemporaryDirectory() + "failclosed-bitchat-tests-\(getpid())"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { if keep == nil { try? FileManager.default.removeItem(atPath: directory) } }
    let xctestResults = directory + "/xctest-results.jsonl"
    let xunit = directory + "/swift-testing.xml"
    let output = directory + "/output.log"
    for path in [xctestResults, xunit] { try? FileManager.default.removeItem(atPath: path) }

    // One shell runs both runners in the device: XCTest's (our registration) and Swift
    // Testing's (SwiftPM's test bundle).
    var script: [String] = []
    if package.tests.files.contains(where: { $0.framework == .xctest }) {
      script.append(#""$1" "$2""#)
    }
    if package.tests.files.contains(where: { $0.framework == .swiftTesting }) {
      script.append(#""$3" --testing-library swift-testing --xunit-output "$4""#)
    }
    let command = [
      "/bin/sh", "-c", script.joined(separator: "; "), "bitchat-tests",
      package.xctestRunnerPath, xctestResults, package.swiftTestingPath, xunit,
    ]
    let started = Date()
    let result: SandboxExec.Result
    do {
      result = try await SandboxExec.run(
        SandboxExec.Options(
          command: command, tor: false, grace: 1, timeout: timeout,
          reportDirectory: keep, commandOutput: output))
    } catch {
      FailClosedMain.printError("failclosed bitchat-tests: setup error: \(error)")
      return ExitCode.inconclusive
    }
    let runSeconds = Date().timeIntervalSince(started)
    let outcomes =
      BitchatTestOutcome.parseXCTest(
        (try? String(contentsOfFile: xctestResults, encoding: .utf8)) ?? "")
      + BitchatTestOutcome.parseXUnit((try? String(contentsOfFile: xunit, encoding: .utf8)) ?? "")
    let report = BitchatTestsReport(tests: package.tests, outcomes: outcomes)

    print(
      "bitchat-tests: bitchat's own tests from \(package.tests.root) "
        + "(\(built.cached ? "cached build" : "built in \(String(format: "%.1f", built.seconds)) s"))"
    )
    print(report.text)
    print(AuditSummary.text(result.report, source: result.pcapPath))
    let status = result.commandStatus.map { "exit \($0)" } ?? "killed at the timeout"
    print(
      "  tests ran in \(String(format: "%.1f", runSeconds)) s (\(status)) in sandbox "
        + "\(result.prefix), no Tor; output: \(keep.map { $0 + "/output.log" } ?? "not kept (--report DIR keeps it)")"
    )
    if result.report.verdict != .pass { return result.report.verdict.exitCode }
    return report.passed ? ExitCode.pass : Self.testsFailed
  }
}
