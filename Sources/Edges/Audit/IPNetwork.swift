/// An address prefix such as 10.66.0.0/24 or fd66::/64: the device's own link, which link
/// control (ARP, neighbour discovery) may name and nothing else.
public struct IPNetwork: Hashable, Sendable, CustomStringConvertible {
  public var address: IPAddress
  public var prefixLength: Int

  public init(address: IPAddress, prefixLength: Int) {
    self.address = address
    self.prefixLength = max(0, min(prefixLength, address.isIPv6 ? 128 : 32))
  }

  /// Parses "10.66.0.0/24" or "fd66::/64".
  public init?(_ text: String) {
    let parts = text.split(separator: "/", omittingEmptySubsequences: false)
    guard parts.count == 2, let address = IPAddress(String(parts[0])),
      let length = Int(parts[1]), length >= 0, length <= (address.isIPv6 ? 128 : 32)
    else { return nil }
    self.init(address: address, prefixLength: length)
  }

  public func contains(_ other: IPAddress) -> Bool {
    guard other.isIPv6 == address.isIPv6 else { return false }
    if !address.isIPv6 {
      let mask: UInt64 =
        prefixLength == 0 ? 0 : (0xFFFF_FFFF << UInt64(32 - prefixLength)) & 0xFFFF_FFFF
      return other.low & mask == address.low & mask
    }
    let highBits = min(prefixLength, 64)
    let lowBits = max(0, prefixLength - 64)
    let highMask: UInt64 = highBits == 0 ? 0 : ~UInt64(0) << UInt64(64 - highBits)
    let lowMask: UInt64 = lowBits == 0 ? 0 : ~UInt64(0) << UInt64(64 - lowBits)
    return other.high & highMask == address.high & highMask
      && other.low & lowMask == address.low & lowMask
  }

  public var description: String { "\(address)/\(prefixLength)" }

  /// fe80::/10, on every IPv6 link.
  public static let ipv6LinkLocal = IPNetwork(
    address: IPAddress(high: 0xFE80 << 48, low: 0, isIPv6: true), prefixLength: 10)
}
