/// Every event name a scenario pattern may use, with the field keys the event can carry: what
/// ``ScenarioEvent/init(_:)`` makes of the app driver's lines (SystemUnderTest.AppEvent), plus
/// the harness's own events (``ScenarioEventName/torCrashed``, ``ScenarioEventName/censorChanged``).
/// A pattern naming anything else can never match, so the parser rejects it with a "did you
/// mean" (a misspelt `no-event` would otherwise be trivially met). Scenarios/README.md lists
/// the same table; a test keeps the two in step.
public enum ScenarioEventCatalogue {
  /// Field keys of events normalised from the driver's `request` lines.
  static let requestFields = ["url", "via", "transport", "phase", "status", "error", "source"]
  static let relayFields = [
    "relay", "phase", "kind", "target", "error", "via", "delay", "attempt",
  ]
  static let messageFields = ["phase", "id", "kind", "relay", "reason", "sub"]
  static let directoryFields = [
    "phase", "source", "count", "delay", "reason", "url", "attempt",
  ]
  static let torFields = [
    "phase", "progress", "tag", "summary", "reason", "count", "command", "detail",
  ]

  /// Name to field keys, in the order the guide lists them.
  public static let events: [(name: String, fields: [String])] =
    [
      (ScenarioEventName.torWillStart, []),
      (ScenarioEventName.torDidBecomeReady, []),
      (ScenarioEventName.torWillRestart, []),
      (ScenarioEventName.torBootstrapDidStall, []),
      (ScenarioEventName.torUserPreferenceChanged, ["enabled"]),
      ("geoRelayDirectoryDidRefresh", []),
      (ScenarioEventName.readyChanged, ["isReady"]),
      (ScenarioEventName.proxyMode, ["useTor"]),
      (ScenarioEventName.socketOpened, ["endpoint", "transport", "target", "purpose"]),
      (ScenarioEventName.requestSent, requestFields),
      (ScenarioEventName.requestFailed, Array(Set(requestFields + relayFields)).sorted()),
      ("request-done", requestFields),
      ("request-finished", requestFields),
      ("request-held", requestFields),
      ("request-confirm", requestFields),
      ("request-ignored", requestFields),
      ("request-pending", requestFields),
      ("request-cancelled", requestFields),
      ("request-callback", requestFields),
      (ScenarioEventName.requestQueued, Array(Set(relayFields + messageFields)).sorted()),
      (ScenarioEventName.relayAdded, ["relay", "phase", "kind", "target", "url"]),
      (
        ScenarioEventName.relayRejected,
        ["relay", "phase", "kind", "target", "url", "reason", "error"]
      ),
      ("relay-connecting", relayFields),
      ("relay-connected", relayFields),
      ("relay-disconnected", relayFields),
      ("relay-dropped", relayFields),
      ("relay-backoff", relayFields),
      ("relay-eose-released", relayFields),
      ("message-sent", messageFields),
      ("message-failed", messageFields),
      ("message-dropped", messageFields),
      ("message-received", messageFields),
      ("message-accepted", messageFields),
      ("message-rejected", messageFields),
      (ScenarioEventName.directoryLoaded, directoryFields),
      ("directory-fetch", directoryFields),
      ("directory-skipped", directoryFields),
      ("directory-refreshed", directoryFields),
      ("directory-rejected", directoryFields),
      ("directory-retry", directoryFields),
      ("tor-bootstrap", torFields),
      ("tor-problem", torFields),
      ("tor-command", torFields),
      ("tor-reply-timeout", torFields),
      ("tor-process", torFields),
      ("tor-exit", torFields),
      ("tor-socks", torFields),
      ("tor-ready", torFields),
      ("tor-failed", torFields),
      ("action", ["action", "argument"]),
      ("error", ["message"]),
      (ScenarioEventName.torCrashed, ["by"]),
      (ScenarioEventName.censorChanged, ["rules", "active"]),
    ] + stateEvents.map { ($0, stateFields($0)) }

  /// The driver's `state` lines other than isReady and proxyMode: `component.field`, with
  /// the new value in `value`.
  public static let stateEvents = [
    "tor.isStarting", "tor.socksReady", "tor.allowAutoStart", "tor.bootstrapDidStall",
    "tor.bootstrapProgress", "tor.bootstrapSummary", "tor.isAppForeground", "tor.lastError",
    "tor.pathChangeSkipped", "tor.bridges", "tor.start", "session.rebuilt",
    "activation.activationAllowed", "activation.torDesired", "activation.userTorEnabled",
    "activation.reachable", "app.profile", "tor.state", "app.exited",
  ]

  /// A state line keeps only its new value (``ScenarioEvent/init(_:)``).
  static func stateFields(_ name: String) -> [String] { ["value"] }

  public static let names = events.map(\.name)

  /// The field keys `name` can carry, nil for an unknown name.
  public static func fields(of name: String) -> [String]? {
    events.first { $0.name == name }?.fields
  }

  /// The events the onion-browser profile emits: its URL schemes' requests, tor through the
  /// control port, its own state; none of bitchat's notifications, relays or messages.
  public static let onionBrowserEvents = [
    "action", "error", "app.profile", "ready-changed", "tor.start", "request-sent",
    "request-done", "request-failed", "request-held", "request-confirm", "request-ignored",
    "request-pending", "request-cancelled", "request-callback", "tor.state", "tor-exit",
    "tor-socks", "tor-ready", "tor-failed", "app.exited", "socket-opened", "tor-bootstrap",
    "tor-problem", "tor-command",
    "tor-reply-timeout",
    "tor-process", ScenarioEventName.torCrashed, ScenarioEventName.censorChanged,
  ]
  /// Onion Browser's alone: the bitchat-model profiles never emit these.
  static let onionBrowserOnly = [
    "request-held", "request-confirm", "request-ignored", "request-pending", "request-cancelled",
    "request-callback", "tor.state", "tor-exit", "app.exited",
  ]

  /// The event names `profile` can emit.
  public static func names(for profile: AppPlan.Profile) -> [String] {
    profile.isOnionBrowser
      ? onionBrowserEvents : names.filter { !onionBrowserOnly.contains($0) }
  }

  /// Why `pattern` can never match for `profile` (any profile when nil), or nil when every
  /// name and key is known.
  public static func problem(in pattern: EventPattern, profile: AppPlan.Profile? = nil)
    -> String?
  {
    guard !pattern.name.isEmpty else { return "an empty event pattern" }
    if let profile, fields(of: pattern.name) != nil,
      !names(for: profile).contains(pattern.name)
    {
      return "the \(profile.rawValue) profile never emits \"\(pattern.name)\" (its events: "
        + names(for: profile).joined(separator: ", ") + ")"
    }
    guard let fields = fields(of: pattern.name) else {
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
  public static var guideTable: String {
    var lines = ["| event | fields |", "|---|---|"]
    for event in events {
      let fields = event.fields.map { "`\($0)`" }.joined(separator: ", ")
      lines.append("| `\(event.name)` | \(fields.isEmpty ? "none" : fields) |")
    }
    return lines.joined(separator: "\n")
  }
}
