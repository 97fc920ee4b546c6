import FailClosedSupport
import Foundation

/// Timers for the modelled app. bitchat's loops (SOCKS probe, bootstrap poll, awaitReady,
/// backoff, retries) are written here as timer callbacks on the app actor, so a test can run
/// them on a ``ManualClock`` deterministically, and a real run on a ``ClockScheduler``
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

/// Timers over a ``HarnessClock``: one task per timer sleeping on the clock. A timer set while
/// another timer's action runs counts from that timer's deadline, not from the moment it ran:
/// as on the ``ManualClock`` the model is tested on, where an action runs at its deadline. A
/// scaled clock multiplies every late wake-up (1 ms late is 25 ms at scale 25), and without
/// this a loop of 1 s sleeps would drift by the sum of them (bitchat's 75 s poll ended up to
/// 1.4 s late at load 30), where at bitchat's own speed the drift is a few milliseconds. An
/// action so late that the new deadline has passed counts from now instead: a stalled process
/// skips the missed turns rather than running them back to back.
///
/// A timer that fires more than `lateReport` seconds after its deadline is told to `onLate`
/// (deadline, time it ran): on a scaled clock that is the harness starving the app of CPU, and
/// the run shows the app's behaviour at other times than its own (a 75 s stall poll that lost a
/// turn posted at 76.1 s), so the lane judges it as it judges a late action.
public final class ClockScheduler: AppScheduler {
  public let clock: any HarnessClock
  /// The deadline of the timer whose action runs now, on the app actor.
  @AppActor private var firingDeadline: Double?
  let lateReport: Double
  let onLate: (@AppActor (_ deadline: Double, _ ran: Double) -> Void)?

  public init(
    clock: any HarnessClock, lateReport: Double = .infinity,
    onLate: (@AppActor (_ deadline: Double, _ ran: Double) -> Void)? = nil
  ) {
    self.clock = clock
    self.lateReport = lateReport
    self.onLate = onLate
  }

  public var now: Double { clock.now }

  @AppActor @discardableResult
  public func schedule(after seconds: Double, _ action: @escaping @AppActor () -> Void)
    -> ScheduledTimer
  {
    let timer = ScheduledTimer()
    let clock = self.clock
    let now = clock.now
    let anchored = firingDeadline.map { $0 + max(0, seconds) }
    let deadline = anchored.flatMap { $0 >= now ? $0 : nil } ?? now + max(0, seconds)
    // On the event clock the deadline is pinned now: the time stands there until the action
    // has run, however long the task takes to be scheduled.
    let eventClock = clock as? EventClock
    let pin = eventClock?.pin(at: deadline)
    let task = Task { @AppActor in
      defer { pin.map { eventClock?.unpin($0) } }
      if let eventClock, let pin {
        do { try await eventClock.sleep(untilNanoseconds: pin.nanoseconds) } catch { return }
      } else {
        let wait = deadline - clock.now
        if wait > 0 {
          do { try await clock.sleep(seconds: wait) } catch { return }
        }
      }
      guard !timer.isCancelled else { return }
      timer.cancel()
      let ran = clock.now
      if ran - deadline > self.lateReport { self.onLate?(deadline, ran) }
      let outer = self.firingDeadline
      self.firingDeadline = deadline
      action()
      self.firingDeadline = outer
    }
    timer.onCancel = {
      task.cancel()
      pin.map { eventClock?.unpin($0) }
    }
    return timer
  }
}

/// The project's simulated clock (FailClosedSupport's ``ManualClock``) as the app's scheduler,
/// for tests and for runs that need no real time: a timer is one entry in the clock's queue,
/// beside the tasks asleep on it, so the app's timers, its driver and any mock on the same
/// clock share one time.
extension ManualClock: AppScheduler {
  @AppActor @discardableResult
  public func schedule(after seconds: Double, _ action: @escaping @AppActor () -> Void)
    -> ScheduledTimer
  {
    let timer = ScheduledTimer()
    let id = addTimer(AppTimer(timer: timer, action: action), after: seconds)
    timer.onCancel = { [weak self] in self?.removeTimer(id) }
    return timer
  }

  /// Moves time forward by `seconds`, firing every timer due on the way one by one, earliest
  /// first (ties in scheduling order), each running to completion on the app actor with the
  /// clock reading its deadline, so "polled every second for 75 s" is exact. Tasks asleep on
  /// the clock are woken in the same order and run once the caller lets them.
  @AppActor public func advanceTimers(by seconds: Double) {
    let target = now + seconds
    while let next = takeNextTimer(through: target) {
      (next as? AppTimer)?.run()
    }
    finishAdvance(at: target)
  }
}

/// One app timer in a ``ManualClock``'s queue.
@AppActor final class AppTimer: ManualClockTimer {
  let timer: ScheduledTimer
  let action: @AppActor () -> Void

  init(timer: ScheduledTimer, action: @escaping @AppActor () -> Void) {
    self.timer = timer
    self.action = action
  }

  func fire() { run() }

  func run() {
    guard !timer.isCancelled else { return }
    timer.onCancel = nil
    action()
  }
}
