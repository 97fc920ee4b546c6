import FailClosedSupport
import Foundation
import MockTor
import SOCKS
import TestSupport
import Testing

/// An echo server on 127.0.0.1: every connection gets back what it sends, and its close once
/// the client closes its side. `delay` holds each echo a moment, so the mock's buffers fill.
final class EchoDestination: @unchecked Sendable {
  let listener: Socket
  let address: SocketAddress
  private let delay: Double

  init(delay: Double = 0) throws {
    listener = try Socket.listen(on: SocketAddress("127.0.0.1:0")!)
    address = listener.localAddress!
    self.delay = delay
    BlockingIO.detach("test.echo") { [self] in serve() }
  }

  private func serve() {
    while let (client, _) = try? listener.accept() {
      BlockingIO.detach("test.echo.client") { [delay] in
        client.setTimeouts(seconds: 10)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while let count = try? client.read(into: &buffer), count > 0 {
          if delay > 0 { usleep(UInt32(delay * 1_000_000)) }
          guard (try? client.write(Array(buffer.prefix(count)))) != nil else { break }
        }
        client.close()
      }
    }
  }

  func stop() { listener.shutdown() }
}

/// Opens a SOCKS5 CONNECT stream to `host` through `proxy` and returns it once answered.
func openStream(
  through proxy: SocketAddress, host: String, port: UInt16,
  credentials: SOCKSClientHandshake.Credentials = .none
) throws -> Socket {
  let socket = try Socket.connect(to: proxy, timeout: 5)
  socket.setTimeouts(seconds: 10)
  var client = try SOCKSClientHandshake(
    target: .hostname(host), port: port, credentials: credentials)
  try socket.write(client.greeting())
  var buffer: [UInt8] = []
  while true {
    let action = client.handle(buffer)
    buffer.removeFirst(action.consumed)
    if !action.send.isEmpty { try socket.write(action.send) }
    switch action.outcome {
    case .continueHandshake: continue
    case .failed(let error):
      socket.close()
      throw error
    case .finished: return socket
    case .needMoreInput:
      let chunk = try socket.read()
      guard !chunk.isEmpty else { throw SOCKSError(.malformedReply("closed"), at: 0) }
      buffer += chunk
    }
  }
}

/// A ctor mock that maps echo.test to `echo`, and its SOCKS address.
func mockRelaying(to echo: EchoDestination) throws -> (MockTor, SocketAddress) {
  var map = DestinationMap()
  map.add("echo.test", echo.address)
  let mock = try makeMock(.ctor, destinations: map)
  guard let proxy = mock.socksAddress else {
    mock.stop()
    throw SystemError("mock Tor: no SOCKS address after start", code: EADDRNOTAVAIL)
  }
  return (mock, proxy)
}

