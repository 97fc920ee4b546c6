/// The pcap link types the decoder understands (numbers from the tcpdump.org LINKTYPE list and
/// the DLT_ values libpcap hands back for them).
public enum LinkType: Int32, Sendable, Codable, CaseIterable {
  case null = 0
  case ethernet = 1
  /// DLT_RAW on Linux; files usually carry LINKTYPE_RAW (101) instead.
  case rawDLT = 12
  case rawOpenBSD = 14
  case raw = 101
  case loop = 108
  case linuxSLL = 113
  case ipv4 = 228
  case ipv6 = 229
  case linuxSLL2 = 276

  public var name: String {
    switch self {
    case .null: return "NULL"
    case .ethernet: return "EN10MB"
    case .rawDLT, .rawOpenBSD, .raw: return "RAW"
    case .loop: return "LOOP"
    case .linuxSLL: return "LINUX_SLL"
    case .ipv4: return "IPV4"
    case .ipv6: return "IPV6"
    case .linuxSLL2: return "LINUX_SLL2"
    }
  }
}
