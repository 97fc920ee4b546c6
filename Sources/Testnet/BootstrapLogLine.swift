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
