/// An asynchronous "650" event, formatted byte for byte as tor 0.4.9 sends it
/// (control_bootstrap.c, control_events.c).
public struct ControlAsyncEvent: Hashable, Sendable {
  /// The SETEVENTS name a controller must subscribe to, e.g. STATUS_CLIENT.
  public let name: String
  /// The line after "650 ", e.g. "STATUS_CLIENT NOTICE BOOTSTRAP PROGRESS=5 ...".
  public let line: String

  public init(name: String, line: String) {
    self.name = name
    self.line = line
  }

  public var text: String { "650 \(line)\r\n" }
  public var bytes: [UInt8] { Array(text.utf8) }

  /// `BOOTSTRAP PROGRESS=5 TAG=conn SUMMARY="Connecting to a relay"`: the event body, also the
  /// GETINFO status/bootstrap-phase answer after "NOTICE ".
  public static func bootstrapBody(_ phase: BootstrapPhase) -> String {
    "BOOTSTRAP PROGRESS=\(phase.progress) TAG=\(phase.tag) SUMMARY=\"\(phase.summary)\""
  }

  public static func bootstrapBody(_ warning: BootstrapWarning) -> String {
    bootstrapBody(warning.phase)
      + " WARNING=\"\(warning.warning)\" REASON=\(warning.reason) COUNT=\(warning.count)"
      + " RECOMMENDATION=\(warning.recommendation) HOSTID=\"\(warning.hostID)\""
      + " HOSTADDR=\"\(warning.hostAddress)\""
  }

  /// The answer to GETINFO status/bootstrap-phase for a state: tor's last bootstrap message.
  public static func bootstrapPhaseLine(_ state: BootstrapState) -> String {
    if let warning = state.lastWarning { return "WARN " + bootstrapBody(warning) }
    return "NOTICE " + bootstrapBody(state.phase)
  }

  public static func bootstrap(_ phase: BootstrapPhase) -> ControlAsyncEvent {
    ControlAsyncEvent(name: "STATUS_CLIENT", line: "STATUS_CLIENT NOTICE " + bootstrapBody(phase))
  }

  /// tor sends every bootstrap problem at WARN severity; RECOMMENDATION says whether to show it.
  public static func bootstrap(_ warning: BootstrapWarning) -> ControlAsyncEvent {
    ControlAsyncEvent(name: "STATUS_CLIENT", line: "STATUS_CLIENT WARN " + bootstrapBody(warning))
  }

  public static let circuitEstablished = ControlAsyncEvent(
    name: "STATUS_CLIENT", line: "STATUS_CLIENT NOTICE CIRCUIT_ESTABLISHED")

  public static func circuitNotEstablished(reason: String) -> ControlAsyncEvent {
    ControlAsyncEvent(
      name: "STATUS_CLIENT", line: "STATUS_CLIENT NOTICE CIRCUIT_NOT_ESTABLISHED REASON=\(reason)")
  }

  public static func networkLiveness(up: Bool) -> ControlAsyncEvent {
    ControlAsyncEvent(name: "NETWORK_LIVENESS", line: "NETWORK_LIVENESS \(up ? "UP" : "DOWN")")
  }

  /// The 650 events a controller sees for one simulator event (none for a crash: the
  /// connection just closes).
  public static func events(for event: BootstrapEvent) -> [ControlAsyncEvent] {
    switch event.kind {
    case .progress(let phase): return [bootstrap(phase)]
    case .warning(let warning): return [bootstrap(warning)]
    case .networkUp: return [circuitEstablished, networkLiveness(up: true)]
    case .networkDown(let reason):
      return [circuitNotEstablished(reason: reason), networkLiveness(up: false)]
    case .crashed: return []
    }
  }

  /// Every event name tor 0.4.9 accepts in SETEVENTS (control_events.c control_event_table).
  public static let knownNames: [String] = [
    "CIRC", "CIRC_MINOR", "STREAM", "ORCONN", "BW", "DEBUG", "INFO", "NOTICE", "WARN", "ERR",
    "NEWDESC", "ADDRMAP", "DESCCHANGED", "NS", "STATUS_GENERAL", "STATUS_CLIENT",
    "STATUS_SERVER", "GUARD", "STREAM_BW", "CLIENTS_SEEN", "NEWCONSENSUS", "BUILDTIMEOUT_SET",
    "SIGNAL", "CONF_CHANGED", "CONN_BW", "CELL_STATS", "CIRC_BW", "TRANSPORT_LAUNCHED",
    "HS_DESC", "HS_DESC_CONTENT", "NETWORK_LIVENESS", "PT_LOG", "PT_STATUS",
  ]
}
