/// What the censor does to matching packets: the one list the scenario files, the sandbox's
/// nftables rules, the OONI mapping, `--help` and completion read. A new action is a case
/// here; the compiler then names every switch that must say what it does.
public enum CensorAction: String, Sendable, Hashable, Codable, CaseIterable {
  /// Silently discards (a blackhole: connects time out).
  case drop
  /// Answers TCP with a reset (connects fail at once with ECONNREFUSED).
  case reset
  case icmpPortUnreachable = "icmp-port-unreachable"
  case icmpHostUnreachable = "icmp-host-unreachable"
  case icmpAdminProhibited = "icmp-admin-prohibited"
  /// ICMP network unreachable (ICMPv6 no route): OONI's network_unreachable.
  case icmpNetUnreachable = "icmp-net-unreachable"
  /// Lets the TCP handshake through and answers the first packet longer than 100 bytes (a
  /// TLS ClientHello, an HTTP request; never a SYN or a bare ACK) with a reset: DPI's RST
  /// injection, OONI's connection_reset after a successful connect.
  case resetAfterHandshake = "reset-after-handshake"
  /// Redirects the connection to the censor's own closer, which accepts it and closes it at
  /// once: the client's connect succeeds, its first read sees EOF (OONI's eof_error).
  case closeAfterConnect = "close-after-connect"
  /// Answers DNS questions crossing the censor (UDP and TCP 53) itself, with a poison address
  /// for the given names. Scenario files say it in `network.dnsPoisoning`, not as a rule.
  case poisonDNS = "poison-dns"

  /// Written as a rule in a scenario file's `network.censor` (all but poison-dns).
  public var isScenarioRule: Bool { self != .poisonDNS }

  /// The actions scenario files write as rules, in declaration order.
  public static var scenarioRules: [CensorAction] { allCases.filter(\.isScenarioRule) }

  /// Acts on TCP only: a rule with another protocol cannot be said.
  public var isTCPOnly: Bool {
    self == .reset || self == .resetAfterHandshake || self == .closeAfterConnect
  }

  /// One line for `--help` and the docs.
  public var summary: String {
    switch self {
    case .drop: return "discard silently: connects time out"
    case .reset: return "answer TCP with a reset: connects fail at once"
    case .icmpPortUnreachable: return "answer with ICMP port unreachable"
    case .icmpHostUnreachable: return "answer with ICMP host unreachable"
    case .icmpAdminProhibited: return "answer with ICMP administratively prohibited"
    case .icmpNetUnreachable: return "answer with ICMP network unreachable"
    case .resetAfterHandshake: return "let the handshake through, reset the first data"
    case .closeAfterConnect: return "accept, then close at once (EOF on first read)"
    case .poisonDNS: return "answer DNS with a poison address"
    }
  }
}
