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
    while clock.sleeperCount < 1 { await Task.yield() }
    await clock.advance(by: 80)
    try await poller.value
    #expect(await log.entries.count == 75)
    #expect(await log.entries.last == "75.0")
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
