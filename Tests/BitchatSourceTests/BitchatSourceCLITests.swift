import FailClosedSupport
import Foundation
import TestSupport
import Testing

@testable import BitchatSource

/// FAILCLOSED_CACHE for a `failclosed` child, so it reuses the tests' build of the driver.
let testCacheEnvironment = [
  "FAILCLOSED_CACHE": BitchatSourceLocation.packageRoot + "/.build/bitchat-source-tests"
]

/// An actions file: start, then the end at `seconds`.
func shortActions(_ seconds: Double) throws -> String {
  let path = try temporaryDirectory("actions") + "/actions.jsonl"
  try
    (#"{"at":0,"action":"start"}"# + "\n" + #"{"at":\#(seconds),"action":"wait","seconds":0}"#
    + "\n").write(toFile: path, atomically: true, encoding: .utf8)
  return path
}

/// `failclosed app --bitchat-src DIR`: bitchat's own code behind the app command, its options
/// checked (the model's own options are refused by name), a missing checkout explained.
@Suite(
  .needsFailclosedBinary)
struct BitchatSourceAppCommandTests {
  @Test(arguments: [
    (["--relay", "wss://relay.example"], "--relay is the model's"),
    (["--time-scale", "25"], "only 1 is possible"),
    (["--backend", "ctor"], "expected arti or tor"),
    (["--backend", "tor"], "--backend tor needs --torrc-base"),
    (["--transport", "curl"], "expected apple or linux-foundation, got 'curl'"),
  ])
  func theModelsOptionsAndBadValuesAreUsageErrors(_ extra: [String], _ message: String) throws {
    let actions = try shortActions(1)
    let result = try runFailclosed(
      ["app", "--bitchat-src", pinnedCheckout, "--actions", actions] + extra)
    #expect(result.status == 2, "\(result.output)")
    #expect(result.output.contains(message), "\(result.output)")
  }

  @Test func transportWithoutACheckoutIsTheModelsError() throws {
    let result = try runFailclosed([
      "app", "--actions", try shortActions(1), "--transport", "apple",
    ])
    #expect(result.status == 2)
    #expect(result.output.contains("--transport needs --bitchat-src"), "\(result.output)")
  }

  @Test func aMissingCheckoutSaysHowToGetOne() throws {
    let missing = NSTemporaryDirectory() + "fc-no-bitchat-app-\(getpid())"
    let result = try runFailclosed([
      "app", "--bitchat-src", missing, "--actions", try shortActions(1),
    ])
    #expect(result.status == 2)
    #expect(result.output.contains("no bitchat checkout at \(missing)"), "\(result.output)")
    #expect(result.output.contains("git clone https://github.com/permissionlesstech/bitchat"))
  }

  /// bitchat's code runs the actions and prints the model's event lines: with no Tor at the
  /// SOCKS port its TorManager stays at "Bootstrapping..." and never ready; the driver ends
  /// at the actions' end.
  @Test(
    .needsBitchatCheckout)
  func bitchatsOwnCodeRunsTheActions() throws {
    _ = try buildPinned()
    let state = try temporaryDirectory("app-state")
    defer { try? FileManager.default.removeItem(atPath: state) }
    let result = try runFailclosed(
      [
        "app", "--bitchat-src", pinnedCheckout, "--actions", try shortActions(2),
        "--state-dir", state, "--socks", "127.0.0.1:9",
      ], environment: testCacheEnvironment)
    #expect(result.status == 0, "\(result.output)")
    let lines = result.output.split(separator: "\n").map(String.init)
    #expect(lines.contains { $0.contains(#""profile""#) && $0.contains(#""bitchat-source""#) })
    #expect(lines.contains { $0.contains(#""value":"Bootstrapping...""#) }, "\(lines)")
    #expect(!lines.contains { $0.contains("TorDidBecomeReady") })
    #expect(lines.last?.contains(#""action":"end""#) == true, "\(lines.suffix(3))")
  }
}

/// A fresh clone without a bitchat checkout: leak-audit says how to get one, skips the lane's
/// files and still runs (and passes) the rest.
@Suite(
  .needsRoot,
  .needsFailclosedBinary)
struct BitchatSourceFreshCloneTests {
  @Test func withoutACheckoutTheLaneIsSkippedAndTheRestRuns() throws {
    let directory = try temporaryDirectory("fresh-clone")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let scenarios = BitchatSourceLocation.packageRoot + "/Scenarios"
    // The same file with the bitchat-source profile: it needs the checkout.
    let text = try String(contentsOfFile: scenarios + "/healthy-baseline.json", encoding: .utf8)
    let onSource = text.replacingOccurrences(
      of: #""profile": "bitchat""#, with: #""profile": "bitchat-source""#)
    #expect(onSource != text)
    try onSource.replacingOccurrences(of: #""$schema": "./scenario.schema.json","#, with: "")
      .write(toFile: directory + "/on-source.json", atomically: true, encoding: .utf8)
    let result = try runFailclosed(
      [
        "leak-audit", scenarios + "/healthy-baseline.json", directory + "/on-source.json",
        "--lane", "mock", "--report", directory + "/reports",
      ], environment: ["FAILCLOSED_BITCHAT_SRC": directory + "/no-checkout"])
    #expect(result.status == 0, "\(result.output)")
    #expect(result.output.contains("skipping the bitchat-source lane"), "\(result.output)")
    #expect(result.output.contains("git clone https://github.com/permissionlesstech/bitchat"))
    #expect(result.output.contains("1 pass"), "\(result.output)")

    // tools/leak-audit's second run: the lane alone, nothing else to run, is not a failure.
    let laneOnly = try runFailclosed(
      [
        "leak-audit", scenarios + "/healthy-baseline.json", "--sut", "bitchat-source",
        "--report", directory + "/reports-lane",
      ], environment: ["FAILCLOSED_BITCHAT_SRC": directory + "/no-checkout"])
    #expect(laneOnly.status == 0, "\(laneOnly.output)")
    #expect(laneOnly.output.contains("skipping the bitchat-source lane"), "\(laneOnly.output)")
  }
}
