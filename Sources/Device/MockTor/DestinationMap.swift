import FailClosedSupport
import SOCKS

/// Hostnames (and .onion names, and IP literals) the mock can reach, each mapped to an address
/// on this machine. RESOLVE answers a mapped name with a virtual address in 10.254.0.0/16
/// that only the mock understands, the way tor answers with an exit's view: a client that
/// then CONNECTs to it reaches the mapped destination, and nothing ever contacts it directly.
public struct DestinationMap: Sendable, Equatable {
  private var entries: [String: SocketAddress] = [:]
  private var order: [String] = []
  /// Some key is an IP literal: only then is a CONNECT to an IP written out to look it up
  /// (every request paid for formatting its address when the map held no literal at all).
  private var hasLiteralKeys = false

  public init() {}

  public init(_ entries: [String: SocketAddress]) {
    for (name, address) in entries.sorted(by: { $0.key < $1.key }) { add(name, address) }
  }

  /// Parses "HOST=IP:PORT" (port 0 = the port the client asks for).
  public mutating func add(parsing spec: String) throws(MockTorError) {
    guard let equals = spec.firstIndex(of: "=") else {
      throw MockTorError.badMapping(spec: spec, reason: "expected HOST=IP:PORT")
    }
    let host = String(spec[..<equals])
    let target = String(spec[spec.index(after: equals)...])
    guard !host.isEmpty else { throw MockTorError.badMapping(spec: spec, reason: "empty HOST") }
    guard let address = SocketAddress(target) else {
      throw MockTorError.badMapping(
        spec: spec, reason: "'\(target)' is not IP:PORT (e.g. 127.0.0.1:8080 or [::1]:8080)")
    }
    guard address.isLoopback else {
      throw MockTorError.badMapping(
        spec: spec, reason: "\(address) is not on this machine (only 127.0.0.0/8 and ::1)")
    }
    add(host, address)
  }

  public mutating func add(_ host: String, _ address: SocketAddress) {
    let key = host.lowercased()
    if entries[key] == nil { order.append(key) }
    entries[key] = address
    if SOCKSAddress.parseIPv4(key) != nil || key.contains(":") { hasLiteralKeys = true }
  }

  public var hosts: [String] { order }

  public func address(for host: String) -> SocketAddress? { entries[host.lowercased()] }

  /// The virtual IPv4 address RESOLVE hands out for a mapped name.
  public func virtualAddress(for host: String) -> [UInt8]? {
    guard let index = order.firstIndex(of: host.lowercased()) else { return nil }
    return [10, 254, UInt8((index + 1) >> 8 & 0xFF), UInt8((index + 1) & 0xFF)]
  }

  /// The mapped name behind a virtual address.
  public func host(forVirtual bytes: [UInt8]) -> String? {
    guard bytes.count == 4, bytes[0] == 10, bytes[1] == 254 else { return nil }
    let index = Int(bytes[2]) << 8 | Int(bytes[3])
    return index >= 1 && index <= order.count ? order[index - 1] : nil
  }

  /// Where a CONNECT to (`address`, `port`) goes: a mapped name, a virtual address, a raw
  /// loopback IP (reachable as is), or nowhere.
  public func target(for address: SOCKSAddress, port: UInt16) -> SocketAddress? {
    func withPort(_ mapped: SocketAddress) -> SocketAddress {
      mapped.port == 0 ? SocketAddress(bytes: mapped.bytes, port: port)! : mapped
    }
    switch address {
    case .hostname(let name):
      if let mapped = entries[name.lowercased()] { return withPort(mapped) }
      if let bytes = SOCKSAddress.parseIPv4(name) { return target(for: .ipv4(bytes), port: port) }
      if name.lowercased() == "localhost" {
        return SocketAddress(bytes: [127, 0, 0, 1], port: port)
      }
      if let literal = SocketAddress(host: name.trimmingBrackets, port: port), literal.isLoopback {
        return literal
      }
      return nil
    case .ipv4(let bytes), .ipv6(let bytes):
      if hasLiteralKeys, let mapped = entries[address.description] { return withPort(mapped) }
      if let name = host(forVirtual: bytes), let mapped = entries[name] { return withPort(mapped) }
      let literal = SocketAddress(bytes: bytes, port: port)
      return literal?.isLoopback == true ? literal : nil
    }
  }
}

extension String {
  fileprivate var trimmingBrackets: String {
    hasPrefix("[") && hasSuffix("]") ? String(dropFirst().dropLast()) : self
  }
}
