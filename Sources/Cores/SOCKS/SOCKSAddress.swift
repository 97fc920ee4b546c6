/// A destination as the client put it on the wire. Keeping the form matters: a raw IP where a
/// hostname was expected means the client resolved the name itself, a DNS-leak signal.
public enum SOCKSAddress: Hashable, Sendable, CustomStringConvertible {
  /// Four network-order bytes.
  case ipv4([UInt8])
  /// Sixteen network-order bytes.
  case ipv6([UInt8])
  /// A hostname (or .onion address) for the proxy to resolve, as sent.
  case hostname(String)

  /// True when the client sent an address it had resolved (or typed) itself.
  public var isRawIP: Bool {
    if case .hostname = self { return false }
    return true
  }

  /// True also for a hostname field that holds an IP literal ("10.0.0.1", "::1"): torsocks
  /// sends the address it got from RESOLVE that way, and the client did the resolving.
  public var isIPLiteral: Bool {
    guard case .hostname(let name) = self else { return true }
    if SOCKSAddress.parseIPv4(name) != nil { return true }
    let bare = name.hasPrefix("[") && name.hasSuffix("]") ? name.dropFirst().dropLast() : name[...]
    return bare.contains(":") && bare.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
  }

  /// The ATYP the client used: "ipv4", "ipv6" or "domain".
  public var wireType: String {
    switch self {
    case .ipv4: return "ipv4"
    case .ipv6: return "ipv6"
    case .hostname: return "domain"
    }
  }

  public var hostname: String? {
    if case .hostname(let name) = self { return name }
    return nil
  }

  public var description: String {
    switch self {
    case .ipv4(let bytes): return bytes.map(String.init).joined(separator: ".")
    case .ipv6(let bytes): return SOCKSAddress.formatIPv6(bytes)
    case .hostname(let name): return name
    }
  }

  /// Parses a dotted-quad IPv4 literal, nil for anything else.
  public static func parseIPv4(_ text: String) -> [UInt8]? {
    let parts = text.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 4 else { return nil }
    var bytes: [UInt8] = []
    for part in parts {
      guard !part.isEmpty, part.count <= 3, part.allSatisfy(\.isASCII),
        let value = UInt8(part)
      else { return nil }
      bytes.append(value)
    }
    return bytes
  }

  /// RFC 5952-ish text: lowercase hex groups, the longest zero run compressed.
  static func formatIPv6(_ bytes: [UInt8]) -> String {
    guard bytes.count == 16 else { return "?" }
    let groups = (0..<8).map { UInt16(bytes[2 * $0]) << 8 | UInt16(bytes[2 * $0 + 1]) }
    var bestStart = -1
    var bestLength = 0
    var index = 0
    while index < 8 {
      if groups[index] == 0 {
        var end = index
        while end < 8 && groups[end] == 0 { end += 1 }
        if end - index > bestLength && end - index > 1 {
          bestStart = index
          bestLength = end - index
        }
        index = end
      } else {
        index += 1
      }
    }
    func hex(_ range: Range<Int>) -> String {
      range.map { String(groups[$0], radix: 16) }.joined(separator: ":")
    }
    if bestStart < 0 { return hex(0..<8) }
    return hex(0..<bestStart) + "::" + hex((bestStart + bestLength)..<8)
  }

  /// The wire form used in SOCKS5 messages: ATYP byte then the address.
  var socks5Encoding: [UInt8] {
    switch self {
    case .ipv4(let bytes): return [0x01] + bytes
    case .ipv6(let bytes): return [0x04] + bytes
    case .hostname(let name):
      let utf8 = Array(name.utf8.prefix(255))
      return [0x03, UInt8(utf8.count)] + utf8
    }
  }
}
