import FailClosedSupport
import Foundation

/// Timers for the modelled app. bitchat's loops (SOCKS probe, bootstrap poll, awaitReady,
/// backoff, retries) are written here as timer callbacks on the app actor, so a test can run
/// them on a ``VirtualScheduler`` deterministically, and a real run on a ``ClockScheduler``
/// over any ``HarnessClock`` (system or scaled).
public protocol AppScheduler: AnyObject, Sendable {
  /// Seconds on the app's clock.
  var now: Double { get }
  /// Runs `action` on the app actor after `seconds` of the app's clock.
  @AppActor @discardableResult
  func schedule(after seconds: Double, _ action: @escaping @AppActor () -> Void) -> ScheduledTimer
}

/// A pending timer; cancelling it before it fires drops its action.
@AppActor public final class ScheduledTimer {
  public private(set) var isCancelled = false
  var onCancel: (@AppActor () -> Void)?

  nonisolated init() {}

  public func cancel() {
    guard !isCancelled else { return }
    isCancelled = true
    onCancel?()
    onCancel = nil
  }
}

/// Timers over a ``HarnessClock``: one task per timer sleeping on the clock.
public final class ClockScheduler: AppScheduler {
  public let clock: any HarnessClock

  public init(clock: any HarnessClock) { self.clock = clock }

  public var now: Double { clock.now }

  @AppActor @discardableResult
  public func schedule(after seconds: Double, _ action: @escaping @AppActor () -> Void)
    -> ScheduledTimer
  {
    let timer = ScheduledTimer()
    let clock = self.clock
    let task = Task { @AppActor in
      do { try await clock.sleep(seconds: seconds) } catch { return }
      guard !timer.isCancelled else { return }
      timer.cancel()
      action()
    }
    timer.onCancel = { task.cancel() }
    return timer
  }
}

/// Virtual time for tests (and for runs that need no real time): nothing moves until
/// ``advance(by:)``, which fires due timers one by one in deadline order, each running to
/// completion on the app actor before the next, so "polled every second for 75 s" is exact.
/// Also a ``HarnessClock`` whose `sleep` wakes when virtual time passes the deadline.
public final class VirtualScheduler: AppScheduler, HarnessClock, @unchecked Sendable {
  private struct Entry {
    let deadline: Double
    let sequence: UInt64
    let action: @AppActor () -> Void
    let timer: ScheduledTimer
  }

  private let lock = NSLock()
  private var current: Double
  private var entries: [Entry] = []
  private var sequence: UInt64 = 0

  public init(start: Double = 0) { current = start }

  public var now: Double { lock.withLock { current } }

  /// Timers not yet fired or cancelled.
  public var pendingCount: Int {
    lock.withLock { entries.count }
  }

  @AppActor @discardableResult
  public func schedule(after seconds: Double, _ action: @escaping @AppActor () -> Void)
    -> ScheduledTimer
  {
    let timer = ScheduledTimer()
    let id: UInt64 = lock.withLock {
      sequence += 1
      entries.append(
        Entry(
          deadline: current + max(0, seconds), sequence: sequence, action: action, timer: timer))
      return sequence
    }
    timer.onCancel = { [weak self] in
      self?.lock.withLock { self?.entries.removeAll { $0.sequence == id } }
    }
    return timer
  }

  /// Fires every timer due within `seconds`, earliest first (ties in scheduling order), with
  /// the clock reading each timer's deadline while it runs.
  @AppActor public func advance(by seconds: Double) {
    let target = now + seconds
    while true {
      let next: Entry? = lock.withLock {
        guard
          let index = entries.indices.min(by: { lhs, rhs in
            (entries[lhs].deadline, entries[lhs].sequence)
              < (entries[rhs].deadline, entries[rhs].sequence)
          }), entries[index].deadline <= target
        else { return nil }
        let entry = entries.remove(at: index)
        current = max(current, entry.deadline)
        return entry
      }
      guard let next else { break }
      guard !next.timer.isCancelled else { continue }
      next.timer.onCancel = nil
      next.action()
    }
    lock.withLock { current = max(current, target) }
  }

  /// HarnessClock: suspends until virtual time reaches now + seconds.
  public func sleep(seconds: Double) async throws {
    try Task.checkCancellation()
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      Task { @AppActor in
        self.schedule(after: seconds) { continuation.resume() }
      }
    }
    try Task.checkCancellation()
  }
}
