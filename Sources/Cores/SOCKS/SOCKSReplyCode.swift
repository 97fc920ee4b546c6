/// SOCKS5 reply codes (RFC 1928 section 6) and Tor's onion-service extensions (prop 304,
/// socks-extensions.txt section 4, sent by C tor with ExtendedErrors and always by Arti).
public enum SOCKSReplyCode: UInt8, Sendable, CaseIterable, CustomStringConvertible {
  case succeeded = 0x00
  case generalFailure = 0x01
  case notAllowedByRuleset = 0x02
  case networkUnreachable = 0x03
  case hostUnreachable = 0x04
  case connectionRefused = 0x05
  case ttlExpired = 0x06
  case commandNotSupported = 0x07
  case addressTypeNotSupported = 0x08
  case onionDescriptorNotFound = 0xF0
  case onionDescriptorInvalid = 0xF1
  case onionIntroductionFailed = 0xF2
  case onionRendezvousFailed = 0xF3
  case onionMissingClientAuth = 0xF4
  case onionWrongClientAuth = 0xF5
  case onionInvalidAddress = 0xF6
  case onionIntroductionTimedOut = 0xF7

  public var description: String {
    switch self {
    case .succeeded: return "succeeded"
    case .generalFailure: return "general SOCKS server failure"
    case .notAllowedByRuleset: return "connection not allowed by ruleset"
    case .networkUnreachable: return "network unreachable"
    case .hostUnreachable: return "host unreachable"
    case .connectionRefused: return "connection refused"
    case .ttlExpired: return "TTL expired"
    case .commandNotSupported: return "command not supported"
    case .addressTypeNotSupported: return "address type not supported"
    case .onionDescriptorNotFound: return "onion service descriptor can not be found"
    case .onionDescriptorInvalid: return "onion service descriptor is invalid"
    case .onionIntroductionFailed: return "onion service introduction failed"
    case .onionRendezvousFailed: return "onion service rendezvous failed"
    case .onionMissingClientAuth: return "onion service missing client authorization"
    case .onionWrongClientAuth: return "onion service wrong client authorization"
    case .onionInvalidAddress: return "onion service invalid address"
    case .onionIntroductionTimedOut: return "onion service introduction timed out"
    }
  }

  /// Parses a code given as "0x05", "05", "f6" or a name like "connection-refused".
  public init?(text: String) {
    let lower = text.lowercased()
    let hex = lower.hasPrefix("0x") ? String(lower.dropFirst(2)) : lower
    if let value = UInt8(hex, radix: 16), let code = SOCKSReplyCode(rawValue: value) {
      self = code
      return
    }
    let names: [String: SOCKSReplyCode] = [
      "general-failure": .generalFailure, "not-allowed": .notAllowedByRuleset,
      "network-unreachable": .networkUnreachable, "host-unreachable": .hostUnreachable,
      "connection-refused": .connectionRefused, "ttl-expired": .ttlExpired,
      "command-not-supported": .commandNotSupported,
      "address-type-not-supported": .addressTypeNotSupported,
    ]
    guard let code = names[lower] else { return nil }
    self = code
  }

  /// SOCKS4 knows only granted (0x5A) and rejected (0x5B).
  public var socks4Code: UInt8 { self == .succeeded ? 0x5A : 0x5B }
}
