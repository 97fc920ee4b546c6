import Foundation

/// An IPv4 or IPv6 address with a port, parsed and printed in the usual text forms
/// ("127.0.0.1:39050", "[::1]:53").
public struct SocketAddress: Hashable, Sendable, CustomStringConvertible {
  public enum Family: Sendable { case ipv4, ipv6 }

  /// Network-order address bytes: 4 for IPv4, 16 for IPv6.
  public let bytes: [UInt8]
  public let port: UInt16

  public var family: Family { bytes.count == 4 ? .ipv4 : .ipv6 }

  public init?(bytes: [UInt8], port: UInt16) {
    guard bytes.count == 4 || bytes.count == 16 else { return nil }
    self.bytes = bytes
    self.port = port
  }

  /// Parses an address literal without a port ("10.0.0.1", "fd00::1").
  public init?(host: String, port: UInt16) {
    guard let bytes = SocketAddress.parseIP(host) else { return nil }
    self.bytes = bytes
    self.port = port
  }

  /// Parses "a.b.c.d:port" or "[v6]:port".
  public init?(_ text: String) {
    let host: Substring
    let portText: Substring
    if text.hasPrefix("[") {
      guard let close = text.firstIndex(of: "]") else { return nil }
      host = text[text.index(after: text.startIndex)..<close]
      let rest = text[text.index(after: close)...]
      guard rest.hasPrefix(":") else { return nil }
      portText = rest.dropFirst()
    } else {
      guard let colon = text.lastIndex(of: ":"), text.firstIndex(of: ":") == colon else {
        return nil
      }
      host = text[..<colon]
      portText = text[text.index(after: colon)...]
    }
    guard let port = UInt16(portText) else { return nil }
    self.init(host: String(host), port: port)
  }

  public static func parseIP(_ text: String) -> [UInt8]? {
    var v4 = in_addr()
    if inet_pton(AF_INET, text, &v4) == 1 {
      return withUnsafeBytes(of: &v4) { Array($0) }
    }
    var v6 = in6_addr()
    if inet_pton(AF_INET6, text, &v6) == 1 {
      return withUnsafeBytes(of: &v6) { Array($0) }
    }
    return nil
  }

  public static func formatIP(_ bytes: [UInt8]) -> String {
    var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
    let family = bytes.count == 4 ? AF_INET : AF_INET6
    let ok = bytes.withUnsafeBytes { raw in
      inet_ntop(family, raw.baseAddress, &buffer, socklen_t(buffer.count)) != nil
    }
    guard ok else { return "?" }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  public var host: String { SocketAddress.formatIP(bytes) }

  public var description: String {
    family == .ipv4 ? "\(host):\(port)" : "[\(host)]:\(port)"
  }

  /// True for 127.0.0.0/8 and ::1.
  public var isLoopback: Bool {
    family == .ipv4 ? bytes[0] == 127 : bytes == [UInt8](repeating: 0, count: 15) + [1]
  }

  /// Calls `body` with this address as a C sockaddr.
  public func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws -> R) rethrows
    -> R
  {
    switch family {
    case .ipv4:
      var sin = sockaddr_in()
      sin.sin_family = sa_family_t(AF_INET)
      sin.sin_port = port.bigEndian
      withUnsafeMutableBytes(of: &sin.sin_addr) { $0.copyBytes(from: bytes) }
      return try withUnsafePointer(to: &sin) {
        try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          try body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
    case .ipv6:
      var sin6 = sockaddr_in6()
      sin6.sin6_family = sa_family_t(AF_INET6)
      sin6.sin6_port = port.bigEndian
      withUnsafeMutableBytes(of: &sin6.sin6_addr) { $0.copyBytes(from: bytes) }
      return try withUnsafePointer(to: &sin6) {
        try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          try body($0, socklen_t(MemoryLayout<sockaddr_in6>.size))
        }
      }
    }
  }

  /// Reads a C sockaddr_storage filled by accept/getsockname.
  public init?(storage: sockaddr_storage) {
    var copy = storage
    switch Int32(storage.ss_family) {
    case AF_INET:
      let sin = withUnsafePointer(to: &copy) {
        $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee }
      }
      var addr = sin.sin_addr
      self.init(
        bytes: withUnsafeBytes(of: &addr) { Array($0) }, port: UInt16(bigEndian: sin.sin_port))
    case AF_INET6:
      let sin6 = withUnsafePointer(to: &copy) {
        $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee }
      }
      var addr = sin6.sin6_addr
      self.init(
        bytes: withUnsafeBytes(of: &addr) { Array($0) }, port: UInt16(bigEndian: sin6.sin6_port))
    default:
      return nil
    }
  }
}
