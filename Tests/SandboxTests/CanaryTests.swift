import Audit
import Capture
import FailClosedSupport
import Foundation
import TestSupport
import Testing

@testable import Sandbox

/// Canaries that must be caught and controls that must pass, each through the exec path
/// (sandbox, capture, positive control, process-tree wait, audit).
@Suite("Canaries and controls")
struct CanaryTests {
  struct Canary: Sendable, CustomTestStringConvertible {
    let name: String
    let command: [String]
    let leakClass: LeakClass
    var testDescription: String { name }
  }

  static let withoutTor: [Canary] = [
    Canary(
      name: "direct TCP", command: ["curl", "-s", "-m", "2", "http://10.66.1.80/"], leakClass: .tcp),
    Canary(
      name: "UDP DNS", command: ["dig", "+short", "+tries=1", "+time=1", "example.org"],
      leakClass: .dns),
    Canary(
      name: "DNS over TCP",
      command: ["dig", "+tcp", "+short", "+tries=1", "+time=1", "example.org"],
      leakClass: .dns),
    Canary(
      name: "DNS over TLS (853)", command: ["nc", "-z", "-w", "1", "10.66.1.80", "853"],
      leakClass: .dns),
    Canary(
      name: "IPv6 UDP", command: ["sh", "-c", "echo hi | nc -u -w 1 fd66:0:0:2::80 9999"],
      leakClass: .ipv6),
    Canary(
      name: "ICMP echo", command: ["ping", "-c", "1", "-W", "1", "10.66.1.80"], leakClass: .icmp),
    Canary(
      name: "mDNS query",
      command: [
        "dig", "+short", "+tries=1", "+time=1", "-p", "5353", "@224.0.0.251", "printer.local",
      ],
      leakClass: .dns),
    Canary(
      name: "background child leaking 2 s after its parent exits",
      command: [
        "sh", "-c", "setsid sh -c 'sleep 2; nc -z -w 1 10.66.1.80 80' >/dev/null 2>&1 & exit 0",
      ],
      leakClass: .tcp),
  ]

  static func exec(_ command: [String], tor: Bool = false, output: String = "/dev/null")
    async throws -> SandboxExec.Result
  {
    try await SandboxExec.run(
      SandboxExec.Options(
        command: command, tor: tor, grace: 0.3, timeout: 20, commandOutput: output),
      torStarter: SandboxExec.mockTorStarter(resolvable: ["example.org"]))
  }

  /// A proxychains4 configuration pointing at the mock Tor, with or without proxy_dns.
  static func proxychainsConfig(proxyDNS: Bool) throws -> String {
    let path = NSTemporaryDirectory() + "fc-proxychains-\(proxyDNS ? "on" : "off")-\(getpid()).conf"
    let text =
      "strict_chain\n" + (proxyDNS ? "proxy_dns\nremote_dns_subnet 224\n" : "")
      + "tcp_read_time_out 15000\ntcp_connect_time_out 8000\n[ProxyList]\nsocks5 127.0.0.1 39050\n"
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return path
  }

  static let url = "http://example.org/canary"

  @Test(.needsRoot)
  func socksClientsThatResolveLocallyLeak() async throws {
    let off = try Self.proxychainsConfig(proxyDNS: false)
    for command in [
      ["curl", "-s", "-m", "3", "--socks5", "127.0.0.1:39050", Self.url],
      ["proxychains4", "-q", "-f", off, "curl", "-s", "-m", "3", Self.url],
    ] {
      let result = try await Self.exec(command, tor: true)
      #expect(result.report.verdict == .leak, "\(command): \(AuditSummary.text(result.report))")
      #expect(
        result.report.leaks.contains { $0.leakClass == .dns && $0.names.contains("example.org") })
      // The request itself still went through Tor: the leak is the name, not the stream.
      #expect(result.report.statistics.allowedPackets > 0)
    }
  }

  @Test(.needsRoot)
  func socksClientsThatSendTheNamePass() async throws {
    let on = try Self.proxychainsConfig(proxyDNS: true)
    for command in [
      ["curl", "-s", "-m", "3", "--socks5-hostname", "127.0.0.1:39050", Self.url],
      ["torsocks", "-P", "39050", "curl", "-s", "-m", "3", Self.url],
      ["proxychains4", "-q", "-f", on, "curl", "-s", "-m", "3", Self.url],
    ] {
      let output = NSTemporaryDirectory() + "fc-canary-\(UUID().uuidString).out"
      defer { try? FileManager.default.removeItem(atPath: output) }
      let result = try await Self.exec(command, tor: true, output: output)
      #expect(result.report.verdict == .pass, "\(command): \(AuditSummary.text(result.report))")
      // A pass only counts if the request really arrived through the guard.
      let body = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
      #expect(body.contains("failclosed world: example.org/canary"), "\(command): \(body)")
      #expect(result.commandStatus == 0)
    }
  }

  @Test(.needsRoot, arguments: withoutTor)
  func leakIsCaught(_ canary: Canary) async throws {
    let result = try await Self.exec(canary.command)
    #expect(result.report.verdict == .leak, "\(AuditSummary.text(result.report))")
    #expect(result.report.leaks.contains { $0.leakClass == canary.leakClass })
    #expect(result.report.verdict.exitCode == 5)
  }

  @Test(.needsRoot)
  func aCommandThatSendsNothingPasses() async throws {
    let result = try await Self.exec(["true"])
    #expect(result.report.verdict == .pass, "\(AuditSummary.text(result.report))")
    #expect(result.report.statistics.controlPackets > 0)
    #expect(result.commandStatus == 0)
  }

  @Test(.needsRoot)
  func reportAndCaptureAreWritten() async throws {
    let directory = NSTemporaryDirectory() + "failclosed-exec-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let result = try await SandboxExec.run(
      SandboxExec.Options(
        command: ["dig", "+short", "+tries=1", "+time=1", "leaky.example"], tor: false, grace: 0.2,
        reportDirectory: directory, commandOutput: "/dev/null"))
    #expect(result.report.leaks.contains { $0.names.contains("leaky.example") })
    #expect(result.dnsQuestions.map(\.name) == ["leaky.example"])
    let json = try Data(contentsOf: URL(fileURLWithPath: directory + "/report.json"))
    let decoded = try JSONDecoder().decode(SandboxExec.Result.self, from: json)
    #expect(decoded.report.verdict == .leak)
    // The pcap reads back with the same verdict.
    let again = try PcapFileReader.audit(
      path: directory + "/capture.pcap", policy: AuditPolicy(allowed: []))
    #expect(again.verdict == .leak)
    #expect(Leftovers.of(SandboxNames(prefix: result.prefix)) == [])
  }
}
