import FailClosedSupport
import Foundation
import Synchronization
import TestSupport
import Testing

/// The event clock's page, and two mappings of one page (as two processes of a run map it): the
/// time only the runner moves is the other's time, it stands still in real time, and a sleeper
/// on one wakes when the other moves the time to its deadline, never before.
@Suite(.serialized) struct EventClockTests {
  static func temporaryPagePath() -> String {
    NSTemporaryDirectory() + "failclosed-clock-page-" + UUID().uuidString
  }

  @Test func thePageLayoutIsTheDocumentedOne() throws {
    let path = Self.temporaryPagePath()
    defer { unlink(path) }
    let page = try ClockPage.create(at: path)
    let bytes = try #require(FileManager.default.contents(atPath: path))
    #expect(bytes.count == ClockPage.size)
    #expect(Array(bytes.prefix(4)) == Array("FCCP".utf8))
    #expect(bytes[4] == 2 && bytes[5] == 0)
    // A new page's time starts before the run's time 0.
    #expect(page.nowNanoseconds == ClockPage.startNanoseconds)
    #expect(ClockPage.slotOffsets(0) == (64, 68, 72, 76, 80))
    #expect(ClockPage.slotOffsets(3) == (256, 260, 264, 268, 272))
    #expect(ClockPage.slotOffsets(ClockPage.slotCount - 1).deadline + 8 <= ClockPage.size)
    let slot = try page.claimSlot(pid: 4242)
    page.publishDeadline(0x0102_0304_0506_0708, slot: slot)
    page.addHold(1, slot: slot)
    #expect(page.advance(to: 7))
    let after = try #require(FileManager.default.contents(atPath: path))
    let base = ClockPage.slotOffsets(slot)
    #expect(Array(after[base.pid..<base.pid + 4]) == [0x92, 0x10, 0, 0])
    #expect(Array(after[base.deadline..<base.deadline + 8]) == [8, 7, 6, 5, 4, 3, 2, 1])
    #expect(after[base.holds] == 1)
    #expect(after[8] == 7 && after[16] == 1)
  }

  @Test func theTimeOnlyGoesForwardAndSlotsAreDistinct() throws {
    let path = Self.temporaryPagePath()
    defer { unlink(path) }
    let page = try ClockPage.create(at: path, start: 0)
    #expect(page.nowNanoseconds == 0 && page.advances == 0)
    #expect(page.advance(to: 5_000_000_000))
    #expect(!page.advance(to: 5_000_000_000))
    #expect(!page.advance(to: 3))
    #expect(page.advance(to: 7_500_000_000))
    #expect(page.nowNanoseconds == 7_500_000_000)
    #expect(page.advances == 2)
    let a = try page.claimSlot(pid: 11)
    let b = try page.claimSlot(pid: 12)
    #expect(a != b)
    #expect(page.slots.map(\.pid) == [11, 12])
    #expect(page.slots.allSatisfy { $0.deadline == nil && $0.holds == 0 })
    page.publishDeadline(9, slot: b)
    page.addHold(2, slot: a)
    page.addHold(-1, slot: a)
    #expect(page.slot(a) == ClockPage.Slot(pid: 11, holds: 1, deadline: nil))
    #expect(page.slot(b) == ClockPage.Slot(pid: 12, holds: 0, deadline: 9))
    for pid in 13..<Int32(11 + ClockPage.slotCount) { _ = try page.claimSlot(pid: pid) }
    #expect(throws: SystemError.self) { try page.claimSlot(pid: 99) }
    // A slot freed (its process ended) is free again, with no deadline or hold left.
    page.releaseSlot(a)
    #expect(!page.slots.map(\.pid).contains(11))
    #expect(try page.claimSlot(pid: 99) == a)
    #expect(page.slot(a) == ClockPage.Slot(pid: 99, holds: 0, deadline: nil))
  }

  @Test func aFileThatIsNotAPageIsRefusedNamingIt() throws {
    let path = Self.temporaryPagePath()
    defer { unlink(path) }
    try Data(repeating: 0, count: ClockPage.size).write(to: URL(fileURLWithPath: path))
    let error = try #require(throws: SystemError.self) { try ClockPage.open(at: path) }
    #expect("\(error)".contains(path))
    #expect(throws: SystemError.self) { try ClockPage.open(at: path + "-missing") }
    #expect(throws: SystemError.self) { try ClockPage.create(at: path) }
  }

  /// The time stands still in real time: only the runner moves it.
  @Test func theTimeStandsStillUntilTheRunnerMovesIt() throws {
    let path = Self.temporaryPagePath()
    defer { unlink(path) }
    let runner = try ClockPage.create(at: path, start: 2_000_000_000)
    let clock = try EventClock(factor: 25, epoch: .now, page: try ClockPage.open(at: path))
    let first = clock.now
    SystemClock().sleepBlocking(seconds: 0.05)  // real time passes; the run's does not
    #expect(clock.now == first && first == 2)
    #expect(runner.advance(to: 3_500_000_000))
    #expect(clock.now == 3.5)
  }