/// Streams without toxics, relayed on the listener's event loop: whole and in order under
/// back-pressure, half-closes passed on, every stream closed and logged when the mock stops.
@Suite(.serialized) struct LoopStreamTests {
  @Test func megabytesBothWaysArriveWholeThroughASlowDestination() async throws {
    let echo = try EchoDestination(delay: 0.002)
    defer { echo.stop() }
    let (mock, proxy) = try mockRelaying(to: echo)
    defer { mock.stop() }
    let total = 4 << 20
    let sent = (0..<total).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 13) }
    let received = try await BlockingIO.run("test.loop.bulk") {
      let socket = try openStream(through: proxy, host: "echo.test", port: 7)
      defer { socket.close() }
      // The writer runs beside the reader: the echo comes back while the rest is still going up.
      BlockingIO.detach("test.loop.bulk.writer") {
        var offset = 0
        while offset < total {
          let end = min(total, offset + 100_000)
          guard (try? socket.write(Array(sent[offset..<end]))) != nil else { return }
          offset = end
        }
        socket.shutdownWrite()
      }
      var received: [UInt8] = []
      received.reserveCapacity(total)
      var buffer = [UInt8](repeating: 0, count: 65536)
      while let count = try? socket.read(into: &buffer), count > 0 {
        received += buffer.prefix(count)
      }
      return received
    }
    #expect(received.count == total)
    #expect(received == sent, "the echo differs from what was sent")
    mock.stop()
    let record = try #require(mock.eventLog.events("socks").first)
    #expect(record["outcome"]?.stringValue == "closed", "the client closed first, then the echo")
    #expect(record["bytes_up"]?.intValue == total)
    #expect(record["bytes_down"]?.intValue == total)
    #expect(record["target"]?.stringValue == echo.address.description)
  }

  @Test func stoppingTheMockClosesAndLogsEveryStreamOnTheLoop() async throws {
    let echo = try EchoDestination()
    defer { echo.stop() }
    let (mock, proxy) = try mockRelaying(to: echo)
    defer { mock.stop() }
    let streams = try await BlockingIO.run("test.loop.stop") {
      try (0..<20).map { _ in
        let socket = try openStream(through: proxy, host: "echo.test", port: 7)
        try socket.write([0x2A])
        guard try socket.read(max: 1) == [0x2A] else {
          throw SOCKSError(.malformedReply("echo"), at: 0)
        }
        return socket
      }
    }
    defer { for socket in streams { socket.close() } }
    #expect(mock.connectionCounts.current == 20)
    mock.stop()
    #expect(mock.connectionCounts.current == 0)
    // Every client sees its stream end: end of file (or a reset), never a hang.
    for socket in streams { #expect(((try? socket.read(max: 1)) ?? []) == []) }
    let outcomes = mock.eventLog.events("socks").map { $0["outcome"]?.stringValue }
    #expect(outcomes.count == 20)
    #expect(outcomes.allSatisfy { $0 == "closed by mock" }, "\(outcomes)")
  }

  @Test func aRefusedConnectGetsTheReplyOfEachPersonality() throws {
    let closed = try Socket.listen(on: SocketAddress("127.0.0.1:0")!)
    let port = closed.localAddress!.port
    closed.close()
    var map = DestinationMap()
    map.add("nobody.test", SocketAddress(bytes: [127, 0, 0, 1], port: port)!)
    for (personality, code) in [
      (MockTorPersonality.ctor, SOCKSReplyCode.connectionRefused),
      (.arti, .connectionRefused),
    ] {
      let mock = try makeMock(personality, destinations: map)
      defer { mock.stop() }
      let proxy = try #require(mock.waitForListener())
      #expect(throws: SOCKSError(.rejected(code), at: 3)) {
        try openStream(through: proxy, host: "nobody.test", port: 80).close()
      }
      mock.stop()
      let record = try #require(mock.eventLog.events("socks").first)
      #expect(record["outcome"]?.stringValue == "connect failed: ECONNREFUSED")
      #expect(record["reply"]?.intValue == Int(code.rawValue))
    }
  }

  /// The client closes its side first: its close reaches the destination, the destination's
  /// answer and close come back, and the client reads the end of the stream (a FIN, never a
  /// reset, though the mock no longer shuts the client's side down before closing it).
  @Test func aClientsCloseComesBackAsTheEndOfTheStream() async throws {
    let echo = try EchoDestination()
    defer { echo.stop() }
    let (mock, proxy) = try mockRelaying(to: echo)
    defer { mock.stop() }
    let (echoed, end) = try await BlockingIO.run("test.loop.halfclose") {
      let stream = try openStream(through: proxy, host: "echo.test", port: echo.address.port)
      defer { stream.close() }
      try stream.write([0x2A, 0x2B])
      var echoed: [UInt8] = []
      while echoed.count < 2 { echoed += try stream.read() }
      stream.shutdownWrite()
      return (echoed, try stream.read())
    }
    #expect(echoed == [0x2A, 0x2B])
    #expect(end.isEmpty)
    #expect(
      await waitUntil(timeout: 5) { mock.eventLog.events("socks").first?["outcome"] == "closed" })
    let record = try #require(mock.eventLog.events("socks").first)
    #expect(record["bytes_up"]?.intValue == 2)
    #expect(record["bytes_down"]?.intValue == 2)
  }

  @Test func theDestinationsCloseEndsTheStreamAfterItsLastBytes() async throws {
    let web = try TinyHTTPServer(body: String(repeating: "y", count: 300_000))
    defer { web.stop() }
    var map = DestinationMap()
    map.add("web.test", SocketAddress(bytes: [127, 0, 0, 1], port: web.port)!)
    let mock = try makeMock(.ctor, destinations: map)
    defer { mock.stop() }
    let proxy = try #require(mock.socksAddress)
    let page = try await BlockingIO.run("test.loop.page") {
      try fetch(through: proxy, host: "web.test")
    }
    #expect(page.hasSuffix(web.body))
    mock.stop()
    let record = try #require(mock.eventLog.events("socks").first)
    #expect(record["outcome"]?.stringValue == "destination closed")
    #expect((record["bytes_down"]?.intValue ?? 0) == page.utf8.count)
  }
}
