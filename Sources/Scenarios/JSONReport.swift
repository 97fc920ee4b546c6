/// report.json, the source of truth every other report is a view of.
public enum JSONReport {
  public static let formatVersion = 1

  public static func render(_ report: RunReport) -> String {
    make(report).serialized(indent: 2) + "\n"
  }

  public static func make(_ report: RunReport) -> JSONValue {
    .object([
      ("format", .string("failclosed-report")),
      ("formatVersion", .number(Double(formatVersion))),
      ("startedAt", .string(report.startedAt)),
      ("verdict", .string(report.verdict.rawValue)),
      ("exitCode", .number(Double(report.exitCode))),
      ("summary", .string(report.countsSentence)),
      ("timeScale", .number(report.timeScale)),
      (
        "versions",
        .object(report.versions.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })
      ),
      (
        "counts",
        .object(ScenarioVerdict.allCases.map { ($0.rawValue, .number(Double(report.count($0)))) })
      ),
      (
        "malformed",
        .array(
          report.loadErrors.map { e in
            .object([
              ("file", .string(e.file)), ("path", .string(e.path)), ("message", .string(e.message)),
              ("description", .string(e.description)),
            ])
          })
      ),
      ("scenarios", .array(report.results.map(scenario))),
    ])
  }

  static func scenario(_ r: ScenarioResult) -> JSONValue {
    let s = r.scenario
    var members: [(key: String, value: JSONValue)] = [
      ("name", .string(s.name)),
      ("file", .string(s.path)),
      ("title", .string(s.title)),
      ("proves", .string(s.proves)),
      ("verdict", .string(r.verdict.rawValue)),
      ("canary", .bool(s.isCanary)),
      ("reasons", .array(r.judgement.reasons.map { .string($0) })),
      ("profile", .string(s.app.profile.rawValue)),
      ("personality", .string(s.tor.personality.rawValue)),
      ("bootstrapPlan", .string(s.tor.bootstrap)),
      ("duration", .number(s.duration)),
      ("wallSeconds", .number(r.outcome.wallSeconds)),
    ]
    if let weakness = s.weakness { members.append(("weakness", .number(Double(weakness)))) }
    if let error = r.outcome.runError { members.append(("runError", .string(error))) }
    members += [
      (
        "expectations",
        .array(
          r.judgement.expectations.map { e in
            .object([
              ("kind", .string(e.expectation.kind)),
              ("expects", .string(e.expectation.sentence)),
              ("status", .string(e.status.rawValue)),
              ("reason", .string(e.reason)),
            ])
          })
      ),
      ("leaks", .array(r.judgement.leaks.map(leak))),
      ("exposure", .array(r.judgement.exposure.map(leak))),
      (
        "actions",
        .array(
          s.app.actions.map { a in
            .object([("at", .number(a.at)), ("do", .string(a.step.verb))])
          })
      ),
      (
        "events",
        .array(
          r.outcome.events.map { e in
            .object([
              ("time", .number(e.time)), ("name", .string(e.name)),
              (
                "fields",
                .object(e.fields.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })
              ),
            ])
          })
      ),
      (
        "bootstrap",
        .array(
          r.outcome.bootstrap.map { b in
            .object([
              ("time", .number(b.time)), ("progress", .number(Double(b.progress))),
              ("summary", .string(b.summary)),
            ])
          })
      ),
      (
        "audit",
        .object([
          ("verdict", .string(r.outcome.audit.verdict.rawValue)),
          ("inconclusiveReasons", .array(r.outcome.audit.inconclusiveReasons.map { .string($0) })),
          (
            "traffic",
            .array(
              r.outcome.audit.traffic.map { t in
                .object([
                  ("time", .number(t.time)), ("class", .string(t.trafficClass)),
                  ("packets", .number(Double(t.packets))),
                ])
              })
          ),
        ])
      ),
      (
        "capture",
        .object(
          [
            ("packets", .number(Double(r.outcome.capture.packets))),
            ("dropped", .number(Double(r.outcome.capture.dropped))),
            ("positiveControlSeen", .bool(r.outcome.capture.positiveControlSeen)),
          ] + (r.outcome.capture.pcapPath.map { [("pcap", JSONValue.string($0))] } ?? []))
      ),
    ]
    return .object(members)
  }

  static func leak(_ l: ScenarioLeak) -> JSONValue {
    .object([
      ("class", .string(l.leakClass.rawValue)),
      ("destination", .string(l.destination)),
      ("transport", .string(l.transport)),
      ("names", .array(l.names.map { .string($0) })),
      ("firstTime", .number(l.firstTime)),
      ("lastTime", .number(l.lastTime)),
      ("packets", .number(Double(l.packets))),
      ("bytes", .number(Double(l.bytes))),
    ])
  }
}
