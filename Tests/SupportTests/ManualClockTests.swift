import FailClosedSupport
import Testing

@Suite struct ManualClockTests {
  @Test func sleepersWakeInDeadlineOrderAndOnlyWhenDue() async throws {
    let clock = ManualClock()
    let log = Log()
    let early = Task {
      try await clock.sleep(seconds: 1)
      await log.append("early@\(clock.now)")
    }
    let late = Task {
      try await clock.sleep(seconds: 75)
      await log.append("late@\(clock.now)")
    }
    while clock.sleeperCount < 2 { await Task.yield() }
    await clock.advance(by: 0.5)
    #expect(await log.entries.isEmpty)
    await clock.advance(by: 74.5)
    try await early.value
    try await late.value
    #expect(await log.entries == ["early@1.0", "late@75.0"])
    #expect(clock.now == 75)
  }

  @Test func aPollingLoopRunsOncePerIntervalAcrossALongAdvance() async throws {
    let clock = ManualClock()
    let log = Log()
    let poller = Task {
      for _ in 0..<75 {
        try await clock.sleep(seconds: 1)
        await log.append("\(clock.now)")
      }
    }
    // Each second once the poller sleeps again (or is done): one advance of 80 s relied on
    // `settle()`'s yields being enough for the poller to sleep again, and under
    // ThreadSanitizer on two busy threads once they were not, the poller slept past 80 s
    // and the test hung. Waiting for the sleeper is waiting for the event itself.
    for _ in 0..<80 {
      while clock.sleeperCount < 1, await log.entries.count < 75 { await Task.yield() }
      await clock.advance(by: 1)
    }
    try await poller.value
    #expect(await log.entries.count == 75)
    #expect(await log.entries.last == "75.0")
    #expect(clock.now == 80)
  }

  @Test func cancellingASleeperThrowsAndRemovesIt() async throws {
    let clock = ManualClock()
    let sleeper = Task { try await clock.sleep(seconds: 10) }
    while clock.sleeperCount < 1 { await Task.yield() }
    sleeper.cancel()
    await #expect(throws: CancellationError.self) { try await sleeper.value }
    #expect(clock.sleeperCount == 0)
  }

  @Test func scaledClockCompressesTime() async throws {
    let clock = ScaledClock(factor: 1000)
    let start = clock.now
    try await clock.sleep(seconds: 20)
    #expect(clock.now - start >= 20)
  }
}

actor Log {
  var entries: [String] = []
  func append(_ entry: String) { entries.append(entry) }
}

/// Timers and sleepers wait in one queue on the one simulated clock.
@Suite struct ManualClockTimerTests {
  final class Recorder: ManualClockTimer, @unchecked Sendable {
    let name: String
    let log: Log
    let clock: ManualClock
    init(_ name: String, _ log: Log, _ clock: ManualClock) {
      self.name = name
      self.log = log
      self.clock = clock
    }
    func fire() async { await log.append("\(name)@\(clock.now)") }
  }

  @Test func timersAndSleepersFireInDeadlineOrder() async throws {
    let clock = ManualClock()
    let log = Log()
    clock.addTimer(Recorder("timer-3", log, clock), after: 3)
    let removed = clock.addTimer(Recorder("removed", log, clock), after: 2)
    let sleeper = Task {
      try await clock.sleep(seconds: 2)
      await log.append("sleeper@\(clock.now)")
    }
    while clock.sleeperCount < 1 { await Task.yield() }
    clock.addTimer(Recorder("timer-1", log, clock), after: 1)
    clock.removeTimer(removed)
    #expect(clock.timerCount == 2)
    await clock.advance(by: 5)
    try await sleeper.value
    #expect(await log.entries == ["timer-1@1.0", "sleeper@2.0", "timer-3@3.0"])
    #expect(clock.timerCount == 0)
    #expect(clock.now == 5)
  }

  @Test func aSynchronousAdvanceTakesTimersOneByOne() async {
    let clock = ManualClock()
    let log = Log()
    clock.addTimer(Recorder("b", log, clock), after: 2)
    clock.addTimer(Recorder("a", log, clock), after: 1)
    clock.addTimer(Recorder("late", log, clock), after: 9)
    var taken: [String] = []
    while let timer = clock.takeNextTimer(through: 5) {
      taken.append(((timer as? Recorder)?.name ?? "?") + "@\(clock.now)")
    }
    clock.finishAdvance(at: 5)
    #expect(taken == ["a@1.0", "b@2.0"])
    #expect(clock.now == 5)
    #expect(clock.timerCount == 1)
  }
}
