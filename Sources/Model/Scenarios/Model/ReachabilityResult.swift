/// One private-network node probed from the device as OONI's `tor` test probes a target: a TCP
/// connect, then the class's handshake (TLS to an ORPort, an HTTP GET to a DirPort, bytes to
/// the obfs4 port); the failure in OONI's words, nil when it answered.
public struct ReachabilityResult: Sendable, Equatable {
  /// The censor target's name, "testnet-auth2-orport".
  public var node: String
  public var targetClass: RealTorTargetClass
  /// generic_timeout_error, connection_refused, connection_reset, eof_error, host_unreachable,
  /// network_unreachable, ssl_failed_handshake; nil when reachable.
  public var failure: String?
  public var seconds: Double

  public init(node: String, targetClass: RealTorTargetClass, failure: String?, seconds: Double) {
    self.node = node
    self.targetClass = targetClass
    self.failure = failure
    self.seconds = seconds
  }
}
