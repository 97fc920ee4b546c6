import Foundation

/// A "Bootstrapped N% (tag): summary" line of tor's notice log, or a bootstrap warning: the
/// raw material of a bootstrap timeline when the harness reads a tor's log.
public struct BootstrapLogLine: Sendable, Equatable, Codable {
  public let progress: Int
  public let tag: String
  public let summary: String

  /// Parses one log line; nil when it is not a "Bootstrapped" line.
  public init?(_ line: Substring) {
    guard let range = line.range(of: "Bootstrapped ") else { return nil }
    let rest = line[range.upperBound...]
    guard let percent = rest.firstIndex(of: "%"), let progress = Int(rest[..<percent]) else {
      return nil
    }
    var tag = ""
    var summary = ""
    if let open = rest.firstIndex(of: "("), let close = rest.firstIndex(of: ")"), open < close {
      tag = String(rest[rest.index(after: open)..<close])
      let after = rest[rest.index(after: close)...]
      summary = after.hasPrefix(": ") ? String(after.dropFirst(2)) : String(after)
    }
    self.progress = progress
    self.tag = tag
    self.summary = summary
  }

  /// Every bootstrap line of a log, in order.
  public static func all(in log: String) -> [BootstrapLogLine] {
    log.split(separator: "\n").compactMap { BootstrapLogLine($0) }
  }
}

/// A "Problem bootstrapping. Stuck at N% (tag): ... (warning; REASON; count N; recommendation
/// R; host FP at IP:PORT)" line: what tor says when a censor bites.
public struct BootstrapProblemLine: Sendable, Equatable, Codable {
  public let progress: Int
  public let tag: String
  public let warning: String
  public let reason: String
  public let count: Int
  public let hostAddress: String?

  public init?(_ line: Substring) {
    guard let range = line.range(of: "Problem bootstrapping. Stuck at ") else { return nil }
    let rest = line[range.upperBound...]
    guard let percent = rest.firstIndex(of: "%"), let progress = Int(rest[..<percent]),
      let open = rest.firstIndex(of: "("), let close = rest.firstIndex(of: ")"), open < close,
      let detailOpen = rest.lastIndex(of: "("), let detailClose = rest.lastIndex(of: ")"),
      detailOpen < detailClose
    else { return nil }
    let fields = rest[rest.index(after: detailOpen)..<detailClose].split(separator: ";")
      .map { $0.trimmingCharacters(in: .whitespaces) }
    guard fields.count >= 3 else { return nil }
    self.progress = progress
    tag = String(rest[rest.index(after: open)..<close])
    warning = fields[0]
    reason = fields[1]
    count = fields.first { $0.hasPrefix("count ") }.flatMap { Int($0.dropFirst(6)) } ?? 0
    hostAddress = fields.first { $0.hasPrefix("host ") }?.split(separator: " ").last.map(
      String.init)
  }

  public static func all(in log: String) -> [BootstrapProblemLine] {
    log.split(separator: "\n").compactMap { BootstrapProblemLine($0) }
  }
}
