import Audit
import FailClosedCLI
import Foundation
import SyntheticTraffic
import Testing

@Suite struct GenPcapCommandTests {
  @Test func aGeneratedCaptureHoldsEveryLeakClassAndTheGuardsPass() async throws {
    let path = FileManager.default.temporaryDirectory
      .appendingPathComponent("fc-gen-\(getpid()).pcap").path
    defer { try? FileManager.default.removeItem(atPath: path) }
    let reportDirectory = path + ".report"
    defer { try? FileManager.default.removeItem(atPath: reportDirectory) }
    #expect(
      await FailClosedMain.run(["gen-pcap", path, "--packets", "5000", "--leak-every", "50"]) == 0)
    let allow =
      TrafficGenerator.guards.flatMap { ["--allow", $0.description] } + [
        "--device-mac", "02:00:00:00:00:01",
      ]
    #expect(
      await FailClosedMain.run(["audit", path, "--report", reportDirectory] + allow) == 5)
    let data = try Data(contentsOf: URL(fileURLWithPath: reportDirectory + "/audit.json"))
    let report = try JSONDecoder().decode(AuditReport.self, from: data)
    #expect(report.statistics.packets == 5000)
    #expect(report.statistics.leakPackets == 100)
    #expect(Set(report.leaks.map(\.leakClass)) == Set(LeakClass.allCases))
    #expect(report.linkControl.total == 5)
    #expect(report.statistics.allowedPackets == 5000 - 100 - 5)
  }

  @Test func badArgumentsAreUsageErrors() async {
    #expect(await FailClosedMain.run(["gen-pcap"]) == 2)
    #expect(await FailClosedMain.run(["gen-pcap", "/tmp/x.pcap", "--packets", "0"]) == 2)
    #expect(await FailClosedMain.run(["gen-pcap", "/tmp/x.pcap", "--link", "wifi"]) == 2)
    #expect(
      await FailClosedMain.run(["gen-pcap", "/nonexistent/dir/x.pcap", "--packets", "1"]) == 2)
  }
}
