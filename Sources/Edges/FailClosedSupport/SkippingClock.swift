import Foundation
import Synchronization

/// A run's clock that jumps idle time: a ``ScaledClock`` (virtual = real since the epoch x
/// factor) plus the virtual time the runner has skipped, read from the run's ``ClockPage``.
/// While anything of the run works, time runs at the scale; when the runner sees every process
/// asleep, nothing on the wire and nothing held, it skips to the earliest deadline any of them
/// waits for (``ClockPage/skip(nanoseconds:)``), so a 100 s stall costs only the real time the
/// processes work, and no wake-up late by a few real milliseconds turns into virtual seconds.
///
/// Every sleep registers its deadline with the process's waiter thread (a thread of its own,
/// never a task of the cooperative pool), which publishes the earliest in the process's slot
/// and waits on the slot's futex word with a real timeout to it; a jump kicks that word.
public final class SkippingClock: HarnessClock, @unchecked Sendable {
  public let factor: Double
  public let epoch: MonotonicInstant
  public let page: ClockPage
  /// This process's slot in the page.
  public let slot: Int

  private enum Wake {
    case continuation(CheckedContinuation<Void, any Error>)
    case semaphore(DispatchSemaphore)
  }

  private struct Entry {
    let id: UInt64
    let deadline: Int64
    let wake: Wake
  }

  private let lock = NSLock()
  private var entries: [Entry] = []
  private var nextID: UInt64 = 0
  private var waiterStarted = false
  private var published: Int64?

  /// Claims a slot in `page` for this process; its holds (``RunClockHold``) go there too.
  public init(factor: Double, epoch: MonotonicInstant, page: ClockPage) throws {
    precondition(factor > 0, "SkippingClock factor must be positive")
    self.factor = factor
    self.epoch = epoch
    self.page = page
    slot = try page.claimSlot()
    RunClockHold.register(page: page, slot: slot)
  }

  /// The run's virtual nanoseconds at CLOCK_MONOTONIC `monotonic`: real time since the epoch
  /// times the factor, plus what was skipped.
  public static func virtualNanoseconds(
    monotonic: UInt64, epoch: UInt64, factor: Double, skipped: Int64
  ) -> Int64 {
    let real =
      monotonic >= epoch ? Double(monotonic - epoch) : -Double(epoch - monotonic)
    return Int64((real * factor).rounded(.down)) + skipped
  }

  /// Real nanoseconds until virtual `deadline`, from virtual `now` (0 when it has passed).
  public static func realNanoseconds(until deadline: Int64, from now: Int64, factor: Double)
    -> Int64
  {
    deadline <= now ? 0 : Int64((Double(deadline - now) / factor).rounded(.up))
  }

  public var nowNanoseconds: Int64 {
    Self.virtualNanoseconds(
      monotonic: MonotonicInstant.now.nanoseconds, epoch: epoch.nanoseconds, factor: factor,
      skipped: page.skippedNanoseconds)
  }

  public var now: Double { Double(nowNanoseconds) / 1e9 }

  /// Kernel-counted timeouts (poll, connect) do not move with a jump: their callers hold
  /// (``RunClockHold``) while they wait, so no jump happens meanwhile.
  public func realSeconds(_ seconds: Double) -> Double { seconds / factor }

  public func sleep(seconds: Double) async throws {
    let id = takeID()
    try await QueuedSleep.wait(seconds: seconds, lock: lock) { cont in
      addLocked(Entry(id: id, deadline: deadline(after: seconds), wake: .continuation(cont)))
    } dequeue: { [self] in
      if case .continuation(let cont)? = remove(id) { return cont }
      return nil
    }
  }

  public func sleepBlocking(seconds: Double) {
    guard seconds > 0 else { return }
    let done = DispatchSemaphore(value: 0)
    lock.withLock {
      addLocked(
        Entry(id: nextIDLocked(), deadline: deadline(after: seconds), wake: .semaphore(done)))
    }
    done.wait()
  }

  /// Sleeps until `seconds` of this clock have passed (a deadline that stops jumps) or
  /// `realCap` real seconds, whichever comes first: for a poll that watches a state and also
  /// has a step due on the clock (the mock's bootstrap plan).
  public func sleepBlocking(seconds: Double, realCap: Double) {
    guard seconds > 0 else { return }
    let done = DispatchSemaphore(value: 0)
    let id: UInt64 = lock.withLock {
      let id = nextIDLocked()
      addLocked(Entry(id: id, deadline: deadline(after: seconds), wake: .semaphore(done)))
      return id
    }
    if done.wait(timeout: .now() + max(0, realCap)) == .timedOut, remove(id) == nil {
      done.wait()  // resumed just as the cap passed
    }
  }

