import Scenarios

/// OONI's `tor` target classes mapped to the private network's nodes, keeping the measured
/// share of reachable targets as closely as the network's size allows.
public enum TargetClassMapping {
  /// The sandbox class an OONI target stands for. Before 2020-01-27 20:00 (tor 0.0.1, 0.1.0)
  /// OONI counted directory authorities' ORPorts as `or_port`: an `or_port` target on the
  /// address of a `dir_port` target is a directory authority's. nil: not mapped (a protocol the
  /// test only connects to).
  public static func sandboxClass(_ target: TorTarget, dirPortHosts: Set<String>)
    -> RealTorTargetClass?
  {
    switch target.protocolName {
    case "or_port_dirauth": return .dirauthORPorts
    case "dir_port": return .dirauthDirPorts
    case "or_port":
      return dirPortHosts.contains(host(target.address)) ? .dirauthORPorts : .relayORPorts
    case "obfs4": return .bridgeObfs4
    default: return nil
    }
  }

  /// "66.111.2.131" from "66.111.2.131:9001", "2a0c::1" from "[2a0c::1]:27015".
  static func host(_ address: String) -> String {
    if address.hasPrefix("["), let close = address.firstIndex(of: "]") {
      return String(address[address.index(after: address.startIndex)..<close])
    }
    return address.split(separator: ":").first.map(String.init) ?? address
  }

  /// How many of `nodes` stay reachable when `reachable` of `total` measured targets were:
  /// the nearest whole share (halves round up); then, when the class has two nodes or more, a
  /// class with any reachable target keeps one reachable and a class with any failed target
  /// keeps one blocked, so the sandbox shows what the measurement showed (some get through,
  /// some do not). Returns the count and a sentence saying how.
  public static func reachableNodes(reachable: Int, total: Int, nodes: Int) -> (
    count: Int, how: String
  ) {
    precondition(total > 0 && nodes > 0)
    let exact = Double(reachable) * Double(nodes) / Double(total)
    var count = Int(exact.rounded(.toNearestOrAwayFromZero))
    var how =
      "\(reachable)/\(total) of \(nodes) node\(nodes == 1 ? "" : "s") = "
      + String(format: "%.2f", exact) + ", rounded to \(count)"
    if nodes >= 2, reachable > 0, count == 0 {
      count = 1
      how += "; raised to 1: some targets were reachable"
    }
    if nodes >= 2, reachable < total, count == nodes {
      count = nodes - 1
      how += "; lowered to \(count): some targets were blocked"
    }
    return (count, how)
  }
}
