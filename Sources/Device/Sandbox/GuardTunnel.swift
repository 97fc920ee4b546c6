/// The fake Tor network's tunnel protocol, between the mock Tor (device side) and a guard
/// (world side). The first bytes carry the destination; the guard answers one status byte and
/// then both sides splice. On the wire this is one TCP connection to {guard address, port}.
///
///     request:  "FCT1" | host length (1) | host (UTF-8) | port (2, big-endian)
///     reply:    status (1): 0 connected, 1 destination refused or unreachable, 2 bad request
public enum GuardTunnel {
  public static let magic: [UInt8] = Array("FCT1".utf8)

  public enum Status: UInt8, Sendable {
    case connected = 0
    case unreachable = 1
    case badRequest = 2
  }

  public struct Request: Sendable, Equatable {
    public let host: String
    public let port: UInt16

    public init(host: String, port: UInt16) {
      self.host = host
      self.port = port
    }
  }

  public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public let offset: Int
    public let message: String
    public var description: String { "guard tunnel request, byte \(offset): \(message)" }
  }

  public static func encode(_ request: Request) -> [UInt8] {
    let host = Array(request.host.utf8.prefix(255))
    return magic + [UInt8(host.count)] + host + [
      UInt8(request.port >> 8), UInt8(request.port & 0xff),
    ]
  }

  /// Decodes a request from the start of `bytes`: nil while more bytes are needed, else the
  /// request and how many bytes it took.
  public static func decode(_ bytes: [UInt8]) throws(ParseError) -> (Request, Int)? {
    for (index, byte) in magic.enumerated() where index < bytes.count && bytes[index] != byte {
      throw ParseError(offset: index, message: "expected magic \"FCT1\"")
    }
    guard bytes.count >= 5 else { return nil }
    let length = Int(bytes[4])
    guard length > 0 else { throw ParseError(offset: 4, message: "empty host") }
    guard bytes.count >= 5 + length + 2 else { return nil }
    let host = String(decoding: bytes[5..<(5 + length)], as: UTF8.self)
    let port = UInt16(bytes[5 + length]) << 8 | UInt16(bytes[6 + length])
    guard port != 0 else { throw ParseError(offset: 5 + length, message: "port 0") }
    return (Request(host: host, port: port), 7 + length)
  }
}
