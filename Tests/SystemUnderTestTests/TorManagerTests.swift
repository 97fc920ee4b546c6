import FailClosedSupport
import Foundation
import Testing

@testable import SystemUnderTest

@Suite(.serialized) @AppActor struct TorManagerTests {
  @Test func startIfNeededNeedsAutoStartAndForeground() {
    let rig = TorRig()
    rig.tor.startIfNeeded()
    rig.tor.setAutoStartAllowed(true)
    rig.tor.setAppForeground(false)
    rig.tor.startIfNeeded()
    rig.advance(10)
    #expect(rig.arti.starts == 0)
    #expect(rig.notifications("TorWillStart") == 0)
    rig.tor.setAppForeground(true)
    rig.tor.startIfNeeded()
    #expect(rig.tor.isStarting)
    #expect(rig.notifications("TorWillStart") == 1)
  }

  @Test func readyMeansSocksReachableAndProgress100() {
    let rig = TorRig(bootstrapSeconds: 5)
    rig.start()
    rig.advance(4)
    #expect(!rig.tor.isReady)
    #expect(rig.tor.bootstrapProgress == 0)
    #expect(rig.tor.bootstrapSummary == "Bootstrapping...")
    rig.advance(2)
    #expect(rig.tor.isReady)
    #expect(rig.tor.bootstrapProgress == 100)
    #expect(rig.tor.bootstrapSummary == "Ready")
    #expect(!rig.tor.isStarting)
    #expect(rig.notifications("TorDidBecomeReady") == 1)
    #expect(rig.tor.networkPermitted)
  }

  @Test func stallIsReportedOnceAtTheSeventyFiveSecondDeadline() {
    let rig = TorRig(bootstrapSeconds: nil)
    rig.start()
    rig.advance(74)
    #expect(!rig.tor.bootstrapDidStall)
    #expect(rig.tor.isStarting)
    rig.advance(2)
    #expect(rig.tor.bootstrapDidStall)
    #expect(!rig.tor.isStarting)
    #expect(rig.notifications("TorBootstrapDidStall") == 1)
    rig.advance(300)
    #expect(rig.notifications("TorBootstrapDidStall") == 1)
    #expect(!rig.tor.isReady)
    // The 60 s probe gave up too.
    #expect(rig.tor.lastError == TorManager.Failure(code: -14, message: "SOCKS not reachable"))
  }

  /// TorManager.swift, waitForSocksReady and probeSocksOnce: against a closed port each try
  /// ends on its 1 s timer (NWConnection's `.waiting` is ignored), then a 250 ms pause, while
  /// t < 60: tries at 0, 1.25, 2.5, ... 58.75, 48 in all, none after the deadline.
  @Test func socksProbeTriesEveryOneAndAQuarterSecondsForSixtySeconds() {
    let rig = TorRig(bootstrapSeconds: nil)
    rig.start()
    rig.advance(120)
    let start = rig.arti.probeTimes.first ?? -1
    let offsets = rig.arti.probeTimes.map { (($0 - start) * 1000).rounded() / 1000 }
    #expect(offsets == (0..<48).map { Double($0) * 1.25 })
    #expect(rig.tor.lastError == TorManager.Failure(code: -14, message: "SOCKS not reachable"))
  }

  @Test func weakness1BootstrapBetweenSixtyAndSeventyFiveSecondsNeverReadyInBitchat() {
    let rig = TorRig(bootstrapSeconds: 65, profile: .bitchat)
    rig.start()
    rig.advance(120)
    #expect(rig.tor.bootstrapProgress == 100)
    #expect(!rig.tor.isReady)
    #expect(!rig.tor.bootstrapDidStall)
    #expect(!rig.tor.isStarting)
    #expect(rig.notifications("TorDidBecomeReady") == 0)
    #expect(rig.notifications("TorBootstrapDidStall") == 0)
    #expect(rig.tor.lastError?.code == -14)
  }

  @Test func weakness1ClosedInHardened() {
    let rig = TorRig(bootstrapSeconds: 65, profile: .hardened)
    rig.start()
    rig.advance(120)
    #expect(rig.tor.isReady)
    #expect(rig.notifications("TorDidBecomeReady") == 1)
  }

  @Test func shutdownFencesTheOldPollLoop() {
    let rig = TorRig(bootstrapSeconds: nil)
    rig.start()
    let generation = rig.tor.bootstrapGeneration
    rig.advance(30)
    rig.tor.shutdownCompletely()
    #expect(rig.tor.bootstrapGeneration == generation + 1)
    rig.advance(200)
    #expect(rig.notifications("TorBootstrapDidStall") == 0)
    #expect(!rig.tor.bootstrapDidStall)
    #expect(rig.arti.stops == 1)
    #expect(rig.tor.bootstrapProgress == 0)
    #expect(rig.tor.bootstrapSummary == "")
  }

  @Test func dormancyFencesTheLoopAndDoesNotStopArti() {
    let rig = TorRig(bootstrapSeconds: nil)
    rig.start()
    rig.advance(10)
    rig.tor.setAppForeground(false)
    rig.tor.goDormantOnBackground()
    rig.advance(200)
    #expect(rig.arti.stops == 0)
    #expect(!rig.tor.isStarting)
    #expect(rig.notifications("TorBootstrapDidStall") == 0)
  }

  @Test func foregroundRestartsAfterDormancy() {
    let rig = TorRig(bootstrapSeconds: 5)
    rig.start()
    rig.advance(6)
    #expect(rig.tor.isReady)
    rig.tor.setAppForeground(false)
    rig.tor.goDormantOnBackground()
    rig.advance(1)
    #expect(!rig.tor.isReady)
    rig.tor.setAppForeground(true)
    rig.tor.ensureRunningOnForeground()
    rig.advance(1)
    #expect(rig.notifications("TorWillRestart") == 1)
    #expect(rig.arti.stops == 1)
    #expect(rig.arti.starts == 2)
    rig.advance(6)
    #expect(rig.tor.isReady)
    #expect(rig.notifications("TorDidBecomeReady") == 2)
  }

