import Scenarios

/// Every system under test, once (``TestedSystem``). `--sut` accepts exactly these names; a
/// test adds a trivial system to show that an entry here is all a new one needs.
public enum TestedSystems {
  public static let all: [TestedSystem] = [
    ModelSystem.entry, BitchatSourceSystem.entry, ProgramSystem.entry,
    OnionBrowserSourceSystem.entry,
  ]

  /// The default `--sut`.
  public static let defaultName = ModelSystem.entry.name

  public static func named(_ name: String, in systems: [TestedSystem] = all) -> TestedSystem? {
    systems.first { $0.name == name }
  }

  /// "model|bitchat-source", for usage lines and completion.
  public static func names(in systems: [TestedSystem] = all) -> [String] {
    systems.map(\.name)
  }

  /// `system`'s setup for `scenarios`: those it runs, as it runs them, made ready.
  public static func plan(
    _ scenarios: [Scenario], on system: TestedSystem, inputs: TestedSystemInputs
  ) -> TestedSystemSetup {
    system.prepare(scenarios.compactMap(system.adopt), inputs)
  }
}
