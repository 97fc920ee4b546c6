import Audit
import FailClosedSupport
import Foundation
import Testing

@testable import Lanes
@testable import Scenarios

/// The skipping clock's decision from samples (``IdleJudge``), the `/proc` parsing behind the
/// samples, and the mapping of capture times through the jumps.
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
  }

  /// A packet captured after a jump lands on the run's axis with the jump added, so it and an
  /// app event at the same instant agree; one before the jump does not move.
  @Test func captureTimesMapThroughTheJumps() throws {
    let skip = ClockSkip(jumps: [
      ClockSkip.Jump(unixTime: 1_000.1, before: 2.5, after: 10),
      ClockSkip.Jump(unixTime: 1_000.2, before: 12.5, after: 20),
    ])
    #expect(skip.skippedSeconds == 15)
    #expect(skip.skipped(by: 1_000.05) == 0)
    #expect(skip.skipped(by: 1_000.15) == 7.5)
    #expect(skip.skipped(by: 1_001) == 15)
    // runStart 1,000, scale 25: 0.15 s real is 3.75 s scaled, plus 7.5 s skipped.
    let leak = try JSONDecoder().decode(
      LeakRecord.self,
      from: Data(
        (#"{"class":"dns","protocol":"udp","destination":"10.66.1.1:53","sources":[],"names":[],"#
          + #""firstTime":1000.15,"firstOffset":0,"lastTime":1000.15,"packets":1,"#
          + #""bytes":60,"replyPackets":0}"#).utf8))
    let report = AuditReport(verdict: .leak, reasons: [], leaks: [leak])
    let plain = CaptureAudit(report, runStart: 1_000, timeScale: 25)
    let skipped = CaptureAudit(report, runStart: 1_000, timeScale: 25, skip: skip)
    #expect(abs((plain.leaks.first?.firstTime ?? 0) - 3.75) < 1e-6)
    #expect(abs((skipped.leaks.first?.firstTime ?? 0) - 11.25) < 1e-6)
  }
}
