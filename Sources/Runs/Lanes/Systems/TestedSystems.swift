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

  /// Every system's own options, each with the system that declares it (and that it
  /// selects), in list order.
  public static func options(in systems: [TestedSystem] = all) -> [(
    option: TestedSystemOption, system: TestedSystem
  )] {
    systems.flatMap { system in system.options.map { ($0, system) } }
  }

  /// `system`'s setup for `scenarios`: those it runs, as it runs them, made ready.
  public static func plan(
    _ scenarios: [Scenario], on system: TestedSystem, inputs: TestedSystemInputs
  ) -> TestedSystemSetup {
    system.prepare(scenarios.compactMap(system.adopt), inputs)
  }
}
