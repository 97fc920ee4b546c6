/// One verb of an app's timed actions, whole: its name, the argument a scenario file's step
/// and the app driver's actions file each carry, who carries it out and which app models it.
/// Every verb is listed once, in ``ActionVerbs/all``: the scenario parser, the app driver's
/// parser, the shims' driver (a generated copy), `--help`, completion and the docs read that
/// list, so a verb is accepted everywhere or nowhere.
public struct ActionVerb: Sendable, Hashable {
  /// Who carries the verb out.
  public enum Performer: Sendable, Hashable {
    /// The app: written in scenario files (`do`) and in the app driver's actions file.
    case app
    /// The harness, on the mock Tor: scenario files only, mock lane only (tor-crash).
    case mockTor
    /// The app driver's own pacing: actions files only (wait).
    case driver
  }

  /// The verb as written: `do` in scenario files, `action` in actions files.
  public let name: String
  /// One line for `--help` and the docs.
  public let summary: String
  /// The field a scenario file's step carries, nil for none.
  public let scenarioArgument: ActionArgument?
  /// The field an actions file's line carries, nil for none.
  public let driverArgument: ActionArgument?
  public let performer: Performer
  /// The apps whose model acts on the verb.
  public let apps: AppFamilies

  public init(
    _ name: String, _ summary: String, scenario scenarioArgument: ActionArgument? = nil,
    driver driverArgument: ActionArgument? = nil, performer: Performer = .app,
    apps: AppFamilies = .all
  ) {
    self.name = name
    self.summary = summary
    self.scenarioArgument = scenarioArgument
    self.driverArgument = driverArgument
    self.performer = performer
    self.apps = apps
  }

  /// Written in scenario files.
  public var inScenarios: Bool { performer != .driver }
  /// Written in the app driver's actions file.
  public var inActionsFiles: Bool { performer != .mockTor }
}

/// The one field an action carries, and the values it takes.
public struct ActionArgument: Sendable, Hashable {
  public enum Values: Sendable, Hashable {
    /// A non-empty string; `fallback` when the field is absent (required when nil).
    case text(fallback: String?)
    /// true or false (scenario files).
    case bool
    /// One of these words; `fallback` when absent (required when nil).
    case choice([String], fallback: String?)
    /// A number of seconds >= 0.
    case seconds
  }

  public let field: String
  public let values: Values

  public init(_ field: String, _ values: Values) {
    self.field = field
    self.values = values
  }
}

/// An argument as read from a file, in the form its ``ActionArgument/Values`` says.
public enum ActionValue: Sendable, Hashable, CustomStringConvertible {
  case text(String)
  case bool(Bool)
  case seconds(Double)

  /// As the actions file spells it: text as is, Booleans `true`/`false`, seconds as a number.
  public var description: String {
    switch self {
    case .text(let text): return text
    case .bool(let value): return value ? "true" : "false"
    case .seconds(let value):
      return value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
  }
}
