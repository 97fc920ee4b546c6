import TorControl

/// `failclosed check --mutate`: the scenario once more without its faults. A scenario whose
/// verdict is the same with and without them proves nothing about them (its expectations are
/// met whatever the censor or the mock does).
public enum ScenarioMutation {
  /// The faults the mutant leaves out, in words ("censor rules", "plan stall:conn"); empty
  /// when the scenario has none (its test is the app's own actions).
  public static func faults(of scenario: Scenario) -> [String] {
    guard let tor = scenario.tor.mock else { return [] }
    var faults: [String] = []
    if let plan = tor.plan, isFault(plan) { faults.append("plan \(tor.bootstrap)") }
    if !scenario.network.censor.isEmpty {
      faults.append("\(scenario.network.censor.count) censor rule(s)")
    }
    if !scenario.network.dnsPoisoning.isEmpty { faults.append("DNS poisoning") }
    if !tor.faults.isEmpty { faults.append("\(tor.faults.count) stream fault(s)") }
    if tor.crashAt != nil || scenario.app.actions.contains(where: { $0.step == .torCrash }) {
      faults.append("the Tor crash")
    }
    return faults
  }

  /// A bootstrap that does not simply succeed.
  static func isFault(_ plan: BootstrapPlan) -> Bool {
    if case .healthy = plan { return false }
    return true
  }

  /// The scenario without its faults (the mock bootstraps healthy:5, no censor rule, no
  /// poisoning, no stream fault, no crash), or nil when it has none or is a real-tor one.
  public static func withoutFaults(_ scenario: Scenario) -> Scenario? {
    guard var tor = scenario.tor.mock, !faults(of: scenario).isEmpty else { return nil }
    var mutant = scenario
    if let plan = tor.plan, isFault(plan) { tor.bootstrap = "healthy:5" }
    tor.faults = []
    tor.crashAt = nil
    mutant.tor = .mock(tor)
    mutant.network = NetworkPlan()
    mutant.app.actions.removeAll { $0.step == .torCrash }
    mutant.name = scenario.name + "~without-faults"
    return mutant
  }

  /// What `check --mutate` concludes from the two verdicts.
  public enum Finding: Sendable, Equatable {
    /// The faults matter: the verdict changes without them.
    case changes(from: ScenarioVerdict, to: ScenarioVerdict)
    /// The verdict is the same without the faults: the scenario proves nothing about them.
    case unchanged(ScenarioVerdict)
    /// The scenario itself does not pass: mutating it says nothing.
    case originalFails(ScenarioVerdict)
    /// The mutant could not be judged (a run error, dropped packets).
    case inconclusive
    /// The file says its verdict does not depend on its faults (`sameWithoutFaults`), and it
    /// does not.
    case sameAsDeclared(ScenarioVerdict)
    /// The file says its verdict does not depend on its faults, and it does.
    case changesDespiteDeclaration(from: ScenarioVerdict, to: ScenarioVerdict)
  }

  public static func finding(
    original: ScenarioVerdict, mutant: ScenarioVerdict, declaredSame: Bool = false
  ) -> Finding {
    if original != .pass { return .originalFails(original) }
    if mutant == .inconclusive { return .inconclusive }
    if declaredSame {
      return mutant == original
        ? .sameAsDeclared(original) : .changesDespiteDeclaration(from: original, to: mutant)
    }
    return mutant == original ? .unchanged(original) : .changes(from: original, to: mutant)
  }

  /// Whether `finding` is what the library must show.
  public static func isSound(_ finding: Finding) -> Bool {
    switch finding {
    case .changes, .sameAsDeclared: return true
    default: return false
    }
  }
}
