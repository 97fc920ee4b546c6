import TorControl

/// What an Onion Browser controller tells its edge: each becomes one line of the app's event log.
public enum OnionBrowserReport: Hashable, Sendable {
  /// AUTHENTICATE succeeded.
  case authenticated
  /// The bootstrap phase changed (from a poll answer or a STATUS_CLIENT event).
  case bootstrap(BootstrapPhase)
  /// A new bootstrap problem (a WARN report with a reason or count not seen before).
  case problem(BootstrapWarning)
  /// A command the controller sent that is worth a log line (everything except 1.X's 0.15 s
  /// polls and heartbeats); secrets are redacted.
  case command(String)
  /// A heartbeat got no answer within `seconds`; SIGNAL HUP follows.
  case replyTimeout(command: String, seconds: Double)
  /// tor answered a command with an error (4xx/5xx), or 1.X read something it did not expect.
  case replyError(command: String, code: Int, text: String)
  /// 2.X's connection guard expired: `toggled` says whether DisableNetwork was cycled (never
  /// with bridges, where Onion Browser only tells the user about difficulties). The app then
  /// shows its UI (torConnDifficulties -> torConnFinished).
  case stalled(seconds: Double, toggled: Bool)
  /// tor said its circuits work (STATUS_CLIENT CIRCUIT_ESTABLISHED, or
  /// `status/circuit-established=1`).
  case circuitEstablished
  /// tor's SOCKS listener as `GETINFO net/listeners/socks` gave it (3.X uses this one).
  case socksListener(String)
  /// The version's own "Tor is ready" (1.X: PROGRESS=100; 2.X: circuit established; 3.X:
  /// circuit established and the SOCKS listener known).
  case ready
  /// The start failed for good (3.X's completion(error): the app stops tor).
  case failed(reason: String)
  /// The app exits (1.X's exit(0)): tor, running in its process, goes with it.
  case exitApp(reason: String)
  /// The control connection is finished: closed by tor, unreadable, or closed by the app.
  case closed(reason: String)
}

/// The result of one input to an Onion Browser controller: lines to write (each gets
/// `lineEnding`), reports, and what to do with the connection after writing.
public struct OnionBrowserOutput: Hashable, Sendable {
  public var lines: [String] = []
  public var reports: [OnionBrowserReport] = []
  /// Close the control connection after writing.
  public var close = false
  /// Open a (new) control connection after writing and closing; then call `connected(at:)`
  /// or `connectFailed(reason:at:)`.
  public var connect = false
  /// The app exits: the edge stops everything.
  public var exitApp = false
  /// 1.X writes "\n" (ULINetSocket writeString: "...\n"); Tor.framework "\r\n".
  public var lineEnding = "\r\n"

  public init() {}

  /// The lines as the control port gets them.
  public var bytes: [UInt8] { Array(lines.map { $0 + lineEnding }.joined().utf8) }

  /// Appends `other` (its lines after these, the same line ending).
  public mutating func merge(_ other: OnionBrowserOutput) {
    lines += other.lines
    reports += other.reports
    close = close || other.close
    connect = connect || other.connect
    exitApp = exitApp || other.exitApp
    lineEnding = other.lines.isEmpty ? lineEnding : other.lineEnding
  }
}
