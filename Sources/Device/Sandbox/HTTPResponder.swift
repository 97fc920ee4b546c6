import FailClosedSupport
import HTTPCodec
import TLS

/// The world's web server, over plain TCP or TLS: any request for any Host gets 200 and a body
/// naming the Host and path (so a client can tell its request arrived); a WebSocket upgrade
/// gets the 101 answer and then every message is echoed back until the client closes.
enum HTTPResponder {
  static func serve(_ stream: any ByteStream) {
    var parser = HTTPRequestParser()
    var head: HTTPRequestHead?
    var ended = false
    for _ in 0..<256 where !ended {
      guard let bytes = try? stream.read(max: 65536), !bytes.isEmpty else { return }
      guard let events = try? parser.parse(bytes) else {
        _ = try? stream.write(HTTPResponse(status: 400, headers: ["Connection": "close"]).encoded())
        return
      }
      for event in events {
        switch event {
        case .head(let parsed): head = parsed
        case .body: break
        case .end: ended = true
        }
      }
    }
    guard let head else { return }
    if WebSocketHandshake.isUpgradeRequest(head) {
      guard let response = try? WebSocketHandshake.serverResponse(for: head) else {
        _ = try? stream.write(HTTPResponse(status: 400, headers: ["Connection": "close"]).encoded())
        return
      }
      guard (try? stream.write(response.encoded())) != nil else { return }
      echoWebSocket(stream, early: parser.takeBufferedBytes())
      return
    }
    let host = head.headers["Host"] ?? "?"
    let path = head.target.split(separator: "?", maxSplits: 1).first.map(String.init) ?? ""
    let isDirectory = path.hasSuffix(".csv")
    let text = isDirectory ? WorldRelayDirectory.csv : "failclosed world: \(host)\(head.target)\n"
    let body = Array(text.utf8)
    let response = HTTPResponse(
      status: 200,
      headers: ["Content-Type": isDirectory ? "text/csv" : "text/plain", "Connection": "close"],
      body: body)
    _ = try? stream.write(response.encoded())
  }

  /// Echoes text and binary messages, answers pings, and closes when the client does.
  static func echoWebSocket(_ stream: any ByteStream, early: [UInt8]) {
    var decoder = WebSocketMessageDecoder(role: .server)
    var pending = early
    for _ in 0..<100_000 {
      if pending.isEmpty {
        guard let bytes = try? stream.read(max: 65536), !bytes.isEmpty else { return }
        pending = bytes
      }
      guard let messages = try? decoder.parse(pending) else {
        _ = try? stream.write(WebSocketFrame.close(code: 1002).encoded(maskingKey: nil))
        return
      }
      pending = []
      for message in messages {
        let reply: WebSocketFrame
        switch message {
        case .text(let text): reply = .text(text)
        case .binary(let bytes): reply = .binary(bytes)
        case .ping(let bytes): reply = .pong(bytes)
        case .pong: continue
        case .close(let code, _):
          _ = try? stream.write(WebSocketFrame.close(code: code ?? 1000).encoded(maskingKey: nil))
          return
        }
        guard (try? stream.write(reply.encoded(maskingKey: nil))) != nil else { return }
      }
    }
  }
}
