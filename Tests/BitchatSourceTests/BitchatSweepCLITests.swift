import FailClosedSupport
import Foundation
import TestSupport
import Testing

@testable import BitchatSource

/// A three-commit history made from the pinned checkout: the checkout as it is, then the same
/// with one line of TorURLSession changed so its session never uses the SOCKS proxy (a commit
/// that introduces a leak), then one whose NetworkActivationService.start() waits forever on
/// the main thread (a launch that hangs, as bitchat's did from a136b5b7 to fdf28aa5). All are
/// test input made at run time; nothing is committed.
private func leakingHistory() throws -> (
  root: String, clean: String, leaking: String, hanging: String
) {
  let root = try temporaryDirectory("sweep-history")
  func git(_ arguments: String...) throws -> String {
    try BitchatSourceTests.git(in: root, arguments)
  }
  for part in ["bitchat", "bitchatTests", "localPackages", "relays"] {
    try FileManager.default.copyItem(atPath: pinnedCheckout + "/" + part, toPath: root + "/" + part)
  }
  _ = try git("init", "-q")
  _ = try git("add", "-A")
  _ = try git("commit", "-q", "-m", "the pinned Tor layer")
  let clean = try git("rev-parse", "HEAD")
  let path = root + "/localPackages/Arti/Sources/TorURLSession.swift"
  let source = try String(contentsOfFile: path, encoding: .utf8)
  let line = "useTorProxy ? torSession : defaultSession"
  #expect(source.contains(line), "TorURLSession no longer has the line the canary changes")
  try source.replacingOccurrences(of: line, with: "defaultSession").write(
    toFile: path, atomically: true, encoding: .utf8)
  _ = try git("commit", "-q", "-am", "always the direct session")
  let leaking = try git("rev-parse", "HEAD")
  let activation = root + "/bitchat/Services/NetworkActivationService.swift"
  let service = try String(contentsOfFile: activation, encoding: .utf8)
  let started = "started = true\n"
  #expect(service.contains(started), "NetworkActivationService no longer sets started")
  try service.replacingOccurrences(
    of: started, with: started + "DispatchSemaphore(value: 0).wait()\n"
  ).write(toFile: activation, atomically: true, encoding: .utf8)
  _ = try git("commit", "-q", "-am", "the launch waits forever")
  return (root, clean, leaking, try git("rev-parse", "HEAD"))
}

/// The history sweep end to end on the bitchat-source lane: the table names the commit that
/// brought the leak (canary) and keeps the clean commit's pass (control); the hanging launch
/// ends at the driver's watchdog, not at the scenario's deadline, and its reason says so
/// (canary of MainThreadWatchdog); against a table that expects otherwise, --expect exits 1
/// naming the cell.
@Suite(
  .serialized,
  .needs(
    "needs the bitchat checkout, the built binary and root",
    if: hasBitchatCheckout && FailclosedBinary.built != nil && Privilege.isRoot))
struct BitchatSweepCLITests {
  @Test func theSweepNamesTheCommitThatBroughtALeak() throws {
    let (root, clean, leaking, hanging) = try leakingHistory()
    defer { try? FileManager.default.removeItem(atPath: root) }
    let report = root + "/report"
    let result = try runFailclosed(
      [
        "bitchat-source", "--sweep", root, "--since", clean, "--scenarios", "healthy-baseline",
        "--no-tests", "--report", report,
      ], environment: testCacheEnvironment)
    #expect(result.status == 0, "\(result.output)")
    let table = try BitchatSweepTable.read(report + "/sweep.json")
    #expect(table.rows.map(\.commit) == [clean, leaking, hanging])
    #expect(table.rows.map(\.build) == ["ok", "ok", "ok"])
    #expect(table.rows[0].verdicts["healthy-baseline"] == "pass", "\(result.output)")
    #expect(table.rows[1].verdicts["healthy-baseline"] == "leak", "\(result.output)")
    let hung = table.rows[2]
    #expect(hung.verdicts["healthy-baseline"] == "inconclusive", "\(result.output)")
    let reason = hung.reasons?["healthy-baseline"] ?? ""
    #expect(reason.contains("exited with status 3"), "\(reason)")
    #expect(reason.contains("main thread hung for"), "\(reason)")
    #expect(reason.contains("during 'start'"), "\(reason)")
    #expect(
      table.changes.first
        == .init(column: "healthy-baseline", commit: leaking, before: "pass", after: "leak"))
    #expect(result.output.contains("healthy-baseline: pass -> leak at \(leaking.prefix(8))"))

    // --expect: the clean commit expected to leak is a difference, named, exit 1.
    var expected = table
    expected.rows = [table.rows[0]]
    expected.rows[0].verdicts["healthy-baseline"] = "leak"
    let expectPath = root + "/expected.json"
    try expected.json().write(to: URL(fileURLWithPath: expectPath))
    let compared = try runFailclosed(
      [
        "bitchat-source", "--sweep", root, "--expect", expectPath, "--no-tests", "--report",
        root + "/again",
      ], environment: testCacheEnvironment)
    #expect(compared.status == 1, "\(compared.output)")
    #expect(
      compared.output.contains(
        "differs: \(clean.prefix(8)) healthy-baseline: expected leak, got pass"),
      "\(compared.output)")
  }
}
