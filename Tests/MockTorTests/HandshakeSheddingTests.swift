import FailClosedSupport
import Foundation
import Testing

@testable import MockTor

/// A flood of silent handshakes against a loop that may hold only a few: each new client
/// sheds the oldest one still handshaking, in the order they came, across thousands of
/// clients (so the loop's list of handshakes by age is compacted on the way, more than once).
@Suite(.serialized) struct HandshakeSheddingTests {
  static let held = 8
  static let clients = 3_000

  @Test func theOldestSilentHandshakeIsShedFirstThroughoutAFlood() async throws {
    let mock = try makeMock(.ctor) { configuration in
      configuration.maxConnections = Self.held
      configuration.socksLoopThreads = 1
    }
    defer { mock.stop() }
    let proxy = try #require(mock.socksAddress)
    let (shedInOrder, stillOpen) = try await BlockingIO.run("test.shedding") {
      var open: [Socket] = []
      defer { for socket in open { socket.close() } }
      var shedInOrder = 0
      for index in 0..<Self.clients {
        let socket = try Socket.connect(to: proxy, timeout: 5)
        socket.setTimeouts(seconds: 10)
        open.append(socket)
        guard index >= Self.held else { continue }
        // Accepting this client sheds the oldest handshake: the one `held` places back, whose
        // read now ends (its close, not a reply: it never said a word). A client shed out of
        // order leaves this one open, and the read runs into its timeout.
        let oldest = open.removeFirst()
        defer { oldest.close() }
        guard (try? oldest.read()) == [] else { break }
        shedInOrder += 1
      }
      // The last `held` clients came after every shedding, and none of them was shed.
      let stillOpen = try open.filter { try $0.poll(.readable, timeout: 0).isEmpty }.count
      return (shedInOrder, stillOpen)
    }
    #expect(shedInOrder == Self.clients - Self.held)
    #expect(stillOpen == Self.held)
  }
}
