import Scenarios

/// One finding of a run: a leak, a canary that caught nothing, or an expectation not met, on
/// one system under test. Its fingerprint names what it is, never when or how much, so the
/// same defect seen again is the same finding.
public struct Finding: Sendable, Equatable {
  /// "bitchat-source|path-change-and-restart|expectation|an HTTP request ... via tor by 95 s".
  public var fingerprint: String
  public var system: String
  public var scenario: String
  /// One line for a reader.
  public var text: String
  /// The scenario's file, as the run named it.
  public var path: String = ""

  /// Every finding of `report`, whose results ran on `system`.
  public static func of(_ report: RunReport, system: String) -> [Finding] {
    report.results.flatMap { of($0, system: system) }
  }

  /// One result's findings. A finding is what a judged run showed: an inconclusive run's unmet
  /// expectations are undecided, not findings (a leak makes the verdict a leak, so it is never
  /// lost here).
  public static func of(_ r: ScenarioResult, system: String) -> [Finding] {
    guard r.verdict == .failed || r.verdict == .leak else { return [] }
    func finding(_ key: String, _ text: String) -> Finding {
      Finding(
        fingerprint: system + "|" + key, system: system, scenario: r.scenario.name, text: text,
        path: r.scenario.path)
    }
    let leaks =
      r.scenario.isCanary
      ? []
      : r.judgement.leaks.map {
        finding(
          leakKey(r.scenario, $0), "\($0.leakClass.rawValue) leak to \($0.destination)")
      }
    let expectations = r.judgement.expectations.filter { $0.status == .failed }.map {
      let canary = $0.expectation.as(ScenarioExpectation.LeakCaught.self) != nil
      return finding(
        expectationKey(r.scenario, $0.expectation),
        (canary ? "canary missed: " : "failed: ") + $0.expectation.sentence)
    }
    return leaks + expectations
  }

  /// The fingerprint without its system, "SCENARIO|leak|CLASS|DESTINATION": the SARIF
  /// report's results carry the same keys.
  static func leakKey(_ scenario: Scenario, _ leak: ScenarioLeak) -> String {
    "\(scenario.name)|leak|\(leak.leakClass.rawValue)|\(leak.destination)"
  }

  /// "SCENARIO|canary|SENTENCE" or "SCENARIO|expectation|SENTENCE".
  static func expectationKey(_ scenario: Scenario, _ expectation: ScenarioExpectation) -> String {
    let canary = expectation.as(ScenarioExpectation.LeakCaught.self) != nil
    return "\(scenario.name)|\(canary ? "canary" : "expectation")|\(expectation.sentence)"
  }
}

/// SARIF's `baselineState` for a finding against a baseline.
public enum BaselineState: String, Sendable, Equatable {
  case new
  case unchanged
  /// In the baseline, not seen in this run (of a scenario that ran).
  case absent
}

/// Known findings: the SARIF log `--write-baseline` writes (each result's
/// `partialFingerprints."failclosedFinding/v1"`), read back by `--baseline`. A SARIF log is
/// what code-scanning tools already compare runs with.
public struct FindingBaseline: Sendable, Equatable {
  public var findings: [Finding]

  public init(findings: [Finding]) { self.findings = findings }

  static let fingerprintKey = "failclosedFinding/v1"

  /// Reads a baseline file's text; the error names what is wrong and where.
  public init(sarif text: String, file: String) throws(BaselineError) {
    let document: JSONValue
    do { document = try JSONParser.parse(text) } catch {
      throw BaselineError("\(file): not JSON: \(error)")
    }
    guard case .array(let runs)? = document["runs"] else {
      throw BaselineError("\(file): not a SARIF log (no \"runs\" array)")
    }
    var findings: [Finding] = []
    for (runIndex, run) in runs.enumerated() {
      guard case .array(let results)? = run["results"] else {
        throw BaselineError("\(file): runs[\(runIndex)] has no \"results\" array")
      }
      for (index, result) in results.enumerated() {
        let place = "\(file): runs[\(runIndex)].results[\(index)]"
        guard case .string(let fingerprint)? = result["partialFingerprints"]?[Self.fingerprintKey]
        else {
          throw BaselineError("\(place): no partialFingerprints.\"\(Self.fingerprintKey)\"")
        }
        let parts = fingerprint.split(separator: "|", maxSplits: 2).map(String.init)
        guard parts.count == 3 else {
          throw BaselineError("\(place): fingerprint '\(fingerprint)' is not SYSTEM|SCENARIO|...")
        }
        var text = fingerprint
        if case .string(let message)? = result["message"]?["text"] { text = message }
        var path = ""
        if case .array(let locations)? = result["locations"],
          case .string(let uri)? = locations.first?["physicalLocation"]?["artifactLocation"]?["uri"]
        {
          path = uri
        }
        findings.append(
          Finding(
            fingerprint: fingerprint, system: parts[0], scenario: parts[1], text: text, path: path))
      }
    }
    self.findings = findings
  }

