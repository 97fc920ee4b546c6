import Foundation
import Scenarios

/// A whole comparison (`leak-audit --compare A,B`): every scenario on both sides, item by item.
/// Rendered for the terminal, as report.json (with both sides' observations, which
/// `--compare-reuse` reads back), summary.md and index.html. The renderers are pure.
public struct ComparisonReport: Sendable, Equatable {
  public struct Row: Sendable, Equatable {
    public var comparison: ScenarioComparison
    public var a: ComparisonObservation
    public var b: ComparisonObservation

    public init(comparison: ScenarioComparison, a: ComparisonObservation, b: ComparisonObservation)
    {
      self.comparison = comparison
      self.a = a
      self.b = b
    }
  }

  public var sideA: String
  public var sideB: String
  public var tolerance: Double
  public var startedAt: String
  public var rows: [Row]

  public init(sideA: String, sideB: String, tolerance: Double, startedAt: String, rows: [Row]) {
    self.sideA = sideA
    self.sideB = sideB
    self.tolerance = tolerance
    self.startedAt = startedAt
    self.rows = rows
  }

  public var differenceCount: Int { rows.map(\.comparison.differences.count).reduce(0, +) }
  public var unexplainedCount: Int { rows.map(\.comparison.unexplained.count).reduce(0, +) }
  public var explainedCount: Int { differenceCount - unexplainedCount }

  /// A side that could not run (a run error) leaves the comparison undecided.
  public var undecided: [String] {
    rows.filter { $0.a.runError != nil || $0.b.runError != nil }.map(\.comparison.scenario)
  }

  /// 0 when every difference is explained, 5 on an unexplained one, 2 when a side could not
  /// run a scenario or nothing was compared.
  public var exitCode: Int32 {
    if unexplainedCount > 0 { return 5 }
    if rows.isEmpty || !undecided.isEmpty { return 2 }
    return 0
  }

  public var sentence: String {
    let same = rows.filter { $0.comparison.differences.isEmpty }.count
    return
      "\(rows.count) scenario\(rows.count == 1 ? "" : "s") on \(sideA) and \(sideB): "
      + "\(same) the same, \(differenceCount) difference\(differenceCount == 1 ? "" : "s") "
      + "(\(explainedCount) explained, \(unexplainedCount) unexplained)"
  }

  // MARK: - Terminal

  public func terminalText() -> String {
    var lines: [String] = []
    for row in rows {
      let c = row.comparison
      let mark = c.unexplained.isEmpty ? (c.differences.isEmpty ? "same" : "explained") : "DIFFERS"
      lines.append(
        "\(c.scenario): \(mark)  [\(sideA) \(row.a.verdict), \(sideB) \(row.b.verdict)]")
      for item in c.differences {
        lines.append("  \(item.status == .explained ? "~" : "!") \(item.key): \(item.title)")
        lines.append("      \(sideA): \(item.a)")
        lines.append("      \(sideB): \(item.b)")
        if let why = item.explanation { lines.append("      explained: \(why)") }
      }
    }
    lines.append(sentence)
    return lines.joined(separator: "\n")
  }

  // MARK: - report.json

  struct JSONRow: Codable {
    struct JSONItem: Codable {
      var key: String
      var title: String
      var a: String
      var b: String
      var status: ScenarioComparison.Status
      var explanation: String?
    }
    var scenario: String
    var differences: Int
    var unexplained: Int
    var items: [JSONItem]
    var a: ComparisonObservation
    var b: ComparisonObservation
  }

  struct JSONDocument: Codable {
    var format = "failclosed-comparison"
    var formatVersion = 1
    var startedAt: String
    var sides: [String]
    var toleranceSeconds: Double
    var summary: String
    var exitCode: Int32
    var differences: Int
    var explained: Int
    var unexplained: Int
    var scenarios: [JSONRow]
  }

  public func jsonText() -> String {
    let document = JSONDocument(
      startedAt: startedAt, sides: [sideA, sideB], toleranceSeconds: tolerance,
      summary: sentence, exitCode: exitCode, differences: differenceCount,
      explained: explainedCount, unexplained: unexplainedCount,
      scenarios: rows.map { row in
        JSONRow(
          scenario: row.comparison.scenario, differences: row.comparison.differences.count,
          unexplained: row.comparison.unexplained.count,
          items: row.comparison.items.map {
            .init(
              key: $0.key, title: $0.title, a: $0.a, b: $0.b, status: $0.status,
              explanation: $0.explanation)
          }, a: row.a, b: row.b)
      })
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    let data = (try? encoder.encode(document)) ?? Data()
    return String(decoding: data, as: UTF8.self) + "\n"
  }

