/// The credentials a client presented. Tor uses them for stream isolation: different
/// credentials, different circuits.
public enum SOCKSAuthentication: Hashable, Sendable {
  case none
  /// The SOCKS4 user id (may be empty).
  case socks4UserID([UInt8])
  /// RFC 1929 username and password, as raw bytes (they need not be UTF-8).
  case usernamePassword(username: [UInt8], password: [UInt8])

  /// The prefix of Tor's extended isolation usernames (tor 0.4.9.1-alpha, Arti 1.2.8).
  public static let isolationPrefix: [UInt8] = Array("<torS0X>".utf8)

  /// What the credentials mean to Tor's isolation logic.
  public var isolation: SOCKSIsolation {
    switch self {
    case .none: return .none
    case .socks4UserID(let id): return id.isEmpty ? .none : .legacy(username: id, password: [])
    case .usernamePassword(let username, let password):
      guard username.starts(with: Self.isolationPrefix) else {
        return .legacy(username: username, password: password)
      }
      let rest = Array(username.dropFirst(Self.isolationPrefix.count))
      if rest == [UInt8(ascii: "0")] { return .key(password) }
      if rest.first == UInt8(ascii: "1"), rest.count > 1 {
        return .rpcObject(id: Array(rest.dropFirst()), password: password)
      }
      return .malformed(username: username)
    }
  }
}

/// Tor's reading of SOCKS credentials (socks-extensions.txt, "Extended isolation").
public enum SOCKSIsolation: Hashable, Sendable {
  case none
  /// Ordinary credentials: the pair is the isolation key.
  case legacy(username: [UInt8], password: [UInt8])
  /// `<torS0X>0`: the password alone is the isolation key.
  case key([UInt8])
  /// `<torS0X>1<id>`: an RPC object id (Arti's RPC; C tor has none and rejects it).
  case rpcObject(id: [UInt8], password: [UInt8])
  /// A `<torS0X>` username with an unknown format: Tor closes the connection.
  case malformed(username: [UInt8])
}
