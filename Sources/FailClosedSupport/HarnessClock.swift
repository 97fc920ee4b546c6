import Foundation

/// The one injectable clock. Every deadline, poll interval and timestamp in the harness and
/// in the system under test reads time from here, so tests can run a 75 s stall instantly
/// (``ManualClock``) and a real run can compress it (``ScaledClock``).
///
/// Named `HarnessClock` because `Clock` is taken by the standard library.
public protocol HarnessClock: Sendable {
  /// Seconds since this clock's origin, in the clock's own (possibly virtual) time.
  var now: Double { get }
  /// Suspends for `seconds` of this clock's time. Throws `CancellationError` when the
  /// calling task is cancelled.
  func sleep(seconds: Double) async throws
}

/// Real monotonic time, origin at creation.
public struct SystemClock: HarnessClock {
  private let origin: UInt64

  public init() { origin = DispatchTime.now().uptimeNanoseconds }

  public var now: Double {
    Double(DispatchTime.now().uptimeNanoseconds - origin) / 1e9
  }

  public func sleep(seconds: Double) async throws {
    guard seconds > 0 else {
      try Task.checkCancellation()
      return
    }
    // At most a year per sleep: a duration from outside (a plan of healthy:1e300) must not
    // overflow the conversion to nanoseconds (a trap), and no run waits that long anyway.
    try await Task.sleep(nanoseconds: UInt64(min(seconds, 31_536_000) * 1e9))
  }
}

/// Virtual time that runs `factor` times faster than the wall clock: with factor 75, a 75 s
/// bootstrap deadline passes in one real second.
public struct ScaledClock: HarnessClock {
  public let factor: Double
  private let base = SystemClock()

  public init(factor: Double) {
    precondition(factor > 0, "ScaledClock factor must be positive")
    self.factor = factor
  }

  public var now: Double { base.now * factor }

  public func sleep(seconds: Double) async throws {
    try await base.sleep(seconds: seconds / factor)
  }
}
