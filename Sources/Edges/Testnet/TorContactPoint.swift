/// An {address, port} a client of the network may contact, with what listens there: the
/// audit's allowlist is typed by it (a relay's ORPort speaks TLS, a DirPort the directory
/// protocol, an obfs4 bridge random-looking bytes).
public struct TorContactPoint: Sendable, Hashable, CustomStringConvertible {
  public enum Kind: String, Sendable, CaseIterable {
    case orPort = "orport"
    case dirPort = "dirport"
    /// An obfs4 bridge's transport port.
    case obfs4Bridge = "obfs4"
    /// A bridge without a transport: Tor's link protocol, as an ORPort.
    case vanillaBridge = "bridge"
  }

  /// "host:port" or "[v6]:port".
  public let endpoint: String
  public let kind: Kind

  public init(endpoint: String, kind: Kind) {
    self.endpoint = endpoint
    self.kind = kind
  }

  public var description: String { "\(kind.rawValue):\(endpoint)" }
}
