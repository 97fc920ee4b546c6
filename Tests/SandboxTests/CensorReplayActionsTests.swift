import FailClosedSupport
import Foundation
import TestSupport
import Testing

@testable import Sandbox

/// The censor actions added for replayed OONI measurements, for real through the censor to
/// the world's echo: each has its canary (the failure OONI names) and a positive control.
@Suite("Censor replay actions")
struct CensorReplayActionsTests {
  static let echo = SocketAddress("10.66.1.80:8080")!

  /// Connects from the device, writes `bytes`, reads once: the bytes back, or the errno.
  static func exchange(_ run: SandboxRun, _ target: SocketAddress, bytes: Int) async throws
    -> Result<Int, SystemError>
  {
    try await run.device.run {
      let socket: Socket
      do {
        socket = try Socket.connect(to: target, timeout: 2)
      } catch let error as SystemError {
        return .failure(error)
      }
      defer { socket.close() }
      socket.setTimeouts(seconds: 2)
      do {
        try socket.write([UInt8](repeating: 0x41, count: bytes))
        return .success(try socket.read(max: 4096).count)
      } catch let error as SystemError {
        return .failure(error)
      }
    }
  }

  @Test(.needsRoot)
  func resetAfterHandshakeLetsTheConnectThroughAndResetsTheFirstLargePacket() async throws {
    let rule = CensorRule(action: .resetAfterHandshake, destination: "10.66.1.80", port: 8080)
    try await CensorTests.withWorld([rule]) { run in
      // Positive control: the handshake and a small write pass, the echo answers.
      let small = try await Self.exchange(run, Self.echo, bytes: 20)
      #expect(small == .success(20))
      // The canary: a ClientHello-sized write is answered with a reset.
      let large = try await Self.exchange(run, Self.echo, bytes: 300)
      #expect((try? large.get()) == nil)
      if case .failure(let error) = large { #expect(error.code == ECONNRESET) }
    }
  }

  @Test(.needsRoot)
  func closeAfterConnectAcceptsAndClosesWithAFin() async throws {
    let rule = CensorRule(action: .closeAfterConnect, destination: "10.66.1.80", port: 8080)
    try await CensorTests.withWorld([rule]) { run in
      // The canary: connected, then EOF (0 bytes), not a reset, even after writing.
      let closed = try await Self.exchange(run, Self.echo, bytes: 300)
      #expect(closed == .success(0))
      // Positive control: another port still reaches the world's echo.
      let other = SocketAddress("10.66.1.80:8081")!
      let echoed = try await Self.exchange(run, other, bytes: 300)
      #expect(echoed == .success(300))
    }
  }

  @Test(.needsRoot)
  func icmpNetUnreachableFailsTheConnectWithENETUNREACH() async throws {
    let rule = CensorRule(action: .icmpNetUnreachable, destination: "10.66.1.80", port: 8080)
    try await CensorTests.withWorld([rule]) { run in
      let outcome = try await CensorTests.connect(run, to: Self.echo)
      #expect(outcome == CensorTests.ConnectOutcome(code: ENETUNREACH, icmp: (3, 0)))
      let other = try await CensorTests.connect(run, to: SocketAddress("10.66.1.80:8081")!)
      #expect(other == CensorTests.ConnectOutcome())
    }
  }

  @Test func theNewActionsRenderAsNftables() throws {
    let text = try CensorRuleset.render(
      table: "t",
      rules: [
        CensorRule(action: .resetAfterHandshake, destination: "10.66.1.102", port: 9001),
        CensorRule(action: .closeAfterConnect, destination: "10.66.1.103", port: 9030),
        CensorRule(action: .icmpNetUnreachable, destination: "10.66.1.104", port: 9001),
      ])
    #expect(
      text.contains(
        "iifname \"dev0\" ip daddr 10.66.1.102 tcp dport 9001 meta length > 100 reject with tcp reset"
      ))
    #expect(
      text.contains(
        "iifname \"dev0\" ip daddr 10.66.1.103 meta l4proto tcp tcp dport 9030 dnat ip to 10.66.0.1:7070"
      ))
    #expect(
      text.contains(
        "ip daddr 10.66.1.104 meta l4proto { tcp, udp } th dport 9001 reject with icmpx type no-route"
      ))
    #expect(throws: CensorRuleError.self) {
      try CensorRule(action: .closeAfterConnect, protocol: .udp).validate()
    }
    #expect(throws: CensorRuleError.self) {
      try CensorRule(action: .resetAfterHandshake, longerThan: 50).validate()
    }
  }
}
