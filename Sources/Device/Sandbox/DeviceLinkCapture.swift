import Audit
import Capture
import Foundation

/// The device's link captured at both ends, audited as one.
///
/// The device's capture (its `eth0`, opened inside the device) sees what the device's packet
/// taps see, and a program in the device can skip them: frames sent through an AF_PACKET
/// socket with PACKET_QDISC_BYPASS go out by dev_direct_xmit, which never calls the taps. The
/// frames still cross the veth, and the censor's end (`dev0`) receives them like any other,
/// its receive taps seeing them before any nftables hook. So a second capture, the wire
/// capture, sits there with the same policy read from the far end (``AuditPolicy/farEndOfLink``),
/// and its leaks count. The device capture stays the report's body (its pcap, flows and
/// statistics are what users read); the wire adds what only it saw.
public final class DeviceLinkCapture: Sendable {
  public let device: LiveCapture
  public let wire: LiveCapture

  public init(device: LiveCapture, wire: LiveCapture) {
    self.device = device
    self.wire = wire
  }

  /// What the evidence of a leak only the wire capture saw begins with.
  public static let farEndOnlyNote =
    "seen only at the far end of the device's link (the censor's "
    + "\(AddressPlan.censorDeviceInterface)), not by the device's capture: the device's packet "
    + "taps were bypassed (e.g. an AF_PACKET socket with PACKET_QDISC_BYPASS)"

  /// The wire capture's file beside the device's: `dir/capture.pcap` -> `dir/capture-wire.pcap`.
  public static func wirePcapPath(beside path: String) -> String {
    let url = URL(fileURLWithPath: path)
    let stem = url.deletingPathExtension().lastPathComponent
    let ext = url.pathExtension.isEmpty ? "pcap" : url.pathExtension
    return url.deletingLastPathComponent().appendingPathComponent("\(stem)-wire.\(ext)").path
  }

  /// The device capture's counts (its packets are the report's); leak packets seen at either end.
  public var packetsSeen: Int { device.packetsSeen }
  public var controlPacketsSeen: Int { min(device.controlPacketsSeen, wire.controlPacketsSeen) }
  public var leakPacketsSeen: Int { max(device.leakPacketsSeen, wire.leakPacketsSeen) }

  /// A reason the run cannot vouch for a pass, for the whole run.
  public func noteInconclusive(_ reason: InconclusiveReason) {
    device.noteInconclusive(reason)
  }

  /// Stops both captures (each drains its ring first) and returns the merged report.
  public func stop() -> AuditReport {
    // Both drain and release their rings at once.
    device.requestStop()
    wire.requestStop()
    let deviceReport = device.awaitStop()
    return Self.merge(device: deviceReport, wire: wire.awaitStop())
  }

  /// The run's report from both ends. Pure.
  ///
  /// Leaks are not listed twice: the device's leak groups (class, protocol, destination) stay
  /// as they are, and a wire leak group is added only when the device saw no leak in the same
  /// group, with ``farEndOnlyNote`` at the head of its evidence. Grouping is the audit's own
  /// unit, so a leak seen at both ends is one record, and a bypassing sender is caught whenever
  /// it sends anything the device capture did not already report as a leak; one that sends
  /// only into a group the device already reported is not listed apart, and the verdict is a
  /// leak either way. The wire's reasons for inconclusiveness (drops, no positive control)
  /// count too, named as the far end's: a wire that cannot vouch cannot rule out a bypass.
  public static func merge(device: AuditReport, wire: AuditReport) -> AuditReport {
    func group(_ leak: LeakRecord) -> [String] {
      [leak.leakClass.rawValue, leak.protocol, leak.destination]
    }
    let reported = Set(device.leaks.map(group))
    let onlyOnWire = wire.leaks.filter { !reported.contains(group($0)) }.map { leak in
      var leak = leak
      leak.evidence = farEndOnlyNote + (leak.evidence.map { "; " + $0 } ?? "")
      return leak
    }
    var merged = device
    merged.leaks += onlyOnWire
    merged.statistics.leakPackets += onlyOnWire.reduce(0) { $0 + $1.packets }
    merged.reasons += wire.reasons.map { reason in
      InconclusiveReason(
        reason.kind,
        "at the far end of the device's link (\(AddressPlan.censorDeviceInterface)): "
          + reason.detail)
    }
    merged.verdict =
      device.verdict == .leak || wire.verdict == .leak
      ? .leak : (merged.reasons.isEmpty ? .pass : .inconclusive)
    return merged
  }
}
