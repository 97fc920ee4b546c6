/// Something the simulated Tor client reports while it bootstraps, at a plan time in seconds.
public struct BootstrapEvent: Hashable, Sendable {
  public enum Kind: Hashable, Sendable {
    /// A new bootstrap phase (for arti: progress 0 or 100 with arti's summaries).
    case progress(BootstrapPhase)
    /// A WARN BOOTSTRAP problem report (tor sends one per failed attempt; COUNT grows).
    case warning(BootstrapWarning)
    /// Circuits can be built again (tor: STATUS_CLIENT CIRCUIT_ESTABLISHED).
    case networkUp
    /// Circuits cannot be built (tor: STATUS_CLIENT CIRCUIT_NOT_ESTABLISHED).
    case networkDown(reason: String)
    /// The Tor client process died.
    case crashed
  }

  public let time: Double
  public let kind: Kind

  public init(time: Double, kind: Kind) {
    self.time = time
    self.kind = kind
  }
}

/// The fields of a `650 STATUS_CLIENT WARN BOOTSTRAP ...` event. PROGRESS, TAG and SUMMARY are
/// the phase tor is stuck at.
public struct BootstrapWarning: Hashable, Sendable {
  public let phase: BootstrapPhase
  /// Human text, e.g. "Connection refused".
  public let warning: String
  /// Controller-facing reason, e.g. CONNECTREFUSED.
  public let reason: String
  public let count: Int
  /// "ignore" below tor's threshold of 10 problems, "warn" from then on.
  public let recommendation: String
  /// The relay's identity fingerprint (40 hex digits) or "?".
  public let hostID: String
  /// The relay's "address:port" or "?".
  public let hostAddress: String

  public init(
    phase: BootstrapPhase, warning: String, reason: String, count: Int, recommendation: String,
    hostID: String, hostAddress: String
  ) {
    self.phase = phase
    self.warning = warning
    self.reason = reason
    self.count = count
    self.recommendation = recommendation
    self.hostID = hostID
    self.hostAddress = hostAddress
  }
}

/// A relay named in warnings: identity fingerprint and "address:port".
public struct RelayIdentity: Hashable, Sendable {
  public let fingerprint: String
  public let address: String

  public init(fingerprint: String, address: String) {
    self.fingerprint = fingerprint
    self.address = address
  }
}
