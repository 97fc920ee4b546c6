import Scenarios

/// A failure OONI recorded for a target, mapped to the censor action that makes the same
/// failure happen in the sandbox. The step matters: a timeout at the connect is a dropped SYN,
/// a timeout once connected is a handshake whose packets are dropped.
public enum FailureCensorAction: String, Sendable, Equatable, CaseIterable {
  /// Silently discard the SYN: generic_timeout_error at connect.
  case drop
  /// Answer the SYN with a reset: connection_refused.
  case reset
  /// Reset the first data packet: connection_reset after a successful connect.
  case resetAfterHandshake = "reset-after-handshake"
  /// The censor accepts and closes: eof_error.
  case closeAfterConnect = "close-after-connect"
  /// TLS tampering: the TCP handshake passes, the TLS handshake's packets (over 100 bytes) are
  /// dropped: a handshake timeout or a TLS failure.
  case tlsDropped = "tls-dropped"
  case icmpHostUnreachable = "icmp-host-unreachable"
  case icmpNetUnreachable = "icmp-net-unreachable"

  /// The failure the sandbox probe sees for this action.
  public var probedFailure: String {
    switch self {
    case .drop, .tlsDropped: return "generic_timeout_error"
    case .reset: return "connection_refused"
    case .resetAfterHandshake: return "connection_reset"
    case .closeAfterConnect: return "eof_error"
    case .icmpHostUnreachable: return "host_unreachable"
    case .icmpNetUnreachable: return "network_unreachable"
    }
  }

  /// Where the target failed and how, or nil for a failure no censor action stands for.
  public static func action(for target: TorTarget) -> FailureCensorAction? {
    guard
      let text = target.connect.failure ?? target.handshake.failure ?? target.request.failure
        ?? target.failure
    else { return nil }
    let connected = target.connect == .succeeded
    switch OONIFailure(text) {
    case .timeout: return connected ? .tlsDropped : .drop
    case .connectionRefused: return .reset
    case .connectionReset: return target.connect.failure != nil ? .reset : .resetAfterHandshake
    case .eof: return .closeAfterConnect
    case .hostUnreachable: return .icmpHostUnreachable
    case .networkUnreachable: return .icmpNetUnreachable
    case .tls: return .tlsDropped
    case .ntorAuthMismatch, .other: return nil
    }
  }

  /// The target's failure as one OONI name ("generic_timeout_error").
  public static func failureName(_ target: TorTarget) -> String? {
    (target.connect.failure ?? target.handshake.failure ?? target.request.failure ?? target.failure)
      .map { OONIFailure($0).description }
  }

  /// The scenario file's censor rule against one node.
  func rule(target node: String) -> [(key: String, value: JSONValue)] {
    let name: String
    switch self {
    case .tlsDropped: name = "drop"
    default: name = rawValue
    }
    var fields: [(key: String, value: JSONValue)] = [
      ("action", .string(name)), ("to", .string(node)), ("protocol", .string("tcp")),
    ]
    if self == .tlsDropped { fields.append(("longerThan", .number(100))) }
    return fields
  }
}
