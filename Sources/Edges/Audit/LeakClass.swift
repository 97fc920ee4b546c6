/// What kind of leak a packet is. clear-on-tor-endpoint is given by the content check alone
/// (a flow to a Tor endpoint whose bytes are not what that endpoint speaks: the censor on
/// the path reads them). Otherwise, when several apply, the first in this order wins:
/// dns (any packet to or from a DNS port: UDP/TCP 53, DNS-over-TLS 853, mDNS 5353,
/// LLMNR 5355; names are the most telling evidence), multicast (a multicast or broadcast
/// destination that is not link control), ipv6 (any other IPv6 packet), then by protocol:
/// tcp, udp, icmp (ICMPv4), otherProtocol (other IP protocols, non-IP frames, undecodable frames).
public enum LeakClass: String, Sendable, Codable, CaseIterable, Comparable {
  case dns
  case clearOnTorEndpoint = "clear-on-tor-endpoint"
  case multicast
  case ipv6
  case tcp
  case udp
  case icmp
  case otherProtocol = "other-protocol"

  public static func < (lhs: LeakClass, rhs: LeakClass) -> Bool {
    allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
  }

  /// Ports whose traffic is DNS whatever its payload.
  @inline(__always)
  public static func isDNSPort(_ port: UInt16) -> Bool {
    port == 53 || port == 853 || port == 5353 || port == 5355
  }
}

/// Traffic the kernel sends for the link itself, reported apart and never a leak when well
/// formed and link-scoped (``LinkControlValidator``): ARP, IPv6 neighbour discovery (RS, RA,
/// NS, NA, redirect; hop limit 255 as RFC 4861 requires), MLD listener queries and reports
/// (hop limit 1, link-scoped groups), and IGMP about link-local groups.
public enum LinkControlKind: String, Sendable, Codable, CaseIterable {
  case arp
  case neighbourDiscovery = "neighbour-discovery"
  case mld
  case igmp
}

/// The audit's judgement of one packet.
public enum PacketDisposition: Sendable, Equatable {
  /// To an allowed endpoint, from one (a reply), or an ICMP error about such a flow.
  case allowed
  /// The capture's own positive-control packet.
  case control
  case linkControl(LinkControlKind)
  /// Arrived at the device (it left nothing), and is no reply of an allowed flow.
  case inbound
  /// From an allowed endpoint, in a capture that does not say which way packets went and
  /// without the device's addresses: a reply, or a forged packet leaving. Never a pass.
  case undecided
  /// The reverse direction of a flow already judged a leak: counted with that leak.
  case leakReply(LeakClass)
  case leak(LeakClass)

  public var label: String {
    switch self {
    case .allowed: return "allowed"
    case .control: return "control"
    case .linkControl(let kind): return "link-control:\(kind.rawValue)"
    case .inbound: return "inbound"
    case .undecided: return "undecided"
    case .leakReply(let leakClass): return "leak-reply:\(leakClass.rawValue)"
    case .leak(let leakClass): return "leak:\(leakClass.rawValue)"
    }
  }
}