  @Test func ensureRunningIsANoOpWhenReadyStartingOrNotAllowed() {
    let rig = TorRig(bootstrapSeconds: 5)
    rig.tor.ensureRunningOnForeground()
    rig.advance(1)
    #expect(rig.notifications("TorWillRestart") == 0)
    rig.start()
    rig.tor.ensureRunningOnForeground()  // starting
    rig.advance(6)
    rig.tor.ensureRunningOnForeground()  // ready
    rig.advance(1)
    #expect(rig.notifications("TorWillRestart") == 0)
    #expect(rig.arti.stops == 0)
  }

  @Test func startDuringShutdownIsHonouredAfterwards() {
    let rig = TorRig(bootstrapSeconds: 5)
    rig.start()
    rig.advance(6)
    rig.tor.shutdownCompletely()
    rig.tor.startIfNeeded()
    #expect(rig.arti.starts == 1)
    rig.advance(1)
    #expect(rig.arti.starts == 2)
    #expect(rig.notifications("TorWillStart") == 2)
    rig.advance(6)
    #expect(rig.tor.isReady)
  }

  @Test func awaitReadyPollsEvery200msUntilTheDeadline() {
    let rig = TorRig(bootstrapSeconds: nil)
    rig.tor.setAutoStartAllowed(true)
    var result: (Bool, Double)?
    rig.tor.awaitReady { ready in result = (ready, rig.clock.now) }
    // awaitReady started Tor itself (foreground).
    #expect(rig.arti.starts == 1)
    rig.advance(74.9)
    #expect(result == nil)
    rig.advance(1)
    #expect(result?.0 == false)
    #expect(result.map { $0.1 >= 75 && $0.1 < 75.2 } == true)

    let rig2 = TorRig(bootstrapSeconds: 3)
    rig2.tor.setAutoStartAllowed(true)
    var ready2: Bool?
    rig2.tor.awaitReady(timeout: 10) { ready2 = $0 }
    rig2.advance(2.9)
    #expect(ready2 == nil)
    // Bootstrapped at 3 s, but the SOCKS probe's tries run at 0, 1.25, 2.5 and 3.75 s (each
    // failed try ends on its 1 s timer): ready at the 3.75 s try, seen by the next 200 ms poll.
    rig2.advance(0.8)
    #expect(ready2 == nil)
    rig2.advance(0.3)
    #expect(ready2 == true)
  }

  @Test func awaitReadyAsyncReturnsWhenReady() async {
    let rig = TorRig(bootstrapSeconds: 1)
    rig.tor.setAutoStartAllowed(true)
    rig.start()
    rig.advance(2)
    #expect(await rig.tor.awaitReady())
  }

  @Test func pathChangeGuards() {
    let rig = TorRig(bootstrapSeconds: nil)
    rig.tor.pathDidChange()  // before the first start: no monitor yet
    rig.start()
    rig.advance(10)
    rig.tor.pathDidChange()  // < 15 s after start
    rig.advance(1)
    #expect(rig.notifications("TorWillRestart") == 0)
    rig.advance(70)  // stalled: no longer starting
    rig.tor.pathDidChange()
    rig.advance(1)
    #expect(rig.notifications("TorWillRestart") == 1)
    rig.advance(30)  // the new attempt is starting: skipped
    rig.tor.pathDidChange()
    rig.advance(1)
    #expect(rig.notifications("TorWillRestart") == 1)
  }

  @Test func pathChangeWithinThreeSecondsOfARestartIsSkipped() {
    let rig = TorRig(bootstrapSeconds: nil)
    rig.start()
    rig.advance(80)  // stalled
    rig.tor.pathDidChange()
    rig.advance(0.5)  // restart began at ~80 s; its start is in flight
    #expect(rig.notifications("TorWillRestart") == 1)
    // A background trip clears isStarting; the 3 s guard still holds.
    rig.tor.goDormantOnBackground()
    rig.advance(0.5)
    rig.tor.pathDidChange()
    rig.advance(0.5)
    #expect(rig.notifications("TorWillRestart") == 1)
  }

  @Test func torIsEnforcedWithoutTheDevFlag() {
    #expect(TorManager.torEnforced)
  }

  /// TorManager.swift startArti: without a data directory (dataDirectoryURL() nil:
  /// Application Support cannot be had) the start ends at once with NSError code -1, "No data
  /// directory", isStarting false and Arti never started (issue 14, item 10).
  @Test func noDataDirectoryEndsTheStartWithErrorMinusOne() throws {
    let blocker = NSTemporaryDirectory() + "failclosed-not-a-dir-\(UUID().uuidString)"
    try Data("file".utf8).write(to: URL(fileURLWithPath: blocker))
    defer { try? FileManager.default.removeItem(atPath: blocker) }
    let clock = ManualClock()
    let log = AppEventLog(clock: clock)
    let arti = SimulatedArti(scheduler: clock, bootstrapSeconds: 5)
    let tor = TorManager(
      backend: arti, probe: arti, scheduler: clock, bus: NotificationBus(log: log), log: log,
      dataDirectory: blocker + "/bitchat/arti")
    tor.setAutoStartAllowed(true)
    tor.startIfNeeded()
    clock.advanceTimers(by: 10)
    #expect(tor.lastError?.code == -1)
    #expect(tor.lastError?.message == "No data directory")
    #expect(!tor.isStarting)
    #expect(arti.starts == 0)
    #expect(!tor.isReady)
  }
}
