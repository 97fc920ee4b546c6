import Scenarios

/// report.json, the source of truth every other report is a view of.
public enum JSONReport {
  public static let formatVersion = 1

  public static func render(_ report: RunReport) -> String {
    make(report).serialized(indent: 2) + "\n"
  }

  public static func make(_ report: RunReport) -> JSONValue {
    var members: [(key: String, value: JSONValue)] = [
      ("format", .string("failclosed-report")),
      ("formatVersion", .number(Double(formatVersion))),
      ("startedAt", .string(report.startedAt)),
      ("verdict", .string(report.verdict.rawValue)),
      ("exitCode", .number(Double(report.exitCode))),
      ("summary", .string(report.countsSentence)),
      ("timeScale", .number(report.timeScale)),
    ]
    if let ready = report.networkReadySeconds {
      members.append(
        ("realLane", .object([("networkReadySeconds", .number((ready * 1000).rounded() / 1000))])))
    }
    members += [
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
    ]
    return .object(members)
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
      ("lane", .string(s.lane.rawValue)),
    ]
    switch s.tor {
    case .mock(let plan):
      members += [
        ("personality", .string(plan.personality.rawValue)),
        ("bootstrapPlan", .string(plan.bootstrap)),
      ]
    case .realTor(let plan):
      members += [
        ("torClient", .string(plan.client.rawValue)),
        ("bridges", .array(plan.bridges.map { .string($0.rawValue) })),
      ]
    }
    members += [
      ("duration", .number(s.duration)),
      ("wallSeconds", .number(r.outcome.wallSeconds)),
    ]
    if let skip = r.outcome.clockSkip {
      members.append(
        (
          "clockSkip",
          .object([
            ("jumps", .number(Double(skip.idleJumps))),
            ("skippedSeconds", .number(skip.skippedSeconds)),
            ("heldSeconds", .number(skip.heldSeconds)),
          ])
        ))
    }
    if let weakness = s.weakness { members.append(("weakness", .number(Double(weakness)))) }
    if let gap = s.gap { members.append(("gap", .string(gap))) }
    if let fetched = r.outcome.fetchThroughExit {
      members.append(("fetchThroughExit", .bool(fetched)))
    }
    if let error = r.outcome.runError { members.append(("runError", .string(error))) }
    if !r.outcome.earlierRuns.isEmpty {
      members.append(("earlierRuns", .array(r.outcome.earlierRuns.map { .string($0) })))
    }
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
            .object([("at", .number(a.at)), ("do", .string(a.step.name))])
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
      ("torTimeline", .array(r.outcome.torTimeline.map(torEntry))),
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

  /// One entry of tor's timeline; absent fields are left out.
  static func torEntry(_ e: TorTimelineEntry) -> JSONValue {
    var members: [(key: String, value: JSONValue)] = [
      ("time", .number((e.time * 1000).rounded() / 1000)), ("source", .string(e.source.rawValue)),
      ("phase", .string(e.phase)),
    ]
    if let progress = e.progress { members.append(("progress", .number(Double(progress)))) }
    if let tag = e.tag { members.append(("tag", .string(tag))) }
    if let summary = e.summary { members.append(("summary", .string(summary))) }
    if let reason = e.reason { members.append(("reason", .string(reason))) }
    if let count = e.count { members.append(("count", .number(Double(count)))) }
    if let command = e.command { members.append(("command", .string(command))) }
    if let detail = e.detail { members.append(("detail", .string(detail))) }
    return .object(members)
  }

  static func leak(_ l: ScenarioLeak) -> JSONValue {
    var members: [(String, JSONValue)] = [
      ("class", .string(l.leakClass.rawValue)),
      ("destination", .string(l.destination)),
      ("transport", .string(l.transport)),
      ("names", .array(l.names.map { .string($0) })),
      ("firstTime", .number(l.firstTime)),
      ("lastTime", .number(l.lastTime)),
      ("packets", .number(Double(l.packets))),
      ("bytes", .number(Double(l.bytes))),
    ]
    for (key, value) in [
      ("reason", l.reason), ("direction", l.direction), ("evidence", l.evidence),
      ("sample", l.sample),
    ] {
      if let value { members.append((key, .string(value))) }
    }
    return .object(members)
  }
}
