import Audit
import Capture
import FailClosedSupport
import Foundation
import TestSupport
import Testing

@Suite(.serialized) struct LiveCaptureTests {
  static let allowed = Endpoint("127.0.0.1:9001")!
  static let probe = SyncProbe(
    destination: Endpoint("127.0.0.1:9")!, payload: nil)

  @Test(.needsRoot)
  func capturesInANamespaceAndCatchesEachLeak() throws {
    let namespace = try TestNamespace()
    defer { namespace.remove() }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(namespace.name)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("capture.pcap").path

    let observed = ObservedCount()
    let capture = LiveCapture(
      .init(
        interface: "lo",
        policy: AuditPolicy(allowed: [(Self.allowed, .orPort)], syncProbe: Self.probe),
        pcapPath: path, prepareThread: { try namespace.enter() },
        observer: { if $0.disposition == .control { observed.add() } }))
    try capture.start()
    var stopped = false
    defer { if !stopped { _ = capture.stop() } }

    try namespace.shell("printf failclosed-sync-probe > /dev/udp/127.0.0.1/9")
    #expect(waitUntil(timeout: 5, every: 0.01) { capture.controlPacketsSeen > 0 })
    #expect(observed.value > 0)
    try namespace.shell("nc -z -w1 127.0.0.1 9001")  // allowed: SYN and the RST reply
    try namespace.shell("printf leak > /dev/udp/127.0.0.1/4444")
    try namespace.shell("nc -z -w1 127.0.0.1 9002")
    try namespace.shell("dig @127.0.0.1 canary.example +tries=1 +time=1")
    #expect(waitUntil(timeout: 5, every: 0.01) { capture.leakPacketsSeen >= 3 })
    let report = capture.stop()
    stopped = true

    #expect(report.verdict == .leak)
    let classes = Set(report.leaks.map(\.leakClass))
    #expect(classes.isSuperset(of: [.dns, .udp, .tcp]), "\(AuditSummary.text(report))")
    #expect(report.leaks.first { $0.leakClass == .dns }?.names.contains("canary.example") == true)
    #expect(!report.leaks.contains { $0.destination == "127.0.0.1:9001" })
    // The SYN to the allowed port is allowed; its RST reply comes from the allowed endpoint on
    // a loopback capture with no device address and no direction: undecided, never a pass.
    #expect(report.statistics.allowedPackets >= 1)
    #expect(report.statistics.undecidedPackets >= 1)
    #expect(report.statistics.controlPackets >= 1)
    #expect(report.capture?.dropped == 0)

    // The written file opens in tshark with the same packet count, and audits the same.
    let frames = try Spawner.capture([
      "tshark", "-r", path, "-T", "fields", "-e", "frame.number",
    ]).stdout
    #expect(frames.split(separator: "\n").count == report.statistics.packets)
    let offline = try PcapFileReader.audit(
      path: path, policy: AuditPolicy(allowed: [(Self.allowed, .orPort)], syncProbe: Self.probe))
    #expect(offline.verdict == .leak)
    #expect(offline.leaks.map(\.leakClass) == report.leaks.map(\.leakClass))
  }

  @Test(.needsRoot)
  func aQuietCaptureWithItsControlPassesAndWithoutItIsInconclusive() throws {
    let namespace = try TestNamespace()
    defer { namespace.remove() }
    let policy = AuditPolicy(allowed: [(Self.allowed, .orPort)], syncProbe: Self.probe)
    let quiet = try LiveCapture(
      .init(interface: "lo", policy: policy, prepareThread: { try namespace.enter() })
    ).start()
    let silent = quiet.stop()
    #expect(silent.verdict == .inconclusive)
    #expect(silent.reasons.map(\.kind) == [.noPackets])

    let capture = try LiveCapture(
      .init(interface: "lo", policy: policy, prepareThread: { try namespace.enter() })
    ).start()
    try namespace.shell("printf failclosed-sync-probe > /dev/udp/127.0.0.1/9")
    #expect(waitUntil(timeout: 5, every: 0.01) { capture.controlPacketsSeen > 0 })
    let report = capture.stop()
    #expect(report.verdict == .pass)
    #expect(report.capture != nil)
  }

  /// The disk is full while the capture writes its file (a tmpfs filled to its last page):
  /// the verdict is inconclusive, naming the file and ENOSPC, never the pass the packets alone
  /// give (the canary: before, the short file went unnoticed); the count of every packet is
  /// kept, and so is the file.
  @Test(.needsRoot(because: "mounts a tmpfs"))
  func aFullDiskDuringTheCaptureIsInconclusiveAndKeepsTheCounts() throws {
    let namespace = try TestNamespace()
    defer { namespace.remove() }
    let mountPoint = NSTemporaryDirectory() + "fc-capture-full-" + namespace.name
    try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: mountPoint) }
    let mounted = try Spawner.capture([
      "mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mountPoint,
    ])
    try #require(mounted.status == 0, "mount: \(mounted.stderr)")
    defer { _ = try? Spawner.capture(["umount", mountPoint]) }
    let filler = open(mountPoint + "/filler", O_WRONLY | O_CREAT, 0o600)
    let page = [UInt8](repeating: 0x20, count: 4096)
    while page.withUnsafeBytes({ write(filler, $0.baseAddress, $0.count) }) == 4096 {}
    close(filler)
    let path = mountPoint + "/capture.pcap"
    let policy = AuditPolicy(allowed: [(Self.allowed, .orPort)], syncProbe: Self.probe)
    let capture = LiveCapture(
      .init(
        interface: "lo", policy: policy, pcapPath: path,
        prepareThread: { try namespace.enter() }))
    try capture.start()
    var stopped = false
    defer { if !stopped { _ = capture.stop() } }
    // Only the positive control's probes, which alone make a pass.
    try namespace.shell(
      "for i in $(seq 1 10); do printf failclosed-sync-probe > /dev/udp/127.0.0.1/9; done")
    #expect(waitUntil(timeout: 5, every: 0.01) { capture.controlPacketsSeen >= 10 })
    let report = capture.stop()
    stopped = true

    #expect(report.verdict == .inconclusive, "\(AuditSummary.text(report))")
    let reason = report.reasons.first { $0.kind == .captureError }?.detail ?? ""
    #expect(reason.contains(path) && reason.contains("ENOSPC"), "\(report.reasons)")
    #expect(report.leaks.isEmpty)
    #expect(report.statistics.controlPackets >= 10, "every packet still counted")
    #expect(FileManager.default.fileExists(atPath: path))
  }

  @Test(.needsRoot)
  func aMissingInterfaceIsAClearError() throws {
    let namespace = try TestNamespace()
    defer { namespace.remove() }
    let capture = LiveCapture(
      .init(
        interface: "nosuch0", policy: AuditPolicy(), prepareThread: { try namespace.enter() }))
    #expect(throws: CaptureError.self) { try capture.start() }
    #expect(capture.stop().verdict == .inconclusive)
  }
}

/// A counter the observer (on the capture thread) bumps and the test reads.
final class ObservedCount: @unchecked Sendable {
  private let lock = NSLock()
  private var count = 0
  func add() { lock.withLock { count += 1 } }
  var value: Int { lock.withLock { count } }
}
