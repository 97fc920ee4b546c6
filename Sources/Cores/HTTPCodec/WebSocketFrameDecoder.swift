/// Incremental WebSocket frame decoder (RFC 6455 section 5.2): feed bytes as they arrive, get
/// whole frames, unmasked. It checks what a single frame can get wrong (reserved bits, unknown
/// opcodes, masking for the role, length encoding, control frame rules, limits); message-level
/// rules live in ``WebSocketMessageDecoder``.
public struct WebSocketFrameDecoder: Sendable {
  /// Who is receiving: a server receives masked frames, a client unmasked ones.
  public enum Role: Sendable {
    case client
    case server
  }

  public let role: Role
  public let limits: WebSocketLimits
  private var buffer = ByteBuffer()

  public init(role: Role, limits: WebSocketLimits = WebSocketLimits()) {
    self.role = role
    self.limits = limits
  }

  /// Appends `bytes` and returns every frame now complete.
  public mutating func parse(_ bytes: [UInt8]) throws -> [WebSocketFrame] {
    buffer.append(bytes)
    var frames: [WebSocketFrame] = []
    while let frame = try nextFrame() { frames.append(frame) }
    return frames
  }

  private mutating func nextFrame() throws -> WebSocketFrame? {
    guard buffer.count >= 2 else { return nil }
    let offset = buffer.offset
    let first = buffer[0]
    let second = buffer[1]
    guard first & 0x70 == 0 else {
      throw WebSocketError(
        .protocolViolation, "reserved bits set (no extension was negotiated)", offset: offset)
    }
    guard let opcode = WebSocketFrame.Opcode(rawValue: first & 0x0F) else {
      throw WebSocketError(
        .protocolViolation, "unknown opcode 0x\(String(first & 0x0F, radix: 16))", offset: offset)
    }
    let fin = first & 0x80 != 0
    let masked = second & 0x80 != 0
    switch (role, masked) {
    case (.server, false):
      throw WebSocketError(.protocolViolation, "client frame is not masked", offset: offset)
    case (.client, true):
      throw WebSocketError(.protocolViolation, "server frame is masked", offset: offset)
    default: break
    }
    var headerLength = 2
    var length = Int(second & 0x7F)
    if opcode.isControl {
      guard fin else {
        throw WebSocketError(.protocolViolation, "fragmented control frame", offset: offset)
      }
      guard length <= 125 else {
        throw WebSocketError(
          .protocolViolation, "control frame longer than 125 bytes", offset: offset)
      }
    }
    if length == 126 {
      guard buffer.count >= 4 else { return nil }
      length = Int(buffer[2]) << 8 | Int(buffer[3])
      headerLength = 4
      guard length >= 126 else {
        throw WebSocketError(
          .protocolViolation, "length \(length) not in the minimal encoding", offset: offset)
      }
    } else if length == 127 {
      guard buffer.count >= 10 else { return nil }
      var wide: UInt64 = 0
      for index in 2..<10 { wide = wide << 8 | UInt64(buffer[index]) }
      headerLength = 10
      guard wide >> 63 == 0 else {
        throw WebSocketError(
          .protocolViolation, "64-bit length with the most significant bit set", offset: offset)
      }
      guard wide > 0xFFFF else {
        throw WebSocketError(
          .protocolViolation, "length \(wide) not in the minimal encoding", offset: offset)
      }
      guard wide <= UInt64(limits.maxFramePayload) else {
        throw WebSocketError(
          .tooBig, "frame of \(wide) bytes over the limit of \(limits.maxFramePayload)",
          offset: offset)
      }
      length = Int(wide)
    }
    guard length <= limits.maxFramePayload else {
      throw WebSocketError(
        .tooBig, "frame of \(length) bytes over the limit of \(limits.maxFramePayload)",
        offset: offset)
    }
    let maskLength = masked ? 4 : 0
    guard buffer.count >= headerLength + maskLength + length else { return nil }
    buffer.skip(headerLength)
    var payload: [UInt8]
    if masked {
      let key = buffer.take(4)
      payload = buffer.take(length)
      for index in payload.indices { payload[index] ^= key[index & 3] }
    } else {
      payload = buffer.take(length)
    }
    return WebSocketFrame(fin: fin, opcode: opcode, payload: payload)
  }
}
