import Foundation

/// Virtual time that moves only when a test calls ``advance(by:)``. Sleepers wake in deadline
/// order, and each wake-up gets a chance to run (and to schedule further sleeps) before time
/// moves on, so a test of "polled every second for 75 s" is deterministic.
public final class ManualClock: HarnessClock, @unchecked Sendable {
  private struct Sleeper {
    let id: UInt64
    let deadline: Double
    let continuation: CheckedContinuation<Void, any Error>
  }

  private let lock = NSLock()
  private var current: Double
  private var sleepers: [Sleeper] = []
  private var nextID: UInt64 = 0

  public init(start: Double = 0) { current = start }

  public var now: Double { lock.withLock { current } }

  /// Number of tasks currently asleep on this clock.
  public var sleeperCount: Int { lock.withLock { sleepers.count } }

  public func sleep(seconds: Double) async throws {
    let id: UInt64 = lock.withLock {
      nextID += 1
      return nextID
    }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (cont: CheckedContinuation<Void, any Error>) in
        lock.lock()
        if Task.isCancelled {
          lock.unlock()
          cont.resume(throwing: CancellationError())
          return
        }
        if seconds <= 0 {
          lock.unlock()
          cont.resume()
          return
        }
        sleepers.append(Sleeper(id: id, deadline: current + seconds, continuation: cont))
        lock.unlock()
      }
    } onCancel: {
      let cancelled: Sleeper? = lock.withLock {
        guard let index = sleepers.firstIndex(where: { $0.id == id }) else { return nil }
        return sleepers.remove(at: index)
      }
      cancelled?.continuation.resume(throwing: CancellationError())
    }
  }

  /// Moves time forward by `seconds`, waking every sleeper whose deadline falls inside the
  /// interval, earliest first, letting woken tasks run before moving further.
  public func advance(by seconds: Double) async {
    let target = now + seconds
    while true {
      let due: [Sleeper] = lock.withLock {
        guard let earliest = sleepers.map(\.deadline).min(), earliest <= target else {
          return []
        }
        current = max(current, earliest)
        let ready = sleepers.filter { $0.deadline <= earliest }
        sleepers.removeAll { $0.deadline <= earliest }
        return ready.sorted { $0.id < $1.id }
      }
      if due.isEmpty { break }
      for sleeper in due { sleeper.continuation.resume() }
      await settle()
    }
    lock.withLock { current = max(current, target) }
    await settle()
  }

  /// Lets tasks woken by the clock run until they block again. Yielding is a heuristic, but a
  /// generous one: woken work in this project is short and never blocks on real I/O.
  public func settle() async {
    for _ in 0..<64 { await Task.yield() }
  }
}
