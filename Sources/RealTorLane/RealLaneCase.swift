import Sandbox

/// One censorship case on the real-Tor lane: what the censor does, whether the client uses the
/// bridge, how long to watch, and what tor must do.
public struct RealLaneCase: Sendable, Codable, Equatable {
  public enum Expectation: Sendable, Codable, Equatable {
    /// Bootstrap reaches 100% (and a fetch through the exit succeeds).
    case bootstraps
    /// Bootstrap never passes `progress` (tor's tag at that point in `tag`).
    case stuck(atMost: Int, tag: String)
    /// A "Problem bootstrapping" line with this reason (TIMEOUT, CONNECTREFUSED, ...).
    case problem(reason: String)
    /// Bootstrap went through the pluggable-transport phases (conn_pt, conn_done_pt).
    case throughBridge
    /// Every flow on the wire went to one of these ports (the bridge's, say).
    case onlyPorts([UInt16])
  }

  public var name: String
  public var proves: String
  public var censor: [CensorRule]
  public var useBridge: Bool
  public var observeSeconds: Double
  public var expectations: [Expectation]

  public init(
    name: String, proves: String, censor: [CensorRule], useBridge: Bool = false,
    observeSeconds: Double, expectations: [Expectation]
  ) {
    self.name = name
    self.proves = proves
    self.censor = censor
    self.useBridge = useBridge
    self.observeSeconds = observeSeconds
    self.expectations = expectations
  }

  static let relayPorts: [UInt16] = [9001, 9030]

  static func block(_ action: CensorRule.Action, ports: [UInt16]) -> [CensorRule] {
    ports.map { CensorRule(action: action, port: $0, protocol: .tcp) }
  }

  /// The six cases, from the recipe's measurements (reference/private-tor-net.md).
  public static let library: [RealLaneCase] = [
    RealLaneCase(
      name: "real-healthy",
      proves: "With nothing blocked, Debian's tor bootstraps through the private network and "
        + "every packet goes to a relay of the consensus (positive control).",
      censor: [], observeSeconds: 60, expectations: [.bootstraps]),
    RealLaneCase(
      name: "real-relays-dropped",
      proves: "With every ORPort and DirPort blackholed, tor stays at 5% (conn) and nothing "
        + "else leaves the device.",
      censor: block(.drop, ports: relayPorts + [4433]), observeSeconds: 20,
      expectations: [.stuck(atMost: 5, tag: "conn")]),
    RealLaneCase(
      name: "real-relays-reset",
      proves: "With every relay answering with a reset, tor stays at 5% and warns "
        + "CONNECTREFUSED, and nothing else leaves the device.",
      censor: block(.reset, ports: relayPorts + [4433]), observeSeconds: 25,
      expectations: [.stuck(atMost: 5, tag: "conn"), .problem(reason: "CONNECTREFUSED")]),
    RealLaneCase(
      name: "real-tls-dropped-by-size",
      proves: "A DPI censor that drops every packet longer than 100 bytes lets TCP connect but "
        + "kills the TLS handshake: tor stays at 10% (conn_done), nothing leaks.",
      censor: [CensorRule(action: .drop, protocol: .tcp, longerThan: 100)], observeSeconds: 20,
      expectations: [.stuck(atMost: 10, tag: "conn_done")]),
    RealLaneCase(
      name: "real-bridge-around-block",
      proves: "With every relay blocked but the obfs4 bridge reachable, a client configured with "
        + "the bridge bootstraps through it, and the only flow on the wire is to the bridge.",
      censor: block(.drop, ports: relayPorts), useBridge: true, observeSeconds: 60,
      expectations: [.bootstraps, .throughBridge, .onlyPorts([4433])]),
    RealLaneCase(
      name: "real-bridge-blocked",
      proves: "With the bridge blocked as well, the bridged client stalls and nothing leaks.",
      censor: block(.drop, ports: relayPorts + [4433]), useBridge: true, observeSeconds: 20,
      expectations: [.stuck(atMost: 5, tag: "conn_pt")]),
  ]
}
