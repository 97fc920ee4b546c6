import FailClosedSupport
import Foundation
import Testing

@Suite struct ScaledClockTests {
  /// Two clocks made apart from the same epoch and scale (as the mock and the app make theirs
  /// from the runner's command line) read the same time: the later one does not start at 0.
  @Test func clocksFromOneEpochReadOneTime() {
    let epoch = MonotonicInstant.now
    let first = ScaledClock(factor: 25, epoch: epoch)
    MonotonicInstant.sleepForTest(0.02)
    let second = ScaledClock(factor: 25, epoch: epoch)
    let (a, b, c) = (first.now, second.now, first.now)
    // 20 ms real is 0.5 s at 25: a clock started at its own creation would read about 0.
    #expect(b >= 0.5)
    #expect(a <= b && b <= c)
    // A clock of its own (the old way) starts at 0 and lags by the time between them.
    #expect(ScaledClock(factor: 25).now < b)
  }

  @Test func timeBeforeTheEpochIsNegativeAndSleepsReachIt() async throws {
    let clock = ScaledClock(factor: 25, epoch: MonotonicInstant.now.advanced(bySeconds: 0.2))
    #expect(clock.now < 0)
    try await clock.sleep(seconds: -clock.now)
    #expect(clock.now >= 0)
    #expect(clock.realSeconds(25) == 1)
  }

  @Test func theCommandLineCarriesTheEpochAndScale() throws {
    let clock = ScaledClock(factor: 25, epoch: MonotonicInstant(nanoseconds: 123_456_789_012))
    #expect(clock.arguments == ["--time-scale", "25", "--epoch", "123456789012"])
    let epoch = try #require(MonotonicInstant(clock.arguments[3]))
    #expect(epoch == clock.epoch)
    #expect(MonotonicInstant("12.5") == nil)
    #expect(MonotonicInstant("-1") == nil)
  }

  @Test func instantsMeasureBothWays() {
    let a = MonotonicInstant(nanoseconds: 5_000_000_000)
    let b = a.advanced(bySeconds: 1.5)
    #expect(b.seconds(since: a) == 1.5)
    #expect(a.seconds(since: b) == -1.5)
    #expect(a.advanced(bySeconds: -10).nanoseconds == 0)
  }

  /// The epoch's Unix time (the capture's axis) is now's Unix time minus the time since it.
  @Test func theEpochsUnixTimeIsThePastInstants() {
    let epoch = MonotonicInstant.now.advanced(bySeconds: -2)
    let unix = epoch.unixTime
    let expected = Date().timeIntervalSince1970 - 2
    #expect(abs(unix - expected) < 0.5)
  }

  /// A blocking sleep on a scaled clock lasts the real share of its virtual seconds.
  @Test func blockingSleepsCountVirtualSeconds() {
    let clock = ScaledClock(factor: 100)
    let start = clock.now
    clock.sleepBlocking(seconds: 5)
    #expect(clock.now - start >= 5)
  }
}

extension MonotonicInstant {
  /// A real pause between two clock readings (what is measured is the pause itself).
  static func sleepForTest(_ seconds: Double) { SystemClock().sleepBlocking(seconds: seconds) }
}
