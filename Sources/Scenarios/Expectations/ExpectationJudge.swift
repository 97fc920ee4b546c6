import Audit

/// Judges a scenario's expectations against what a run produced. Pure: the same scenario and
/// outcome always give the same judgement.
///
/// The capture decides about traffic; the app's events decide about notifications, queues and
/// proxy modes. Direct traffic that began while the user's Tor preference was off (from the
/// scenario's own plan, not the app's word) is exposure, not a leak. A canary's leaks are
/// expected. Precedence: leak, then failed, then inconclusive, then pass.
public enum ExpectationJudge {
  public static func judge(_ scenario: Scenario, _ outcome: ScenarioOutcome) -> Judgement {
    let (leaks, exposure) = splitExposure(scenario, outcome.audit.leaks)
    let context = Context(
      scenario: scenario, outcome: outcome, leaks: leaks, exposure: exposure,
      captureInconclusive: outcome.audit.verdict == .inconclusive)
    let results = scenario.expectations.map { context.evaluate($0) }

    var reasons: [String] = []
    var verdict = ScenarioVerdict.pass
    if let runError = outcome.runError {
      reasons.append("the run did not complete: \(runError)")
      verdict = .inconclusive
    }
    if outcome.audit.verdict == .inconclusive {
      let why = outcome.audit.inconclusiveReasons.joined(separator: "; ")
      reasons.append("the capture is inconclusive" + (why.isEmpty ? "" : ": \(why)"))
      verdict = .inconclusive
    }
    let inconclusive = results.filter { $0.status == .inconclusive }
    if !inconclusive.isEmpty {
      verdict = .inconclusive
      reasons += inconclusive.map { "undecided: \($0.expectation.sentence)" }
    }
    let failed = results.filter { $0.status == .failed }
    if !failed.isEmpty, outcome.runError == nil {
      verdict = .failed
      reasons += failed.map { "failed: \($0.expectation.sentence): \($0.reason)" }
    }
    if !scenario.isCanary, !leaks.isEmpty {
      verdict = .leak
      reasons.insert(
        "\(leaks.count) leak\(leaks.count == 1 ? "" : "s"): "
          + leaks.map(describe).joined(separator: "; "), at: 0)
    }
    if verdict == .pass {
      reasons.append(
        scenario.isCanary
          ? "the canary's leak was caught" : "every expectation met and no leak in the capture")
    }
    return Judgement(
      verdict: verdict, expectations: results, leaks: leaks, exposure: exposure, reasons: reasons)
  }

  /// Leaks that began while the scenario had the Tor preference off are the user's choice.
  static func splitExposure(_ scenario: Scenario, _ all: [ScenarioLeak]) -> (
    leaks: [ScenarioLeak], exposure: [ScenarioLeak]
  ) {
    var changes: [(at: Double, enabled: Bool)] = []
    for action in scenario.app.actions {
      if case .setPreference(let enabled) = action.step { changes.append((action.at, enabled)) }
    }
    func preferenceOn(at time: Double) -> Bool {
      var on = scenario.app.torPreference
      for change in changes where change.at <= time { on = change.enabled }
      return on
    }
    var leaks: [ScenarioLeak] = []
    var exposure: [ScenarioLeak] = []
    for leak in all {
      if preferenceOn(at: leak.firstTime) { leaks.append(leak) } else { exposure.append(leak) }
    }
    return (leaks, exposure)
  }

  public static func describe(_ leak: ScenarioLeak) -> String {
    let names = leak.names.isEmpty ? "" : " (\(leak.names.joined(separator: ", ")))"
    return "\(leak.leakClass.rawValue) to \(leak.destination)\(names) at \(seconds(leak.firstTime))"
  }

  public static func seconds(_ t: Double) -> String {
    formatSeconds((t * 10).rounded() / 10)
  }
}

/// The facts one expectation is judged against.
private struct Context {
  let scenario: Scenario
  let outcome: ScenarioOutcome
  let leaks: [ScenarioLeak]
  let exposure: [ScenarioLeak]
  let captureInconclusive: Bool

  var events: [ScenarioEvent] { outcome.events }

  func evaluate(_ expectation: ScenarioExpectation) -> ExpectationResult {
    let (status, reason) = check(expectation)
    return ExpectationResult(expectation: expectation, status: status, reason: reason)
  }

  private func seconds(_ t: Double) -> String { ExpectationJudge.seconds(t) }

