import Foundation

/// One finished test of bitchat's, as its runner reported it.
public struct BitchatTestOutcome: Sendable, Equatable {
  /// `Suite.test`.
  public let name: String
  public let passed: Bool
  public let seconds: Double
  public let failures: [String]

  public init(name: String, passed: Bool, seconds: Double = 0, failures: [String] = []) {
    self.name = name
    self.passed = passed
    self.seconds = seconds
    self.failures = failures
  }

  public var suite: String { String(name.prefix { $0 != "." }) }

  /// The XCTest runner's JSON lines (XCTestRegistration's observer). A line that is not JSON (a
  /// runner killed mid-write) is skipped.
  public static func parseXCTest(_ text: String) -> [BitchatTestOutcome] {
    text.split(separator: "\n").compactMap { line in
      guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
        let name = object["name"] as? String
      else { return nil }
      return BitchatTestOutcome(
        name: name, passed: object["passed"] as? Bool ?? false,
        seconds: object["seconds"] as? Double ?? 0, failures: object["failures"] as? [String] ?? [])
    }
  }

  /// Swift Testing's xUnit report: `<testcase classname="bitchatTests.Suite" name="x()" ...>`,
  /// failed when a `<failure` element is inside it.
  public static func parseXUnit(_ text: String) -> [BitchatTestOutcome] {
    var outcomes: [BitchatTestOutcome] = []
    var rest = Substring(text)
    while let start = rest.range(of: "<testcase ") {
      let afterStart = rest[start.upperBound...]
      guard let tagEnd = afterStart.firstIndex(of: ">") else { break }
      let tag = afterStart[..<tagEnd]
      let selfClosing = tag.hasSuffix("/")
      var body = Substring("")
      if selfClosing {
        rest = afterStart[afterStart.index(after: tagEnd)...]
      } else if let close = afterStart.range(of: "</testcase>") {
        body = afterStart[afterStart.index(after: tagEnd)..<close.lowerBound]
        rest = afterStart[close.upperBound...]
      } else {
        break
      }
      let suite = attribute("classname", in: tag).split(separator: ".").last.map(String.init) ?? ""
      let failures = body.components(separatedBy: "<failure").dropFirst().map {
        attribute("message", in: Substring($0))
      }
      outcomes.append(
        BitchatTestOutcome(
          name: suite + "." + attribute("name", in: tag), passed: failures.isEmpty,
          seconds: Double(attribute("time", in: tag)) ?? 0, failures: failures))
    }
    return outcomes
  }

  static func attribute(_ name: String, in tag: Substring) -> String {
    guard let start = tag.range(of: " \(name)=\"") ?? tag.range(of: "\(name)=\"") else { return "" }
    let value = tag[start.upperBound...].prefix { $0 != "\"" }
    return
      value
      .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
      .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
      .replacingOccurrences(of: "&amp;", with: "&")
  }
}

/// bitchat's tests' outcomes per file, held against the not-runnable list: what
/// `failclosed bitchat-tests` prints and judges.
public struct BitchatTestsReport: Sendable {
  public struct FileCounts: Sendable, Equatable {
    public let file: String
    public var passed = 0
    public var failed = 0
    public var notRunnable = 0
    /// Declared but never reported (the runner crashed or was killed first).
    public var notRun = 0
  }

  public private(set) var files: [FileCounts] = []
  /// Tests that failed and are not on the list: each a shim to fix.
  public private(set) var failures: [(name: String, file: String, messages: [String])] = []
  /// Listed tests that failed, with the list's reason.
  public private(set) var notRunnable: [(name: String, reason: String)] = []
  /// Faults of the list: a listed test that passed, a listed name no test has.
  public private(set) var listFaults: [String] = []
  public private(set) var notRun: [String] = []

  public var passed: Bool { failures.isEmpty && listFaults.isEmpty && notRun.isEmpty }
  public var totalPassed: Int { files.reduce(0) { $0 + $1.passed } }

