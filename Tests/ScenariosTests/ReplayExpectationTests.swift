import Audit
import Foundation
import Testing

@testable import Scenarios

/// A replayed measurement's expectations: the stop must be exactly the measured one (a
/// mismatch names both), each class's probed reachability must match the plan, and the new
/// fields parse only where they belong.
@Suite struct ReplayExpectationTests {
  func judge(_ e: ScenarioExpectation, _ o: ScenarioOutcome) -> ExpectationResult {
    let scenario = Scenario(
      name: "r", path: "r.json", title: "t", proves: "p", duration: 20,
      tor: .realTor(RealTorPlan()),
      app: AppPlan(profile: .bitchat, actions: [AppAction(at: 0, step: .start)]),
      expectations: [e])
    return ExpectationJudge.judge(scenario, o).expectations[0]
  }

  func outcome(_ steps: [(Int, String)], reachability: [ReachabilityResult]? = nil)
    -> ScenarioOutcome
  {
    var o = ScenarioOutcome(
      torTimeline: steps.enumerated().map {
        TorTimelineEntry(
          time: Double($0.offset), phase: "bootstrap", progress: $0.element.0, tag: $0.element.1)
      },
      audit: CaptureAudit(verdict: .pass, inconclusiveReasons: []),
      capture: CaptureStats(packets: 10, dropped: 0, positiveControlSeen: true))
    o.reachability = reachability
    return o
  }

  @Test func theStopMustBeTheSameProgressAndTag() {
    let expected = ScenarioExpectation.bootstrapStopsAt(
      progress: 5, tag: "conn", measured: "5% conn_dir, tor 0.2.9.10")
    let met = judge(expected, outcome([(0, "starting"), (5, "conn")]))
    #expect(met.status == .met)
    #expect(met.reason == "measured 5% conn_dir, tor 0.2.9.10 = 5% conn, reproduced 5% conn")
    let further = judge(expected, outcome([(0, "starting"), (5, "conn"), (10, "conn_done")]))
    #expect(further.status == .failed)
    #expect(further.reason.contains("reproduced 10% conn_done"))
    // Same progress, another tag: not reproduced.
    let otherTag = judge(
      .bootstrapStopsAt(progress: 5, tag: "conn", measured: nil), outcome([(5, "conn_pt")]))
    #expect(otherTag.status == .failed)
    #expect(otherTag.reason == "measured 5% conn, reproduced 5% conn_pt")
    // Silence is not a stop.
    #expect(judge(expected, outcome([])).status == .failed)
    // 100% is reproduced by 100%, and not by less.
    let done = ScenarioExpectation.bootstrapStopsAt(progress: 100, tag: "done", measured: nil)
    #expect(judge(done, outcome([(5, "conn"), (100, "done")])).status == .met)
    #expect(judge(done, outcome([(5, "conn"), (95, "circuit_create")])).status == .failed)
  }

  @Test func reachabilityMustMatchTheCountAndTheFailure() {
    func probe(_ failures: [String?]) -> [ReachabilityResult] {
      failures.enumerated().map {
        ReachabilityResult(
          node: RealTorTargetClass.dirauthORPorts.nodes[$0.offset], targetClass: .dirauthORPorts,
          failure: $0.element, seconds: 0.1)
      }
    }
    let expected = ScenarioExpectation.reachability(
      targets: .dirauthORPorts, reachable: 1, failure: "generic_timeout_error",
      measured: "1/10 or_port_dirauth")
    let met = judge(
      expected,
      outcome([], reachability: probe([nil, "generic_timeout_error", "generic_timeout_error"])))
    #expect(met.status == .met)
    #expect(
      met.reason == "measured 1/10 or_port_dirauth; sandbox 1/3 reachable (2 generic_timeout_error)"
    )
    let tooMany = judge(
      expected, outcome([], reachability: probe([nil, nil, "generic_timeout_error"])))
    #expect(tooMany.status == .failed)
    #expect(tooMany.reason.contains("planned 1/3 generic_timeout_error; sandbox 2/3 reachable"))
    let otherFailure = judge(
      expected,
      outcome([], reachability: probe([nil, "connection_refused", "generic_timeout_error"])))
    #expect(otherFailure.status == .failed)
    #expect(judge(expected, outcome([])).status == .failed)
    #expect(judge(expected, outcome([], reachability: probe([nil]))).status == .failed)
  }

  func parse(_ text: String) -> ScenarioError? {
    do {
      _ = try ScenarioParser.parse(text, file: "r.json")
      return nil
    } catch { return error }
  }

  @Test func theReplayFieldsParseOnlyWhereTheyBelong() throws {
    let scenario = try ScenarioParser.parse(
      realScenarioText(
        network: #"""
          {"censor": [{"action": "close-after-connect", "to": "testnet-auth2-dirport",
            "protocol": "tcp", "measured": "IT 2020-01-30 AS30722, 1/10 dir_port eof_error"}]}
          """#,
        expect: #"""
          [{"kind": "bootstrap-stops-at", "progress": 5, "tag": "conn", "measured": "5% conn_dir"},
           {"kind": "reachability", "targets": "bridge-obfs4", "reachable": 0,
            "failure": "generic_timeout_error"}]
          """#
      ).replacingOccurrences(
        of: #""title": "t","#,
        with: #""title": "t", "ooni": {"source": "x.json", "measurement": "m", "notes": ["n"]},"#),
      file: "r.json")
    #expect(scenario.ooni == OONIProvenance(source: "x.json", measurement: "m", notes: ["n"]))
    #expect(scenario.network.censor[0].measured == "IT 2020-01-30 AS30722, 1/10 dir_port eof_error")
    #expect(scenario.network.censor[0].action == .closeAfterConnect)
    // A bridge class has one node.
    let tooMany = parse(
      realScenarioText(
        expect: #"[{"kind": "reachability", "targets": "bridge-obfs4", "reachable": 2}]"#))
    #expect(tooMany?.path == "expect[0].reachable")
    // Node targets are real-tor only; so is the ooni block.
    let mock = parse(
      scenarioText().replacingOccurrences(
        of: #""title": "t","#,
        with:
          #""title": "t", "network": {"censor": [{"action": "drop", "to": "testnet-auth1-orport"}]},"#
      ))
    #expect(mock?.message.contains("real-Tor lane target") == true)
    let unknownTag = parse(
      realScenarioText(
        expect: #"[{"kind": "bootstrap-stops-at", "progress": 5, "tag": "conn_dir"}]"#))
    #expect(unknownTag?.path == "expect[0].tag")
    let udp = parse(
      realScenarioText(
        network:
          #"{"censor": [{"action": "reset-after-handshake", "to": "tor-relays", "protocol": "udp"}]}"#
      ))
    #expect(udp?.path == "network.censor[0].protocol")
  }
}
