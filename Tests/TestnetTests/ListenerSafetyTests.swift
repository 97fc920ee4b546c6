import Foundation
import TestSupport
import Testing
import TorControl

@testable import Testnet

/// Listeners bind loopback unless told otherwise: every place in the product that binds a
/// socket is known, with why it is safe; a new one fails this test until reviewed.
@Suite struct ListenerSafetyTests {
  static let bindPatterns = ["Socket.listen(on", "ServiceSocket.listen(on", "bind("]

  static let reviewed: [String: String] = [
    "Sources/Edges/FailClosedSupport/Socket.swift": "the primitive itself",
    "Sources/Device/MockTor/SOCKSListener.swift":
      "MockTor refuses a non-loopback SOCKS address unless --force-non-loopback "
      + "(MockTorBehaviourTests.refusesNonLoopbackUnlessAllowed)",
    "Sources/Device/MockTor/ControlPortListener.swift":
      "refuses a non-loopback address unless allowNonLoopback "
      + "(ControlPortTests.refusesNonLoopbackAddresses)",
    "Sources/Edges/TLS/HTTPServer.swift":
      "127.0.0.1:0 by default; the world hands it sockets bound inside its namespace",
    "Sources/Edges/FailClosedSupport/DatagramSocket.swift":
      "the UDP primitive: bound by the world's resolver and tests inside the harness's namespaces",
    "Sources/Device/Sandbox/FakeResolver.swift":
      "in the world or censor namespace (namespace.perform)",
    "Sources/Device/Sandbox/WorldServices.swift": "in the world namespace (world.perform)",
    "Sources/Device/Sandbox/CensorCloser.swift": "in the censor namespace (censor.perform)",
    "Sources/Front/fcbench/EchoServer.swift": "127.0.0.1:0",
    "Sources/Front/fcbench/PacketRingSender.swift":
      "an AF_PACKET socket bound to the device's link inside the sandbox's device namespace "
      + "(device.perform): it sends frames to the censor's sink and listens on nothing",
  ]

  @Test func everyPlaceThatBindsIsReviewed() {
    var found: Set<String> = []
    for path in TorPinningTests.files(under: "Sources") where path.hasSuffix(".swift") {
      guard
        let text = try? String(contentsOfFile: repositoryRoot + "/" + path, encoding: .utf8)
      else { continue }
      if Self.bindPatterns.contains(where: { text.contains($0) }) { found.insert(path) }
    }
    #expect(found.contains("Sources/Device/MockTor/SOCKSListener.swift"), "the scan finds them")
    let unreviewed = found.subtracting(Self.reviewed.keys).sorted()
    #expect(unreviewed.isEmpty, "binds a socket, not reviewed: \(unreviewed)")
    let gone = Set(Self.reviewed.keys).subtracting(found).sorted()
    #expect(gone.isEmpty, "reviewed but no longer binds (update the list): \(gone)")
  }

  /// The tor clients the harness starts listen (SOCKS, control) on loopback only.
  @Test func torClientsListenOnLoopback() {
    let options = ClientTorrc.options(
      dataDirectory: "/d", logDirectory: "/d", socksPort: 39050, controlPort: 39051,
      bridges: [], disableNetwork: true)
    let listeners = options.filter { $0.hasPrefix("SocksPort") || $0.hasPrefix("ControlPort") }
    #expect(listeners == ["SocksPort 127.0.0.1:39050", "ControlPort 127.0.0.1:39051"])
  }
}
