import Audit
import FailClosedSupport
import Foundation
import TestSupport
import Testing

@testable import Sandbox

/// The world's servers reset, stall and answer garbage to the system under test: the harness
/// does not crash, and the verdict stays right: a client that goes through Tor still passes
/// (only the guards on the wire), a client that goes direct still leaks.
@Suite(.serialized) struct WorldFaultTests {
  static func exec(_ command: [String], fault: WorldFault) async throws -> SandboxExec.Result {
    var options = SandboxExec.Options(
      command: command, tor: true, grace: 0.2, timeout: 15, commandOutput: "/dev/null")
    options.worldFault = fault
    return try await SandboxExec.run(
      options, torStarter: SandboxExec.mockTorStarter(resolvable: ["example.org"]))
  }

  @Test(
    .needsRoot,
    arguments: [WorldFault.reset, .stall, .garbage])
  func throughTorStillPassesWhateverTheWorldAnswers(_ fault: WorldFault) async throws {
    let result = try await Self.exec(
      ["curl", "-s", "-m", "2", "--socks5-hostname", "127.0.0.1:39050", "http://example.org/"],
      fault: fault)
    #expect(result.report.verdict == .pass, "\(fault): \(result.report.leaks)")
    // The fault did bite: curl got no page (28 timeout, 52 empty reply, 56 reset, ...).
    #expect(result.commandStatus != 0, "\(fault)")
  }

  @Test(.needsRoot)
  func directStillLeaksWhenTheWorldAnswersGarbage() async throws {
    let result = try await Self.exec(
      ["curl", "-s", "-m", "2", "http://10.66.1.80/"], fault: .garbage)
    #expect(result.report.verdict == .leak)
    #expect(result.report.leaks.map(\.leakClass) == [.tcp])
  }

  /// The positive control: with no fault the page arrives through Tor.
  @Test(.needsRoot)
  func withoutAFaultThePageArrives() async throws {
    let result = try await Self.exec(
      [
        "curl", "-s", "-f", "-m", "5", "--socks5-hostname", "127.0.0.1:39050",
        "http://example.org/",
      ],
      fault: .none)
    #expect(result.report.verdict == .pass)
    #expect(result.commandStatus == 0)
  }
}
