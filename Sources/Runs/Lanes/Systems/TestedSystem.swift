import Scenarios

/// A system under test, whole: its name (`--sut NAME`), which scenarios it runs and how, and
/// what it must have ready first. Every system is listed once, in ``TestedSystems/all``;
/// leak-audit, replay and the completion look it up there, so a new system is a new file in
/// Lanes/Systems and one entry in that list, not an edit to the commands.
public struct TestedSystem: Sendable {
  /// As `--sut` spells it.
  public let name: String
  /// One line for `--help`.
  public let summary: String
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

  public init(
    name: String, summary: String, refusal: String = "", waitsInRealTime: Bool = false,
    adopt: @escaping @Sendable (Scenario) -> Scenario?,
    prepare: @escaping @Sendable ([Scenario], TestedSystemInputs) -> TestedSystemSetup
  ) {
    self.name = name
    self.summary = summary
    self.refusal = refusal
    self.waitsInRealTime = waitsInRealTime
    self.adopt = adopt
    self.prepare = prepare
  }
}

/// What a system may use to get ready: the command line's inputs.
public struct TestedSystemInputs: Sendable {
  /// `--bitchat-src DIR`, when given.
  public var bitchatSource: String?
  /// `--app -- CMD` (with `--app-profile FILE`), when given.
  public var program: ProgramSpec?
  /// `--onion-browser-src SRC`, when given (a checkout, REPO@COMMIT or pinned:2.X|3.X).
  public var onionBrowserSource: String?
  /// Where build progress goes (standard error).
  public var progress: @Sendable (String) -> Void

  public init(
    bitchatSource: String? = nil, program: ProgramSpec? = nil, onionBrowserSource: String? = nil,
    progress: @escaping @Sendable (String) -> Void
  ) {
    self.bitchatSource = bitchatSource
    self.program = program
    self.onionBrowserSource = onionBrowserSource
    self.progress = progress
  }
}

/// A system made ready: the scenarios it will run, what the lanes' runners are given, or why
/// it could not be made ready.
public struct TestedSystemSetup: Sendable {
  /// The scenarios to run: all it was given, less those that need what is unavailable.
  public var scenarios: [Scenario]
  /// The driver built from a bitchat checkout, when a scenario needs bitchat's code.
  public var bitchatSourceDriver: String?
  /// bitchat's code runs the model's bitchat scenarios (the naive-port canary on stock
  /// swift-corelibs URLSession).
  public var substituteBitchatSource: Bool
  /// The driver built from an Onion Browser checkout (onion-browser-source).
  public var onionBrowserSourceDriver: String?
  /// Not ready: why, and whether that ends the run (a checkout given or a failed build) or
  /// only leaves out the scenarios that needed it (no checkout anywhere).
  public var unavailable: (reason: String, endsRun: Bool)?
  /// The lane that is missing, when it is not the system's own: the model's bitchat-source
  /// files need bitchat's checkout ("skipping the bitchat-source lane").
  public var unavailableLane: String?

  public init(
    scenarios: [Scenario], bitchatSourceDriver: String? = nil,
    substituteBitchatSource: Bool = false, unavailable: (reason: String, endsRun: Bool)? = nil
  ) {
    self.scenarios = scenarios
    self.bitchatSourceDriver = bitchatSourceDriver
    self.substituteBitchatSource = substituteBitchatSource
    self.unavailable = unavailable
  }
}
