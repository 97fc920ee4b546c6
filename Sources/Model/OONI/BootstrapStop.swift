import TorControl

/// Where tor's bootstrap stopped in a `vanilla_tor` or `torsf` measurement, and the same point
/// in today's tor (0.4.x tags): legacy tor (0.2.x/0.3.x) named and numbered its phases
/// differently ("5%: Connecting to directory server" is today's "5% (conn)").
public struct BootstrapStop: Sendable, Equatable, CustomStringConvertible {
  public enum Source: String, Sendable {
    /// `tor_progress` and `tor_progress_tag`.
    case fields
    /// The last "Bootstrapped N%" line of tor's log.
    case log
    /// torsf 0.1.0 keeps no progress: a bootstrap time and no failure mean 100%.
    case inferred
  }

  public var progress: Int
  /// As measured (legacy tags included); nil when the log line had none.
  public var tag: String?
  public var summary: String?
  public var source: Source
  /// Today's phase at the same point.
  public var phase: BootstrapPhase?

  public init(progress: Int, tag: String?, summary: String?, source: Source) {
    self.progress = progress
    self.tag = tag
    self.summary = summary
    self.source = source
    phase = BootstrapStop.modernPhase(progress: progress, tag: tag, summary: summary)
  }

  /// "5% conn_dir" / "100% done".
  public var description: String { "\(progress)% \(tag ?? summary ?? "(no tag)")" }

  /// Legacy tor's phases (0.2.x/0.3.x control.c): (progress, tag, summary, today's tag).
  static let legacy: [(progress: Int, tag: String, summary: String, modern: String)] = [
    (0, "starting", "Starting", "starting"),
    (5, "conn_dir", "Connecting to directory server", "conn"),
    (10, "handshake_dir", "Finishing handshake with directory server", "conn_done"),
    (15, "onehop_create", "Establishing an encrypted directory connection", "onehop_create"),
    (20, "requesting_status", "Asking for networkstatus consensus", "requesting_status"),
    (25, "loading_status", "Loading networkstatus consensus", "loading_status"),
    (40, "loading_keys", "Loading authority key certs", "loading_keys"),
    (45, "requesting_descriptors", "Asking for relay descriptors", "requesting_descriptors"),
    (50, "loading_descriptors", "Loading relay descriptors", "loading_descriptors"),
    (80, "conn_or", "Connecting to the Tor network", "ap_conn"),
    (85, "handshake_or", "Finishing handshake with first hop", "ap_handshake"),
    (90, "circuit_create", "Establishing a Tor circuit", "circuit_create"),
    (100, "done", "Done", "done"),
  ]

  static func modernPhase(progress: Int, tag: String?, summary: String?) -> BootstrapPhase? {
    if let tag, let phase = BootstrapPhase.named(tag) {
      // Today's tag at today's percentage (loading_descriptors spans 50-74).
      if phase.progress == progress
        || (tag == "loading_descriptors" && (50..<75).contains(progress))
      {
        return phase
      }
    }
    let row = BootstrapStop.legacy.first { row in
      if let tag { return row.tag == tag }
      return summary.map { $0.hasPrefix(row.summary) } ?? false
    }
    if let row { return BootstrapPhase.named(row.modern) }
    if tag == nil, let summary {
      return BootstrapPhase.all.first { summary.hasPrefix($0.summary) }
    }
    return nil
  }

  /// Parses "... [notice] Bootstrapped 5% (conn): Connecting to a relay" and the legacy
  /// "... Bootstrapped 5%: Connecting to directory server"; nil for any other line.
  public static func parseLogLine(_ line: String) -> (progress: Int, tag: String?, summary: String)?
  {
    guard let range = line.range(of: "Bootstrapped ") else { return nil }
    let rest = line[range.upperBound...]
    guard let percent = rest.firstIndex(of: "%"), let progress = Int(rest[..<percent]) else {
      return nil
    }
    var after = rest[rest.index(after: percent)...]
    var tag: String?
    if after.hasPrefix(" ("), let close = after.firstIndex(of: ")") {
      tag = String(after[after.index(after.startIndex, offsetBy: 2)..<close])
      after = after[after.index(after: close)...]
    }
    guard after.hasPrefix(": ") else { return nil }
    return (progress, tag, String(after.dropFirst(2)))
  }
}

extension BootstrapTestKeys {
  /// Where the bootstrap stopped: the progress fields; else the last bootstrap line of the log;
  /// else, for torsf 0.1.0, 100% when it reports a bootstrap time and no failure. nil when the
  /// measurement does not say (a failed torsf 0.1.0, a probe that never ran tor).
  public var stop: BootstrapStop? {
    if let progress, tag != nil || summary != nil {
      return BootstrapStop(progress: progress, tag: tag, summary: summary, source: .fields)
    }
    if let line = logs?.reversed().lazy.compactMap(BootstrapStop.parseLogLine).first {
      return BootstrapStop(
        progress: line.progress, tag: line.tag, summary: line.summary, source: .log)
    }
    if failure == nil, success != false, let bootstrapTime, bootstrapTime > 0 {
      return BootstrapStop(progress: 100, tag: "done", summary: "Done", source: .inferred)
    }
    return nil
  }
}