  /// The baseline as a SARIF log: one result per finding, level "note" (known).
  public func sarif(toolVersion: String) -> String {
    let results: [JSONValue] = findings.map { finding in
      .object([
        ("ruleId", .string("failclosed/finding")),
        ("level", .string("note")),
        ("message", .object([("text", .string(finding.text))])),
        (
          "locations",
          .array([
            .object([
              (
                "physicalLocation",
                .object([
                  (
                    "artifactLocation",
                    .object([
                      (
                        "uri",
                        .string(
                          finding.path.isEmpty ? "Scenarios/\(finding.scenario).json" : finding.path
                        )
                      )
                    ])
                  )
                ])
              )
            ])
          ])
        ),
        ("partialFingerprints", .object([(Self.fingerprintKey, .string(finding.fingerprint))])),
        (
          "properties",
          .object([("system", .string(finding.system)), ("scenario", .string(finding.scenario))])
        ),
      ])
    }
    let document: JSONValue = .object([
      ("$schema", .string(SARIFReport.schemaURI)),
      ("version", .string("2.1.0")),
      (
        "runs",
        .array([
          .object([
            (
              "tool",
              .object([
                (
                  "driver",
                  .object([
                    ("name", .string("failclosed")), ("version", .string(toolVersion)),
                    (
                      "rules",
                      .array([
                        .object([
                          ("id", .string("failclosed/finding")),
                          ("name", .string("KnownFinding")),
                          (
                            "shortDescription",
                            .object([
                              (
                                "text",
                                .string(
                                  "A finding kept as known: a leak, a canary that caught nothing "
                                    + "or an expectation not met, in a failclosed baseline.")
                              )
                            ])
                          ),
                          ("defaultConfiguration", .object([("level", .string("note"))])),
                        ])
                      ])
                    ),
                  ])
                )
              ])
            ),
            ("results", .array(results)),
          ])
        ])
      ),
    ])
    return document.serialized(indent: 2) + "\n"
  }

  /// This run's findings against the baseline: each new or unchanged, and the baseline's
  /// findings of scenarios that ran on `system` but were not seen, absent.
  public func compare(_ current: [Finding], system: String, scenariosRun: Set<String>)
    -> BaselineComparison
  {
    let known = Set(findings.map(\.fingerprint))
    let seen = Set(current.map(\.fingerprint))
    return BaselineComparison(
      new: current.filter { !known.contains($0.fingerprint) },
      unchanged: current.filter { known.contains($0.fingerprint) },
      absent: findings.filter {
        $0.system == system && scenariosRun.contains($0.scenario) && !seen.contains($0.fingerprint)
      })
  }
}

/// A run's findings sorted by ``BaselineState``.
public struct BaselineComparison: Sendable, Equatable {
  public var new: [Finding]
  public var unchanged: [Finding]
  public var absent: [Finding]

  public init(new: [Finding], unchanged: [Finding], absent: [Finding]) {
    self.new = new
    self.unchanged = unchanged
    self.absent = absent
  }

  public func state(of fingerprint: String) -> BaselineState? {
    if new.contains(where: { $0.fingerprint == fingerprint }) { return .new }
    if unchanged.contains(where: { $0.fingerprint == fingerprint }) { return .unchanged }
    if absent.contains(where: { $0.fingerprint == fingerprint }) { return .absent }
    return nil
  }

  /// Whether a scenario's failures are all known: it failed or leaked only with unchanged
  /// findings.
  public func isKnown(_ result: ScenarioResult, system: String) -> Bool {
    let mine = Finding.of(result, system: system)
    return !mine.isEmpty
      && mine.allSatisfy { finding in
        unchanged.contains { $0.fingerprint == finding.fingerprint }
      }
  }

  /// What the reports carry: states by fingerprint, the absent ones, the known scenarios.
  public func runBaseline(for report: RunReport, system: String) -> RunBaseline {
    var states: [String: String] = [:]
    for finding in new { states[finding.fingerprint] = BaselineState.new.rawValue }
    for finding in unchanged { states[finding.fingerprint] = BaselineState.unchanged.rawValue }
    return RunBaseline(
      system: system, states: states,
      absent: Dictionary(
        absent.map { ($0.fingerprint, $0.text) }, uniquingKeysWith: { a, _ in a }),
      knownScenarios: Set(
        report.results.filter { isKnown($0, system: system) }.map(\.scenario.name)),
      lines: lines)
  }

  /// The lines the terminal and summary.md print.
  public var lines: [String] {
    unchanged.map { "known (baseline, unchanged): \($0.scenario): \($0.text)" }
      + new.map { "NEW (not in the baseline): \($0.scenario): \($0.text)" }
      + absent.map {
        "ABSENT (in the baseline, not seen): \($0.scenario): \($0.text): fixed, or no longer "
          + "reproduced; write a new baseline with --write-baseline"
      }
  }
}

/// A baseline file that cannot be used.
public struct BaselineError: Error, CustomStringConvertible, Sendable {
  public let description: String
  init(_ description: String) { self.description = description }
}
