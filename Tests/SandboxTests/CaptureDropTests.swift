import Audit
import Capture
import FailClosedSupport
import Foundation
import TestSupport
import Testing

@testable import Sandbox

/// A live capture on the device's link that drops packets can never vouch for a pass: its
/// verdict turns inconclusive with a reason naming the drops, and a leak it did see stays a
/// leak. Drops are provoked deterministically: a ring of a few frames, and an observer that
/// holds the capture thread for 2 ms per packet, against a flood from the device.
@Suite("Capture drops", .serialized)
struct CaptureDropTests {
  /// An allowed destination on the censor's side of the link; a socket there never reads, so
  /// a full receive buffer drops silently (no ICMP comes back).
  static let sink = SocketAddress("10.66.0.1:9000")!
  /// Not allowed: a datagram here is a leak.
  static let leakTarget = SocketAddress("10.66.0.1:4444")!
  static let tinyBuffer: Int32 = 64 << 10
  static let payload = [UInt8](repeating: 0x5A, count: 64)
  static let floodPackets = 5000

  /// A capture that cannot keep up: each packet holds the capture thread for 2 ms.
  static let slowConsumer: @Sendable (PacketObservation) -> Void = { _ in usleep(2000) }

  /// Runs `body` with a fresh sandbox, the sink bound in the censor and a UDP socket in the
  /// device, off the cooperative pool.
  static func withLink(
    _ body: @escaping @Sendable (SandboxRun, DatagramSocket) throws -> Void
  ) async throws {
    try await withSandbox { run in
      try await BlockingIO.run("test.capture-drops") {
        let sinkSocket = try run.censor.perform { try DatagramSocket.bound(to: sink) }
        defer { sinkSocket.close() }
        let sender = try run.device.perform { try DatagramSocket(.ipv4) }
        defer { sender.close() }
        try body(run, sender)
      }
    }
  }

  @Test(.needsRoot)
  func dropsMakeTheVerdictInconclusive() async throws {
    try await Self.withLink { run, sender in
      let capture = try run.openDeviceCapture(
        allowed: [(Endpoint(Self.sink), .udp)], pcapPath: nil, bufferSize: Self.tinyBuffer,
        observer: Self.slowConsumer)
      for _ in 0..<Self.floodPackets { try sender.send(Self.payload, to: Self.sink) }
      let report = capture.stop()
      #expect((report.capture?.dropped ?? 0) > 0, "\(AuditSummary.text(report))")
      #expect(report.statistics.leakPackets == 0)
      #expect(report.verdict == .inconclusive)
      let drops = report.reasons.first { $0.kind == .drops }
      #expect(drops?.detail.contains("dropped \(report.capture?.dropped ?? 0) packets") == true)
    }
  }

  /// The positive control: the same traffic with the normal buffer, a quick consumer and a
  /// low rate passes, so the test above fails for the drops and nothing else.
  @Test(.needsRoot)
  func theSameTrafficWithoutDropsPasses() async throws {
    try await Self.withLink { run, sender in
      let capture = try run.openDeviceCapture(allowed: [(Endpoint(Self.sink), .udp)], pcapPath: nil)
      for index in 0..<Self.floodPackets {
        try sender.send(Self.payload, to: Self.sink)
        if index % 50 == 0 { usleep(1000) }
      }
      #expect(waitUntil(timeout: 2, every: 0.01) { capture.packetsSeen > Self.floodPackets })
      let report = capture.stop()
      #expect(report.capture?.dropped == 0)
      #expect(report.verdict == .pass, "\(AuditSummary.text(report))")
      #expect(report.statistics.allowedPackets >= Self.floodPackets)
    }
  }

  /// A leak captured before the capture starts dropping is still reported as a leak.
  @Test(.needsRoot)
  func aLeakSeenWhileDroppingIsStillALeak() async throws {
    try await Self.withLink { run, sender in
      let capture = try run.openDeviceCapture(
        allowed: [(Endpoint(Self.sink), .udp)], pcapPath: nil, bufferSize: Self.tinyBuffer,
        observer: Self.slowConsumer)
      try sender.send(Self.payload, to: Self.leakTarget)
      #expect(waitUntil(timeout: 2, every: 0.01) { capture.leakPacketsSeen > 0 })
      for _ in 0..<Self.floodPackets { try sender.send(Self.payload, to: Self.sink) }
      let report = capture.stop()
      #expect((report.capture?.dropped ?? 0) > 0)
      #expect(report.verdict == .leak, "\(AuditSummary.text(report))")
      #expect(report.leaks.contains { $0.destination == "10.66.0.1:4444" })
      // The drops are still reported next to the leak.
      #expect(report.reasons.contains { $0.kind == .drops })
    }
  }

  /// Leaks inside a flood that overruns the capture: whatever the ring kept, never a pass; a
  /// leak packet that was captured makes it a leak, otherwise it is inconclusive.
  @Test(.needsRoot)
  func leaksInsideAnOverrunFloodNeverPass() async throws {
    try await Self.withLink { run, sender in
      let capture = try run.openDeviceCapture(
        allowed: [(Endpoint(Self.sink), .udp)], pcapPath: nil, bufferSize: Self.tinyBuffer,
        observer: Self.slowConsumer)
      for index in 0..<Self.floodPackets {
        try sender.send(Self.payload, to: index % 100 == 99 ? Self.leakTarget : Self.sink)
      }
      let report = capture.stop()
      #expect((report.capture?.dropped ?? 0) > 0)
      #expect(report.verdict != .pass)
      #expect(report.verdict == (report.statistics.leakPackets > 0 ? .leak : .inconclusive))
    }
  }
}
