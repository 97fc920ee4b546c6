import Scenarios

/// What a system may use to get ready: the command line's inputs.
public struct TestedSystemInputs: Sendable {
  /// The systems' own options given (``TestedSystemOption``), by name; a flag given is "".
  /// Each system reads its own with ``value(of:)``.
  public var optionValues: [String: String]
  /// `--app -- CMD` (with `--app-profile FILE`), when given: checked and read by the command
  /// line (a program not found is a usage error before anything is set up).
  public var program: ProgramSpec?
  /// Where build progress goes (standard error).
  public var progress: @Sendable (String) -> Void

  public init(
    optionValues: [String: String] = [:], program: ProgramSpec? = nil,
    progress: @escaping @Sendable (String) -> Void
  ) {
    self.optionValues = optionValues
    self.program = program
    self.progress = progress
  }

  /// The value `option` was given, nil when it was not ("" for a flag given).
  public func value(of option: TestedSystemOption) -> String? { optionValues[option.name] }
}
