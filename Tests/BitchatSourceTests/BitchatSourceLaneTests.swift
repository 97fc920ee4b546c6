import FailClosedSupport
import Foundation
import Lanes
import Scenarios
import Testing

@testable import BitchatSource

/// The built `failclosed` binary (the runner starts its mock Tor in the device).
let failclosedBinary: String = {
  URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    .appendingPathComponent("failclosed").path
}()

/// A few scenarios of the library on bitchat's own code, in the sandbox, in real time (about
/// 35 s): the healthy baseline must pass with the apple transport (only Tor on the wire), and
/// the naive-port canary, bitchat's code on stock swift-corelibs URLSession, must be caught
/// leaking (its DNS and clearnet connection). The whole library runs in
/// `leak-audit --sut bitchat-source`.
@Suite(
  .serialized,
  .enabled(if: Privilege.rootSkipReason == nil, "needs root"),
  .enabled(if: Privilege.isCI || checkoutSkipReason == nil, "needs the bitchat checkout"))
struct BitchatSourceLaneTests {
  @Test func theBaselinePassesOnBitchatsCodeAndTheLinuxFoundationCanaryIsCaught() async throws {
    let driver = try buildPinned().executable
    var options = ScenarioRunner.Options(executable: failclosedBinary, bitchatSourceDriver: driver)
    options.substituteBitchatSource = true
    let runner = ScenarioRunner(options: options)
    let directory = BitchatSourceLocation.packageRoot + "/Scenarios"
    let baseline = try ScenarioLoader.loadFile(directory + "/healthy-baseline.json").get()
    let canary = try ScenarioLoader.loadFile(directory + "/naive-port-canary.json").get()
    async let baselineOutcome = runner.run(baseline)
    async let canaryOutcome = runner.run(canary)
    let (healthy, caught) = await (baselineOutcome, canaryOutcome)

    #expect(healthy.runError == nil, "\(healthy.runError ?? "")")
    #expect(healthy.audit.leaks.isEmpty, "\(healthy.audit.leaks)")
    let healthyResult = ScenarioResult(scenario: baseline, outcome: healthy)
    #expect(healthyResult.verdict == .pass, "\(healthyResult.judgement.reasons)")
    // bitchat's own TorManager reported readiness through the real arti.h path.
    #expect(healthy.events.contains { $0.name == "TorDidBecomeReady" })

    #expect(caught.runError == nil, "\(caught.runError ?? "")")
    let classes = Set(caught.audit.leaks.map(\.leakClass.rawValue))
    #expect(classes.contains("dns"), "\(caught.audit.leaks)")
    let canaryResult = ScenarioResult(scenario: canary, outcome: caught)
    #expect(canaryResult.verdict == .pass, "\(canaryResult.judgement.reasons)")
  }
}

/// Runs `failclosed` with `arguments`; its exit status and its output (stdout and stderr).
func runFailclosed(_ arguments: [String]) throws -> (status: Int32, output: String) {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: failclosedBinary)
  process.arguments = arguments
  let pipe = Pipe()
  process.standardOutput = pipe
  process.standardError = pipe
  try process.run()
  let data = pipe.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// leak-audit's bitchat-source options: bad input is a usage error naming the option, and an
/// explicit checkout that is not there says how to get one (exit 2, nothing run).
@Suite(.enabled(if: Privilege.rootSkipReason == nil, "needs root"))
struct BitchatSourceLeakAuditOptionTests {
  @Test func aBadSystemUnderTestIsAUsageError() throws {
    let result = try runFailclosed(["leak-audit", "--sut", "iphone", "--lane", "mock"])
    #expect(result.status == 2)
    #expect(result.output.contains("--sut: expected model or bitchat-source, got 'iphone'"))
  }

  @Test func aMissingExplicitCheckoutSaysHowToGetOne() throws {
    let missing = NSTemporaryDirectory() + "fc-no-bitchat-\(getpid())"
    let result = try runFailclosed([
      "leak-audit", "--sut", "bitchat-source", "--bitchat-src", missing, "--lane", "mock",
    ])
    #expect(result.status == 2)
    #expect(result.output.contains("no bitchat checkout at \(missing)"))
    #expect(result.output.contains("git clone https://github.com/permissionlesstech/bitchat"))
  }
}
