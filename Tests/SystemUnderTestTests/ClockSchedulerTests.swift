import FailClosedSupport
import Foundation
import Testing

@testable import SystemUnderTest

@Suite @AppActor struct ClockSchedulerTests {
  /// A clock whose every sleep ends `lateness` seconds after it should: a loaded machine's
  /// wake-up, as a scaled clock multiplies it.
  final class LateClock: HarnessClock, @unchecked Sendable {
    private let lock = NSLock()
    private var current = 0.0
    let lateness: Double
    init(lateness: Double) { self.lateness = lateness }
    var now: Double { lock.withLock { current } }
    func sleep(seconds: Double) async throws {
      lock.withLock { current += max(0, seconds) + lateness }
      await Task.yield()
    }
  }

  /// bitchat's bootstrap poll, a 1 s timer set again from its own action, 75 times: each fires
  /// one wake-up late, and the lateness does not add up (as on the ManualClock, where an
  /// action runs at its deadline). Without the anchoring the 75th fires at 82.5.
  @Test func aTimerSetByAnActionCountsFromThatActionsDeadline() async {
    let clock = LateClock(lateness: 0.1)
    let poller = Poller(scheduler: ClockScheduler(clock: clock), clock: clock, count: 75)
    let fired = await poller.run()
    #expect(fired.count == 75)
    #expect(abs((fired.last ?? 0) - 75.1) < 1e-9, "75th poll at \(fired.last ?? 0)")
  }

  /// Sets a 1 s timer again from its own action until it has fired `count` times.
  @AppActor final class Poller {
    let scheduler: ClockScheduler
    let clock: LateClock
    let count: Int
    var fired: [Double] = []
    var done: CheckedContinuation<[Double], Never>?

    init(scheduler: ClockScheduler, clock: LateClock, count: Int) {
      self.scheduler = scheduler
      self.clock = clock
      self.count = count
    }

    func run() async -> [Double] {
      await withCheckedContinuation { continuation in
        done = continuation
        scheduler.schedule(after: 1) { self.poll() }
      }
    }

    func poll() {
      fired.append(clock.now)
      if fired.count == count {
        done?.resume(returning: fired)
        return
      }
      scheduler.schedule(after: 1) { self.poll() }
    }
  }

  /// A wake-up later than the interval itself: the missed turn is skipped, not run at once
  /// (no burst of catching up), and the next counts from the late moment.
  @Test func aTurnMissedByMoreThanItsIntervalIsSkipped() async {
    let clock = LateClock(lateness: 1.5)
    let poller = Poller(scheduler: ClockScheduler(clock: clock), clock: clock, count: 3)
    let fired = await poller.run()
    #expect(fired == [2.5, 5.0, 7.5])
  }

  /// A timer that runs later than the report threshold is told (its deadline and when it ran),
  /// one within it is not: the judge reads the first as the harness's lateness.
  @Test func aTimerLaterThanTheThresholdIsReported() async {
    for (lateness, reported) in [(0.7, true), (0.3, false)] {
      let clock = LateClock(lateness: lateness)
      let seen = LateTimes()
      let scheduler = ClockScheduler(clock: clock, lateReport: 0.5) { deadline, ran in
        seen.times.append((deadline, ran))
      }
      let _: Double = await withCheckedContinuation { done in
        scheduler.schedule(after: 2) { done.resume(returning: clock.now) }
      }
      #expect(seen.times.count == (reported ? 1 : 0), "lateness \(lateness)")
      if reported {
        #expect(seen.times.first?.0 == 2)
        #expect(abs((seen.times.first?.1 ?? 0) - 2.7) < 1e-9)
      }
    }
  }

  @AppActor final class LateTimes {
    var times: [(Double, Double)] = []
  }

  /// A timer set outside any action counts from the clock's time then.
  @Test func aTimerSetOutsideAnActionCountsFromNow() async {
    let clock = LateClock(lateness: 0.1)
    let scheduler = ClockScheduler(clock: clock)
    try? await clock.sleep(seconds: 5)
    let firedAt: Double = await withCheckedContinuation { done in
      scheduler.schedule(after: 2) { done.resume(returning: clock.now) }
    }
    #expect(abs(firedAt - 7.2) < 1e-9)
  }
}
