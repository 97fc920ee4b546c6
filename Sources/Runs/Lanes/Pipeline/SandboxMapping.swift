import Audit
import FailClosedSupport
import Sandbox
import Scenarios

/// Turns a scenario's network plan into the Sandbox's censor rules, with the symbolic targets
/// resolved to the sandbox's fixed addresses (Sandbox.AddressPlan).
public enum SandboxMapping {
  /// Where a poisoned name points: the censor's world-side addresses, where nothing listens.
  /// Both record types are poisoned: an app that asks AAAA first (bitchat) is fooled too.
  public static let sinkholeV4 = AddressPlan.censorWorldSideV4
  public static let sinkholeV6 = AddressPlan.censorWorldSideV6

  /// The private network's endpoints the real-Tor lane's targets name: `tor-relays` every
  /// ORPort and DirPort in its consensus, `tor-bridge` the obfs4 bridge's endpoint.
  public struct RealTorTargets: Sendable, Equatable {
    public var relays: [SocketAddress]
    public var bridges: [SocketAddress]
    /// Each node's endpoint by censor target name ("testnet-auth2-orport").
    public var nodes: [String: SocketAddress]

    public init(
      relays: [SocketAddress], bridges: [SocketAddress], nodes: [String: SocketAddress] = [:]
    ) {
      self.relays = relays
      self.bridges = bridges
      self.nodes = nodes
    }
  }

  /// The destinations a target names, as addresses or CIDR blocks with an optional port
  /// (nil: the rule's own port).
  public static func destinations(_ target: CensorTarget, real: RealTorTargets? = nil)
    -> [(block: String?, port: UInt16?)]
  {
    switch target {
    case .torGuards: return AddressPlan.guards.map { ($0.host, $0.port) }
    case .torRelays: return (real?.relays ?? []).map { ($0.host, $0.port) }
    case .torBridge: return (real?.bridges ?? []).map { ($0.host, $0.port) }
    case .dnsResolver: return [(AddressPlan.resolverV4, nil)]
    case .world:
      return [
        (AddressPlan.worldV4 + "/\(AddressPlan.prefixV4)", nil),
        (AddressPlan.worldV6 + "/\(AddressPlan.prefixV6)", nil),
        (AddressPlan.webHostV4, nil), (AddressPlan.webHostV6, nil),
      ]
    case .any: return [(nil, nil)]
    case .node(let node): return (real?.nodes[node]).map { [($0.host, $0.port)] } ?? []
    // The world's resolver answers every name with the web host.
    case .host: return [(AddressPlan.webHostV4, nil), (AddressPlan.webHostV6, nil)]
    }
  }

  /// The Sandbox rules in force at virtual time `t`: the censor rules active then, and the DNS
  /// poisoning (always in force).
  public static func censorRules(
    _ plan: NetworkPlan, at t: Double, real: RealTorTargets? = nil
  ) -> [Sandbox.CensorRule] {
    var rules: [Sandbox.CensorRule] = []
    for rule in plan.censor where rule.isActive(at: t) {
      // The scenario's and the sandbox's actions are one type (Vocabulary.CensorAction).
      let action = rule.action
      let proto = rule.transport.map {
        Sandbox.CensorRule.TransportProtocol(rawValue: $0.rawValue)!
      }
      var seen: Set<String> = []
      for destination in destinations(rule.target, real: real) {
        // A tor-guards/tor-relays rule without a port means the endpoint's own port (a rule
        // with a port names that port on each address, once); an ICMP one has none.
        let port = rule.port.map { UInt16($0) } ?? (proto == .icmp ? nil : destination.port)
        guard seen.insert("\(destination.block ?? "*") \(port.map(String.init) ?? "*")").inserted
        else { continue }
        // A v6 block with an IPv4-only protocol is harmless: the rule never matches.
        rules.append(
          Sandbox.CensorRule(
            action: action, destination: destination.block, port: port, protocol: proto,
            longerThan: rule.longerThan))
      }
    }
    if !plan.dnsPoisoning.isEmpty {
      for sinkhole in [sinkholeV4, sinkholeV6] {
        rules.append(
          Sandbox.CensorRule(
            action: .poisonDNS, poisonAddress: sinkhole, names: plan.dnsPoisoning.map(\.name)))
      }
    }
    return rules
  }

  /// The virtual times after 0 at which the set of rules in force changes, sorted: the runner
  /// reapplies ``censorRules(_:at:)`` at each.
  public static func changeTimes(_ plan: NetworkPlan) -> [Double] {
    let times = plan.censor.flatMap { [$0.from, $0.until].compactMap { $0 } }.filter { $0 > 0 }
    return Array(Set(times)).sorted()
  }
}