  private func undecided(_ what: String) -> (ExpectationStatus, String) {
    (.inconclusive, "\(what), but the capture is inconclusive")
  }

  private func check(_ expectation: ScenarioExpectation) -> (ExpectationStatus, String) {
    switch expectation {
    case .noLeak:
      if !leaks.isEmpty {
        return (.failed, leaks.map(ExpectationJudge.describe).joined(separator: "; "))
      }
      if captureInconclusive { return undecided("no leak seen") }
      return (
        .met,
        exposure.isEmpty
          ? "no packet outside Tor"
          : "no leak; \(exposure.count) flow(s) by the user's choice reported as exposure"
      )

    case .leakCaught(let classes):
      let all = outcome.audit.leaks
      let missing = classes.filter { c in !all.contains { $0.leakClass == c } }
      if missing.isEmpty {
        let evidence = classes.compactMap { c in all.first { $0.leakClass == c } }
        return (.met, "caught: " + evidence.map(ExpectationJudge.describe).joined(separator: "; "))
      }
      let names = missing.map(\.rawValue).joined(separator: ", ")
      if captureInconclusive { return undecided("no \(names) leak seen") }
      return (.failed, "no \(names) leak caught: the detector did not fire")

    case .requestsQueuedBeforeReady:
      return checkQueue()

    case .notification(let name, let by, let count):
      let times = events.filter { $0.name == name }.map(\.time)
      guard let first = times.first else { return (.failed, "\(name) was never posted") }
      if first > by {
        return (.failed, "\(name) first posted at \(seconds(first)), after \(seconds(by))")
      }
      if let count, times.count != count {
        let list = times.map(seconds).joined(separator: ", ")
        return (.failed, "\(name) posted \(times.count) times (at \(list)), expected \(count)")
      }
      return (.met, "\(name) posted at \(seconds(first))")

    case .noNotification(let name, let before):
      let hit = events.first { event in
        event.name == name && (before.map { event.time < $0 } ?? true)
      }
      if let hit { return (.failed, "\(name) posted at \(seconds(hit.time))") }
      return (.met, "\(name) not posted" + (before.map { " before \(seconds($0))" } ?? ""))

    case .event(let written, let by, let count):
      let pattern = EventPattern(written)
      let times = events.filter { pattern.matches($0) }.map(\.time)
      guard let first = times.first else { return (.failed, "no \"\(pattern)\" event") }
      if first > by {
        return (.failed, "first \"\(pattern)\" at \(seconds(first)), after \(seconds(by))")
      }
      if let count, times.count != count {
        let list = times.map(seconds).joined(separator: ", ")
        return (.failed, "\"\(pattern)\" \(times.count) times (at \(list)), expected \(count)")
      }
      return (.met, "\"\(pattern)\" at \(seconds(first))")

    case .noEvent(let written, let before):
      let pattern = EventPattern(written)
      let hit = events.first { event in
        pattern.matches(event) && (before.map { event.time < $0 } ?? true)
      }
      if let hit { return (.failed, "\"\(pattern)\" at \(seconds(hit.time))") }
      return (.met, "no \"\(pattern)\"" + (before.map { " before \(seconds($0))" } ?? ""))

    case .requestSent(let transport, let by):
      // What counts: an HTTP request started on the transport (a directory fetch, a page
      // load, a held URL once it loads) or a relay connection opened on it (WebSocket).
      let sent = events.filter {
        $0.fields["transport"] == transport.rawValue
          && ($0.name == ScenarioEventName.requestSent
            || ($0.name == ScenarioEventName.socketOpened && $0.fields["purpose"] == "relay"))
      }
      func what(_ event: ScenarioEvent) -> String {
        event.name == ScenarioEventName.requestSent
          ? "HTTP request \(event.fields["url"] ?? "")"
          : "relay connection to \(event.fields["target"] ?? "")"
      }
      guard let first = sent.first else {
        return (
          .failed,
          "no HTTP request and no relay connection went out via \(transport.rawValue)"
        )
      }
      if first.time > by {
        return (
          .failed,
          "the first request via \(transport.rawValue) was at \(seconds(first.time)) "
            + "(\(what(first))), after \(seconds(by))"
        )
      }
      return (.met, "\(what(first)) via \(transport.rawValue) at \(seconds(first.time))")

    case .proxyMode(let mode, let at):
      guard
        let last = events.last(where: { $0.name == ScenarioEventName.proxyMode && $0.time <= at })
      else { return (.failed, "no proxy mode was set by \(seconds(at))") }
      let actual: ScenarioExpectation.Transport = last.fields["useTor"] == "true" ? .tor : .direct
      if actual != mode {
        return (.failed, "proxy mode was \(actual.rawValue) (set at \(seconds(last.time)))")
      }
      return (.met, "proxy mode \(actual.rawValue) since \(seconds(last.time))")

    case .bootstrapSummary(let text, let match, let at):
      let samples = outcome.bootstrap.filter { at == nil || $0.time <= at! }
      guard let sample = samples.last else {
        return (.failed, "no bootstrap state was read" + (at.map { " by \(seconds($0))" } ?? ""))
      }
      let ok = match == .equals ? sample.summary == text : sample.summary.contains(text)
      let described =
        "summary \"\(sample.summary)\" (\(sample.progress)%) at \(seconds(sample.time))"
      return (ok ? .met : .failed, described)

    case .eventsInOrder(let written):
      let patterns = written.map(EventPattern.init)
      var index = 0
      var lastTime: Double?
      for event in events where index < patterns.count && patterns[index].matches(event) {
        index += 1
        lastTime = event.time
      }
      if index == patterns.count {
        return (.met, "all \(patterns.count) in order, the last at \(seconds(lastTime ?? 0))")
      }
      let after = lastTime.map { " after \(patterns[index - 1]) at \(seconds($0))" } ?? ""
      return (
        .failed, "matched \(index) of \(patterns.count): no \"\(patterns[index])\"\(after)"
      )

    case .trafficOnlyToTor:
      let others = (leaks + exposure)
      if !others.isEmpty {
        return (.failed, others.map(ExpectationJudge.describe).joined(separator: "; "))
      }
      // Packets of a leak class, even beyond the audit's cap on listed leaks.
      let leakClasses = Set(LeakClass.allCases.map(\.rawValue))
      let stray = outcome.audit.traffic.filter {
        $0.packets > 0 && leakClasses.contains($0.trafficClass)
      }
      if let first = stray.first {
        return (.failed, "\(first.trafficClass) packets at \(seconds(first.time))")
      }
      if captureInconclusive { return undecided("only Tor traffic seen") }
      return (.met, "every packet went to an allowed Tor address")

    case .clearnetByUserChoice:
      if !exposure.isEmpty {
        return (
          .met,
          "\(exposure.count) flow(s) while Tor was off, reported as exposure: "
            + exposure.map(ExpectationJudge.describe).joined(separator: "; ")
        )
      }
      if captureInconclusive { return undecided("no direct traffic seen") }
      return (.failed, "no direct traffic was seen while the Tor preference was off")

    case .bootstrapReaches, .bootstrapStuck, .bootstrapProblem, .bootstrapThroughBridge,
      .flowsOnlyTo:
      return checkRealTor(expectation)
    case .bootstrapStopsAt, .reachability:
      return ExpectationJudge.checkReplay(expectation, outcome: outcome)
    }
  }

