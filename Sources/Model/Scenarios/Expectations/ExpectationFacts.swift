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

  func undecided(_ what: String) -> ExpectationCheck {
    (.inconclusive, "\(what), but the capture is inconclusive")
  }

  /// "10% (conn_done) at 3.2 s".
  func describe(_ step: TorTimelineEntry) -> String {
    "\(step.progress ?? 0)%" + (step.tag.map { " (\($0))" } ?? "") + " at \(seconds(step.time))"
  }
}
