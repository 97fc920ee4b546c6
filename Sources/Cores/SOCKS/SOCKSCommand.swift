/// The command of a SOCKS request, including Tor's two extensions.
public enum SOCKSCommand: UInt8, Sendable, CaseIterable, CustomStringConvertible {
  case connect = 0x01
  case bind = 0x02
  case udpAssociate = 0x03
  /// Tor's RESOLVE: hostname to address, answered in the reply's BND field.
  case resolve = 0xF0
  /// Tor's RESOLVE_PTR: IPv4 address to hostname.
  case resolvePTR = 0xF1

  public var description: String {
    switch self {
    case .connect: return "CONNECT"
    case .bind: return "BIND"
    case .udpAssociate: return "UDP_ASSOCIATE"
    case .resolve: return "RESOLVE"
    case .resolvePTR: return "RESOLVE_PTR"
    }
  }
}

/// Which protocol the client spoke.
public enum SOCKSVersion: String, Sendable, Equatable {
  case socks4 = "socks4"
  /// SOCKS4 with the hostname extension (address 0.0.0.x, name after the user id).
  case socks4a = "socks4a"
  case socks5 = "socks5"
}
