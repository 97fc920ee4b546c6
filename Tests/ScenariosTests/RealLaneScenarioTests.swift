import Audit
import FailClosedSupport
import Foundation
import Sandbox
import SystemUnderTest
import Testing

@testable import Lanes
@testable import Reports
@testable import Scenarios

/// A valid minimal real-tor scenario; `tor`, `network`, `app` and `expect` replaceable.
func realScenarioText(
  tor: String = #"{"client": "debian-tor", "bridges": ["testnet-obfs4"]}"#,
  network: String = #"{"censor": [{"action": "drop", "to": "tor-relays", "protocol": "tcp"}]}"#,
  app: String = #"{"profile": "hardened", "actions": [{"at": 0, "do": "start"}]}"#,
  expect: String = #"[{"kind": "no-leak"}, {"kind": "bootstrap-stuck", "atMost": 5}]"#,
  duration: String = "20"
) -> String {
  """
  {
    "lane": "real-tor",
    "title": "t",
    "proves": "p",
    "duration": \(duration),
    "tor": \(tor),
    "network": \(network),
    "app": \(app),
    "expect": \(expect)
  }
  """
}

private func parseError(_ text: String) -> ScenarioError? {
  do {
    _ = try ScenarioParser.parse(text, file: "Scenarios/r.json")
    return nil
  } catch {
    return error
  }
}

