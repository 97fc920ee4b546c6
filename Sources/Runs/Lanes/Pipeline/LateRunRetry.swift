import Scenarios

/// A run the harness made late (``ActionTiming``: a timed action performed after its time)
/// cannot be judged; the lanes' batches run such a scenario again, at most `attempts` times in
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
      if judgement.isHarnessLate, earlier.count + 1 < attempts,
        let fault = ActionTiming.fault(judgement.lateActions)
      {
        earlier.append(fault)
        continue
      }
      outcome.earlierRuns = earlier
      return outcome
    }
  }
}
