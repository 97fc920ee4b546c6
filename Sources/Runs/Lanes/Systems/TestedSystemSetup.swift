import Scenarios

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
