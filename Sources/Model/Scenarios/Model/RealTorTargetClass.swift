/// The private network's nodes as classes of censorship targets (OONI's `tor` test classes):
/// each node's endpoint is a real-Tor lane censor target of its own ("testnet-auth2-orport"),
/// so a scenario can block some of a class and leave the rest reachable.
public enum RealTorTargetClass: String, Sendable, CaseIterable {
  /// The three directory authorities' ORPorts (OONI `or_port_dirauth`).
  case dirauthORPorts = "dirauth-orports"
  /// Their DirPorts (OONI `dir_port`).
  case dirauthDirPorts = "dirauth-dirports"
  /// The exit's and the middle relay's ORPorts (OONI `or_port`).
  case relayORPorts = "relay-orports"
  /// The obfs4 bridge's port (OONI `obfs4`; snowflake is approximated by it).
  case bridgeObfs4 = "bridge-obfs4"

  /// The censor targets, in the order a replay keeps them reachable (the first ones first).
  /// The names follow Testnet's world plan (auth1-3, exit1, middle1, bridge1); a test checks
  /// they agree.
  public var nodes: [String] {
    switch self {
    case .dirauthORPorts: return (1...3).map { "testnet-auth\($0)-orport" }
    case .dirauthDirPorts: return (1...3).map { "testnet-auth\($0)-dirport" }
    case .relayORPorts: return ["testnet-exit1-orport", "testnet-middle1-orport"]
    case .bridgeObfs4: return ["testnet-bridge1-obfs4"]
    }
  }

  /// Every node target name.
  public static var allNodes: [String] { allCases.flatMap(\.nodes) }

  /// The class a node target belongs to.
  public static func of(_ node: String) -> RealTorTargetClass? {
    allCases.first { $0.nodes.contains(node) }
  }
}
