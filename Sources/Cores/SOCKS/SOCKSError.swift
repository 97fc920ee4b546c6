/// Why a handshake failed, with the byte offset (from the start of the connection's stream)
/// of the byte at fault.
public struct SOCKSError: Error, Hashable, Sendable, CustomStringConvertible {
  public enum Kind: Hashable, Sendable {
    /// The first byte is no SOCKS version we speak.
    case unsupportedVersion(UInt8)
    /// An HTTP request (GET, HEAD, POST/PUT, CONNECT) sent to the SOCKS port.
    case httpRequestOnSOCKSPort
    /// A SOCKS5 greeting offering zero methods.
    case noMethodsOffered
    /// None of the offered methods is acceptable (reply method 0xFF).
    case noAcceptableMethod([UInt8])
    /// The username/password sub-negotiation has a version other than 1.
    case unsupportedAuthVersion(UInt8)
    /// A `<torS0X>` username Tor does not understand.
    case malformedIsolationUsername
    /// The request's version byte is not 5.
    case unexpectedRequestVersion(UInt8)
    case unsupportedCommand(UInt8)
    /// A command this server recognises but does not allow (BIND, UDP ASSOCIATE, ...).
    case commandNotAllowed(SOCKSCommand)
    case unsupportedAddressType(UInt8)
    /// The SOCKS5 reserved byte is not zero.
    case reservedByteNotZero(UInt8)
    case emptyHostname
    case hostnameNotUTF8
    /// Bytes outside Tor's hostname alphabet, an empty label or a leading hyphen.
    case invalidHostname(String)
    /// A field longer than the protocol or Tor allows.
    case fieldTooLong(String)
    /// RESOLVE_PTR with something other than an IP address.
    case addressTypeNotAllowed(SOCKSCommand)
    /// CONNECT to port 0.
    case portZero
    /// Client side: the server's reply could not be parsed or is not what was asked.
    case malformedReply(String)
    /// Client side: the server refused with this code.
    case rejected(SOCKSReplyCode)
    /// Client side: the server sent a reply code outside the known set.
    case unknownReplyCode(UInt8)
    /// Client side: the server refused the credentials (RFC 1929 status != 0).
    case authenticationFailed(UInt8)
  }

  public let kind: Kind
  /// Offset of the offending byte in the bytes received on this connection.
  public let offset: Int

  public init(_ kind: Kind, at offset: Int) {
    self.kind = kind
    self.offset = offset
  }

  public var description: String {
    let what: String
    switch kind {
    case .unsupportedVersion(let v): what = "unsupported SOCKS version 0x\(hex(v))"
    case .httpRequestOnSOCKSPort: what = "HTTP request sent to a SOCKS port"
    case .noMethodsOffered: what = "SOCKS5 greeting offers no authentication method"
    case .noAcceptableMethod(let m):
      what = "no acceptable authentication method among [\(m.map(hex).joined(separator: ","))]"
    case .unsupportedAuthVersion(let v): what = "username/password version 0x\(hex(v)) (want 1)"
    case .malformedIsolationUsername: what = "malformed <torS0X> isolation username"
    case .unexpectedRequestVersion(let v): what = "request version 0x\(hex(v)) (want 5)"
    case .unsupportedCommand(let c): what = "unsupported command 0x\(hex(c))"
    case .commandNotAllowed(let c): what = "command \(c) not allowed"
    case .unsupportedAddressType(let a): what = "unsupported address type 0x\(hex(a))"
    case .reservedByteNotZero(let r): what = "reserved byte is 0x\(hex(r)), must be 0"
    case .emptyHostname: what = "zero-length hostname"
    case .hostnameNotUTF8: what = "hostname is not UTF-8"
    case .invalidHostname(let name): what = "invalid hostname '\(name)'"
    case .fieldTooLong(let field): what = "\(field) too long"
    case .addressTypeNotAllowed(let c): what = "address type not allowed for \(c)"
    case .portZero: what = "CONNECT to port 0"
    case .malformedReply(let why): what = "malformed reply: \(why)"
    case .rejected(let code): what = "proxy replied 0x\(hex(code.rawValue)) (\(code))"
    case .unknownReplyCode(let c): what = "proxy replied unknown code 0x\(hex(c))"
    case .authenticationFailed(let s): what = "authentication failed (status 0x\(hex(s)))"
    }
    return "SOCKS: \(what) at byte \(offset)"
  }
}

private func hex(_ byte: UInt8) -> String {
  let digits = String(byte, radix: 16)
  return digits.count == 1 ? "0" + digits : digits
}
