import Audit
import Foundation
import SyntheticTraffic
import Testing

@Suite struct VerdictTests {
  var probePolicy: AuditPolicy {
    var policy = Fixtures.policy
    policy.syncProbe = Fixtures.probe
    return policy
  }

  @Test func drainedDropsMakeACleanCaptureInconclusive() {
    let auditor = Auditor(linkType: .raw, policy: Fixtures.policy)
    let report = auditor.report(
      capture: CaptureStatistics(received: 10, dropped: 1, interfaceDropped: 0))
    #expect(report.verdict == .inconclusive)
    #expect(report.reasons.map(\.kind) == [.drops, .noPackets])
    #expect(report.verdict.exitCode == 2)
  }

  @Test func aMissingPositiveControlIsInconclusive() {
    #expect(Fixtures.audit([], policy: probePolicy).reasons.map(\.kind) == [.noPackets])
    let report = Fixtures.audit(Fixtures.torFlow, policy: probePolicy)
    #expect(report.verdict == .inconclusive)
    #expect(report.reasons.map(\.kind) == [.positiveControlMissing])
  }

  @Test func aLateStartIsInconclusiveAndALeakStaysALeak() {
    let auditor = Auditor(linkType: .raw, policy: Fixtures.policy)
    auditor.noteInconclusive(InconclusiveReason(.captureStartedLate, "opened after the app"))
    #expect(auditor.report().verdict == .inconclusive)
    Fixtures.canaries[0].2.withUnsafeBytes {
      _ = auditor.consume(timestamp: 1, wireLength: $0.count, frame: $0)
    }
    let report = auditor.report()
    #expect(report.verdict == .leak)
    #expect(report.reasons.map(\.kind) == [.captureStartedLate])
  }

  /// Nothing seen proves nothing: an empty capture is inconclusive even when no positive
  /// control was asked for.
  @Test func anEmptyCaptureIsInconclusiveEvenWithoutAProbeRequirement() {
    let report = Fixtures.audit([])
    #expect(report.verdict == .inconclusive)
    #expect(report.reasons.map(\.kind) == [.noPackets])
  }

  @Test func theReportRoundTripsThroughJSON() throws {
    let report = Fixtures.audit(Fixtures.torFlow + Fixtures.canaries.map(\.2))
    let data = try JSONEncoder().encode(report)
    let text = String(decoding: data, as: UTF8.self)
    #expect(text.contains("\"class\":\"other-protocol\""))
    let decoded = try JSONDecoder().decode(AuditReport.self, from: data)
    #expect(decoded.verdict == .leak)
    #expect(decoded.leaks == report.leaks)
    #expect(decoded.flows == report.flows)
  }

  @Test func theFlowTableIsBoundedAndCountsTheOverflow() {
    var policy = Fixtures.policy
    policy.maximumFlows = 10
    policy.maximumLeakGroups = 5
    let packets = (0..<50).map { index in
      FrameBuilder.udpPacket(
        from: Fixtures.endpoint(Fixtures.device, UInt16(30000 + index)),
        to: Fixtures.endpoint(Fixtures.world, UInt16(1000 + index)), payload: [1])
    }
    let report = Fixtures.audit(packets, policy: policy)
    #expect(report.flows.count == 10)
    #expect(report.statistics.flowOverflowPackets == 40)
    #expect(report.leaks.count == 5)
    #expect(report.statistics.leakGroupOverflowPackets == 45)
    #expect(report.statistics.leakPackets == 50)
    #expect(report.verdict == .leak)
  }

  @Test func flowsAggregatePacketsBytesAndTimes() {
    let report = Fixtures.audit(Fixtures.torFlow)
    let outbound = report.flows.first { $0.destinationPort == 9001 }
    #expect(outbound?.packets == 2)
    #expect(outbound?.disposition == "allowed")
    #expect((outbound?.lastTime ?? 0) > (outbound?.firstTime ?? 0))
  }
}
