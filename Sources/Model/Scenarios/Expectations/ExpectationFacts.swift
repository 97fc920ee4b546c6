import Audit

/// The facts every expectation is judged against: the scenario, what the run produced, and
/// the capture's leaks split into leaks and the user's own exposure.
public struct ExpectationFacts: Sendable {
  public let scenario: Scenario
  public let outcome: ScenarioOutcome
  public let leaks: [ScenarioLeak]
  public let exposure: [ScenarioLeak]
  public let captureInconclusive: Bool

  public var events: [ScenarioEvent] { outcome.events }
  public var torTimeline: [TorTimelineEntry] { outcome.torTimeline }

  func seconds(_ t: Double) -> String { ExpectationJudge.seconds(t) }

  /// A `by` deadline as judged: stretched by the app's timer drift (``ScenarioOutcome/timerDrift``).
  func deadline(_ by: Double) -> Double { by * (1 + outcome.timerDrift) }

  /// " (the app's timers may run 1% late: by 76.76 s)" when the deadline is stretched, else "".
  func driftNote(_ by: Double) -> String {
    outcome.timerDrift == 0
      ? ""
      : " (its timers may run \(Int((outcome.timerDrift * 100).rounded()))% late on the wall "
        + "clock: by \(seconds(deadline(by))))"
  }

  func undecided(_ what: String) -> ExpectationCheck {
    (.inconclusive, "\(what), but the capture is inconclusive")
  }

  /// "10% (conn_done) at 3.2 s".
  func describe(_ step: TorTimelineEntry) -> String {
    "\(step.progress ?? 0)%" + (step.tag.map { " (\($0))" } ?? "") + " at \(seconds(step.time))"
  }
}
