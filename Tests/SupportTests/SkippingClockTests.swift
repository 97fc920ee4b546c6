import FailClosedSupport
import Foundation
import Testing

/// The skipping clock's page and arithmetic, and two mappings of one page (as two processes of
/// a run map it): one sees the other's skip, and a sleeper on one wakes at a jump made on the
/// other, long before the real time it would otherwise take.
@Suite(.serialized) struct SkippingClockTests {
  static func temporaryPagePath() -> String {
    NSTemporaryDirectory() + "failclosed-clock-page-" + UUID().uuidString
  }

  /// Waits (bounded, real time) for `condition`: the event itself, not a guessed delay.
  static func waitFor(_ seconds: Double = 30, _ condition: () -> Bool) -> Bool {
    let clock = SystemClock()
    while clock.now < seconds {
      if condition() { return true }
      usleep(1000)
    }
    return condition()
  }

  @Test func thePageLayoutIsTheDocumentedOne() throws {
    let path = Self.temporaryPagePath()
    defer { unlink(path) }
    let page = try ClockPage.create(at: path)
    let bytes = try #require(FileManager.default.contents(atPath: path))
    #expect(bytes.count == ClockPage.size)
    #expect(Array(bytes.prefix(4)) == Array("FCCP".utf8))
    #expect(bytes[4] == 1 && bytes[5] == 0)
    #expect(ClockPage.slotOffsets(0) == (64, 68, 72, 80))
    #expect(ClockPage.slotOffsets(3) == (256, 260, 264, 272))
    #expect(ClockPage.slotOffsets(ClockPage.slotCount - 1).deadline + 8 <= ClockPage.size)
    let slot = try page.claimSlot(pid: 4242)
    page.publishDeadline(0x0102_0304_0506_0708, slot: slot)
    page.addHold(1, slot: slot)
    page.skip(nanoseconds: 7)
    let after = try #require(FileManager.default.contents(atPath: path))
    let base = ClockPage.slotOffsets(slot)
    #expect(Array(after[base.pid..<base.pid + 4]) == [0x92, 0x10, 0, 0])
    #expect(Array(after[base.deadline..<base.deadline + 8]) == [8, 7, 6, 5, 4, 3, 2, 1])
    #expect(after[base.holds] == 1)
    #expect(after[8] == 7 && after[16] == 1)
  }

