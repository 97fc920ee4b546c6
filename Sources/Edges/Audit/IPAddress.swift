import FailClosedSupport

#if canImport(Glibc)
  import Glibc
#endif

/// An IPv4 or IPv6 address held in two integers, so decoding a packet never allocates.
/// IPv4 addresses live in the low 32 bits of `low`.
public struct IPAddress: Hashable, Sendable, Comparable, CustomStringConvertible {
  public var high: UInt64
  public var low: UInt64
  public var isIPv6: Bool

  public static let zero = IPAddress(high: 0, low: 0, isIPv6: false)
  /// `::`, the source of packets sent before an address is configured.
  public static let zeroIPv6 = IPAddress(high: 0, low: 0, isIPv6: true)

  public init(high: UInt64, low: UInt64, isIPv6: Bool) {
    self.high = high
    self.low = low
    self.isIPv6 = isIPv6
  }

  public init(ipv4: UInt32) {
    self.init(high: 0, low: UInt64(ipv4), isIPv6: false)
  }

  /// Network-order bytes: 4 for IPv4, 16 for IPv6.
  public init?(bytes: [UInt8]) {
    switch bytes.count {
    case 4:
      self.init(ipv4: bytes.reduce(0) { $0 << 8 | UInt32($1) })
    case 16:
      let high = bytes[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
      let low = bytes[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
      self.init(high: high, low: low, isIPv6: true)
    default:
      return nil
    }
  }

  /// Parses "10.0.0.1" or "fd00::1" (no brackets, no port).
  public init?(_ text: String) {
    guard let bytes = SocketAddress.parseIP(text) else { return nil }
    self.init(bytes: bytes)
  }

  public var bytes: [UInt8] {
    if !isIPv6 {
      let value = UInt32(truncatingIfNeeded: low)
      return [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) }
    }
    let shifts: [UInt64] = [56, 48, 40, 32, 24, 16, 8, 0]
    return shifts.map { UInt8(truncatingIfNeeded: high >> $0) }
      + shifts.map { UInt8(truncatingIfNeeded: low >> $0) }
  }

  /// 224.0.0.0/4 and ff00::/8; 255.255.255.255 counts too (broadcast reaches every host alike).
  public var isMulticastOrBroadcast: Bool {
    if isIPv6 { return high >> 56 == 0xff }
    let value = UInt32(truncatingIfNeeded: low)
    return value >> 28 == 0xE || value == 0xFFFF_FFFF
  }

  /// 224.0.0.0/24 and ff02::/16: groups that never leave the link.
  public var isLinkLocalMulticast: Bool {
    if isIPv6 { return high >> 48 == 0xff02 }
    return UInt32(truncatingIfNeeded: low) >> 8 == 0xE00000
  }

  public var description: String {
    var raw = bytes
    var buffer = [CChar](repeating: 0, count: 64)
    let ok = raw.withUnsafeMutableBytes { pointer in
      inet_ntop(isIPv6 ? AF_INET6 : AF_INET, pointer.baseAddress, &buffer, 64) != nil
    }
    guard ok else { return "?" }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  public static func < (lhs: IPAddress, rhs: IPAddress) -> Bool {
    (lhs.isIPv6 ? 1 : 0, lhs.high, lhs.low) < (rhs.isIPv6 ? 1 : 0, rhs.high, rhs.low)
  }
}

/// An address and a port: an allowed destination, a flow end, a leak's destination.
public struct Endpoint: Hashable, Sendable, Comparable, CustomStringConvertible {
  public var address: IPAddress
  public var port: UInt16

  public init(address: IPAddress, port: UInt16) {
    self.address = address
    self.port = port
  }

  /// Parses "a.b.c.d:port" or "[v6]:port".
  public init?(_ text: String) {
    guard let parsed = SocketAddress(text) else { return nil }
    self.init(parsed)
  }

  public init(_ address: SocketAddress) {
    self.init(address: IPAddress(bytes: address.bytes)!, port: address.port)
  }

  public var description: String {
    address.isIPv6 ? "[\(address)]:\(port)" : "\(address):\(port)"
  }

  public static func < (lhs: Endpoint, rhs: Endpoint) -> Bool {
    (lhs.address, lhs.port) < (rhs.address, rhs.port)
  }
}
