/// Where a Tor client is in its bootstrap at one moment: what GETINFO status/bootstrap-phase
/// answers (the mock's bootstrap simulator makes these).
public struct BootstrapState: Hashable, Sendable {
  public var phase: BootstrapPhase
  /// The most recent problem report since the phase last changed (tor's GETINFO
  /// status/bootstrap-phase shows it instead of the phase while it is the latest message).
  public var lastWarning: BootstrapWarning?
  /// True at 100% while circuits can be built (false while a flapping network is down).
  public var networkUp: Bool
  public var crashed: Bool

  public var progress: Int { phase.progress }
  public var tag: String { phase.tag }
  public var summary: String { phase.summary }
  /// Bootstrapped and able to carry streams now.
  public var isReady: Bool { phase.progress == 100 && networkUp && !crashed }

  public static let initial = BootstrapState(
    phase: .starting, lastWarning: nil, networkUp: false, crashed: false)
}
