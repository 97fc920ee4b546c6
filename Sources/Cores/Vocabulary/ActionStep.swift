/// One action, typed: what a scenario step and an actions-file line both say, one case per
/// verb of ``ActionVerbs/all``. Scenario files and actions files spell some arguments
/// differently (``ActionVerb/scenarioArgument``, ``ActionVerb/driverArgument``); both read
/// into this and write from it.
public enum ActionStep: Sendable, Equatable {
  case start
  case foreground
  case background
  case setPreference(enabled: Bool)
  case revokeActivation
  case grantActivation
  /// An NWPathMonitor update; `satisfied` false is an unsatisfied path (actions files only:
  /// a scenario's path change is a satisfied one).
  case pathChange(satisfied: Bool)
  case addRelay(url: String)
  case sendMessage(text: String)
  case refreshDirectory
  /// An incoming app URL (that Onion Browser version's URL schemes; onion-browser-N only).
  case openURL(url: String)
  /// The harness kills the mock Tor (scenario files, mock lane).
  case torCrash
  /// The driver waits this many virtual seconds (actions files).
  case wait(seconds: Double)
  /// A registered verb no model acts on: carried as written, with its argument.
  case other(verb: String, argument: ActionValue?)

  /// The verb's entry in ``ActionVerbs/all`` (nil for ``other(verb:argument:)``).
  public var entry: ActionVerb? {
    switch self {
    case .start: return ActionVerbs.start
    case .foreground: return ActionVerbs.foreground
    case .background: return ActionVerbs.background
    case .setPreference: return ActionVerbs.setPreference
    case .revokeActivation: return ActionVerbs.revokeActivation
    case .grantActivation: return ActionVerbs.grantActivation
    case .pathChange: return ActionVerbs.pathChange
    case .addRelay: return ActionVerbs.addRelay
    case .sendMessage: return ActionVerbs.sendMessage
    case .refreshDirectory: return ActionVerbs.refreshDirectory
    case .openURL: return ActionVerbs.openURL
    case .torCrash: return ActionVerbs.torCrash
    case .wait: return ActionVerbs.wait
    case .other: return nil
    }
  }

  /// The verb as written in both kinds of file.
  public var name: String {
    if case .other(let verb, _) = self { return verb }
    return entry!.name
  }

  /// Reads `verb` with an argument in the scenario file's form (`enabled: true`).
  public init(verb: String, scenarioArgument argument: ActionValue?) {
    switch (verb, argument) {
    case (ActionVerbs.setPreference.name, .bool(let enabled)?):
      self = .setPreference(enabled: enabled)
    case (ActionVerbs.pathChange.name, _): self = .pathChange(satisfied: true)
    default: self = Self(verb: verb, text: argument)
    }
  }

  /// Reads `verb` with an argument in the actions file's form (`value: "on"`).
  public init(verb: String, fileArgument argument: ActionValue?) {
    switch (verb, argument) {
    case (ActionVerbs.setPreference.name, .text(let value)?):
      self = .setPreference(enabled: value == "on")
    case (ActionVerbs.pathChange.name, .text(let status)?):
      self = .pathChange(satisfied: status == "satisfied")
    case (ActionVerbs.wait.name, .seconds(let seconds)?): self = .wait(seconds: seconds)
    default: self = Self(verb: verb, text: argument)
    }
  }

  /// The verbs both forms spell alike; anything else is carried as written.
  private init(verb: String, text argument: ActionValue?) {
    let text: String?
    if case .text(let value)? = argument { text = value } else { text = nil }
    switch (verb, text) {
    case (ActionVerbs.start.name, _): self = .start
    case (ActionVerbs.foreground.name, _): self = .foreground
    case (ActionVerbs.background.name, _): self = .background
    case (ActionVerbs.revokeActivation.name, _): self = .revokeActivation
    case (ActionVerbs.grantActivation.name, _): self = .grantActivation
    case (ActionVerbs.refreshDirectory.name, _): self = .refreshDirectory
    case (ActionVerbs.torCrash.name, _): self = .torCrash
    case (ActionVerbs.addRelay.name, let url?): self = .addRelay(url: url)
    case (ActionVerbs.sendMessage.name, let text?): self = .sendMessage(text: text)
    case (ActionVerbs.openURL.name, let url?): self = .openURL(url: url)
    default: self = .other(verb: verb, argument: argument)
    }
  }

  /// The argument in the scenario file's form, nil for none.
  public var scenarioArgument: ActionValue? {
    switch self {
    case .setPreference(let enabled): return .bool(enabled)
    case .pathChange: return nil
    default: return fileArgument
    }
  }

  /// The argument in the actions file's form, nil for none.
  public var fileArgument: ActionValue? {
    switch self {
    case .setPreference(let on): return .text(on ? "on" : "off")
    case .pathChange(let satisfied): return .text(satisfied ? "satisfied" : "unsatisfied")
    case .addRelay(let text), .sendMessage(let text), .openURL(let text): return .text(text)
    case .wait(let seconds): return .seconds(seconds)
    case .other(_, let argument): return argument
    case .start, .foreground, .background, .revokeActivation, .grantActivation,
      .refreshDirectory, .torCrash:
      return nil
    }
  }
}
