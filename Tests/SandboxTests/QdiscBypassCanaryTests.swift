import Audit
import FailClosedSupport
import Foundation
import TestSupport
import Testing

@testable import Sandbox

/// A root program in the device that sends through an AF_PACKET socket with
/// PACKET_QDISC_BYPASS skips the device's packet taps (dev_direct_xmit never calls them), so
/// the device's own capture never sees the frame. The wire capture on the censor's end of the
/// link receives it: the run must fail with the leak, named as seen only there. The same frame
/// without the bypass is one leak (seen at both ends, listed once), and a clean run passes.
@Suite("Qdisc-bypass canary in the device")
struct QdiscBypassCanaryTests {
  /// Sends one DNS-looking UDP frame to the world's resolver from the device's eth0 through
  /// an AF_PACKET socket, with PACKET_QDISC_BYPASS (SOL_PACKET 263, option 20) when asked.
  static let script = """
    import socket, struct, sys
    def csum(b):
        s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
        s = (s >> 16) + (s & 0xffff); s += s >> 16
        return (~s) & 0xffff
    query = b'\\x12\\x34\\x01\\x00\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00' + b'\\x06bypass\\x07example\\x00\\x00\\x01\\x00\\x01'
    udp = struct.pack('!HHHH', 40000, 53, 8 + len(query), 0) + query
    h = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(udp), 7, 0, 64, 17, 0,
                    socket.inet_aton('10.66.0.2'), socket.inet_aton('10.66.1.53'))
    packet = h[:10] + struct.pack('!H', csum(h)) + h[12:] + udp
    link = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    if sys.argv[1] == 'bypass':
        link.setsockopt(263, 20, 1)
    link.bind(('eth0', 0))
    mac = bytes.fromhex(open('/sys/class/net/eth0/address').read().strip().replace(':', ''))
    link.send(b'\\xff' * 6 + mac + b'\\x08\\x00' + packet)
    """

  static func run(_ command: [String], reportDirectory: String? = nil) async throws
    -> AuditReport
  {
    let result = try await SandboxExec.run(
      SandboxExec.Options(
        command: command, tor: false, grace: 0.3, timeout: 20,
        reportDirectory: reportDirectory, commandOutput: "/dev/null"))
    #expect(result.commandStatus == 0, "the command failed")
    return result.report
  }

  @Test(.needsRoot)
  func aFrameThatBypassesTheDevicesTapsIsCaughtAtTheFarEnd() async throws {
    let report = try await Self.run(["python3", "-c", Self.script, "bypass"])
    let text = AuditSummary.text(report)
    #expect(report.verdict == .leak, "\(text)")
    #expect(report.leaks.count == 1, "\(text)")
    let leak = report.leaks.first
    #expect(leak?.leakClass == .dns)
    #expect(leak?.destination == "10.66.1.53:53")
    #expect(leak?.direction == "outbound")
    #expect(leak?.names == ["bypass.example"])
    #expect(leak?.evidence?.hasPrefix(DeviceLinkCapture.farEndOnlyNote) == true, "\(text)")
    #expect(report.statistics.leakPackets == 1, "\(text)")
  }

  @Test(.needsRoot)
  func theSameFrameThroughTheTapsIsOneLeakNotTwo() async throws {
    let report = try await Self.run(["python3", "-c", Self.script, "plain"])
    let text = AuditSummary.text(report)
    #expect(report.verdict == .leak, "\(text)")
    #expect(report.leaks.count == 1, "\(text)")
    #expect(report.leaks.first?.leakClass == .dns)
    #expect(report.leaks.first?.packets == 1, "\(text)")
    #expect(report.statistics.leakPackets == 1, "\(text)")
    // The device's capture saw it: no far-end note.
    #expect((report.leaks.first?.evidence ?? "").contains("far end") == false, "\(text)")
  }

  @Test(.needsRoot)
  func aCleanRunPassesAtBothEndsAndKeepsBothFiles() async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "failclosed-wire-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    ).path
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let report = try await Self.run(["true"], reportDirectory: directory)
    #expect(report.verdict == .pass, "\(AuditSummary.text(report))")
    #expect(report.reasons.isEmpty)
    let device = directory + "/capture.pcap"
    #expect(FileManager.default.fileExists(atPath: device))
    #expect(FileManager.default.fileExists(atPath: DeviceLinkCapture.wirePcapPath(beside: device)))
  }
}
