/// A complete request the server handshake parsed: what the client asked for, exactly as sent.
public struct SOCKSRequest: Hashable, Sendable {
  public var version: SOCKSVersion
  public var command: SOCKSCommand
  public var address: SOCKSAddress
  public var port: UInt16
  public var authentication: SOCKSAuthentication

  public init(
    version: SOCKSVersion, command: SOCKSCommand, address: SOCKSAddress, port: UInt16,
    authentication: SOCKSAuthentication = .none
  ) {
    self.version = version
    self.command = command
    self.address = address
    self.port = port
    self.authentication = authentication
  }

  /// True when the client sent a raw IP instead of a name (possible DNS leak upstream).
  public var clientSentRawIP: Bool { address.isRawIP }

  /// The reply to a CONNECT (or a failed request) in this request's protocol version.
  /// Tor answers with BND 0.0.0.0:0 whatever the outcome.
  public func reply(
    _ code: SOCKSReplyCode, bound: SOCKSAddress = .ipv4([0, 0, 0, 0]), port: UInt16 = 0
  )
    -> [UInt8]
  {
    switch version {
    case .socks4, .socks4a:
      return SOCKSReplyEncoder.socks4(code, port: port, address: bound)
    case .socks5:
      return SOCKSReplyEncoder.socks5(code, bound: bound, port: port)
    }
  }

  /// The successful answer to a RESOLVE (an address) or RESOLVE_PTR (a hostname).
  public func resolvedReply(_ answer: SOCKSAddress) -> [UInt8] {
    switch version {
    case .socks4, .socks4a:
      // SOCKS4 can only carry an IPv4 answer.
      guard case .ipv4 = answer else { return reply(.generalFailure) }
      return SOCKSReplyEncoder.socks4(.succeeded, port: 0, address: answer)
    case .socks5:
      return SOCKSReplyEncoder.socks5(.succeeded, bound: answer, port: 0)
    }
  }
}

/// Encodes reply messages (server to client).
public enum SOCKSReplyEncoder {
  /// VER REP RSV ATYP BND.ADDR BND.PORT
  public static func socks5(_ code: SOCKSReplyCode, bound: SOCKSAddress, port: UInt16) -> [UInt8] {
    [0x05, code.rawValue, 0x00] + bound.socks5Encoding + [UInt8(port >> 8), UInt8(port & 0xFF)]
  }

  /// VN(0) CD DSTPORT DSTIP
  public static func socks4(_ code: SOCKSReplyCode, port: UInt16, address: SOCKSAddress) -> [UInt8]
  {
    var ip: [UInt8] = [0, 0, 0, 0]
    if case .ipv4(let bytes) = address { ip = bytes }
    return [0x00, code.socks4Code, UInt8(port >> 8), UInt8(port & 0xFF)] + ip
  }
}
