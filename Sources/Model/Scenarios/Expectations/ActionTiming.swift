import Vocabulary

/// Whether the app performed the scenario's timed actions on time. A run whose action came
/// late (a process starved of CPU for a moment: six runs share two cores, and at x25 a 40 ms
/// stall is a virtual second) shows the app's behaviour at other times than the file's, which
/// can fail an expectation or, worse, let a leak window pass unseen. Such a run is the
/// harness's fault: it cannot be judged (inconclusive, unless a leak was caught, which is a
/// leak whenever it happened), and the mock lane's batch runs it again.
public enum ActionTiming {
  /// Virtual seconds an action (or one of the model's timers) may come after its time.
  public static let tolerance = HarnessLateness.tolerance

  /// One timed action the app performed after its time.
  public struct LateAction: Sendable, Equatable {
    public var verb: String
    public var due: Double
    public var performed: Double
    public var seconds: Double { performed - due }
  }

  /// The scenario's app actions matched in order to the app's `action` events (the same verb,
  /// each event used once); the ones more than `tolerance` late. An action the app never
  /// reported (it ended first) is not a timing matter: the expectations see what is missing.
  public static func lateActions(
    _ scenario: Scenario, events: [ScenarioEvent], tolerance: Double = tolerance
  ) -> [LateAction] {
    let performed = events.filter { $0.name == ScenarioEventKind.action.name }
    var next = performed.startIndex
    var late: [LateAction] = []
    for action in scenario.app.actions where action.step.entry?.performer == .app {
      let verb = action.step.name
      guard
        let index = performed[next...].firstIndex(where: { $0.fields["action"] == verb })
      else { break }
      next = performed.index(after: index)
      let time = performed[index].time
      if time - action.at > tolerance {
        late.append(LateAction(verb: verb, due: action.at, performed: time))
      }
    }
    return late + lateTimers(events, tolerance: tolerance)
  }

  /// The event the model writes when one of its own timers ran late (its value: seconds late).
  public static let lateTimerEvent = "clock.timerLate"

  /// The model's timers that ran more than `tolerance` late, as late actions of the verb
  /// "the app's timer" (its poll loops, probes and retries: a lost turn moves what it reports).
  static func lateTimers(_ events: [ScenarioEvent], tolerance: Double) -> [LateAction] {
    events.compactMap { event in
      guard event.name == lateTimerEvent, let seconds = event.fields["value"].flatMap(Double.init),
        seconds > tolerance
      else { return nil }
      return LateAction(
        verb: "the app's timer", due: event.time - seconds, performed: event.time)
    }
  }

  /// The reason a late run cannot be judged, naming the latest action.
  public static func fault(_ late: [LateAction]) -> String? {
    guard let worst = late.max(by: { $0.seconds < $1.seconds }) else { return nil }
    return "the harness was late: \(worst.verb) due at \(seconds(worst.due)) was performed at "
      + "\(seconds(worst.performed)) (\(seconds(worst.seconds)) late, more than "
      + "\(seconds(tolerance)))"
      + (late.count > 1 ? " and \(late.count - 1) more action(s) late" : "")
      + ": the app ran at other times than the file's"
  }

  static func seconds(_ value: Double) -> String {
    let rounded = (value * 1000).rounded() / 1000
    return "\(rounded) s"
  }
}
