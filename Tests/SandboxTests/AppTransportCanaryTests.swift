import Audit
import FailClosedSupport
import Foundation
import Sandbox
import TestSupport
import Testing

/// The system under test's transports through `failclosed exec`: the naive port (Foundation's
/// URLSession with bitchat's SOCKS dictionary, which Linux ignores) must be caught leaking; the
/// project's own Tor transport (SOCKS5 with the hostname, then TLS) must pass.
@Suite(.serialized, .needsRoot)
struct AppTransportCanaryTests {
  static func runApp(profile: String) async throws -> SandboxExec.Result {
    let actions = NSTemporaryDirectory() + "fc-app-actions-\(profile)-\(getpid()).jsonl"
    try """
    {"at": 0, "action": "start"}
    {"at": 2, "action": "send-message", "text": "canary"}
    {"at": 12, "action": "wait", "seconds": 0}

    """.write(toFile: actions, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(atPath: actions) }
    return try await SandboxExec.run(
      SandboxExec.Options(
        command: [
          FailclosedBinary.path, "app", "--backend", "arti", "--profile", profile, "--actions",
          actions,
          "--time-scale", "10",
        ], tor: true, grace: 0.5, timeout: 30),
      torStarter: SandboxExec.mockTorStarter())
  }

  @Test func theNaivePortLeaksDNSAndClearnet() async throws {
    let result = try await Self.runApp(profile: "naive-port")
    #expect(result.report.verdict == .leak)
    #expect(result.report.leaks.contains { $0.leakClass == .dns })
    #expect(!result.dnsQuestions.isEmpty, "the world's resolver was asked by the device")
  }

  @Test func theProjectsOwnTorTransportPasses() async throws {
    let result = try await Self.runApp(profile: "bitchat")
    #expect(result.report.verdict == .pass, "\(result.report.leaks)")
    #expect(result.dnsQuestions.isEmpty)
    #expect(
      result.report.flows.contains { $0.disposition == "allowed" },
      "the app reached the relays through the guard")
  }
}
