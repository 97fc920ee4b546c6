import Foundation
import Synchronization

/// How a thread serving an ``EventPoll`` is stopped from another: ``request()`` marks the stop
/// and wakes its wait, the loop checks ``isRequested`` between waits and calls ``loopEnded()``
/// when it returns, and ``waitForEnd()`` waits for that, then closes the poll: there, not on
/// the loop, because ``request()`` may still be writing to the waker (a closed descriptor
/// number can be reused by then).
public final class EventLoopStop: @unchecked Sendable {
  private let poll: EventPoll
  /// Read by the loop at every turn: an atomic, not a lock.
  private let requested = Atomic(false)
  private let ended = DispatchSemaphore(value: 0)

  public init(_ poll: EventPoll) { self.poll = poll }

  public var isRequested: Bool { requested.load(ordering: .acquiring) }

  public func request() {
    requested.store(true, ordering: .releasing)
    poll.wake()
  }

  /// Called once by the loop's thread as it returns.
  public func loopEnded() { ended.signal() }

  public func waitForEnd() {
    ended.wait()
    poll.close()
  }
}
