import Foundation

/// The project's one simulated clock: virtual time that moves only when a test moves it. Two
/// things wait on it in one queue, in deadline order (ties in the order they were added):
/// tasks asleep in ``sleep(seconds:)`` (the mock, the controllers, the app driver) and timers
/// (``ManualClockTimer``: the app's scheduler, whose callbacks must run to completion one by
/// one). ``advance(by:)`` fires them in that order, letting each woken task run before time
/// moves on, so a test of "polled every second for 75 s" is deterministic. SystemUnderTest
/// makes it the app's scheduler and adds a synchronous advance on the app actor.
public final class ManualClock: HarnessClock, @unchecked Sendable {
  private enum Waiter {
    case sleeper(CheckedContinuation<Void, any Error>)
    case timer(any ManualClockTimer)
  }

  private struct Entry {
    let id: UInt64
    let deadline: Double
    let waiter: Waiter
  }

  private let lock = NSLock()
  private var current: Double
  private var entries: [Entry] = []
  private var nextID: UInt64 = 0

  public init(start: Double = 0) { current = start }

  public var now: Double { lock.withLock { current } }

  /// Number of tasks currently asleep on this clock.
  public var sleeperCount: Int {
    lock.withLock {
      entries.filter {
        if case .sleeper = $0.waiter { return true }
        return false
      }.count
    }
  }

  /// Timers added and not yet fired or removed.
  public var timerCount: Int { lock.withLock { entries.count } - sleeperCount }

  public func sleep(seconds: Double) async throws {
    let id = takeID()
    try await QueuedSleep.wait(seconds: seconds, lock: lock) { cont in
      entries.append(Entry(id: id, deadline: current + seconds, waiter: .sleeper(cont)))
    } dequeue: { [self] in
      if case .sleeper(let cont)? = remove(id) { return cont }
      return nil
    }
  }

  /// Adds `timer`, due `seconds` from now (at once for 0 or less: on the next advance).
  /// Returns its id, for ``removeTimer(_:)``.
  @discardableResult
  public func addTimer(_ timer: any ManualClockTimer, after seconds: Double) -> UInt64 {
    let id = takeID()
    lock.withLock {
      entries.append(Entry(id: id, deadline: current + max(0, seconds), waiter: .timer(timer)))
    }
    return id
  }

  /// Drops a timer that has not fired.
  public func removeTimer(_ id: UInt64) { _ = remove(id) }

  /// Moves time forward by `seconds`, waking every sleeper and firing every timer whose
  /// deadline falls inside the interval, earliest first, with the clock reading each deadline
  /// while its waiters run.
  public func advance(by seconds: Double) async {
    let target = now + seconds
    while let due = takeDue(through: target) {
      for timer in due { await timer.fire() }
      await settle()
    }
    lock.withLock { current = max(current, target) }
    await settle()
  }

  /// For a synchronous advance (SystemUnderTest's, on the app actor): the earliest timer due
  /// by `target`, removed, with the clock moved to its deadline. Sleepers due first are woken
  /// on the way (they run when their executor next runs). Nil when nothing more is due; then
  /// call ``finishAdvance(at:)``.
  public func takeNextTimer(through target: Double) -> (any ManualClockTimer)? {
    while true {
      let next: Entry? = lock.withLock {
        guard let index = earliestIndex(), entries[index].deadline <= target else { return nil }
        let entry = entries.remove(at: index)
        current = max(current, entry.deadline)
        return entry
      }
      switch next?.waiter {
      case nil: return nil
      case .sleeper(let cont)?: cont.resume()
      case .timer(let timer)?: return timer
      }
    }
  }

  /// Ends an advance: the clock reads `target`.
  public func finishAdvance(at target: Double) {
    lock.withLock { current = max(current, target) }
  }

  /// Lets tasks woken by the clock run until they block again. Yielding is a heuristic, but a
  /// generous one: woken work in this project is short and never blocks on real I/O.
  public func settle() async {
    for _ in 0..<64 { await Task.yield() }
  }

  // MARK: - Queue

  private func takeID() -> UInt64 {
    lock.withLock {
      nextID += 1
      return nextID
    }
  }

  /// The entry with the earliest deadline (the first added among equals). Under the lock.
  private func earliestIndex() -> Int? {
    entries.indices.min {
      (entries[$0].deadline, entries[$0].id) < (entries[$1].deadline, entries[$1].id)
    }
  }

  private func remove(_ id: UInt64) -> Waiter? {
    lock.withLock {
      guard let index = entries.firstIndex(where: { $0.id == id }) else { return nil }
      return entries.remove(at: index).waiter
    }
  }

  /// Every entry at the earliest deadline due by `target`: sleepers are resumed here, timers
  /// returned in order for the caller to fire. Nil when nothing is due.
  private func takeDue(through target: Double) -> [any ManualClockTimer]? {
    let due: [Entry] = lock.withLock {
      guard let index = earliestIndex(), entries[index].deadline <= target else { return [] }
      let deadline = entries[index].deadline
      current = max(current, deadline)
      let ready = entries.filter { $0.deadline <= deadline }.sorted { $0.id < $1.id }
      entries.removeAll { $0.deadline <= deadline }
      return ready
    }
    if due.isEmpty { return nil }
    var timers: [any ManualClockTimer] = []
    for entry in due {
      switch entry.waiter {
      case .sleeper(let cont): cont.resume()
      case .timer(let timer): timers.append(timer)
      }
    }
    return timers
  }
}

/// A timer's action on a ``ManualClock``, run once when the clock passes its deadline.
public protocol ManualClockTimer: AnyObject, Sendable {
  func fire() async
}
