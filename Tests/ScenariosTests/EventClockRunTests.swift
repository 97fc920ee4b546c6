import FailClosedSupport
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import Lanes
@testable import Scenarios

/// The event clock with real processes: the pipeline's runner against a busy process (the time
/// must stand), an idle one in a namespace of its own (jumps to the deadline, not past it), a
/// hold (the time runs at the scale, never past the deadline), the mock Tor in another process
/// waking at each move, and the 75 s stall on the mock lane without one run set aside.
@Suite(.serialized) struct EventClockRunTests {
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
  @Test(.needsRoot(because: "unshare -n"))
  func aBusyProcessBlocksTheJumpAndAnIdleOneJumpsToItsDeadline() throws {
    let path = Self.pagePath()
    defer { unlink(path) }
    let page = try ClockPage.create(at: path, start: 0)
    let epoch = MonotonicInstant.now
    let skipper = EventClockStepper(page: page, factor: 25, epoch: epoch)

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
    #expect(page.advances == 0 && page.nowNanoseconds == 0, "the time moved while a process spun")

    let idle = try Self.spawn(["/usr/bin/unshare", "-n", "/bin/sleep", "1000"])
    defer { Self.stop(idle) }
    let path2 = Self.pagePath()
    defer { unlink(path2) }
    let idlePage = try ClockPage.create(at: path2, start: 0)
    let idleSkipper = EventClockStepper(page: idlePage, factor: 25, epoch: epoch)
    let slot = try idlePage.claimSlot(pid: idle)
    let deadline = idleSkipper.nowNanoseconds + 30_000_000_000
    idlePage.publishDeadline(deadline, slot: slot)
    idlePage.addHold(1, slot: slot)
    // Held and otherwise idle, the time runs at the scale (real time x 25), in moves marked
    // held, and never reaches the deadline 30 virtual s (1.2 real s) ahead within 20 turns.
    let heldFrom = SystemClock()
    for _ in 0..<20 {
      guard case .busy = idleSkipper.tryJump(pipelineNext: nil) else {
        Issue.record("a held clock jumped")
        break
      }
    }
    let heldReal = heldFrom.now
    #expect(idleSkipper.jumps.allSatisfy { $0.held })
    #expect(idleSkipper.nowNanoseconds < deadline)
    #expect(Double(idleSkipper.nowNanoseconds) / 1e9 <= heldReal * 25 + 0.001)
    idlePage.addHold(-1, slot: slot)
    let heldMoves = idleSkipper.jumps.count
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
    #expect(waitUntil(timeout: 30, every: 0.001) { namespace.withLock { $0 } != nil })
    let worldInode = try #require(namespace.withLock { $0 })
    let harnessSkipper = EventClockStepper(
      page: idlePage, factor: 25, epoch: epoch, harnessNamespaces: [worldInode])
    for _ in 0..<20 {
      guard case .busy = harnessSkipper.tryJump(pipelineNext: nil) else {
        Issue.record("a working harness thread in the run's namespace let the clock jump")
        break
      }
    }
    spinning.withLock { $0 = false }
    #expect(idleSkipper.jumps.count == heldMoves)
    // The child may still be starting (unshare, exec): wait for the jump itself.
    var decision = JumpDecision.nothingPending
    #expect(
      waitUntil(timeout: 30, every: 0.001) {
        decision = idleSkipper.tryJump(pipelineNext: nil)
        return decision == .jump(to: deadline)
      }, "last decision: \(decision)")
    #expect(idleSkipper.jumps.filter { !$0.held }.count == 1)
    let jump = try #require(idleSkipper.jumps.last)
    #expect(jump.after == Double(deadline) / 1e9)
    // The time stands where the jump put it.
    #expect(idleSkipper.now == jump.after)
    // The deadline is now due: no second jump past it.
    #expect(idleSkipper.tryJump(pipelineNext: nil) == .busy("a deadline is due"))
    #expect(idleSkipper.jumps.filter { !$0.held }.count == 1 && idleSkipper.now == jump.after)
  }

  /// Two processes on one page: the mock Tor (`failclosed mock-tor --clock-page`, at scale 1
  /// with a 1,000 s bootstrap) publishes its plan's next step; each jump the test makes to it
  /// wakes the mock in its own process, and its SOCKS port opens once the run's time passes
  /// 1,000 s, seconds of real time after it started.
  @Test(
    .needsFailclosedBinary)
  func theMockInAnotherProcessWakesAtEachJump() throws {
    let path = Self.pagePath()
    defer { unlink(path) }
    let page = try ClockPage.create(at: path, start: 0)
    let epoch = MonotonicInstant.now
    let listener = try Socket.listen(on: SocketAddress("127.0.0.1:0")!)
    let address = try #require(listener.localAddress)
    listener.close()
    let mock = try Self.spawn([
      try #require(Optional(FailclosedBinary.path)), "mock-tor", "--personality", "arti",
      "--listen",
      address.description, "--bootstrap-plan", "healthy:1000", "--time-scale", "1", "--epoch",
      epoch.description, "--clock-page", path,
    ])
    defer { Self.stop(mock) }
    let real = SystemClock()
    func now() -> Int64 { page.nowNanoseconds }
    func portOpen() -> Bool {
      guard let socket = try? Socket.connect(to: address, timeout: 0.2) else { return false }
      socket.close()
      return true
    }
    var open = false
    var jumps = 0
    while !open && jumps < 100 {
      var deadline: Int64?
      let published = waitUntil(timeout: 30, every: 0.001) {
        deadline = page.slots.compactMap(\.deadline).min()
        return deadline.map { $0 > now() } ?? false
      }
      #expect(published, "the mock published no future deadline")
      guard published, let target = deadline else { break }
      page.advance(to: target)
      jumps += 1
      #expect(now() == target)
      // Woken, the mock takes the plan's step (binding its port at 100%), then publishes the
      // next one.
      #expect(
        waitUntil(timeout: 30, every: 0.001) {
          page.slots.compactMap(\.deadline).min().map { $0 > target } ?? false
        })
      open = portOpen()
    }
    #expect(open, "the mock's SOCKS port never opened after \(jumps) jumps")
    #expect(Double(now()) / 1e9 >= 1000)
    #expect(real.now < 60)
  }

  /// The positive control on the mock lane: the 75 s stall on the event clock posts
  /// TorBootstrapDidStall by 76 s, every expectation met as on the plain scaled clock, and no
  /// run is set aside as late: on the event clock nothing can be.
  @Test(.needsRoot)
  func theStallPostsByItsDeadlineWhileSkipping() async throws {
    var options = ScenarioRunner.Options(executable: FailclosedBinary.path)
    options.skipIdle = true
    let scenario = try libraryScenario("stall-past-75s")
    let runner = ScenarioRunner(options: options)
    let skipping = await runner.run(scenario)
    let judged = ExpectationJudge.judge(scenario, skipping)
    #expect(judged.verdict == .pass, "\(judged.reasons)")
    #expect(!judged.isHarnessLate, "\(judged.lateActions)")
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
    // A run the plain clock made late is run again, as the batches do.
    let plain = await LateRunRetry.outcome(scenario) { await plainRunner.run(scenario) }
    #expect(plain.clockSkip == nil)
    #expect(
      ExpectationJudge.judge(scenario, plain).expectations.map(\.status)
        == judged.expectations.map(\.status))
  }

  /// The lateness check's canary and the event clock's proof, with one fault: the app is
  /// stopped (SIGSTOP) for 0.6 real s once it has started, as a loaded machine starves it. On
  /// the plain scaled clock that is 15 virtual s in which its bootstrap polls fall due: the
  /// check must find its timers late (the run set aside, never judged). On the event clock
  /// the time stands while the app cannot run: nothing is late and the run passes.
  @Test(.needsRoot)
  func aStoppedAppIsLateOnThePlainClockAndWaitedForOnTheEventClock() async throws {
    let scenario = try libraryScenario("stall-past-75s")
    for eventClock in [false, true] {
      let directory = NSTemporaryDirectory() + "failclosed-stopped-app-" + UUID().uuidString
      try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
      defer { try? FileManager.default.removeItem(atPath: directory) }
      var options = ScenarioRunner.Options(
        executable: FailclosedBinary.path, workDirectory: directory)
      options.skipIdle = eventClock
      let runner = ScenarioRunner(options: options)
      let stopper = Task.detached { () -> Bool in
        // The app of this run: its command line names the run's directory.
        var app: Int32?
        let found = waitUntil(timeout: 30, every: 0.001) {
          app = Self.appProcess(naming: directory)
          guard let app, let events = Self.appEvents(naming: directory) else { return false }
          return app > 0 && events.contains("TorWillStart")
        }
        guard found, let app else { return false }
        kill(app, SIGSTOP)
        SystemClock().sleepBlocking(seconds: 0.6)  // the fault's length, not an ordering
        kill(app, SIGCONT)
        return true
      }
      let outcome = await runner.run(scenario)
      #expect(await stopper.value, "the app of the run was never found to stop")
      let judged = ExpectationJudge.judge(scenario, outcome)
      if eventClock {
        #expect(!judged.isHarnessLate, "\(judged.lateActions)")
        #expect(judged.verdict == .pass, "\(judged.reasons)")
      } else {
        #expect(judged.isHarnessLate, "the lateness check missed a 15 virtual s stop")
        #expect(judged.verdict == .inconclusive)
      }
    }
  }

  /// The pid of the `failclosed app` whose command line names `directory`.
  static func appProcess(naming directory: String) -> Int32? {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    for entry in entries {
      guard let pid = Int32(entry),
        let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline")
      else { continue }
      let arguments = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
      if arguments.count > 2, arguments[0].hasSuffix("failclosed"), arguments[1] == "app",
        arguments.contains(where: { $0.hasPrefix(directory) })
      {
        return pid
      }
    }
    return nil
  }

  /// The app's events so far, from the run's app.jsonl under `directory`.
  static func appEvents(naming directory: String) -> String? {
    guard
      let run = try? FileManager.default.contentsOfDirectory(atPath: directory).first(where: {
        $0.hasPrefix("stall-past-75s")
      })
    else { return nil }
    return try? String(contentsOfFile: directory + "/" + run + "/app.jsonl", encoding: .utf8)
  }
}
