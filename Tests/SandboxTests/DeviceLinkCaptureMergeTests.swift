import Audit
import Foundation
import Testing

@testable import Sandbox

/// The run's report from both ends of the device's link (pure): the device capture's report
/// is the body, the wire's leaks are added only when the device saw none in their group, and
/// the wire's doubts count.
@Suite struct DeviceLinkCaptureMergeTests {
  static func leak(_ leakClass: LeakClass, _ destination: String, packets: Int = 1) throws
    -> LeakRecord
  {
    let json = """
      {"class": "\(leakClass.rawValue)", "protocol": "udp", "destination": "\(destination)",
       "sources": ["10.66.0.2:40000"], "names": [], "evidence": "first", "firstTime": 1,
       "firstOffset": 0, "lastTime": 1, "packets": \(packets), "bytes": 60, "replyPackets": 0}
      """
    return try JSONDecoder().decode(LeakRecord.self, from: Data(json.utf8))
  }

  static func report(_ leaks: [LeakRecord], reasons: [InconclusiveReason] = []) -> AuditReport {
    var statistics = AuditStatistics()
    statistics.leakPackets = leaks.reduce(0) { $0 + $1.packets }
    let verdict: Verdict = !leaks.isEmpty ? .leak : (reasons.isEmpty ? .pass : .inconclusive)
    return AuditReport(verdict: verdict, reasons: reasons, leaks: leaks, statistics: statistics)
  }

  @Test func aLeakOnlyTheWireSawFailsTheRunAndSaysWhere() throws {
    let merged = DeviceLinkCapture.merge(
      device: Self.report([]), wire: Self.report([try Self.leak(.dns, "10.66.1.53:53")]))
    #expect(merged.verdict == .leak)
    #expect(merged.leaks.count == 1)
    #expect(merged.leaks.first?.evidence == DeviceLinkCapture.farEndOnlyNote + "; first")
    #expect(merged.statistics.leakPackets == 1)
  }

  @Test func aLeakSeenAtBothEndsIsListedOnce() throws {
    let dns = try Self.leak(.dns, "10.66.1.53:53", packets: 3)
    let udp = try Self.leak(.udp, "10.66.1.80:4444", packets: 2)
    let merged = DeviceLinkCapture.merge(
      device: Self.report([dns]), wire: Self.report([dns, udp]))
    #expect(merged.verdict == .leak)
    #expect(merged.leaks.map(\.destination) == ["10.66.1.53:53", "10.66.1.80:4444"])
    #expect(merged.leaks[0].evidence == "first")
    #expect(merged.leaks[1].evidence?.hasPrefix(DeviceLinkCapture.farEndOnlyNote) == true)
    #expect(merged.statistics.leakPackets == 5)
  }

  @Test func cleanAtBothEndsPasses() {
    let merged = DeviceLinkCapture.merge(device: Self.report([]), wire: Self.report([]))
    #expect(merged.verdict == .pass)
    #expect(merged.reasons.isEmpty)
  }

  @Test func aWireThatCannotVouchMakesTheRunInconclusive() {
    let missing = InconclusiveReason(.positiveControlMissing, "never captured")
    let merged = DeviceLinkCapture.merge(
      device: Self.report([]), wire: Self.report([], reasons: [missing]))
    #expect(merged.verdict == .inconclusive)
    #expect(merged.reasons.map(\.kind) == [.positiveControlMissing])
    #expect(merged.reasons.first?.detail.contains("far end of the device's link (dev0)") == true)
  }

  @Test func theWireCaptureOpensOnTheCensorsEndOfTheDevicesLink() {
    let names = SandboxNames(prefix: "fctest")
    let deviceLink = Topology.linkCommands(names)[0]
    #expect(deviceLink.contains(AddressPlan.deviceInterface))
    #expect(deviceLink.contains(AddressPlan.censorDeviceInterface))
    #expect(
      DeviceLinkCapture.wirePcapPath(beside: "/tmp/run/capture.pcap")
        == "/tmp/run/capture-wire.pcap")
  }
}
