import Foundation

/// The human-readable verdict: what `failclosed audit` and `failclosed exec` print.
public enum AuditSummary {
  public static func text(_ report: AuditReport, source: String? = nil) -> String {
    var lines: [String] = []
    let stats = report.statistics
    let headline: String
    switch report.verdict {
    case .pass: headline = "PASS: nothing left the device outside the policy"
    case .leak:
      headline =
        "LEAK: \(stats.leakPackets) packet(s) in \(report.leaks.count) leak(s) outside the policy"
    case .inconclusive: headline = "INCONCLUSIVE: the capture cannot vouch for a pass"
    }
    lines.append(headline)
    if let source { lines.append("  capture: \(source) (\(stats.linkType))") }
    lines.append(
      "  packets: \(stats.packets) (\(stats.bytes) bytes): \(stats.allowedPackets) allowed, "
        + "\(stats.controlPackets) control, \(stats.linkControlPackets) link control, "
        + "\(stats.leakPackets) leak, \(stats.leakReplyPackets) leak replies, "
        + "\(stats.inboundPackets) inbound"
        + (stats.undecidedPackets > 0 ? ", \(stats.undecidedPackets) undecided" : ""))
    if let capture = report.capture {
      lines.append(
        "  pcap_stats: received \(capture.received), dropped \(capture.dropped), "
          + "interface dropped \(capture.interfaceDropped)")
    }
    for reason in report.reasons {
      lines.append("  inconclusive: \(reason)")
    }
    if stats.flowOverflowPackets > 0 || stats.leakGroupOverflowPackets > 0 {
      lines.append(
        "  note: \(stats.flowOverflowPackets) packets beyond the flow cap, "
          + "\(stats.leakGroupOverflowPackets) beyond the leak-group cap (judged, not listed)")
    }
    for leak in report.leaks {
      var line =
        "  leak \(leak.leakClass.rawValue) \(leak.protocol) -> \(leak.destination)"
        + " first +\(String(format: "%.3f", leak.firstOffset))s"
        + " (\(isoTime(leak.firstTime))), \(leak.packets) packet(s), \(leak.bytes) bytes"
      if !leak.names.isEmpty { line += ", names: " + leak.names.joined(separator: ", ") }
      if let reason = leak.reason, reason != LeakReason.destinationNotAllowed.rawValue {
        line += ", \(reason)"
      }
      if let direction = leak.direction { line += " [\(direction)]" }
      lines.append(line)
      if let evidence = leak.evidence { lines.append("    evidence: \(evidence)") }
      if leak.reason != LeakReason.destinationNotAllowed.rawValue, let sample = leak.sample {
        lines.append("    first bytes: \(sample)")
      }
    }
    let control = report.linkControl
    if control.total > 0 {
      lines.append(
        "  link control (not leaks): arp \(control.arp), neighbour discovery "
          + "\(control.neighbourDiscovery), mld \(control.mld), igmp \(control.igmp)")
    }
    return lines.joined(separator: "\n")
  }

  static func isoTime(_ seconds: Double) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return formatter.string(from: Date(timeIntervalSince1970: seconds))
  }
}

extension AuditReport {
  /// Pretty-printed JSON with sorted keys (stable for diffs and tests).
  public func jsonData() throws -> Data {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    return try encoder.encode(self)
  }
}
