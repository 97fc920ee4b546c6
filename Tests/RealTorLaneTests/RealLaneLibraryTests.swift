import Audit
import FailClosedSupport
import Foundation
import Sandbox
import Testing

@testable import RealTorLane

/// The issue's six real-lane cases against Debian's tor, each audited from the capture: the
/// healthy control passes and fetches through the exit, every censored case stalls where real
/// tor stalls, the bridge gets around the block, and no case leaks.
@Suite(.serialized, .enabled(if: Privilege.rootSkipReason == nil, "needs root"))
struct RealLaneLibraryTests {
  @Test func everyCaseBehavesAsRealTorDoesAndNothingLeaks() async throws {
    let base = NSTemporaryDirectory() + "fc-lane-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    defer { try? FileManager.default.removeItem(atPath: base) }
    try await withSandbox { sandbox in
      let runner = RealLaneRunner(sandbox: sandbox, directory: base)
      defer { runner.testnet.stop() }
      _ = try await runner.start()
      // FC_LANE_CASE=NAME runs only the cases whose name contains NAME (when debugging one).
      let only = ProcessInfo.processInfo.environment["FC_LANE_CASE"] ?? ""
      let cases = RealLaneCase.library.filter { only.isEmpty || $0.name.contains(only) }
      #expect(!cases.isEmpty, "FC_LANE_CASE=\(only) matches no case")
      for laneCase in cases {
        let result = try await runner.run(laneCase, reportDirectory: base + "/reports")
        #expect(
          result.failures.isEmpty,
          "\(laneCase.name): \(result.failures)\n\(result.logTail ?? "")")
        #expect(result.report.verdict == .pass, "\(laneCase.name)")
        #expect(result.report.statistics.packets > 0, "\(laneCase.name): nothing captured")
      }
    }
  }

  /// The lane's judge fails what tor did not do, and a leak, whatever tor did.
  @Test func theJudgeFailsUnmetExpectationsAndLeaks() {
    let healthy = RealLaneCase.library[0]
    let stuck = [
      DeviceTorClient.TimedLine(
        time: 1, progress: 5, tag: "conn", summary: "Connecting to a relay", reason: nil,
        count: nil)
    ]
    let clean = AuditReport(verdict: .pass, reasons: [])
    #expect(
      RealLaneRunner.judge(healthy, timeline: stuck, report: clean, fetched: nil) == [
        "bootstrap stopped at 5%, expected 100%", "no fetch through the exit succeeded",
      ])
    let dropped = RealLaneCase.library[1]
    #expect(RealLaneRunner.judge(dropped, timeline: stuck, report: clean, fetched: nil).isEmpty)
    let leaked = AuditReport(verdict: .leak, reasons: [])
    #expect(!RealLaneRunner.judge(dropped, timeline: stuck, report: leaked, fetched: nil).isEmpty)
    let reset = RealLaneCase.library[2]
    #expect(
      RealLaneRunner.judge(reset, timeline: stuck, report: clean, fetched: nil) == [
        "tor never warned CONNECTREFUSED"
      ])
  }
}
