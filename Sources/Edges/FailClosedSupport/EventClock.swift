import Foundation
import Synchronization

/// A run's event clock: its time is one word of the run's ``ClockPage``, which only the
/// runner moves. While any process of the run works, time stands still, so no timer fires late
/// and no action is performed late, however loaded the machine; when the runner sees every
/// process asleep, nothing on the wire and nothing held, it moves the time to the earliest
/// deadline any of them waits for (a discrete-event simulation, as tor-rtmock's
/// `advance_until_stalled` and Shadow run their processes). A wait the kernel times in real
/// time (a connect's or a request's timeout) holds (``RunClockHold``): while one does, the
/// runner lets time run at the scale, never past a pending deadline. The wall time a run takes
/// is its processes' work, not its virtual duration.
///
/// Every sleep registers its deadline with the process's waiter thread (a thread of its own,
/// never a task of the cooperative pool), which publishes the earliest in the process's slot
/// and waits on the slot's futex word; the runner kicks that word when the time reaches it.
public final class EventClock: HarnessClock, @unchecked Sendable {
  /// Virtual seconds per real second while a real-time wait holds (and for those waits'
  /// kernel timeouts, ``realSeconds(_:)``).
  public let factor: Double
  public let epoch: MonotonicInstant
  public let page: ClockPage
  /// This process's slot in the page.
  public let slot: Int

  private enum Wake {
    case continuation(CheckedContinuation<Void, any Error>)
    case semaphore(DispatchSemaphore)
    /// A pin (``pin(atNanoseconds:)``): nothing to wake; it stands until taken back.
    case pin
  }

  /// An instant the run's time does not pass until ``unpin(_:)``: a timer or a timed action
  /// pinned when it is set, so that the time stands at its deadline until it has run, however
  /// long its task takes to be scheduled (while a process keeps real time, time runs at the
  /// scale, and the gap between setting a timer and its sleep would otherwise let it pass).
  public struct Pin: Sendable, Equatable {
    fileprivate let id: UInt64
    /// Its instant, virtual nanoseconds.
    public let nanoseconds: Int64
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
  /// `order`: the process's turn at equal instants (``ClockPage/Order``: the mock's steps
  /// before the app's).
  public init(
    factor: Double, epoch: MonotonicInstant, page: ClockPage, order: Int = ClockPage.Order.app
  ) throws {
    precondition(factor > 0, "EventClock factor must be positive")
    self.factor = factor
    self.epoch = epoch
    self.page = page
    slot = try page.claimSlot(order: order)
    RunClockHold.register(page: page, slot: slot)
  }

  /// The run's time: the page's word.
  public var nowNanoseconds: Int64 { page.nowNanoseconds }

  public var now: Double { Double(nowNanoseconds) / 1e9 }

  /// Kernel-counted timeouts (poll, connect) move with real time: their callers hold
  /// (``RunClockHold``) while they wait, so the run's time runs at the scale meanwhile.
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

  /// Sleeps until the run's time reaches `deadline` (virtual nanoseconds): a pinned instant's
  /// own sleep, on exactly the pin's nanosecond.
  public func sleep(untilNanoseconds deadline: Int64) async throws {
    let id = takeID()
    let seconds = nowNanoseconds < deadline ? 1.0 : 0
    try await QueuedSleep.wait(seconds: seconds, lock: lock) { cont in
      addLocked(Entry(id: id, deadline: deadline, wake: .continuation(cont)))
    } dequeue: { [self] in
      if case .continuation(let cont)? = remove(id) { return cont }
      return nil
    }
  }

  /// Pins `seconds` (virtual, rounded up to the nanosecond): the time stands there until
  /// ``unpin(_:)``.
  public func pin(at seconds: Double) -> Pin {
    let nanoseconds = Int64((min(seconds, 31_536_000) * 1e9).rounded(.up))
    return lock.withLock {
      let id = nextIDLocked()
      addLocked(Entry(id: id, deadline: nanoseconds, wake: .pin))
      return Pin(id: id, nanoseconds: nanoseconds)
    }
  }

  /// Takes a pin back (again: nothing).
  public func unpin(_ pin: Pin) {
    guard remove(pin.id) != nil else { return }
    page.kick(slot)  // the waiter publishes the earliest left
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

  /// Real nanoseconds a waiter waits for a kick before it reads the page again.
  static let backstopNanoseconds: Int64 = 1_000_000_000

  /// The scaled arguments, for a child on the same clock (`--clock-page` beside them).
  public var arguments: [String] {
    ScaledClock(factor: factor, epoch: epoch).arguments + ["--clock-page", page.path]
  }

  // MARK: - Queue

  /// Rounded up, and at least a nanosecond ahead: the time stands still while the sleeper
  /// runs, so a deadline rounded down onto now would be due at once and its loop (the mock's
  /// wait for a plan step a nanosecond ahead) would spin without the time ever reaching it.
  private func deadline(after seconds: Double) -> Int64 {
    nowNanoseconds + max(1, Int64((min(seconds, 31_536_000) * 1e9).rounded(.up)))
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
  /// and waits for a kick (the runner's time reached it, an earlier sleeper). The real-time
  /// bound only re-reads the page, in case a kick were ever missed: it wakes nobody early.
  private func waitLoop() {
    while true {
      let seen = page.kickValue(slot)
      let (due, wait): ([Wake], Int64?) = lock.withLock {
        let now = nowNanoseconds
        let isDue = { (entry: Entry) -> Bool in
          if case .pin = entry.wake { return false }
          return entry.deadline <= now
        }
        let due = entries.filter(isDue).sorted { $0.id < $1.id }.map(\.wake)
        entries.removeAll(where: isDue)
        published = entries.map(\.deadline).min()
        page.publishDeadline(published, slot: slot)
        return (due, published.map { _ in Self.backstopNanoseconds })
      }
      for wake in due {
        switch wake {
        case .continuation(let cont): cont.resume()
        case .semaphore(let semaphore): semaphore.signal()
        case .pin: break
        }
      }
      if !due.isEmpty { continue }
      page.waitForKick(slot, seen: seen, realNanoseconds: wait)
    }
  }
}

/// Holds on the run's event clock: a wait the kernel counts in real time (a connect's, a
/// request's, a poll's timeout) moves with real time, so while one is pending the runner lets
/// the run's time run at the scale (never past a pending deadline) instead of standing still
/// or jumping. Code that cannot see the clock (sockets, sessions) holds through here; with
/// no event clock in the process it does nothing.
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

  /// Whether a event clock is in use in this process.
  public static var isActive: Bool { current.withLock { $0 != nil } }

  /// Holds the clock until ``end(_:)``.
  @discardableResult
  public static func begin() -> Hold {
    let hold = Hold(registration: current.withLock { $0 })
    hold.registration.map { $0.page.addHold(1, slot: $0.slot) }
    return hold
  }

  /// What a process that keeps real time for the whole run adds to its slot's holds (its
  /// loops poll in real time where the clock cannot see them: the control-port backends, the
  /// mock's ctor personality). While one does, the runner lets time run at the scale even
  /// while the run works, never past a pending deadline or pin.
  public static let wholeRun = 0x1_0000

  /// Holds the clock for the rest of the process's run.
  public static func beginForTheRun() {
    current.withLock { $0 }.map { $0.page.addHold(wholeRun, slot: $0.slot) }
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
