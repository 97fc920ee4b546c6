/// One scenario's run, judged.
public struct ScenarioResult: Sendable, Equatable {
  public var scenario: Scenario
  public var outcome: ScenarioOutcome
  public var judgement: Judgement

  public init(scenario: Scenario, outcome: ScenarioOutcome, judgement: Judgement) {
    self.scenario = scenario
    self.outcome = outcome
    self.judgement = judgement
  }

  /// Judges `outcome` against `scenario`'s expectations.
  public init(scenario: Scenario, outcome: ScenarioOutcome) {
    self.init(
      scenario: scenario, outcome: outcome,
      judgement: ExpectationJudge.judge(scenario, outcome))
  }

  public var verdict: ScenarioVerdict { judgement.verdict }
}

/// A whole audit run: what every report is written from.
public struct RunReport: Sendable, Equatable {
  /// When the run started, ISO 8601 (the runner stamps it; the writers stay pure).
  public var startedAt: String
  /// Versions worth recording: failclosed, swift, the kernel, tor ... Written sorted by key.
  public var versions: [String: String]
  /// Virtual seconds per real second.
  public var timeScale: Double
  public var results: [ScenarioResult]
  /// Scenario files that could not be read; each makes the run at least inconclusive.
  public var loadErrors: [ScenarioError]
  /// Real seconds the private Tor network took to become ready, when real-Tor scenarios ran.
  public var networkReadySeconds: Double?

  public init(
    startedAt: String, versions: [String: String] = [:], timeScale: Double = 75,
    results: [ScenarioResult], loadErrors: [ScenarioError] = [],
    networkReadySeconds: Double? = nil
  ) {
    self.startedAt = startedAt
    self.versions = versions
    self.timeScale = timeScale
    self.results = results
    self.loadErrors = loadErrors
    self.networkReadySeconds = networkReadySeconds
  }

  /// With `--baseline`: which findings were known (Reports' FindingBaseline).
  public var baseline: RunBaseline?

  /// The worst verdict; a malformed file or an empty run is inconclusive at best. With a
  /// baseline, a scenario whose every finding is known counts as a pass, and a known finding
  /// not seen any more makes the run failed (the baseline no longer says what the run shows).
  public var verdict: ScenarioVerdict {
    var worst =
      results.map {
        baseline?.knownScenarios.contains($0.scenario.name) == true ? .pass : $0.verdict
      }
      .max() ?? .inconclusive
    if !loadErrors.isEmpty { worst = max(worst, .inconclusive) }
    if let baseline, !baseline.absent.isEmpty { worst = max(worst, .failed) }
    return worst
  }

  public var exitCode: Int32 { verdict.exitCode }

  public func count(_ verdict: ScenarioVerdict) -> Int {
    results.filter { $0.verdict == verdict }.count
  }

  /// "23 scenarios: 20 pass, 1 leak, 1 failed, 1 inconclusive" (+ malformed files).
  public var countsSentence: String {
    var parts = ["\(results.count) scenario\(results.count == 1 ? "" : "s")"]
    let counts = ScenarioVerdict.allCases.map { "\(count($0)) \($0.rawValue)" }
    parts[0] += ": " + counts.joined(separator: ", ")
    if !loadErrors.isEmpty {
      parts.append("\(loadErrors.count) malformed file\(loadErrors.count == 1 ? "" : "s")")
    }
    return parts.joined(separator: "; ")
  }
}

/// A run compared with a findings baseline: SARIF's `baselineState` of each finding by its
/// fingerprint, the baseline's findings not seen (absent), the scenarios whose failures are
/// all known, and one line per finding for the terminal and summary.md.
public struct RunBaseline: Sendable, Equatable {
  public var system: String
  /// Fingerprint to "new" or "unchanged".
  public var states: [String: String]
  /// Fingerprint to text, for findings of the baseline this run did not show.
  public var absent: [String: String]
  public var knownScenarios: Set<String>
  public var lines: [String]

  public init(
    system: String, states: [String: String], absent: [String: String],
    knownScenarios: Set<String>, lines: [String]
  ) {
    self.system = system
    self.states = states
    self.absent = absent
    self.knownScenarios = knownScenarios
    self.lines = lines
  }
}
