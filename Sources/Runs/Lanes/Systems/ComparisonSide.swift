import Scenarios

/// One side of `leak-audit --compare A,B`, looked up in the registry: a system playing an app
/// model (`model:bitchat`, or `bitchat` alone for the default system), or a system's own code
/// (`bitchat-source`). What it runs, whether it waits in real time and which differences are
/// known all come from what its system declares (``TestedSystemComparison``), never from its
/// spelling.
public struct ComparisonSide: Sendable {
  public let system: TestedSystem
  /// The app model the system plays; nil: the system's own code.
  public let model: TestedSystemComparison.PlayedModel?
  /// As the reports and their directories name it (DIR/NAME): the profile for the default
  /// system, SYSTEM:PROFILE for another that plays one, the system's name for its own code.
  public let name: String

  /// Why a spelling names no side.
  public struct LookUpError: Error, Sendable, CustomStringConvertible {
    public let description: String
  }

  /// The side `text` names (SYSTEM, SYSTEM:PROFILE, or a profile the default system plays).
  public static func named(
    _ text: String, in systems: [TestedSystem] = TestedSystems.all,
    defaultSystem: String = TestedSystems.defaultName
  ) throws(LookUpError) -> ComparisonSide {
    let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
      .map(String.init)
    if parts.count == 2 {
      guard let system = TestedSystems.named(parts[0], in: systems) else {
        throw LookUpError(description: "no system \(parts[0])")
      }
      guard
        let model = system.comparison.plays.first(where: { $0.profile.rawValue == parts[1] })
      else {
        let played = system.comparison.plays.map { "\(system.name):\($0.profile.rawValue)" }
        throw LookUpError(
          description: played.isEmpty
            ? "\(system.name) plays no app model"
            : "\(system.name) plays " + played.joined(separator: ", "))
      }
      return side(system, model, defaultSystem: defaultSystem)
    }
    if let system = TestedSystems.named(text, in: systems) {
      if !system.comparison.heldAgainst.isEmpty {
        return ComparisonSide(system: system, model: nil, name: system.name)
      }
      let played = system.comparison.plays.map { "\(system.name):\($0.profile.rawValue)" }
      throw LookUpError(
        description: played.isEmpty
          ? "\(system.name) is not compared"
          : "\(system.name) plays app models: name one, " + played.joined(separator: ", "))
    }
    if let system = TestedSystems.named(defaultSystem, in: systems),
      let model = system.comparison.plays.first(where: { $0.profile.rawValue == text })
    {
      return side(system, model, defaultSystem: defaultSystem)
    }
    throw LookUpError(description: "no side \(text)")
  }

  private static func side(
    _ system: TestedSystem, _ model: TestedSystemComparison.PlayedModel, defaultSystem: String
  ) -> ComparisonSide {
    ComparisonSide(
      system: system, model: model,
      name: system.name == defaultSystem
        ? model.profile.rawValue : "\(system.name):\(model.profile.rawValue)")
  }

  /// Every side the registry offers, as the reports name them: for the default system each
  /// model it plays, for another SYSTEM:PROFILE, and each system's own code.
  public static func names(
    in systems: [TestedSystem] = TestedSystems.all,
    defaultSystem: String = TestedSystems.defaultName
  ) -> [String] {
    systems.flatMap { system in
      system.comparison.plays.map { side(system, $0, defaultSystem: defaultSystem).name }
        + (system.comparison.heldAgainst.isEmpty ? [] : [system.name])
    }
  }

  /// `scenario` as this side runs it, nil when it does not: a mock-lane file its system
  /// adopts and, for a played model, a file of that model's app, made one of its profile.
  public func run(_ scenario: Scenario) -> Scenario? {
    guard scenario.lane == .mock, var adopted = system.adopt(scenario) else { return nil }
    if let model {
      guard model.files.contains(scenario.app.profile) else { return nil }
      adopted.app.profile = model.profile
    }
    return adopted
  }

  /// The differences the docs explain between this side and `other`: those a system's code
  /// declares against the model the other side plays; none between two models.
  public func knownDifferences(with other: ComparisonSide) -> KnownDifferences {
    func declared(_ code: ComparisonSide, _ model: ComparisonSide) -> KnownDifferences? {
      guard code.model == nil, let played = model.model else { return nil }
      return code.system.comparison.heldAgainst.first { $0.profile == played.profile }?.known
    }
    return declared(self, other) ?? declared(other, self) ?? .none
  }

  /// Whether `other` is this side (the same system playing the same model, or its own code).
  public func isSame(as other: ComparisonSide) -> Bool {
    system.name == other.system.name && model?.profile == other.model?.profile
  }
}