@Suite struct RealLaneFormatTests {
  @Test func aRealTorScenarioParsesWithItsLaneClientBridgesAndExpectations() throws {
    let scenario = try ScenarioParser.parse(
      realScenarioText(
        expect: """
          [{"kind": "bootstrap-reaches", "progress": 100},
           {"kind": "bootstrap-stuck", "atMost": 10, "tag": "conn_done"},
           {"kind": "bootstrap-problem", "reason": "CONNECTREFUSED"},
           {"kind": "bootstrap-through-bridge"}, {"kind": "flows-only-to", "ports": [4433, 9001]}]
          """), file: "Scenarios/r.json")
    #expect(scenario.lane == .realTor)
    #expect(scenario.tor.real == RealTorPlan(client: .debianTor, bridges: [.testnetObfs4]))
    #expect(scenario.tor.mock == nil)
    #expect(
      scenario.expectations == [
        .bootstrapReaches(progress: 100), .bootstrapStuck(atMost: 10, tag: "conn_done"),
        .bootstrapProblem(reason: "CONNECTREFUSED"), .bootstrapThroughBridge,
        .flowsOnlyTo(ports: [4433, 9001]),
      ])
    #expect(scenario.network.censor.first?.target == "tor-relays")
    // The default lane is mock.
    #expect(try ScenarioParser.parse(scenarioText(), file: "m.json").lane == .mock)
  }

  /// A field of the other lane is named by file and field, with what to do about it.
  @Test(arguments: [
    (
      realScenarioText(tor: #"{"client": "debian-tor", "personality": "ctor"}"#),
      "Scenarios/r.json: tor.personality: a mock-lane field: not allowed in a real-tor scenario"
    ),
    (
      realScenarioText(tor: #"{"client": "debian-tor", "bootstrap": "healthy"}"#),
      "tor.bootstrap: a mock-lane field"
    ),
    (
      realScenarioText(network: #"{"censor": [{"action": "drop", "to": "tor-guards"}]}"#),
      #"network.censor[0].to: "tor-guards" is the mock's guard"#
    ),
    (
      realScenarioText(
        app: #"{"profile": "bitchat", "actions": [{"at": 0, "do": "tor-crash"}]}"#),
      #"app.actions[0].do: "tor-crash" kills the mock"#
    ),
    (realScenarioText(duration: "600"), "duration: the real-Tor lane runs in real time"),
    (realScenarioText(tor: #"{"bridges": []}"#), #"tor: missing "client""#),
    (
      realScenarioText(tor: #"{"client": "debian-tor", "bridges": ["meek"]}"#),
      #"tor.bridges[0]: expected a bridge name (one of "testnet-obfs4")"#
    ),
    (
      scenarioText().replacingOccurrences(
        of: #""bootstrap": "never""#, with: #""bootstrap": "never", "client": "debian-tor""#),
      "tor.client: a real-Tor lane field: not allowed in a mock-lane scenario"
    ),
    (
      scenarioText().replacingOccurrences(
        of: #""duration": 90,"#,
        with: #""duration": 90, "network": {"censor": [{"action": "drop", "to": "tor-relays"}]},"#
      ),
      #"network.censor[0].to: "tor-relays" is a real-Tor lane target"#
    ),
    (
      scenarioText(expect: #"[{"kind": "bootstrap-stuck", "atMost": 5}]"#),
      #"expect[0].kind: "bootstrap-stuck" is judged from Debian's tor"#
    ),
  ])
  func aFieldOfTheOtherLaneIsRejectedByName(text: String, message: String) {
    let error = parseError(text)
    #expect(error?.description.contains(message) == true, "\(String(describing: error))")
  }

  @Test(arguments: [
    (#"[{"kind": "bootstrap-reaches", "progress": 101}]"#, "expect[0].progress"),
    (#"[{"kind": "bootstrap-reaches"}]"#, #"expect[0]: missing "progress""#),
    (#"[{"kind": "bootstrap-stuck", "atMost": 5, "tag": "connecting"}]"#, "expect[0].tag"),
    (#"[{"kind": "bootstrap-problem", "reason": "SLOW"}]"#, "expect[0].reason"),
    (#"[{"kind": "flows-only-to", "ports": []}]"#, "expect[0].ports: expected at least 1"),
    (#"[{"kind": "flows-only-to", "ports": [0]}]"#, "expect[0].ports[0]: expected a port"),
    (#"[{"kind": "flows-only-to", "ports": [1, 1]}]"#, "expect[0].ports[1]: port 1 is listed"),
    (#"[{"kind": "bootstrap-through-bridge", "ports": [1]}]"#, "expect[0].ports: unknown field"),
  ])
  func badRealTorExpectationsAreNamedByPath(expect: String, message: String) {
    let error = parseError(realScenarioText(expect: expect))
    #expect(error?.description.contains(message) == true, "\(String(describing: error))")
  }

  /// The library's real-lane files: every one parses on the real-Tor lane, the issue's cases
  /// are all there, and the bridge cases seed the bridge.
  @Test func theRealLaneLibraryCoversTheIssuesCases() throws {
    let names = [
      "real-healthy", "real-relays-dropped", "real-relays-reset", "real-tls-dropped-by-size",
      "real-bridge-around-block-hardened", "real-bridge-around-block-bitchat",
      "real-bridge-blocked",
    ]
    for name in names {
      let scenario = try libraryScenario(name)
      #expect(scenario.lane == .realTor, "\(name)")
      #expect(scenario.expectations.contains(.noLeak), "\(name)")
      #expect(scenario.duration >= 20 && scenario.duration <= 90, "\(name)")
    }
    let bridged = try libraryScenario("real-bridge-around-block-hardened")
    #expect(bridged.tor.real?.bridges == [.testnetObfs4])
    #expect(bridged.app.profile == .hardened)
    #expect(bridged.expectations.contains(.bootstrapThroughBridge))
    let gap = try libraryScenario("real-bridge-around-block-bitchat")
    #expect(gap.app.profile == .bitchat)
    #expect(gap.gap != nil)
    #expect(
      try libraryScenario("real-healthy").expectations.contains(.bootstrapReaches(progress: 100)))
  }
}

/// Real-lane expectations against built outcomes: each is met by what tor does and fails when
/// it does something else.
@Suite struct RealLaneJudgeTests {
  func scenario(_ expectations: [ScenarioExpectation]) -> Scenario {
    Scenario(
      name: "r", path: "Scenarios/r.json", title: "t", proves: "p", duration: 20,
      tor: .realTor(RealTorPlan(bridges: [.testnetObfs4])),
      app: AppPlan(profile: .hardened, actions: [AppAction(at: 0, step: .start)]),
      expectations: expectations)
  }

  func step(_ t: Double, _ progress: Int, _ tag: String, source: TorTimelineEntry.Source = .control)
    -> TorTimelineEntry
  {
    TorTimelineEntry(
      time: t, source: source, phase: "bootstrap", progress: progress, tag: tag, summary: tag)
  }

  func outcome(
    _ timeline: [TorTimelineEntry], fetch: Bool? = nil, flows: [TorFlow] = [],
    audit: Verdict = .pass
  ) -> ScenarioOutcome {
    ScenarioOutcome(
      torTimeline: timeline, fetchThroughExit: fetch,
      audit: CaptureAudit(
        verdict: audit, inconclusiveReasons: audit == .inconclusive ? ["ps_drop 2"] : [],
        torFlows: flows),
      capture: CaptureStats(packets: 10, dropped: 0, positiveControlSeen: true))
  }

  func result(_ e: ScenarioExpectation, _ o: ScenarioOutcome) -> ExpectationResult {
    ExpectationJudge.judge(scenario([e]), o).expectations[0]
  }

  let stuckAtConn = [
    TorTimelineEntry(time: 0.1, phase: "command", command: "GETINFO status/bootstrap-phase"),
    TorTimelineEntry(time: 0.2, phase: "bootstrap", progress: 0, tag: "starting"),
    TorTimelineEntry(time: 0.5, phase: "bootstrap", progress: 5, tag: "conn"),
    TorTimelineEntry(
      time: 1.5, phase: "problem", progress: 5, tag: "conn", reason: "CONNECTREFUSED", count: 1),
  ]

  func flow(_ port: Int) -> TorFlow {
    TorFlow(
      source: "10.66.0.2", sourcePort: 40000, destination: "10.66.1.106", destinationPort: port,
      packets: 4)
  }

  @Test func bootstrapReachesNeedsTheProgressAndAtOneHundredAFetch() {
    let done = stuckAtConn + [step(2, 100, "done")]
    let reached = result(.bootstrapReaches(progress: 100), outcome(done, fetch: true))
    #expect(reached.status == .met, "\(reached.reason)")
    #expect(reached.reason.contains("fetch through the exit succeeded"))
    #expect(result(.bootstrapReaches(progress: 100), outcome(done, fetch: false)).status == .failed)
    #expect(result(.bootstrapReaches(progress: 100), outcome(done)).status == .failed)
    let stuck = result(.bootstrapReaches(progress: 100), outcome(stuckAtConn, fetch: true))
    #expect(stuck.status == .failed)
    #expect(stuck.reason.contains("stopped at 5% (conn)"))
    #expect(result(.bootstrapReaches(progress: 5), outcome(stuckAtConn)).status == .met)
    // A step from tor's log counts as much as one from the controller.
    let fromLog = stuckAtConn + [step(2, 100, "done", source: .log)]
    #expect(result(.bootstrapReaches(progress: 100), outcome(fromLog, fetch: true)).status == .met)
  }

  @Test func bootstrapStuckFailsAboveTheLimitOnAnotherTagAndOnSilence() {
    #expect(result(.bootstrapStuck(atMost: 5, tag: "conn"), outcome(stuckAtConn)).status == .met)
    let further = stuckAtConn + [step(3, 10, "conn_done")]
    let failed = result(.bootstrapStuck(atMost: 5, tag: "conn"), outcome(further))
    #expect(failed.status == .failed)
    #expect(failed.reason.contains("reached 10% (conn_done)"))
    #expect(
      result(.bootstrapStuck(atMost: 10, tag: "conn"), outcome(further)).status == .failed)
    #expect(result(.bootstrapStuck(atMost: 10, tag: nil), outcome(further)).status == .met)
    let silent = result(.bootstrapStuck(atMost: 5, tag: nil), outcome([]))
    #expect(silent.status == .failed)
    #expect(silent.reason.contains("no bootstrap step"))
  }

  @Test func bootstrapProblemNeedsThatReason() {
    let met = result(.bootstrapProblem(reason: "CONNECTREFUSED"), outcome(stuckAtConn))
    #expect(met.status == .met)
    #expect(met.reason.contains("count 1"))
    let other = result(.bootstrapProblem(reason: "TIMEOUT"), outcome(stuckAtConn))
    #expect(other.status == .failed)
    #expect(other.reason.contains("only CONNECTREFUSED"))
  }

  @Test func throughBridgeNeedsAPluggableTransportPhase() {
    let bridged = [step(0.2, 1, "conn_pt"), step(0.4, 2, "conn_done_pt"), step(3, 100, "done")]
    #expect(result(.bootstrapThroughBridge, outcome(bridged)).status == .met)
    #expect(result(.bootstrapThroughBridge, outcome(stuckAtConn)).status == .failed)
  }

  @Test func flowsOnlyToFailsOnAnotherPortAndOnNoFlowAtAll() {
    #expect(result(.flowsOnlyTo(ports: [4433]), outcome([], flows: [flow(4433)])).status == .met)
    let other = result(.flowsOnlyTo(ports: [4433]), outcome([], flows: [flow(4433), flow(9001)]))
    #expect(other.status == .failed)
    #expect(other.reason.contains("10.66.1.106:9001"))
    #expect(result(.flowsOnlyTo(ports: [4433]), outcome([])).status == .failed)
    #expect(
      result(.flowsOnlyTo(ports: [4433]), outcome([], flows: [flow(4433)], audit: .inconclusive))
        .status == .inconclusive)
    // A flow named from the bridge's side (its first packet came from port 4433) still counts.
    let reverse = TorFlow(
      source: "10.66.1.106", sourcePort: 4433, destination: "10.66.0.2", destinationPort: 40000,
      packets: 1)
    #expect(result(.flowsOnlyTo(ports: [4433]), outcome([], flows: [reverse])).status == .met)
  }

  @Test func theAppsTorEventsBecomeTheTimelineAndPollsCondense() throws {
    let lines = [
      #"{"t": 0.1, "type": "tor", "phase": "command", "command": "GETINFO status/bootstrap-phase"}"#,
      #"{"t": 0.25, "type": "tor", "phase": "command", "command": "GETINFO status/bootstrap-phase"}"#,
      #"{"t": 0.3, "type": "tor", "phase": "bootstrap", "progress": 5, "tag": "conn", "summary": "Connecting to a relay"}"#,
      #"{"t": 1.2, "type": "tor", "phase": "problem", "progress": 5, "tag": "conn", "reason": "CONNECTREFUSED", "count": 3}"#,
      #"{"t": 1.3, "type": "state", "component": "tor", "field": "bootstrapProgress", "value": 5}"#,
    ]
    let events = try lines.map { try SystemUnderTest.AppEvent(jsonLine: $0) }
    let timeline = TorTimelineEntry.timeline(from: events)
    #expect(timeline.count == 4)
    #expect(
      timeline[2]
        == TorTimelineEntry(
          time: 0.3, phase: "bootstrap", progress: 5, tag: "conn", summary: "Connecting to a relay")
    )
    #expect(timeline[3].reason == "CONNECTREFUSED")
    #expect(timeline[3].count == 3)
    let condensed = CondensedTorEntry.condense(timeline)
    #expect(condensed.count == 3)
    #expect(condensed[0].repeats == 2)
    #expect(condensed[0].line.contains("(x2)"))
    #expect(condensed[2].line.contains("problem CONNECTREFUSED x3 at 5% (conn)"))
  }
}

/// What the runner makes of a scenario: censor rules for the network's own targets, command
/// lines for the control-port backends, the preferences with the bridge line.
@Suite struct RealLaneMappingTests {
  @Test func torRelaysAndTorBridgeMapToTheNetworksEndpoints() {
    let targets = SandboxMapping.RealTorTargets(
      relays: ["10.66.1.101:9001", "10.66.1.101:9030", "10.66.1.104:9001"].map {
        SocketAddress($0)!
      },
      bridges: [SocketAddress("10.66.1.106:4433")!])
    let plan = NetworkPlan(censor: [
      CensorPlanRule(action: .drop, target: "tor-relays", transport: .tcp),
      CensorPlanRule(action: .reset, target: "tor-bridge", transport: .tcp),
    ])
    let rules = SandboxMapping.censorRules(plan, at: 0, real: targets)
    #expect(
      rules.map { "\($0.action) \($0.destination ?? "*"):\($0.port.map(String.init) ?? "*")" } == [
        "drop 10.66.1.101:9001", "drop 10.66.1.101:9030", "drop 10.66.1.104:9001",
        "reset 10.66.1.106:4433",
      ])
    // A port narrows the rule to that port on every relay address, once per address.
    let narrowed = SandboxMapping.censorRules(
      NetworkPlan(censor: [CensorPlanRule(action: .drop, target: "tor-relays", port: 9030)]),
      at: 0, real: targets)
    #expect(narrowed.map(\.destination) == ["10.66.1.101", "10.66.1.104"])
  }

  @Test func ctorScenariosDriveTheMocksControlPort() throws {
    let scenario = try libraryScenario("relays-reset-connect-refused")
    let mock = ScenarioCommandLines.mockTor(
      scenario.tor.mock!, executable: "fc", timeScale: 25, guards: ["10.66.1.10:9001"],
      eventLog: "m.jsonl")
    #expect(mock.joined(separator: " ").contains("--personality ctor"))
    #expect(mock.joined(separator: " ").contains("--control-port 39051"))
    let app = ScenarioCommandLines.app(
      scenario, executable: "fc", timeScale: 25, actionsFile: "a", stateDirectory: "s",
      trustAnchors: "ca")
    #expect(app.joined(separator: " ").contains("--backend ctor --control 127.0.0.1:39051"))
    let arti = try libraryScenario("healthy-baseline")
    #expect(
      !ScenarioCommandLines.mockTor(
        arti.tor.mock!, executable: "fc", timeScale: 25, guards: [], eventLog: "m"
      ).contains("--control-port"))
    #expect(
      ScenarioCommandLines.app(
        arti, executable: "fc", timeScale: 25, actionsFile: "a", stateDirectory: "s",
        trustAnchors: "ca"
      ).joined(separator: " ").contains("--backend arti"))
  }

  @Test func realTorScenariosRunTheAppsTorBackendInRealTimeWithTheBridgeLine() throws {
    let scenario = try libraryScenario("real-bridge-around-block-hardened")
    let app = ScenarioCommandLines.app(
      scenario, executable: "fc", timeScale: 25, actionsFile: "a", stateDirectory: "s",
      trustAnchors: "ca", torrcBase: "/w/torrc-base")
    let text = app.joined(separator: " ")
    #expect(text.contains("--backend tor --torrc-base /w/torrc-base"))
    #expect(text.contains("--profile hardened"))
    #expect(text.contains("--time-scale 1 "))
    let line = "obfs4 10.66.1.106:4433 0123456789ABCDEF0123456789ABCDEF01234567 cert=x iat-mode=0"
    let preferences = ScenarioCommandLines.preferences(
      scenario, bridgeLines: [.testnetObfs4: line])
    let parsed = try JSONParser.parse(preferences)
    #expect(parsed["tor.bridges"] == .array([.string(line)]))
    #expect(parsed["networkActivationService.userTorEnabled"] == .bool(true))
    // The mock lane's preferences carry no bridges.
    #expect(
      !ScenarioCommandLines.preferences(try libraryScenario("healthy-baseline")).contains(
        "tor.bridges"))
  }

  @Test func reportsCarryTorsTimelineAndTheNetworkReadyTime() throws {
    let report = makeSampleReport()
    let doc = try JSONParser.parse(JSONReport.render(report))
    #expect(doc["realLane"]?["networkReadySeconds"] == .number(14.7))
    guard case .array(let scenarios) = doc["scenarios"],
      case .array(let timeline) = scenarios[0]["torTimeline"]
    else {
      Issue.record("no torTimeline")
      return
    }
    #expect(timeline.count == sampleTorTimeline.count)
    #expect(
      timeline.contains { $0["reason"] == .string("CONNECTREFUSED") && $0["count"] == .number(1) })
    #expect(scenarios[0]["fetchThroughExit"] == .bool(true))
    let junit = JUnitReport.render(report)
    #expect(junit.contains("tor&apos;s timeline:") || junit.contains("tor's timeline:"))
    #expect(junit.contains("command GETINFO status/bootstrap-phase (x5)"))
    let markdown = MarkdownSummary.render(report)
    #expect(markdown.contains("private network ready in 14.7 s"))
    #expect(markdown.contains("problem CONNECTREFUSED x1 at 5% (conn)"))
    let html = HTMLReport.render(report)
    #expect(html.contains("tor&apos;s timeline") || html.contains("tor's timeline"))
    #expect(html.contains("private network ready in 14.7 s"))
    #expect(!html.contains("Connecting </td>&"))
  }
}
