import FailClosedSupport
import Foundation
import TestSupport
import Testing

@testable import Sandbox

/// Issue 20: poisoning answered A only, and an app that asks AAAA first (bitchat) connected
/// anyway. With a poison rule per family (as the scenarios' mapping writes them), both answers
/// are the censor's; with the v4 rule alone (the canary: the old mapping) AAAA still reaches
/// the world's answer.
@Suite("DNS poisoning, A and AAAA", .serialized)
struct DNSPoisoningBothFamiliesTests {
  static func dig(_ run: SandboxRun, _ name: String, _ type: String) async throws -> String {
    try await BlockingIO.run {
      try CommandRunner.run([
        "ip", "netns", "exec", run.names.device, "dig", "+short", "+tries=1", "+time=2", name, type,
      ]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
  }

  static func rule(_ address: String) -> CensorRule {
    CensorRule(action: .poisonDNS, poisonAddress: address, names: ["nos.lol"])
  }

  @Test(.needsRoot)
  func bothRecordTypesArePoisoned() async throws {
    let rules = [
      Self.rule(AddressPlan.censorWorldSideV4), Self.rule(AddressPlan.censorWorldSideV6),
    ]
    try await CensorTests.withWorld(rules) { run in
      let a = try await Self.dig(run, "nos.lol", "A")
      let aaaa = try await Self.dig(run, "nos.lol", "AAAA")
      // Another name passes: the world's answer.
      let other = try await Self.dig(run, "relay.damus.io", "AAAA")
      #expect(a == AddressPlan.censorWorldSideV4)
      #expect(aaaa == AddressPlan.censorWorldSideV6)
      #expect(other == AddressPlan.webHostV6)
    }
  }

  @Test(.needsRoot)
  func withTheV4RuleAloneAAAAEscapesThePoisoning() async throws {
    try await CensorTests.withWorld([Self.rule(AddressPlan.censorWorldSideV4)]) { run in
      let a = try await Self.dig(run, "nos.lol", "A")
      let aaaa = try await Self.dig(run, "nos.lol", "AAAA")
      #expect(a == AddressPlan.censorWorldSideV4)
      #expect(aaaa == AddressPlan.webHostV6)
    }
  }
}