  /// One side's observations from an earlier comparison's report.json, by scenario name.
  public static func observations(fromJSON data: [UInt8], side: String) throws
    -> [String: ComparisonObservation]
  {
    let document = try JSONDecoder().decode(JSONDocument.self, from: Data(data))
    guard let index = document.sides.firstIndex(of: side) else {
      throw ComparisonReuseError(
        message: "has sides \(document.sides.joined(separator: ",")), not \(side)")
    }
    var result: [String: ComparisonObservation] = [:]
    for row in document.scenarios { result[row.scenario] = index == 0 ? row.a : row.b }
    return result
  }

  // MARK: - summary.md

  public func markdown() -> String {
    var out = "# Comparison: \(sideA) and \(sideB)\n\n\(sentence).\n\n"
    out += "Times count as the same within \(ScenarioComparison.seconds(tolerance)) "
    out += "(docs/linux-differences.md, \"Time\").\n\n"
    out += "| scenario | \(sideA) | \(sideB) | differences | unexplained |\n|---|---|---|---|---|\n"
    for row in rows {
      let c = row.comparison
      out += "| \(c.scenario) | \(row.a.verdict) | \(row.b.verdict) | \(c.differences.count) "
      out += "| \(c.unexplained.count) |\n"
    }
    for row in rows where !row.comparison.differences.isEmpty {
      out += "\n## \(row.comparison.scenario)\n\n| item | \(sideA) | \(sideB) | status |\n"
      out += "|---|---|---|---|\n"
      for item in row.comparison.differences {
        let status = item.explanation.map { "explained: \($0)" } ?? "**unexplained**"
        out += "| \(cell(item.key + ": " + item.title)) | \(cell(item.a)) | \(cell(item.b)) "
        out += "| \(cell(status)) |\n"
      }
    }
    return out
  }

  func cell(_ text: String) -> String {
    text.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
  }

  // MARK: - index.html

  public func html() -> String {
    var out = """
      <!DOCTYPE html>
      <html lang="en"><head><meta charset="utf-8">
      <title>failclosed comparison: \(xmlEscaped(sideA)) and \(xmlEscaped(sideB))</title>
      <style>
      body{font-family:system-ui,sans-serif;margin:1.5em;max-width:110em}
      table{border-collapse:collapse;margin:.5em 0 1.5em}
      td,th{border:1px solid #ccc;padding:.25em .5em;vertical-align:top;text-align:left}
      .same{color:#2a7a2a}.explained{background:#fff7d6}.different{background:#fde0e0}
      </style></head><body>
      <h1>Comparison: \(xmlEscaped(sideA)) and \(xmlEscaped(sideB))</h1>
      <p>\(xmlEscaped(sentence)). Times count as the same within \
      \(ScenarioComparison.seconds(tolerance)) (docs/linux-differences.md, "Time").</p>

      """
    for row in rows {
      let c = row.comparison
      out += "<h2 id=\"\(xmlEscaped(c.scenario))\">\(xmlEscaped(c.scenario))</h2>\n"
      out += "<table><tr><th>item</th><th>\(xmlEscaped(sideA))</th>"
      out += "<th>\(xmlEscaped(sideB))</th><th>status</th></tr>\n"
      for item in c.items {
        let status = item.explanation.map { "explained: \($0)" } ?? item.status.rawValue
        out += "<tr class=\"\(item.status.rawValue)\"><td>\(xmlEscaped(item.key))<br>"
        out += "<small>\(xmlEscaped(item.title))</small></td><td>\(xmlEscaped(item.a))</td>"
        out += "<td>\(xmlEscaped(item.b))</td><td>\(xmlEscaped(status))</td></tr>\n"
      }
      out += "</table>\n"
    }
    return out + "</body></html>\n"
  }
}

/// `--compare-reuse FILE` could not supply a side.
public struct ComparisonReuseError: Error, CustomStringConvertible {
  public var message: String
  public var description: String { message }
}
