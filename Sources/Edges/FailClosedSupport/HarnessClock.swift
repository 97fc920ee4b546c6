import Foundation

/// The one injectable clock. Every deadline, timed wait and timestamp of a run reads time from
/// here: the runner's (censor changes, crashes, its own deadline), the mock Tor's (bootstrap
/// plan, stream waits and faults, control port), the app's (actions, timers, events) and its
/// controllers'. Tests run a 75 s stall instantly on a ``ManualClock``; a run compresses it on
/// a ``ScaledClock`` whose epoch and scale the runner makes once and hands to every process of
/// the run (`--epoch`, `--time-scale`), so all of them read the same time at the same instant.
/// Polls that only watch for a change of state (a port opened, a child exited) wait in real
/// time, on ``SystemClock``.
///
/// Named `HarnessClock` because `Clock` is taken by the standard library.
public protocol HarnessClock: Sendable {
  /// Seconds since this clock's origin, in the clock's own (possibly virtual) time.
  var now: Double { get }
  /// Suspends for `seconds` of this clock's time. Throws `CancellationError` when the
  /// calling task is cancelled.
  func sleep(seconds: Double) async throws
  /// Blocks the calling thread for `seconds` of this clock's time: for the dedicated threads
  /// of the mock and the harness, never a task of the cooperative pool.
  func sleepBlocking(seconds: Double)
  /// The real seconds that `seconds` of this clock last: for timeouts the kernel counts
  /// (poll(2), connect). A clock that does not follow real time answers `seconds`.
  func realSeconds(_ seconds: Double) -> Double
}

extension HarnessClock {
  /// Waits on the clock's own `sleep` from a detached task: a virtual clock wakes this
  /// thread when its time passes the deadline.
  public func sleepBlocking(seconds: Double) {
    guard seconds > 0 else { return }
    let done = DispatchSemaphore(value: 0)
    let clock = self
    Task.detached {
      try? await clock.sleep(seconds: seconds)
      done.signal()
    }
    done.wait()
  }

  public func realSeconds(_ seconds: Double) -> Double { seconds }
}

/// An instant of CLOCK_MONOTONIC. Linux has one monotonic clock for every process and every
/// network namespace (the harness makes no time namespace), so an instant taken by the runner
/// means the same moment in the mock and the app it starts in the device.
public struct MonotonicInstant: Hashable, Comparable, Sendable, CustomStringConvertible {
  /// Nanoseconds of CLOCK_MONOTONIC (since boot, not counting suspend).
  public let nanoseconds: UInt64

  public init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }

  public static var now: MonotonicInstant {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return MonotonicInstant(nanoseconds: UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec))
  }

  /// Seconds from `earlier` to this instant; negative when this one comes first.
  public func seconds(since earlier: MonotonicInstant) -> Double {
    nanoseconds >= earlier.nanoseconds
      ? Double(nanoseconds - earlier.nanoseconds) / 1e9
      : -Double(earlier.nanoseconds - nanoseconds) / 1e9
  }

  /// This instant moved by `seconds` (at most a year, either way).
  public func advanced(bySeconds seconds: Double) -> MonotonicInstant {
    let delta = UInt64(min(abs(seconds), 31_536_000) * 1e9)
    if seconds >= 0 { return MonotonicInstant(nanoseconds: nanoseconds &+ delta) }
    return MonotonicInstant(nanoseconds: nanoseconds > delta ? nanoseconds - delta : 0)
  }

  /// The Unix time of this instant, on the process's one wall-clock base
  /// (``WallClockOffset/process``): a wall clock set during a run moves no instant of it
  /// (packet captures stamp packets with Unix times, which the capture puts on the same base).
  public var unixTime: Double {
    Double(Int64(bitPattern: nanoseconds) &+ WallClockOffset.process) / 1e9
  }

  public static func < (lhs: MonotonicInstant, rhs: MonotonicInstant) -> Bool {
    lhs.nanoseconds < rhs.nanoseconds
  }

  public var description: String { String(nanoseconds) }

  /// Parses the decimal nanoseconds ``description`` writes (the `--epoch` option).
  public init?(_ text: String) {
    guard let value = UInt64(text) else { return nil }
    nanoseconds = value
  }

  /// Blocks the calling thread for `seconds` of real time (at most a year), resuming after
  /// signals.
  static func sleepBlocking(realSeconds seconds: Double) {
    guard seconds > 0 else { return }
    let total = min(seconds, 31_536_000)
    var request = timespec(tv_sec: Int(total), tv_nsec: Int((total - total.rounded(.down)) * 1e9))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
  }
}

/// Real monotonic time, origin at creation.
public struct SystemClock: HarnessClock {
  private let origin: MonotonicInstant

  public init() { origin = .now }

  public var now: Double { MonotonicInstant.now.seconds(since: origin) }

  public func sleep(seconds: Double) async throws {
    guard seconds > 0 else {
      try Task.checkCancellation()
      return
    }
    // At most a year per sleep: a duration from outside (a plan of healthy:1e300) must not
    // overflow the conversion to nanoseconds (a trap), and no run waits that long anyway.
    try await Task.sleep(nanoseconds: UInt64(min(seconds, 31_536_000) * 1e9))
  }

  public func sleepBlocking(seconds: Double) {
    MonotonicInstant.sleepBlocking(realSeconds: seconds)
  }

  public func realSeconds(_ seconds: Double) -> Double { seconds }
}

/// A run's clock: virtual time that runs `factor` times faster than the wall clock, 0 at
/// `epoch` (negative before it). With factor 75, a 75 s bootstrap deadline passes in one real
/// second. The runner makes one and hands ``arguments`` to every process of the run, which
/// makes the same clock from them.
public struct ScaledClock: HarnessClock {
  public let factor: Double
  public let epoch: MonotonicInstant

  public init(factor: Double, epoch: MonotonicInstant = .now) {
    precondition(factor > 0, "ScaledClock factor must be positive")
    self.factor = factor
    self.epoch = epoch
  }

  public var now: Double { MonotonicInstant.now.seconds(since: epoch) * factor }

  public func sleep(seconds: Double) async throws {
    try await SystemClock().sleep(seconds: seconds / factor)
  }

  public func sleepBlocking(seconds: Double) {
    MonotonicInstant.sleepBlocking(realSeconds: seconds / factor)
  }

  public func realSeconds(_ seconds: Double) -> Double { seconds / factor }

  /// The command-line options that make this clock in a child (`failclosed mock-tor`,
  /// `failclosed app`).
  public var arguments: [String] {
    let scale = factor == factor.rounded() ? String(Int(factor)) : String(factor)
    return ["--time-scale", scale, "--epoch", epoch.description]
  }

  /// The Unix time at which this clock reads 0 (for packet timestamps).
  public var epochUnixTime: Double { epoch.unixTime }
}
