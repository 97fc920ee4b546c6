import Audit
import FailClosedSupport
import Foundation
import TestSupport
import Testing

@testable import Capture

/// Packet stamps (the wall clock's) on the steady timeline whatever is done to the wall clock:
/// the conversion alone, then a live capture across a real step of the machine's clock.
@Suite struct WallClockStepsTests {
  static let second: Int64 = 1_000_000_000
  /// The wall clock 1000 s ahead of the monotonic one when the process started.
  static let base = 1000 * second

  @Test func withoutAStepAStampIsItsOwnTime() {
    var steps = WallClockSteps(base: Self.base, offset: Self.base, monotonic: 10 * Self.second)
    steps.turn(offset: Self.base + 3_000_000, monotonic: 11 * Self.second)  // slewing: kept
    #expect(steps.steps.isEmpty)
    #expect(steps.steady(1010 * Self.second + 5) == 1010 * Self.second + 5 - 3_000_000)
  }

  /// Set back by 60 s at monotonic 20 s: a packet that arrived at 19.9 s (stamped with the old
  /// wall clock) and one at 20.05 s (the new), both read by the turn at 20.1 s, keep their
  /// order and their times; the canary is the raw stamp, a minute early.
  @Test func aStepBackMovesNeitherThePacketsBeforeItNorAfterIt() {
    var steps = WallClockSteps(base: Self.base, offset: Self.base, monotonic: 19 * Self.second)
    steps.turn(offset: Self.base - 60 * Self.second, monotonic: 20_100_000_000)
    #expect(steps.steps == [.init(monotonic: 20_100_000_000, nanoseconds: -60 * Self.second)])
    let early = Self.base + 19_900_000_000
    let late = Self.base - 60 * Self.second + 20_050_000_000
    #expect(steps.steady(early) == Self.base + 19_900_000_000)
    #expect(steps.steady(late) == Self.base + 20_050_000_000)
    #expect(late < early, "the raw stamps run backwards")
  }

  @Test func aStepForwardMovesNeitherThePacketsBeforeItNorAfterIt() {
    var steps = WallClockSteps(base: Self.base, offset: Self.base, monotonic: 19 * Self.second)
    steps.turn(offset: Self.base + 3600 * Self.second, monotonic: 20_100_000_000)
    let early = Self.base + 19_900_000_000
    let late = Self.base + 3600 * Self.second + 20_050_000_000
    #expect(steps.steady(early) == Self.base + 19_900_000_000)
    #expect(steps.steady(late) == Self.base + 20_050_000_000)
  }

  /// The machine's wall clock set back 5 s while a live capture runs (root: clock_settime,
  /// then forward again): the leak sent after the step is placed after the capture began, as
  /// the monotonic clock says, not 5 s before it (before the fix, where a run's window of the
  /// user's own choice could take it).
  @Test(.needsRoot(because: "sets the wall clock"))
  func aWallClockSetBackDuringALiveCaptureMovesNoPacket() throws {
    let namespace = try TestNamespace()
    defer { namespace.remove() }
    let capture = LiveCapture(
      .init(
        interface: "lo",
        policy: AuditPolicy(
          allowed: [(LiveCaptureTests.allowed, .orPort)], syncProbe: LiveCaptureTests.probe),
        prepareThread: { try namespace.enter() }))
    try capture.start()
    var stopped = false
    defer { if !stopped { _ = capture.stop() } }
    try namespace.shell("printf failclosed-sync-probe > /dev/udp/127.0.0.1/9")
    #expect(waitUntil(timeout: 5, every: 0.01) { capture.controlPacketsSeen > 0 })
    let before = MonotonicInstant.now.unixTime
    var back = false
    defer { if back { Self.stepWallClock(by: 5) } }
    try #require(Self.stepWallClock(by: -5) == 0, "clock_settime: \(SystemError("x").symbol)")
    back = true
    try namespace.shell("printf leak > /dev/udp/127.0.0.1/4444")
    #expect(waitUntil(timeout: 5, every: 0.01) { capture.leakPacketsSeen > 0 })
    Self.stepWallClock(by: 5)
    back = false
    let after = MonotonicInstant.now.unixTime
    let report = capture.stop()
    stopped = true
    let leak = try #require(report.leaks.first { $0.destination == "127.0.0.1:4444" })
    #expect(
      leak.firstTime >= before - 0.05 && leak.firstTime <= after + 0.05,
      "leak at \(leak.firstTime), capture window \(before)...\(after)")
  }

  /// Moves CLOCK_REALTIME by `seconds` (relative, so a step and its reverse cancel out).
  @discardableResult
  static func stepWallClock(by seconds: Int) -> Int32 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    now.tv_sec += seconds
    return clock_settime(CLOCK_REALTIME, &now)
  }
}
