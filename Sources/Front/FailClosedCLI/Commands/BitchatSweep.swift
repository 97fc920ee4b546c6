import BitchatSource
import FailClosedSupport
import Foundation

/// `failclosed bitchat-source --sweep REPO`: each commit of bitchat's history that touches the
/// Tor layer, exported, built, bitchat's own tests run on it and the bitchat scenarios (or a
/// named subset) run on the bitchat-source lane, one row per commit in one table. Each step is
/// this executable run again as a child (`bitchat-source build`, `bitchat-tests`,
/// `leak-audit`), so one commit's failure is a cell of the table, never the sweep's end; the
/// table is written after every commit, so nothing already swept is lost.
struct BitchatSweep {
  let history: BitchatHistory
  let commits: [BitchatHistory.Commit]
  let scenarios: [String]
  let lane: String
  let runTests: Bool
  let cache: String?
  let report: String
  let scenarioDirectory: String

  /// This executable, to run each step as a child.
  static var executable: String {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
      ?? CommandLine.arguments[0]
  }

  func run(progress: (String) -> Void) throws -> BitchatSweepTable {
    try FileManager.default.createDirectory(atPath: report, withIntermediateDirectories: true)
    var table = BitchatSweepTable(repository: history.repository, scenarios: scenarios)
    let exports = (cache ?? UserCacheDirectory.root()) + "/bitchat-sweep"
    for (number, commit) in commits.enumerated() {
      let started = Date()
      var row = BitchatSweepTable.Row(commit: commit)
      let directory = report + "/" + String(commit.hash.prefix(12))
      try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
      do {
        let checkout = try history.export(commit, under: exports)
        try sweep(checkout, into: &row, logs: directory)
      } catch {
        row.build = "failed"
        row.diagnostic = "export: \(error)"
      }
      table.rows.append(row)
      try write(table)
      progress(
        "sweep \(number + 1)/\(commits.count) \(commit.hash.prefix(8)) \(commit.date.prefix(10)): "
          + "build \(row.build), own tests \(row.testsPassed.map(String.init) ?? "-")/"
          + "\(row.testsFailed.map(String.init) ?? "-"), "
          + scenarios.map { "\($0) \(row.verdicts[$0] ?? "-")" }.joined(separator: ", ")
          + String(format: " (%.0f s)", Date().timeIntervalSince(started)))
    }
    return table
  }

  private func sweep(_ checkout: String, into row: inout BitchatSweepTable.Row, logs: String)
    throws
  {
    let build = try child(
      ["bitchat-source", "build", "--bitchat-src", checkout],
      log: logs + "/build.log")
    guard build.status == 0 else {
      row.build = "failed"
      row.diagnostic =
        build.text.split(separator: "\n").last { $0.hasPrefix("failclosed bitchat-source:") }
        .map(String.init) ?? "exit \(build.status); see \(logs)/build.log"
      return
    }
    row.build = "ok"
    if runTests {
      let tests = try child(
        ["bitchat-tests", "--bitchat-src", checkout, "--report", logs + "/tests"],
        log: logs + "/tests.log")
      // The table's "total  P  F  not-runnable  not-run" line.
      if let total = tests.text.split(separator: "\n").last(where: { $0.hasPrefix("total ") }) {
        let numbers = total.split(separator: " ").compactMap { Int($0) }
        if numbers.count >= 2 {
          row.testsPassed = numbers[0]
          row.testsFailed = numbers[1] + (numbers.count >= 4 ? numbers[3] : 0)
        }
      }
    }
    let paths = scenarios.map { scenarioDirectory + "/" + $0 + ".json" }
    let audit = try child(
      ["leak-audit"] + paths + [
        "--sut", "bitchat-source", "--bitchat-src", checkout, "--lane", lane, "--report",
        logs + "/scenarios",
      ], log: logs + "/scenarios.log")
    let reportPath = logs + "/scenarios/report.json"
    guard let data = FileManager.default.contents(atPath: reportPath),
      let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
      let results = object["scenarios"] as? [[String: Any]]
    else {
      for scenario in scenarios { row.verdicts[scenario] = "error (exit \(audit.status))" }
      return
    }
    for result in results {
      if let name = result["name"] as? String, let verdict = result["verdict"] as? String {
        row.verdicts[name] = verdict
        if verdict != "pass", let reason = (result["reasons"] as? [String])?.first {
          row.reasons = (row.reasons ?? [:]).merging([name: String(reason.prefix(500))]) { $1 }
        }
      }
    }
  }

  private func write(_ table: BitchatSweepTable) throws {
    try table.json().write(to: URL(fileURLWithPath: report + "/sweep.json"))
    try table.markdown.write(toFile: report + "/sweep.md", atomically: true, encoding: .utf8)
  }

  /// Runs this executable with `arguments`, its output kept in `log` and returned.
  /// (--cache reaches every step as $FAILCLOSED_CACHE, which each command reads.)
  func child(_ arguments: [String], log: String) throws -> (status: Int32, text: String) {
    FileManager.default.createFile(atPath: log, contents: nil)
    guard let handle = FileHandle(forWritingAtPath: log) else {
      throw SystemError("open(\(log))")
    }
    defer { try? handle.close() }
    let process = Process()
    // The child is told to stop (and tears its sandbox down) if the sweep dies first.
    process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
    process.arguments = ["--pdeathsig", "TERM", "--", Self.executable] + arguments
    if let cache {
      var environment = ProcessInfo.processInfo.environment
      environment["FAILCLOSED_CACHE"] = cache
      process.environment = environment
    }
    process.standardOutput = handle
    process.standardError = handle
    try process.run()
    process.waitUntilExit()
    let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
    return (process.terminationStatus, text)
  }
}
