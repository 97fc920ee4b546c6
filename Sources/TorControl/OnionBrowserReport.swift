/// What ``OnionBrowserController`` tells its edge: each becomes one line of the app's event log.
public enum OnionBrowserReport: Hashable, Sendable {
  /// AUTHENTICATE succeeded.
  case authenticated
  /// The bootstrap phase changed (from a poll answer or a STATUS_CLIENT event).
  case bootstrap(BootstrapPhase)
  /// A new bootstrap problem (a WARN report with a reason or count not seen before).
  case problem(BootstrapWarning)
  /// A command the controller sent that is worth a log line (everything except the 0.15 s
  /// polls and the heartbeats); secrets are redacted.
  case command(String)
  /// A heartbeat got no answer within `seconds`; SIGNAL HUP follows.
  case replyTimeout(command: String, seconds: Double)
  /// tor answered a command with an error (4xx/5xx).
  case replyError(command: String, code: Int, text: String)
  /// No bootstrap report for `seconds`: `toggled` says whether DisableNetwork was cycled
  /// (never with bridges, where Onion Browser only tells the user about difficulties).
  case stalled(seconds: Double, toggled: Bool)
  /// tor said its circuits work (STATUS_CLIENT CIRCUIT_ESTABLISHED).
  case circuitEstablished
  /// The control connection is finished: closed by tor, unreadable, or stopped by us.
  case closed(reason: String)
}

/// The result of one input to ``OnionBrowserController``: lines to write (each gets CRLF),
/// reports, and whether to close the connection after writing.
public struct OnionBrowserOutput: Hashable, Sendable {
  public var lines: [String] = []
  public var reports: [OnionBrowserReport] = []
  public var close = false

  public init() {}

  /// The lines as the control port expects them.
  public var bytes: [UInt8] { Array(lines.map { $0 + "\r\n" }.joined().utf8) }
}
