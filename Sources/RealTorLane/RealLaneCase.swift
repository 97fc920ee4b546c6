import Audit
import Foundation
import Sandbox
import Scenarios

/// A real-lane case written in code rather than as a scenario file: the vocabulary of
/// AppBridgeLaneTests, which drives the app's tor by hand and judges tor's log lines. There is
/// no library here: the lane's cases are Scenarios/real-*.json, and ``RealLaneRunner/judge``
/// hands these expectations to the one judge, ``ExpectationJudge``.
public struct RealLaneCase: Sendable, Equatable {
  public enum Expectation: Sendable, Equatable {
    /// Bootstrap reaches 100% (and a fetch through the exit succeeds).
    case bootstraps
    /// Bootstrap never passes `atMost`, its furthest step tagged `tag`.
    case stuck(atMost: Int, tag: String)
    /// A "Problem bootstrapping" line with this reason (TIMEOUT, CONNECTREFUSED, ...).
    case problem(reason: String)
    /// Bootstrap went through the pluggable-transport phases (conn_pt, conn_done_pt).
    case throughBridge
    /// Every flow on the wire went to one of these ports (the bridge's, say).
    case onlyPorts([UInt16])

    /// The same expectation in the scenario files' vocabulary.
    public var scenarioExpectation: ScenarioExpectation {
      switch self {
      case .bootstraps: return .bootstrapReaches(progress: 100)
      case .stuck(let atMost, let tag): return .bootstrapStuck(atMost: atMost, tag: tag)
      case .problem(let reason): return .bootstrapProblem(reason: reason)
      case .throughBridge: return .bootstrapThroughBridge
      case .onlyPorts(let ports): return .flowsOnlyTo(ports: ports.map(Int.init))
      }
    }
  }

  public var name: String
  public var proves: String
  public var censor: [CensorRule]
  public var useBridge: Bool
  public var observeSeconds: Double
  public var expectations: [Expectation]

  public init(
    name: String, proves: String, censor: [CensorRule], useBridge: Bool = false,
    observeSeconds: Double, expectations: [Expectation]
  ) {
    self.name = name
    self.proves = proves
    self.censor = censor
    self.useBridge = useBridge
    self.observeSeconds = observeSeconds
    self.expectations = expectations
  }

  /// The private network's ORPort and DirPort (WorldTestnet's plan).
  public static let relayPorts: [UInt16] = [9001, 9030]

  /// One rule per port, TCP, any destination.
  public static func block(_ action: CensorRule.Action, ports: [UInt16]) -> [CensorRule] {
    ports.map { CensorRule(action: action, port: $0, protocol: .tcp) }
  }
}

/// tor's bootstrap lines, as AppBridgeLaneTests reads them from tor's logs.
public enum DeviceTorClient {
  public struct TimedLine: Sendable, Codable, Equatable {
    public let time: Double
    public let progress: Int
    public let tag: String
    public let summary: String
    /// Set on "Problem bootstrapping" lines: the reason (TIMEOUT, CONNECTREFUSED, ...).
    public let reason: String?
    public let count: Int?

    public init(
      time: Double, progress: Int, tag: String, summary: String, reason: String?, count: Int?
    ) {
      self.time = time
      self.progress = progress
      self.tag = tag
      self.summary = summary
      self.reason = reason
      self.count = count
    }

    public var timelineEntry: TorTimelineEntry {
      TorTimelineEntry(
        time: time, source: .log,
        phase: reason == nil ? TorTimelineEntry.bootstrapPhase : TorTimelineEntry.problemPhase,
        progress: progress, tag: tag, summary: summary, reason: reason, count: count)
    }
  }
}

extension RealLaneRunner {
  /// A runner whose app is the `failclosed` next to the running binary.
  public convenience init(sandbox: SandboxRun, directory: String) {
    let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
      .appendingPathComponent("failclosed").path
    self.init(sandbox: sandbox, directory: directory, options: Options(executable: executable))
  }

  /// What a case's expectations found wrong, judged by ``ExpectationJudge`` (the same judge as
  /// the scenario files'), plus the capture's own verdict: empty when the case passed.
  public static func judge(
    _ laneCase: RealLaneCase, timeline: [DeviceTorClient.TimedLine], report: AuditReport,
    fetched: Bool?
  ) -> [String] {
    let scenario = Scenario(
      name: laneCase.name, path: laneCase.name, title: laneCase.name, proves: laneCase.proves,
      duration: max(1, laneCase.observeSeconds), tor: .realTor(RealTorPlan()),
      app: AppPlan(profile: .bitchat, actions: [AppAction(at: 0, step: .start)]),
      expectations: laneCase.expectations.map(\.scenarioExpectation))
    let outcome = ScenarioOutcome(
      torTimeline: timeline.map(\.timelineEntry), fetchThroughExit: fetched,
      audit: CaptureAudit(report, runStart: 0, timeScale: 1),
      capture: CaptureStats(report))
    let judgement = ExpectationJudge.judge(scenario, outcome)
    var failures: [String] = []
    if report.verdict != .pass {
      failures.append(
        "capture verdict \(report.verdict.rawValue): "
          + report.leaks.map { "\($0.leakClass.rawValue) to \($0.destination)" }.joined(
            separator: ", ") + report.reasons.map(\.description).joined(separator: "; "))
    }
    for result in judgement.expectations where result.status != .met {
      failures.append("\(result.expectation.sentence): \(result.reason)")
    }
    return failures
  }
}
