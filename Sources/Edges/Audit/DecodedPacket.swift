/// What the decoder learned about one frame: scalars only, so decoding never allocates.
/// Offsets point into the frame the decoder was given.
public struct DecodedPacket: Sendable {
  public enum Network: UInt8, Sendable {
    /// The link header or the IP header was cut short or malformed.
    case undecodable
    case ipv4
    case ipv6
    case arp
    /// A link-layer protocol that is neither IP nor ARP (its EtherType is kept).
    case otherLink
  }

  public var network: Network = .undecodable
  public var etherType: UInt16 = 0
  public var source = IPAddress.zero
  public var destination = IPAddress.zero
  /// The upper-layer protocol number (after IPv6 extension headers).
  public var ipProtocol: UInt8 = 0
  public var hopLimit: UInt8 = 0
  public var sourcePort: UInt16 = 0
  public var destinationPort: UInt16 = 0
  /// True when the ports were read from this packet (TCP/UDP, first fragment or unfragmented).
  public var hasPorts = false
  public var isFragment = false
  /// A fragment with a non-zero offset: no transport header, ports come from the first one.
  public var isLaterFragment = false
  public var fragmentID: UInt32 = 0
  public var tcpFlags: UInt8 = 0
  /// The TCP sequence number: the content check of a Tor endpoint follows the device's bytes
  /// in order from the SYN.
  public var tcpSequence: UInt32 = 0
  public var icmpType: UInt8 = 0
  public var icmpCode: UInt8 = 0
  /// For ICMP errors: the packet the error quotes (its protocol, destination and ports), so an
  /// error about an allowed flow counts as that flow's reply.
  public var hasQuotedPacket = false
  public var quotedProtocol: UInt8 = 0
  public var quotedSource = Endpoint(address: .zero, port: 0)
  public var quotedDestination = Endpoint(address: .zero, port: 0)
  /// The transport payload within the captured bytes.
  public var payloadOffset = 0
  public var payloadLength = 0
  /// A header past the IP header (transport, extension) did not fit in the captured bytes.
  public var transportTruncated = false
  /// Which way the frame crossed the link, when the link layer says (cooked captures carry
  /// the kernel's packet type; Ethernet frames are compared with the device's MACs).
  public var direction = PacketDirection.unknown
  /// The link-layer source address (a MAC in the low 48 bits), when the frame carries one.
  public var linkSource: UInt64 = 0
  public var hasLinkSource = false
  /// Where the network header (IP or ARP) starts, where the IP transport header starts, and
  /// where the network packet ends within the captured bytes.
  public var networkOffset = 0
  public var transportOffset = 0
  public var networkEnd = 0
  /// The packet's length as its IP header claims it (IPv4 total length; IPv6 40 + payload).
  public var ipTotalLength = 0
  /// A fragment's offset in bytes.
  public var fragmentOffset = 0
  public var anomalies = PacketAnomalies()
  /// The network layer's extras: IPv4 options (any but end and no-op padding) and which IPv6
  /// extension headers the packet carries. An exempt packet may carry only what its protocol
  /// needs (MLD: a hop-by-hop router alert; IGMP: an IPv4 router alert; nothing else).
  public var networkExtras = NetworkExtras()
  /// For ICMP errors: how many bytes of the quoted packet the error carries, and the length
  /// the quoted IP header claims for the packet it was cut from.
  public var quotedBytes = 0
  public var quotedClaimedLength = 0

  public init() {}

  public var sourceEndpoint: Endpoint { Endpoint(address: source, port: sourcePort) }
  public var destinationEndpoint: Endpoint { Endpoint(address: destination, port: destinationPort) }
}

/// Which IPv4 options and IPv6 extension headers a packet carries (not what they say: a
/// problem in them is a ``PacketAnomalies`` member).
public struct NetworkExtras: OptionSet, Sendable, Hashable {
  public let rawValue: UInt8
  public init(rawValue: UInt8) { self.rawValue = rawValue }

  /// IPv4 router alert (option 148) or IPv6 hop-by-hop router alert (option 5).
  public static let routerAlert = NetworkExtras(rawValue: 1)
  /// An IPv4 option other than end, no-op and router alert.
  public static let otherIPv4Option = NetworkExtras(rawValue: 2)
  public static let hopByHop = NetworkExtras(rawValue: 4)
  public static let destinationOptions = NetworkExtras(rawValue: 8)
  public static let routing = NetworkExtras(rawValue: 16)
  public static let fragmentHeader = NetworkExtras(rawValue: 32)
  /// Authentication, mobility, HIP or shim6 headers.
  public static let otherExtensionHeader = NetworkExtras(rawValue: 64)
}

/// IP protocol numbers the audit names.
public enum IPProtocolNumber {
  public static let icmp: UInt8 = 1
  public static let igmp: UInt8 = 2
  public static let tcp: UInt8 = 6
  public static let udp: UInt8 = 17
  public static let icmpv6: UInt8 = 58

  public static func name(_ number: UInt8) -> String {
    switch number {
    case icmp: return "icmp"
    case igmp: return "igmp"
    case tcp: return "tcp"
    case udp: return "udp"
    case icmpv6: return "icmpv6"
    case 47: return "gre"
    case 50: return "esp"
    case 132: return "sctp"
    default: return "ip-proto-\(number)"
    }
  }
}
