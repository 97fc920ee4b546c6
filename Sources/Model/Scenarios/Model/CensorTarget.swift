/// What a censor rule's `to` names: a symbolic part of the sandbox the runner maps to its
/// addresses (Lanes' SandboxMapping), one node of the private network, or a host name the
/// world serves. Written as the scenario file spells it; a string literal reads the same way.
public enum CensorTarget: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
  /// The mock's fake guard: mock lane only.
  case torGuards
  /// Every ORPort and DirPort in the private network's consensus: real-Tor lane only.
  case torRelays
  /// The private network's obfs4 bridge: real-Tor lane only.
  case torBridge
  case dnsResolver
  /// The whole world namespace, web host included.
  case world
  case any
  /// One node of the private network ("testnet-auth2-orport", ``RealTorTargetClass``):
  /// real-Tor lane only.
  case node(String)
  /// A host name the world serves (its resolver answers every name with the web host).
  case host(String)

  /// The symbolic targets, in the order the docs list them.
  public static let symbolic: [CensorTarget] = [
    .torGuards, .torRelays, .torBridge, .dnsResolver, .world, .any,
  ]

  public init(_ written: String) {
    if let symbolic = Self.symbolic.first(where: { $0.description == written }) {
      self = symbolic
    } else if RealTorTargetClass.of(written) != nil {
      self = .node(written)
    } else {
      self = .host(written)
    }
  }

  public init(stringLiteral value: String) { self.init(value) }

  /// As scenario files write it.
  public var description: String {
    switch self {
    case .torGuards: return "tor-guards"
    case .torRelays: return "tor-relays"
    case .torBridge: return "tor-bridge"
    case .dnsResolver: return "dns-resolver"
    case .world: return "world"
    case .any: return "any"
    case .node(let name), .host(let name): return name
    }
  }

  /// The lanes whose sandbox has this target.
  public func exists(on lane: Lane) -> Bool {
    switch self {
    case .torGuards: return lane == .mock
    case .torRelays, .torBridge, .node: return lane == .realTor
    case .dnsResolver, .world, .any, .host: return true
    }
  }

  /// The symbolic targets and nodes a scenario of `lane` may name, as written.
  public static func names(on lane: Lane) -> [String] {
    (symbolic.filter { $0.exists(on: lane) }.map(\.description))
      + (lane == .realTor ? RealTorTargetClass.allNodes : [])
  }
}
