import FailClosedSupport
import Foundation
import HTTPCodec
import TLS

@testable import SystemUnderTest

/// A small HTTPS and wss server on 127.0.0.1 with a certificate from a test CA made at run
/// time: GET answers a geo relay CSV; a WebSocket upgrade becomes a fake Nostr relay that
/// answers REQ with EOSE and EVENT with OK.
final class LocalWorldServer: @unchecked Sendable {
  let authority: TestCertificateAuthority
  let address: SocketAddress
  private let listener: Socket
  private let tls: TLSServer
  private let csv: String
  private let lock = NSLock()
  private var received: [String] = []
  private var stopped = false

  init(names: [String], csvRows: Int = 60) throws {
    authority = try TestCertificateAuthority()
    tls = try TLSServer(authority: authority, defaultName: names[0], presenting: names)
    listener = try Socket.listen(on: SocketAddress("127.0.0.1:0")!)
    address = listener.localAddress!
    csv = (["relay url,latitude,longitude"] + (0..<csvRows).map { "relay\($0).example.com,1,2" })
      .joined(separator: "\n")
    BlockingIO.detach("test.world.accept") { [self] in
      while !lock.withLock({ stopped }) {
        guard let (client, _) = try? listener.accept() else { return }
        BlockingIO.detach("test.world.client") { [self] in serve(client) }
      }
    }
  }

  var messages: [String] { lock.withLock { received } }

  func stop() {
    lock.withLock { stopped = true }
    listener.shutdown()
    listener.close()
  }

  private func serve(_ socket: Socket) {
    socket.setTimeouts(seconds: 10)
    guard let stream = try? tls.accept(socket, timeout: 10) else { return socket.close() }
    defer { stream.close() }
    var parser = HTTPRequestParser()
    var head: HTTPRequestHead?
    while head == nil {
      guard let chunk = try? stream.read(max: 16384), !chunk.isEmpty,
        let events = try? parser.parse(chunk)
      else { return }
      for case .head(let value) in events { head = value }
    }
    guard let head else { return }
    if WebSocketHandshake.isUpgradeRequest(head) {
      guard let response = try? WebSocketHandshake.serverResponse(for: head),
        let bytes = try? response.encoded()
      else { return }
      try? stream.write(bytes)
      relay(stream, leftover: parser.takeBufferedBytes())
    } else {
      let response = HTTPResponse(
        status: 200, reason: "OK", headers: ["Content-Type": "text/csv", "Connection": "close"],
        body: Array(csv.utf8))
      try? stream.write(try! response.encoded())
    }
  }

  private func relay(_ stream: any ByteStream, leftover: [UInt8]) {
    var decoder = WebSocketMessageDecoder(role: .server)
    var pending = leftover
    for _ in 0..<10_000 {
      guard let messages = try? decoder.parse(pending) else { return }
      // A relay answers pings (RFC 6455); bitchat counts a relay connected on the pong.
      for case .ping(let payload) in messages {
        try? stream.write(WebSocketFrame.pong(payload).encoded(maskingKey: nil))
      }
      for case .text(let text) in messages {
        lock.withLock { received.append(text) }
        let reply: NostrInbound?
        switch NostrRequest(text: text) {
        case .subscribe(let id, _): reply = .eose(subscriptionID: id)
        case .event(let event): reply = .ok(eventID: event.id, accepted: true, reason: "")
        default: reply = nil
        }
        if let reply {
          try? stream.write(WebSocketFrame.text(reply.text).encoded(maskingKey: nil))
        }
      }
      guard let chunk = try? stream.read(max: 65536), !chunk.isEmpty else { return }
      pending = chunk
    }
  }
}
