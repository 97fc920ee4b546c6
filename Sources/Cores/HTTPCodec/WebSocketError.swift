/// A WebSocket failure: a handshake the peer got wrong, or a frame that breaks RFC 6455. Frame
/// errors carry the close code to send before dropping the connection and the byte offset.
public struct WebSocketError: Error, Equatable, Sendable, CustomStringConvertible {
  public enum Kind: Equatable, Sendable {
    /// The opening handshake failed (wrong status, missing or wrong Sec-WebSocket-Accept...).
    case handshake
    /// A frame or message breaks the protocol (close code 1002).
    case protocolViolation
    /// A text message or close reason that is not UTF-8 (close code 1007).
    case invalidUTF8
    /// A frame or message over the configured limit (close code 1009).
    case tooBig
    /// The connection ended without a close frame, or was used after closing (code 1006).
    case connectionClosed
  }

  public let kind: Kind
  public let detail: String
  /// Byte offset in the received stream, for frame errors.
  public let offset: Int?

  public init(_ kind: Kind, _ detail: String, offset: Int? = nil) {
    self.kind = kind
    self.detail = detail
    self.offset = offset
  }

  /// The close code RFC 6455 section 7.4.1 assigns to this failure.
  public var closeCode: UInt16 {
    switch kind {
    case .handshake, .protocolViolation: return 1002
    case .invalidUTF8: return 1007
    case .tooBig: return 1009
    case .connectionClosed: return 1006
    }
  }

  public var description: String {
    let place = offset.map { " at byte \($0)" } ?? ""
    switch kind {
    case .handshake: return "WebSocket handshake failed: \(detail)"
    case .protocolViolation: return "WebSocket protocol error\(place): \(detail)"
    case .invalidUTF8: return "WebSocket invalid UTF-8\(place): \(detail)"
    case .tooBig: return "WebSocket message too big\(place): \(detail)"
    case .connectionClosed: return "WebSocket connection closed: \(detail)"
    }
  }
}

/// Bounds on what a WebSocket peer may make us buffer.
public struct WebSocketLimits: Sendable, Equatable {
  public var maxFramePayload: Int
  public var maxMessageBytes: Int

  public init(maxFramePayload: Int = 1 << 20, maxMessageBytes: Int = 4 << 20) {
    self.maxFramePayload = maxFramePayload
    self.maxMessageBytes = maxMessageBytes
  }
}
