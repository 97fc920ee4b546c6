import Scenarios

/// junit.xml: one testcase per scenario, for CI test tabs. A leak or failed expectation is a
/// <failure>, an inconclusive run or a malformed file an <error>: never a pass.
public enum JUnitReport {
  public static func render(_ report: RunReport) -> String {
    let known = report.baseline?.knownScenarios ?? []
    let skipped = report.results.filter { known.contains($0.scenario.name) }.count
    let absent = report.baseline?.absent.count ?? 0
    let failures = report.count(.leak) + report.count(.failed) - skipped + absent
    let errors = report.count(.inconclusive) + report.loadErrors.count
    let tests = report.results.count + report.loadErrors.count
    let time = report.results.reduce(0) { $0 + $1.outcome.wallSeconds }
    var lines = [
      #"<?xml version="1.0" encoding="UTF-8"?>"#,
      "<testsuites name=\"failclosed\" tests=\"\(tests)\" failures=\"\(failures)\" "
        + "errors=\"\(errors)\" time=\"\(seconds(time))\">",
      "  <testsuite name=\"failclosed leak-audit\" tests=\"\(tests)\" failures=\"\(failures)\" "
        + "errors=\"\(errors)\" skipped=\"\(skipped)\" time=\"\(seconds(time))\" "
        + "timestamp=\"\(xmlEscaped(report.startedAt))\">",
    ]
    if !report.versions.isEmpty {
      lines.append("    <properties>")
      for (key, value) in report.versions.sorted(by: { $0.key < $1.key }) {
        lines.append(
          "      <property name=\"\(xmlEscaped(key))\" value=\"\(xmlEscaped(value))\"/>")
      }
      lines.append("    </properties>")
    }
    for result in report.results {
      lines += testcase(result, known: known.contains(result.scenario.name))
    }
    // A known finding the run no longer shows: the baseline is out of date.
    for (fingerprint, text) in (report.baseline?.absent ?? [:]).sorted(by: { $0.key < $1.key }) {
      lines.append(
        "    <testcase classname=\"failclosed.baseline\" name=\"\(xmlEscaped(fingerprint))\" "
          + "time=\"0\">")
      lines.append(
        "      <failure type=\"absent\" message=\"in the baseline, not seen: "
          + "\(xmlEscaped(text))\"/>")
      lines.append("    </testcase>")
    }
    for error in report.loadErrors {
      lines.append(
        "    <testcase classname=\"failclosed.scenarios\" "
          + "name=\"\(xmlEscaped(ScenarioParser.defaultName(error.file)))\" "
          + "file=\"\(xmlEscaped(error.file))\" time=\"0\">")
      lines.append(
        "      <error type=\"malformed-scenario\" message=\"\(xmlEscaped(error.description))\"/>")
      lines.append("    </testcase>")
    }
    lines.append("  </testsuite>")
    lines.append("</testsuites>")
    return lines.joined(separator: "\n") + "\n"
  }

  /// A scenario whose every finding is in the baseline is <skipped> (pytest's xfail), with
  /// its reasons: known, not a new failure.
  static func testcase(_ r: ScenarioResult, known: Bool = false) -> [String] {
    var lines = [
      "    <testcase classname=\"failclosed.scenarios\" name=\"\(xmlEscaped(r.scenario.name))\" "
        + "file=\"\(xmlEscaped(r.scenario.path))\" time=\"\(seconds(r.outcome.wallSeconds))\">"
    ]
    let details = xmlEscaped(detailText(r))
    let message = xmlEscaped(r.judgement.reasons.first ?? r.verdict.rawValue)
    switch r.verdict {
    case .pass: break
    case .leak, .failed:
      guard !known else {
        lines.append(
          "      <skipped type=\"known-finding\" message=\"known finding (baseline, unchanged): "
            + "\(message)\">\(details)</skipped>")
        break
      }
      lines.append(
        "      <failure type=\"\(r.verdict.rawValue)\" message=\"\(message)\">\(details)</failure>")
    case .inconclusive:
      lines.append(
        "      <error type=\"inconclusive\" message=\"\(message)\">\(details)</error>")
    }
    lines.append("      <system-out>\(xmlEscaped(systemOut(r)))</system-out>")
    lines.append("    </testcase>")
    return lines
  }

  static func detailText(_ r: ScenarioResult) -> String {
    (r.judgement.reasons + r.judgement.leaks.map { "leak: " + ExpectationJudge.describe($0) })
      .joined(separator: "\n")
  }

  static func systemOut(_ r: ScenarioResult) -> String {
    var lines = ["\(r.scenario.title)", "proves: \(r.scenario.proves)"]
    for e in r.judgement.expectations {
      lines.append("[\(e.status.rawValue)] \(e.expectation.sentence): \(e.reason)")
    }
    let harness = r.outcome.harnessLines
    if !harness.isEmpty {
      lines.append("faults applied:")
      lines += harness.map { "  " + $0 }
    }
    let timeline = CondensedTorEntry.condense(r.outcome.torTimeline)
    if !timeline.isEmpty {
      lines.append("tor's timeline:")
      lines += timeline.prefix(400).map { "  " + $0.line }
      if timeline.count > 400 { lines.append("  ... \(timeline.count - 400) more in report.json") }
    }
    if let fetched = r.outcome.fetchThroughExit {
      lines.append("fetch through the exit: \(fetched ? "succeeded" : "failed")")
    }
    return lines.joined(separator: "\n")
  }

  static func seconds(_ t: Double) -> String {
    String(format3(t))
  }

  /// Three decimals without Foundation's locale-dependent formatting.
  static func format3(_ t: Double) -> String {
    let millis = Int((t * 1000).rounded())
    let fraction = String(millis % 1000)
    return "\(millis / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
  }
}
