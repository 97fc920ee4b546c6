import Scenarios

/// A run the harness made late (``ActionTiming``: a timed action performed after its time; or
/// a process that finished setting up after the run's time 0, ``ScenarioOutcome/lateStart``;
/// an app ended by a signal from outside the run, ``ScenarioOutcome/interrupted``) cannot be
/// judged; the lanes' batches run such a scenario again, at most `attempts` times in
/// all, and report the runs they set aside. The last run's verdict stands (inconclusive if it
/// was late too, never a pass).
public enum LateRunRetry {
  public static let attempts = 3

  /// `run` once, and again while its outcome is late; the outcome returned carries the reasons
  /// of the runs set aside (``ScenarioOutcome/earlierRuns``).
  public static func outcome(
    _ scenario: Scenario, attempts: Int = attempts, run: () async -> ScenarioOutcome
  ) async -> ScenarioOutcome {
    var earlier: [String] = []
    while true {
      var outcome = await run()
      let judgement = ExpectationJudge.judge(scenario, outcome)
      let fault =
        (outcome.lateStart || outcome.interrupted) && judgement.verdict == .inconclusive
        ? outcome.runError
        : judgement.isHarnessLate ? ActionTiming.fault(judgement.lateActions) : nil
      if let fault, earlier.count + 1 < attempts {
        earlier.append(fault)
        continue
      }
      outcome.earlierRuns = earlier
      return outcome
    }
  }
}
