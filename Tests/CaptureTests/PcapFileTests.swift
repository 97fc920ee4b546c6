import Audit
import Capture
import Foundation
import Glibc
import SyntheticTraffic
import Testing

@Suite struct PcapFileTests {
  static let guardEndpoint = Endpoint("10.88.1.10:9001")!
  static let device = Endpoint("10.88.0.2:41000")!

  func temporaryPath(_ name: String) -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent(
      "fc-pcap-\(getpid())-\(name)"
    ).path
  }

  /// Writes `count` allowed packets, with a DNS leak at `leakAt` if given.
  func writeCapture(_ path: String, count: Int, leakAt: Int? = nil) throws {
    let writer = try PcapWriter(path: path, linkType: .ethernet)
    for index in 0..<count {
      let packet =
        index == leakAt
        ? FrameBuilder.udpPacket(
          from: Self.device, to: Endpoint("10.88.1.20:53")!,
          payload: FrameBuilder.dnsQuery(name: "early.example"))
        : FrameBuilder.tcpPacket(from: Self.device, to: Self.guardEndpoint, payload: [1, 2, 3])
      writer.write(
        timestamp: 1_700_000_000_000_000_000 + Int64(index) * 1_000_000,
        frame: FrameBuilder.frame(.ethernet, ip: packet))
    }
    writer.close()
  }

  func cut(_ path: String, by bytes: Int) throws {
    let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int
    #expect(Glibc.truncate(path, off_t(size - bytes)) == 0)
  }

  @Test func aCleanFileWithOnlyAllowedTrafficPasses() throws {
    let path = temporaryPath("clean.pcap")
    defer { try? FileManager.default.removeItem(atPath: path) }
    try writeCapture(path, count: 10)
    let report = try PcapFileReader.audit(
      path: path, policy: AuditPolicy(allowed: [(Self.guardEndpoint, .tcp)]))
    #expect(report.verdict == .pass)
    #expect(report.statistics.packets == 10)
  }

  @Test func aTruncatedFileKeepsItsPacketsAndTurnsInconclusive() throws {
    let path = temporaryPath("cut.pcap")
    defer { try? FileManager.default.removeItem(atPath: path) }
    try writeCapture(path, count: 10)
    try cut(path, by: 5)
    let report = try PcapFileReader.audit(
      path: path, policy: AuditPolicy(allowed: [(Self.guardEndpoint, .tcp)]))
    #expect(report.verdict == .inconclusive)
    #expect(report.statistics.packets == 9)
    let reason = try #require(report.reasons.first)
    #expect(reason.kind == .unreadableFile)
    #expect(reason.detail.contains(path))
    #expect(reason.detail.contains("packet 10"))
    #expect(reason.detail.contains("byte offset"))
  }

  @Test func aLeakBeforeTheDamageIsStillALeak() throws {
    let path = temporaryPath("leak-cut.pcap")
    defer { try? FileManager.default.removeItem(atPath: path) }
    try writeCapture(path, count: 10, leakAt: 2)
    try cut(path, by: 30)
    let report = try PcapFileReader.audit(
      path: path, policy: AuditPolicy(allowed: [(Self.guardEndpoint, .tcp)]))
    #expect(report.verdict == .leak)
    #expect(report.leaks.first?.names == ["early.example"])
    #expect(report.reasons.map(\.kind) == [.unreadableFile])
  }

  /// Cutting the file at every length never crashes and never passes a damaged file.
  @Test func everyCutOfAFileIsJudgedSafely() throws {
    let path = temporaryPath("every.pcap")
    defer { try? FileManager.default.removeItem(atPath: path) }
    try writeCapture(path, count: 3)
    let full = try Data(contentsOf: URL(fileURLWithPath: path))
    let cutPath = temporaryPath("every-cut.pcap")
    defer { try? FileManager.default.removeItem(atPath: cutPath) }
    // 24-byte file header, then records of 16 bytes + a 57-byte frame.
    let boundaries = Set((0...3).map { 24 + $0 * 73 })
    for length in 0..<full.count {
      try full.prefix(length).write(to: URL(fileURLWithPath: cutPath))
      do {
        let report = try PcapFileReader.audit(
          path: cutPath, policy: AuditPolicy(allowed: [(Self.guardEndpoint, .tcp)]))
        // A cut exactly between records is a valid shorter file; anything else is damage.
        if report.verdict == .pass {
          #expect(report.reasons.isEmpty)
          let atBoundary = boundaries.contains(length)
          #expect(atBoundary, "cut at \(length)")
        }
      } catch let error as CaptureError {
        #expect(error.message.contains(cutPath))
        #expect(length < 24, "cut at \(length): \(error)")
      }
    }
  }

  @Test func aFileThatIsNotAPcapIsAClearError() throws {
    let path = temporaryPath("notes.txt")
    defer { try? FileManager.default.removeItem(atPath: path) }
    try Data("hello, not a capture\n".utf8).write(to: URL(fileURLWithPath: path))
    #expect {
      _ = try PcapFileReader.audit(path: path, policy: AuditPolicy())
    } throws: { error in
      (error as? CaptureError)?.message.contains(path) == true
    }
    #expect(throws: CaptureError.self) {
      _ = try PcapFileReader(path: temporaryPath("does-not-exist.pcap"))
    }
  }

  func writePcapng(_ path: String, offset: Int64? = nil, stamps: [UInt64]) throws {
    var file = PcapngBuilder()
    file.addInterface(timeOffsetSeconds: offset)
    let frame = FrameBuilder.frame(
      .ethernet,
      ip: FrameBuilder.tcpPacket(from: Self.device, to: Self.guardEndpoint, payload: [1, 2, 3]))
    for stamp in stamps { file.addPacket(microseconds: stamp, frame: frame) }
    try Data(file.bytes).write(to: URL(fileURLWithPath: path))
  }

  /// Found by an adversarial probe: a timestamp past 2262 overflowed Int64 nanoseconds and
  /// crashed the audit. Now the packets before it are kept and the verdict is inconclusive.
  @Test func aPcapngTimestampPast2262IsDamageNotACrash() throws {
    let path = temporaryPath("far-future.pcapng")
    defer { try? FileManager.default.removeItem(atPath: path) }
    // 1.7e15 us is 2023; 1e16 us is the year 2286.
    try writePcapng(path, stamps: [1_700_000_000_000_000, 10_000_000_000_000_000])
    let report = try PcapFileReader.audit(
      path: path, policy: AuditPolicy(allowed: [(Self.guardEndpoint, .tcp)]))
    #expect(report.verdict == .inconclusive)
    #expect(report.statistics.packets == 1)
    let reason = try #require(report.reasons.first)
    #expect(reason.kind == .unreadableFile)
    #expect(reason.detail.contains("packet 2 has a timestamp out of range"))
    #expect(reason.detail.contains(path))
  }

  @Test func aHugeInterfaceTimeOffsetIsDamageNotACrash() throws {
    let path = temporaryPath("tsoffset.pcapng")
    defer { try? FileManager.default.removeItem(atPath: path) }
    try writePcapng(path, offset: 1 << 62, stamps: [1_700_000_000_000_000])
    let report = try PcapFileReader.audit(
      path: path, policy: AuditPolicy(allowed: [(Self.guardEndpoint, .tcp)]))
    #expect(report.verdict == .inconclusive)
    #expect(report.reasons.first?.detail.contains("packet 1 has a timestamp out of range") == true)
  }

  /// The positive control: a pcapng within range, offset included, passes.
  @Test func aPcapngWithAnOrdinaryOffsetPasses() throws {
    let path = temporaryPath("ordinary.pcapng")
    defer { try? FileManager.default.removeItem(atPath: path) }
    try writePcapng(path, offset: 3600, stamps: [1_700_000_000_000_000, 1_700_000_000_100_000])
    let report = try PcapFileReader.audit(
      path: path, policy: AuditPolicy(allowed: [(Self.guardEndpoint, .tcp)]))
    #expect(report.verdict == .pass)
    #expect(report.statistics.packets == 2)
  }

  /// A pcapng cut at every byte offset: a clear error or an inconclusive partial result,
  /// never a crash, never a pass unless the cut falls between blocks.
  @Test func everyCutOfAPcapngIsJudgedSafely() throws {
    let path = temporaryPath("every.pcapng")
    defer { try? FileManager.default.removeItem(atPath: path) }
    try writePcapng(path, stamps: [1_700_000_000_000_000, 1_700_000_000_100_000])
    let full = try Data(contentsOf: URL(fileURLWithPath: path))
    let cutPath = temporaryPath("every-cut.pcapng")
    defer { try? FileManager.default.removeItem(atPath: cutPath) }
    // Section header 28 bytes, interface 20, then packet blocks of 32 + 60 (57 padded) bytes.
    let boundaries = Set([48, 48 + 92, 48 + 184])
    for length in 0..<full.count {
      try full.prefix(length).write(to: URL(fileURLWithPath: cutPath))
      do {
        let report = try PcapFileReader.audit(
          path: cutPath, policy: AuditPolicy(allowed: [(Self.guardEndpoint, .tcp)]))
        if report.verdict == .pass {
          #expect(report.reasons.isEmpty)
          #expect(boundaries.contains(length), "cut at \(length)")
        } else {
          #expect(report.verdict == .inconclusive, "cut at \(length)")
        }
      } catch let error as CaptureError {
        #expect(error.message.contains(cutPath))
        #expect(length < 48, "cut at \(length): \(error)")
      }
    }
  }
}
