import Scenarios

/// A system under test, whole: its name (`--sut NAME`), which scenarios it runs and how, what
/// it must have ready first, its own options and what `leak-audit --compare` may hold it
/// against. Every system is listed once, in ``TestedSystems/all``; leak-audit, replay, their
/// `--help`, the completion and the option checks look it up there, so a new system is a new
/// file in Lanes/Systems and one entry in that list, not an edit to the commands.
public struct TestedSystem: Sendable {
  /// As `--sut` spells it.
  public let name: String
  /// One line for `--help`.
  public let summary: String
  /// What `leak-audit --help` says of it beyond the summary: which scenarios it runs, on
  /// what, and what it needs (a paragraph; empty when the summary says it all).
  public let guide: String
  /// Its own options (``TestedSystemOption``): each selects this system.
  public let options: [TestedSystemOption]
  /// The scenario as this system runs it, or nil when the system does not run it.
  public let adopt: @Sendable (Scenario) -> Scenario?
  /// What a scenario the system does not run is told (replay's one-scenario error).
  public let refusal: String
  /// Makes ready what `scenarios` (already adopted) need: the settings the lanes' runners take,
  /// and the scenarios that can run.
  public let prepare: @Sendable ([Scenario], TestedSystemInputs) -> TestedSystemSetup
  /// Every lane of this system waits in real time (its code reads the wall clock): its runs
  /// cost little CPU, so its lanes run side by side and its scenarios all at once, where the
  /// model's mock lane, CPU-bound on its compressed clock, runs a few per core.
  public let waitsInRealTime: Bool
  /// What it is as a side of `leak-audit --compare` (``ComparisonSide``).
  public let comparison: TestedSystemComparison

  public init(
    name: String, summary: String, refusal: String = "", guide: String = "",
    options: [TestedSystemOption] = [], waitsInRealTime: Bool = false,
    comparison: TestedSystemComparison = .none,
    adopt: @escaping @Sendable (Scenario) -> Scenario?,
    prepare: @escaping @Sendable ([Scenario], TestedSystemInputs) -> TestedSystemSetup
  ) {
    self.name = name
    self.summary = summary
    self.guide = guide
    self.options = options
    self.refusal = refusal
    self.waitsInRealTime = waitsInRealTime
    self.comparison = comparison
    self.adopt = adopt
    self.prepare = prepare
  }
}