  private var torTimeline: [TorTimelineEntry] { outcome.torTimeline }

  private func describe(_ step: TorTimelineEntry) -> String {
    "\(step.progress ?? 0)%" + (step.tag.map { " (\($0))" } ?? "") + " at \(seconds(step.time))"
  }

  /// The real-Tor lane's expectations, judged from tor's timeline, the fetch through the exit
  /// and the allowed flows. An empty timeline never passes a "stuck" check: silence is not
  /// evidence.
  private func checkRealTor(_ expectation: ScenarioExpectation) -> (ExpectationStatus, String) {
    let furthest = torTimeline.furthestBootstrap
    switch expectation {
    case .bootstrapReaches(let progress):
      guard let furthest, furthest.progress! >= progress else {
        return (
          .failed,
          "tor's bootstrap stopped at " + (furthest.map(describe) ?? "0% (no step reported)")
            + ", expected \(progress)%"
        )
      }
      let reached = torTimeline.first { $0.isBootstrap && $0.progress! >= progress }!
      if progress >= 100 {
        switch outcome.fetchThroughExit {
        case true?:
          return (.met, "100% at \(seconds(reached.time)); a fetch through the exit succeeded")
        case false?:
          return (
            .failed,
            "100% at \(seconds(reached.time)), but no fetch through the exit succeeded"
          )
        case nil:
          return (
            .failed, "100% at \(seconds(reached.time)), but no fetch through the exit was tried"
          )
        }
      }
      return (.met, "reached " + describe(reached))

    case .bootstrapStuck(let atMost, let tag):
      guard let furthest else {
        return (.failed, "tor reported no bootstrap step: nothing shows where it stalled")
      }
      if furthest.progress! > atMost {
        return (.failed, "tor reached " + describe(furthest) + ", expected at most \(atMost)%")
      }
      if let tag, furthest.tag != tag {
        return (
          .failed, "tor's furthest phase was " + describe(furthest) + ", expected \(tag)"
        )
      }
      return (.met, "stuck at " + describe(furthest))

    case .bootstrapProblem(let reason):
      if let hit = torTimeline.first(where: { $0.isProblem && $0.reason == reason }) {
        let source = hit.source == .log ? " in tor's log" : ""
        return (
          .met,
          "\(reason) at \(seconds(hit.time))\(source)"
            + (hit.count.map { " (count \($0))" } ?? "")
        )
      }
      let seen = Set(torTimeline.filter(\.isProblem).compactMap(\.reason)).sorted()
      return (
        .failed,
        "tor reported no \(reason) problem"
          + (seen.isEmpty ? "" : " (only \(seen.joined(separator: ", ")))")
      )

    case .bootstrapThroughBridge:
      if let step = torTimeline.first(where: {
        $0.isBootstrap && ($0.tag?.hasSuffix("_pt") ?? false)
      }) {
        return (.met, "through the pluggable transport: " + describe(step))
      }
      return (.failed, "no bootstrap step through the pluggable transport (conn_pt, conn_done_pt)")

    case .flowsOnlyTo(let ports):
      let flows = outcome.audit.torFlows
      let portSet = Set(ports)
      let others = flows.filter { !$0.touches(portSet) }
      if !others.isEmpty {
        let list = others.prefix(5).map { "\($0.destination):\($0.destinationPort)" }
        return (
          .failed,
          "\(others.count) flow(s) to other ports: \(list.joined(separator: ", "))"
            + (others.count > 5 ? ", ..." : "")
        )
      }
      if captureInconclusive { return undecided("no flow to another port seen") }
      if flows.isEmpty { return (.failed, "no flow to a Tor address was seen at all") }
      let packets = flows.reduce(0) { $0 + $1.packets }
      return (
        .met,
        "\(flows.count) flow(s), \(packets) packets, all to port "
          + ports.map(String.init).joined(separator: " or ")
      )

    default:
      return (.failed, "not a real-Tor lane expectation")
    }
  }

