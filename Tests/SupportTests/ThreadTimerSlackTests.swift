import FailClosedSupport
import Foundation
import Synchronization
import Testing

/// The event clock's loop sleeps with the finest timer slack and gives the thread its old
/// slack back.
@Suite struct ThreadTimerSlackTests {
  @Test func theSlackIsFinestUntilRestored() throws {
    _ = try #require(ThreadTimerSlack.current, "this kernel has no timerslack_ns")
    // On one thread from start to end: the file is the calling thread's.
    let (before, during, after) = Thread.runBlockingOnFreshThread {
      let before = ThreadTimerSlack.current
      let slack = ThreadTimerSlack.finest()
      let during = ThreadTimerSlack.current
      slack.restore()
      return (before, during, ThreadTimerSlack.current)
    }
    #expect(during == 1)
    #expect(before != 1)
    #expect(after == before)
  }
}

extension Thread {
  /// Runs `body` on a new thread and waits for its result (the slack is per thread).
  fileprivate static func runBlockingOnFreshThread<T: Sendable>(_ body: @escaping @Sendable () -> T)
    -> T
  {
    let result = Mutex<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
      result.withLock { $0 = body() }
      done.signal()
    }
    thread.start()
    done.wait()
    return result.withLock { $0! }
  }
}
