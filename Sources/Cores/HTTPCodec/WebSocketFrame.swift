/// One WebSocket frame (RFC 6455 section 5.2) with its payload unmasked.
public struct WebSocketFrame: Equatable, Sendable {
  public enum Opcode: UInt8, Sendable {
    case continuation = 0x0
    case text = 0x1
    case binary = 0x2
    case close = 0x8
    case ping = 0x9
    case pong = 0xA

    public var isControl: Bool { rawValue & 0x8 != 0 }
  }

  public var fin: Bool
  public var opcode: Opcode
  public var payload: [UInt8]

  public init(fin: Bool = true, opcode: Opcode, payload: [UInt8]) {
    self.fin = fin
    self.opcode = opcode
    self.payload = payload
  }

  public static func text(_ text: String) -> WebSocketFrame {
    WebSocketFrame(opcode: .text, payload: Array(text.utf8))
  }

  public static func binary(_ bytes: [UInt8]) -> WebSocketFrame {
    WebSocketFrame(opcode: .binary, payload: bytes)
  }

  public static func ping(_ bytes: [UInt8] = []) -> WebSocketFrame {
    WebSocketFrame(opcode: .ping, payload: bytes)
  }

  public static func pong(_ bytes: [UInt8] = []) -> WebSocketFrame {
    WebSocketFrame(opcode: .pong, payload: bytes)
  }

  /// A close frame; nil code sends an empty payload ("no status"). The reason is cut so the
  /// payload stays within a control frame's 125 bytes.
  public static func close(code: UInt16? = 1000, reason: String = "") -> WebSocketFrame {
    guard let code else { return WebSocketFrame(opcode: .close, payload: []) }
    var payload = [UInt8(code >> 8), UInt8(code & 0xFF)]
    var reasonBytes = Array(reason.utf8.prefix(123))
    while String(validating: reasonBytes, as: UTF8.self) == nil { reasonBytes.removeLast() }
    payload += reasonBytes
    return WebSocketFrame(opcode: .close, payload: payload)
  }

  /// The frame on the wire. A client passes a fresh 4-byte `maskingKey` for every frame
  /// (section 5.3); a server passes nil and sends the payload unmasked.
  public func encoded(maskingKey: [UInt8]?) -> [UInt8] {
    precondition(maskingKey == nil || maskingKey!.count == 4, "a masking key is 4 bytes")
    precondition(
      !opcode.isControl || (fin && payload.count <= 125),
      "control frames are unfragmented with at most 125 bytes")
    var bytes: [UInt8] = [(fin ? 0x80 : 0) | opcode.rawValue]
    let maskBit: UInt8 = maskingKey == nil ? 0 : 0x80
    switch payload.count {
    case 0...125:
      bytes.append(maskBit | UInt8(payload.count))
    case 126...0xFFFF:
      bytes.append(maskBit | 126)
      bytes += [UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
    default:
      bytes.append(maskBit | 127)
      let length = UInt64(payload.count)
      bytes += (0..<8).map { UInt8(truncatingIfNeeded: length >> (56 - 8 * UInt64($0))) }
    }
    guard let maskingKey else { return bytes + payload }
    bytes += maskingKey
    bytes.reserveCapacity(bytes.count + payload.count)
    for (index, byte) in payload.enumerated() { bytes.append(byte ^ maskingKey[index & 3]) }
    return bytes
  }
}
