/// Every event name a scenario pattern may use, with the field keys the event can carry: what
/// ``ScenarioEvent/init(_:)`` makes of the app driver's lines (SystemUnderTest.AppEvent), plus
/// the harness's own events (``ScenarioEventKind/torCrashed``, ``ScenarioEventKind/censorChanged``).
/// A pattern naming anything else can never match, so the parser rejects it with a "did you
/// mean" (a misspelt `no-event` would otherwise be trivially met). Scenarios/README.md lists
/// the same table; a test keeps the two in step.
public enum ScenarioEventCatalogue {
  /// Every event, in the order the guide lists them; the named ones are in
  /// ``ScenarioEventKind``'s statics, the rest declared here once.
  public static let all: [ScenarioEventKind] =
    [
      .torWillStart, .torDidBecomeReady, .torWillRestart, .torBootstrapDidStall,
      .torUserPreferenceChanged,
      ScenarioEventKind("geoRelayDirectoryDidRefresh", source: .appNotification),
      .readyChanged, ScenarioEventKind.proxyMode, .socketOpened, .requestSent, .requestFailed,
      ScenarioEventKind("request-done", ScenarioEventKind.requestFields, emittedBy: .all),
      ScenarioEventKind("request-finished", ScenarioEventKind.requestFields),
    ]
    + ["held", "confirm", "ignored", "pending", "cancelled", "callback"].map {
      ScenarioEventKind("request-\($0)", ScenarioEventKind.requestFields, emittedBy: .onionBrowser)
    }
    + [.requestQueued, .relayAdded, .relayRejected]
    + ["connecting", "connected", "disconnected", "dropped", "backoff", "eose-released"].map {
      ScenarioEventKind("relay-\($0)", ScenarioEventKind.relayFields)
    }
    + ["sent", "failed", "dropped", "received", "accepted", "rejected"].map {
      ScenarioEventKind("message-\($0)", ScenarioEventKind.messageFields)
    }
    + [.directoryLoaded]
    + ["fetch", "skipped", "refreshed", "rejected", "retry"].map {
      ScenarioEventKind("directory-\($0)", ScenarioEventKind.directoryFields)
    }
    + [
      "bootstrap", "problem", "command", "reply-timeout", "process", "exit", "socks", "ready",
      "failed",
    ].map {
      ScenarioEventKind(
        "tor-\($0)", ScenarioEventKind.torFields, emittedBy: $0 == "exit" ? .onionBrowser : .all)
    }
    + [
      .action,
      ScenarioEventKind("error", ["message"], emittedBy: .all),
      .torCrashed, .censorChanged,
    ]
    + stateEvents.map { name in
      ScenarioEventKind(
        name, ["value"],
        emittedBy: ["tor.start", "app.profile"].contains(name)
          ? .all : ["tor.state", "app.exited"].contains(name) ? .onionBrowser : .bitchat)
    }
    + programEvents.map { ScenarioEventKind($0, ["value"], emittedBy: []) }

  /// What the program launcher (`failclosed program-launch`) says of a black box, as `state`
  /// lines of component `program`: how it started (at-start, after-bootstrap, or
  /// bootstrap-wait-ended), each line it printed (the first 200, 300 characters each), its
  /// exit status, that it was still running at the scenario's end (killed), the success file
  /// it wrote, or why it could not start.
  public static let programEvents = [
    "program.started", "program.output", "program.exit", "program.killed", "program.file",
    "program.error",
  ]

  /// The driver's `state` lines other than isReady and proxyMode: `component.field`, with
  /// the new value in `value` (``ScenarioEvent/init(_:)`` keeps only that).
  public static let stateEvents = [
    "tor.isStarting", "tor.socksReady", "tor.allowAutoStart", "tor.bootstrapDidStall",
    "tor.bootstrapProgress", "tor.bootstrapSummary", "tor.isAppForeground", "tor.lastError",
    "tor.pathChangeSkipped", "tor.bridges", "tor.start", "session.rebuilt",
    "activation.activationAllowed", "activation.torDesired", "activation.userTorEnabled",
    "activation.reachable", "app.profile", "tor.state", "app.exited",
  ]

  public static let names = all.map(\.name)

  /// TorManager's and NetworkActivationService's notifications: what the `notification` and
  /// `no-notification` expectations name.
  public static let torNotificationNames = all.filter { $0.source == .torNotification }.map(
    \.name)

  /// The field keys `name` can carry in `kinds`, nil for an unknown name.
  public static func fields(of name: String, in kinds: [ScenarioEventKind] = all) -> [String]? {
    kinds.first { $0.name == name }?.fields
  }

  /// The event names `profile` can emit, in the guide's order.
  public static func names(for profile: AppPlan.Profile, in kinds: [ScenarioEventKind] = all)
    -> [String]
  {
    kinds.filter { $0.emittedBy.contains(profile.isOnionBrowser ? .onionBrowser : .bitchat) }
      .map(\.name)
  }

  /// Why `pattern` can never match for `profile` (any profile when nil) among `kinds` (the
  /// catalogue unless a test says), or nil when every name and key is known.
  public static func problem(
    in pattern: EventPattern, profile: AppPlan.Profile? = nil, kinds: [ScenarioEventKind] = all
  ) -> String? {
    guard !pattern.name.isEmpty else { return "an empty event pattern" }
    let names = kinds.map(\.name)
    if let profile, fields(of: pattern.name, in: kinds) != nil,
      !Self.names(for: profile, in: kinds).contains(pattern.name)
    {
      return "the \(profile.rawValue) profile never emits \"\(pattern.name)\" (its events: "
        + Self.names(for: profile, in: kinds).joined(separator: ", ") + ")"
    }
    guard let fields = fields(of: pattern.name, in: kinds) else {
      return "unknown event \"\(pattern.name)\""
        + NameSuggestion.hint(for: pattern.name, in: names)
        + " (Scenarios/README.md lists every event)"
    }
    for field in pattern.fields where !fields.contains(field.key) {
      let known = fields.isEmpty ? "none" : fields.joined(separator: ", ")
      return "\"\(pattern.name)\" has no field \"\(field.key)\""
        + NameSuggestion.hint(for: field.key, in: fields) + " (its fields: \(known))"
    }
    return nil
  }

  /// The guide's event table (Scenarios/README.md carries it verbatim; a test compares).
  public static var guideTable: String { guideTable(of: all) }

  public static func guideTable(of kinds: [ScenarioEventKind]) -> String {
    var lines = ["| event | fields |", "|---|---|"]
    for event in kinds {
      let fields = event.fields.map { "`\($0)`" }.joined(separator: ", ")
      lines.append("| `\(event.name)` | \(fields.isEmpty ? "none" : fields) |")
    }
    return lines.joined(separator: "\n")
  }
}
