import FailClosedCLI
import FailClosedSupport
import Foundation
import TestSupport
import Testing

/// `failclosed exec --allow-from-consensus FILE`, and `--tor real`'s option checks (its run on
/// the wire is in RealTorLaneTests, beside the lane's other private network).
@Suite struct ExecConsensusTests {
  /// Both flavours tor caches: the full consensus (descriptor digest in `r` lines) and the
  /// microdescriptor consensus (without it), with an IPv6 ORPort in an `a` line.
  static let fullConsensus = """
    network-status-version 3
    vote-status consensus
    r relayA AAAAAAAAAAAAAAAAAAAAAAAAAAA BBBBBBBBBBBBBBBBBBBBBBBBBBB 2026-11-29 14:04:28 10.66.1.80 9001 9030
    s Fast Guard Running Stable Valid
    r relayB CCCCCCCCCCCCCCCCCCCCCCCCCCC DDDDDDDDDDDDDDDDDDDDDDDDDDD 2026-11-29 14:04:28 10.66.1.81 443 0
    s Fast Running Valid
    """
  static let microdescConsensus = """
    network-status-version 3 microdesc
    vote-status consensus
    r relayA AAAAAAAAAAAAAAAAAAAAAAAAAAA 2026-11-29 14:04:28 10.66.1.80 9001 9030
    a [fd66:0:0:2::80]:9001
    m EEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEE
    s Fast Guard Running Stable Valid
    r relayB CCCCCCCCCCCCCCCCCCCCCCCCCCC 2026-11-29 14:04:28 10.66.1.81 443 0
    s Fast Running Valid
    """

  static func write(_ text: String) throws -> String {
    let path = try RepositoryFiles.temporaryDirectory() + "/consensus"
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return path
  }

  @Test func bothFlavoursGiveEveryORPortAndDirPortTyped() throws {
    let full = try ExecCommand.consensusEndpoints(Self.write(Self.fullConsensus))
    #expect(
      full.map { "\($0.1.rawValue):\($0.0)" } == [
        "orport:10.66.1.80:9001", "dirport:10.66.1.80:9030", "orport:10.66.1.81:443",
      ])
    let micro = try ExecCommand.consensusEndpoints(Self.write(Self.microdescConsensus))
    #expect(
      micro.map { "\($0.1.rawValue):\($0.0)" } == [
        "orport:10.66.1.80:9001", "dirport:10.66.1.80:9030", "orport:[fd66:0:0:2::80]:9001",
        "orport:10.66.1.81:443",
      ])
  }

  @Test func badConsensusFilesAreErrorsNamingTheFileAndLine() throws {
    let broken = try Self.write(
      Self.microdescConsensus.replacingOccurrences(of: "10.66.1.81 443 0", with: "10.66.1.81 x 0"))
    #expect(
      throws: UsageError(
        "--allow-from-consensus: \(broken) line 7: not a router line: 'r relayB CCCCCCCCCCCCCCCCCCCCCCCCCCC 2026-11-29 14:04:28 10.66.1.81 x 0'"
      )
    ) {
      try ExecCommand.consensusEndpoints(broken)
    }
    let empty = try Self.write("network-status-version 3 microdesc\n")
    #expect(
      throws: UsageError(
        "--allow-from-consensus: \(empty) lists no relay (no 'r' line): not a consensus")
    ) {
      try ExecCommand.consensusEndpoints(empty)
    }
    let badA = try Self.write(
      Self.microdescConsensus.replacingOccurrences(of: "a [fd66:0:0:2::80]:9001", with: "a nowhere")
    )
    #expect(
      throws: UsageError("--allow-from-consensus: \(badA) line 4: not a router line: 'a nowhere'")
    ) {
      try ExecCommand.consensusEndpoints(badA)
    }
    #expect(throws: UsageError.self) {
      try ExecCommand.consensusEndpoints("/nonexistent/consensus")
    }
  }

  @Test func contradictoryTorOptionsAreUsageErrors() async {
    #expect(await FailClosedMain.run(["exec", "--tor", "arti", "--", "true"]) == ExitCode.usage)
    #expect(
      await FailClosedMain.run(["exec", "--tor", "real", "--no-tor", "--", "true"])
        == ExitCode.usage)
    #expect(
      await FailClosedMain.run(["exec", "--allow-from-consensus", "/nonexistent", "--", "true"])
        == ExitCode.usage)
  }

  struct ExecReport: Decodable {
    struct Audit: Decodable {
      let verdict: String
      let leaks: [Leak]
    }
    struct Leak: Decodable {
      let destination: String
    }
    let report: Audit
    let commandStatus: Int32?
  }

  static func readReport(_ directory: String) throws -> ExecReport {
    try JSONDecoder().decode(
      ExecReport.self, from: Data(contentsOf: URL(fileURLWithPath: directory + "/report.json")))
  }

  /// A connection to 10.66.1.80:9001: a leak, unless a consensus lists that relay (the
  /// canary and the positive control of --allow-from-consensus, on the wire).
  @Test(.needsRoot)
  func aRelayListedInTheConsensusIsAllowedAndNothingElse() async throws {
    let consensus = try Self.write(Self.fullConsensus)
    let connect = [
      "bash", "-c", "timeout 3 bash -c 'exec 3<>/dev/tcp/10.66.1.80/9001' || true",
    ]
    let listed = try RepositoryFiles.temporaryDirectory()
    let status = await FailClosedMain.run(
      [
        "exec", "--no-tor", "--grace", "0.5", "--report", listed, "--allow-from-consensus",
        consensus, "--",
      ]
        + connect)
    let allowed = try Self.readReport(listed)
    #expect(status == ExitCode.pass, "\(allowed.report.leaks.map(\.destination))")
    #expect(allowed.report.verdict == "pass")

    let unlisted = try RepositoryFiles.temporaryDirectory()
    let leakStatus = await FailClosedMain.run(
      ["exec", "--no-tor", "--grace", "0.5", "--report", unlisted, "--"] + connect)
    let leaked = try Self.readReport(unlisted)
    #expect(leakStatus == ExitCode.leak)
    #expect(leaked.report.leaks.map(\.destination).contains("10.66.1.80:9001"))
    for directory in [listed, unlisted] { try? FileManager.default.removeItem(atPath: directory) }
  }
}