  @Test func skipsAddUpAndSlotsAreDistinct() throws {
    let path = Self.temporaryPagePath()
    defer { unlink(path) }
    let page = try ClockPage.create(at: path)
    #expect(page.skippedNanoseconds == 0 && page.jumps == 0)
    page.skip(nanoseconds: 5_000_000_000)
    page.skip(nanoseconds: 0)
    page.skip(nanoseconds: -3)
    page.skip(nanoseconds: 2_500_000_000)
    #expect(page.skippedNanoseconds == 7_500_000_000)
    #expect(page.jumps == 2)
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

  @Test func virtualTimeIsScaledRealTimePlusWhatWasSkipped() {
    let epoch: UInt64 = 1_000_000_000
    #expect(
      SkippingClock.virtualNanoseconds(
        monotonic: epoch + 2_000_000_000, epoch: epoch, factor: 25, skipped: 3_000_000_000)
        == 53_000_000_000)
    #expect(
      SkippingClock.virtualNanoseconds(
        monotonic: epoch - 1_000_000, epoch: epoch, factor: 25, skipped: 0) == -25_000_000)
    #expect(SkippingClock.realNanoseconds(until: 1_000, from: 2_000, factor: 25) == 0)
    #expect(
      SkippingClock.realNanoseconds(until: 2_000_000_000, from: 1_000_000_000, factor: 25)
        == 40_000_000)
  }

  /// Two mappings of one page, as the mock and the app map the runner's: a skip on one is the
  /// other's time; a sleeper of 1,000 virtual s at scale 1 on one wakes when the other jumps
  /// to its published deadline, and the jump lands on the deadline, not past it.
  @Test func aSleeperOnOneMappingWakesAtAJumpMadeOnTheOther() async throws {
    let path = Self.temporaryPagePath()
    defer { unlink(path) }
    let runner = try ClockPage.create(at: path)
    let epoch = MonotonicInstant.now
    let clock = try SkippingClock(factor: 1, epoch: epoch, page: try ClockPage.open(at: path))
    let plain = ScaledClock(factor: 1, epoch: epoch)
    #expect(abs(clock.now - plain.now) < 0.5)
    let sleeper = Task { () -> Double in
      try await clock.sleep(seconds: 1000)
      return clock.now
    }
    let published = Self.waitFor { runner.slot(clock.slot).deadline != nil }
    #expect(published)
    let deadline = try #require(runner.slot(clock.slot).deadline)
    let now = SkippingClock.virtualNanoseconds(
      monotonic: MonotonicInstant.now.nanoseconds, epoch: epoch.nanoseconds, factor: 1,
      skipped: runner.skippedNanoseconds)
    runner.skip(nanoseconds: deadline - now)
    let woke = try await sleeper.value
    #expect(woke >= 1000 && woke < 1010)
    #expect(clock.now - plain.now >= 990)
    #expect(runner.slot(clock.slot).deadline == nil)
  }

  /// A blocking sleeper (the mock's threads) wakes at a jump too; one with a real cap wakes at
  /// the cap when nothing jumps, and its deadline no longer counts.
  @Test func blockingSleepersWakeAtAJumpOrTheirRealCap() throws {
    let path = Self.temporaryPagePath()
    defer { unlink(path) }
    let runner = try ClockPage.create(at: path)
    let clock = try SkippingClock(factor: 1, epoch: .now, page: try ClockPage.open(at: path))
    let done = DispatchSemaphore(value: 0)
    Thread {
      clock.sleepBlocking(seconds: 500)
      done.signal()
    }.start()
    #expect(Self.waitFor { runner.slot(clock.slot).deadline != nil })
    let deadline = try #require(runner.slot(clock.slot).deadline)
    runner.skip(nanoseconds: deadline - clock.nowNanoseconds)
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
    let first = try SkippingClock(factor: 1, epoch: .now, page: try ClockPage.open(at: firstPath))
    let hold = RunClockHold.begin()
    #expect(firstRunner.slot(first.slot).holds >= 1)
    let secondRunner = try ClockPage.create(at: secondPath)
    let second = try SkippingClock(
      factor: 1, epoch: .now, page: try ClockPage.open(at: secondPath))
    RunClockHold.end(hold)
    // Other suites' connects may hold too while this runs (the registration is the process's).
    #expect(Self.waitFor { firstRunner.slot(first.slot).holds == 0 })
    #expect(Self.waitFor { secondRunner.slot(second.slot).holds == 0 })
  }

  /// A task asleep on the clock and cancelled throws at once, long before its deadline.
  @Test(.timeLimit(.minutes(1))) func cancellingASleeperThrows() async throws {
    let path = Self.temporaryPagePath()
    defer { unlink(path) }
    let runner = try ClockPage.create(at: path)
    let clock = try SkippingClock(factor: 1, epoch: .now, page: try ClockPage.open(at: path))
    let sleeper = Task { try await clock.sleep(seconds: 10_000) }
    #expect(Self.waitFor { runner.slot(clock.slot).deadline != nil })
    sleeper.cancel()
    await #expect(throws: CancellationError.self) { try await sleeper.value }
  }

  /// A hold is counted in the process's slot while its body runs, and only then.
  @Test func holdsCountInTheSlotWhileTheyRun() throws {
    let path = Self.temporaryPagePath()
    defer { unlink(path) }
    let runner = try ClockPage.create(at: path)
    let clock = try SkippingClock(factor: 1, epoch: .now, page: try ClockPage.open(at: path))
    #expect(RunClockHold.isActive)
    // Other suites' connects may hold too while this runs (the registration is the process's).
    let inside = RunClockHold.during { runner.slot(clock.slot).holds }
    #expect(inside >= 1)
    #expect(Self.waitFor { runner.slot(clock.slot).holds == 0 })
  }
}
