/// One moment of tor's own timeline: a bootstrap phase it reported, a problem it warned
/// about, a command its controller sent, a reply that did not come, a process change. Read
/// from the app's `tor` events (the control-port backends), and on the real-Tor lane also from
/// tor's notice log (`source` "log"), so a controller's blind spot still shows.
public struct TorTimelineEntry: Sendable, Equatable {
  /// Where the entry came from: the app's controller, or tor's log.
  public enum Source: String, Sendable, CaseIterable {
    case control, log
  }

  public var time: Double
  public var source: Source
  /// bootstrap, problem, command, reply-timeout, process (as the app names them).
  public var phase: String
  public var progress: Int?
  public var tag: String?
  public var summary: String?
  /// A problem's reason (CONNECTREFUSED, TIMEOUT, ...) and tor's running count of it.
  public var reason: String?
  public var count: Int?
  /// What the controller sent (GETINFO status/bootstrap-phase, SIGNAL HUP, SETCONF ...).
  public var command: String?
  public var detail: String?

  public init(
    time: Double, source: Source = .control, phase: String, progress: Int? = nil,
    tag: String? = nil, summary: String? = nil, reason: String? = nil, count: Int? = nil,
    command: String? = nil, detail: String? = nil
  ) {
    self.time = time
    self.source = source
    self.phase = phase
    self.progress = progress
    self.tag = tag
    self.summary = summary
    self.reason = reason
    self.count = count
    self.command = command
    self.detail = detail
  }

  public static let bootstrapPhase = "bootstrap"
  public static let problemPhase = "problem"
  public static let commandPhase = "command"

  public var isBootstrap: Bool { phase == Self.bootstrapPhase && progress != nil }
  public var isProblem: Bool { phase == Self.problemPhase }

  /// One line for people: "5% conn: Connecting to a relay", "problem CONNECTREFUSED x3 at 5%
  /// (conn)", "command SIGNAL HUP".
  public var line: String {
    var parts: [String] = []
    switch phase {
    case Self.bootstrapPhase:
      parts.append("\(progress.map { "\($0)%" } ?? "?")" + (tag.map { " \($0)" } ?? ""))
      if let summary, !summary.isEmpty { parts[0] += ": \(summary)" }
    case Self.problemPhase:
      parts.append("problem \(reason ?? "?")" + (count.map { " x\($0)" } ?? ""))
      if let progress { parts.append("at \(progress)%" + (tag.map { " (\($0))" } ?? "")) }
      if let summary, !summary.isEmpty { parts.append(summary) }
    case Self.commandPhase:
      parts.append("command \(command ?? detail ?? "")")
    default:
      parts.append(phase)
      if let command { parts.append(command) }
      if let detail { parts.append(detail) }
    }
    return parts.joined(separator: " ") + (source == .log ? " [log]" : "")
  }
}

extension TorTimelineEntry {
  /// Merges two timelines by time (stable: at equal times `a` first).
  public static func merged(_ a: [TorTimelineEntry], _ b: [TorTimelineEntry])
    -> [TorTimelineEntry]
  {
    (a.enumerated().map { (0, $0.offset, $0.element) }
      + b.enumerated().map { (1, $0.offset, $0.element) })
      .sorted { ($0.2.time, $0.0, $0.1) < ($1.2.time, $1.0, $1.1) }.map(\.2)
  }
}

extension Array where Element == TorTimelineEntry {
  /// The bootstrap step with the highest progress (the first to reach it).
  public var furthestBootstrap: TorTimelineEntry? {
    var best: TorTimelineEntry?
    for entry in self where entry.isBootstrap {
      if best == nil || entry.progress! > best!.progress! { best = entry }
    }
    return best
  }
}

/// A run of identical consecutive timeline entries (a controller polls every 0.15 s), for the
/// readable reports; report.json keeps every entry.
public struct CondensedTorEntry: Sendable, Equatable {
  public var entry: TorTimelineEntry
  public var repeats: Int
  public var lastTime: Double

  /// Collapses consecutive entries that differ only in time.
  public static func condense(_ entries: [TorTimelineEntry]) -> [CondensedTorEntry] {
    var out: [CondensedTorEntry] = []
    for entry in entries {
      if var last = out.last, sameExceptTime(last.entry, entry) {
        last.repeats += 1
        last.lastTime = entry.time
        out[out.count - 1] = last
      } else {
        out.append(CondensedTorEntry(entry: entry, repeats: 1, lastTime: entry.time))
      }
    }
    return out
  }

  static func sameExceptTime(_ a: TorTimelineEntry, _ b: TorTimelineEntry) -> Bool {
    var b = b
    b.time = a.time
    return a == b
  }

  /// "12.3 s  5% conn: Connecting to a relay", "0.2-60.1 s  command GETINFO ... (x400)".
  public var line: String {
    let when =
      repeats > 1
      ? "\(ExpectationJudge.seconds(entry.time))-\(ExpectationJudge.seconds(lastTime))"
      : ExpectationJudge.seconds(entry.time)
    return when + "  " + entry.line + (repeats > 1 ? " (x\(repeats))" : "")
  }
}
