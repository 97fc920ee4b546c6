import FailClosedSupport
import Foundation
import HTTPCodec
import Testing

@testable import SystemUnderTest

/// NostrRelayManager.swift connectToRelay: after resume() bitchat sends a ping and marks the
/// relay connected only in the pong handler, so a relay that completes the WebSocket upgrade
/// but never answers is never connected; URLSession's default request timeout (60 s) then
/// fails the task (issue 14, item 9). Against a plain ws server on 127.0.0.1, on a clock 600
/// times faster (60 s in 0.1 s).
@Suite struct RelayPingTests {
  /// A ws server that upgrades every connection and answers pings only when told to.
  final class UpgradeOnlyServer: @unchecked Sendable {
    let listener: Socket
    let port: UInt16
    let answersPings: Bool

    init(answersPings: Bool) throws {
      self.answersPings = answersPings
      listener = try Socket.listen(on: SocketAddress("127.0.0.1:0")!)
      port = listener.localAddress!.port
      BlockingIO.detach("test.ping.accept") { [self] in
        guard let (client, _) = try? listener.accept() else { return }
        serve(client)
      }
    }

    func serve(_ socket: Socket) {
      defer { socket.close() }
      socket.setTimeouts(seconds: 5)
      var parser = HTTPRequestParser()
      var head: HTTPRequestHead?
      while head == nil {
        guard let chunk = try? socket.read(max: 16384), !chunk.isEmpty,
          let events = try? parser.parse(chunk)
        else { return }
        for case .head(let value) in events { head = value }
      }
      guard let head, let response = try? WebSocketHandshake.serverResponse(for: head),
        let bytes = try? response.encoded()
      else { return }
      try? socket.write(bytes)
      var decoder = WebSocketMessageDecoder(role: .server)
      while let chunk = try? socket.read(max: 4096), !chunk.isEmpty {
        guard let messages = try? decoder.parse(chunk) else { return }
        for case .ping(let payload) in messages where answersPings {
          try? socket.write(WebSocketFrame.pong(payload).encoded(maskingKey: nil))
        }
      }
    }

    func stop() {
      _ = Glibc.shutdown(listener.fd, Int32(SHUT_RDWR))
      listener.close()
    }
  }

  /// The relay connection's events until the first `.connected` or `.failed`.
  @AppActor static func firstOutcome(port: UInt16) async -> RelayConnectionEvent {
    let log = AppEventLog(clock: SystemClock())
    let session = StreamSession(
      connector: DirectStreamConnector(log: log), tls: nil, log: log, timeScale: 600)
    let connection = session.webSocketTask("ws://127.0.0.1:\(port)/")
    return await withCheckedContinuation { continuation in
      var resumed = false
      connection.resume { event in
        guard !resumed else { return }
        switch event {
        case .connected, .failed:
          resumed = true
          continuation.resume(returning: event)
        case .message: break
        }
      }
    }
  }

  @Test(.timeLimit(.minutes(1))) func aRelayIsConnectedOnItsPong() async throws {
    let server = try UpgradeOnlyServer(answersPings: true)
    defer { server.stop() }
    #expect(await Self.firstOutcome(port: server.port) == .connected)
  }

  @Test(.timeLimit(.minutes(1))) func anUpgradeWithoutPongTimesOutAndIsNeverConnected() async throws
  {
    let server = try UpgradeOnlyServer(answersPings: false)
    defer { server.stop() }
    #expect(StreamRelayConnection.requestTimeout == 60)
    let outcome = await Self.firstOutcome(port: server.port)
    #expect(outcome == .failed(.timedOut))
  }
}
