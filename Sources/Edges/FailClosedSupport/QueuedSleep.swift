import Foundation

/// How the clocks that keep a queue of sleepers (``ManualClock``, ``EventClock``) suspend
/// a task: under the clock's lock, a task already cancelled throws and a sleep of no time
/// returns at once; otherwise `enqueue` queues the continuation (still under the lock) for the
/// clock to resume. A cancellation takes it back with `dequeue` (nil once the clock resumed
/// it) and throws into it.
enum QueuedSleep {
  static func wait(
    seconds: Double, lock: NSLock, enqueue: (CheckedContinuation<Void, any Error>) -> Void,
    dequeue: @escaping @Sendable () -> CheckedContinuation<Void, any Error>?
  ) async throws {
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
        enqueue(cont)
        lock.unlock()
      }
    } onCancel: {
      dequeue()?.resume(throwing: CancellationError())
    }
  }
}