  /// The scaled arguments, for a child on the same clock (`--clock-page` beside them).
  public var arguments: [String] {
    ScaledClock(factor: factor, epoch: epoch).arguments + ["--clock-page", page.path]
  }

  // MARK: - Queue

  private func deadline(after seconds: Double) -> Int64 {
    nowNanoseconds + Int64(min(seconds, 31_536_000) * 1e9)
  }

  private func takeID() -> UInt64 { lock.withLock { nextIDLocked() } }

  private func nextIDLocked() -> UInt64 {
    nextID += 1
    return nextID
  }

  /// Under the lock: queues `entry`; a new earliest deadline is published at once (the
  /// runner must never see a later one than a sleeper waits for) and the waiter is kicked.
  private func addLocked(_ entry: Entry) {
    entries.append(entry)
    if !waiterStarted {
      waiterStarted = true
      let thread = Thread { [self] in waitLoop() }
      thread.name = "fc-clock"
      thread.start()
    }
    if published.map({ entry.deadline < $0 }) ?? true {
      published = entry.deadline
      page.publishDeadline(entry.deadline, slot: slot)
      page.kick(slot)
    }
  }

  private func remove(_ id: UInt64) -> Wake? {
    lock.withLock {
      guard let index = entries.firstIndex(where: { $0.id == id }) else { return nil }
      return entries.remove(at: index).wake
    }
  }

  /// The waiter: resumes every sleeper whose deadline has passed, publishes the earliest left,
  /// and waits for it (real time at the scale) or a kick (a jump, an earlier sleeper).
  private func waitLoop() {
    while true {
      let seen = page.kickValue(slot)
      let (due, wait): ([Wake], Int64?) = lock.withLock {
        let now = nowNanoseconds
        let due = entries.filter { $0.deadline <= now }.sorted { $0.id < $1.id }.map(\.wake)
        entries.removeAll { $0.deadline <= now }
        published = entries.map(\.deadline).min()
        page.publishDeadline(published, slot: slot)
        return (
          due, published.map { Self.realNanoseconds(until: $0, from: now, factor: factor) }
        )
      }
      for wake in due {
        switch wake {
        case .continuation(let cont): cont.resume()
        case .semaphore(let semaphore): semaphore.signal()
        }
      }
      if !due.isEmpty { continue }
      page.waitForKick(slot, seen: seen, realNanoseconds: wait)
    }
  }
}

/// Holds on the run's skipping clock: a wait the kernel counts in real time (a connect's, a
/// request's, a poll's timeout) does not move with a jump, so while one is pending the runner
/// must not jump. Code that cannot see the clock (sockets, sessions) holds through here; with
/// no skipping clock in the process it does nothing.
public enum RunClockHold {
  fileprivate struct Registration: @unchecked Sendable {
    let page: ClockPage
    let slot: Int
  }
  private static let current = Mutex<Registration?>(nil)

  /// One hold, ended by ``end(_:)`` on the page it began on: a clock registered meanwhile
  /// (another test of the process) must not lose a hold it never got.
  public struct Hold: Sendable {
    fileprivate let registration: Registration?
  }

  static func register(page: ClockPage, slot: Int) {
    current.withLock { $0 = Registration(page: page, slot: slot) }
  }

  /// Whether a skipping clock is in use in this process.
  public static var isActive: Bool { current.withLock { $0 != nil } }

  /// Holds the clock until ``end(_:)`` (a hold for the whole run is never ended).
  @discardableResult
  public static func begin() -> Hold {
    let hold = Hold(registration: current.withLock { $0 })
    hold.registration.map { $0.page.addHold(1, slot: $0.slot) }
    return hold
  }

  public static func end(_ hold: Hold) {
    hold.registration.map { $0.page.addHold(-1, slot: $0.slot) }
  }

  /// Runs `body` holding the clock.
  public static func during<T>(_ body: () throws -> T) rethrows -> T {
    let hold = begin()
    defer { end(hold) }
    return try body()
  }
}
