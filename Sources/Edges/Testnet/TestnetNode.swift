/// One tor process of the private network: its role decides its torrc.
public struct TestnetNode: Sendable, Equatable, Codable {
  public enum Role: String, Sendable, Codable {
    case authority, exit, middle, bridge
  }

  public let name: String
  public let role: Role
  /// The address the node binds and advertises (127.0.0.1 on loopback, a world address in the
  /// sandbox).
  public let address: String
  public let orPort: UInt16
  /// Authorities serve the directory; other nodes have none (DirCache 0, per the recipe).
  public let dirPort: UInt16?
  /// The bridge's obfs4 listener.
  public let obfs4Port: UInt16?
  /// Where the harness (not the network) reaches the node's control port; never advertised.
  public let controlPort: UInt16

  public init(
    name: String, role: Role, address: String, orPort: UInt16, dirPort: UInt16? = nil,
    obfs4Port: UInt16? = nil, controlPort: UInt16
  ) {
    self.name = name
    self.role = role
    self.address = address
    self.orPort = orPort
    self.dirPort = dirPort
    self.obfs4Port = obfs4Port
    self.controlPort = controlPort
  }
}