  public init(
    tests: BitchatTestFiles, outcomes: [BitchatTestOutcome],
    notRunnableList: [BitchatNotRunnableTest] = BitchatNotRunnableTest.linux
  ) {
    let reasons = Dictionary(
      notRunnableList.map { ($0.name, $0.reason) }, uniquingKeysWith: { a, _ in a })
    let byName = Dictionary(outcomes.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
    var counts: [String: FileCounts] = [:]
    for file in tests.files where file.framework != .support {
      counts[file.relativePath] = FileCounts(file: file.relativePath)
    }
    var known = Set<String>()
    for (file, name) in tests.allTests {
      known.insert(name)
      guard let outcome = byName[name] else {
        counts[file]?.notRun += 1
        notRun.append(name)
        continue
      }
      record(outcome, file: file, reasons: reasons, counts: &counts)
    }
    // Tests the runners reported that the source scan did not find (declared some other way).
    for outcome in outcomes where !known.contains(outcome.name) {
      known.insert(outcome.name)
      let file = tests.file(declaring: outcome.suite) ?? "?"
      if counts[file] == nil { counts[file] = FileCounts(file: file) }
      record(outcome, file: file, reasons: reasons, counts: &counts)
    }
    for entry in notRunnableList where !known.contains(entry.name) {
      listFaults.append(
        "\(entry.name) is listed as not runnable on Linux, but no test has that name "
          + "(take it off BitchatNotRunnableTest.linux)")
    }
    files = counts.values.sorted { $0.file < $1.file }
  }

  private mutating func record(
    _ outcome: BitchatTestOutcome, file: String, reasons: [String: String],
    counts: inout [String: FileCounts]
  ) {
    switch (outcome.passed, reasons[outcome.name]) {
    case (true, nil): counts[file]?.passed += 1
    case (true, .some):
      counts[file]?.passed += 1
      listFaults.append(
        "\(outcome.name) is listed as not runnable on Linux but passed "
          + "(take it off BitchatNotRunnableTest.linux)")
    case (false, .some(let reason)):
      counts[file]?.notRunnable += 1
      notRunnable.append((outcome.name, reason))
    case (false, nil):
      counts[file]?.failed += 1
      failures.append((outcome.name, file, outcome.failures))
    }
  }

  /// The per-file table, then the failures, the not-runnable tests and the list's faults.
  public var text: String {
    var lines: [String] = []
    let width = max(4, files.map { $0.file.count }.max() ?? 0)
    func pad(_ text: String) -> String {
      text + String(repeating: " ", count: max(0, width - text.count))
    }
    lines.append("\(pad("file"))  pass  fail  not runnable  not run")
    for file in files {
      lines.append(
        "\(pad(file.file))  \(column(file.passed, 4))  \(column(file.failed, 4))  "
          + "\(column(file.notRunnable, 12))  \(column(file.notRun, 7))")
    }
    let total = files.reduce(into: FileCounts(file: "total")) {
      $0.passed += $1.passed
      $0.failed += $1.failed
      $0.notRunnable += $1.notRunnable
      $0.notRun += $1.notRun
    }
    lines.append(
      "\(pad("total"))  \(column(total.passed, 4))  \(column(total.failed, 4))  "
        + "\(column(total.notRunnable, 12))  \(column(total.notRun, 7))")
    for failure in failures {
      lines.append("FAIL \(failure.name) (\(failure.file)): a shim or stand-in is wrong")
      for message in failure.messages.prefix(5) { lines.append("  \(message)") }
    }
    for entry in notRunnable {
      lines.append("NOT RUNNABLE ON LINUX \(entry.name): \(entry.reason)")
    }
    for fault in listFaults { lines.append("LIST \(fault)") }
    if !notRun.isEmpty {
      lines.append(
        "NOT RUN \(notRun.count) (the runner ended before them): "
          + notRun.prefix(5).joined(separator: ", ") + (notRun.count > 5 ? ", ..." : ""))
    }
    return lines.joined(separator: "\n")
  }

  private func column(_ value: Int, _ width: Int) -> String {
    let text = String(value)
    return String(repeating: " ", count: max(0, width - text.count)) + text
  }
}
