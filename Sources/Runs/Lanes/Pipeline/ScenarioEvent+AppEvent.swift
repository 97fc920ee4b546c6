import Audit
import Scenarios
import SystemUnderTest

extension ScenarioEvent {
  /// Normalises one event of the app driver (SystemUnderTest.AppEvent, one JSON line of
  /// `failclosed app`) to the names scenario files use (Scenarios.ScenarioEventCatalogue). Fields are
  /// kept as strings ("true"/"false" for Booleans).
  public init(_ event: SystemUnderTest.AppEvent) {
    var fields = event.fields.mapValues(\.description)
    let phase = fields["phase"] ?? ""
    let name: String
    switch event.kind {
    case .notification:
      name = fields.removeValue(forKey: "name") ?? "notification"
    case .state:
      let component = fields["component"] ?? ""
      let field = fields["field"] ?? ""
      let value = fields["value"] ?? ""
      if component == "tor", field == "isReady" {
        name = ScenarioEventKind.readyChanged.name
        fields = ["isReady": value]
      } else if component == "session", field == "proxyMode" {
        name = ScenarioEventKind.proxyMode.name
        fields = ["useTor": value == "tor" ? "true" : "false"]
      } else {
        name = "\(component).\(field)"
        fields = ["value": value]
      }
    case .socket:
      name = ScenarioEventKind.socketOpened.name
    case .request:
      fields["transport"] = fields["via"]
      switch phase {
      case "start": name = ScenarioEventKind.requestSent.name
      case "failed": name = ScenarioEventKind.requestFailed.name
      default: name = "request-\(phase)"
      }
    case .message:
      fields["kind"] = "message"
      name = phase == "queued" ? ScenarioEventKind.requestQueued.name : "message-\(phase)"
    case .relay:
      fields["kind"] = "relay"
      fields["target"] = fields["relay"]
      switch phase {
      case "queued": name = ScenarioEventKind.requestQueued.name
      case "failed", "permanent": name = ScenarioEventKind.requestFailed.name
      case "added":
        name = ScenarioEventKind.relayAdded.name
        fields["url"] = fields["relay"]
      case "rejected":
        name = ScenarioEventKind.relayRejected.name
        fields["url"] = fields["relay"]
        fields["reason"] = fields["error"]
      default: name = "relay-\(phase)"
      }
    case .directory:
      name = "directory-\(phase)"
    case .action:
      name = "action"
    case .error:
      name = "error"
    case .tor:
      name = "tor-\(phase)"
    }
    self.init(time: event.time, name: name, fields: fields)
  }
}

extension BootstrapSample {
  /// The bootstrap timeline TorManager read: one sample per change of its progress or summary.
  public static func timeline(from events: [SystemUnderTest.AppEvent]) -> [BootstrapSample] {
    var samples: [BootstrapSample] = []
    var progress = 0
    var summary = ""
    for event in events where event.kind == .state && event["component"]?.description == "tor" {
      switch event["field"]?.description {
      case "bootstrapProgress":
        progress = Int(event["value"]?.description ?? "") ?? progress
      case "bootstrapSummary":
        summary = event["value"]?.description ?? summary
      default: continue
      }
      if let last = samples.last, last.time == event.time {
        samples[samples.count - 1] = BootstrapSample(
          time: event.time, progress: progress, summary: summary)
      } else {
        samples.append(BootstrapSample(time: event.time, progress: progress, summary: summary))
      }
    }
    return samples
  }
}

extension ScenarioOutcome {
  /// Everything the runner has after one scenario, in the other modules' own types: the app
  /// driver's events (virtual seconds since the app started, which the runner aligns with the
  /// scenario's time 0), the audit of the capture, and `runStart`, the Unix time at which the
  /// scenario's virtual clock read 0 (for the capture's timestamps).
  public init(
    appEvents: [SystemUnderTest.AppEvent], audit: AuditReport, runStart: Double,
    timeScale: Double, clockSkip: ClockSkip? = nil, pcapPath: String? = nil,
    runError: String? = nil, wallSeconds: Double
  ) {
    self.init(
      events: appEvents.map(ScenarioEvent.init),
      bootstrap: BootstrapSample.timeline(from: appEvents),
      torTimeline: TorTimelineEntry.timeline(from: appEvents),
      audit: CaptureAudit(audit, runStart: runStart, timeScale: timeScale, skip: clockSkip),
      capture: CaptureStats(audit, pcapPath: pcapPath), runError: runError,
      wallSeconds: wallSeconds)
    self.clockSkip = clockSkip
  }
}
