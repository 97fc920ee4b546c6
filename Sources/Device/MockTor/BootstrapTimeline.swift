import TorControl

/// Maps harness time to the plan time of a ``BootstrapSimulator``: plan time stands still while
/// the controller has set DisableNetwork 1 (tor makes no progress without the network) and
/// runs on when it is cleared.
public struct BootstrapTimeline: Hashable, Sendable {
  /// Harness time at which plan time 0 began (the mock's start).
  public let origin: Double
  public private(set) var pausedSince: Double?
  public private(set) var pausedTotal: Double = 0

  public init(origin: Double, networkDisabled: Bool = false) {
    self.origin = origin
    pausedSince = networkDisabled ? origin : nil
  }

  public var networkDisabled: Bool { pausedSince != nil }

  public mutating func setNetworkDisabled(_ disabled: Bool, at now: Double) {
    if disabled, pausedSince == nil {
      pausedSince = now
    } else if !disabled, let since = pausedSince {
      pausedTotal += max(0, now - since)
      pausedSince = nil
    }
  }

  public func planTime(at now: Double) -> Double {
    let end = pausedSince ?? now
    return max(0, end - origin - pausedTotal)
  }
}