  /// Two mappings of one page, as the mock and the app map the runner's: a sleeper of 1,000
  /// virtual s on one publishes its deadline and wakes when the other moves the time there,
  /// and not when it moves short of it.
  @Test func aSleeperOnOneMappingWakesWhenTheOtherMovesTheTimeToItsDeadline() async throws {
    let path = Self.temporaryPagePath()
    defer { unlink(path) }
    let runner = try ClockPage.create(at: path, start: 0)
    let clock = try EventClock(factor: 1, epoch: .now, page: try ClockPage.open(at: path))
    let woke = Mutex<Double?>(nil)
    let sleeper = Task { () -> Double in
      try await clock.sleep(seconds: 1000)
      woke.withLock { $0 = clock.now }
      return clock.now
    }
    #expect(await waitUntil(timeout: 30, every: 0.001) { runner.slot(clock.slot).deadline != nil })
    let deadline = try #require(runner.slot(clock.slot).deadline)
    #expect(deadline == 1_000_000_000_000)
    runner.advance(to: deadline - 1)
    // Kicked or not, a waiter short of its deadline goes back to sleep.
    runner.kick(clock.slot)
    #expect(runner.slot(clock.slot).deadline == deadline)
    #expect(woke.withLock { $0 } == nil)
    runner.advance(to: deadline)
    let wokeAt = try await sleeper.value
    #expect(wokeAt == 1000)
    #expect(await waitUntil(timeout: 30, every: 0.001) { runner.slot(clock.slot).deadline == nil })
  }

  /// A sleep of less than a nanosecond is a nanosecond ahead, never now: the time stands still
  /// while the sleeper runs, so a deadline rounded down onto now would be due at once and a
  /// loop waiting for it would spin (the mock's wait for a plan step 1e-9 s ahead did).
  @Test func aTinySleepIsANanosecondAheadNeverNow() throws {
    let path = Self.temporaryPagePath()
    defer { unlink(path) }
    let runner = try ClockPage.create(at: path, start: 999_999_999)
    let clock = try EventClock(factor: 1, epoch: .now, page: try ClockPage.open(at: path))
    let done = DispatchSemaphore(value: 0)
    Thread {
      clock.sleepBlocking(seconds: 1e-10)
      done.signal()
    }.start()
    #expect(waitUntil(timeout: 30, every: 0.001) { runner.slot(clock.slot).deadline != nil })
    #expect(runner.slot(clock.slot).deadline == 1_000_000_000)
    #expect(done.wait(timeout: .now() + 0.05) == .timedOut)
    runner.advance(to: 1_000_000_000)
    #expect(done.wait(timeout: .now() + 30) == .success)
  }

