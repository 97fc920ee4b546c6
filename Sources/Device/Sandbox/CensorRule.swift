import FailClosedSupport
import Vocabulary

/// One censorship rule, as a scenario file states it: what the censor does to packets from the
/// device that match every given field (an absent field matches anything).
///
///     {"action": "reset", "port": 443, "protocol": "tcp"}
///     {"action": "drop", "longerThan": 600}
///     {"action": "icmp-admin-prohibited", "destination": "10.66.1.10"}
///     {"action": "poison-dns", "poisonAddress": "10.66.1.99", "names": ["example.org"]}
public struct CensorRule: Codable, Sendable, Hashable {
  /// The one list of censor actions (Vocabulary), which scenario files also read.
  public typealias Action = CensorAction

  public enum TransportProtocol: String, Codable, Sendable {
    case tcp, udp, icmp
  }

  public var action: Action
  /// An address or a CIDR block, IPv4 or IPv6.
  public var destination: String?
  /// A destination port (TCP or UDP unless `protocol` says which).
  public var port: UInt16?
  public var `protocol`: TransportProtocol?
  /// Matches packets whose IP length is greater than this many bytes: a crude stand-in for
  /// DPI that drops TLS handshakes (a ClientHello is large, a SYN is not).
  public var longerThan: Int?
  /// For `poison-dns`: the address given in every poisoned answer (A for IPv4, AAAA for IPv6).
  public var poisonAddress: String?
  /// For `poison-dns`: the names to poison; absent means every name.
  public var names: [String]?

  public init(
    action: Action, destination: String? = nil, port: UInt16? = nil,
    protocol: TransportProtocol? = nil, longerThan: Int? = nil, poisonAddress: String? = nil,
    names: [String]? = nil
  ) {
    self.action = action
    self.destination = destination
    self.port = port
    self.protocol = `protocol`
    self.longerThan = longerThan
    self.poisonAddress = poisonAddress
    self.names = names
  }

  /// Checks the fields fit together; the error names the field at fault.
  public func validate() throws(CensorRuleError) {
    if let destination, CensorRule.parseBlock(destination) == nil {
      throw CensorRuleError(
        field: "destination", message: "'\(destination)' is not an address or CIDR block")
    }
    if let longerThan, longerThan < 0 || longerThan > 65535 {
      throw CensorRuleError(field: "longerThan", message: "\(longerThan) is outside 0...65535")
    }
    if port != nil, self.protocol == .icmp {
      throw CensorRuleError(field: "port", message: "ICMP has no ports")
    }
    switch action {
    case .reset, .resetAfterHandshake, .closeAfterConnect:
      if let proto = self.protocol, proto != .tcp {
        throw CensorRuleError(
          field: "protocol",
          message: (action == .reset ? "a reset" : action.rawValue)
            + " needs TCP, not \(proto.rawValue)")
      }
      if action == .resetAfterHandshake, longerThan != nil {
        throw CensorRuleError(
          field: "longerThan", message: "reset-after-handshake sets its own length (100 bytes)")
      }
      if action == .closeAfterConnect, longerThan != nil {
        throw CensorRuleError(
          field: "longerThan", message: "close-after-connect acts on the connect, not on a length")
      }
    case .poisonDNS:
      guard let poisonAddress, SocketAddress.parseIP(poisonAddress) != nil else {
        throw CensorRuleError(
          field: "poisonAddress", message: "poison-dns needs an address literal to answer with")
      }
      if destination != nil || port != nil || self.protocol != nil || longerThan != nil {
        throw CensorRuleError(
          field: "action", message: "poison-dns takes only poisonAddress and names")
      }
    default:
      break
    }
    if action != .poisonDNS, poisonAddress != nil || names != nil {
      throw CensorRuleError(
        field: "poisonAddress", message: "only poison-dns takes poisonAddress or names")
    }
  }

  /// Parses "10.66.1.0/24", "fd66::/64" or a bare address into (bytes, prefix length).
  static func parseBlock(_ text: String) -> (bytes: [UInt8], prefix: Int)? {
    let parts = text.split(separator: "/", omittingEmptySubsequences: false)
    guard parts.count <= 2, let bytes = SocketAddress.parseIP(String(parts[0])) else { return nil }
    let maximum = bytes.count * 8
    guard parts.count == 2 else { return (bytes, maximum) }
    guard let prefix = Int(parts[1]), (0...maximum).contains(prefix) else { return nil }
    return (bytes, prefix)
  }
}

/// A censor rule that does not make sense, naming the field at fault.
public struct CensorRuleError: Error, CustomStringConvertible, Sendable, Equatable {
  public let field: String
  public let message: String
  public var description: String { "censor rule, field '\(field)': \(message)" }
}
