import FailClosedSupport
import Foundation
import TestSupport
import Testing

@testable import Sandbox

/// Each rule kind, for real: the device connects through the censor to a world service.
@Suite("Censor")
struct CensorTests {
  static let echo = SocketAddress("10.66.1.80:8080")!

  /// What a TCP connect from the device saw: success, or the errno and any ICMP error.
  struct ConnectOutcome: Equatable {
    var code: Int32?
    var icmp: (type: UInt8, code: UInt8)?
    static func == (a: Self, b: Self) -> Bool {
      a.code == b.code && a.icmp?.type == b.icmp?.type && a.icmp?.code == b.icmp?.code
    }
  }

  static func connect(_ run: SandboxRun, to target: SocketAddress, timeout: Double = 0.6)
    async throws -> ConnectOutcome
  {
    try await run.device.run {
      // A raw ICMP socket sees every ICMP message arriving in the device.
      let raw = socket(AF_INET, Int32(SOCK_RAW.rawValue), Int32(IPPROTO_ICMP))
      guard raw >= 0 else { throw SystemError("socket(raw ICMP)") }
      defer { close(raw) }
      var outcome = ConnectOutcome()
      do {
        let socket = try Socket.connect(to: target, timeout: timeout)
        socket.close()
      } catch let error as SystemError {
        outcome.code = error.code
      }
      var pfd = pollfd(fd: raw, events: Int16(POLLIN), revents: 0)
      if poll(&pfd, 1, 100) > 0 {
        var buffer = [UInt8](repeating: 0, count: 1500)
        let n = recv(raw, &buffer, buffer.count, 0)
        if n > 0 {
          let headerLength = Int(buffer[0] & 0x0f) * 4
          if n >= headerLength + 2 {
            outcome.icmp = (buffer[headerLength], buffer[headerLength + 1])
          }
        }
      }
      return outcome
    }
  }

  static func withWorld(_ rules: [CensorRule], _ body: (SandboxRun) async throws -> Void)
    async throws
  {
    try await withSandbox { run in
      try await BlockingIO.run {
        _ = try run.startWorld()
        try run.applyCensorRules(rules)
      }
      try await body(run)
    }
  }

  @Test(.needsRoot)
  func withoutRulesTheConnectSucceeds() async throws {
    try await Self.withWorld([]) { run in
      let outcome = try await Self.connect(run, to: Self.echo)
      #expect(outcome == ConnectOutcome())
    }
  }

  @Test(.needsRoot)
  func dropBlackholesTheConnect() async throws {
    try await Self.withWorld([CensorRule(action: .drop, destination: "10.66.1.80", port: 8080)]) {
      run in
      let outcome = try await Self.connect(run, to: Self.echo)
      #expect(outcome == ConnectOutcome(code: ETIMEDOUT))
      // Another port to the same address passes.
      let other = SocketAddress("10.66.1.80:8081")!
      let otherOutcome = try await Self.connect(run, to: other)
      #expect(otherOutcome == ConnectOutcome())
    }
  }

  @Test(.needsRoot)
  func resetRefusesTheConnectWithoutICMP() async throws {
    try await Self.withWorld([CensorRule(action: .reset, port: 8080, protocol: .tcp)]) { run in
      let outcome = try await Self.connect(run, to: Self.echo)
      #expect(outcome == ConnectOutcome(code: ECONNREFUSED))
    }
  }

  @Test(
    .needsRoot,
    arguments: [
      (CensorRule.Action.icmpPortUnreachable, ECONNREFUSED, UInt8(3)),
      (.icmpHostUnreachable, EHOSTUNREACH, 1),
      (.icmpAdminProhibited, EHOSTUNREACH, 13),
    ])
  func icmpRejectsSendTheChosenICMP(action: CensorRule.Action, errno: Int32, code: UInt8)
    async throws
  {
    try await Self.withWorld([CensorRule(action: action, destination: "10.66.1.0/24")]) { run in
      let outcome = try await Self.connect(run, to: Self.echo)
      #expect(outcome == ConnectOutcome(code: errno, icmp: (3, code)))
    }
  }