  /// A pin holds the published deadline until it is taken back, even once the time has
  /// reached it: the runner never moves past a timer that has not run yet.
  @Test func aPinStandsUntilItIsTakenBack() async throws {
    let path = Self.temporaryPagePath()
    defer { unlink(path) }
    let runner = try ClockPage.create(at: path, start: 0)
    let clock = try EventClock(factor: 1, epoch: .now, page: try ClockPage.open(at: path))
    let pin = clock.pin(at: 2.5)
    #expect(pin.nanoseconds == 2_500_000_000)
    #expect(
      await waitUntil(timeout: 30, every: 0.001) {
        runner.slot(clock.slot).deadline == 2_500_000_000
      })
    runner.advance(to: 2_500_000_000)
    try await clock.sleep(untilNanoseconds: pin.nanoseconds)
    #expect(clock.now == 2.5)
    runner.kick(clock.slot)
    #expect(runner.slot(clock.slot).deadline == 2_500_000_000)
    clock.unpin(pin)
    clock.unpin(pin)
    #expect(await waitUntil(timeout: 30, every: 0.001) { runner.slot(clock.slot).deadline == nil })
  }

  /// A blocking sleeper (the mock's threads) wakes when the time reaches it too; one with a
  /// real cap wakes at the cap when the time stands, and its deadline no longer counts.
  @Test func blockingSleepersWakeAtAJumpOrTheirRealCap() throws {
    let path = Self.temporaryPagePath()
    defer { unlink(path) }
    let runner = try ClockPage.create(at: path, start: 0)
    let clock = try EventClock(factor: 1, epoch: .now, page: try ClockPage.open(at: path))
    let done = DispatchSemaphore(value: 0)
    Thread {
      clock.sleepBlocking(seconds: 500)
      done.signal()
    }.start()
    #expect(waitUntil(timeout: 30, every: 0.001) { runner.slot(clock.slot).deadline != nil })
    let deadline = try #require(runner.slot(clock.slot).deadline)
    runner.advance(to: deadline)
    #expect(done.wait(timeout: .now() + 30) == .success)
    #expect(clock.now >= 500)
    let real = SystemClock()
    clock.sleepBlocking(seconds: 10_000, realCap: 0.05)
    #expect(real.now >= 0.05 && real.now < 30)
  }

  /// A hold ends on the page it began on, though another clock was registered meanwhile (as
  /// tests of one process do): the first page's count comes back, the second's never drops.
  @Test func aHoldEndsOnThePageItBeganOn() throws {
    let firstPath = Self.temporaryPagePath()
    let secondPath = Self.temporaryPagePath()
    defer {
      unlink(firstPath)
      unlink(secondPath)
    }
    let firstRunner = try ClockPage.create(at: firstPath)
    let first = try EventClock(factor: 1, epoch: .now, page: try ClockPage.open(at: firstPath))
    let hold = RunClockHold.begin()
    #expect(firstRunner.slot(first.slot).holds >= 1)
    let secondRunner = try ClockPage.create(at: secondPath)
    let second = try EventClock(
      factor: 1, epoch: .now, page: try ClockPage.open(at: secondPath))
    RunClockHold.end(hold)
    // Other suites' connects may hold too while this runs (the registration is the process's).
    #expect(waitUntil(timeout: 30, every: 0.001) { firstRunner.slot(first.slot).holds == 0 })
    #expect(waitUntil(timeout: 30, every: 0.001) { secondRunner.slot(second.slot).holds == 0 })
  }

  /// A task asleep on the clock and cancelled throws at once, long before its deadline.
  @Test(.timeLimit(.minutes(1))) func cancellingASleeperThrows() async throws {
    let path = Self.temporaryPagePath()
    defer { unlink(path) }
    let runner = try ClockPage.create(at: path)
    let clock = try EventClock(factor: 1, epoch: .now, page: try ClockPage.open(at: path))
    let sleeper = Task { try await clock.sleep(seconds: 10_000) }
    #expect(await waitUntil(timeout: 30, every: 0.001) { runner.slot(clock.slot).deadline != nil })
    sleeper.cancel()
    await #expect(throws: CancellationError.self) { try await sleeper.value }
  }

  /// A hold is counted in the process's slot while its body runs, and only then.
  @Test func holdsCountInTheSlotWhileTheyRun() throws {
    let path = Self.temporaryPagePath()
    defer { unlink(path) }
    let runner = try ClockPage.create(at: path)
    let clock = try EventClock(factor: 1, epoch: .now, page: try ClockPage.open(at: path))
    #expect(RunClockHold.isActive)
    // Other suites' connects may hold too while this runs (the registration is the process's).
    let inside = RunClockHold.during { runner.slot(clock.slot).holds }
    #expect(inside >= 1)
    #expect(waitUntil(timeout: 30, every: 0.001) { runner.slot(clock.slot).holds == 0 })
  }

  /// At equal instants the Tor side goes first: the page tells the lowest order due, and
  /// wakes only the processes of the order it is asked to.
  @Test func theTorSideIsDueBeforeTheAppAtEqualInstants() throws {
    let path = Self.temporaryPagePath()
    defer { unlink(path) }
    let page = try ClockPage.create(at: path, start: 0)
    let app = try page.claimSlot(pid: 21)
    let mock = try page.claimSlot(pid: 22, order: ClockPage.Order.torSide)
    #expect(page.slot(mock).order == ClockPage.Order.torSide)
    #expect(page.slot(app).order == ClockPage.Order.app)
    page.publishDeadline(5_000_000_000, slot: app)
    page.publishDeadline(5_000_000_000, slot: mock)
    #expect(page.lowestDueOrder == nil)
    page.advance(to: 5_000_000_000)
    #expect(page.lowestDueOrder == ClockPage.Order.torSide)
    let appKick = page.kickValue(app)
    let mockKick = page.kickValue(mock)
    page.kickDue(order: ClockPage.Order.torSide)
    #expect(page.kickValue(mock) != mockKick)
    #expect(page.kickValue(app) == appKick)
    // The mock's step done, its next deadline later: the app is the lowest order due.
    page.publishDeadline(9_000_000_000, slot: mock)
    #expect(page.lowestDueOrder == ClockPage.Order.app)
    page.kickDue(order: ClockPage.Order.app)
    #expect(page.kickValue(app) != appKick)
    // A freed slot is an app's again for its next process.
    page.releaseSlot(mock)
    #expect(try page.claimSlot(pid: 23) == mock)
    #expect(page.slot(mock).order == ClockPage.Order.app)
  }
}
