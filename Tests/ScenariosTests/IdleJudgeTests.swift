import Audit
import FailClosedSupport
import Foundation
import Testing

@testable import Lanes
@testable import Scenarios

/// The event clock's decision from samples (``IdleJudge``), the `/proc` parsing behind the
/// samples, and the mapping of capture times through the clock's moves.
@Suite struct IdleJudgeTests {
  typealias Thread = ActivitySample.Thread

  static let asleep = ActivitySample(
    threads: [
      10: Thread(state: "S", runNanoseconds: 500), 11: Thread(state: "S", runNanoseconds: 9),
    ],
    packets: 40)
  static let slots = [
    ClockPage.Slot(pid: 10, holds: 0, deadline: 7_000),
    ClockPage.Slot(pid: 20, holds: 0, deadline: 5_000),
  ]

  /// The positive control: all asleep, nothing moved, nothing held: the jump goes to the
  /// earliest deadline of all, the pipeline's own included, and never past one.
  @Test func anIdleRunJumpsToTheEarliestDeadline() {
    let samples = [Self.asleep, Self.asleep, Self.asleep]
    #expect(
      IdleJudge.decide(slots: Self.slots, pipelineNext: nil, now: 1_000, samples: samples)
        == .jump(to: 5_000))
    #expect(
      IdleJudge.decide(slots: Self.slots, pipelineNext: 3_000, now: 1_000, samples: samples)
        == .jump(to: 3_000))
    #expect(
      IdleJudge.decide(
        slots: [ClockPage.Slot(pid: 10, holds: 0, deadline: nil)], pipelineNext: nil, now: 1_000,
        samples: samples) == .nothingPending)
  }

  /// Canaries: each sign of work blocks the jump.
  @Test func anySignOfWorkBlocksTheJump() {
    func decide(_ samples: [ActivitySample], slots: [ClockPage.Slot] = Self.slots)
      -> JumpDecision
    {
      IdleJudge.decide(slots: slots, pipelineNext: nil, now: 1_000, samples: samples)
    }
    var running = Self.asleep
    running.threads[11] = Thread(state: "R", runNanoseconds: 9)
    var disk = Self.asleep
    disk.threads[10] = Thread(state: "D", runNanoseconds: 500)
    var ran = Self.asleep
    ran.threads[10] = Thread(state: "S", runNanoseconds: 501)
    var packets = Self.asleep
    packets.packets += 1
    var newThread = Self.asleep
    newThread.threads[12] = Thread(state: "S", runNanoseconds: 0)
    let cases: [(String, JumpDecision)] = [
      ("running", decide([Self.asleep, running])),
      ("disk", decide([disk, disk])),
      ("ran between samples", decide([Self.asleep, Self.asleep, ran])),
      ("a packet moved", decide([Self.asleep, packets])),
      ("a thread came", decide([Self.asleep, newThread])),
      ("one sample", decide([Self.asleep])),
      (
        "a hold",
        decide(
          [Self.asleep, Self.asleep],
          slots: Self.slots + [ClockPage.Slot(pid: 30, holds: 1, deadline: nil)])
      ),
      (
        "a deadline already due",
        decide(
          [Self.asleep, Self.asleep], slots: [ClockPage.Slot(pid: 10, holds: 0, deadline: 1_000)])
      ),
    ]
    for (name, decision) in cases {
      guard case .busy = decision else {
        Issue.record("\(name): expected busy, got \(decision)")
        continue
      }
    }
  }

  /// A decision's middle sample reads CPU times only (no states): it neither counts as awake
  /// nor hides a thread that ran; an awake thread still stops the jump in the last sample.
  @Test func aSampleWithoutStatesStillShowsWhatRan() {
    var timesOnly = Self.asleep
    for key in timesOnly.threads.keys { timesOnly.threads[key]?.state = nil }
    var ranTimesOnly = timesOnly
    ranTimesOnly.threads[11]?.runNanoseconds += 1
    var runningLast = Self.asleep
    runningLast.threads[10] = Thread(state: "R", runNanoseconds: 500)
    func decide(_ samples: [ActivitySample]) -> JumpDecision {
      IdleJudge.decide(slots: Self.slots, pipelineNext: nil, now: 1_000, samples: samples)
    }
    #expect(decide([Self.asleep, timesOnly, Self.asleep]) == .jump(to: 5_000))
    #expect(decide([Self.asleep, ranTimesOnly, Self.asleep]) == .busy("thread 11 ran"))
    #expect(decide([Self.asleep, timesOnly, runningLast]) == .busy("thread 10 in state R"))
  }

  /// The probe's three kinds of sample on a live process: a full one has each thread's state
  /// and CPU time; a CPU-times-only one reuses the task list and has no states; the packet
  /// counters come from the first pid's namespace.
  @Test func theProbeReadsStatesOnlyWhenAsked() throws {
    // A child asleep (the probe reads the harness's own threads only in the run's namespaces).
    let child = Process()
    child.executableURL = URL(fileURLWithPath: "/bin/sleep")
    child.arguments = ["30"]
    try child.run()
    defer {
      // SIGKILL: the test runner's children may inherit an ignored SIGTERM.
      kill(child.processIdentifier, SIGKILL)
      child.waitUntilExit()
    }
    var namespaces = ThreadNamespaceCache()
    let files = ThreadStatFiles()
    let pid = child.processIdentifier
    let full = try #require(
      RunActivityProbe.sample(pids: [pid], namespaceOf: &namespaces, files: files))
    #expect(full.threads.count == 1)
    #expect(full.threads.values.allSatisfy { $0.state != nil })
    let timesOnly = try #require(
      RunActivityProbe.sample(
        pids: [pid], namespaceOf: &namespaces, files: files, states: false, listTasks: false))
    #expect(Set(timesOnly.threads.keys) == Set(full.threads.keys))
    #expect(timesOnly.threads.values.allSatisfy { $0.state == nil })
    #expect(timesOnly.packets >= full.packets)
    // Without a task list read before, there is nothing to reuse: unreadable, never idle.
    #expect(
      RunActivityProbe.sample(
        pids: [pid], namespaceOf: &namespaces, files: ThreadStatFiles(), states: false,
        listTasks: false) == nil)
  }

  @Test func procTextsAreRead() {
    #expect(RunActivityProbe.threadState("123 (a (b) c) S 1 2 3") == "S")
    #expect(RunActivityProbe.threadState("7 (fc-clock) R 1") == "R")
    #expect(RunActivityProbe.threadState("garbage") == nil)
    #expect(RunActivityProbe.namespaceInode("net:[4026532281]") == 4_026_532_281)
    #expect(RunActivityProbe.namespaceInode("net:") == nil)
    let dev = """
      Inter-|   Receive                                                |  Transmit
       face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
          lo:    1000      10    0    0    0     0          0         0     1000      10    0    0    0     0       0          0
        eth0:    5000       3    0    0    0     0          0         0      700       4    0    0    0     0       0          0
      """
    #expect(RunActivityProbe.packetCount(dev) == 27)
    // A last line cut short, and one with no newline: the 2nd and 10th numbers of each.
    #expect(RunActivityProbe.packetCount(dev + "\n  veth0: 1 2 3") == 29)
    #expect(RunActivityProbe.packetCount("  veth0: 1 2 3 4 5 6 7 8 9 10") == 12)
    #expect(RunActivityProbe.packetCount("") == 0)
  }

  /// A hold is work unless the runner lets time run at the scale for it (``allowHolds``):
  /// then an idle run with a hold goes on to its earliest deadline, or anywhere (the caller
  /// caps it) when nothing waits on the clock; a sign of work still stops it.
  @Test func aHoldIsNotWorkWhenTheRunnerRunsTheTimeForIt() {
    let held = Self.slots + [ClockPage.Slot(pid: 30, holds: 1, deadline: nil)]
    let samples = [Self.asleep, Self.asleep]
    #expect(
      IdleJudge.decide(slots: held, pipelineNext: nil, now: 1_000, samples: samples)
        == .busy("process 30 holds 1 real-time wait(s)"))
    #expect(
      IdleJudge.decide(
        slots: held, pipelineNext: nil, now: 1_000, samples: samples, allowHolds: true)
        == .jump(to: 5_000))
    #expect(
      IdleJudge.decide(
        slots: [ClockPage.Slot(pid: 30, holds: 1, deadline: nil)], pipelineNext: nil, now: 1_000,
        samples: samples, allowHolds: true) == .jump(to: Int64.max))
    var running = Self.asleep
    running.threads[11] = Thread(state: "R", runNanoseconds: 9)
    guard
      case .busy = IdleJudge.decide(
        slots: held, pipelineNext: nil, now: 1_000, samples: [Self.asleep, running],
        allowHolds: true)
    else {
      Issue.record("a running thread let a held run's time go on")
      return
    }
  }

  /// On the event clock a packet's time is what the clock read when it was sent: the time
  /// stands between moves, so a packet between two moves has the first move's time, one
  /// before any move the time the page started at (before 0, shown as 0), and the reports
  /// count jumps over idle time apart from the time run at the scale while a wait held.
  @Test func captureTimesAreWhatTheEventClockReadThen() throws {
    let skip = ClockSkip(jumps: [
      ClockSkip.Jump(unixTime: 1_000.1, before: -1, after: 10),
      ClockSkip.Jump(unixTime: 1_000.2, before: 10, after: 12.5, held: true),
      ClockSkip.Jump(unixTime: 1_000.3, before: 12.5, after: 20),
    ])
    #expect(skip.skippedSeconds == 18.5)
    #expect(skip.heldSeconds == 2.5)
    #expect(skip.idleJumps == 2)
    #expect(skip.virtualTime(at: 1_000.05) == -1)
    #expect(skip.virtualTime(at: 1_000.1) == 10)
    #expect(skip.virtualTime(at: 1_000.15) == 10)
    #expect(skip.virtualTime(at: 1_000.25) == 12.5)
    #expect(skip.virtualTime(at: 1_001) == 20)
    let leak = try JSONDecoder().decode(
      LeakRecord.self,
      from: Data(
        (#"{"class":"dns","protocol":"udp","destination":"10.66.1.1:53","sources":[],"names":[],"#
          + #""firstTime":1000.25,"firstOffset":0,"lastTime":1000.25,"packets":1,"#
          + #""bytes":60,"replyPackets":0}"#).utf8))
    let report = AuditReport(verdict: .leak, reasons: [], leaks: [leak])
    // The plain scaled clock: runStart 1,000, scale 25: 0.25 s real is 6.25 s.
    let plain = CaptureAudit(report, runStart: 1_000, timeScale: 25)
    let onEventClock = CaptureAudit(report, runStart: 1_000, timeScale: 25, skip: skip)
    #expect(abs((plain.leaks.first?.firstTime ?? 0) - 6.25) < 1e-6)
    #expect(onEventClock.leaks.first?.firstTime == 12.5)
  }

  /// With `allowDue` (the Tor side's step at this instant is done; is the run idle before the
  /// app due at the same instant is woken?) a due deadline is not work; work still is.
  @Test func aDueDeadlineIsNotWorkWhenTheRunnerAsksBeforeWakingTheApp() {
    let due = [ClockPage.Slot(pid: 10, holds: 0, deadline: 1_000)]
    let samples = [Self.asleep, Self.asleep]
    #expect(
      IdleJudge.decide(slots: due, pipelineNext: nil, now: 1_000, samples: samples)
        == .busy("a deadline is due"))
    #expect(
      IdleJudge.decide(slots: due, pipelineNext: nil, now: 1_000, samples: samples, allowDue: true)
        == .jump(to: 1_000))
    var ran = Self.asleep
    ran.threads[10] = Thread(state: "S", runNanoseconds: 501)
    guard
      case .busy = IdleJudge.decide(
        slots: due, pipelineNext: nil, now: 1_000, samples: [Self.asleep, ran], allowDue: true)
    else {
      Issue.record("a thread that ran let the app be woken")
      return
    }
  }

  /// A process is alive while one of its threads is; a zombie (ended, not yet reaped) waits
  /// for nothing, and its slot is freed.
  @Test func aZombieIsNotAlive() throws {
    let actions = FileActions()
    actions.open("/dev/null", to: 1, flags: O_WRONLY)
    let child = try Spawner.spawn(["/bin/sleep", "1000"], actions: actions)
    #expect(RunActivityProbe.isAlive(child))
    kill(child, SIGKILL)
    let real = SystemClock()
    while RunActivityProbe.isAlive(child) && real.now < 30 { usleep(1000) }
    #expect(!RunActivityProbe.isAlive(child), "a killed child still counted as alive")
    _ = Spawner.wait(child)
    #expect(!RunActivityProbe.isAlive(child))
  }

  /// The thread last found awake answers a busy turn only while its process is still sampled:
  /// a crashed mock's leader stays a zombie (never asleep) until reaped, after its slot is
  /// freed, and the run must not look busy for it (it hung until the lane's deadline).
  @Test func aFreedProcesssZombieDoesNotKeepTheRunBusy() throws {
    let actions = FileActions()
    actions.open("/dev/null", to: 1, flags: O_WRONLY)
    let crashed = try Spawner.spawn(["/bin/sleep", "1000"], actions: actions)
    let asleep = try Spawner.spawn(["/bin/sleep", "1000"], actions: actions)
    defer {
      kill(asleep, SIGKILL)
      _ = Spawner.wait(asleep)
    }
    kill(crashed, SIGKILL)
    let real = SystemClock()
    while RunActivityProbe.isAlive(crashed) && real.now < 30 { usleep(1000) }
    defer { _ = Spawner.wait(crashed) }
    var namespaces = ThreadNamespaceCache()
    let files = ThreadStatFiles()
    files.lastAwake = (crashed, crashed)
    let sample = try #require(
      RunActivityProbe.sample(pids: [asleep], namespaceOf: &namespaces, files: files))
    #expect(sample.threads.keys.contains(asleep))
    #expect(!sample.threads.keys.contains(crashed))
    // The canary: while the zombie's process is still sampled, it is work.
    files.lastAwake = (crashed, crashed)
    let withIt = try #require(
      RunActivityProbe.sample(pids: [asleep, crashed], namespaceOf: &namespaces, files: files))
    #expect(withIt.threads[crashed]?.state == "Z")
  }
}