  @Test(.needsRoot)
  func sizeRuleDropsLargePacketsAndPassesSmallOnes() async throws {
    try await Self.withWorld([CensorRule(action: .drop, protocol: .udp, longerThan: 600)]) { run in
      let sink = SocketAddress("10.66.1.80:4000")!
      let receiver = try await run.world.run { try DatagramSocket.bound(to: sink) }
      let sender = try await run.device.run { try DatagramSocket(.ipv4) }
      try sender.send([UInt8](repeating: 1, count: 1000), to: sink)
      try sender.send([UInt8](repeating: 2, count: 100), to: sink)
      let first = try await BlockingIO.run { try receiver.receive(timeout: 1) }
      #expect(first?.0.count == 100)
      let second = try await BlockingIO.run { try receiver.receive(timeout: 0.3) }
      #expect(second == nil)
    }
  }

  @Test(.needsRoot)
  func poisonedAnswersComeFromTheCensor() async throws {
    let rule = CensorRule(
      action: .poisonDNS, poisonAddress: "10.66.1.99", names: ["blocked.example"])
    try await Self.withWorld([rule]) { run in
      let resolver = SocketAddress(host: AddressPlan.resolverV4, port: 53)!
      let client = try await run.device.run { try DatagramSocket(.ipv4) }
      func ask(_ name: String) async throws -> [[UInt8]] {
        try client.send(DNSMessage.query(id: 7, name: name, type: DNSQuestion.typeA), to: resolver)
        let reply = try await BlockingIO.run { try client.receive(timeout: 2) }
        return DNSMessage.answerAddresses(reply?.0 ?? [])
      }
      let poisoned = try await ask("www.blocked.example")
      let passed = try await ask("open.example")
      #expect(poisoned == [[10, 66, 1, 99]])
      #expect(passed == [[10, 66, 1, 80]])
      #expect(run.poisonedQuestions.map(\.name) == ["www.blocked.example", "open.example"])
      // The world never heard the questions: the censor answered them.
      #expect(run.worldServices.withLock { $0?.resolver.questions.isEmpty } == true)
    }
  }

  @Test(.needsRoot)
  func theWorldResolverAnswersAndRecords() async throws {
    try await Self.withWorld([]) { run in
      let output = try await BlockingIO.run {
        try CommandRunner.run([
          "ip", "netns", "exec", run.names.device, "dig", "+short", "+tries=1", "+time=2",
          "example.org", "AAAA",
        ])
      }
      #expect(output.stdout.contains(AddressPlan.webHostV6))
      let questions = run.worldServices.withLock { $0?.resolver.questions ?? [] }
      #expect(questions.map(\.name) == ["example.org"])
      #expect(questions.first?.type == DNSQuestion.typeAAAA)
    }
  }

  @Test func invalidRulesNameTheField() throws {
    #expect(
      throws: CensorRuleError(field: "rules[1].protocol", message: "a reset needs TCP, not udp")
    ) {
      _ = try CensorRuleset.render(
        table: "t", rules: [CensorRule(action: .drop), CensorRule(action: .reset, protocol: .udp)])
    }
    #expect(throws: CensorRuleError.self) {
      try CensorRule(action: .drop, destination: "10.66.1.0/33").validate()
    }
    #expect(throws: CensorRuleError.self) {
      try CensorRule(action: .poisonDNS).validate()
    }
  }

  @Test func rulesDecodeFromScenarioJSON() throws {
    let json = #"[{"action":"icmp-admin-prohibited","destination":"fd66::/16","port":443}]"#
    let rules = try JSONDecoder().decode([CensorRule].self, from: Data(json.utf8))
    #expect(
      rules == [CensorRule(action: .icmpAdminProhibited, destination: "fd66::/16", port: 443)])
    let text = try CensorRuleset.render(table: "t", rules: rules)
    #expect(
      text.contains(
        "ip6 daddr fd66::/16 meta l4proto { tcp, udp } th dport 443 reject with icmpx type admin-prohibited"
      ))
  }
}
