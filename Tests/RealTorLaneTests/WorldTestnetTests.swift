import FailClosedSupport
import Foundation
import Sandbox
import Testing
import Testnet

@testable import RealTorLane

/// The private network in the world namespace, a real tor client in the device namespace, and
/// the censor between them: healthy, relays reset, bridge only.
@Suite(.serialized, .enabled(if: Privilege.rootSkipReason == nil, "needs root"))
struct WorldTestnetTests {
  @Test func clientBootstrapsThenStallsUnderResetThenBridgesAround() async throws {
    let base = NSTemporaryDirectory() + "fc-lane-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    defer { try? FileManager.default.removeItem(atPath: base) }
    try await withSandbox { sandbox in
      let testnet = WorldTestnet(sandbox: sandbox, directory: base + "/net")
      defer { testnet.stop() }
      try await testnet.start()
      let allowlist = try testnet.allowlist()
      #expect(allowlist.contains(SocketAddress("10.66.1.104:9001")!))

      let healthy = try DeviceTorClient(sandbox: sandbox, testnet: testnet, directory: base + "/c1")
      let steps = try await healthy.observe(seconds: 60)
      healthy.stop()
      #expect(steps.last?.progress == 100, "timeline: \(steps)")

      // Reset every relay port: tor stays at 5% (conn) and says CONNECTREFUSED.
      try await BlockingIO.run {
        try sandbox.applyCensorRules([CensorRule(action: .reset, port: 9001, protocol: .tcp)])
      }
      let blocked = try DeviceTorClient(sandbox: sandbox, testnet: testnet, directory: base + "/c2")
      let stuck = try await blocked.observe(seconds: 20)
      blocked.stop()
      #expect(stuck.map(\.progress).max() ?? 0 < 10, "timeline: \(stuck)")
      #expect(stuck.contains { $0.reason == "CONNECTREFUSED" }, "timeline: \(stuck)")

      // The obfs4 bridge (port 4433) is not blocked: bootstrap goes through it.
      let bridge = try #require(try testnet.network.bridgeLine())
      let bridged = try DeviceTorClient(
        sandbox: sandbox, testnet: testnet, directory: base + "/c3", bridges: [bridge])
      let viaBridge = try await bridged.observe(seconds: 60)
      bridged.stop()
      #expect(viaBridge.last?.progress == 100, "timeline: \(viaBridge)")
      #expect(viaBridge.contains { $0.tag.hasSuffix("_pt") })
    }
  }
}
