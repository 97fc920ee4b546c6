import FailClosedSupport
import Testing

/// A duration from outside (a bootstrap plan of healthy:1e300) used to trap converting to
/// nanoseconds in SystemClock.sleep; it now waits (at most a year) and can be cancelled.
@Suite struct ClockLimitTests {
  @Test func aHugeSleepIsCancellableNotATrap() async {
    let task = Task { try await SystemClock().sleep(seconds: 1e300) }
    task.cancel()
    let result = await task.result
    #expect(throws: CancellationError.self) { try result.get() }
  }
}
