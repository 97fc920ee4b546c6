import Foundation

/// The history sweep's table: one row per commit (its date, whether the lane built, bitchat's
/// own tests passed and failed, each scenario's verdict), the first commit where each verdict
/// changed, and the comparison with a list of expected rows (baselines/bitchat-history.json).
public struct BitchatSweepTable: Sendable, Equatable, Codable {
  public struct Row: Sendable, Equatable, Codable {
    public var commit: String
    public var date: String
    public var subject: String
    /// "ok", or "failed".
    public var build: String
    /// The build's diagnostic when it failed.
    public var diagnostic: String?
    /// bitchat's own tests: passed and failed (nil: not run).
    public var testsPassed: Int?
    public var testsFailed: Int?
    /// Scenario name -> verdict (pass, fail, leak, inconclusive, ...).
    public var verdicts: [String: String]
    /// Scenario name -> the report's first reason, for each verdict that is not a pass.
    public var reasons: [String: String]?

    public init(commit: BitchatHistory.Commit) {
      self.commit = commit.hash
      date = commit.date
      subject = commit.subject
      build = "not built"
      verdicts = [:]
    }
  }

  public var repository: String
  public var scenarios: [String]
  public var rows: [Row]

  public init(repository: String, scenarios: [String], rows: [Row] = []) {
    self.repository = repository
    self.scenarios = scenarios
    self.rows = rows
  }

  /// A verdict that differs from the row before's: (scenario or column, commit, before, after).
  public struct Change: Sendable, Equatable {
    public let column: String
    public let commit: String
    public let before: String
    public let after: String
  }

  /// Every change between consecutive rows, in each column: build, tests, each scenario.
  public var changes: [Change] {
    var found: [Change] = []
    for (previous, row) in zip(rows, rows.dropFirst()) {
      if previous.build != row.build {
        found.append(
          .init(column: "build", commit: row.commit, before: previous.build, after: row.build))
      }
      if Self.tests(previous) != Self.tests(row), previous.testsPassed != nil,
        row.testsPassed != nil
      {
        found.append(
          .init(
            column: "own tests", commit: row.commit, before: Self.tests(previous),
            after: Self.tests(row)))
      }
      for scenario in scenarios {
        let before = previous.verdicts[scenario] ?? "-"
        let after = row.verdicts[scenario] ?? "-"
        if before != after, before != "-", after != "-" {
          found.append(.init(column: scenario, commit: row.commit, before: before, after: after))
        }
      }
    }
    return found
  }

  static func tests(_ row: Row) -> String {
    guard let passed = row.testsPassed, let failed = row.testsFailed else { return "-" }
    return "\(passed)/\(failed)"
  }

  /// The table in Markdown: the rows, then the changes.
  public var markdown: String {
    var lines = [
      "# bitchat history sweep", "",
      "Repository: \(repository). \(rows.count) commits; own tests as passed/failed; "
        + "scenarios on the bitchat-source lane.", "",
    ]
    let header = ["commit", "date", "build", "own tests"] + scenarios
    lines.append("| " + header.joined(separator: " | ") + " |")
    lines.append("|" + header.map { _ in "---" }.joined(separator: "|") + "|")
    for row in rows {
      let cells =
        [String(row.commit.prefix(8)), String(row.date.prefix(10)), row.build, Self.tests(row)]
        + scenarios.map { row.verdicts[$0] ?? "-" }
      lines.append("| " + cells.joined(separator: " | ") + " |")
    }
    let failedBuilds = rows.filter { $0.build == "failed" }
    if !failedBuilds.isEmpty {
      lines += ["", "## Builds that failed", ""]
      for row in failedBuilds {
        lines.append("- \(row.commit.prefix(8)): \(row.diagnostic ?? "no diagnostic")")
      }
    }
    let explained = rows.filter { !($0.reasons ?? [:]).isEmpty }
    if !explained.isEmpty {
      lines += ["", "## Why, where a scenario did not pass", ""]
      for row in explained {
        for (scenario, reason) in (row.reasons ?? [:]).sorted(by: { $0.key < $1.key }) {
          lines.append(
            "- \(row.commit.prefix(8)) \(scenario) (\(row.verdicts[scenario] ?? "-")): \(reason)")
        }
      }
    }
    lines += ["", "## Where a verdict changed", ""]
    let changes = self.changes
    if changes.isEmpty { lines.append("No verdict changed between consecutive commits.") }
    for change in changes {
      let subject = rows.first { $0.commit == change.commit }?.subject ?? ""
      lines.append(
        "- \(change.column): \(change.before) -> \(change.after) at \(change.commit.prefix(8)) (\(subject))"
      )
    }
    return lines.joined(separator: "\n") + "\n"
  }

  /// Differences from the expected rows (same commits): each names the commit and the column.
  public func differences(from expected: BitchatSweepTable) -> [String] {
    var found: [String] = []
    for want in expected.rows {
      guard let got = rows.first(where: { $0.commit == want.commit }) else {
        found.append("\(want.commit.prefix(8)): not swept")
        continue
      }
      if got.build != want.build {
        found.append("\(want.commit.prefix(8)) build: expected \(want.build), got \(got.build)")
      }
      if want.testsPassed != nil, Self.tests(got) != Self.tests(want) {
        found.append(
          "\(want.commit.prefix(8)) own tests: expected \(Self.tests(want)), got \(Self.tests(got))"
        )
      }
      for (scenario, verdict) in want.verdicts.sorted(by: { $0.key < $1.key })
      where got.verdicts[scenario] != verdict {
        found.append(
          "\(want.commit.prefix(8)) \(scenario): expected \(verdict), got \(got.verdicts[scenario] ?? "-")"
        )
      }
    }
    return found
  }

  public func json() throws -> Data {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    return try encoder.encode(self)
  }

  /// Reads a table written by ``json()``; a malformed file is named with the decoder's reason.
  public static func read(_ path: String) throws(BitchatSourceError) -> BitchatSweepTable {
    guard let data = FileManager.default.contents(atPath: path) else {
      throw .malformedSweepTable(path, "no such file")
    }
    do {
      return try JSONDecoder().decode(BitchatSweepTable.self, from: data)
    } catch {
      throw .malformedSweepTable(path, "not a sweep table: \(error)")
    }
  }
}
