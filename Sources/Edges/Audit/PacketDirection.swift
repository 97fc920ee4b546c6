/// Which way a packet crossed the device's link. The audit takes it from the capture itself,
/// never from a packet's own addresses: Linux's cooked capture carries the kernel's packet
/// type (outgoing or received), and an Ethernet frame's source MAC says whether the device's
/// interface sent it. Only when neither is known does the policy fall back to the device's
/// addresses, and only when those are not given either is it `unknown`.
public enum PacketDirection: UInt8, Sendable, Codable, CustomStringConvertible {
  case unknown
  /// Sent by the device: what a leak is made of.
  case outbound
  /// Received by the device (unicast, broadcast, multicast, or another host's on the link).
  case inbound

  public var description: String {
    switch self {
    case .unknown: return "unknown"
    case .outbound: return "outbound"
    case .inbound: return "inbound"
    }
  }

  /// The same crossing seen from the other end of the link: what one end sent, the other
  /// received.
  public var reversed: PacketDirection {
    switch self {
    case .unknown: return .unknown
    case .outbound: return .inbound
    case .inbound: return .outbound
    }
  }

  /// Linux's sll_pkttype: 4 is PACKET_OUTGOING; 0-3 (host, broadcast, multicast, other host)
  /// were received; anything else (loopback, kernel-internal types) says nothing.
  static func linux(packetType: UInt16) -> PacketDirection {
    switch packetType {
    case 4: return .outbound
    case 0, 1, 2, 3: return .inbound
    default: return .unknown
    }
  }
}

/// Things a packet carries that let it reach somewhere other than where its destination
/// address says, or that let its pieces say different things: never on an allowed path.
public struct PacketAnomalies: OptionSet, Sendable, Hashable {
  public let rawValue: UInt16
  public init(rawValue: UInt16) { self.rawValue = rawValue }

  /// IPv4 loose or strict source routing (options 131, 137).
  public static let sourceRoute = PacketAnomalies(rawValue: 1)
  /// IPv4 record route (7) or timestamp (68): routers write into the packet.
  public static let recordRoute = PacketAnomalies(rawValue: 2)
  /// Any other IPv4 option except end, no-op and router alert.
  public static let otherIPOption = PacketAnomalies(rawValue: 4)
  /// An IPv6 routing header: the destination address is only a waypoint.
  public static let routingHeader = PacketAnomalies(rawValue: 8)
  /// A fragment whose bytes overlap its datagram's transport header, or a second first
  /// fragment that disagrees with the first about ports.
  public static let fragmentOverlap = PacketAnomalies(rawValue: 16)
  /// IPv4 options that do not parse (an option running past the header), or bytes other than
  /// zero after the end-of-options mark.
  public static let malformedIPOptions = PacketAnomalies(rawValue: 32)
  /// IPv6 hop-by-hop or destination options that carry something: padding with data in it
  /// (RFC 8200: PadN's bytes are zero), more padding than alignment needs (over 7 bytes), an
  /// option other than padding and router alert, or options that do not tile the header.
  public static let extensionOptionData = PacketAnomalies(rawValue: 64)
  /// Bytes after the message: past the IP datagram's length in the frame (other than an
  /// Ethernet frame's zero padding), or past a UDP datagram's length inside its IP packet.
  public static let trailingData = PacketAnomalies(rawValue: 128)
  /// TCP options that carry more than TCP needs: a kind no stack sends (anything but end,
  /// no-op, MSS, window scale, SACK, timestamps, MD5, MPTCP, TCP-AO, Fast Open, AccECN), a known kind
  /// at a length it never has, options that run past the header, or bytes other than zero
  /// after the end-of-options mark.
  public static let tcpOptionData = PacketAnomalies(rawValue: 256)
}
