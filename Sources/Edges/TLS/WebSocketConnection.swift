import Foundation
import HTTPCodec

/// An open WebSocket over a stream, either side. One thread may sit in ``receive()`` while
/// others send. Pings are answered with pongs automatically (and still reported); a close from
/// the peer is echoed and ends the connection. Blocks: use dedicated threads.
public final class WebSocketConnection: @unchecked Sendable {
  public let stream: any ByteStream
  public let role: WebSocketFrameDecoder.Role

  private let readLock = NSLock()
  private var decoder: WebSocketMessageDecoder
  private var pending: [WebSocketMessage] = []
  private var leftover: [UInt8]
  private var finished = false

  private let writeLock = NSLock()
  private var closeSent = false

  /// `leftover`: bytes already read past the handshake (the first frames).
  public init(
    stream: any ByteStream, role: WebSocketFrameDecoder.Role, leftover: [UInt8] = [],
    limits: WebSocketLimits = WebSocketLimits()
  ) {
    self.stream = stream
    self.role = role
    self.leftover = leftover
    decoder = WebSocketMessageDecoder(role: role, limits: limits)
  }

  public func send(text: String) throws { try send(.text(text)) }

  public func send(binary: [UInt8]) throws { try send(.binary(binary)) }

  public func ping(_ payload: [UInt8] = []) throws { try send(.ping(payload)) }

  /// Sends any frame, masked with a fresh random key on the client side.
  public func send(_ frame: WebSocketFrame) throws {
    try writeLock.withLock {
      guard !closeSent else {
        throw WebSocketError(.connectionClosed, "send after the close frame")
      }
      if frame.opcode == .close { closeSent = true }
      var key: [UInt8]?
      if role == .client {
        var random = SystemRandomNumberGenerator()
        key = (0..<4).map { _ in UInt8.random(in: 0...255, using: &random) }
      }
      try stream.write(frame.encoded(maskingKey: key))
    }
  }

  /// The next message. After the peer's close (returned as ``WebSocketMessage/close``), or
  /// when the stream ends, further calls throw ``WebSocketError/Kind/connectionClosed``.
  public func receive() throws -> WebSocketMessage {
    try readLock.withLock {
      while true {
        if !pending.isEmpty {
          let message = pending.removeFirst()
          try react(to: message)
          return message
        }
        guard !finished else {
          throw WebSocketError(.connectionClosed, "no more messages after close")
        }
        let bytes: [UInt8]
        if !leftover.isEmpty {
          bytes = leftover
          leftover = []
        } else {
          bytes = try stream.read(max: 65536)
        }
        if bytes.isEmpty {
          finished = true
          stream.close()
          throw WebSocketError(.connectionClosed, "stream ended without a close frame")
        }
        do {
          pending += try decoder.parse(bytes)
        } catch let error as WebSocketError {
          finished = true
          try? send(.close(code: error.closeCode, reason: ""))
          stream.close()
          throw error
        }
      }
    }
  }

  /// Sends a close frame (if not yet sent) and closes the stream.
  public func close(code: UInt16 = 1000, reason: String = "") {
    try? send(.close(code: code, reason: reason))
    stream.close()
  }

  private func react(to message: WebSocketMessage) throws {
    switch message {
    case .ping(let payload):
      try? send(.pong(payload))
    case .close(let code, _):
      finished = true
      pending.removeAll()
      try? send(.close(code: code, reason: ""))
      stream.close()
    default:
      break
    }
  }
}

/// The client side of the opening handshake over an already-connected stream (plain or TLS,
/// possibly through SOCKS).
public enum WebSocketClient {
  /// Sends the upgrade request for `target` on `host`, verifies the 101 answer and its
  /// Sec-WebSocket-Accept, and returns the open connection.
  public static func connect(
    over stream: any ByteStream, host: String, target: String = "/", headers: HTTPHeaders = [:],
    limits: WebSocketLimits = WebSocketLimits()
  ) throws -> WebSocketConnection {
    var random = SystemRandomNumberGenerator()
    let key = WebSocketHandshake.key(
      nonce: (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) })
    let request = WebSocketHandshake.clientRequest(
      host: host, target: target, key: key, headers: headers)
    try stream.write(request.encoded())
    var parser = HTTPResponseParser(limits: HTTPLimits(maxBodyBytes: 65536))
    while true {
      let bytes = try stream.read(max: 16384)
      let events = bytes.isEmpty ? try parser.finish() : try parser.parse(bytes)
      for case .head(let head) in events {
        try WebSocketHandshake.verifyServerResponse(head, key: key)
        return WebSocketConnection(
          stream: stream, role: .client, leftover: parser.takeUpgradedBytes(), limits: limits)
      }
      if bytes.isEmpty {
        throw WebSocketError(.handshake, "connection closed before the server answered")
      }
    }
  }
}
