import FailClosedSupport
import Foundation
import Testing

@Suite struct EventPollTests {
  @Test func reportsADescriptorsTokenOnceItIsReadable() throws {
    let poll = try EventPoll()
    let (read, write) = try FileDescriptor.pipe()
    try poll.add(read.rawValue, .readable, token: 7)
    var seen: [(UInt64, EventPoll.Events)] = []
    try poll.wait(timeout: 0) { seen.append(($0, $1)) }
    #expect(seen.isEmpty, "nothing written yet")
    try write.write([1])
    try poll.wait(timeout: 5) { seen.append(($0, $1)) }
    #expect(seen.count == 1)
    #expect(seen.first?.0 == 7)
    #expect(seen.first?.1.contains(.readable) == true)
    poll.remove(read.rawValue)
    seen = []
    try poll.wait(timeout: 0) { seen.append(($0, $1)) }
    #expect(seen.isEmpty, "removed")
  }

  @Test func edgeTriggeredReportsEachChangeOnce() throws {
    let poll = try EventPoll()
    let (read, write) = try FileDescriptor.pipe()
    try poll.add(read.rawValue, [.readable, .edgeTriggered], token: 1)
    try write.write([1])
    var count = 0
    try poll.wait(timeout: 5) { _, _ in count += 1 }
    try poll.wait(timeout: 0) { _, _ in count += 1 }
    #expect(count == 1, "unread bytes are not reported again")
    try write.write([2])
    try poll.wait(timeout: 5) { _, _ in count += 1 }
    #expect(count == 2, "new bytes are")
  }

  @Test func wakeEndsAWaitFromAnotherThread() throws {
    let poll = try EventPoll()
    let woken = DispatchSemaphore(value: 0)
    BlockingIO.detach("test.poll.wait") {
      var reported = -1
      reported = (try? poll.wait(timeout: nil) { _, _ in }) ?? -1
      if reported == 0 { woken.signal() }
    }
    poll.wake()
    #expect(woken.wait(timeout: .now() + 10) == .success, "the wait ended with nothing reported")
  }

  /// A loop waiting with no deadline ends once a stop is requested, and the stopper learns it
  /// (without the wake the wait never ends, and the time limit fails the test).
  @Test(.timeLimit(.minutes(1)))
  func aRequestedStopEndsALoopWaitingWithoutDeadline() throws {
    let poll = try EventPoll()
    let stop = EventLoopStop(poll)
    BlockingIO.detach("test.poll.loop") {
      defer { stop.loopEnded() }
      while !stop.isRequested {
        _ = try? poll.wait(timeout: nil) { _, _ in }
      }
    }
    #expect(!stop.isRequested)
    stop.request()
    #expect(stop.isRequested)
    stop.waitForEnd()
  }
}
