/// A complete WebSocket message: a data message reassembled from its fragments, or a control
/// frame (which may arrive between fragments).
public enum WebSocketMessage: Equatable, Sendable {
  case text(String)
  case binary([UInt8])
  case ping([UInt8])
  case pong([UInt8])
  /// nil code: the close frame had no payload (1005, "no status received").
  case close(code: UInt16?, reason: String)
}

/// Incremental WebSocket message decoder: frames from ``WebSocketFrameDecoder``, then the
/// message rules of RFC 6455: fragmentation (continuation only after an unfinished data frame, no
/// new data frame inside one), UTF-8 text, close codes and reasons, the message size limit.
public struct WebSocketMessageDecoder: Sendable {
  private var frames: WebSocketFrameDecoder
  private var fragmentOpcode: WebSocketFrame.Opcode?
  private var fragments: [UInt8] = []
  private var receivedBytes = 0

  public init(role: WebSocketFrameDecoder.Role, limits: WebSocketLimits = WebSocketLimits()) {
    frames = WebSocketFrameDecoder(role: role, limits: limits)
  }

  public mutating func parse(_ bytes: [UInt8]) throws -> [WebSocketMessage] {
    let offset = receivedBytes
    receivedBytes += bytes.count
    var messages: [WebSocketMessage] = []
    for frame in try frames.parse(bytes) {
      if let message = try push(frame, offset: offset) { messages.append(message) }
    }
    return messages
  }

  private mutating func push(_ frame: WebSocketFrame, offset: Int) throws -> WebSocketMessage? {
    switch frame.opcode {
    case .ping: return .ping(frame.payload)
    case .pong: return .pong(frame.payload)
    case .close: return try Self.close(frame.payload, offset: offset)
    case .text, .binary:
      guard fragmentOpcode == nil else {
        throw WebSocketError(
          .protocolViolation, "new data frame inside a fragmented message",
          offset: offset)
      }
      if !frame.fin {
        fragmentOpcode = frame.opcode
        fragments = []
        return try append(frame.payload, offset: offset)
      }
      return try Self.message(frame.opcode, frame.payload, limit: frames.limits, offset: offset)
    case .continuation:
      guard let opcode = fragmentOpcode else {
        throw WebSocketError(
          .protocolViolation, "continuation frame without a message to continue",
          offset: offset)
      }
      _ = try append(frame.payload, offset: offset)
      guard frame.fin else { return nil }
      let payload = fragments
      fragmentOpcode = nil
      fragments = []
      return try Self.message(opcode, payload, limit: frames.limits, offset: offset)
    }
  }

  private mutating func append(_ payload: [UInt8], offset: Int) throws -> WebSocketMessage? {
    guard fragments.count + payload.count <= frames.limits.maxMessageBytes else {
      throw WebSocketError(
        .tooBig, "message over the limit of \(frames.limits.maxMessageBytes) bytes",
        offset: offset)
    }
    fragments += payload
    return nil
  }

  private static func message(
    _ opcode: WebSocketFrame.Opcode, _ payload: [UInt8], limit: WebSocketLimits, offset: Int
  ) throws -> WebSocketMessage {
    guard payload.count <= limit.maxMessageBytes else {
      throw WebSocketError(
        .tooBig, "message over the limit of \(limit.maxMessageBytes) bytes", offset: offset)
    }
    guard opcode == .text else { return .binary(payload) }
    guard let text = String(validating: payload, as: UTF8.self) else {
      throw WebSocketError(.invalidUTF8, "text message is not UTF-8", offset: offset)
    }
    return .text(text)
  }

  static func close(_ payload: [UInt8], offset: Int) throws -> WebSocketMessage {
    if payload.isEmpty { return .close(code: nil, reason: "") }
    guard payload.count >= 2 else {
      throw WebSocketError(.protocolViolation, "close payload of 1 byte", offset: offset)
    }
    let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
    guard isValidCloseCode(code) else {
      throw WebSocketError(.protocolViolation, "close code \(code) is not allowed", offset: offset)
    }
    guard let reason = String(validating: payload[2...], as: UTF8.self) else {
      throw WebSocketError(.invalidUTF8, "close reason is not UTF-8", offset: offset)
    }
    return .close(code: code, reason: reason)
  }

  /// Codes a peer may send (section 7.4): the defined ones, the IANA-registered 1012-1014, and
  /// the 3000-4999 ranges; 1004, 1005, 1006 and 1015 never appear on the wire.
  public static func isValidCloseCode(_ code: UInt16) -> Bool {
    switch code {
    case 1000...1003, 1007...1014, 3000...4999: return true
    default: return false
    }
  }
}
