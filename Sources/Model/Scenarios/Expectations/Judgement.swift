/// The state of one expectation after a run.
public enum ExpectationStatus: String, Sendable, Equatable {
  case met, failed
  /// The capture cannot decide (drops, late start, no positive control) and nothing definite
  /// was seen either way.
  case inconclusive
}

public struct ExpectationResult: Sendable, Equatable {
  public var expectation: ScenarioExpectation
  public var status: ExpectationStatus
  /// Why, with the times and names a reviewer needs: "posted at 75.2 s".
  public var reason: String

  public init(expectation: ScenarioExpectation, status: ExpectationStatus, reason: String) {
    self.expectation = expectation
    self.status = status
    self.reason = reason
  }
}

/// A scenario's verdict. Ordered from best to worst; a run's verdict is its worst scenario's.
public enum ScenarioVerdict: String, Sendable, Equatable, Comparable, CaseIterable {
  case pass
  /// Never shown as a pass: the capture or the run could not decide.
  case inconclusive
  /// An expectation failed with no leak.
  case failed
  /// Traffic left the device outside Tor without the user's choice.
  case leak

  public static func < (lhs: ScenarioVerdict, rhs: ScenarioVerdict) -> Bool {
    allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
  }

  /// Whonix's convention: 0 pass, 5 leak or failed expectation, 2 inconclusive.
  public var exitCode: Int32 {
    switch self {
    case .pass: return 0
    case .inconclusive: return 2
    case .failed, .leak: return 5
    }
  }
}

/// What the judge concluded about one run of one scenario.
public struct Judgement: Sendable, Equatable {
  public var verdict: ScenarioVerdict
  public var expectations: [ExpectationResult]
  /// Leaks that count as leaks: outside Tor while the user wanted Tor.
  public var leaks: [ScenarioLeak]
  /// Direct traffic while the user had turned Tor off: reported, not a leak.
  public var exposure: [ScenarioLeak]
  /// Why the verdict is what it is, for a reader, one line each.
  public var reasons: [String]
  /// Timed actions the app performed too late (``ActionTiming``): the run is the harness's
  /// fault and may be run again.
  public var lateActions: [ActionTiming.LateAction]

  public init(
    verdict: ScenarioVerdict, expectations: [ExpectationResult], leaks: [ScenarioLeak],
    exposure: [ScenarioLeak], reasons: [String], lateActions: [ActionTiming.LateAction] = []
  ) {
    self.verdict = verdict
    self.expectations = expectations
    self.leaks = leaks
    self.exposure = exposure
    self.reasons = reasons
    self.lateActions = lateActions
  }

  /// The harness, not the app, made this run unjudgeable, and nothing caught outweighs that:
  /// run it again.
  public var isHarnessLate: Bool { !lateActions.isEmpty && verdict == .inconclusive }
}
