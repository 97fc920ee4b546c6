import FailClosedSupport
import Foundation
import Synchronization
import Testing

@testable import Lanes
@testable import Scenarios

/// The skipping clock with real processes: the pipeline's skipper against a busy process (must
/// not jump), an idle one in a namespace of its own (jumps to the deadline, not past it), the
/// mock Tor in another process waking at jumps, and the 75 s stall on the mock lane.
@Suite(.serialized) struct SkippingClockRunTests {
  static func waitFor(_ seconds: Double = 30, _ condition: () -> Bool) -> Bool {
    let clock = SystemClock()
    while clock.now < seconds {
      if condition() { return true }
      usleep(1000)
    }
    return condition()
  }

  static func spawn(_ arguments: [String]) throws -> pid_t {
    let actions = FileActions()
    actions.open("/dev/null", to: 1, flags: O_WRONLY)
    actions.open("/dev/null", to: 2, flags: O_WRONLY)
    return try Spawner.spawn(arguments, actions: actions)
  }

  static func stop(_ pid: pid_t) {
    kill(pid, SIGKILL)
    _ = Spawner.wait(pid)
  }

  static func pagePath() -> String {
    NSTemporaryDirectory() + "failclosed-clock-page-" + UUID().uuidString
  }

  /// Canary and positive control for the skipper's `/proc` samples: a process that spins must
  /// block every jump; a process asleep in a network namespace of its own (nothing on its
  /// links) lets the skipper jump to the published deadline exactly; a hold blocks it again.
  @Test(.enabled(if: Privilege.rootSkipReason == nil, "needs root (unshare -n)"))
  func aBusyProcessBlocksTheJumpAndAnIdleOneJumpsToItsDeadline() throws {
    let path = Self.pagePath()
    defer { unlink(path) }
    let page = try ClockPage.create(at: path)
    let epoch = MonotonicInstant.now
    let skipper = IdleSkipper(page: page, factor: 25, epoch: epoch)

    let busy = try Self.spawn(["/usr/bin/unshare", "-n", "/bin/sh", "-c", "while :; do :; done"])
    defer { Self.stop(busy) }
    let busySlot = try page.claimSlot(pid: busy)
    page.publishDeadline(skipper.nowNanoseconds + 10_000_000_000, slot: busySlot)
    for _ in 0..<20 {
      guard case .busy = skipper.tryJump(pipelineNext: nil) else {
        Issue.record("a spinning process let the clock jump")
        break
      }
    }
    #expect(page.jumps == 0 && page.skippedNanoseconds == 0)

    let idle = try Self.spawn(["/usr/bin/unshare", "-n", "/bin/sleep", "1000"])
    defer { Self.stop(idle) }
    let path2 = Self.pagePath()
    defer { unlink(path2) }
    let idlePage = try ClockPage.create(at: path2)
    let idleSkipper = IdleSkipper(page: idlePage, factor: 25, epoch: epoch)
    let slot = try idlePage.claimSlot(pid: idle)
    let deadline = idleSkipper.nowNanoseconds + 30_000_000_000
    idlePage.publishDeadline(deadline, slot: slot)
    idlePage.addHold(1, slot: slot)
    for _ in 0..<20 {
      guard case .busy = idleSkipper.tryJump(pipelineNext: nil) else {
        Issue.record("a held clock jumped")
        break
      }
    }
    idlePage.addHold(-1, slot: slot)
    // A harness thread in the run's own namespaces (the world's services live in the
    // pipeline's process) that works blocks the jump too.
    let spinning = Mutex(true)
    let namespace = Mutex<UInt64?>(nil)
    Thread {
      typealias Unshare = @convention(c) (Int32) -> Int32
      let unshare = unsafeBitCast(
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), "unshare"), to: Unshare.self)
      guard unshare(0x4000_0000) == 0 else { return }  // CLONE_NEWNET, this thread only
      let link = try? FileManager.default.destinationOfSymbolicLink(
        atPath: "/proc/thread-self/ns/net")
      namespace.withLock { $0 = link.flatMap(RunActivityProbe.namespaceInode) }
      while spinning.withLock({ $0 }) {}
    }.start()
    #expect(Self.waitFor { namespace.withLock { $0 } != nil })
    let worldInode = try #require(namespace.withLock { $0 })
    let harnessSkipper = IdleSkipper(
      page: idlePage, factor: 25, epoch: epoch, harnessNamespaces: [worldInode])
    for _ in 0..<20 {
      guard case .busy = harnessSkipper.tryJump(pipelineNext: nil) else {
        Issue.record("a working harness thread in the run's namespace let the clock jump")
        break
      }
    }
    spinning.withLock { $0 = false }
    #expect(idlePage.jumps == 0)
    // The child may still be starting (unshare, exec): wait for the jump itself.
    var decision = JumpDecision.nothingPending
    #expect(
      Self.waitFor {
        decision = idleSkipper.tryJump(pipelineNext: nil)
        return decision == .jump(to: deadline)
      }, "last decision: \(decision)")
    #expect(idlePage.jumps == 1)
    let jump = try #require(idleSkipper.jumps.first)
    #expect(jump.after == Double(deadline) / 1e9)
    #expect(idleSkipper.now >= jump.after && idleSkipper.now < jump.after + 5)
    // The deadline is now due: no second jump past it.
    #expect(idleSkipper.tryJump(pipelineNext: nil) == .busy("a deadline is due"))
    #expect(idlePage.jumps == 1)
  }

  /// Two processes on one page: the mock Tor (`failclosed mock-tor --clock-page`, at scale 1
  /// with a 1,000 s bootstrap) publishes its plan's next step; each jump the test makes to it
  /// wakes the mock in its own process, and its SOCKS port opens once the run's time passes
  /// 1,000 s, seconds of real time after it started.
  @Test(
    .enabled(
      if: Privilege.skipReason(
        unless: FileManager.default.isExecutableFile(atPath: failclosedBinary),
        "needs the failclosed binary (swift build)") == nil,
      "needs the failclosed binary (swift build)"))
  func theMockInAnotherProcessWakesAtEachJump() throws {
    let path = Self.pagePath()
    defer { unlink(path) }
    let page = try ClockPage.create(at: path)
    let epoch = MonotonicInstant.now
    let listener = try Socket.listen(on: SocketAddress("127.0.0.1:0")!)
    let address = try #require(listener.localAddress)
    listener.close()
    let mock = try Self.spawn([
      try #require(Optional(failclosedBinary)), "mock-tor", "--personality", "arti", "--listen",
      address.description, "--bootstrap-plan", "healthy:1000", "--time-scale", "1", "--epoch",
      epoch.description, "--clock-page", path,
    ])
    defer { Self.stop(mock) }
    let real = SystemClock()
    func now() -> Int64 {
      SkippingClock.virtualNanoseconds(
        monotonic: MonotonicInstant.now.nanoseconds, epoch: epoch.nanoseconds, factor: 1,
        skipped: page.skippedNanoseconds)
    }
    func portOpen() -> Bool {
      guard let socket = try? Socket.connect(to: address, timeout: 0.2) else { return false }
      socket.close()
      return true
    }
    var open = false
    var jumps = 0
    while !open && jumps < 100 {
      var deadline: Int64?
      let published = Self.waitFor {
        deadline = page.slots.compactMap(\.deadline).min()
        return deadline.map { $0 > now() } ?? false
      }
      #expect(published, "the mock published no future deadline")
      guard published, let target = deadline else { break }
      page.skip(nanoseconds: target - now())
      jumps += 1
      #expect(now() >= target && now() < target + 2_000_000_000)
      // Woken, the mock takes the plan's step (binding its port at 100%), then publishes the
      // next one.
      #expect(Self.waitFor { page.slots.compactMap(\.deadline).min().map { $0 > target } ?? false })
      open = portOpen()
    }
    #expect(open, "the mock's SOCKS port never opened after \(jumps) jumps")
    #expect(Double(now()) / 1e9 >= 1000)
    #expect(real.now < 60)
  }

  /// The positive control on the mock lane: the 75 s stall on a skipping clock skips idle time
  /// and still posts TorBootstrapDidStall by 76 s, every expectation met as without skipping.
  @Test(.enabled(if: Privilege.rootSkipReason == nil, "needs root"))
  func theStallPostsByItsDeadlineWhileSkipping() async throws {
    var options = ScenarioRunner.Options(executable: failclosedBinary)
    options.skipIdle = true
    let scenario = try libraryScenario("stall-past-75s")
    let runner = ScenarioRunner(options: options)
    // A run the harness made late is run again, as the batches do.
    let skipping = await LateRunRetry.outcome(scenario) { await runner.run(scenario) }
    let judged = ExpectationJudge.judge(scenario, skipping)
    #expect(judged.verdict == .pass, "\(judged.reasons)")
    let skip = try #require(skipping.clockSkip)
    #expect(skip.jumps.count > 0 && skip.skippedSeconds > 0)
    for (before, after) in zip(skip.jumps, skip.jumps.dropFirst()) {
      #expect(before.after <= after.before && before.unixTime <= after.unixTime)
    }
    let stall = skipping.events.filter { $0.name == "TorBootstrapDidStall" }.map(\.time)
    #expect(
      stall.count == 1 && stall.allSatisfy { $0 >= 75 && $0 <= 76 },
      "\(stall); jumps near it: \(skip.jumps.filter { $0.after > 73 && $0.before < 77 })")
    options.skipIdle = false
    let plainRunner = ScenarioRunner(options: options)
    let plain = await LateRunRetry.outcome(scenario) { await plainRunner.run(scenario) }
    #expect(plain.clockSkip == nil)
    #expect(
      ExpectationJudge.judge(scenario, plain).expectations.map(\.status)
        == judged.expectations.map(\.status))
  }
}
