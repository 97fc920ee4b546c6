import Scenarios

/// What a system declares for `leak-audit --compare A,B` (``ComparisonSide``): the app models
/// it plays as a side, or the app models its own code is held against. A system that declares
/// neither is not a side.
public struct TestedSystemComparison: Sendable {
  /// An app model a system plays as a side (`SYSTEM:PROFILE`): each file it runs becomes a
  /// file of that profile.
  public struct PlayedModel: Sendable {
    public let profile: AppPlan.Profile
    /// The profiles of the files it runs as that model: the same app (bitchat and hardened
    /// are one app, its rules fixed or not; onion-browser is onion-browser-3).
    public let files: Set<AppPlan.Profile>

    public init(_ profile: AppPlan.Profile, files: Set<AppPlan.Profile>) {
      self.profile = profile
      self.files = files
    }
  }

  /// An app model a system's own code is held against (`SYSTEM` against PROFILE), with the
  /// differences the docs explain between the two.
  public struct Counterpart: Sendable {
    public let profile: AppPlan.Profile
    public let known: KnownDifferences

    public init(_ profile: AppPlan.Profile, known: KnownDifferences) {
      self.profile = profile
      self.known = known
    }
  }

  public var plays: [PlayedModel]
  public var heldAgainst: [Counterpart]

  public init(plays: [PlayedModel] = [], heldAgainst: [Counterpart] = []) {
    self.plays = plays
    self.heldAgainst = heldAgainst
  }

  /// Not a side of a comparison.
  public static let none = TestedSystemComparison()
}