  /// Requests asked for while Tor was not ready were queued, and none went out until ready.
  /// Direct sends while the user had Tor off are the user's choice, not a violation.
  private func checkQueue() -> (ExpectationStatus, String) {
    var ready = false
    var preferenceOn = scenario.app.torPreference
    var queued = 0
    for event in events {
      switch event.name {
      case ScenarioEventName.torDidBecomeReady: ready = true
      case ScenarioEventName.readyChanged: ready = event.fields["isReady"] == "true"
      case ScenarioEventName.torUserPreferenceChanged:
        preferenceOn = event.fields["enabled"] != "false"
      // Onion Browser's held URL is queued too: it waits for Tor as a message does.
      case ScenarioEventName.requestQueued, "request-held": queued += 1
      case ScenarioEventName.requestSent, ScenarioEventName.socketOpened:
        // The SOCKS probe and the control port are how the app learns readiness: not requests.
        let transport = event.fields["transport"] ?? ""
        if transport == "probe" || transport == "control" { break }
        if !ready, preferenceOn {
          let what = [
            event.fields["kind"], event.fields["target"], event.fields["url"],
            event.fields["endpoint"],
          ].compactMap { $0 }.joined(separator: " ")
          let verb = event.name == ScenarioEventName.socketOpened ? "socket opened" : "request sent"
          return (
            .failed,
            "\(verb) at \(seconds(event.time))\(what.isEmpty ? "" : " (\(what))") "
              + "while Tor was not ready"
          )
        }
      default: break
      }
    }
    if queued == 0 {
      return (
        .failed,
        "nothing was queued (no request-queued message or relay connect, no held URL): the "
          + "scenario did not exercise the queue"
      )
    }
    return (.met, "\(queued) request(s) queued, none sent before Tor was ready")
  }
}
