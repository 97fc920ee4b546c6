/// The shape of a private Tor network: three authorities, an exit, a middle relay and,
/// optionally, an obfs4 bridge (reference/private-tor-net.md).
public struct TestnetPlan: Sendable, Equatable, Codable {
  public var nodes: [TestnetNode]

  public init(nodes: [TestnetNode]) { self.nodes = nodes }

  public var authorities: [TestnetNode] { nodes.filter { $0.role == .authority } }
  public var relays: [TestnetNode] { nodes.filter { $0.role != .bridge } }
  public var bridge: TestnetNode? { nodes.first { $0.role == .bridge } }

  /// Every node on one address with ports from `basePort` upward: the loopback of whatever
  /// namespace runs it (`failclosed testnet up`'s; each test's own, never the host's).
  public static func loopback(
    address: String = "127.0.0.1", basePort: UInt16 = 17000, bridge: Bool = true
  ) -> TestnetPlan {
    var nodes: [TestnetNode] = []
    for index in 1...3 {
      let offset = UInt16(index)
      nodes.append(
        TestnetNode(
          name: "auth\(index)", role: .authority, address: address, orPort: basePort + offset,
          dirPort: basePort + 100 + offset, controlPort: basePort + 200 + offset))
    }
    nodes.append(
      TestnetNode(
        name: "exit1", role: .exit, address: address, orPort: basePort + 11,
        controlPort: basePort + 211))
    nodes.append(
      TestnetNode(
        name: "middle1", role: .middle, address: address, orPort: basePort + 21,
        controlPort: basePort + 221))
    if bridge {
      nodes.append(
        TestnetNode(
          name: "bridge1", role: .bridge, address: address, orPort: basePort + 31,
          obfs4Port: basePort + 41, controlPort: basePort + 231))
    }
    return TestnetPlan(nodes: nodes)
  }

  /// One address per node, standard ports (ORPort 9001, DirPort 9030, obfs4 4433): the
  /// sandbox lane, where each relay is a distinct destination on the wire.
  public static func world(addresses: [String], bridge: Bool = true) -> TestnetPlan {
    precondition(addresses.count >= (bridge ? 6 : 5), "world plan needs one address per node")
    var nodes: [TestnetNode] = []
    for index in 0..<3 {
      nodes.append(
        TestnetNode(
          name: "auth\(index + 1)", role: .authority, address: addresses[index], orPort: 9001,
          dirPort: 9030, controlPort: 9051))
    }
    nodes.append(
      TestnetNode(
        name: "exit1", role: .exit, address: addresses[3], orPort: 9001, controlPort: 9051))
    nodes.append(
      TestnetNode(
        name: "middle1", role: .middle, address: addresses[4], orPort: 9001, controlPort: 9051))
    if bridge {
      nodes.append(
        TestnetNode(
          name: "bridge1", role: .bridge, address: addresses[5], orPort: 9001, obfs4Port: 4433,
          controlPort: 9051))
    }
    return TestnetPlan(nodes: nodes)
  }
}
