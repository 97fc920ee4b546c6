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
    let facts = ExpectationFacts(
      scenario: scenario, outcome: outcome, leaks: leaks, exposure: exposure,
      captureInconclusive: outcome.audit.verdict == .inconclusive)
    let results = scenario.expectations.map { expectation in
      let check = expectation.unit.judge(facts)
      return ExpectationResult(expectation: expectation, status: check.status, reason: check.reason)
    }

    var reasons: [String] = []
    var verdict = ScenarioVerdict.pass
    if let runError = outcome.runError {
      reasons.append("the run did not complete: \(runError)")
      verdict = .inconclusive
    }
    let lateActions = ActionTiming.lateActions(scenario, events: outcome.events)
    if let late = ActionTiming.fault(lateActions) {
      reasons.append(late)
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
    if !failed.isEmpty, outcome.runError == nil, lateActions.isEmpty {
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
      verdict: verdict, expectations: results, leaks: leaks, exposure: exposure, reasons: reasons,
      lateActions: lateActions)
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

  /// "2 generic_timeout_error, 1 eof_error".
  public static func tally(_ failures: [String]) -> String {
    var counts: [String: Int] = [:]
    for f in failures { counts[f, default: 0] += 1 }
    return counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(
      separator: ", ")
  }
}
