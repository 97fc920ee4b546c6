/// An OONI failure string read as what happened on the wire (df-007; probe-cli netxlite's
/// classifier). Wrapped early-2020 forms ("Get http://...: eof_error") and legacy Python names
/// ("tcp_timed_out_error") read as their modern kind.
public enum OONIFailure: Sendable, Equatable, CustomStringConvertible {
  /// Nothing came back before the probe's timer (generic_timeout_error, timed_out, ...).
  case timeout
  /// A RST in reply to the SYN (connection_refused).
  case connectionRefused
  /// A RST on an established connection (connection_reset).
  case connectionReset
  /// A FIN before the expected bytes (eof_error).
  case eof
  case hostUnreachable
  case networkUnreachable
  /// A TLS failure other than a timeout, reset or EOF (ssl_*).
  case tls(String)
  /// obfs4's "ntor AUTH mismatch": a client bug of 2022, not censorship.
  case ntorAuthMismatch
  /// Anything else, as written.
  case other(String)

  public init(_ text: String) {
    let lowered = text.lowercased()
    if lowered.contains("ntor auth mismatch") {
      self = .ntorAuthMismatch
      return
    }
    if lowered.hasPrefix("unknown_failure"), lowered.contains("no route to host") {
      self = .hostUnreachable
      return
    }
    // "Get http://128.31.0.39:9131/...: eof_error": the code is the last ": " part.
    let code = lowered.components(separatedBy: ": ").last ?? lowered
    switch code {
    case "generic_timeout_error", "timed_out", "tcp_timed_out_error", "deferred_timeout_error",
      "task_timed_out":
      self = .timeout
    case "connection_refused", "connection_refused_error": self = .connectionRefused
    case "connection_reset", "connection_lost_error": self = .connectionReset
    case "eof_error": self = .eof
    case "host_unreachable": self = .hostUnreachable
    case "network_unreachable": self = .networkUnreachable
    default:
      self = code.hasPrefix("ssl_") ? .tls(code) : .other(text)
    }
  }

  /// OONI's name for the kind, as the sandbox's probe reports it too.
  public var description: String {
    switch self {
    case .timeout: return "generic_timeout_error"
    case .connectionRefused: return "connection_refused"
    case .connectionReset: return "connection_reset"
    case .eof: return "eof_error"
    case .hostUnreachable: return "host_unreachable"
    case .networkUnreachable: return "network_unreachable"
    case .tls(let code): return code
    case .ntorAuthMismatch: return "ntor AUTH mismatch"
    case .other(let text): return text
    }
  }
}
